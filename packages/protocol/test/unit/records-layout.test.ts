// The bytes of a record batch checked against independent sources: the worked batch of the
// protocol notes (its CRC was checked with Java's CRC32C), a batch laid out by hand here with its
// CRC from a bitwise CRC-32C loop, and property tests of CRC-32C and zig-zag varints against
// reference implementations written in this file.
import { randomBytes } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { isKafkaProtocolError } from '../../src/errors.js';
import { Writer } from '../../src/primitives/writer.js';
import { crc32c, decodeRecordBatch, encodeRecordBatch, sizeOfVarlong, unzigzag32, unzigzag64, zigzag32, zigzag64, type RecordView } from '../../src/records/index.js';

// ---- references, written independently of the code under test ----

/** Bit-at-a-time CRC-32C (reflected polynomial 0x82F63B78). */
function crc32cRef(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0x82f63b78 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

/** Zig-zag LEB128 of a signed 64-bit value, by the definition (bigint arithmetic, no shifts tricks). */
function varlongRef(v: bigint): number[] {
  let u = v >= 0n ? 2n * v : -2n * v - 1n;
  const out: number[] = [];
  do {
    let byte = Number(u % 128n);
    u /= 128n;
    if (u > 0n) byte += 128;
    out.push(byte);
  } while (u > 0n);
  return out;
}

function be(n: bigint | number, bytes: number): number[] {
  let v = BigInt.asUintN(bytes * 8, BigInt(n));
  const out = new Array<number>(bytes);
  for (let i = bytes - 1; i >= 0; i--) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return out;
}

function ascii(s: string): number[] {
  return [...Buffer.from(s, 'utf8')];
}

/** A whole batch from its header fields and hand-made record bytes; CRC from crc32cRef. */
function handBatch(h: {
  baseOffset: bigint;
  leaderEpoch: number;
  attributes: number;
  lastOffsetDelta: number;
  baseTimestamp: bigint;
  maxTimestamp: bigint;
  producerId: bigint;
  producerEpoch: number;
  baseSequence: number;
  count: number;
  records: number[];
}): Buffer {
  const afterCrc = [
    ...be(h.attributes, 2),
    ...be(h.lastOffsetDelta, 4),
    ...be(h.baseTimestamp, 8),
    ...be(h.maxTimestamp, 8),
    ...be(h.producerId, 8),
    ...be(h.producerEpoch, 2),
    ...be(h.baseSequence, 4),
    ...be(h.count, 4),
    ...h.records,
  ];
  const crc = crc32cRef(Uint8Array.from(afterCrc));
  const batchLength = 4 + 1 + 4 + afterCrc.length; // leaderEpoch, magic, crc, rest
  return Buffer.from([...be(h.baseOffset, 8), ...be(batchLength, 4), ...be(h.leaderEpoch, 4), 2, ...be(crc, 4), ...afterCrc]);
}

// ---- the worked batch of the protocol notes (§3.9) ----

const WORKED = Buffer.from(
  '0000000000000000' +
    '0000003a' +
    'ffffffff' +
    '02' +
    'bbcc4115' +
    '0000' +
    '00000000' +
    '0000018bcfe56800' +
    '0000018bcfe56800' +
    'ffffffffffffffff' +
    'ffff' +
    'ffffffff' +
    '00000001' +
    '10' +
    '000000' +
    '01' +
    '046869' +
    '00',
  'hex',
);

test('the worked batch of the notes: our encoder writes it byte for byte', () => {
  const bytes = encodeRecordBatch([{ key: null, value: 'hi', timestamp: 1_700_000_000_000 }]);
  assert.is(bytes.toString('hex'), WORKED.toString('hex'));
});

test('the worked batch of the notes: every field decodes', () => {
  const b = decodeRecordBatch(WORKED);
  assert.is(b.baseOffset, 0n);
  assert.is(b.batchLength, 58);
  assert.is(b.sizeInBytes, 70);
  assert.is(b.partitionLeaderEpoch, -1);
  assert.is(b.magic, 2);
  assert.is(b.crc, 0xbbcc4115);
  assert.is(b.compression, 'none');
  assert.is(b.timestampType, 'CreateTime');
  assert.is(b.isTransactional, false);
  assert.is(b.isControl, false);
  assert.is(b.lastOffsetDelta, 0);
  assert.is(b.lastOffset, 0n);
  assert.is(b.baseTimestamp, 1_700_000_000_000);
  assert.is(b.maxTimestamp, 1_700_000_000_000);
  assert.is(b.producerId, -1n);
  assert.is(b.producerEpoch, -1);
  assert.is(b.baseSequence, -1);
  assert.is(b.recordCount, 1);
  const [r] = b.records() as [RecordView];
  assert.is(r.key, null);
  assert.is(r.valueString(), 'hi');
  assert.is(r.offset, 0n);
  assert.is(r.timestamp, 1_700_000_000_000);
  assert.equal(r.headers, []);
  assert.is(r.sequence, -1);
});

// ---- a batch laid out by hand ----

const T = 1_700_000_000_000n;
const z200 = new Array<number>(200).fill(0x7a); // 200 x 'z'

// Record 0: key "k", value "v1", header h=x.
const r0Body = [0x00, 0x00, 0x00, 0x02, ...ascii('k'), 0x04, ...ascii('v1'), 0x02, 0x02, ...ascii('h'), 0x02, ...ascii('x')];
// Record 1: timestampDelta +5 (zig-zag 10), offsetDelta 1, null key, null value,
// headers ("a", null) and ("é", empty).
const r1Body = [0x00, 0x0a, 0x02, 0x01, 0x01, 0x04, 0x02, ...ascii('a'), 0x01, 0x04, 0xc3, 0xa9, 0x00];
// Record 2: timestampDelta -3 (zig-zag 5), offsetDelta 2, empty (not null) key, 200-byte value
// (length 200 -> zig-zag 400 -> LEB128 90 03), no headers.
const r2Body = [0x00, 0x05, 0x04, 0x00, 0x90, 0x03, ...z200, 0x00];

test('hand layout: the record bodies have the lengths worked out by hand', () => {
  assert.is(r0Body.length, 13);
  assert.is(r1Body.length, 13);
  assert.is(r2Body.length, 207);
});

// Body lengths 13 -> zig-zag 26 (0x1a); 207 -> zig-zag 414 -> LEB128 9e 03.
const HAND = handBatch({
  baseOffset: 42n,
  leaderEpoch: 5,
  attributes: 0x10, // transactional
  lastOffsetDelta: 2,
  baseTimestamp: T,
  maxTimestamp: T + 5n,
  producerId: 7n,
  producerEpoch: 1,
  baseSequence: 10,
  count: 3,
  records: [0x1a, ...r0Body, 0x1a, ...r1Body, 0x9e, 0x03, ...r2Body],
});

test('hand layout: our encoder writes the same bytes, CRC included', () => {
  const bytes = encodeRecordBatch(
    [
      { key: 'k', value: 'v1', headers: [{ key: 'h', value: 'x' }], timestamp: T },
      {
        key: null,
        value: null,
        headers: [
          { key: 'a', value: null },
          { key: 'é', value: '' },
        ],
        timestamp: T + 5n,
      },
      { key: '', value: Buffer.alloc(200, 'z'), timestamp: T - 3n },
    ],
    { baseOffset: 42n, partitionLeaderEpoch: 5, isTransactional: true, producerId: 7n, producerEpoch: 1, baseSequence: 10 },
  );
  assert.is(bytes.toString('hex'), HAND.toString('hex'));
  assert.is(bytes.readUInt32BE(17), crc32cRef(bytes.subarray(21)));
});

test('hand layout: every field decodes', () => {
  const b = decodeRecordBatch(HAND);
  assert.is(b.baseOffset, 42n);
  assert.is(b.partitionLeaderEpoch, 5);
  assert.is(b.isTransactional, true);
  assert.is(b.isControl, false);
  assert.is(b.producerId, 7n);
  assert.is(b.producerEpoch, 1);
  assert.is(b.baseSequence, 10);
  assert.is(b.lastOffset, 44n);
  assert.is(b.nextOffset, 45n);
  assert.is(b.maxTimestamp, Number(T) + 5);
  const [r0, r1, r2] = b.records() as [RecordView, RecordView, RecordView];
  assert.is(r0.keyString(), 'k');
  assert.is(r0.valueString(), 'v1');
  assert.equal(
    r0.headers.map((h) => [h.key, h.value?.toString()]),
    [['h', 'x']],
  );
  assert.is(r0.offset, 42n);
  assert.is(r0.timestamp, Number(T));
  assert.is(r0.sequence, 10);
  assert.is(r1.key, null);
  assert.is(r1.value, null);
  assert.is(r1.valueString(), null);
  assert.is(r1.offset, 43n);
  assert.is(r1.timestamp, Number(T) + 5);
  const h1 = r1.headers;
  assert.is(h1.length, 2);
  assert.is(h1[0]!.key, 'a');
  assert.is(h1[0]!.value, null);
  assert.is(h1[1]!.key, 'é');
  assert.is(h1[1]!.value!.length, 0);
  assert.is(r2.key!.length, 0, 'an empty key is not a null key');
  assert.is(r2.value!.toString(), 'z'.repeat(200));
  assert.is(r2.timestamp, Number(T) - 3);
  assert.is(r2.timestampDelta, -3);
  assert.is(r2.sequence, 12);
  // Views, not copies: the value shares memory with the input.
  assert.is(r2.value!.buffer, HAND.buffer);
});

// ---- CRC-32C ----

test('crc32c: the check value of "123456789" is 0xE3069283', () => {
  const check = Buffer.from('123456789');
  assert.is(crc32c(check), 0xe3069283);
  assert.is(crc32cRef(check), 0xe3069283);
});

test('crc32c: agrees with the bitwise reference on random inputs and ranges', () => {
  for (let i = 0; i < 400; i++) {
    const len = i < 40 ? i : Math.floor(Math.random() * 5000);
    const buf = randomBytes(len);
    assert.is(crc32c(buf), crc32cRef(buf), `length ${len}`);
    const from = Math.floor(Math.random() * (len + 1));
    const to = from + Math.floor(Math.random() * (len - from + 1));
    assert.is(crc32c(buf, from, to), crc32cRef(buf.subarray(from, to)), `range ${from}..${to} of ${len}`);
  }
  for (const fill of [0x00, 0xff]) {
    const buf = Buffer.alloc(1000, fill);
    assert.is(crc32c(buf), crc32cRef(buf));
  }
});

// ---- zig-zag varints ----

const INT32_EDGES = [0, -1, 1, 63, -64, 64, -65, 8191, -8192, 8192, 2 ** 31 - 1, -(2 ** 31), 2 ** 30, -(2 ** 30) - 1];
const INT64_EDGES = [
  0n,
  -1n,
  1n,
  63n,
  -64n,
  2n ** 31n - 1n,
  -(2n ** 31n),
  2n ** 48n - 1n,
  -(2n ** 48n),
  2n ** 48n,
  -(2n ** 48n) - 1n,
  2n ** 53n - 1n,
  -(2n ** 53n) + 1n,
  2n ** 53n,
  -(2n ** 53n),
  2n ** 62n,
  2n ** 63n - 1n,
  -(2n ** 63n),
];

function randomInt64(): bigint {
  const bits = 1 + Math.floor(Math.random() * 64);
  return BigInt.asIntN(64, randomBytes(8).readBigUInt64BE() >> BigInt(64 - bits));
}

function randomInt32(): number {
  const bits = 1 + Math.floor(Math.random() * 32);
  return randomBytes(4).readInt32BE() >> (32 - bits);
}

test('zig-zag helpers agree with the definition', () => {
  const values32 = [...INT32_EDGES, ...Array.from({ length: 2000 }, randomInt32)];
  for (const v of values32) {
    const ref = v >= 0 ? 2 * v : -2 * v - 1;
    assert.is(zigzag32(v), ref, `zigzag32(${v})`);
    assert.is(unzigzag32(ref), v, `unzigzag32(${ref})`);
  }
  const values64 = [...INT64_EDGES, ...Array.from({ length: 2000 }, randomInt64)];
  for (const v of values64) {
    const ref = v >= 0n ? 2n * v : -2n * v - 1n;
    assert.is(zigzag64(v), ref);
    assert.is(unzigzag64(ref), v);
    assert.is(sizeOfVarlong(v), varlongRef(v).length, `sizeOfVarlong(${v})`);
  }
});

test('the writer encodes varlongs and varints as the reference does', () => {
  for (const v of [...INT64_EDGES, ...Array.from({ length: 2000 }, randomInt64)]) {
    const w = new Writer(64);
    w.writeVarlong(v);
    assert.equal([...w.finish()], varlongRef(v), `varlong ${v}`);
  }
  for (const v of [...INT32_EDGES, ...Array.from({ length: 2000 }, randomInt32)]) {
    const w = new Writer(64);
    w.writeVarint(v);
    assert.equal([...w.finish()], varlongRef(BigInt(v)), `varint ${v}`);
  }
});

/** A one-record batch (base timestamp `base`) whose record carries the given raw delta bytes. */
function batchWithDeltas(base: bigint, timestampDeltaBytes: number[], offsetDeltaBytes: number[]): Buffer {
  const body = [0x00, ...timestampDeltaBytes, ...offsetDeltaBytes, 0x01, 0x01, 0x00];
  return handBatch({
    baseOffset: 1000n,
    leaderEpoch: -1,
    attributes: 0,
    lastOffsetDelta: 0,
    baseTimestamp: base,
    maxTimestamp: base,
    producerId: -1n,
    producerEpoch: -1,
    baseSequence: -1,
    count: 1,
    records: [...varlongRef(BigInt(body.length)), ...body],
  });
}

test('decoder: offsetDelta varints over random int32 values and the edges', () => {
  for (const v of [...INT32_EDGES, ...Array.from({ length: 3000 }, randomInt32)]) {
    const b = decodeRecordBatch(batchWithDeltas(0n, [0], varlongRef(BigInt(v))));
    const [r] = b.records() as [RecordView];
    assert.is(r.offsetDelta, v, `offsetDelta ${v}`);
    assert.is(r.offset, 1000n + BigInt(v));
  }
});

test('decoder: timestampDelta varlongs are exact as numbers or refused, and exact as bigints', () => {
  for (const base of [0n, 1_700_000_000_000n]) {
    for (const v of [...INT64_EDGES, ...Array.from({ length: 3000 }, randomInt64)]) {
      const b = decodeRecordBatch(batchWithDeltas(base, varlongRef(v), [0]));
      const [r] = b.records() as [RecordView];
      const exact = BigInt.asIntN(64, base + v);
      assert.is(r.timestampBigInt, exact, `delta ${v}`);
      if (exact >= -(2n ** 53n - 1n) && exact <= 2n ** 53n - 1n && v >= -(2n ** 53n - 1n) && v <= 2n ** 53n - 1n) {
        assert.is(r.timestamp, Number(exact), `delta ${v}`);
      } else {
        try {
          const t = r.timestamp;
          assert.unreachable(`timestamp ${t} for exact ${exact}`);
        } catch (err) {
          assert.ok(isKafkaProtocolError(err), String(err));
          assert.is((err as { reason: string }).reason, 'invalid-value');
        }
      }
    }
  }
});

test('decoder: non-minimal varint encodings are read by value (as Java does)', () => {
  // 0 written in 2, 5 and 10 bytes; 1 written in 3 bytes.
  const b = decodeRecordBatch(batchWithDeltas(5n, [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00], [0x82, 0x80, 0x00]));
  const [r] = b.records() as [RecordView];
  assert.is(r.timestampDelta, 0);
  assert.is(r.timestamp, 5);
  assert.is(r.offsetDelta, 1);
});

test.run();
