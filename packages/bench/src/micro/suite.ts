// `npm run bench -- --micro`: one micro-benchmark per hot function of the receive path (issue 16),
// each on bytes made by @kwire/protocol's encodeRecordBatch (Java-producer-like batches of 1,000
// records of random A-Z values, null keys, no headers), with short rounds and one summary table:
//
//   frame-split      the consumer's FrameReader fed as Node's onread feeds it: 1,000 frames of 100 B (ns per frame)
//   batch-scan       scanRecordBatches over 100 batches (batch headers only, as the fetcher does; ns per batch)
//   record-decode    readRecordBatches + records() + every value touched, 100 B and 1 KB, CRC on and off (ns per record)
//   varint           Reader.readVarint over zig-zag varints of 1-5 bytes (ns per varint)
//   crc32c           crc32c over a 1 MiB buffer (GB/s)
//   decompress-*     each codec's decompression of a 1,000 x 1 KB batch's records section, into a pooled buffer (MB/s out)
//
// Each benchmark is warmed, then timed over --rounds rounds of about --round-ms each (wall clock),
// each round's figure from the process's CPU time over it (not wall time: the cores are shared);
// the figure is the median round, the spread (max - min) / median. The detailed benchmarks beside it
// (decode-records, decode-peers, frame-split --compare, socket-read, connection-read, crc-choice,
// lz4-choice, zstd-choice, int64-choice) answer narrower questions; see the bench README.
//
// Run: node packages/bench/dist/src/micro/suite.js [--rounds 5] [--round-ms 200] [--only a,b] [--json] [--json-file F]
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { FrameReader, SimpleFramePool } from '@kwire/consumer/internals';
import * as P from '@kwire/protocol';

const { values: opts } = parseArgs({
  args: process.argv.slice(2),
  options: {
    rounds: { type: 'string', default: '5' },
    'round-ms': { type: 'string', default: '200' },
    only: { type: 'string' },
    json: { type: 'boolean', default: false },
    'json-file': { type: 'string' },
  },
});
const ROUNDS = Math.max(1, Number(opts.rounds));
const ROUND_MS = Math.max(10, Number(opts['round-ms']));

export interface MicroResult {
  name: string;
  what: string;
  unit: string;
  /** Median over the rounds, in `unit`. */
  median: number;
  spread: number;
  rounds: number;
}

let sink = 0;

function capitals(n: number): Buffer {
  const b = randomBytes(n);
  for (let i = 0; i < n; i++) b[i] = 65 + (b[i]! % 26);
  return b;
}

/** JSON-like text: what compresses (the bench's A-Z values leave lz4 with stored blocks). */
function jsonish(n: number, i: number): Buffer {
  let s = '';
  while (s.length < n) s += `{"id":${i},"user":"user-${i % 97}","event":"click","page":"/item/${(i * 7) % 1000}","ts":${1_700_000_000_000 + i}}`;
  return Buffer.from(s.slice(0, n));
}

function batchOf(valueSize: number, compression: P.CompressionType, baseOffset = 0n, text = false): Buffer {
  const records: P.RecordInput[] = [];
  for (let i = 0; i < 1000; i++) records.push({ key: null, value: text ? jsonish(valueSize, i) : capitals(valueSize), timestamp: 1_700_000_000_000 + i });
  return P.encodeRecordBatch(records, { compression, baseOffset });
}

/**
 * Times `op` (which does `units` units of work per call): warm-up, then rounds of about ROUND_MS.
 * `per` turns (units, seconds) into the figure reported.
 */
function measure(name: string, what: string, unit: string, units: number, op: () => void, per: (units: number, seconds: number) => number): MicroResult {
  const warmEnd = performance.now() + Math.min(300, ROUND_MS);
  while (performance.now() < warmEnd) op();
  const figures: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    let n = 0;
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    let t = t0;
    while (t - t0 < ROUND_MS) {
      op();
      n++;
      t = performance.now();
    }
    // CPU time of the process (user + system), not wall time: on 2 shared cores a round can lose
    // the core to another process, which wall time would count as the function's.
    const c = process.cpuUsage(c0);
    figures.push(per(n * units, (c.user + c.system) / 1e6));
  }
  figures.sort((a, b) => a - b);
  const median = figures[figures.length >> 1]!;
  return { name, what, unit, median: Math.round(median * 100) / 100, spread: Math.round(((figures.at(-1)! - figures[0]!) / median) * 1000) / 1000, rounds: ROUNDS };
}

const nsPer = (units: number, seconds: number) => (seconds * 1e9) / units;
const mbPerSec = (bytes: number, seconds: number) => bytes / 1e6 / seconds;

type Bench = { name: string; run: () => MicroResult };

function frameSplit(): MicroResult {
  const SMALL = 100;
  const data = Buffer.allocUnsafe(1000 * SMALL);
  for (let i = 0, o = 0; i < 1000; i++, o += SMALL) {
    data.writeInt32BE(SMALL - 4, o);
    data.fill(i & 0xff, o + 4, o + SMALL);
  }
  const pool = new SimpleFramePool();
  const reader = new FrameReader(
    {
      allocate: (n: number) => pool.acquire(n),
      frame: (f: Buffer, backing?: Buffer) => {
        sink ^= f[4]! ^ f[f.length - 1]!;
        if (backing) pool.release(backing);
      },
    },
    { readBufferBytes: 65536 },
  );
  return measure(
    'frame-split',
    'FrameReader, 1,000 frames of 100 B per block',
    'ns/frame',
    1000,
    () => {
      let pos = 0;
      while (pos < data.length) {
        const target = reader.nextBuffer();
        const n = Math.min(target.length, data.length - pos, 65536);
        data.copy(target, 0, pos, pos + n);
        reader.onRead(n);
        pos += n;
      }
    },
    nsPer,
  );
}

function batchScan(): MicroResult {
  const parts: Buffer[] = [];
  for (let i = 0; i < 100; i++) parts.push(batchOf(100, 'none', BigInt(i * 1000)));
  const buf = Buffer.concat(parts);
  return measure(
    'batch-scan',
    'scanRecordBatches, 100 batches of 1,000 x 100 B',
    'ns/batch',
    100,
    () => {
      sink ^= P.scanRecordBatches(buf).batches;
    },
    nsPer,
  );
}

function recordDecode(size: number, checkCrc: boolean): MicroResult {
  const bytes = batchOf(size, 'none');
  const pool = new P.BufferPool();
  const options: P.RecordBatchDecodeOptions = { pool, checkCrc };
  return measure(
    `record-decode-${size >= 1024 ? `${size / 1024}KB` : `${size}B`}${checkCrc ? '' : '-nocrc'}`,
    `readRecordBatches + records(), ${size} B values touched${checkCrc ? ', CRC checked' : ', CRC off'}`,
    'ns/record',
    1000,
    () => {
      const batch = P.readRecordBatches(bytes, options).next()!;
      const records = batch.records();
      for (let i = 0; i < records.length; i++) {
        const v = records[i]!.value!;
        sink = (sink + v[v.length - 1]!) | 0;
      }
      batch.release();
    },
    nsPer,
  );
}

function varint(): MicroResult {
  const N = 100_000;
  const w = new P.Writer(N * 5 + 16);
  // Sizes as a record's fields have them: mostly 1-2 bytes (lengths, deltas), some 3-5.
  for (let i = 0; i < N; i++) {
    const k = i % 10;
    w.writeVarint(k < 6 ? (i % 64) - 32 : k < 9 ? (i * 37) % 8000 : Math.imul(i, 0x9e3779b1));
  }
  const buf = w.finish();
  return measure(
    'varint',
    'Reader.readVarint, 100,000 zig-zag varints of 1-5 bytes',
    'ns/varint',
    N,
    () => {
      const r = new P.Reader(buf);
      let s = 0;
      for (let i = 0; i < N; i++) s = (s + r.readVarint()) | 0;
      sink ^= s;
    },
    nsPer,
  );
}

function crc(): MicroResult {
  const buf = randomBytes(1 << 20);
  const r = measure(
    'crc32c',
    `crc32c over 1 MiB (${P.crc32cImplementation})`,
    'GB/s',
    buf.length,
    () => {
      sink ^= P.crc32c(buf);
    },
    (bytes, s) => bytes / 1e9 / s,
  );
  return r;
}

function decompressBench(codec: P.CompressionType, text: boolean): MicroResult {
  const plain = batchOf(1024, 'none', 0n, text);
  // The records section of a batch: the bytes after the 61-byte batch header.
  const section = plain.subarray(61);
  const compressed = P.compressRecords(codec, Buffer.from(section));
  const id = P.compressionCodecId(codec);
  const pool = new P.BufferPool();
  return measure(
    `decompress-${codec}${text ? '-text' : ''}`,
    `${codec}, 1,000 x 1 KB ${text ? 'JSON-like' : 'A-Z'} records section (${(compressed.length / 1024).toFixed(0)} KiB -> ${(section.length / 1024).toFixed(0)} KiB${codec === 'lz4' && compressed.length >= section.length ? ': stored blocks, handed out without a copy' : ''})`,
    'MB/s',
    section.length,
    () => {
      const d = P.decompressRecords(id, compressed, 64 << 20, pool);
      sink ^= d.buffer[d.length - 1]!;
      d.pool?.release(d.buffer);
    },
    mbPerSec,
  );
}

const BENCHES: Bench[] = [
  { name: 'frame-split', run: frameSplit },
  { name: 'batch-scan', run: batchScan },
  { name: 'record-decode-100B', run: () => recordDecode(100, true) },
  { name: 'record-decode-100B-nocrc', run: () => recordDecode(100, false) },
  { name: 'record-decode-1KB', run: () => recordDecode(1024, true) },
  { name: 'varint', run: varint },
  { name: 'crc32c', run: crc },
  // A-Z values (the bench's topics: lz4 stores them, snappy nearly) and JSON-like text (every codec at work).
  ...(['lz4', 'zstd', 'snappy', 'gzip'] as const).flatMap((c) => [
    { name: `decompress-${c}`, run: () => decompressBench(c, false) },
    { name: `decompress-${c}-text`, run: () => decompressBench(c, true) },
  ]),
];

const only = opts.only?.split(',').map((s) => s.trim());
const results: MicroResult[] = [];
for (const b of BENCHES) {
  if (only && !only.some((o) => b.name.startsWith(o))) continue;
  try {
    results.push(b.run());
  } catch (err) {
    process.stderr.write(`${b.name}: ${(err as Error).message}\n`);
  }
}
const json = `${JSON.stringify({ node: process.versions.node, rounds: ROUNDS, roundMs: ROUND_MS, results })}\n`;
if (opts['json-file']) writeFileSync(opts['json-file'], json);
if (opts.json) process.stdout.write(json);
else {
  const rows = [['benchmark', 'median', 'unit', 'spread', 'what'], ...results.map((r) => [r.name, String(r.median), r.unit, `${(r.spread * 100).toFixed(1)}%`, r.what])];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  process.stdout.write(`micro-benchmarks (Node ${process.versions.node}, ${ROUNDS} rounds of ${ROUND_MS} ms, per CPU second of the process, median round; spread = (max - min) / median)\n`);
  for (const r of rows) process.stdout.write(`${r.map((c, i) => (i === 1 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ')}\n`);
}
if (sink === 0x7fffffff) process.stdout.write('\n');
