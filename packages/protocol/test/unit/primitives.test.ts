// Property tests for the primitives (src/primitives: Reader, Writer, uuid) against reference
// implementations written here: varints on BigInt arithmetic, zig-zag by its definition, UTF-8 by
// hand-computed bytes, base64url by its alphabet. Plus the failure behaviour: typed errors with
// offsets on truncated and over-long input, the sticky error, Writer range checks, and the
// Writer's ownership rule (a finished frame is never written to again).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { encodeRequestFrame, isKafkaProtocolError, isUuid, KafkaProtocolError, Reader, sizeOfUVarint, sizeOfVarint, uuidFromBytes, uuidToBytes, Writer, ZERO_UUID } from '../../src/index.js';
import { fromHex, hex } from './naive/compare.js';
import { Rng } from './naive/random.js';

const SEED = 0x0b5e55ed;

// ------------------------------------------------------------------ reference implementations

/** Unsigned LEB128 of a non-negative bigint: 7 bits per byte, low group first. */
function refUVarint(n: bigint): Buffer {
  if (n < 0n) throw new Error('negative');
  const out: number[] = [];
  do {
    let byte = Number(n % 128n);
    n /= 128n;
    if (n > 0n) byte += 128;
    out.push(byte);
  } while (n > 0n);
  return Buffer.from(out);
}

/** Zig-zag by definition: 0, -1, 1, -2, 2, ... -> 0, 1, 2, 3, 4, ... */
function refZigZag(n: bigint): bigint {
  return n >= 0n ? 2n * n : -2n * n - 1n;
}

function refUnZigZag(u: bigint): bigint {
  return u % 2n === 0n ? u / 2n : -(u + 1n) / 2n;
}

/** Reads an unsigned LEB128 (no length limit) and returns [value, bytes used]. */
function refReadUVarint(b: Buffer): [bigint, number] {
  let value = 0n;
  let mult = 1n;
  for (let i = 0; i < b.length; i++) {
    value += BigInt(b[i]! & 0x7f) * mult;
    mult *= 128n;
    if (b[i]! < 128) return [value, i + 1];
  }
  throw new Error('unterminated');
}

function write(f: (w: Writer) => void): Buffer {
  const w = new Writer(32);
  f(w);
  return Buffer.from(w.finish());
}

function errorOf(f: () => unknown): KafkaProtocolError {
  try {
    f();
  } catch (e) {
    if (!isKafkaProtocolError(e)) throw new Error(`expected a KafkaProtocolError, got ${(e as Error)?.name}: ${(e as Error)?.message}`);
    return e;
  }
  throw new Error('expected a KafkaProtocolError, nothing was thrown');
}

const INT32_EDGES = [0, 1, -1, 63, -63, 64, -64, -65, 127, 128, 8191, -8192, 2 ** 31 - 1, -(2 ** 31), 2 ** 30, -(2 ** 30)];
const INT64_EDGES = [0n, 1n, -1n, 63n, -63n, 64n, -64n, -65n, 2n ** 31n - 1n, -(2n ** 31n), 2n ** 32n, 2n ** 53n, -(2n ** 53n), 2n ** 62n, 2n ** 63n - 1n, -(2n ** 63n), -(2n ** 63n) + 1n];

// ------------------------------------------------------------------ varints

test('unsigned varint: exact bytes and round trip over the edges and 20,000 random values', () => {
  const rng = new Rng(SEED);
  const values = [0, 1, 127, 128, 255, 300, 16383, 16384, 2097151, 2097152, 268435455, 268435456, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1];
  for (let i = 0; i < 20000; i++) {
    // Spread over every byte length, not only 5-byte values.
    values.push(Math.floor(rng.next() * 2 ** rng.int(1, 32)));
  }
  for (const v of values) {
    const expected = refUVarint(BigInt(v));
    const bytes = write((w) => w.writeUVarint(v));
    if (!bytes.equals(expected)) assert.unreachable(`writeUVarint(${v}) = ${hex(bytes)}, reference ${hex(expected)}`);
    assert.is(sizeOfUVarint(v), expected.length);
    const r = new Reader(Buffer.concat([expected, Buffer.from([0xaa])]));
    assert.is(r.readUVarint(), v);
    assert.is(r.offset, expected.length);
  }
});

test('zig-zag varint (int32): exact bytes and round trip over the edges and 20,000 random values', () => {
  const rng = new Rng(SEED + 1);
  const values = [...INT32_EDGES];
  for (let i = 0; i < 20000; i++) values.push((Math.floor(rng.next() * 2 ** rng.int(1, 31)) * (rng.chance(0.5) ? 1 : -1)) | 0);
  for (const v of values) {
    const u = refZigZag(BigInt(v));
    assert.is(refUnZigZag(u), BigInt(v));
    const expected = refUVarint(u);
    const bytes = write((w) => w.writeVarint(v));
    if (!bytes.equals(expected)) assert.unreachable(`writeVarint(${v}) = ${hex(bytes)}, reference ${hex(expected)}`);
    assert.is(sizeOfVarint(v), expected.length);
    const r = new Reader(expected);
    assert.is(r.readVarint(), v);
    assert.is(r.offset, expected.length);
  }
});

test('zig-zag varlong (int64, bigint): exact bytes and round trip over the edges and 20,000 random values', () => {
  const rng = new Rng(SEED + 2);
  const values = [...INT64_EDGES];
  for (let i = 0; i < 20000; i++) {
    const bits = rng.int(1, 64);
    values.push(BigInt.asIntN(64, BigInt.asUintN(bits, rng.int64())));
  }
  for (const v of values) {
    const expected = refUVarint(refZigZag(v));
    assert.ok(expected.length <= 10);
    const bytes = write((w) => w.writeVarlong(v));
    if (!bytes.equals(expected)) assert.unreachable(`writeVarlong(${v}) = ${hex(bytes)}, reference ${hex(expected)}`);
    const [u, used] = refReadUVarint(bytes);
    assert.is(refUnZigZag(u), v);
    assert.is(used, bytes.length);
    const r = new Reader(expected);
    assert.is(r.readVarlong(), v);
    assert.is(r.offset, expected.length);
  }
  // Safe-integer numbers are accepted as well.
  assert.is(hex(write((w) => w.writeVarlong(-1))), '01');
  assert.is(hex(write((w) => w.writeVarlong(Number.MAX_SAFE_INTEGER))), hex(refUVarint(refZigZag(BigInt(Number.MAX_SAFE_INTEGER)))));
});

test('varint edges have the bytes the zig-zag definition gives', () => {
  const cases: [number, string][] = [
    [2 ** 31 - 1, 'fe ff ff ff 0f'],
    [-(2 ** 31), 'ff ff ff ff 0f'],
    [63, '7e'],
    [-64, '7f'],
  ];
  for (const [v, text] of cases) assert.is(hex(write((w) => w.writeVarint(v))), text, String(v));
  assert.is(hex(write((w) => w.writeVarlong(2n ** 63n - 1n))), 'fe ff ff ff ff ff ff ff ff 01');
  assert.is(hex(write((w) => w.writeVarlong(-(2n ** 63n)))), 'ff ff ff ff ff ff ff ff ff 01');
  assert.is(hex(write((w) => w.writeUVarint(2 ** 32 - 1))), 'ff ff ff ff 0f');
});

test('kafka-protocol.md 1.4 test vectors', () => {
  const uvarints: [number, string][] = [
    [0, '00'],
    [127, '7f'],
    [128, '80 01'],
    [300, 'ac 02'],
    [16384, '80 80 01'],
    [2 ** 31 - 1, 'ff ff ff ff 07'],
  ];
  for (const [v, text] of uvarints) {
    assert.is(hex(write((w) => w.writeUVarint(v))), text, `uvarint ${v}`);
    assert.is(new Reader(fromHex(text)).readUVarint(), v);
  }
  const varints: [number, string][] = [
    [0, '00'],
    [-1, '01'],
    [1, '02'],
    [63, '7e'],
    [-64, '7f'],
    [64, '80 01'],
    [-65, '81 01'],
    [300, 'd8 04'],
    [-300, 'd7 04'],
  ];
  for (const [v, text] of varints) {
    assert.is(hex(write((w) => w.writeVarint(v))), text, `varint ${v}`);
    assert.is(new Reader(fromHex(text)).readVarint(), v);
    // The same values as varlongs: zig-zag gives the same bytes for small values.
    assert.is(hex(write((w) => w.writeVarlong(BigInt(v)))), text, `varlong ${v}`);
    assert.is(new Reader(fromHex(text)).readVarlong(), BigInt(v));
  }
});

test("over-long varints are rejected with varint-too-long at the varint's first byte", () => {
  const pad = Buffer.from([0xee, 0xee, 0xee]);
  const cases: [string, string, (r: Reader) => unknown][] = [
    ['6-byte uvarint', '80 80 80 80 80 00', (r) => r.readUVarint()],
    ['uvarint, 5th byte with high bits', 'ff ff ff ff 1f', (r) => r.readUVarint()],
    ['uvarint, 5th byte 0x10', '80 80 80 80 10', (r) => r.readUVarint()],
    ['uvarint, 5th byte with the continuation bit', 'ff ff ff ff 8f 00', (r) => r.readUVarint()],
    ['6-byte varint', '80 80 80 80 80 00', (r) => r.readVarint()],
    ['varint, 5th byte with high bits', 'ff ff ff ff 7f', (r) => r.readVarint()],
    ['11-byte varlong', '80 80 80 80 80 80 80 80 80 80 00', (r) => r.readVarlong()],
    ['varlong, 10th byte 0x02', 'ff ff ff ff ff ff ff ff ff 02', (r) => r.readVarlong()],
    ['varlong, 10th byte 0x7f', '80 80 80 80 80 80 80 80 80 7f', (r) => r.readVarlong()],
    ['compact string with a 6-byte length', '80 80 80 80 80 00', (r) => r.readCompactString()],
    ['compact array with a 6-byte count', 'ff ff ff ff ff 01', (r) => r.readCompactArrayLength(1)],
  ];
  for (const [name, text, read] of cases) {
    const r = new Reader(Buffer.concat([pad, fromHex(text), Buffer.alloc(4)]), 3);
    const e = errorOf(() => read(r));
    assert.is(e.reason, 'varint-too-long', name);
    assert.is(e.offset, 3, `${name}: offset`);
  }
  // The largest values that still fit are accepted.
  assert.is(new Reader(fromHex('ff ff ff ff 0f')).readUVarint(), 2 ** 32 - 1);
  assert.is(new Reader(fromHex('fe ff ff ff 0f')).readVarint(), 2 ** 31 - 1);
  assert.is(new Reader(fromHex('ff ff ff ff ff ff ff ff ff 01')).readVarlong(), -(2n ** 63n));
});

// ------------------------------------------------------------------ fixed-width integers

test('fixed-width integers: Reader and Writer against DataView over edges and 20,000 random values', () => {
  const rng = new Rng(SEED + 7);
  const raws: Buffer[] = [];
  // int64 edges, and both sides of every boundary of the safe-integer fast path (|v| near 2^53).
  const int64s = [
    ...INT64_EDGES,
    2n ** 53n - 1n,
    -(2n ** 53n) + 1n,
    2n ** 53n + 1n,
    -(2n ** 53n) - 1n,
    2n ** 52n,
    0x1fffffn << 32n,
    -(0x200000n << 32n),
    (0x200000n << 32n) - 1n,
    0xffffffffn,
    -0xffffffffn,
    2n ** 32n - 1n,
    -(2n ** 32n),
  ];
  for (const v of int64s) {
    const b = Buffer.alloc(8);
    b.writeBigInt64BE(v);
    raws.push(b);
  }
  for (let i = 0; i < 20000; i++) {
    // Random bytes, and values with long runs of 0x00 / 0xff at the top (small magnitudes).
    const b = rng.bytes(8);
    const keep = rng.int(0, 8);
    b.fill(rng.chance(0.5) ? 0 : 0xff, 0, 8 - keep);
    raws.push(b);
  }
  for (const raw of raws) {
    const dv = new DataView(raw.buffer, raw.byteOffset, 8);
    const rd = () => new Reader(Buffer.concat([raw, Buffer.from([0xee])]));
    const i64 = rd().readInt64();
    if (i64 !== dv.getBigInt64(0)) assert.unreachable(`readInt64(${hex(raw)}) = ${i64}, expected ${dv.getBigInt64(0)}`);
    assert.is(rd().readInt32(), dv.getInt32(0));
    assert.is(rd().readUInt32(), dv.getUint32(0));
    assert.is(rd().readInt16(), dv.getInt16(0));
    assert.is(rd().readUInt16(), dv.getUint16(0));
    assert.is(rd().readInt8(), dv.getInt8(0));
    assert.is(rd().readUInt8(), dv.getUint8(0));
    const f = rd().readFloat64();
    assert.ok(Object.is(f, dv.getFloat64(0)) || (Number.isNaN(f) && Number.isNaN(dv.getFloat64(0))));
    const w = new Writer(8);
    w.writeInt64(dv.getBigInt64(0));
    w.writeInt32(dv.getInt32(0));
    w.writeUInt32(dv.getUint32(0));
    w.writeInt16(dv.getInt16(0));
    w.writeUInt16(dv.getUint16(0));
    w.writeInt8(dv.getInt8(0));
    const out = w.finish();
    assert.is(hex(out), hex(Buffer.concat([raw, raw.subarray(0, 4), raw.subarray(0, 4), raw.subarray(0, 2), raw.subarray(0, 2), raw.subarray(0, 1)])));
  }
  // Any non-zero byte reads as true.
  assert.equal(
    [...fromHex('00 01 02 7f 80 ff')].map((x) => new Reader(Buffer.from([x])).readBool()),
    [false, true, true, true, true, true],
  );
});

// ------------------------------------------------------------------ uuid

/** base64url of 16 bytes by hand: 128 bits in 6-bit groups, the last one padded with zero bits. */
function refUuidText(b: Uint8Array): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  let bits = 0n;
  for (const x of b) bits = (bits << 8n) | BigInt(x);
  bits <<= 4n; // 128 -> 132 bits = 22 groups of 6
  let s = '';
  for (let i = 21; i >= 0; i--) s += alphabet[Number((bits >> BigInt(6 * i)) & 63n)];
  return s;
}

test('uuid: 22-char base64url text form, round trip through Writer and Reader, the zero uuid', () => {
  const rng = new Rng(SEED + 3);
  assert.is(ZERO_UUID, 'AAAAAAAAAAAAAAAAAAAAAA');
  assert.is(refUuidText(Buffer.alloc(16)), ZERO_UUID);
  assert.is(new Reader(Buffer.alloc(16)).readUuid(), ZERO_UUID);
  assert.is(hex(write((w) => w.writeUuid(ZERO_UUID))), hex(Buffer.alloc(16)));
  // The reserved metadata-topic id: 1.
  const one = Buffer.alloc(16);
  one[15] = 1;
  assert.is(new Reader(one).readUuid(), 'AAAAAAAAAAAAAAAAAAAAAQ');
  for (let i = 0; i < 2000; i++) {
    const raw = rng.bytes(16);
    const text = refUuidText(raw);
    assert.is(text.length, 22);
    assert.ok(isUuid(text), text);
    const r = new Reader(Buffer.concat([Buffer.from([9]), raw]), 1);
    assert.is(r.readUuid(), text);
    assert.is(uuidFromBytes(raw, 0), text);
    assert.is(hex(write((w) => w.writeUuid(text))), hex(raw));
    const target = Buffer.alloc(20, 0xee);
    uuidToBytes(text, target, 2);
    assert.is(hex(target.subarray(2, 18)), hex(raw));
    assert.is(target[1], 0xee);
    assert.is(target[18], 0xee);
  }
  // Not uuids: wrong length, padding, the standard base64 alphabet, a last char with set pad bits.
  for (const bad of [
    '',
    'AAAAAAAAAAAAAAAAAAAAA',
    'AAAAAAAAAAAAAAAAAAAAAAA',
    'AAAAAAAAAAAAAAAAAAAA==',
    'AAAAAAAAAAAAAAAAAAAA+A',
    'AAAAAAAAAAAAAAAAAAAA/A',
    'AAAAAAAAAAAAAAAAAAAAAB',
    '00000000-0000-0000-0000-000000000000',
  ]) {
    assert.not.ok(isUuid(bad), bad);
    const w = new Writer(32);
    const e = errorOf(() => w.writeUuid(bad));
    assert.is(e.reason, 'invalid-value', bad);
    assert.is(w.length, 0, `${bad}: nothing written`);
  }
});

// ------------------------------------------------------------------ strings

test('strings are length-prefixed by UTF-8 byte count, not JS length', () => {
  const cases: [string, string][] = [
    ['', ''],
    ['a', '61'],
    ['é', 'c3 a9'],
    ['€', 'e2 82 ac'],
    ['😀', 'f0 9f 98 80'], // JS length 2 (a surrogate pair), 4 bytes
    ['a€😀', '61 e2 82 ac f0 9f 98 80'],
    ['\u0000', '00'],
  ];
  for (const [s, utf8] of cases) {
    const n = fromHex(utf8).length;
    const int16 = hex(Buffer.from([(n >> 8) & 0xff, n & 0xff]));
    const compact = hex(Buffer.from([n + 1]));
    const join = (a: string, b: string) => (b ? `${a} ${b}` : a);
    assert.is(hex(write((w) => w.writeString(s))), join(int16, utf8), `string ${JSON.stringify(s)}`);
    assert.is(hex(write((w) => w.writeNullableString(s))), join(int16, utf8));
    assert.is(hex(write((w) => w.writeCompactString(s))), join(compact, utf8), `compact ${JSON.stringify(s)}`);
    assert.is(hex(write((w) => w.writeCompactNullableString(s))), join(compact, utf8));
    assert.is(new Reader(fromHex(join(int16, utf8))).readString(), s);
    assert.is(new Reader(fromHex(join(compact, utf8))).readCompactString(), s);
    assert.is(new Reader(fromHex(join(compact, utf8))).readCompactNullableString(), s);
  }
  assert.is(hex(write((w) => w.writeNullableString(null))), 'ff ff');
  assert.is(hex(write((w) => w.writeCompactNullableString(null))), '00');
  assert.is(new Reader(fromHex('ff ff')).readNullableString(), null);
  assert.is(new Reader(fromHex('00')).readCompactNullableString(), null);
  // 127 bytes: the compact length 128 takes two bytes.
  const s127 = 'é'.repeat(63) + 'x';
  assert.is(Buffer.byteLength(s127), 127);
  const c = write((w) => w.writeCompactString(s127));
  assert.is(hex(c.subarray(0, 3)), '80 01 c3');
  assert.is(c.length, 129);
  assert.is(new Reader(c).readCompactString(), s127);
  // The longest int16-length string, and one byte more.
  const max = 'é'.repeat(16383) + 'x';
  assert.is(Buffer.byteLength(max), 0x7fff);
  assert.is(new Reader(write((w) => w.writeString(max))).readString(), max);
  const e = errorOf(() => write((w) => w.writeString(max + 'x')));
  assert.is(e.reason, 'invalid-length');
  // Random strings of mixed widths.
  const rng = new Rng(SEED + 4);
  const pieces = ['a', 'é', '€', '😀', '日本', 'ß', ' '];
  for (let i = 0; i < 2000; i++) {
    let s = '';
    for (let j = rng.int(0, 80); j > 0; j--) s += rng.pick(pieces);
    const utf8 = Buffer.from(s, 'utf8');
    const w = new Writer(16);
    w.writeString(s);
    w.writeCompactString(s);
    const b = w.finish();
    assert.is(b.readInt16BE(0), utf8.length);
    assert.ok(b.subarray(2, 2 + utf8.length).equals(utf8));
    const r = new Reader(b);
    assert.is(r.readString(), s);
    assert.is(r.readCompactString(), s);
    assert.is(r.remaining, 0);
  }
});

test('bytes and array lengths, null markers', () => {
  assert.is(hex(write((w) => w.writeBytes(Buffer.from([1, 2])))), '00 00 00 02 01 02');
  assert.is(hex(write((w) => w.writeNullableBytes(null))), 'ff ff ff ff');
  assert.is(hex(write((w) => w.writeCompactBytes(Buffer.from([1, 2])))), '03 01 02');
  assert.is(hex(write((w) => w.writeCompactNullableBytes(null))), '00');
  assert.is(hex(write((w) => w.writeArrayLength(-1))), 'ff ff ff ff');
  assert.is(hex(write((w) => w.writeCompactArrayLength(-1))), '00');
  assert.is(hex(write((w) => w.writeCompactArrayLength(127))), '80 01');
  assert.is(new Reader(fromHex('ff ff ff ff')).readNullableBytes(), null);
  assert.is(new Reader(fromHex('00')).readCompactNullableBytes(), null);
  assert.is(new Reader(fromHex('ff ff ff ff')).readArrayLength(4), -1);
  assert.is(new Reader(fromHex('00')).readCompactArrayLength(4), -1);
  assert.is(hex(new Reader(fromHex('03 01 02')).readCompactBytes()), '01 02');
  // Null where the method does not allow it, and negative lengths other than -1.
  assert.is(errorOf(() => new Reader(fromHex('ff ff')).readString()).reason, 'invalid-value');
  assert.is(errorOf(() => new Reader(fromHex('ff fe 00 00')).readString()).reason, 'invalid-length');
  assert.is(errorOf(() => new Reader(fromHex('ff fe 00 00')).readNullableString()).reason, 'invalid-length');
  assert.is(errorOf(() => new Reader(fromHex('00')).readCompactString()).reason, 'invalid-value');
  assert.is(errorOf(() => new Reader(fromHex('00')).readCompactBytes()).reason, 'invalid-value');
  assert.is(errorOf(() => new Reader(fromHex('ff ff ff ff')).readBytes()).reason, 'invalid-value');
  assert.is(errorOf(() => new Reader(fromHex('ff ff ff fe')).readNullableBytes()).reason, 'invalid-length');
  assert.is(errorOf(() => new Reader(fromHex('80 00 00 00')).readArrayLength(1)).reason, 'invalid-length');
  // Counts that cannot fit are refused before anything is allocated from them.
  const huge = errorOf(() => new Reader(fromHex('fe ff ff ff 0f 00 00')).readCompactArrayLength(1));
  assert.is(huge.reason, 'invalid-length');
  assert.is(huge.offset, 0);
  assert.is(errorOf(() => new Reader(fromHex('7f ff ff ff 00')).readArrayLength(1)).reason, 'invalid-length');
  assert.is(new Reader(fromHex('00 00 00 02 00 00 00 00 00 00 00 00')).readArrayLength(4), 2);
  assert.is(errorOf(() => new Reader(fromHex('00 00 00 03 00 00 00 00 00 00 00 00')).readArrayLength(4)).reason, 'invalid-length');
});

// ------------------------------------------------------------------ truncation

interface ReadCase {
  name: string;
  bytes: string;
  read: (r: Reader) => unknown;
  /** Fixed-width and varint reads fail at their first byte with 'truncated'. */
  atStart: boolean;
}

const READS: ReadCase[] = [
  { name: 'readInt8', bytes: '80', read: (r) => r.readInt8(), atStart: true },
  { name: 'readUInt8', bytes: 'ff', read: (r) => r.readUInt8(), atStart: true },
  { name: 'readBool', bytes: '01', read: (r) => r.readBool(), atStart: true },
  { name: 'readInt16', bytes: 'ff fe', read: (r) => r.readInt16(), atStart: true },
  { name: 'readUInt16', bytes: 'ff fe', read: (r) => r.readUInt16(), atStart: true },
  { name: 'readInt32', bytes: '80 00 00 01', read: (r) => r.readInt32(), atStart: true },
  { name: 'readUInt32', bytes: 'ff ff ff ff', read: (r) => r.readUInt32(), atStart: true },
  { name: 'readInt64', bytes: '80 00 00 00 00 00 00 00', read: (r) => r.readInt64(), atStart: true },
  { name: 'readFloat64', bytes: '40 09 21 fb 54 44 2d 18', read: (r) => r.readFloat64(), atStart: true },
  { name: 'readUuid', bytes: '01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f 10', read: (r) => r.readUuid(), atStart: true },
  { name: 'readUVarint', bytes: 'ff ff ff ff 0f', read: (r) => r.readUVarint(), atStart: true },
  { name: 'readVarint', bytes: '80 80 01', read: (r) => r.readVarint(), atStart: true },
  { name: 'readVarlong', bytes: 'ff ff ff ff ff ff ff ff ff 01', read: (r) => r.readVarlong(), atStart: true },
  { name: 'readRaw(5)', bytes: '01 02 03 04 05', read: (r) => r.readRaw(5), atStart: true },
  { name: 'skip(5)', bytes: '01 02 03 04 05', read: (r) => r.skip(5), atStart: true },
  { name: 'readString', bytes: '00 04 c3 a9 c3 a9', read: (r) => r.readString(), atStart: false },
  { name: 'readNullableString', bytes: '00 04 c3 a9 c3 a9', read: (r) => r.readNullableString(), atStart: false },
  { name: 'readCompactString', bytes: '05 c3 a9 c3 a9', read: (r) => r.readCompactString(), atStart: false },
  { name: 'readCompactNullableString', bytes: '05 c3 a9 c3 a9', read: (r) => r.readCompactNullableString(), atStart: false },
  { name: 'readCompactString (2-byte length)', bytes: `81 01 ${'61 '.repeat(128)}`, read: (r) => r.readCompactString(), atStart: false },
  { name: 'readBytes', bytes: '00 00 00 03 01 02 03', read: (r) => r.readBytes(), atStart: false },
  { name: 'readNullableBytes', bytes: '00 00 00 03 01 02 03', read: (r) => r.readNullableBytes(), atStart: false },
  { name: 'readCompactBytes', bytes: '04 01 02 03', read: (r) => r.readCompactBytes(), atStart: false },
  { name: 'readCompactNullableBytes', bytes: '04 01 02 03', read: (r) => r.readCompactNullableBytes(), atStart: false },
  { name: 'readArrayLength(4)', bytes: '00 00 00 02 00 00 00 01 00 00 00 02', read: (r) => r.readArrayLength(4), atStart: false },
  { name: 'readCompactArrayLength(4)', bytes: '03 00 00 00 01 00 00 00 02', read: (r) => r.readCompactArrayLength(4), atStart: false },
];

test('every Reader method on truncated input: KafkaProtocolError with the offset, never a RangeError', () => {
  let cases = 0;
  for (const c of READS) {
    const full = fromHex(c.bytes);
    // The whole value reads fine and consumes exactly its bytes.
    const ok = new Reader(full);
    c.read(ok);
    if (!c.name.includes('ArrayLength')) assert.is(ok.offset, full.length, `${c.name} consumed`);
    for (let k = 0; k < full.length; k++) {
      // Cut two ways: a buffer that ends at the cut, and a reader whose `end` is the cut with the
      // rest of the bytes still in the buffer (as when reading inside a tagged field). The value
      // starts at offset 3 so that offsets are seen to be absolute.
      const pad = Buffer.from([0xee, 0xee, 0xee]);
      const readers = [new Reader(Buffer.concat([pad, full.subarray(0, k)]), 3), new Reader(Buffer.concat([pad, full, Buffer.alloc(8, 0x01)]), 3, 3 + k)];
      for (const r of readers) {
        cases++;
        let e: KafkaProtocolError;
        try {
          e = errorOf(() => c.read(r));
        } catch (err) {
          assert.unreachable(`${c.name} cut at ${k}: ${(err as Error).message}`);
          return;
        }
        const where = `${c.name} cut at ${k} of ${full.length}`;
        if (c.atStart) {
          assert.is(e.reason, 'truncated', where);
          assert.is(e.offset, 3, `${where}: offset`);
        } else {
          // A length prefix cut short fails at the prefix; a value cut short fails at the prefix
          // (invalid-length: the length is beyond the bytes) or where the missing bytes begin.
          assert.ok(e.reason === 'truncated' || e.reason === 'invalid-length', `${where}: reason ${e.reason}`);
          assert.ok(e.offset !== undefined && e.offset >= 3 && e.offset <= 3 + k, `${where}: offset ${e.offset}`);
        }
        assert.is(r.error, e, `${where}: error kept on the reader`);
      }
    }
  }
  assert.ok(cases > 300);
});

test('the first failure is sticky: later reads throw the same error object, until reset()', () => {
  const r = new Reader(fromHex('00 01 02'));
  const first = errorOf(() => r.readInt32());
  // Every later read fails with it, even one the remaining bytes would satisfy.
  for (const read of [(x: Reader) => x.readInt8(), (x: Reader) => x.readUVarint(), (x: Reader) => x.readVarlong(), (x: Reader) => x.readCompactString(), (x: Reader) => x.expectEnd()]) {
    let second: unknown;
    try {
      read(r);
    } catch (e) {
      second = e;
    }
    assert.is(second, first);
  }
  assert.is(r.offset, 0);
  r.reset(fromHex('07'));
  assert.is(r.error, undefined);
  assert.is(r.readInt8(), 7);
  // fail() keeps the first error too.
  const r2 = new Reader(fromHex('00'));
  const a = errorOf(() => r2.fail('first', 'invalid-value'));
  const b = errorOf(() => r2.fail('second', 'truncated'));
  assert.is(a, b);
  assert.is(b.reason, 'invalid-value');
  // expectEnd: trailing bytes.
  const r3 = new Reader(fromHex('00 00'));
  r3.readInt8();
  const t = errorOf(() => r3.expectEnd());
  assert.is(t.reason, 'trailing-bytes');
  assert.is(t.offset, 1);
});

// ------------------------------------------------------------------ Writer

test('Writer range checks: out-of-range, fractional, NaN, non-number and int64 overflow throw KafkaProtocolError', () => {
  const bad: [string, (w: Writer) => void][] = [
    ['int8 128', (w) => w.writeInt8(128)],
    ['int8 -129', (w) => w.writeInt8(-129)],
    ['int8 1.5', (w) => w.writeInt8(1.5)],
    ['int8 NaN', (w) => w.writeInt8(NaN)],
    ['int16 32768', (w) => w.writeInt16(32768)],
    ['int16 -32769', (w) => w.writeInt16(-32769)],
    ['int16 0.1', (w) => w.writeInt16(0.1)],
    ['int16 NaN', (w) => w.writeInt16(NaN)],
    ['uint16 -1', (w) => w.writeUInt16(-1)],
    ['uint16 65536', (w) => w.writeUInt16(65536)],
    ['uint16 2.5', (w) => w.writeUInt16(2.5)],
    ['int32 2^31', (w) => w.writeInt32(2 ** 31)],
    ['int32 -2^31-1', (w) => w.writeInt32(-(2 ** 31) - 1)],
    ['int32 1.5', (w) => w.writeInt32(1.5)],
    ['int32 NaN', (w) => w.writeInt32(NaN)],
    ['int32 Infinity', (w) => w.writeInt32(Infinity)],
    ['int32 "1"', (w) => w.writeInt32('1' as never)],
    ['uint32 -1', (w) => w.writeUInt32(-1)],
    ['uint32 2^32', (w) => w.writeUInt32(2 ** 32)],
    ['int64 2^63', (w) => w.writeInt64(2n ** 63n)],
    ['int64 -2^63-1', (w) => w.writeInt64(-(2n ** 63n) - 1n)],
    ['int64 2^53 (unsafe number)', (w) => w.writeInt64(2 ** 53)],
    ['int64 1.5', (w) => w.writeInt64(1.5)],
    ['int64 NaN', (w) => w.writeInt64(NaN)],
    ['uvarint -1', (w) => w.writeUVarint(-1)],
    ['uvarint 2^32', (w) => w.writeUVarint(2 ** 32)],
    ['uvarint 0.5', (w) => w.writeUVarint(0.5)],
    ['varint 2^31', (w) => w.writeVarint(2 ** 31)],
    ['varint 1.5', (w) => w.writeVarint(1.5)],
    ['varlong 2^63', (w) => w.writeVarlong(2n ** 63n)],
    ['varlong -2^63-1', (w) => w.writeVarlong(-(2n ** 63n) - 1n)],
  ];
  for (const [name, f] of bad) {
    const w = new Writer(16);
    w.writeInt8(1);
    const e = errorOf(() => f(w));
    assert.is(e.reason, 'invalid-value', name);
    // Nothing of the bad value was written.
    assert.is(w.length, 1, `${name}: length`);
  }
  // The extremes themselves are fine.
  const ok = write((w) => {
    w.writeInt8(-128);
    w.writeInt8(127);
    w.writeInt16(-32768);
    w.writeInt16(32767);
    w.writeUInt16(65535);
    w.writeInt32(-(2 ** 31));
    w.writeInt32(2 ** 31 - 1);
    w.writeUInt32(2 ** 32 - 1);
    w.writeInt64(-(2n ** 63n));
    w.writeInt64(2n ** 63n - 1n);
    w.writeInt64(Number.MIN_SAFE_INTEGER);
  });
  assert.is(hex(ok), '80 7f 80 00 7f ff ff ff 80 00 00 00 7f ff ff ff ff ff ff ff 80 00 00 00 00 00 00 00 7f ff ff ff ff ff ff ff ff e0 00 00 00 00 00 01');
  const r = new Reader(ok);
  assert.equal(
    [r.readInt8(), r.readInt8(), r.readInt16(), r.readInt16(), r.readUInt16(), r.readInt32(), r.readInt32(), r.readUInt32()],
    [-128, 127, -32768, 32767, 65535, -(2 ** 31), 2 ** 31 - 1, 2 ** 32 - 1],
  );
  assert.equal([r.readInt64(), r.readInt64(), r.readInt64()], [-(2n ** 63n), 2n ** 63n - 1n, BigInt(Number.MIN_SAFE_INTEGER)]);
});

test('Writer.finish(): a frame handed out is never written to again (slab replacement, regrow, abandon)', () => {
  const rng = new Rng(SEED + 5);
  const w = new Writer(256);
  const kept: { view: Buffer; copy: Buffer }[] = [];
  for (let i = 0; i < 3000; i++) {
    // Sizes around the slab size and far above it, so every path is taken: continuing in the
    // slab, a fresh slab for a small tail, a regrow in the middle of a message.
    const size = rng.pick([0, 1, 3, 100, 200, 250, 255, 256, 300, 1000, 5000]);
    const at = w.reserve(4);
    w.writeRaw(rng.bytes(size));
    w.writeCompactString('é'.repeat(rng.int(0, 10)));
    w.backfillInt32(at, w.length - 4);
    if (rng.chance(0.1)) {
      // A message dropped half-way must not disturb what was handed out before.
      w.writeRaw(rng.bytes(rng.int(1, 400)));
      w.abandon();
      continue;
    }
    const view = w.finish();
    assert.is(view.readInt32BE(0), view.length - 4);
    kept.push({ view, copy: Buffer.from(view) });
  }
  for (let i = 0; i < kept.length; i++) {
    if (!kept[i]!.view.equals(kept[i]!.copy)) assert.unreachable(`frame ${i} was overwritten by a later write`);
  }
  // The frames never overlap in memory.
  const spans = kept.filter((k) => k.view.length > 0).map((k) => ({ ab: k.view.buffer, lo: k.view.byteOffset, hi: k.view.byteOffset + k.view.length }));
  spans.sort((a, b) => (a.ab === b.ab ? a.lo - b.lo : 0));
  for (let i = 1; i < spans.length; i++) {
    if (spans[i]!.ab === spans[i - 1]!.ab) assert.ok(spans[i]!.lo >= spans[i - 1]!.hi, 'two frames share bytes');
  }
});

test('encodeRequestFrame with the shared writer: earlier frames survive thousands of later ones', () => {
  const rng = new Rng(SEED + 6);
  const first: { frame: Buffer; copy: Buffer }[] = [];
  for (let i = 0; i < 5000; i++) {
    const big = rng.chance(0.01);
    const frame = encodeRequestFrame({
      apiKey: 36,
      apiVersion: 2,
      correlationId: i,
      clientId: 'c',
      // SaslAuthenticate carries raw bytes: easy to make frames of any size, up to 100 KB.
      body: { authBytes: rng.bytes(big ? rng.int(70000, 100000) : rng.int(0, 300)) },
    });
    if (i < 100) first.push({ frame, copy: Buffer.from(frame) });
  }
  for (const [i, f] of first.entries()) assert.ok(f.frame.equals(f.copy), `frame ${i} was overwritten`);
});

test.run();
