// FetchedPartition's ownership of the response frame: a delivered batch's records are views into
// the frame (uncompressed) or into a decompression buffer, so neither may go back to its pool
// before the application releases the batch, even when the batch is the last of the frame.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BufferPool, encodeRecordBatch } from '@kwire/protocol';
import { FetchedPartition, SharedFrame } from '../../src/fetch/fetched-partition.js';
import { PartitionState } from '../../src/state/partition-state.js';
import { recordContext } from '../../src/records.js';
import type { MessageStream } from '../../src/streams.js';

const context = recordContext('t', 0, 'buffer', 'buffer', true);

function partition(): PartitionState {
  const state = new PartitionState('t', 0, {} as MessageStream);
  state.seek(0n);
  return state;
}

/** Two wire batches of `n` records each, `value-<offset>` values, as a Fetch partition carries them. */
function records(n: number, compression: 'none' | 'lz4' = 'none'): Buffer {
  const batch = (base: number) =>
    encodeRecordBatch(
      Array.from({ length: n }, (_, i) => ({ value: `value-${base + i}` })),
      { baseOffset: base, compression },
    );
  return Buffer.concat([batch(0), batch(n)]);
}

/**
 * A FetchedPartition over `bytes` as the fetcher makes one, after the fetcher has let go of its own
 * reference to the frame; `released()` counts how often the frame went back.
 */
function fetched(bytes: Buffer, highWatermark: bigint, pool: BufferPool) {
  let frameReleased = 0;
  const frame = new SharedFrame(() => frameReleased++);
  const state = partition();
  const data = new FetchedPartition(state, state.generation, frame, bytes, highWatermark, highWatermark, null, {
    readCommitted: false,
    checkCrcs: true,
    pool,
    context,
    onBytes: () => {},
  });
  frame.release();
  return { data, state, released: () => frameReleased };
}

for (const compression of ['none', 'lz4'] as const) {
  test(`${compression}: the frame outlives the last batch delivered from it, until that batch is released`, () => {
    const pool = new BufferPool();
    const { data, released } = fetched(records(3, compression), 6n, pool);
    assert.is(released(), 0);

    // One call reads to the end of the data: the partition's own reference goes in that call.
    const batch = data.next(500);
    assert.ok(batch);
    assert.ok(data.done);
    assert.is(batch.records.length, 6);
    assert.is(released(), 0, 'the frame went back while a batch delivered from it is alive');
    if (compression === 'lz4') assert.is(pool.stats.outstanding, 2, 'both decompression buffers are still lent');
    assert.equal(
      batch.records.map((r) => (r.value as Buffer).toString()),
      ['value-0', 'value-1', 'value-2', 'value-3', 'value-4', 'value-5'],
    );
    batch.release();
    assert.is(released(), 1);
    assert.is(pool.stats.outstanding, 0);
    assert.is(data.next(500), null);
    assert.is(released(), 1, 'released once');
  });
}

test('several batches from one frame: the frame goes when the last of them is released', () => {
  const { data, released } = fetched(records(3), 6n, new BufferPool());
  const first = data.next(4)!;
  const second = data.next(4)!;
  assert.is(first.records.length, 4);
  assert.is(second.records.length, 2);
  assert.ok(data.done);
  second.release();
  assert.is(released(), 0);
  assert.is((first.records[0]!.value as Buffer).toString(), 'value-0');
  first.release();
  assert.is(released(), 1);
});

test('corrupt data after good batches: nothing is delivered, and the decompression buffers taken are given back', () => {
  const good = encodeRecordBatch([{ value: 'a' }, { value: 'b' }], { baseOffset: 0, compression: 'lz4' });
  const bad = encodeRecordBatch([{ value: 'c' }], { baseOffset: 2 });
  bad[bad.length - 1]! ^= 0xff; // the CRC covers the record bytes
  const pool = new BufferPool();
  const { data, state, released } = fetched(Buffer.concat([good, bad]), 3n, pool);
  assert.throws(() => data.next(500), /CRC/i);
  assert.is(state.position, 0n, 'the position did not move past undelivered records');
  data.drop();
  assert.is(pool.stats.outstanding, 0, 'no decompression buffer is left lent');
  assert.is(released(), 1);
});

test.run();
