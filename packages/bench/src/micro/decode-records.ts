// Record batch decoding, the consumer's hot path: batches of 1,000 records of 100 B and of 1 KB
// (ProducerPerformance-like A-Z values, null keys, no headers), uncompressed, lz4 and zstd,
// decoded over and over while every value is touched. Prints records/s and heap bytes allocated
// per record for each way of reading:
//   array + value view   batch.records(), then record.value (a Buffer view) for every record
//   array + valueString  batch.records(), then record.valueString() (what JSON consumers do)
//   cursor + value view  batch.cursor(): one reused Record moved along, then record.value
//   cursor, no view      batch.cursor(), reading valueLength only: the decoder's own cost
//   ... CRC off          the same with checkCrc: false, to show what the CRC-32C check costs
// Each decode takes its decompression buffer from a pool and gives it back (batch.release()), as
// the consumer will.
//
// How allocation is measured: the script re-runs itself with --expose-gc and a 512 MiB young
// generation, then for each case forces a full GC, reads v8's used_heap_size, decodes a number
// of batches small enough to stay inside the young generation, and reads it again. A
// PerformanceObserver watches for GC events inside that window; if one happened the window is
// retried with half the batches, so the difference is what the loop allocated (JS heap objects:
// records, views, strings, bigints). Buffer memory lives outside the JS heap: the bytes of new
// ArrayBuffers (decompression output the pool could not serve) are reported separately, from
// process.memoryUsage().arrayBuffers over the same window. With the pool warm that is 0; with
// { pool: null } it would be the whole decompressed batch, each time.
//
// Run: node packages/bench/dist/src/micro/decode-records.js
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import * as R from '@kwire/protocol';

if (typeof (globalThis as { gc?: unknown }).gc !== 'function') {
  const child = spawnSync(process.execPath, ['--expose-gc', '--max-semi-space-size=256', ...process.execArgv, process.argv[1]!, ...process.argv.slice(2)], {
    stdio: 'inherit',
  });
  process.exit(child.status ?? 1);
}
const gc = (globalThis as unknown as { gc: () => void }).gc;

const RECORDS = 1_000;

function capitals(n: number): Buffer {
  const b = randomBytes(n);
  for (let i = 0; i < n; i++) b[i] = 65 + (b[i]! % 26);
  return b;
}

function batchOf(valueSize: number, compression: R.CompressionType): Buffer {
  const records: R.RecordInput[] = [];
  for (let i = 0; i < RECORDS; i++) records.push({ key: null, value: capitals(valueSize), timestamp: 1_700_000_000_000 + i });
  return R.encodeRecordBatch(records, { compression, baseOffset: 1_000_000n });
}

type Mode = 'array + value view' | 'array + valueString' | 'cursor + value view' | 'cursor, no view' | 'cursor, no view, CRC off';
const MODES: Mode[] = ['array + value view', 'array + valueString', 'cursor + value view', 'cursor, no view', 'cursor, no view, CRC off'];

const pool = new R.BufferPool();
// Kept in int32 range (| 0): a sum that grew into a double would allocate a heap number per update
// and be counted as the decoder's allocation.
let sink = 0;
const withCrc: R.RecordBatchDecodeOptions = { pool };
const noCrc: R.RecordBatchDecodeOptions = { pool, checkCrc: false };

/** Decodes the batch once, touching every value the way `mode` says. */
function decodeOnce(bytes: Buffer, mode: Mode): void {
  const reader = R.readRecordBatches(bytes, mode === 'cursor, no view, CRC off' ? noCrc : withCrc);
  const batch = reader.next()!;
  if (mode === 'array + value view') {
    const records = batch.records();
    for (let i = 0; i < records.length; i++) {
      const v = records[i]!.value!;
      sink = (sink + v[v.length - 1]!) | 0;
    }
  } else if (mode === 'array + valueString') {
    const records = batch.records();
    for (let i = 0; i < records.length; i++) sink = (sink + records[i]!.valueString()!.length) | 0;
  } else if (mode === 'cursor + value view') {
    const c = batch.cursor();
    for (let r = c.next(); r !== null; r = c.next()) {
      const v = r.value!;
      sink = (sink + v[v.length - 1]!) | 0;
    }
  } else {
    const c = batch.cursor();
    for (let r = c.next(); r !== null; r = c.next()) sink = (sink + r.valueLength) | 0;
  }
  batch.release();
}

function recordsPerSecond(bytes: Buffer, mode: Mode): number {
  for (let i = 0; i < 200; i++) decodeOnce(bytes, mode);
  let batches = 0;
  const started = process.hrtime.bigint();
  let elapsed = 0;
  while (elapsed < 1.5) {
    for (let i = 0; i < 20; i++) decodeOnce(bytes, mode);
    batches += 20;
    elapsed = Number(process.hrtime.bigint() - started) / 1e9;
  }
  return (batches * RECORDS) / elapsed;
}

let gcEvents: number[] = [];
const observer = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcEvents.push(e.startTime);
});
observer.observe({ entryTypes: ['gc'] });

async function bytesPerRecord(bytes: Buffer, mode: Mode): Promise<{ heap: number; native: number }> {
  for (let batches = 200; batches >= 1; batches >>= 1) {
    gc();
    await new Promise((r) => setImmediate(r));
    gcEvents = [];
    const t0 = performance.now();
    const heap0 = getHeapStatistics().used_heap_size;
    const native0 = process.memoryUsage().arrayBuffers;
    for (let i = 0; i < batches; i++) decodeOnce(bytes, mode);
    const heap1 = getHeapStatistics().used_heap_size;
    const native1 = process.memoryUsage().arrayBuffers;
    const t1 = performance.now();
    await new Promise((r) => setTimeout(r, 10));
    if (gcEvents.some((t) => t >= t0 && t <= t1)) continue;
    return { heap: (heap1 - heap0) / (batches * RECORDS), native: (native1 - native0) / (batches * RECORDS) };
  }
  return { heap: Number.NaN, native: Number.NaN };
}

console.log(`node ${process.versions.node}, ${RECORDS} records per batch, values of random A-Z`);
console.log(`${'case'.padEnd(48)} ${'records/s'.padStart(12)} ${'MB/s'.padStart(7)} ${'heap B/rec'.padStart(11)} ${'native B/rec'.padStart(13)}`);
const results: Record<string, unknown>[] = [];
for (const valueSize of [100, 1024]) {
  for (const codec of ['none', 'lz4', 'zstd'] as const) {
    const bytes = batchOf(valueSize, codec);
    for (const mode of MODES) {
      const rate = recordsPerSecond(bytes, mode);
      const alloc = await bytesPerRecord(bytes, mode);
      const label = `${valueSize === 100 ? '100 B' : '1 KB'} ${codec.padEnd(4)} ${mode}`;
      const mbps = (rate * valueSize) / 1e6;
      console.log(
        `${label.padEnd(48)} ${Math.round(rate).toLocaleString('en-US').padStart(12)} ${mbps.toFixed(0).padStart(7)} ${alloc.heap.toFixed(1).padStart(11)} ${alloc.native.toFixed(1).padStart(13)}`,
      );
      results.push({ valueSize, codec, mode, recordsPerSec: Math.round(rate), heapBytesPerRecord: alloc.heap, nativeBytesPerRecord: alloc.native });
    }
  }
}
observer.disconnect();
if (sink === 42) console.log('');
if (process.argv.includes('--json')) console.log(JSON.stringify(results));
