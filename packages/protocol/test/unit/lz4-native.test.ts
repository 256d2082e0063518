// The addon's LZ4 block decoder (native/lz4.c) against the JavaScript one: same bytes on good
// frames, the same error on damaged ones, and refusal of calls whose ranges leave the buffers.
import { randomBytes } from 'node:crypto';
import { compressFrameSync } from 'lz4-napi';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { lz4Implementation, lz4Implementations } from '../../src/compression/index.js';
import { loadAddon } from '../../src/native.js';
import { BufferPool } from '../../src/pool/index.js';

const pool = new BufferPool();
const { kwire, js } = lz4Implementations;

test('the addon is built and in use (unless KWIRE_LZ4=js or KWIRE_SKIP_NATIVE)', () => {
  if (process.env.KWIRE_SKIP_NATIVE) return;
  assert.ok(kwire, 'build/Release/kwire_lz4.node loads and decodes its known block');
  assert.is(lz4Implementation, process.env.KWIRE_LZ4 === 'js' ? 'js' : 'kwire');
});

/** Deterministic pseudo-random numbers (xorshift32), so a failure can be replayed. */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 2 ** 32;
  };
}

/** Data with every kind of sequence: random A-Z (ProducerPerformance), repeats of short periods (overlapping matches), long runs, incompressible bytes. */
function sample(random: () => number, n: number): Buffer {
  const out = Buffer.allocUnsafe(n);
  let i = 0;
  while (i < n) {
    const kind = Math.floor(random() * 4);
    const len = Math.min(n - i, 1 + Math.floor(random() * (kind === 2 ? 3000 : 300)));
    if (kind === 0) for (let k = 0; k < len; k++) out[i + k] = 65 + Math.floor(random() * 26);
    else if (kind === 1) {
      const period = 1 + Math.floor(random() * 12);
      for (let k = 0; k < len; k++) out[i + k] = k < period ? Math.floor(random() * 256) : out[i + k - period]!;
    } else if (kind === 2) out.fill(Math.floor(random() * 256), i, i + len);
    else randomBytes(len).copy(out, i);
    i += len;
  }
  return out;
}

type Outcome = { ok: true; bytes: Buffer } | { ok: false; message: string };

function run(f: NonNullable<typeof kwire>, frame: Buffer, limit: number): Outcome {
  try {
    const d = f(frame, limit, pool);
    const bytes = Buffer.from(d.buffer.subarray(0, d.length));
    pool.release(d.buffer);
    return { ok: true, bytes };
  } catch (err) {
    return { ok: false, message: (err as Error).message };
  }
}

test('the same bytes as the JavaScript decoder on 400 frames of mixed data, 0 B to 1 MiB', () => {
  if (!kwire) return;
  const random = rng(0x6b77);
  for (let i = 0; i < 400; i++) {
    const n = i < 20 ? i : Math.floor(random() * (i % 25 === 0 ? 1 << 20 : 70_000));
    const data = sample(random, n);
    const frame = compressFrameSync(data);
    const a = run(kwire, frame, 64 << 20);
    const b = run(js!, frame, 64 << 20);
    assert.equal(a, { ok: true, bytes: data }, `frame ${i}: ${n} bytes`);
    assert.equal(b, a);
  }
});

test('damaged blocks and tight limits: both decoders succeed alike or fail with the same error', () => {
  if (!kwire) return;
  const random = rng(0x1234);
  let failures = 0;
  let successes = 0;
  for (let i = 0; i < 3000; i++) {
    const data = sample(random, 1 + Math.floor(random() * 20_000));
    const frame = Buffer.from(compressFrameSync(data));
    // Damage inside the first block only (the frame walk, shared by both, would refuse the rest).
    const blockSize = frame.readUInt32LE(7) & 0x7fffffff;
    const stored = frame.readUInt32LE(7) >>> 31 === 1;
    if (!stored && blockSize > 0) {
      const flips = 1 + Math.floor(random() * 4);
      for (let k = 0; k < flips; k++) frame[11 + Math.floor(random() * blockSize)] = Math.floor(random() * 256);
    }
    const limit = random() < 0.3 ? Math.floor(random() * data.length) : 64 << 20;
    const a = run(kwire, frame, limit);
    const b = run(js!, frame, limit);
    assert.equal(a, b, `case ${i}`);
    if (a.ok) successes++;
    else failures++;
  }
  // The cases must exercise both outcomes, or the comparison proves little.
  assert.ok(failures > 300 && successes > 300, `${failures} failed, ${successes} decoded`);
});

test('a call whose ranges leave the buffers is refused, not followed', () => {
  const addon = loadAddon<{ decodeBlock: (...args: unknown[]) => number }>('kwire_lz4');
  if (!addon || process.env.KWIRE_SKIP_NATIVE) return;
  const src = Buffer.from([0x10, 0x41]);
  const dst = Buffer.alloc(8);
  assert.is(addon.decodeBlock(src, 0, 2, dst, 0, 8, 0), 1);
  assert.throws(() => addon.decodeBlock(src, 0, 3, dst, 0, 8, 0), /ranges outside/);
  assert.throws(() => addon.decodeBlock(src, 0, 2, dst, 0, 9, 0), /ranges outside/);
  assert.throws(() => addon.decodeBlock(src, 2, 1, dst, 0, 8, 0), /ranges outside/);
  assert.throws(() => addon.decodeBlock(src, 0, 2, dst, 4, 2, 0), /ranges outside/);
  assert.throws(() => addon.decodeBlock(src, 0, 2, dst, 0, 8, 1), /ranges outside/);
  assert.throws(() => addon.decodeBlock('x', 0, 2, dst, 0, 8, 0), /Uint8Array/);
  // Malformed and overflowing blocks come back as codes, for the JavaScript side to word.
  assert.is(addon.decodeBlock(Buffer.from([0x20, 0x41]), 0, 2, dst, 0, 8, 0), -2);
  assert.is(addon.decodeBlock(Buffer.from([0x30, 0x41, 0x42, 0x43]), 0, 4, dst, 0, 2, 0), -1);
});

test.run();
