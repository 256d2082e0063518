// Encode -> decode round trips for every codec, with the shapes records take in practice: null
// and empty keys and values, tombstones, headers, large and many records; control batches,
// transactional and idempotent producers, LogAppendTime, delete horizons, several batches in one
// fetch and a partial tail.
import { randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { snappyCompressRaw } from '../../src/compression/index.js';
import {
  BufferPool,
  COMPRESSION_TYPES,
  ControlRecordType,
  crc32c,
  decodeRecordBatch,
  encodeControlBatch,
  encodeRecordBatch,
  readRecordBatches,
  RecordBatchReader,
  type CompressionType,
  type RecordInput,
} from '../../src/records/index.js';

const T0 = 1_700_000_000_000;
const pool = new BufferPool();

/** A varied set of records: every nullability combination, headers, unicode, an empty value. */
function variedRecords(n: number): RecordInput[] {
  const out: RecordInput[] = [];
  for (let i = 0; i < n; i++) {
    out.push({
      key: i % 5 === 0 ? null : i % 5 === 1 ? '' : `key-${i}`,
      value: i % 7 === 0 ? null : i % 7 === 1 ? Buffer.alloc(0) : `value ${i} ${'ü'.repeat(i % 13)}`,
      headers:
        i % 3 === 0
          ? []
          : [
              { key: 'trace-id', value: `t${i}` },
              { key: 'nullable', value: null },
              { key: 'ключ', value: Buffer.from([i & 0xff, 0, 255]) },
            ],
      timestamp: T0 + ((i * 37) % 1000) - 500,
    });
  }
  return out;
}

function bytesOf(v: RecordInput['value']): Buffer | null {
  if (v === null || v === undefined) return null;
  return typeof v === 'string' ? Buffer.from(v) : Buffer.from(v);
}

/** Every record of `buf` (one batch) matches `input`. */
function checkBatch(buf: Buffer, input: RecordInput[], baseOffset: bigint, codec: CompressionType): void {
  const reader = readRecordBatches(buf, { pool });
  const batch = reader.next()!;
  assert.ok(batch, 'one batch');
  assert.is(reader.next(), null);
  assert.is(reader.truncatedTail, 0);
  assert.is(batch.compression, codec);
  assert.is(batch.recordCount, input.length);
  assert.is(batch.baseOffset, baseOffset);
  const records = batch.records();
  assert.is(records.length, input.length);
  let maxTs = -Infinity;
  for (let i = 0; i < input.length; i++) {
    const want = input[i]!;
    const r = records[i]!;
    const ctx = `${codec} record ${i}`;
    assert.is(r.offset, baseOffset + BigInt(want.offsetDelta ?? i), ctx);
    assert.equal(r.key, bytesOf(want.key), ctx);
    assert.equal(r.value, bytesOf(want.value), ctx);
    assert.is(r.valueString(), want.value == null ? null : bytesOf(want.value)!.toString(), ctx);
    assert.is(r.timestamp, Number(want.timestamp), ctx);
    maxTs = Math.max(maxTs, Number(want.timestamp));
    const headers = r.headers;
    assert.is(headers.length, (want.headers ?? []).length, ctx);
    (want.headers ?? []).forEach((h, j) => {
      assert.is(headers[j]!.key, h.key, ctx);
      assert.equal(headers[j]!.value, bytesOf(h.value), ctx);
    });
  }
  if (input.length > 0) assert.is(batch.maxTimestamp, maxTs);
  // The cursor sees the same records as the array.
  const cursor = batch.cursor();
  for (let i = 0; i < input.length; i++) {
    const r = cursor.next()!;
    assert.is(r.offsetDelta, records[i]!.offsetDelta);
    assert.is(r.valueLength, records[i]!.valueLength);
    assert.is(r.valueString(), records[i]!.valueString());
  }
  assert.is(cursor.next(), null);
  // skip(k) passes exactly the records k next() calls pass, and names the last one's offsetDelta;
  // skipBefore(d) stops at the first record whose offsetDelta is at least d.
  for (const k of new Set([0, 1, 2, input.length >> 1, input.length - 1, input.length, input.length + 5])) {
    if (k < 0) continue;
    const walked = batch.cursor();
    for (let i = 0; i < Math.min(k, input.length); i++) walked.next();
    const skipped = batch.cursor();
    assert.is(skipped.skip(k), k === 0 || input.length === 0 ? -1 : records[Math.min(k, input.length) - 1]!.offsetDelta, `${codec} skip(${k})`);
    assert.is(skipped.index, walked.index, `${codec} skip(${k}): index`);
    assert.is(skipped.position, walked.position, `${codec} skip(${k}): position`);
    assert.is(skipped.next()?.offsetDelta, walked.next()?.offsetDelta, `${codec} skip(${k}): the record after`);
    if (k < input.length) {
      const before = batch.cursor();
      before.skipBefore(records[k]!.offsetDelta);
      assert.is(before.index, k, `${codec} skipBefore(${records[k]!.offsetDelta})`);
    }
  }
  const starts: number[] = [];
  const walk = batch.cursor();
  for (let i = 0; i < input.length; i++) {
    starts.push(walk.position);
    walk.next();
  }
  for (const k of [input.length - 1, 0, input.length >> 1, 1, input.length - 1]) {
    if (k < 0 || k >= input.length) continue;
    assert.is(batch.recordStart(k), starts[k], `${codec} recordStart(${k}) after others`);
  }
  if (input.length > 3) {
    // A start noted by a reader is where the next recordStart walks from: a wrong note would show.
    const fresh = decodeRecordBatch(buf);
    fresh.noteRecordStart(2, starts[2]!);
    assert.is(fresh.recordStart(3), starts[3], `${codec} recordStart(3) from the noted start of record 2`);
    fresh.noteRecordStart(1, starts[1]!); // behind what is known: kept as is
    assert.is(fresh.recordStart(3), starts[3]);
    fresh.release();
  }
  if (input.length > 6) {
    // Asking for an earlier record walks from the first one and keeps the later start known. Shown
    // with a noted start that is off by one record: walking on from it is the only way to get the
    // start of record 6 when asking for record 5.
    const later = decodeRecordBatch(buf);
    later.noteRecordStart(4, starts[5]!);
    assert.is(later.recordStart(1), starts[1], `${codec} an earlier record, from the first`);
    assert.is(later.recordStart(5), starts[6], `${codec} the later start was kept`);
    later.release();
  }
  batch.release();
}

for (const codec of COMPRESSION_TYPES) {
  test(`${codec}: varied records round-trip`, () => {
    const input = variedRecords(300);
    checkBatch(encodeRecordBatch(input, { compression: codec, baseOffset: 1234n }), input, 1234n, codec);
  });

  test(`${codec}: one tombstone with a null key`, () => {
    const input = [{ key: null, value: null, timestamp: T0 }];
    checkBatch(encodeRecordBatch(input, { compression: codec }), input, 0n, codec);
  });

  test(`${codec}: large incompressible records (1 MiB and 300 KiB values)`, () => {
    const input = [
      { key: 'big', value: randomBytes(1024 * 1024), timestamp: T0 },
      { key: randomBytes(5000), value: randomBytes(300 * 1024), timestamp: T0 + 1 },
      { key: 'small', value: 'x', timestamp: T0 + 2 },
    ];
    checkBatch(encodeRecordBatch(input, { compression: codec, baseOffset: 2n ** 40n }), input, 2n ** 40n, codec);
  });

  test(`${codec}: many records (20,000) with gaps in offsets`, () => {
    const input: RecordInput[] = [];
    for (let i = 0; i < 20_000; i++) input.push({ value: `v${i}`, offsetDelta: i * 2, timestamp: T0 + i });
    const buf = encodeRecordBatch(input, { compression: codec });
    checkBatch(buf, input, 0n, codec);
    assert.is(decodeRecordBatch(buf).lastOffsetDelta, 39_998);
  });

  test(`${codec}: idempotent producer fields and sequences`, () => {
    const buf = encodeRecordBatch([{ value: 'a' }, { value: 'b' }, { value: 'c' }], {
      compression: codec,
      producerId: 9_007_199_254_740_993n, // above 2^53: bigint all the way
      producerEpoch: 32767,
      baseSequence: 2 ** 31 - 2,
      partitionLeaderEpoch: 77,
    });
    const b = decodeRecordBatch(buf, { pool });
    assert.is(b.producerId, 9_007_199_254_740_993n);
    assert.is(b.producerEpoch, 32767);
    assert.is(b.baseSequence, 2 ** 31 - 2);
    assert.is(b.partitionLeaderEpoch, 77);
    // Sequences wrap from int32 max to 0, as the Java producer's do.
    assert.equal(
      b.records().map((r) => r.sequence),
      [2 ** 31 - 2, 2 ** 31 - 1, 0],
    );
    b.release();
  });

  test(`${codec}: transactional data batch`, () => {
    const buf = encodeRecordBatch([{ value: 'in a transaction' }], { compression: codec, isTransactional: true, producerId: 5n, producerEpoch: 0 });
    const b = decodeRecordBatch(buf, { pool });
    assert.is(b.isTransactional, true);
    assert.is(b.isControl, false);
    assert.is(b.controlRecord, null);
    assert.is(b.controlType, -1);
    assert.is(b.records()[0]!.valueString(), 'in a transaction');
    assert.is(b.records()[0]!.isControl, false);
    b.release();
  });
}

test('control batches: COMMIT and ABORT markers', () => {
  for (const [type, id] of [
    ['COMMIT', ControlRecordType.COMMIT],
    ['ABORT', ControlRecordType.ABORT],
  ] as const) {
    const buf = encodeControlBatch({ type, coordinatorEpoch: 17, producerId: 4000n, producerEpoch: 3, baseOffset: 99n, timestamp: T0 });
    const b = decodeRecordBatch(buf);
    assert.is(b.isControl, true);
    assert.is(b.isTransactional, true);
    assert.is(b.producerId, 4000n);
    assert.is(b.producerEpoch, 3);
    assert.is(b.recordCount, 1);
    assert.is(b.lastOffset, 99n);
    assert.equal(b.controlRecord, { version: 0, type: id, coordinatorEpoch: 17, markerVersion: 0 });
    assert.is(b.controlType, id);
    const [r] = b.records();
    assert.is(r!.isControl, true);
    assert.equal([...r!.key!], [0, 0, 0, id]);
    assert.equal([...r!.value!], [0, 0, 0, 0, 0, 17]);
  }
});

test('control batches: an unknown (KRaft) control type is passed through, its value not parsed', () => {
  const b = decodeRecordBatch(encodeControlBatch({ type: ControlRecordType.LEADER_CHANGE, timestamp: T0 }));
  assert.equal(b.controlRecord, { version: 0, type: 2, coordinatorEpoch: -1, markerVersion: -1 });
});

test('control batches: a marker written by a newer version with extra value bytes still reads', () => {
  const b = decodeRecordBatch(encodeRecordBatch([{ key: Buffer.from([0, 1, 0, 1]), value: Buffer.from([0, 1, 0, 0, 0, 9, 1, 2, 3]) }], { isControl: true, isTransactional: true }));
  assert.equal(b.controlRecord, { version: 1, type: 1, coordinatorEpoch: 9, markerVersion: 1 });
});

test('control batches: an empty control batch (compacted) has no control record', () => {
  const b = decodeRecordBatch(encodeRecordBatch([], { isControl: true, isTransactional: true, lastOffsetDelta: 0, baseOffset: 10n }));
  assert.is(b.controlRecord, null);
  assert.equal(b.records(), []);
});

test('LogAppendTime: every record takes the batch maxTimestamp', () => {
  const buf = encodeRecordBatch(
    [
      { value: 'a', timestamp: T0 },
      { value: 'b', timestamp: T0 + 10 },
    ],
    { timestampType: 'LogAppendTime', maxTimestamp: T0 + 5000, compression: 'lz4' },
  );
  const b = decodeRecordBatch(buf);
  assert.is(b.timestampType, 'LogAppendTime');
  assert.equal(
    b.records().map((r) => r.timestamp),
    [T0 + 5000, T0 + 5000],
  );
  assert.equal(
    b.records().map((r) => r.timestampBigInt),
    [BigInt(T0 + 5000), BigInt(T0 + 5000)],
  );
});

test('delete horizon: the bit is exposed and timestamps stay base + delta', () => {
  const buf = encodeRecordBatch(
    [
      { value: 'a', timestamp: T0 },
      { value: 'b', timestamp: T0 + 7 },
    ],
    { deleteHorizonMs: T0 - 1000 },
  );
  const b = decodeRecordBatch(buf);
  assert.is(b.hasDeleteHorizon, true);
  assert.is(b.deleteHorizonMs, T0 - 1000);
  assert.equal(
    b.records().map((r) => r.timestamp),
    [T0, T0 + 7],
  );
});

test('timestamps beyond the safe integer range: the number getters refuse, the bigints are exact', () => {
  const huge = 2n ** 60n + 1n;
  const b = decodeRecordBatch(encodeRecordBatch([{ value: 'x', timestamp: huge }]));
  assert.is(b.baseTimestampBigInt, huge);
  assert.throws(() => b.baseTimestamp, /safe integer/);
  assert.throws(() => b.records()[0]!.timestamp, /safe integer/);
  assert.is(b.records()[0]!.timestampBigInt, huge);
});

test('int64 header fields beyond the safe integer range are exact, and startsAtOrAfter compares them exactly', () => {
  const base = 2n ** 62n + 3n;
  const pid = 2n ** 60n + 5n;
  const b = decodeRecordBatch(
    encodeRecordBatch(
      [
        { value: 'x', timestamp: 2n ** 55n + 1n },
        { value: 'y', timestamp: 2n ** 55n + 9n },
      ],
      { baseOffset: base, producerId: pid, producerEpoch: 2, isTransactional: true },
    ),
  );
  assert.ok(Number.isNaN(b.baseOffsetNumber));
  assert.is(b.baseOffset, base);
  assert.is(b.lastOffset, base + 1n);
  assert.is(b.nextOffset, base + 2n);
  assert.is(b.producerId, pid);
  assert.is(b.baseTimestampBigInt, 2n ** 55n + 1n);
  assert.is(b.maxTimestampBigInt, 2n ** 55n + 9n);
  assert.is(b.records()[1]!.offset, base + 1n);
  assert.ok(b.startsAtOrAfter(base));
  assert.ok(b.startsAtOrAfter(base - 1n));
  assert.not.ok(b.startsAtOrAfter(base + 1n));
  // Safe ones: against bigints on both sides of 2^53 (a Number and a BigInt compare exactly).
  const small = decodeRecordBatch(encodeRecordBatch([{ value: 'z' }], { baseOffset: 2n ** 53n - 1n }));
  assert.ok(small.startsAtOrAfter(2n ** 53n - 1n));
  assert.not.ok(small.startsAtOrAfter(2n ** 53n));
  assert.ok(small.startsAtOrAfter(0n));
  assert.not.ok(small.startsAtOrAfter(2n ** 63n - 1n));
});

test('every header field reads back as written (the flags from attributes, the CRC unsigned)', () => {
  for (const [compression, isTransactional] of [
    ['none', false],
    ['lz4', true],
    ['gzip', false],
    ['zstd', true],
    ['snappy', false],
  ] as const) {
    const raw = encodeRecordBatch(
      [
        { value: 'a', timestamp: 1_700_000_000_000 },
        { value: 'b', timestamp: 1_700_000_000_500 },
      ],
      {
        baseOffset: 77n,
        compression,
        isTransactional,
        producerId: isTransactional ? 9n : -1n,
        producerEpoch: isTransactional ? 4 : -1,
        partitionLeaderEpoch: 6,
        baseSequence: isTransactional ? 11 : -1,
      },
    );
    const b = decodeRecordBatch(raw);
    assert.is(b.compression, compression);
    assert.is(b.isTransactional, isTransactional);
    assert.is(b.isControl, false);
    assert.is(b.hasDeleteHorizon, false);
    assert.is(b.timestampType, 'CreateTime');
    assert.is(b.crc, raw.readUInt32BE(17));
    assert.is(b.batchLength, raw.readInt32BE(8));
    assert.is(b.sizeInBytes, raw.length);
    assert.is(b.magic, 2);
    assert.is(b.partitionLeaderEpoch, 6);
    assert.is(b.baseOffset, 77n);
    assert.is(b.producerId, isTransactional ? 9n : -1n);
    assert.is(b.producerEpoch, isTransactional ? 4 : -1);
    assert.is(b.baseSequence, isTransactional ? 11 : -1);
    assert.is(b.baseTimestampBigInt, 1_700_000_000_000n);
    assert.is(b.maxTimestampBigInt, 1_700_000_000_500n);
  }
  const control = decodeRecordBatch(encodeControlBatch({ type: 'COMMIT', baseOffset: 40, producerId: 7n, producerEpoch: 1 }));
  assert.ok(control.isControl);
  assert.ok(control.isTransactional);
});

test('an empty batch (compaction) moves the position past lastOffset', () => {
  const b = decodeRecordBatch(encodeRecordBatch([], { baseOffset: 500n, lastOffsetDelta: 9 }));
  assert.is(b.recordCount, 0);
  assert.equal(b.records(), []);
  assert.is(b.baseTimestamp, -1);
  assert.is(b.nextOffset, 510n);
  assert.is(b.cursor().next(), null);
});

test('several batches of every codec in one fetch, then a partial tail', () => {
  const parts: Buffer[] = [];
  let offset = 0n;
  for (const codec of COMPRESSION_TYPES) {
    parts.push(encodeRecordBatch(variedRecords(50), { compression: codec, baseOffset: offset }));
    offset += 50n;
  }
  const whole = Buffer.concat(parts);
  const next = encodeRecordBatch(variedRecords(10), { baseOffset: offset });
  for (const cut of [0, 1, 16, 17, 60, 61, next.length - 1]) {
    const fetch = Buffer.concat([whole, next.subarray(0, cut)]);
    const reader = readRecordBatches(fetch, { pool });
    const offsets: bigint[] = [];
    for (const batch of reader) {
      for (const r of batch.records()) offsets.push(r.offset);
      batch.release();
    }
    assert.is(reader.batchesRead, 5);
    assert.is(reader.truncatedTail, cut);
    assert.is(reader.done, true);
    assert.equal(
      offsets,
      Array.from({ length: 250 }, (_, i) => BigInt(i)),
    );
  }
});

test('a reader over a range of a larger buffer (a fetch frame) reads only that range', () => {
  const batch = encodeRecordBatch(variedRecords(5));
  const frame = Buffer.concat([Buffer.from('prefix'), batch, Buffer.from('suffix-garbage')]);
  const reader = new RecordBatchReader(frame, undefined, 6, 6 + batch.length);
  const b = reader.next()!;
  assert.is(b.byteOffset, 6);
  assert.is(b.records().length, 5);
  assert.equal(b.raw, batch);
  assert.is(reader.next(), null);
  assert.is(reader.truncatedTail, 0);
});

test('raw (unframed) snappy from a non-Java producer decodes like xerial-framed snappy', () => {
  const input = variedRecords(40);
  const plain = encodeRecordBatch(input);
  const raw = snappyCompressRaw(plain.subarray(61));
  const batch = Buffer.concat([plain.subarray(0, 61), raw]);
  batch.writeInt32BE(batch.length - 12, 8);
  batch.writeInt16BE(2, 21); // codec snappy
  batch.writeUInt32BE(crc32c(batch, 21), 17);
  checkBatch(batch, input, 0n, 'snappy');
});

test('record views point into the fetch bytes (uncompressed) and into one pooled buffer (compressed)', () => {
  const input = variedRecords(20);
  const plain = decodeRecordBatch(encodeRecordBatch(input));
  const fetchBytes = plain.raw;
  for (const r of plain.records()) if (r.value) assert.is(r.value.buffer, fetchBytes.buffer);
  const zstd = decodeRecordBatch(encodeRecordBatch(input, { compression: 'zstd' }), { pool });
  const buffers = new Set(zstd.records().flatMap((r) => (r.value ? [r.value.buffer] : [])));
  assert.is(buffers.size, 1);
  assert.is.not([...buffers][0], fetchBytes.buffer);
  zstd.release();
});

test('the views records hand out (key, value, header values) are Buffers in every way code can tell, over the batch bytes', () => {
  for (const compression of ['none', 'lz4'] as const) {
    const batch = decodeRecordBatch(encodeRecordBatch(variedRecords(20), { compression }), { pool });
    const r = batch.records()[2]!;
    const views = [r.key!, r.value!, r.headers[0]!.value!];
    for (const v of views) {
      assert.ok(Buffer.isBuffer(v) && v instanceof Buffer && v instanceof Uint8Array, compression);
      assert.is(v.constructor, Buffer, 'the constructor is Buffer, as for the views Node makes');
      assert.match(inspect(v), /^<Buffer /);
      assert.is(JSON.stringify(v), JSON.stringify(Buffer.from(v)));
      assert.ok(v.subarray(1).equals(Buffer.from(v).subarray(1)));
    }
    assert.is(r.key!.toString(), 'key-2');
    assert.is(r.value!.toString(), r.valueString());
    assert.is(r.headers[0]!.value!.toString(), 't2');
    // Views, not copies: a byte written through one is in the batch's data.
    const at = r.valueOffset;
    r.value![0] = 0x5a;
    assert.is(batch.data![at], 0x5a);
    batch.release();
    assert.throws(() => r.value, /released/);
  }
});

test.run();
