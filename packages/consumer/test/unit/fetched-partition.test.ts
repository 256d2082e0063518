// FetchedPartition's ownership of the response frame: a delivered batch's records are views into
// the frame (uncompressed) or into a decompression buffer, so neither may go back to its pool
// before the application releases the batch, even when the batch is the last of the frame.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BufferPool, crc32c, encodeRecordBatch, type RecordInput } from '@kwire/protocol';
import { CorruptRecordError } from '../../src/errors.js';
import { recordContext } from '../../src/records/index.js';
import { fetchedFrom, type TestFetched } from './fetched-fixture.js';

const context = recordContext('t', 0, 'buffer', 'buffer', true);

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
function fetched(bytes: Buffer, highWatermark: bigint, pool: BufferPool, position = 0n) {
  let frameReleased = 0;
  const { data, state } = fetchedFrom(bytes, { highWatermark, pool, position, context, onFrameRelease: () => frameReleased++ });
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

// max.poll.records cuts a wire batch into parts. A batch with consecutive offsets (lastOffsetDelta
// = recordCount - 1) has its parts placed by index and found when read, from where the reading of
// the part before ended (RecordBatch.recordStart); others are walked when cut.

/** A batch's records as delivered parts read them: [offset, value] by records or by cursor. */
function byRecords(batch: ReturnType<TestFetched['next']>): [bigint, string][] {
  return batch!.records.map((r) => [r.offset, (r.value as Buffer).toString()]);
}
function byCursor(batch: ReturnType<TestFetched['next']>): [bigint, string][] {
  const out: [bigint, string][] = [];
  const c = batch!.cursor();
  for (let r = c.next(); r !== null; r = c.next()) out.push([r.offset, r.valueString()!]);
  return out;
}
const expected = (from: number, to: number): [bigint, string][] => Array.from({ length: to - from }, (_, i) => [BigInt(from + i), `value-${from + i}`]);

for (const compression of ['none', 'lz4'] as const) {
  test(`${compression}: a batch cut by max.poll.records reads the same in any order, by records or by cursor`, () => {
    const bytes = encodeRecordBatch(
      Array.from({ length: 10 }, (_, i) => ({ value: `value-${i}` })),
      { baseOffset: 0, compression },
    );
    for (const order of [
      [0, 1, 2],
      [2, 0, 1],
      [1, 2, 0],
    ]) {
      for (const readers of [
        [byRecords, byRecords, byRecords],
        [byCursor, byCursor, byCursor],
        [byCursor, byRecords, byCursor],
      ]) {
        const { data, state } = fetched(bytes, 10n, new BufferPool());
        const parts = [data.next(4), data.next(4), data.next(4)];
        assert.ok(data.done);
        assert.is(state.position, 10n);
        assert.equal(
          parts.map((b) => [b!.count, b!.nextOffset, b!.firstOffset, b!.lastOffset]),
          [
            [4, 4n, 0n, 3n],
            [4, 8n, 4n, 7n],
            [2, 10n, 8n, 9n],
          ],
        );
        const ranges = [expected(0, 4), expected(4, 8), expected(8, 10)];
        for (const i of order) assert.equal(readers[i]!(parts[i]!), ranges[i], `part ${i}, order ${order}`);
        for (const b of parts) b!.release();
      }
    }
  });
}

test('a part starting inside a batch (the position in the middle of it) begins at the position', () => {
  const bytes = encodeRecordBatch(
    Array.from({ length: 10 }, (_, i) => ({ value: `value-${i}` })),
    { baseOffset: 0, compression: 'lz4' },
  );
  const { data } = fetched(bytes, 10n, new BufferPool(), 5n);
  const first = data.next(3)!;
  assert.equal(byRecords(first), expected(5, 8));
  assert.is(first.firstTimestamp > 0, true);
  const rest = data.next(500)!;
  assert.equal(byCursor(rest), expected(8, 10));
});

test('a compacted batch (offset gaps) is walked when cut: each part ends at its last record', () => {
  const deltas = [0, 1, 3, 4, 6];
  const bytes = encodeRecordBatch(
    deltas.map((d) => ({ value: `value-${d}`, offsetDelta: d })),
    { baseOffset: 0, lastOffsetDelta: 7 },
  );
  const { data, state } = fetched(bytes, 8n, new BufferPool());
  const a = data.next(2)!;
  const b = data.next(2)!;
  const c = data.next(2)!;
  assert.equal([a.nextOffset, b.nextOffset, c.nextOffset, state.position], [2n, 5n, 8n, 8n]);
  assert.equal(byRecords(c), [[6n, 'value-6']]);
  assert.equal(byCursor(b), [
    [3n, 'value-3'],
    [4n, 'value-4'],
  ]);
});

test('a part placed by index whose records do not have consecutive offsets is a corrupt record, read either way', () => {
  // lastOffsetDelta 5 over 6 records says 0..5, but records 1 and 2 are swapped: a hostile or broken broker.
  const input: RecordInput[] = [0, 2, 1, 3, 4, 5].map((d) => ({ value: `value-${d}`, offsetDelta: d }));
  const bytes = encodeRecordBatch(input, { baseOffset: 0 });
  for (const read of [byRecords, byCursor]) {
    const { data } = fetched(bytes, 6n, new BufferPool());
    const first = data.next(3)!;
    const second = data.next(3)!;
    const err = (() => {
      try {
        read(first);
      } catch (e) {
        return e;
      }
    })();
    assert.ok(err instanceof CorruptRecordError, `${read.name}: ${err}`);
    assert.match((err as Error).message, /offsetDelta 2.*consecutive/);
    assert.equal(read(second), expected(3, 6));
  }
});

test('a record length broken in a later part (the CRC resealed): the earlier part reads, the broken one is a corrupt record', () => {
  const bytes = encodeRecordBatch(
    Array.from({ length: 6 }, (_, i) => ({ value: `value-${i}` })),
    { baseOffset: 0 },
  );
  // Record 4's length (each record here is the same size) made to run past the batch, the CRC
  // recomputed so that only the record walk can find it.
  const recordsStart = 61;
  const size = (bytes.length - recordsStart) / 6;
  bytes[recordsStart + 4 * size] = 0x7e;
  bytes.writeUInt32BE(crc32c(bytes, 21), 17);
  for (const read of [byRecords, byCursor]) {
    const { data } = fetched(bytes, 6n, new BufferPool());
    const first = data.next(3)!;
    const second = data.next(3)!;
    assert.equal(read(first), expected(0, 3));
    assert.throws(
      () => read(second),
      (e: unknown) => e instanceof CorruptRecordError && /length/.test((e as Error).message),
      read.name,
    );
  }
});

test.run();
