// Hostile and broken input: every failure is a KafkaProtocolError with a reason, an offset and a
// path, never a RangeError/TypeError, a hang or a huge allocation; a partial trailing batch is a
// quiet end, not an error.
import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { isKafkaProtocolError, type KafkaProtocolError } from '../../src/errors.js';
import { compress } from '../../src/compression/index.js';
import {
  BufferPool,
  COMPRESSION_TYPES,
  crc32c,
  decodeRecordBatch,
  encodeControlBatch,
  encodeRecordBatch,
  readRecordBatches,
  type RecordBatch,
  type RecordBatchDecodeOptions,
  type RecordInput,
} from '../../src/records/index.js';

const pool = new BufferPool();

// ---- builders ----

/** Zig-zag LEB128 of an integer (reference form, via bigint). */
function zz(v: number | bigint): number[] {
  const b = BigInt(v);
  let u = b >= 0n ? 2n * b : -2n * b - 1n;
  const out: number[] = [];
  do {
    let byte = Number(u % 128n);
    u /= 128n;
    if (u > 0n) byte += 128;
    out.push(byte);
  } while (u > 0n);
  return out;
}

/** A record from its body bytes: length prefix + body. */
function rec(body: number[]): number[] {
  return [...zz(body.length), ...body];
}

/** A good record body: attributes, deltas, key, value, headers given as [key, value|null] pairs. */
function body(i: number, headers: [string, string | null][] = [], key: string | null = `k${i}`, value: string | null = `v${i}`): number[] {
  const out = [0, ...zz(i), ...zz(i)];
  const bytes = (s: string | null) => (s === null ? zz(-1) : [...zz(Buffer.byteLength(s)), ...Buffer.from(s)]);
  out.push(...bytes(key), ...bytes(value), ...zz(headers.length));
  for (const [k, v] of headers) out.push(...bytes(k), ...bytes(v));
  return out;
}

const TEMPLATE = encodeRecordBatch([], { baseOffset: 0n, now: 1_700_000_000_000 });

/** A batch around `payload` (the records section), with batchLength and CRC made right. */
function withPayload(payload: Uint8Array | number[], opts: { count: number; attributes?: number; from?: Buffer }): Buffer {
  const head = Buffer.from((opts.from ?? TEMPLATE).subarray(0, 61));
  const out = Buffer.concat([head, Buffer.from(payload)]);
  out.writeInt32BE(out.length - 12, 8);
  if (opts.attributes !== undefined) out.writeInt16BE(opts.attributes, 21);
  out.writeInt32BE(opts.count, 57);
  out.writeUInt32BE(crc32c(out, 21), 17);
  return out;
}

/** Re-seals a batch after its bytes were edited: batchLength from the buffer size, CRC recomputed. */
function reseal(batch: Buffer): Buffer {
  batch.writeInt32BE(batch.length - 12, 8);
  batch.writeUInt32BE(crc32c(batch, 21), 17);
  return batch;
}

/** Reads everything there is to read: every header field, every record and every record field. */
function touchAll(buf: Buffer, options?: RecordBatchDecodeOptions): { batches: number; tail: number } {
  const reader = readRecordBatches(buf, { pool, ...options });
  for (let b = reader.next(); b !== null; b = reader.next()) {
    try {
      touchBatch(b);
    } finally {
      b.release();
    }
  }
  return { batches: reader.batchesRead, tail: reader.truncatedTail };
}

function touchBatch(b: RecordBatch): void {
  void [b.baseOffset, b.lastOffset, b.producerId, b.baseTimestampBigInt, b.maxTimestampBigInt, b.compression, b.recordCount];
  tolerate(() => b.baseTimestamp);
  tolerate(() => b.maxTimestamp);
  for (const r of b.records()) {
    void [r.key, r.value, r.keyString(), r.valueString(), r.offset, r.sequence, r.timestampBigInt];
    for (const h of r.headers) void [h.key, h.value];
    tolerate(() => r.timestamp);
  }
  void b.controlRecord;
  const c = b.cursor();
  while (c.next() !== null);
}

/** Runs fn; a KafkaProtocolError is fine (e.g. a timestamp outside the safe range), nothing else. */
function tolerate(fn: () => unknown): void {
  try {
    fn();
  } catch (err) {
    if (!isKafkaProtocolError(err)) throw err;
  }
}

/** fn must throw a KafkaProtocolError; returns it. */
function protocolError(fn: () => unknown, context = ''): KafkaProtocolError {
  try {
    fn();
  } catch (err) {
    if (isKafkaProtocolError(err)) return err;
    assert.unreachable(`${context}: expected a KafkaProtocolError, got ${(err as Error)?.stack ?? String(err)}`);
  }
  assert.unreachable(`${context}: expected a KafkaProtocolError, nothing was thrown`);
  throw new Error('unreachable');
}

/** fn either succeeds or throws a KafkaProtocolError. */
function succeedsOrProtocolError(fn: () => unknown, context: string): boolean {
  try {
    fn();
    return true;
  } catch (err) {
    if (isKafkaProtocolError(err)) return false;
    assert.unreachable(`${context}: ${(err as Error)?.stack ?? String(err)}`);
    return false;
  }
}

function sample(n: number): RecordInput[] {
  return Array.from({ length: n }, (_, i) => ({
    key: i % 2 ? `key-${i}` : null,
    value: i % 4 === 3 ? null : `value-${i}-${'abc'.repeat(i % 20)}`,
    headers:
      i % 3
        ? [
            { key: 'h', value: `${i}` },
            { key: 'n', value: null },
          ]
        : [],
    timestamp: 1_700_000_000_000 + i,
  }));
}

// ---- truncation ----

for (const codec of COMPRESSION_TYPES) {
  test(`${codec}: truncating a fetch at every byte gives the whole batches and a quiet partial tail`, () => {
    const first = encodeRecordBatch(sample(12), { compression: codec });
    const second = encodeRecordBatch(sample(7), { compression: codec, baseOffset: 12n });
    const fetch = Buffer.concat([first, second]);
    for (let cut = 0; cut <= fetch.length; cut++) {
      // A copy of exactly `cut` bytes, so nothing can be read past the end by accident.
      const { batches, tail } = touchAll(Buffer.from(fetch.subarray(0, cut)));
      const whole = cut >= fetch.length ? 2 : cut >= first.length ? 1 : 0;
      assert.is(batches, whole, `cut ${cut}`);
      assert.is(tail, cut - (whole === 2 ? fetch.length : whole === 1 ? first.length : 0), `cut ${cut}`);
    }
  });

  test(`${codec}: truncating the records section at every byte (framing and CRC made right) is a KafkaProtocolError`, () => {
    const full = encodeRecordBatch(sample(6), { compression: codec });
    const payload = full.subarray(61);
    for (let cut = 0; cut < payload.length; cut++) {
      const broken = withPayload(payload.subarray(0, cut), { count: 6, from: full });
      const err = protocolError(() => touchAll(broken), `${codec} cut ${cut}`);
      assert.ok(['truncated', 'invalid-length', 'compression', 'varint-too-long', 'trailing-bytes'].includes(err.reason), err.message);
    }
  });
}

// ---- bit flips ----

for (const codec of COMPRESSION_TYPES) {
  test(`${codec}: every single-bit flip is caught by the CRC, or (CRC off) decodes or fails cleanly`, () => {
    const good = encodeRecordBatch(sample(4), { compression: codec, baseOffset: 100n });
    for (let bit = 0; bit < good.length * 8; bit++) {
      const at = bit >> 3;
      const flipped = Buffer.from(good);
      flipped[at]! ^= 1 << (bit & 7);
      const ctx = `${codec} byte ${at} bit ${bit & 7}`;
      if (at >= 17) {
        // The CRC field itself and everything it covers.
        const err = protocolError(() => touchAll(flipped), ctx);
        assert.is(err.reason, 'crc-mismatch', `${ctx}: ${err.message}`);
        assert.is(err.offset, 17);
        assert.is(err.path, 'crc');
      } else if (at === 16) {
        assert.is(protocolError(() => touchAll(flipped), ctx).reason, 'unsupported-version');
      } else {
        // baseOffset, batchLength, partitionLeaderEpoch: outside the CRC (as in Kafka).
        succeedsOrProtocolError(() => touchAll(flipped), ctx);
      }
      succeedsOrProtocolError(() => touchAll(flipped, { checkCrc: false }), `${ctx}, CRC off`);
    }
  });
}

test('random multi-byte corruption with the CRC recomputed: only KafkaProtocolErrors, never a hang', () => {
  const goods = COMPRESSION_TYPES.flatMap((codec) => [
    encodeRecordBatch(sample(9), { compression: codec }),
    encodeRecordBatch(sample(1), { compression: codec }),
    encodeControlBatch({ type: 'COMMIT', producerId: 1n, producerEpoch: 0 }),
  ]);
  let failed = 0;
  let passed = 0;
  const started = Date.now();
  for (let i = 0; i < 4000; i++) {
    const good = goods[i % goods.length]!;
    let bad = Buffer.from(good);
    const edits = 1 + (i % 4);
    for (let e = 0; e < edits; e++) {
      const at = 21 + Math.floor(Math.random() * (bad.length - 21));
      if (i % 5 === 4) {
        // Delete or insert a byte, then fix the framing so the damage reaches the decoder.
        bad = e % 2 ? Buffer.concat([bad.subarray(0, at), bad.subarray(at + 1)]) : Buffer.concat([bad.subarray(0, at), randomBytes(1), bad.subarray(at)]);
      } else {
        bad[at] = Math.random() < 0.3 ? [0x00, 0x7f, 0x80, 0xff, 0x01][e % 5]! : Math.floor(Math.random() * 256);
      }
    }
    if (succeedsOrProtocolError(() => touchAll(reseal(bad)), `iteration ${i}: ${bad.toString('hex')}`)) passed++;
    else failed++;
  }
  assert.ok(failed > 1000, `most corruptions are detected (${failed} failed, ${passed} decoded)`);
  assert.ok(Date.now() - started < 60_000, 'bounded time');
});

// ---- compressed payloads ----

for (const codec of ['gzip', 'snappy', 'lz4', 'zstd'] as const) {
  const id = COMPRESSION_TYPES.indexOf(codec);

  test(`${codec}: random garbage as the compressed payload is a 'compression' error`, () => {
    for (let i = 0; i < 300; i++) {
      const batch = withPayload(randomBytes(1 + (i % 200)), { count: 3, attributes: id });
      const b = decodeRecordBatch(batch, { pool });
      const err = protocolError(() => b.records(), `${codec} garbage ${i}`);
      assert.ok(['compression', 'invalid-length', 'truncated', 'trailing-bytes', 'varint-too-long'].includes(err.reason), err.message);
      assert.is(
        protocolError(() => b.records()),
        err,
        'the failure is sticky',
      );
      b.release();
    }
  });

  test(`${codec}: output over maxDecompressedBytes is refused; at the limit it passes`, () => {
    const records = Array.from({ length: 40 }, (_, i) => ({ value: Buffer.alloc(10_000, i), timestamp: 0 }));
    const plainSize = encodeRecordBatch(records).length - 61;
    const buf = encodeRecordBatch(records, { compression: codec });
    const err = protocolError(() => decodeRecordBatch(buf, { maxDecompressedBytes: plainSize - 1, pool }).records(), codec);
    assert.is(err.reason, 'compression');
    assert.match(err.message, /exceeds the limit/);
    const b = decodeRecordBatch(buf, { maxDecompressedBytes: plainSize, pool });
    assert.is(b.records().length, 40);
    b.release();
  });

  test(`${codec}: a small payload that expands 64x past the limit stops at the limit`, () => {
    // 64 MiB of zeros packs into well under 1 MiB with every codec. With a 1 MiB limit: gzip and
    // lz4 stop decoding at the limit (into at most 1 MiB of output); snappy and zstd (whose frame
    // carries the content size here) refuse from the declared sizes before decoding anything.
    const zeros = Buffer.alloc(64 * 1024 * 1024);
    const packed = compress(codec, zeros);
    const batch = withPayload(packed, { count: 1, attributes: id });
    const before = process.memoryUsage().arrayBuffers;
    const started = Date.now();
    const err = protocolError(() => decodeRecordBatch(batch, { maxDecompressedBytes: 1024 * 1024, pool }).records(), codec);
    assert.is(err.reason, 'compression');
    assert.ok(Date.now() - started < 5000, 'quick');
    assert.ok(process.memoryUsage().arrayBuffers - before < 16 * 1024 * 1024, 'no large allocation');
  });
}

test('gzip: a damaged trailer, a truncated member', () => {
  const plain = encodeRecordBatch(sample(3)).subarray(61);
  const gz = gzipSync(plain);
  const badCrc = Buffer.from(gz);
  badCrc[badCrc.length - 6]! ^= 0xff;
  for (const payload of [badCrc, gz.subarray(0, gz.length - 3), gz.subarray(0, 10)]) {
    const err = protocolError(() => decodeRecordBatch(withPayload(payload, { count: 3, attributes: 1 })).records());
    assert.is(err.reason, 'compression');
    assert.is(err.offset, 61, 'the offset points at the compressed payload');
    assert.is(err.path, 'records');
  }
});

test('snappy: a copy reaching before the start of the output, a literal past the block', () => {
  // Raw block: declared length 10, then a copy tag (kind 1, len 4, offset 5) with nothing written yet.
  const backRef = Buffer.from([10, 0b000_000_01, 5]);
  // Raw block: declared length 10, a literal of 8 bytes with only 3 present.
  const shortLiteral = Buffer.from([10, (7 << 2) | 0, 1, 2, 3]);
  // Raw block: the tags produce fewer bytes (3) than declared (10): stale bytes must not leak.
  const short = Buffer.from([10, (2 << 2) | 0, 1, 2, 3]);
  for (const payload of [backRef, shortLiteral, short]) {
    const err = protocolError(() => decodeRecordBatch(withPayload(payload, { count: 1, attributes: 2 })).records());
    assert.is(err.reason, 'compression', err.message);
  }
});

test('lz4: wrong magic, block over the maximum, bytes after the frame', () => {
  const plain = encodeRecordBatch(sample(3)).subarray(61);
  const frame = compress('lz4', Buffer.from(plain));
  const badMagic = Buffer.from(frame);
  badMagic[0] = 0x05;
  const hugeBlock = Buffer.from(frame);
  hugeBlock.writeUInt32LE(0x7fffff00, 7); // first block size, far over the 4 MiB maximum
  const trailing = Buffer.concat([frame, Buffer.from([1, 2, 3])]);
  for (const payload of [badMagic, hugeBlock, trailing, frame.subarray(0, frame.length - 4)]) {
    const err = protocolError(() => decodeRecordBatch(withPayload(payload, { count: 3, attributes: 3 })).records());
    assert.is(err.reason, 'compression', err.message);
  }
});

test('zstd: bytes after the frame, a truncated frame', () => {
  const plain = encodeRecordBatch(sample(3)).subarray(61);
  const frame = compress('zstd', Buffer.from(plain));
  for (const payload of [Buffer.concat([frame, Buffer.from([9, 9, 9, 9, 9])]), frame.subarray(0, frame.length - 2)]) {
    const err = protocolError(() => decodeRecordBatch(withPayload(payload, { count: 3, attributes: 4 })).records());
    assert.is(err.reason, 'compression', err.message);
  }
});

test('a corrupt record inside a compressed stream gets its path (offsets are in the decompressed bytes)', () => {
  const records = [...rec(body(0)), ...rec([0, 0, 2, ...zz(-7), ...zz(1), 65, 0])];
  for (const codec of ['gzip', 'snappy', 'lz4', 'zstd'] as const) {
    const payload = compress(codec, Buffer.from(records));
    const err = protocolError(() => decodeRecordBatch(withPayload(payload, { count: 2, attributes: COMPRESSION_TYPES.indexOf(codec) })).records());
    assert.is(err.reason, 'invalid-length');
    assert.is(err.path, 'records/1/key');
    assert.is(err.offset, rec(body(0)).length + 4);
    assert.match(err.message, /offset within the decompressed records/);
  }
});

// ---- unknown codecs, legacy formats, framing ----

test('codecs 5, 6 and 7 are refused when the batch is read', () => {
  const good = encodeRecordBatch(sample(2));
  for (const codec of [5, 6, 7]) {
    const bad = withPayload(good.subarray(61), { count: 2, attributes: codec, from: good });
    const err = protocolError(() => readRecordBatches(bad).next());
    assert.is(err.reason, 'compression');
    assert.match(err.message, new RegExp(`codec ${codec}`));
    assert.is(err.path, 'attributes');
  }
});

/** A legacy message (magic 0 or 1) with an IEEE CRC; the decoder must refuse, never misread it. */
function legacyMessage(magic: 0 | 1, offset: number, value: string): Buffer {
  const v = Buffer.from(value);
  const fields = [magic, 0, ...(magic === 1 ? new Array(8).fill(0) : []), 0xff, 0xff, 0xff, 0xff, ...[0, 0, 0, v.length], ...v];
  const msg = Buffer.alloc(12 + 4 + fields.length);
  msg.writeBigInt64BE(BigInt(offset), 0);
  msg.writeInt32BE(4 + fields.length, 8);
  Buffer.from(fields).copy(msg, 16);
  return msg; // CRC left 0: the magic byte must stop the decoder before any CRC question
}

test('legacy message sets (magic 0 and 1) are refused with the magic named, even with CRC checks off', () => {
  for (const magic of [0, 1] as const) {
    const set = Buffer.concat([legacyMessage(magic, 0, 'hello'), legacyMessage(magic, 1, 'world')]);
    for (const checkCrc of [true, false]) {
      const reader = readRecordBatches(set, { checkCrc });
      const err = protocolError(() => reader.next());
      assert.is(err.reason, 'unsupported-version');
      assert.match(err.message, new RegExp(`legacy message set \\(magic ${magic}\\)`));
      assert.is(err.offset, 16);
      assert.is(
        protocolError(() => reader.next()),
        err,
        'the reader stays failed',
      );
    }
  }
  const after = Buffer.concat([encodeRecordBatch(sample(2)), legacyMessage(1, 2, 'old')]);
  const reader = readRecordBatches(after);
  assert.ok(reader.next(), 'the v2 batch before it reads');
  assert.is(protocolError(() => reader.next()).offset, encodeRecordBatch(sample(2)).length + 16);
});

test('an unknown magic (3, -1) is refused', () => {
  for (const magic of [3, 0xff]) {
    const bad = Buffer.from(encodeRecordBatch(sample(1)));
    bad[16] = magic;
    assert.match(protocolError(() => readRecordBatches(bad).next()).message, /unknown record batch magic/);
  }
});

test('batchLength shorter than a header, or negative, is an error rather than a tail', () => {
  for (const len of [0, 48, -1, -2_000_000_000]) {
    const bad = Buffer.from(encodeRecordBatch(sample(1)));
    bad.writeInt32BE(len, 8);
    const err = protocolError(() => readRecordBatches(bad).next());
    assert.is(err.reason, 'invalid-length');
    assert.is(err.path, 'batchLength');
  }
});

test('a batchLength far past the end is a partial tail (brokers cut at max bytes)', () => {
  const big = Buffer.from(encodeRecordBatch(sample(3)));
  big.writeInt32BE(0x7fffffff, 8);
  const reader = readRecordBatches(big);
  assert.is(reader.next(), null);
  assert.is(reader.truncatedTail, big.length);
  assert.is(reader.batchesRead, 0);
  assert.is(protocolError(() => decodeRecordBatch(big)).reason, 'truncated');
});

test('empty and tiny inputs', () => {
  assert.is(readRecordBatches(Buffer.alloc(0)).next(), null);
  const tiny = readRecordBatches(Buffer.alloc(16));
  assert.is(tiny.next(), null);
  assert.is(tiny.truncatedTail, 16);
});

// ---- records ----

test('recordsCount that cannot fit the bytes fails before anything is allocated from it', () => {
  for (const count of [0x7fffffff, 1_000_000, 2]) {
    const bad = withPayload(rec(body(0)), { count });
    const b = decodeRecordBatch(bad);
    const started = process.hrtime.bigint();
    const err = protocolError(() => b.records());
    assert.ok(process.hrtime.bigint() - started < 50_000_000n, 'fails at once');
    assert.is(err.reason, 'invalid-length', err.message);
    assert.is(err.path, 'recordCount');
    assert.is(protocolError(() => b.cursor().next()).reason, err.reason);
  }
  assert.is(protocolError(() => readRecordBatches(withPayload(rec(body(0)), { count: -1 })).next()).path, 'recordCount');
});

test('the header count of a record that cannot fit is refused before walking', () => {
  const bad = withPayload(rec([0, 0, 0, 1, 1, ...zz(1_000_000), 1, 65]), { count: 1 });
  const err = protocolError(() => decodeRecordBatch(bad).records());
  assert.is(err.reason, 'invalid-length');
  assert.is(err.path, 'records/0/headers');
});

test('the path and offset name the exact field: records/17/headers/2/key', () => {
  const parts: number[] = [];
  for (let i = 0; i < 17; i++) parts.push(...rec(body(i, [['a', 'b']])));
  // Record 17: three headers, the third with key length -2.
  const bad17 = [0, ...zz(17), ...zz(17), ...zz(1), 0x4b, ...zz(1), 0x56, ...zz(3), ...zz(1), 0x78, ...zz(1), 0x31, ...zz(1), 0x79, ...zz(-1)];
  const hdrKeyAt = bad17.length;
  bad17.push(...zz(-2), 0x41, 0x41);
  const startOf17 = 61 + parts.length;
  parts.push(...rec(bad17));
  const batch = withPayload(parts, { count: 18 });
  const err = protocolError(() => decodeRecordBatch(batch).records());
  assert.is(err.path, 'records/17/headers/2/key');
  assert.is(err.reason, 'invalid-length');
  assert.is(err.offset, startOf17 + zz(bad17.length).length + hdrKeyAt);
  assert.match(err.message, /field records\/17\/headers\/2\/key/);
  // The first 17 records were fine: the cursor hands them out, then fails on the 18th.
  const c = decodeRecordBatch(batch).cursor();
  for (let i = 0; i < 17; i++) assert.is(c.next()!.keyString(), `k${i}`);
  assert.is(protocolError(() => c.next()).path, 'records/17/headers/2/key');
});

test('negative lengths other than -1, lengths past the record, varints too long', () => {
  const cases: [number[], string, string][] = [
    [rec([0, 0, 0, ...zz(-2), 1, 0]), 'records/0/key', 'invalid-length'],
    [rec([0, 0, 0, 1, ...zz(-5), 0]), 'records/0/value', 'invalid-length'],
    [rec([0, 0, 0, 1, ...zz(50), 65, 0]), 'records/0/value', 'invalid-length'],
    [rec([0, 0, 0, 1, 1, 2, 2, 65, ...zz(-2)]), 'records/0/headers/0/value', 'invalid-length'],
    [rec([0, 0, 0, 1, 1, 2, ...zz(-1), 1]), 'records/0/headers/0/key', 'invalid-length'],
    [[...zz(1000), 0, 0, 0, 1, 1, 0], 'records/0/length', 'invalid-length'],
    [[...zz(-3), 0, 0, 0, 1, 1, 0], 'records/0/length', 'invalid-length'],
    [[0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0, 0, 0, 0, 0, 0, 0], 'records/0/length', 'varint-too-long'],
    [rec([0, 0, 0, 0x80, 0x80, 0x80, 0x80, 0x10, 1, 0]), 'records/0/key', 'varint-too-long'],
    [rec([0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0, 1, 1, 0]), 'records/0/timestampDelta', 'varint-too-long'],
    [rec([0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02, 0, 1, 1, 0]), 'records/0/timestampDelta', 'varint-too-long'],
    [[...rec([0, 0x80, 0x80]), 0, 0, 0], 'records/0/length', 'invalid-length'], // shorter than any record
    [rec([0, 0, 0, 1, 1, 0, 0x99]), 'records/0/length', 'invalid-length'], // a spare byte inside the record
    [[...zz(6), 0, 0, 0, 1, 0x80, 0x80], 'records/0/value', 'truncated'],
  ];
  for (const [payload, path, reason] of cases) {
    const err = protocolError(() => decodeRecordBatch(withPayload(payload, { count: 1 })).records(), path);
    assert.is(err.path, path, `${Buffer.from(payload).toString('hex')}: ${err.message}`);
    assert.is(err.reason, reason, `${Buffer.from(payload).toString('hex')}: ${err.message}`);
  }
});

test('RecordCursor.skip and skipBefore check the lengths they pass: a bad one is the same error next() gives, the cursor unmoved', () => {
  // Records 0-2 fine, record 3's length runs past the batch; record 1's offsetDelta is 1.
  const parts = [...rec(body(0)), ...rec(body(1)), ...rec(body(2)), ...zz(1000), 0, 0, 0, 1, 1, 0];
  const batch = decodeRecordBatch(withPayload(parts, { count: 4 }));
  const c = batch.cursor();
  assert.is(c.skip(2), 1);
  const err = protocolError(() => c.skip(5), 'records/3/length');
  assert.is(err.reason, 'invalid-length');
  assert.is(err.path, 'records/3/length');
  // A failed batch stays failed, as after next(): the cursor did not move past record 2.
  assert.is(c.index, 2);
  assert.is(protocolError(() => batch.cursor().skipBefore(99)).path, 'records/3/length');
  batch.release();
  // A cursor of a released batch refuses, as next() does.
  const good = decodeRecordBatch(withPayload([...rec(body(0)), ...rec(body(1))], { count: 2 }));
  const held = good.cursor();
  good.release();
  assert.throws(() => held.skip(1), /released/);
  assert.throws(() => held.skipBefore(1), /released/);
});

test('RecordBatch.recordStart checks the lengths it passes (the error next() gives), refuses an index outside the batch and a released batch', () => {
  // Records 0-2 fine, record 3's length runs past the batch.
  const parts = [...rec(body(0)), ...rec(body(1)), ...rec(body(2)), ...zz(1000), 0, 0, 0, 1, 1, 0];
  const batch = decodeRecordBatch(withPayload(parts, { count: 5 }));
  assert.is(batch.recordStart(0), batch.dataStart);
  assert.is(batch.recordStart(3), batch.dataStart + rec(body(0)).length + rec(body(1)).length + rec(body(2)).length);
  const err = protocolError(() => batch.recordStart(4), 'records/3/length');
  assert.is(err.reason, 'invalid-length');
  // The batch stays failed, as after next().
  assert.is(protocolError(() => batch.recordStart(1)).path, 'records/3/length');
  const good = decodeRecordBatch(withPayload([...rec(body(0)), ...rec(body(1))], { count: 2 }));
  assert.throws(
    () => good.recordStart(2),
    (e: unknown) => e instanceof RangeError && /no record 2/.test((e as Error).message),
  );
  assert.throws(() => good.recordStart(-1), RangeError);
  good.release();
  assert.throws(() => good.recordStart(1), /released/);
});

test('two-byte varints (the inline fast path): read exactly, never past the record they are in', () => {
  // Two-byte length, timestampDelta (negative), offsetDelta, key and value lengths.
  const value = Buffer.alloc(100, 0x61);
  const good = [0, ...zz(-200), ...zz(64), ...zz(70), ...Buffer.alloc(70, 0x6b), ...zz(100), ...value, 0x80, 0x00];
  assert.is(zz(good.length).length, 2);
  const r = decodeRecordBatch(withPayload(rec(good), { count: 1 })).records()[0]!;
  assert.is(r.timestampDelta, -200);
  assert.is(r.offsetDelta, 64);
  assert.is(r.key!.length, 70);
  assert.ok(r.value!.equals(value));
  assert.is(r.headers.length, 0, "a two-byte header count of 0 as the record's last two bytes");
  // A two-byte header count cut by the record's end, with a byte under 0x80 right after it (the
  // next record's length): the varint must not take that byte.
  const cut = [...rec([0, 0, 0, 1, 1, 0x80]), ...rec(body(1))];
  const err = protocolError(() => decodeRecordBatch(withPayload(cut, { count: 2 })).records(), 'records/0/headers');
  assert.is(err.reason, 'truncated', err.message);
  // The same at the end of the batch's bytes.
  const last = protocolError(() => decodeRecordBatch(withPayload(rec([0, 0, 0, 1, 1, 0x80]), { count: 1 })).records(), 'records/0/headers');
  assert.is(last.reason, 'truncated', last.message);
});

test('a count of 0 is authoritative: an empty compressed batch is not even decompressed', () => {
  const b = decodeRecordBatch(withPayload(randomBytes(40), { count: 0, attributes: 4 }));
  assert.equal(b.records(), []);
  assert.is(b.cursor().next(), null);
  b.release();
  assert.throws(() => b.records(), /released/);
});

test('bytes after the last record, or fewer records than counted', () => {
  const two = [...rec(body(0)), ...rec(body(1))];
  assert.is(protocolError(() => decodeRecordBatch(withPayload([...two, 0], { count: 2 })).records()).reason, 'trailing-bytes');
  assert.is(protocolError(() => decodeRecordBatch(withPayload(two, { count: 1 })).records()).reason, 'trailing-bytes');
  const c = decodeRecordBatch(withPayload(two, { count: 1 })).cursor();
  assert.ok(c.next());
  assert.is(protocolError(() => c.next()).reason, 'trailing-bytes');
  const three = protocolError(() => decodeRecordBatch(withPayload(two, { count: 3 })).records());
  assert.is(three.path, 'records/2/length');
  assert.is(three.reason, 'truncated');
});

test('a control batch whose key is too short, or whose marker value is missing', () => {
  const shortKey = encodeRecordBatch([{ key: Buffer.from([0, 0, 0]), value: Buffer.alloc(6) }], { isControl: true, isTransactional: true });
  assert.is(protocolError(() => decodeRecordBatch(shortKey).controlRecord).path, 'records/0/key');
  const noValue = encodeRecordBatch([{ key: Buffer.from([0, 0, 0, 1]), value: null }], { isControl: true, isTransactional: true });
  assert.is(protocolError(() => decodeRecordBatch(noValue).controlRecord).path, 'records/0/value');
});

test('CRC mismatch is reported with both values; checkCrc: false reads the batch anyway', () => {
  const bad = Buffer.from(encodeRecordBatch(sample(3)));
  bad[bad.length - 2]! ^= 0x20; // inside a value
  const err = protocolError(() => readRecordBatches(bad).next());
  assert.is(err.reason, 'crc-mismatch');
  assert.match(err.message, /CRC-32C is 0x[0-9a-f]{8}, the bytes give 0x[0-9a-f]{8}/);
  const b = readRecordBatches(bad, { checkCrc: false }).next()!;
  assert.is(b.records().length, 3);
});

test.run();
