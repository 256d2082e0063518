// The buffer pool and the ownership rule as record batches live it: buffers come back, records
// are valid until their batch is released and refuse to read after, and retention is capped.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BufferPool } from '../../src/pool/index.js';
import { decodeRecordBatch, encodeRecordBatch, readRecordBatches, RecordReleasedError } from '../../src/records/index.js';

test('a released buffer is handed out again: the same Buffer over the same ArrayBuffer', () => {
  const pool = new BufferPool();
  const a = pool.acquire(10_000);
  const arrayBuffer = a.buffer;
  pool.release(a);
  const b = pool.acquire(9000);
  assert.is(b, a);
  assert.is(b.buffer, arrayBuffer);
  assert.equal({ hits: pool.stats.hits, misses: pool.stats.misses }, { hits: 1, misses: 1 });
});

test('size classes are powers of two from the smallest class; each buffer owns its ArrayBuffer', () => {
  const pool = new BufferPool({ minClassBytes: 4096, maxClassBytes: 1 << 20 });
  assert.is(pool.acquire(0).length, 4096);
  assert.is(pool.acquire(1).length, 4096);
  assert.is(pool.acquire(4096).length, 4096);
  assert.is(pool.acquire(4097).length, 8192);
  assert.is(pool.acquire(1 << 20).length, 1 << 20);
  const big = pool.acquire((1 << 20) + 1);
  assert.is(big.length, (1 << 20) + 1, 'above the largest class: exact, one-off');
  const small = pool.acquire(100);
  assert.is(small.byteOffset, 0);
  assert.is(small.buffer.byteLength, small.length, 'not carved from a shared slab');
  pool.release(big);
  assert.is(pool.stats.dropped, 1, 'one-off buffers are not kept');
  assert.is(pool.stats.bytesRetained, 0);
});

test('retained bytes respect the cap; the rest is dropped', () => {
  const pool = new BufferPool({ maxRetainedBytes: 20_000 });
  const bufs = Array.from({ length: 5 }, () => pool.acquire(8192));
  for (const b of bufs) pool.release(b);
  const s = pool.stats;
  assert.is(s.bytesRetained, 16384);
  assert.is(s.buffersRetained, 2);
  assert.is(s.released, 2);
  assert.is(s.dropped, 3);
  assert.is(s.outstanding, 0);
  assert.ok(s.bytesRetained <= pool.maxRetainedBytes);
  pool.clear();
  assert.is(pool.stats.bytesRetained, 0);
});

test('setMaxRetainedBytes: lowering drops free buffers, the largest first; raising keeps more', () => {
  const pool = new BufferPool({ maxRetainedBytes: 0 });
  const small = pool.acquire(4096);
  const big = pool.acquire(65536);
  pool.release(small);
  assert.is(pool.stats.dropped, 1, 'nothing is kept at 0');
  pool.setMaxRetainedBytes(1 << 20);
  const bufs = [pool.acquire(4096), pool.acquire(4096), pool.acquire(65536)];
  pool.release(big);
  for (const b of bufs) pool.release(b);
  assert.is(pool.stats.bytesRetained, 2 * 4096 + 2 * 65536);
  pool.setMaxRetainedBytes(80_000);
  const s = pool.stats;
  assert.is(s.bytesRetained, 2 * 4096 + 65536, 'one 64 KiB buffer dropped, the small ones kept');
  assert.is(s.buffersRetained, 3);
  assert.ok(s.bytesRetained <= pool.maxRetainedBytes);
  assert.is(pool.maxRetainedBytes, 80_000);
  pool.setMaxRetainedBytes(0);
  assert.is(pool.stats.bytesRetained, 0);
  assert.is(pool.stats.buffersRetained, 0);
  assert.throws(() => pool.setMaxRetainedBytes(-1), /maxRetainedBytes/);
});

test('a second release, or a buffer the pool never lent, is ignored', () => {
  const pool = new BufferPool();
  const a = pool.acquire(5000);
  pool.release(a);
  pool.release(a);
  pool.release(Buffer.allocUnsafeSlow(8192));
  assert.is(pool.stats.buffersRetained, 1);
  assert.is(pool.stats.ignored, 2);
  const x = pool.acquire(5000);
  const y = pool.acquire(5000);
  assert.is.not(x, y, 'a double release cannot hand one buffer to two owners');
});

/** uvu's throws() takes a predicate for a function argument. */
const released = (err: unknown) => err instanceof RecordReleasedError;

const records = Array.from({ length: 200 }, (_, i) => ({ key: `k${i}`, value: `value number ${i} `.repeat(10), timestamp: 1_700_000_000_000 + i }));

for (const codec of ['zstd', 'snappy'] as const) {
  test(`${codec}: a batch owns its pooled buffer until release; the next batch reuses it`, () => {
    const pool = new BufferPool();
    const first = decodeRecordBatch(encodeRecordBatch(records, { compression: codec }), { pool });
    const kept = first.records()[150]!;
    assert.is(pool.stats.outstanding, 1);
    // A record kept before release is valid, however much else happens in between.
    const other = decodeRecordBatch(encodeRecordBatch(records.slice(0, 10), { compression: codec }), { pool });
    other.records();
    assert.is(kept.valueString(), records[150]!.value);
    assert.is(kept.keyString(), 'k150');
    const view = kept.value!;
    const arrayBuffer = view.buffer;
    other.release();

    first.release();
    assert.is(pool.stats.outstanding, 0);
    assert.ok(pool.stats.bytesRetained > 0);
    // After release the record refuses to read instead of showing someone else's bytes.
    assert.throws(() => kept.value, released);
    assert.throws(
      () => kept.value,
      (err: unknown) => (err as Record<symbol, unknown>)[Symbol.for('kwire.KafkaError')] === true && (err as { code: string }).code === 'KWIRE_RECORD_RELEASED',
      'branded as a KafkaError (isKafkaError)',
    );
    assert.throws(() => kept.valueString(), released);
    assert.throws(() => kept.headers, released);
    assert.throws(() => first.records(), released);
    assert.is(kept.offset, 150n, 'fields copied out at decode stay readable');
    first.release(); // harmless
    assert.is(pool.stats.ignored, 0, 'a second batch release does not even reach the pool');

    // The next batch of that size gets the same memory back...
    const hitsBefore = pool.stats.hits;
    const different = records.map((r) => ({ ...r, value: r.value.toUpperCase() }));
    const second = decodeRecordBatch(encodeRecordBatch(different, { compression: codec }), { pool });
    const r150 = second.records()[150]!;
    assert.is(pool.stats.hits, hitsBefore + 1);
    assert.is(r150.value!.buffer, arrayBuffer);
    // ...which is why a view kept past release is stale: it now shows the new batch's bytes.
    assert.is(view.toString(), different[150]!.value);
    second.release();
  });
}

test('uncompressed batches take nothing from the pool; release still ends their records', () => {
  const pool = new BufferPool();
  const reader = readRecordBatches(encodeRecordBatch(records), { pool });
  const b = reader.next()!;
  const r = b.records()[3]!;
  assert.is(r.keyString(), 'k3');
  b.release();
  assert.equal(pool.stats.misses + pool.stats.hits, 0);
  assert.throws(() => r.key, released);
  assert.throws(() => b.raw, released);
});

test('pool: null decodes compressed batches into plain allocations', () => {
  const b = decodeRecordBatch(encodeRecordBatch(records, { compression: 'zstd' }), { pool: null });
  assert.is(b.records()[199]!.keyString(), 'k199');
  b.release();
});

test('steady state: decoding and releasing batch after batch allocates no new buffers', () => {
  const pool = new BufferPool();
  const bytes = encodeRecordBatch(records, { compression: 'zstd' });
  for (let i = 0; i < 50; i++) {
    const b = decodeRecordBatch(bytes, { pool });
    b.records();
    b.release();
  }
  assert.is(pool.stats.misses, 1);
  assert.is(pool.stats.hits, 49);
  assert.is(pool.stats.buffersRetained, 1);
});

test.run();
