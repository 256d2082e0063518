// The record the application receives (ConsumerRecord), the copy that outlives its batch
// (KeptRecord), and how a record's fields are read back from its wire batch's bytes.
import { inspect, type InspectOptionsStylized } from 'node:util';
import { readHeaders, RecordReleasedError, RecordView, type RecordBatch, type RecordHeader } from '@kwire/protocol';
import { DeserializationError } from '../errors.js';
import { displayHeaders, displayTimestamp, displayValue, headersToJson, inspectAs, marker, printable, valueToJson, type RecordJson } from '../record-json.js';
import type { RecordContext } from './deserializers.js';
import { scratch } from './scratch.js';

/** A copy of a record that owns its bytes and outlives its batch (ConsumerRecord.keep()). */
export interface KeptRecord<K = unknown, V = unknown> {
  readonly topic: string;
  readonly partition: number;
  readonly offset: bigint;
  readonly timestamp: number;
  readonly key: K;
  readonly value: V;
  readonly headers: readonly RecordHeader[];
  readonly leaderEpoch: number;
}

/** A key or value not read (deserialized) yet. */
const UNSET = Symbol('unset');

/**
 * One record as the application receives it (Java's ConsumerRecord). Records are zero-copy: keys,
 * values and header values are views into the fetch response (or into the decompression buffer of
 * their batch).
 *
 * LIFETIME RULE. A record is valid until its batch is released:
 *  - `for await (const batch of stream)`: when the loop asks for the next batch;
 *  - `for await (const record of stream.records())`: when the loop moves past the batch's last record;
 *  - eachBatch / eachMessage callbacks: when the callback's promise settles.
 * After that its bytes go back to a pool and will be overwritten; reading a released record's
 * key, value or headers throws (RecordReleasedError) rather than showing someone else's bytes.
 * To keep one, call record.keep() (a copy that owns its bytes), or batch.retain() and later
 * batch.release() yourself to hold the whole batch.
 *
 * One object per record, holding where the record is in its wire batch's bytes (not a wire
 * RecordView besides: one object rather than two). Keys and values are deserialized when read,
 * once; the value's place is kept (the value is what nearly every application reads), the rest
 * (key, timestamp, headers) is read again from the record's bytes when asked, which costs a few
 * byte reads and no memory per record.
 */
export class ConsumerRecord<K = unknown, V = unknown> {
  private k: unknown = UNSET;
  private v: unknown = UNSET;

  /** @internal Records are made by their batches (and the share consumer), not by applications. */
  constructor(
    /** @internal The wire batch the record is in. */
    readonly wireBatch: RecordBatch,
    private readonly context: RecordContext,
    /** @internal Where the record starts in the batch's decoded bytes. */
    readonly position: number,
    /** offset - batch.baseOffset. */
    readonly offsetDelta: number,
    private readonly valueOffset: number,
    private readonly valueLength: number,
  ) {}

  /** The wire record, decoded again into a new RecordView (for code written against it; allocates). */
  get wire(): RecordView {
    const view = new RecordView(this.wireBatch);
    this.wireBatch.readRecordAt(this.position, view);
    return view;
  }

  /** The record decoded into the shared scratch view: synchronous use only, never kept. */
  private read(): RecordView {
    this.wireBatch.readRecordAt(this.position, scratch);
    return scratch;
  }

  get topic(): string {
    return this.context.topic;
  }

  get partition(): number {
    return this.context.partition;
  }

  /** A new bigint on each call. */
  get offset(): bigint {
    return this.wireBatch.baseOffset + BigInt(this.offsetDelta);
  }

  /** The offset as a number (exact below 2^53), without a bigint. */
  get offsetNumber(): number {
    return this.wireBatch.baseOffsetNumber + this.offsetDelta;
  }

  /** Milliseconds since the epoch (create time, or log-append time when the topic says so). */
  get timestamp(): number {
    const b = this.wireBatch;
    if (b.timestampType === 'LogAppendTime') return b.maxTimestamp;
    if (locate(this.wireBatch, this.bytes(), this.position)) {
      const t = b.baseTimestampOrNaN + locatedTimestampDelta;
      if (Number.isSafeInteger(t)) return t;
    }
    return this.read().timestamp; // exact, or the error naming timestampBigInt
  }

  /** The batch's bytes, or RecordReleasedError once it is released. */
  private bytes(): Buffer {
    const data = this.wireBatch.data;
    if (data === null) throw new RecordReleasedError(this.wireBatch);
    return data;
  }

  /** The leader epoch of the batch (for commits). */
  get leaderEpoch(): number {
    return this.wireBatch.partitionLeaderEpoch;
  }

  get key(): K {
    if (this.k === UNSET) {
      const c = this.context;
      if (c.keyIsBuffer) {
        const data = this.bytes();
        if (locate(this.wireBatch, data, this.position)) this.k = locatedKeyLength < 0 ? null : this.wireBatch.viewOf(locatedKeyOffset, locatedKeyLength);
        else this.k = this.read().key;
      } else this.k = this.deserialize('key');
    }
    return this.k as K;
  }

  /**
   * @internal The key's bytes as a latin1 string (one char per byte; null for a null key): run()'s
   * key ordering compares keys by their bytes, whatever the key deserializer makes of them.
   */
  keyBinary(): string | null {
    const data = this.bytes();
    if (locate(this.wireBatch, data, this.position)) return locatedKeyLength < 0 ? null : data.toString('latin1', locatedKeyOffset, locatedKeyOffset + locatedKeyLength);
    const key = this.read().key;
    return key === null ? null : Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString('latin1');
  }

  get value(): V {
    if (this.v === UNSET) {
      const c = this.context;
      const data = this.wireBatch.data;
      if (data === null) throw new RecordReleasedError(this.wireBatch);
      const at = this.valueOffset;
      // Strings straight from the batch bytes, without a Buffer view in between.
      if (c.valueIsString) this.v = this.valueLength < 0 ? null : data.toString('utf8', at, at + this.valueLength);
      else if (c.valueIsBuffer) this.v = this.valueLength < 0 ? null : this.wireBatch.viewOf(at, this.valueLength);
      else this.v = this.deserialize('value');
    }
    return this.v as V;
  }

  /** A deserializer run when the key or value is read (never an unexplained SyntaxError). */
  private deserialize(part: 'key' | 'value'): unknown {
    const c = this.context;
    const w = this.read();
    const data = part === 'key' ? w.key : w.value;
    const headers = w.headers;
    try {
      const out = (part === 'key' ? c.key : c.value)(data, c.topic, c.partition, part, headers);
      if (out instanceof Promise) throw new Error('an async deserializer must run before delivery, not when the record is read');
      return out;
    } catch (err) {
      throw new DeserializationError(c.topic, c.partition, this.offset, part, err);
    }
  }

  /** This record's key or value must be deserialized before delivery (JSON, a function). */
  get decodesEarly(): boolean {
    return this.context.decodeKey || this.context.decodeValue;
  }

  /**
   * Runs the deserializers that run before delivery; a promise only when one of them is async.
   * Throws (or rejects with) a DeserializationError carrying the record's place and the cause.
   */
  decode(): Promise<void> | undefined {
    const c = this.context;
    let pending: Promise<void> | undefined;
    for (const part of ['key', 'value'] as const) {
      if (!(part === 'key' ? c.decodeKey : c.decodeValue)) continue;
      // Read anew for each part: a deserializer may itself read records (the scratch view).
      const w = this.read();
      const data = part === 'key' ? w.key : w.value;
      const headers = w.headers;
      let out: unknown;
      try {
        out = (part === 'key' ? c.key : c.value)(data, c.topic, c.partition, part, headers);
      } catch (err) {
        throw new DeserializationError(c.topic, c.partition, this.offset, part, err);
      }
      if (out instanceof Promise) {
        const settled = out.then(
          (v: unknown) => this.set(part, v),
          (err: unknown) => {
            throw new DeserializationError(c.topic, c.partition, this.offset, part, err);
          },
        );
        pending = pending ? pending.then(() => settled) : settled;
      } else this.set(part, out);
    }
    return pending;
  }

  private set(part: 'key' | 'value', v: unknown): void {
    if (part === 'key') this.k = v;
    else this.v = v;
  }

  /** A new array on each call. */
  get headers(): readonly RecordHeader[] {
    const data = this.bytes();
    if (!locate(this.wireBatch, data, this.position)) return this.read().headers;
    // After the key: the value's length and bytes, then the headers (all checked when made).
    at = locatedKeyOffset + Math.max(locatedKeyLength, 0);
    const valueLength = unzigzag(data);
    if (valueLength > 0) at += valueLength;
    const n = unzigzag(data);
    return readHeaders(this.wireBatch, at, n);
  }

  /** A copy that owns its bytes and outlives the batch. */
  keep(): KeptRecord<K, V> {
    const copy = (b: unknown) => (Buffer.isBuffer(b) ? Buffer.from(b) : b);
    return printable({
      topic: this.topic,
      partition: this.partition,
      offset: this.offset,
      timestamp: this.timestamp,
      key: copy(this.key) as K,
      value: copy(this.value) as V,
      headers: this.headers.map((h) => ({ key: h.key, value: h.value === null ? null : Buffer.from(h.value) })),
      leaderEpoch: this.leaderEpoch,
    });
  }

  /**
   * What JSON.stringify(record) writes (RecordJson): the offset as a decimal string, key and value as
   * UTF-8 text when they are valid UTF-8 (else `{ base64 }`; a deserialized one as itself), headers
   * as `[{ key, value }]` by the same rule. A released record gives its place and `released: true`.
   */
  toJSON(): RecordJson {
    const released = this.wireBatch.data === null;
    const data: Pick<RecordJson, 'timestamp' | 'key' | 'value' | 'headers'> = {};
    if (released) {
      const { k, v } = this.deserializedParts();
      if (k !== UNSET) data.key = k;
      if (v !== UNSET) data.value = v;
    } else {
      data.timestamp = this.timestamp;
      data.key = valueToJson(this.partOrBytes('key'));
      data.value = valueToJson(this.partOrBytes('value'));
      data.headers = headersToJson(this.headers);
    }
    const deliveryCount = (this as { deliveryCount?: unknown }).deliveryCount;
    return {
      topic: this.topic,
      partition: this.partition,
      offset: this.offset.toString(),
      ...data,
      leaderEpoch: this.leaderEpoch,
      ...(typeof deliveryCount === 'number' ? { deliveryCount } : {}),
      ...(released ? { released: true as const } : {}),
    };
  }

  /**
   * What util.inspect and console.log show: the record's place, timestamp, key, value (long ones
   * cut) and headers; never the batch's memory (which holds other records' bytes). A released
   * record says so instead of showing bytes.
   */
  [inspect.custom](depth: number | null, options: InspectOptionsStylized): string {
    const name = this.constructor.name;
    const fields: Record<string, unknown> = { topic: this.topic, partition: this.partition, offset: this.offset };
    if (this.wireBatch.data === null) {
      const { k, v } = this.deserializedParts();
      const gone = marker('released with its batch');
      Object.assign(fields, { timestamp: gone, key: k === UNSET ? gone : displayValue(k), value: v === UNSET ? gone : displayValue(v), headers: gone });
    } else {
      Object.assign(fields, {
        timestamp: displayTimestamp(this.timestamp),
        key: this.displayPart('key'),
        value: this.displayPart('value'),
        headers: displayHeaders(this.headers),
      });
    }
    fields.leaderEpoch = this.leaderEpoch;
    const deliveryCount = (this as { deliveryCount?: unknown }).deliveryCount;
    if (typeof deliveryCount === 'number') fields.deliveryCount = deliveryCount;
    return inspectAs(name, `${this.topic}-${this.partition}@${this.offset}`, fields, depth, options);
  }

  /** A key or value for printing; the raw bytes when its deserializer fails (toJSON must not throw). */
  private partOrBytes(part: 'key' | 'value'): unknown {
    try {
      return part === 'key' ? this.key : this.value;
    } catch (err) {
      if (!(err instanceof DeserializationError)) throw err;
      const w = this.read();
      return part === 'key' ? w.key : w.value;
    }
  }

  /** A key or value as inspect shows it; a deserializer's failure shown, not thrown. */
  private displayPart(part: 'key' | 'value'): unknown {
    try {
      return displayValue(part === 'key' ? this.key : this.value);
    } catch (err) {
      if (!(err instanceof DeserializationError)) throw err;
      return marker(`does not deserialize: ${(err.cause as Error)?.message ?? String(err.cause)}`);
    }
  }

  /**
   * The key and value a released record still has: deserialized ones outlive the batch; bytes
   * (Buffer views) do not, their memory is reused.
   */
  private deserializedParts(): { k: unknown; v: unknown } {
    const kept = (x: unknown) => (x === UNSET || x instanceof Uint8Array ? UNSET : x);
    return { k: kept(this.k), v: kept(this.v) };
  }
}

/**
 * @deprecated The record class is ConsumerRecord (Java's name); ConsumedRecord stays, for now, so
 * that code written against it keeps compiling.
 */
export type ConsumedRecord<K = unknown, V = unknown> = ConsumerRecord<K, V>;
/** @deprecated Use ConsumerRecord. */
export const ConsumedRecord = ConsumerRecord;

/** Where unzigzag() reads (synchronous use only). */
let at = 0;

/** A zig-zag varint (int32) at `at` of an already checked record. */
function unzigzag(data: Buffer): number {
  let u = 0;
  for (let shift = 0; ; shift += 7) {
    const b = data[at++]!;
    u |= (b & 0x7f) << shift;
    if (b < 0x80) break;
  }
  return (u >>> 1) ^ -(u & 1);
}

/* What locate() found (synchronous use only). */
let locatedTimestampDelta = 0;
let locatedKeyOffset = 0;
let locatedKeyLength = 0;
/** The record locate() found last: its batch and position. */
let locatedPosition = -1;
let locatedBatch: RecordBatch | null = null;

/**
 * Re-reads an already checked record's timestampDelta and key place from its bytes at `p`: the
 * few varints before the value, without the checks readRecordAt repeats (the record was decoded,
 * and checked, when the batch's records were made). false for a timestampDelta of more than 4
 * bytes (over ~1.5 days from the batch's first record): the caller takes the exact path then.
 */
function locate(batch: RecordBatch, data: Buffer, p: number): boolean {
  // The same record again (its key, then its timestamp, then its headers): found already. By
  // batch, not buffer: a pooled buffer reused by a later batch holds other records at the same
  // places.
  if (p === locatedPosition && batch === locatedBatch) return true;
  const start = p;
  while (data[p++]! >= 0x80); // the record's length
  p++; // attributes
  let u = 0;
  for (let shift = 0; ; shift += 7) {
    if (shift === 28) return false;
    const b = data[p++]!;
    u |= (b & 0x7f) << shift;
    if (b < 0x80) break;
  }
  locatedTimestampDelta = (u >>> 1) ^ -(u & 1);
  while (data[p++]! >= 0x80); // offsetDelta
  u = 0;
  for (let shift = 0; ; shift += 7) {
    const b = data[p++]!;
    u |= (b & 0x7f) << shift;
    if (b < 0x80) break;
  }
  locatedKeyLength = (u >>> 1) ^ -(u & 1);
  locatedKeyOffset = p;
  locatedPosition = start;
  locatedBatch = batch;
  return true;
}
