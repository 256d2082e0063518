import { KafkaProtocolError } from '../errors.js';
import type { RecordBatch } from './record-batch.js';

/**
 * One record of a decoded batch, as a view: numbers locating its parts in the batch's bytes, which
 * it does not own. (Named RecordView, not Record, so that it neither shadows TypeScript's built-in
 * Record<K, V> where it is imported nor hides that it is only valid while its batch is.)
 *
 * Why an object of numbers rather than decoded fields: a consumer hands out millions of records a
 * second and most applications read only the value (often only as a string). So decoding a record
 * stores where its parts are (plain integers, no Buffers, no strings, no bigints) and the getters
 * build the Buffer views, header arrays and bigint offsets only when asked. The record object and
 * its slot in the batch's array are the whole per-record allocation. All fields are set by the
 * decoder before the record is handed out and the class never adds properties later, so every
 * RecordView shares one hidden class and property reads stay monomorphic in the consumer's loop.
 *
 * Lifetime: key, value and header values are views into the batch's bytes (the fetch response
 * frame, or the batch's decompression buffer). They are valid until the batch is released, see the
 * ownership rule in pool/buffer-pool.ts. After release the getters that would read those bytes
 * throw RecordReleasedError instead of returning whatever the buffer holds by then; a Buffer taken
 * before release is not protected: copy it (Buffer.from(record.value)) to keep it longer. (The
 * getters throw after release even for a null key or value, so a use-after-release bug shows up
 * on the first record rather than on the first non-null one.)
 *
 * Getters that allocate (key, value, headers, offset, timestampBigInt) build a new object on each
 * call: keep the result in a variable rather than calling them twice.
 */
export class RecordView {
  /** The batch this record belongs to (its base offset, timestamps, producer, bytes). */
  batch: RecordBatch;
  /** Where the record (its length varint) starts in the batch's decoded bytes. */
  position = 0;
  /** Record attributes byte; unused by Kafka so far (0). */
  attributes = 0;
  /**
   * timestamp - batch.baseTimestamp, in ms. NaN when the delta lies outside the safe integer range
   * (only a hostile or absurd batch does that): `timestamp` then throws and `timestampBigInt` is exact.
   */
  timestampDelta = 0;
  /** offset - batch.baseOffset. */
  offsetDelta = 0;
  /** Position of the key bytes in the batch's decoded bytes; -1 for a null key. */
  keyOffset = -1;
  /** Key length in bytes, -1 for a null key. */
  keyLength = -1;
  /** Position of the value bytes; -1 for a null value. */
  valueOffset = -1;
  /** Value length in bytes, -1 for a null value (a tombstone). */
  valueLength = -1;
  /** Position of the first header. */
  headersOffset = 0;
  headerCount = 0;

  constructor(batch: RecordBatch) {
    this.batch = batch;
  }

  /** The record's offset: baseOffset + offsetDelta. A new bigint on each call: see offsetNumber. */
  get offset(): bigint {
    return this.batch.baseOffset + BigInt(this.offsetDelta);
  }

  /**
   * The offset as a number, without allocating a bigint: exact up to Number.MAX_SAFE_INTEGER (2^53,
   * far past any real log); past it a KafkaProtocolError (read `offset`).
   */
  get offsetNumber(): number {
    const o = this.batch.baseOffsetNumber + this.offsetDelta;
    if (o <= Number.MAX_SAFE_INTEGER) return o;
    throw new KafkaProtocolError(`record offset ${this.offset} is outside the safe integer range; read offset`, { reason: 'invalid-value' });
  }

  /**
   * The bytes keyOffset, valueOffset and headersOffset point into (the fetch response, or the
   * batch's decompression buffer): for reading a record without making a Buffer view of it, e.g.
   * `r.data.toString('utf8', r.valueOffset, r.valueOffset + r.valueLength)`. Valid, like every
   * part of the record, until the batch is released; RecordReleasedError after.
   */
  get data(): Buffer {
    return this.bytes();
  }

  /**
   * Milliseconds since the epoch: baseTimestamp + timestampDelta for CreateTime batches, the
   * batch's maxTimestamp for LogAppendTime batches (as the Java client does). Exact, or a
   * KafkaProtocolError when the value is outside the safe integer range (use timestampBigInt).
   */
  get timestamp(): number {
    const b = this.batch;
    if (b.timestampType === 'LogAppendTime') return b.maxTimestamp;
    const t = b.baseTimestamp + this.timestampDelta;
    if (Number.isSafeInteger(t)) return t;
    throw new KafkaProtocolError(`record timestamp ${this.timestampBigInt} is outside the safe integer range; read timestampBigInt`, {
      reason: 'invalid-value',
    });
  }

  /** The timestamp, exact over the whole int64 range. */
  get timestampBigInt(): bigint {
    const b = this.batch;
    if (b.timestampType === 'LogAppendTime') return b.maxTimestampBigInt;
    const delta = Number.isNaN(this.timestampDelta) ? this.exactTimestampDelta() : BigInt(this.timestampDelta);
    return BigInt.asIntN(64, b.baseTimestampBigInt + delta);
  }

  /** The producer sequence of this record: baseSequence + offsetDelta, wrapping past int32 max; -1 if none. */
  get sequence(): number {
    const base = this.batch.baseSequence;
    if (base < 0) return -1;
    const d = this.offsetDelta;
    return base > 0x7fffffff - d ? d - (0x7fffffff - base) - 1 : base + d;
  }

  /** True for the marker of a control batch (consumers never show these to applications). */
  get isControl(): boolean {
    return this.batch.isControl;
  }

  /** A view of the key bytes, or null. */
  get key(): Buffer | null {
    this.bytes();
    if (this.keyLength < 0) return null;
    return this.batch.viewOf(this.keyOffset, this.keyLength);
  }

  /** A view of the value bytes, or null (a tombstone). */
  get value(): Buffer | null {
    this.bytes();
    if (this.valueLength < 0) return null;
    return this.batch.viewOf(this.valueOffset, this.valueLength);
  }

  /** The key decoded as text (UTF-8 by default) without making a view first; null for a null key. */
  keyString(encoding: BufferEncoding = 'utf8'): string | null {
    const data = this.bytes();
    if (this.keyLength < 0) return null;
    return data.toString(encoding, this.keyOffset, this.keyOffset + this.keyLength);
  }

  /** The value decoded as text (UTF-8 by default) without making a view first; null for a tombstone. */
  valueString(encoding: BufferEncoding = 'utf8'): string | null {
    const data = this.bytes();
    if (this.valueLength < 0) return null;
    return data.toString(encoding, this.valueOffset, this.valueOffset + this.valueLength);
  }

  /** The headers, in order (keys may repeat). A new array on every call. */
  get headers(): RecordHeader[] {
    this.bytes();
    return readHeaders(this.batch, this.headersOffset, this.headerCount);
  }

  /** The batch's decoded bytes, or RecordReleasedError once it has been released. */
  private bytes(): Buffer {
    const data = this.batch.data;
    if (data === null) throw new RecordReleasedError(this.batch);
    return data;
  }

  /** Re-reads a timestampDelta too large for a number, exactly. */
  private exactTimestampDelta(): bigint {
    const data = this.bytes();
    pos = this.position;
    uvarintZigzag(data); // the record length
    pos += 1; // attributes
    let u = 0n;
    let shift = 0n;
    for (;;) {
      const b = data[pos++]!;
      u |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) break;
      shift += 7n;
    }
    return BigInt.asIntN(64, (u >> 1n) ^ -(u & 1n));
  }
}

/**
 * What the decoder writes about one record (RecordView's positional fields): RecordBatch.readRecordAt
 * fills any object of this shape, so that a consumer can keep its own record class (one object
 * moved along, with fields of its own) without wrapping a RecordView.
 */
export interface RecordPlace {
  batch: RecordBatch;
  position: number;
  attributes: number;
  timestampDelta: number;
  offsetDelta: number;
  keyOffset: number;
  keyLength: number;
  valueOffset: number;
  valueLength: number;
  headersOffset: number;
  headerCount: number;
}

export interface RecordHeader {
  key: string;
  /** A view of the header value bytes, or null. */
  value: Buffer | null;
}

/**
 * The `count` headers of a record starting at `at` in the batch's data (just after the header
 * count), as a new array: keys through the table of recent keys, values as views into the data
 * (RecordBatch.viewOf). For records of a batch not released, which the decoder has checked already
 * (RecordView, and the consumer's own record classes): no bounds checks.
 */
export function readHeaders(batch: RecordBatch, at: number, count: number): RecordHeader[] {
  const data = batch.data!;
  const out = new Array<RecordHeader>(count);
  pos = at;
  for (let h = 0; h < count; h++) {
    const keyLength = uvarintZigzag(data);
    const key = headerKey(data, pos, keyLength);
    pos += keyLength;
    const valueLength = uvarintZigzag(data);
    let value: Buffer | null = null;
    if (valueLength >= 0) {
      value = batch.viewOf(pos, valueLength);
      pos += valueLength;
    }
    out[h] = { key, value };
  }
  return out;
}

/**
 * A record's bytes were read after its batch was released (the lifetime rule). It carries the
 * consumer's KafkaError brand, so `isKafkaError()` of @kwire/consumer recognizes it.
 */
export class RecordReleasedError extends Error {
  override name = 'RecordReleasedError';
  readonly code = 'KWIRE_RECORD_RELEASED';
  readonly retriable = false;
  get [Symbol.for('kwire.KafkaError')](): true {
    return true;
  }
  constructor(batch: RecordBatch) {
    super(`record batch at offset ${batch.baseOffset} was released; its records can no longer be read`);
  }
}

// Read position for the lazy getters above (synchronous use only).
let pos = 0;

/** Zig-zag varint at `pos`, already validated by the decoder. */
function uvarintZigzag(data: Buffer): number {
  let u = 0;
  for (let shift = 0; ; shift += 7) {
    const b = data[pos++]!;
    u |= (b & 0x7f) << shift;
    if (b < 0x80) break;
  }
  return (u >>> 1) ^ -(u & 1);
}

/*
 * Header keys repeat from record to record (a few names per topic: "trace-id", "content-type"), and
 * decoding each one to a string was the largest cost of reading headers (about 140 ns a key on Node
 * 20, against about 40 ns to find it here). A small direct-mapped table remembers the last short key
 * seen in each slot, with a copy of its bytes: a hit compares the bytes and returns the same string.
 * Bounded: 64 slots of at most 32 bytes. Strings are immutable, so sharing one is invisible.
 */
const KEY_SLOTS = 64;
const MAX_INTERNED = 32;
const keyBytes: (Buffer | null)[] = new Array(KEY_SLOTS).fill(null);
const keyStrings: string[] = new Array(KEY_SLOTS).fill('');

/** A header key of `length` bytes at `at`, as a string (UTF-8), through the table of recent keys. */
export function headerKey(data: Buffer, at: number, length: number): string {
  if (length === 0) return '';
  if (length > MAX_INTERNED) return data.toString('utf8', at, at + length);
  const slot = (length * 31 + data[at]! * 7 + data[at + length - 1]!) & (KEY_SLOTS - 1);
  const known = keyBytes[slot];
  if (known !== null && known !== undefined && known.length === length) {
    let i = 0;
    while (i < length && known[i] === data[at + i]) i++;
    if (i === length) return keyStrings[slot]!;
  }
  const key = data.toString('utf8', at, at + length);
  keyBytes[slot] = Buffer.from(data.subarray(at, at + length));
  keyStrings[slot] = key;
  return key;
}
