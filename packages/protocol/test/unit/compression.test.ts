// The four codecs on their own: round trips at awkward sizes, the framings Kafka uses (xerial
// snappy, LZ4 frames as Java writes them, zstd frames without a content size), hand-made inputs
// checked against independent references, and the size limit on every path.
import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { decompressFrameSync as lz4DecompressReference } from 'lz4-napi';
import snappyjs from 'snappyjs';
import binding from 'zstd-napi/binding.js';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { isKafkaProtocolError } from '../../src/errors.js';
import { compress, compressionCodecId, decompress, isXerialSnappy, lz4FrameBound, snappyCompress, snappyCompressRaw, type Decompressed } from '../../src/compression/index.js';
import { BufferPool } from '../../src/pool/index.js';

const pool = new BufferPool();
const LIMIT = 64 * 1024 * 1024;
const CODECS = { gzip: 1, snappy: 2, lz4: 3, zstd: 4 } as const;

function bytes(d: Decompressed): Buffer {
  return d.buffer.subarray(0, d.length);
}

function roundTrip(codec: keyof typeof CODECS, data: Buffer, p: BufferPool | null = pool): Buffer {
  const d = decompress(CODECS[codec], compress(codec, data), LIMIT, p);
  const out = Buffer.from(bytes(d));
  if (d.pool) d.pool.release(d.buffer);
  return out;
}

function text(n: number): Buffer {
  const words = ['kafka', 'record', 'batch', 'offset', 'consumer', 'zstd', 'partition', '{"id":', '}\n'];
  const parts: string[] = [];
  let len = 0;
  for (let i = 0; len < n; i++) {
    const w = words[(i * 7 + (i >> 3)) % words.length]!;
    parts.push(w);
    len += w.length;
  }
  return Buffer.from(parts.join('')).subarray(0, n);
}

function compressionError(fn: () => unknown): Error & { reason: string } {
  try {
    fn();
  } catch (err) {
    assert.ok(isKafkaProtocolError(err), `expected a KafkaProtocolError, got ${String(err)}`);
    assert.is(err.reason, 'compression', err.message);
    return err;
  }
  assert.unreachable('expected a compression error');
  throw new Error('unreachable');
}

const SIZES = [0, 1, 15, 16, 100, 32 * 1024 - 1, 32 * 1024, 32 * 1024 + 1, 64 * 1024 + 3, 300_000];

for (const codec of Object.keys(CODECS) as (keyof typeof CODECS)[]) {
  test(`${codec}: round trip of random and text data at awkward sizes`, () => {
    for (const n of SIZES) {
      for (const data of [randomBytes(n), text(n)]) {
        assert.equal(roundTrip(codec, data), data, `${codec} ${n} bytes`);
      }
    }
    assert.equal(roundTrip(codec, text(100_000), null), text(100_000), 'without a pool');
  });
}

// ---- snappy ----

test('snappy: the xerial framing is what snappy-java writes: header, then int32-length blocks of <= 32 KiB', () => {
  const data = text(100 * 1024);
  const framed = snappyCompress(data);
  assert.equal([...framed.subarray(0, 16)], [0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00, 0, 0, 0, 1, 0, 0, 0, 1]);
  assert.ok(isXerialSnappy(framed));
  let p = 16;
  const sizes: number[] = [];
  while (p < framed.length) {
    const n = framed.readInt32BE(p);
    const block = framed.subarray(p + 4, p + 4 + n);
    sizes.push(snappyjs.uncompress(block).length);
    p += 4 + n;
  }
  assert.is(p, framed.length);
  assert.equal(sizes, [32768, 32768, 32768, 4096]);
});

test('snappy: two framed streams back to back (a header mid-stream) decode to both', () => {
  const a = text(40_000);
  const b = randomBytes(5000);
  const d = decompress(2, Buffer.concat([snappyCompress(a), snappyCompress(b)]), LIMIT, pool);
  assert.equal(bytes(d), Buffer.concat([a, b]));
  pool.release(d.buffer);
});

test('snappy: raw blocks decode as snappyjs (the reference) decodes them', () => {
  for (let i = 0; i < 200; i++) {
    const n = Math.floor(Math.random() * 70_000);
    const data = i % 2 ? randomBytes(n) : text(n);
    // Mix in runs, which make overlapping copies.
    if (n > 100) data.fill(i & 0xff, n >> 2, (n >> 2) + Math.min(5000, n >> 1));
    const raw = snappyCompressRaw(data);
    assert.not.ok(isXerialSnappy(raw));
    const d = decompress(2, raw, LIMIT, pool);
    assert.equal(bytes(d), Buffer.from(snappyjs.uncompress(raw)));
    assert.equal(bytes(d), data);
    pool.release(d.buffer);
  }
});

test('snappy: hand-made raw block with every tag form', () => {
  const lit = (s: string) => [...Buffer.from(s)];
  const a100 = 'a'.repeat(40) + 'b'.repeat(60);
  const block = [
    ...[0xb0, 0x05], // uncompressed length 688 (varint)
    (2 << 2) | 0,
    ...lit('xyz'), // literal of 3, length in the tag
    (60 << 2) | 0,
    99,
    ...lit(a100), // literal of 100, 1 extra length byte
    (61 << 2) | 0,
    43,
    1,
    ...lit('q'.repeat(300)), // literal of 300, 2 extra bytes (299 = 0x012b)
    ((8 - 4) << 2) | 1 | (0 << 5),
    3, // copy-1: len 8, offset 3 (overlapping)
    ((60 - 1) << 2) | 2,
    111,
    0, // copy-2: len 60, offset 111
    ((50 - 1) << 2) | 3,
    0x5c,
    0x01,
    0,
    0, // copy-4: len 50, offset 348
    ((64 - 1) << 2) | 2,
    1,
    0, // copy-2: len 64, offset 1 (a run)
    (60 << 2) | 0,
    102,
    ...lit('z'.repeat(103)), // literal of 103
  ];
  const before = 'xyz' + a100 + 'q'.repeat(300);
  let expected = before;
  for (let i = 0; i < 8; i++) expected += expected[expected.length - 3];
  expected += expected.slice(expected.length - 111, expected.length - 111 + 60);
  expected += expected.slice(expected.length - 348, expected.length - 348 + 50);
  expected += expected[expected.length - 1]!.repeat(64);
  expected += 'z'.repeat(103);
  assert.is(expected.length, 688);
  const d = decompress(2, Buffer.from(block), LIMIT, pool);
  assert.is(bytes(d).toString(), expected);
  assert.is(Buffer.from(snappyjs.uncompress(Buffer.from(block))).toString(), expected, 'the reference agrees');
  pool.release(d.buffer);
});

test('snappy: declared sizes over the limit are refused before allocating', () => {
  // A raw block declaring 2^32-1 bytes, 6 bytes long.
  const err = compressionError(() => decompress(2, Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f, 0x00]), LIMIT, pool));
  assert.match(err.message, /exceeds the limit/);
  const framed = snappyCompress(text(200_000));
  compressionError(() => decompress(2, framed, 199_999, pool));
  // Under the limit but impossible for its size: 1 MiB declared by an 8-byte block, refused
  // before the output is taken (a 3-byte copy tag, the densest element, yields at most 64 bytes).
  const p = new BufferPool();
  const liar = compressionError(() => decompress(2, Buffer.from([0x80, 0x80, 0x40, 0x00, 0x61, 0x01, 0x00, 0x00]), LIMIT, p));
  assert.match(liar.message, /snappy block of 8 bytes declares 1048576 bytes, more than any snappy block that size can produce/);
  assert.is(p.stats.misses + p.stats.hits, 0, 'nothing allocated');
  const d = decompress(2, framed, 200_000, pool);
  assert.is(d.length, 200_000);
  pool.release(d.buffer);
});

// ---- lz4 ----

/** xxHash32 (reference implementation of the published algorithm), for LZ4 frame checksums. */
function xxh32(data: Uint8Array, seed = 0): number {
  const P1 = 0x9e3779b1;
  const P2 = 0x85ebca77;
  const P3 = 0xc2b2ae3d;
  const P4 = 0x27d4eb2f;
  const P5 = 0x165667b1;
  const rotl = (x: number, r: number) => ((x << r) | (x >>> (32 - r))) >>> 0;
  const mul = (a: number, b: number) => Math.imul(a, b) >>> 0;
  const u32 = (i: number) => (data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24)) >>> 0;
  const round = (acc: number, lane: number) => mul(rotl((acc + mul(lane, P2)) >>> 0, 13), P1);
  let i = 0;
  let h: number;
  const len = data.length;
  if (len >= 16) {
    let v1 = (seed + P1 + P2) >>> 0;
    let v2 = (seed + P2) >>> 0;
    let v3 = seed >>> 0;
    let v4 = (seed - P1) >>> 0;
    for (; i + 16 <= len; i += 16) {
      v1 = round(v1, u32(i));
      v2 = round(v2, u32(i + 4));
      v3 = round(v3, u32(i + 8));
      v4 = round(v4, u32(i + 12));
    }
    h = (rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18)) >>> 0;
  } else {
    h = (seed + P5) >>> 0;
  }
  h = (h + len) >>> 0;
  for (; i + 4 <= len; i += 4) h = mul(rotl((h + mul(u32(i), P3)) >>> 0, 17), P4);
  for (; i < len; i++) h = mul(rotl((h + mul(data[i]!, P5)) >>> 0, 11), P1);
  h = mul(h ^ (h >>> 15), P2);
  h = mul(h ^ (h >>> 13), P3);
  return (h ^ (h >>> 16)) >>> 0;
}

test('xxh32 reference: known vectors', () => {
  assert.is(xxh32(new Uint8Array(0)), 0x02cc5d05);
  assert.is(xxh32(Buffer.from('a')), 0x550d7456);
  assert.is(xxh32(Buffer.from('abc')), 0x32d153ff);
  assert.is(xxh32(Buffer.from('Nobody inspects the spammish repetition')), 0xe2293b2f);
});

function u32le(n: number): number[] {
  return [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff];
}

/** An LZ4 frame built by hand from a descriptor and blocks, with a correct header checksum. */
function lz4Frame(flg: number, bd: number, blocks: { data: number[]; stored: boolean }[], content?: Buffer, declared?: number): Buffer {
  const descriptor = [flg, bd];
  if (flg & 0x08) {
    const size = declared ?? content!.length;
    descriptor.push(...u32le(size % 2 ** 32), ...u32le(Math.floor(size / 2 ** 32)));
  }
  const hc = (xxh32(Uint8Array.from(descriptor)) >>> 8) & 0xff;
  const out = [0x04, 0x22, 0x4d, 0x18, ...descriptor, hc];
  for (const b of blocks) {
    out.push(...u32le((b.data.length | (b.stored ? 0x80000000 : 0)) >>> 0), ...b.data);
    if (flg & 0x10) out.push(...u32le(xxh32(Uint8Array.from(b.data))));
  }
  out.push(0, 0, 0, 0);
  if (flg & 0x04) out.push(...u32le(xxh32(content!)));
  return Buffer.from(out);
}

test('lz4: a frame as Kafka Java writes it (FLG 0x60, BD 0x40: 64 KiB independent blocks, no checksums)', () => {
  const stored = [...Buffer.from('stored block, as Java writes incompressible data. ')];
  // A compressed block by hand: 4 literals "abcd", then a match of 12 at offset 4; last sequence 5 literals.
  const compressed = [(4 << 4) | (12 - 4), ...Buffer.from('abcd'), 4, 0, 5 << 4, ...Buffer.from('!end!')];
  const frame = lz4Frame(0x60, 0x40, [
    { data: stored, stored: true },
    { data: compressed, stored: false },
  ]);
  const expected = Buffer.concat([Buffer.from(stored), Buffer.from('abcd'.repeat(4) + '!end!')]);
  // Bound: a stored block is exact; a compressed one is at most 255 x its size.
  assert.equal(lz4FrameBound(frame), { bound: stored.length + compressed.length * 255, contentSize: -1 });
  const d = decompress(3, frame, LIMIT, pool);
  assert.equal(bytes(d), expected);
});

test('lz4: a frame of one stored block is handed out as a view of the input, not copied', () => {
  const data = Buffer.from('a batch LZ4 could not shrink, stored as Java stores it');
  const frame = lz4Frame(0x60, 0x40, [{ data: [...data], stored: true }]);
  const d = decompress(3, frame, LIMIT, pool);
  assert.is(d.pool, null, 'nothing to give back');
  assert.ok(d.buffer.buffer === frame.buffer && d.buffer.byteOffset === frame.byteOffset + 11, 'a view of the block');
  assert.equal(bytes(d), data);
  // The limit still holds, worded by the general path.
  assert.match(compressionError(() => decompress(3, frame, data.length - 1, pool)).message, /limit/);
  // Two stored blocks are not contiguous in the frame: copied into a pooled buffer.
  const two = lz4Frame(0x60, 0x40, [
    { data: [...data], stored: true },
    { data: [...data], stored: true },
  ]);
  const d2 = decompress(3, two, LIMIT, pool);
  assert.ok(d2.pool !== null && d2.buffer.buffer !== two.buffer, 'copied');
  assert.equal(bytes(d2), Buffer.concat([data, data]));
  pool.release(d2.buffer);
  // A declared size that differs is an error, not a view.
  const lying = lz4Frame(0x68, 0x40, [{ data: [...data], stored: true }], data, data.length + 1);
  assert.match(compressionError(() => decompress(3, lying, LIMIT, pool)).message, /declares/);
});

test('lz4: content size, block checksums and content checksum flags are walked over', () => {
  const data = Buffer.from('0123456789'.repeat(50));
  const frame = lz4Frame(0x40 | 0x20 | 0x10 | 0x08 | 0x04, 0x70, [{ data: [...data], stored: true }], data);
  assert.equal(lz4FrameBound(frame), { bound: 500, contentSize: 500 });
  assert.equal(bytes(decompress(3, frame, LIMIT, pool)), data);
  compressionError(() => decompress(3, frame, 499, pool));
});

test('lz4: a declared content size over the limit is refused before decoding', () => {
  const data = Buffer.from('tiny');
  const frame = lz4Frame(0x68, 0x40, [{ data: [...data], stored: true }], data, 2 ** 40);
  assert.is(lz4FrameBound(frame).contentSize, 2 ** 40);
  const err = compressionError(() => decompress(3, frame, LIMIT, pool));
  assert.match(err.message, /1099511627776 bytes exceeds the limit/);
});

test('lz4: our decoder agrees with lz4-napi (the reference) on its own frames', () => {
  for (let i = 0; i < 150; i++) {
    const n = Math.floor(Math.random() * (i % 10 === 0 ? 2_000_000 : 70_000));
    const data = i % 3 === 0 ? randomBytes(n) : text(n);
    if (n > 100 && i % 2) data.fill(i & 0xff, n >> 3, (n >> 3) + Math.min(9000, n >> 1));
    const frame = compress('lz4', data);
    const d = decompress(3, frame, LIMIT, pool);
    assert.equal(bytes(d), lz4DecompressReference(frame), `${n} bytes`);
    assert.equal(bytes(d), data);
    pool.release(d.buffer);
  }
});

test('lz4: matches may reach into the previous block (linked blocks) but never before the frame', () => {
  const first = [...Buffer.from('0123456789abcdef')];
  // Block 2: no literals, a match of 16 at offset 16 (all of block 1), then 1 literal to end.
  const second = [(0 << 4) | (16 - 4), 16, 0, 1 << 4, ...Buffer.from('!')];
  const linked = lz4Frame(0x40, 0x40, [
    { data: first, stored: true },
    { data: second, stored: false },
  ]);
  assert.is(bytes(decompress(3, linked, LIMIT, pool)).toString(), '0123456789abcdef0123456789abcdef!');
  const tooFar = lz4Frame(0x60, 0x40, [
    { data: first, stored: true },
    { data: [(0 << 4) | 0, 17, 0, 1 << 4, 0x21], stored: false },
  ]);
  assert.match(compressionError(() => decompress(3, tooFar, LIMIT, pool)).message, /match from 17 bytes back, 16 written/);
});

test('lz4: header, block and content checksums are checked', () => {
  const data = Buffer.from('checksummed block data '.repeat(4));
  const good = lz4Frame(0x40 | 0x20 | 0x10 | 0x04, 0x40, [{ data: [...data], stored: true }], data);
  assert.equal(bytes(decompress(3, good, LIMIT, pool)), data);
  const badHeader = Buffer.from(good);
  badHeader[6]! ^= 1;
  assert.match(compressionError(() => decompress(3, badHeader, LIMIT, pool)).message, /header checksum/);
  const badBlock = Buffer.from(good);
  badBlock[7 + 4 + data.length]! ^= 1;
  assert.match(compressionError(() => decompress(3, badBlock, LIMIT, pool)).message, /block checksum/);
  const badContent = Buffer.from(good);
  badContent[badContent.length - 1]! ^= 1;
  assert.match(compressionError(() => decompress(3, badContent, LIMIT, pool)).message, /content checksum/);
});

test('lz4: malformed sequences inside a block', () => {
  const cases: [number[], RegExp][] = [
    [[(2 << 4) | 0, 0x41, 0x41, 0, 0], /match from 0 bytes back/], // offset 0
    [[(2 << 4) | 0, 0x41, 0x41, 9, 0, 0x10, 0x42], /match from 9 bytes back/],
    [[(2 << 4) | 0, 0x41, 0x41, 1, 0], /ends with a match/],
    [[(9 << 4) | 0, 0x41], /literals of 9 bytes/],
    [[(15 << 4) | 0, 255, 255], /literal length runs past/],
    [[(1 << 4) | 15, 0x41, 1, 0, 255], /match length runs past/],
    [[(1 << 4) | 0, 0x41, 1], /offset runs past/],
  ];
  for (const [block, message] of cases) {
    const frame = lz4Frame(0x60, 0x40, [{ data: block, stored: false }]);
    assert.match(compressionError(() => decompress(3, frame, LIMIT, pool)).message, message);
  }
  // A block that decodes past the 64 KiB block maximum: one literal then a 70,000-byte run.
  const ext = new Array<number>(Math.ceil((70_000 - 19) / 255)).fill(255);
  const runaway = lz4Frame(0x60, 0x40, [{ data: [(1 << 4) | 15, 0x41, 1, 0, ...ext, 0, 0x00], stored: false }]);
  assert.match(compressionError(() => decompress(3, runaway, LIMIT, pool)).message, /65536-byte block maximum/);
});

test('lz4: lz4-napi writes frames Kafka Java reads: version 1, independent blocks', () => {
  const frame = compress('lz4', text(10_000));
  assert.equal([...frame.subarray(0, 4)], [0x04, 0x22, 0x4d, 0x18]);
  assert.is(frame[4]! & 0xe0, 0x60);
  assert.is((frame[4]! & 0x01) === 0, true, 'no dictionary');
});

// ---- zstd ----

function zstdFrame(data: Buffer, contentSize: boolean, checksum: boolean): Buffer {
  const cctx = new binding.CCtx();
  cctx.setParameter(binding.CParameter.contentSizeFlag, contentSize ? 1 : 0);
  cctx.setParameter(binding.CParameter.checksumFlag, checksum ? 1 : 0);
  const out = Buffer.alloc(binding.compressBound(data.length));
  return out.subarray(0, cctx.compress2(out, data));
}

test('zstd: frames without a content size (as streaming zstd-jni writes) decode, growing the output', () => {
  const data = Buffer.concat([text(3_000_000), randomBytes(500_000)]);
  const frame = zstdFrame(data, false, true);
  assert.is(binding.getFrameContentSize(frame), null, 'really no content size');
  const p = new BufferPool();
  const d = decompress(4, frame, LIMIT, p);
  assert.equal(bytes(d), data);
  assert.ok(p.stats.misses > 1, 'the output was regrown');
  assert.is(p.stats.outstanding, 1, 'smaller buffers went back to the pool');
});

test('zstd: the limit holds without a content size; exactly at the limit passes (checksum epilogue read)', () => {
  const data = text(1_000_000);
  const frame = zstdFrame(data, false, true);
  const err = compressionError(() => decompress(4, frame, 999_999, pool));
  assert.match(err.message, /exceeds the limit/);
  const d = decompress(4, frame, 1_000_000, pool);
  assert.equal(bytes(d), data);
  pool.release(d.buffer);
});

test('zstd: a declared content size over the limit is refused before decoding', () => {
  const frame = zstdFrame(text(2000), true, false);
  const err = compressionError(() => decompress(4, frame, 1999, pool));
  assert.match(err.message, /2000 bytes exceeds/);
});

test('zstd: a window larger than max(limit, 8 MiB) is refused from the header, before the decoder allocates it', () => {
  const data = text(50_000);
  const frame = Buffer.from(zstdFrame(data, false, false));
  assert.is(frame[4]! & 0x20, 0, 'not single-segment: the header carries a window descriptor');
  // Window_Descriptor 0x88: exponent 17, mantissa 0 -> 2^27 = 128 MiB. The data still decodes with it.
  frame[5] = 0x88;
  assert.equal(bytes(decompress(4, frame, 256 * 1024 * 1024, pool)), data);
  const err = compressionError(() => decompress(4, frame, LIMIT, pool));
  assert.match(err.message, /zstd frame asks for a 134217728-byte window, more than the 67108864 bytes allowed under the limit of 67108864 bytes \(maxDecompressedBytes\)/);
  // Under a small limit, windows up to 8 MiB still pass (zstd-jni's level-3 windows are 2 MiB).
  frame[5] = (21 - 10) << 3;
  assert.equal(bytes(decompress(4, frame, 60_000, pool)), data);
  // A later frame of the same input is held to the bound by the decoder (windowLogMax).
  const big = Buffer.from(frame);
  big[5] = 0x88;
  const later = compressionError(() => decompress(4, Buffer.concat([zstdFrame(data, false, false), big]), 200_000, pool));
  assert.match(later.message, /zstd frame asks for a window, more than the 8388608 bytes allowed under the limit of 200000 bytes/);
});

test('zstd: two frames back to back decode to both', () => {
  const a = text(70_000);
  const b = randomBytes(1000);
  const d = decompress(4, Buffer.concat([zstdFrame(a, true, true), zstdFrame(b, false, false)]), LIMIT, pool);
  assert.equal(bytes(d), Buffer.concat([a, b]));
  pool.release(d.buffer);
});

// ---- gzip ----

test('gzip: several members back to back decode to all of them', () => {
  const a = text(10_000);
  const b = randomBytes(777);
  assert.equal(bytes(decompress(1, Buffer.concat([gzipSync(a), gzipSync(b)]), LIMIT, pool)), Buffer.concat([a, b]));
});

test("gzip: the limit maps zlib's own error to ours", () => {
  const packed = gzipSync(Buffer.alloc(100_000));
  const err = compressionError(() => decompress(1, packed, 99_999, pool));
  assert.match(err.message, /exceeds the limit/);
  assert.is(decompress(1, packed, 100_000, pool).length, 100_000);
});

// ---- codec ids ----

test('unknown codecs are compression errors', () => {
  for (const id of [0, 5, 6, 7, -1]) compressionError(() => decompress(id, Buffer.from([1, 2, 3]), LIMIT, pool));
  compressionError(() => compressionCodecId('brotli' as never));
  compressionError(() => compress(9, Buffer.from('x')));
  assert.is(compressionCodecId('zstd'), 4);
  assert.is(compressionCodecId(2), 2);
});

test.run();
