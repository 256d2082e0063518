// Seeded mutation fuzzing where the bytes are most complex: record batches (v2 records with keys,
// values and headers, every codec, transactional batches, control batches with COMMIT and ABORT
// markers) and the four decompressors on their own (gzip, xerial and raw snappy, LZ4 frames, zstd
// frames with and without a content size). The same rules as fuzz.test.ts: every case decodes or
// throws a KafkaProtocolError with a documented reason and an in-range offset; no decode is slow;
// heap and Buffer memory stay bounded; and here also: every pooled buffer a decode took is back in
// the pool once its batch is released, whether the decode succeeded or failed.
//
// Reproduce a failure with the printed seed: KWIRE_FUZZ_SEED=<seed> (KWIRE_FUZZ_RECORD_CASES=<n>
// for more cases). The failing input is printed in hex.
import { performance } from 'node:perf_hooks';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  BufferPool,
  compressRecords,
  decompressRecords,
  encodeControlBatch,
  encodeRecordBatch,
  isKafkaProtocolError,
  readRecordBatches,
  type ProtocolErrorReason,
  type RecordInput,
} from '../../src/index.js';
import { snappyCompressRaw } from '../../src/compression/index.js';
import { hex } from './naive/compare.js';
import { Rng } from './naive/random.js';

const SEED = Number(process.env['KWIRE_FUZZ_SEED'] ?? 0x00f0_22ed);
const CASES = Number(process.env['KWIRE_FUZZ_RECORD_CASES'] ?? 20_000);
/** Small on purpose: a mutation that inflates a declared size must meet it. */
const LIMIT = 4 * 1024 * 1024;
const SLOW_MS = 20;
const HEAP_LIMIT = 384 * 1024 * 1024;
const EXTERNAL_LIMIT = 256 * 1024 * 1024;
const REASONS: readonly ProtocolErrorReason[] = ['truncated', 'invalid-length', 'varint-too-long', 'invalid-value', 'unsupported-version', 'crc-mismatch', 'compression', 'trailing-bytes'];
const EDGE = [0x00, 0x01, 0x7f, 0x80, 0xff, 0xfe, 0x3f, 0x40];

interface Seed {
  label: string;
  bytes: Buffer;
  /** Decodes everything there is to decode; the pool must be whole again afterwards. */
  decode: (b: Buffer, pool: BufferPool) => number;
}

function text(rng: Rng, n: number): Buffer {
  const words = ['kafka', 'record', 'batch', 'offset', 'value', 'key', 'header', ' ', ',', '{"a":1}'];
  const out: string[] = [];
  let len = 0;
  while (len < n) {
    const w = rng.pick(words);
    out.push(w);
    len += w.length;
  }
  return Buffer.from(out.join('').slice(0, n));
}

function records(rng: Rng, n: number): RecordInput[] {
  return Array.from({ length: n }, (_, i) => ({
    key: rng.chance(0.3) ? null : `key-${i}`,
    value: rng.chance(0.1) ? null : rng.chance(0.5) ? text(rng, rng.int(0, 600)) : rng.bytes(rng.int(0, 200)),
    headers: rng.chance(0.5) ? Array.from({ length: rng.int(1, 3) }, (_, h) => ({ key: `h${h}`, value: rng.chance(0.2) ? null : `v${h}` })) : [],
  }));
}

/** Decodes every batch and every record field; returns how many records were read. */
function decodeBatches(b: Buffer, pool: BufferPool, checkCrc: boolean): number {
  let n = 0;
  for (const batch of readRecordBatches(b, { checkCrc, pool, maxDecompressedBytes: LIMIT })) {
    try {
      if (batch.isControl) batch.controlRecord;
      for (const r of batch.records()) {
        r.key;
        r.value;
        r.headers;
        r.offset;
        r.timestamp;
        n++;
      }
    } finally {
      batch.release();
    }
  }
  return n;
}

function corpus(): Seed[] {
  const rng = new Rng(SEED);
  const out: Seed[] = [];
  for (const compression of ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const) {
    for (let i = 0; i < 3; i++) {
      const batch = encodeRecordBatch(records(rng, rng.int(1, 12)), {
        baseOffset: rng.int(0, 1_000_000),
        compression,
        isTransactional: i === 2,
        producerId: i === 2 ? 7n : -1n,
        producerEpoch: i === 2 ? 1 : -1,
      });
      // Mostly without the CRC check, so that mutations reach the decompressor and the record decoder.
      out.push({ label: `${compression} batch #${i}`, bytes: batch, decode: (b, pool) => decodeBatches(b, pool, false) });
      out.push({ label: `${compression} batch #${i} (crc)`, bytes: batch, decode: (b, pool) => decodeBatches(b, pool, true) });
    }
  }
  const commit = encodeControlBatch({ type: 'COMMIT', baseOffset: 40, producerId: 7n, producerEpoch: 1, coordinatorEpoch: 3 });
  const abort = encodeControlBatch({ type: 'ABORT', baseOffset: 41, producerId: 7n, producerEpoch: 1 });
  const data = encodeRecordBatch(records(rng, 3), { baseOffset: 37, compression: 'lz4', isTransactional: true, producerId: 7n, producerEpoch: 1 });
  out.push({ label: 'transaction: data, COMMIT, ABORT', bytes: Buffer.concat([data, commit, abort]), decode: (b, pool) => decodeBatches(b, pool, false) });
  out.push({ label: 'control batch COMMIT', bytes: commit, decode: (b, pool) => decodeBatches(b, pool, false) });
  // The decompressors alone.
  const payload = Buffer.concat([text(rng, 20_000), rng.bytes(3000)]);
  const decompressor = (codec: number) => (b: Buffer, pool: BufferPool) => {
    const d = decompressRecords(codec, b, LIMIT, pool);
    if (d.length > LIMIT) throw new Error(`decompressed ${d.length} bytes past the ${LIMIT}-byte limit`);
    if (d.pool !== null) d.pool.release(d.buffer);
    return d.length;
  };
  out.push({ label: 'gzip', bytes: compressRecords('gzip', payload), decode: decompressor(1) });
  out.push({ label: 'snappy (xerial)', bytes: compressRecords('snappy', payload), decode: decompressor(2) });
  out.push({ label: 'snappy (raw block)', bytes: snappyCompressRaw(payload.subarray(0, 4000)), decode: decompressor(2) });
  out.push({ label: 'lz4 frame', bytes: compressRecords('lz4', payload), decode: decompressor(3) });
  out.push({ label: 'zstd frame', bytes: compressRecords('zstd', payload), decode: decompressor(4) });
  return out;
}

function splice(b: Buffer, at: number, del: number, ins: Buffer): Buffer {
  return Buffer.concat([b.subarray(0, at), ins, b.subarray(at + del)]);
}

function mutate(rng: Rng, input: Buffer): [Buffer, string] {
  let b = input;
  const steps: string[] = [];
  const n = rng.chance(0.7) ? 1 : rng.int(2, 3);
  for (let s = 0; s < n; s++) {
    const len = b.length;
    const pos = () => rng.int(0, Math.max(0, len - 1));
    switch (rng.int(0, 7)) {
      case 0: {
        const out = Buffer.from(b);
        const p = pos();
        if (len > 0) out[p]! ^= 1 << rng.int(0, 7);
        steps.push(`bit flip at ${p}`);
        b = out;
        break;
      }
      case 1: {
        const out = Buffer.from(b);
        const p = pos();
        if (len > 0) out[p] = rng.pick(EDGE);
        steps.push(`edge byte at ${p}`);
        b = out;
        break;
      }
      case 2: {
        const k = rng.int(0, Math.max(0, len - 1));
        steps.push(`truncated to ${k}`);
        b = b.subarray(0, k);
        break;
      }
      case 3: {
        const p = rng.int(0, len);
        const ins = rng.bytes(rng.int(1, 8));
        steps.push(`inserted ${hex(ins)} at ${p}`);
        b = splice(b, p, 0, ins);
        break;
      }
      case 4: {
        const p = pos();
        const k = rng.int(1, 8);
        steps.push(`deleted ${k} at ${p}`);
        b = splice(b, p, k, Buffer.alloc(0));
        break;
      }
      case 5: {
        // A huge or hostile length: int32, varint, or a size a header declares.
        const p = pos();
        const big = rng.pick([
          Buffer.from([0x7f, 0xff, 0xff, 0xff]),
          Buffer.from([0x00, 0x40, 0x00, 0x00]),
          Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f]),
          Buffer.from([0xfe, 0xff, 0xff, 0xff, 0x0f]),
          Buffer.from([0x80, 0x80, 0x80, 0x80, 0x08]),
        ]);
        steps.push(`huge value ${hex(big)} at ${p}`);
        b = splice(b, p, Math.min(big.length, len - p), big);
        break;
      }
      case 6: {
        const a = pos();
        const slice = Buffer.from(b.subarray(a, a + rng.int(1, 32)));
        const at = rng.int(0, len);
        steps.push(`duplicated [${a},${a + slice.length}) at ${at}`);
        b = splice(b, at, 0, slice);
        break;
      }
      default: {
        const out = Buffer.from(b);
        const p = pos();
        const k = Math.min(rng.int(1, 16), len - p);
        for (let i = 0; i < k; i++) out[p + i] = rng.int(0, 255);
        steps.push(`random bytes [${p},${p + k})`);
        b = out;
      }
    }
  }
  return [b, steps.join('; ')];
}

function problemWith(input: Buffer, e: unknown): string | undefined {
  if (!isKafkaProtocolError(e)) return `threw ${(e as Error)?.name ?? typeof e}: ${(e as Error)?.message ?? String(e)}\n${(e as Error)?.stack ?? ''}`;
  if (!REASONS.includes(e.reason)) return `undocumented reason ${JSON.stringify(e.reason)}: ${e.message}`;
  // Offsets count in the input, or in the decompressed records (which the message then says).
  const bound = /decompressed records/.test(e.message) ? LIMIT : input.length;
  if (e.offset !== undefined && !(Number.isInteger(e.offset) && e.offset >= 0 && e.offset <= bound)) return `offset ${e.offset} outside [0, ${bound}]: ${e.message}`;
  const cause = (e as { cause?: unknown }).cause;
  // zlib's and zstd's own errors (plain Errors with their words) are what a compression error
  // wraps; a RangeError or TypeError inside would be our bug, dressed as a protocol error.
  if (cause instanceof RangeError || cause instanceof TypeError) {
    return `a ${(cause as Error)?.name} inside the decoder, wrapped as a protocol error: ${e.message}\n${(cause as Error)?.stack ?? ''}`;
  }
  return undefined;
}

test(`fuzz: ${CASES} mutated record batches and compressed payloads decode or throw a typed error (seed 0x${SEED.toString(16)})`, () => {
  const seeds = corpus();
  const rng = new Rng(SEED ^ 0x5bd1e995);
  const pool = new BufferPool({ maxRetainedBytes: 32 * 1024 * 1024 });
  const failures: string[] = [];
  const perSeed = new Map<string, { decoded: number; rejected: number }>();
  let maxHeap = 0;
  let maxExternal = 0;
  const started = performance.now();
  for (let i = 0; i < CASES; i++) {
    const seed = seeds[i % seeds.length]!;
    const [input, desc] = mutate(rng, seed.bytes);
    const tally = perSeed.get(seed.label) ?? { decoded: 0, rejected: 0 };
    perSeed.set(seed.label, tally);
    let problem: string | undefined;
    let ms = Infinity;
    for (let attempt = 0; attempt < 3 && ms > SLOW_MS; attempt++) {
      const t0 = performance.now();
      try {
        seed.decode(input, pool);
        if (attempt === 0) tally.decoded++;
      } catch (e) {
        problem = problemWith(input, e);
        if (attempt === 0) tally.rejected++;
      }
      ms = Math.min(ms, performance.now() - t0);
      if (problem) break;
    }
    if (!problem && ms > SLOW_MS) problem = `decode took ${ms.toFixed(1)} ms (fastest of 3)`;
    if (!problem && pool.stats.outstanding !== 0) problem = `${pool.stats.outstanding} pooled buffer(s) not given back`;
    if (problem) {
      failures.push(`case ${i} (seed 0x${SEED.toString(16)}), ${seed.label}, mutation: ${desc}\n  ${problem}\n  input (${input.length} bytes): ${hex(input.subarray(0, 256))}`);
      if (failures.length >= 10) break;
    }
    if (i % 500 === 0) {
      const m = process.memoryUsage();
      maxHeap = Math.max(maxHeap, m.heapUsed);
      maxExternal = Math.max(maxExternal, m.external + m.arrayBuffers);
      if (m.heapUsed > HEAP_LIMIT || m.external > EXTERNAL_LIMIT) {
        failures.push(`case ${i}: memory grew to heap ${m.heapUsed} / external ${m.external} bytes (last: ${seed.label}, ${desc})`);
        break;
      }
    }
  }
  const seconds = (performance.now() - started) / 1000;
  const decoded = [...perSeed.values()].reduce((a, t) => a + t.decoded, 0);
  console.log(
    `  fuzz-records: seed 0x${SEED.toString(16)}, ${CASES} cases over ${seeds.length} valid inputs in ${seconds.toFixed(2)} s (${Math.round(CASES / seconds)} cases/s); ` +
      `${decoded} decoded, ${CASES - decoded} rejected; max heap ${(maxHeap / 1048576).toFixed(0)} MB, max external ${(maxExternal / 1048576).toFixed(0)} MB`,
  );
  assert.ok(failures.length === 0, `${failures.length} failing case(s):\n${failures.slice(0, 5).join('\n---\n')}`);
  // Each kind of input must be reached both ways, or its mutations mean little.
  for (const [label, t] of perSeed) assert.ok(t.rejected > 0, `${label}: no mutation was rejected`);
  assert.ok(decoded > CASES * 0.03, `only ${decoded} mutated inputs decoded`);
});

test('fuzz-records: the unmutated corpus decodes, and gives its buffers back', () => {
  const pool = new BufferPool();
  for (const s of corpus()) {
    assert.ok(s.decode(s.bytes, pool) > 0, s.label);
    assert.is(pool.stats.outstanding, 0, s.label);
  }
});

test.run();
