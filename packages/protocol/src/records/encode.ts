import { KafkaProtocolError } from '../errors.js';
import { compress, compressionCodecId, type CompressionType } from '../compression/index.js';
import { sizeOfVarint, toInt64, Writer } from '../primitives/writer.js';
import { ControlRecordType } from './control.js';
import { crc32c } from './crc32c.js';
import type { TimestampType } from './record-batch.js';
import { sizeOfVarlong } from './varint.js';

/**
 * Record batch encoding (magic v2): for tests, fixtures and the Produce path of tools. Not a hot
 * path: inputs are normalised to Buffers and bigints first, every record's size is computed, and
 * the batch is then written in one pass with its lengths and CRC-32C backfilled.
 */

export interface RecordHeaderInput {
  key: string;
  value?: Uint8Array | string | null;
}

export interface RecordInput {
  key?: Uint8Array | string | null;
  value?: Uint8Array | string | null;
  headers?: readonly RecordHeaderInput[];
  /** ms since the epoch; default: the batch's `now`. */
  timestamp?: number | bigint;
  /** Default: the record's index in the batch. */
  offsetDelta?: number;
  /** Record attributes byte (unused by Kafka, 0). */
  attributes?: number;
}

export interface RecordBatchEncodeOptions {
  baseOffset?: bigint | number;
  /** Default -1 (unknown; the broker sets it). */
  partitionLeaderEpoch?: number;
  compression?: CompressionType | number;
  /** Codec level (gzip 1-9, zstd 1-22); the codec default otherwise. */
  compressionLevel?: number;
  timestampType?: TimestampType;
  isTransactional?: boolean;
  isControl?: boolean;
  /** Sets the delete-horizon bit and makes this the baseTimestamp (what the log cleaner writes). */
  deleteHorizonMs?: number | bigint;
  /** Default -1 (not idempotent). */
  producerId?: bigint | number;
  producerEpoch?: number;
  baseSequence?: number;
  /** Default: the first record's timestamp, -1 for an empty batch. */
  baseTimestamp?: number | bigint;
  /** Default: the largest record timestamp, -1 for an empty batch (set it for LogAppendTime). */
  maxTimestamp?: number | bigint;
  /** Default: the largest offsetDelta (0 for an empty batch). Set it to write compaction's gaps. */
  lastOffsetDelta?: number;
  /** Timestamp of records that carry none (default Date.now()). */
  now?: number | bigint;
}

function toBytes(v: Uint8Array | string | null | undefined): Uint8Array | null {
  if (v === null || v === undefined) return null;
  return typeof v === 'string' ? Buffer.from(v, 'utf8') : v;
}

function int(v: number | undefined, fallback: number, name: string, min: number, max: number): number {
  const n = v ?? fallback;
  if (!Number.isInteger(n) || n < min || n > max) throw new KafkaProtocolError(`${name} ${n} is out of range`, { reason: 'invalid-value', path: name });
  return n;
}

interface PreparedRecord {
  attributes: number;
  timestampDelta: bigint;
  offsetDelta: number;
  key: Uint8Array | null;
  value: Uint8Array | null;
  headers: { key: Uint8Array; value: Uint8Array | null }[];
  bodySize: number;
}

function bytesSize(b: Uint8Array | null): number {
  return b === null ? 1 : sizeOfVarint(b.length) + b.length;
}

/** Appends a record batch to the writer's current message. */
export function writeRecordBatch(w: Writer, records: readonly RecordInput[], options: RecordBatchEncodeOptions = {}): void {
  const codec = compressionCodecId(options.compression ?? 'none');
  const now = toInt64(options.now ?? Date.now());
  const n = records.length;

  const timestamps: bigint[] = new Array(n);
  let maxTs = -1n;
  for (let i = 0; i < n; i++) {
    const t = toInt64(records[i]!.timestamp ?? now);
    timestamps[i] = t;
    if (i === 0 || t > maxTs) maxTs = t;
  }
  const hasDeleteHorizon = options.deleteHorizonMs !== undefined;
  const baseTimestamp = toInt64(options.deleteHorizonMs ?? options.baseTimestamp ?? (n > 0 ? timestamps[0]! : -1n));
  const maxTimestamp = toInt64(options.maxTimestamp ?? (n > 0 ? maxTs : -1n));

  const prepared: PreparedRecord[] = new Array(n);
  let lastOffsetDelta = 0;
  let recordsSize = 0;
  for (let i = 0; i < n; i++) {
    const r = records[i]!;
    const offsetDelta = int(r.offsetDelta, i, 'offsetDelta', 0, 0x7fffffff);
    if (offsetDelta > lastOffsetDelta) lastOffsetDelta = offsetDelta;
    const key = toBytes(r.key);
    const value = toBytes(r.value);
    const headers = (r.headers ?? []).map((h) => ({ key: Buffer.from(h.key, 'utf8'), value: toBytes(h.value) }));
    const timestampDelta = timestamps[i]! - baseTimestamp;
    let bodySize = 1 + sizeOfVarlong(timestampDelta) + sizeOfVarint(offsetDelta) + bytesSize(key) + bytesSize(value) + sizeOfVarint(headers.length);
    for (const h of headers) bodySize += bytesSize(h.key) + bytesSize(h.value);
    prepared[i] = { attributes: r.attributes ?? 0, timestampDelta, offsetDelta, key, value, headers, bodySize };
    recordsSize += sizeOfVarint(bodySize) + bodySize;
  }
  if (recordsSize > 0x7fffffff - 61) throw new KafkaProtocolError(`records of ${recordsSize} bytes do not fit one batch`, { reason: 'invalid-length' });

  const attributes = codec | (options.timestampType === 'LogAppendTime' ? 0x08 : 0) | (options.isTransactional ? 0x10 : 0) | (options.isControl ? 0x20 : 0) | (hasDeleteHorizon ? 0x40 : 0);

  const start = w.length;
  w.writeInt64(options.baseOffset ?? 0n);
  const batchLengthAt = w.reserve(4);
  w.writeInt32(int(options.partitionLeaderEpoch, -1, 'partitionLeaderEpoch', -0x80000000, 0x7fffffff));
  w.writeInt8(2);
  const crcAt = w.reserve(4);
  w.writeInt16(attributes);
  w.writeInt32(int(options.lastOffsetDelta, lastOffsetDelta, 'lastOffsetDelta', -0x80000000, 0x7fffffff));
  w.writeInt64(baseTimestamp);
  w.writeInt64(maxTimestamp);
  w.writeInt64(options.producerId ?? -1n);
  w.writeInt16(int(options.producerEpoch, -1, 'producerEpoch', -0x8000, 0x7fff));
  w.writeInt32(int(options.baseSequence, -1, 'baseSequence', -0x80000000, 0x7fffffff));
  w.writeInt32(n);

  if (codec === 0) {
    writeRecords(w, prepared);
  } else {
    const plain = new Writer(recordsSize + 256);
    writeRecords(plain, prepared);
    w.writeRaw(compress(codec, plain.finish(), options.compressionLevel));
  }

  const end = w.length;
  w.backfillInt32(batchLengthAt, end - start - 12);
  w.backfillUInt32(crcAt, crc32c(w.written(start + 21, end)));
}

function writeRecords(w: Writer, records: readonly PreparedRecord[]): void {
  for (const r of records) {
    w.writeVarint(r.bodySize);
    w.writeInt8(r.attributes);
    w.writeVarlong(r.timestampDelta);
    w.writeVarint(r.offsetDelta);
    writeVarBytes(w, r.key);
    writeVarBytes(w, r.value);
    w.writeVarint(r.headers.length);
    for (const h of r.headers) {
      writeVarBytes(w, h.key);
      writeVarBytes(w, h.value);
    }
  }
}

function writeVarBytes(w: Writer, b: Uint8Array | null): void {
  if (b === null) {
    w.writeVarint(-1);
  } else {
    w.writeVarint(b.length);
    w.writeRaw(b);
  }
}

/** A whole record batch as its own Buffer. */
export function encodeRecordBatch(records: readonly RecordInput[], options: RecordBatchEncodeOptions = {}): Buffer {
  let estimate = 61 + 256;
  for (const r of records) {
    estimate += 32 + byteLength(r.key) + byteLength(r.value);
    if (r.headers) for (const h of r.headers) estimate += 10 + h.key.length * 3 + byteLength(h.value);
  }
  const w = new Writer(estimate);
  try {
    writeRecordBatch(w, records, options);
  } catch (err) {
    w.abandon();
    throw err;
  }
  return w.finish();
}

function byteLength(v: Uint8Array | string | null | undefined): number {
  if (v === null || v === undefined) return 0;
  return typeof v === 'string' ? v.length * 3 : v.length;
}

export interface ControlBatchOptions extends Omit<RecordBatchEncodeOptions, 'isControl' | 'isTransactional' | 'compression' | 'compressionLevel' | 'lastOffsetDelta'> {
  /** ControlRecordType, or its name for the two transaction markers. */
  type: number | 'ABORT' | 'COMMIT';
  /** For COMMIT and ABORT markers. Default 0. */
  coordinatorEpoch?: number;
  timestamp?: number | bigint;
}

/**
 * A control batch holding one transaction marker (or another control type with a null value), as
 * the transaction coordinator has the leader write it. Transactional and control bits set.
 */
export function encodeControlBatch(options: ControlBatchOptions): Buffer {
  const type = options.type === 'ABORT' ? ControlRecordType.ABORT : options.type === 'COMMIT' ? ControlRecordType.COMMIT : options.type;
  const key = Buffer.allocUnsafe(4);
  key.writeInt16BE(0, 0);
  key.writeInt16BE(type, 2);
  let value: Buffer | null = null;
  if (type === ControlRecordType.ABORT || type === ControlRecordType.COMMIT) {
    value = Buffer.allocUnsafe(6);
    value.writeInt16BE(0, 0);
    value.writeInt32BE(options.coordinatorEpoch ?? 0, 2);
  }
  const { type: _t, coordinatorEpoch: _c, timestamp, ...batch } = options;
  return encodeRecordBatch([{ key, value, timestamp }], { ...batch, isControl: true, isTransactional: true });
}
