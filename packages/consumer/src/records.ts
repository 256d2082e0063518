import { inspect, type InspectOptionsStylized } from 'node:util';
import { readHeaders, RecordReleasedError, RecordView, type RecordBatch, type RecordHeader, type RecordPlace } from '@kwire/protocol';
import type { Deserializer } from './config.js';
import { CorruptRecordError, DeserializationError, UsageError } from './errors.js';
import type { LazyProgress } from './state/delivery-ledger.js';
import { displayHeaders, displayTimestamp, displayValue, headersToJson, inspectAs, marker, printable, valueToJson, type RecordJson } from './record-json.js';

/**
 * What the application receives. Records are zero-copy: keys, values and header values are views
 * into the fetch response (or into the decompression buffer of their batch).
 *
 * LIFETIME RULE. A record is valid until its batch is released:
 *  - `for await (const batch of stream)`: when the loop asks for the next batch;
 *  - `for await (const record of stream.records())`: when the loop moves past the batch's last record;
 *  - eachBatch / eachMessage callbacks: when the callback's promise settles.
 * After that its bytes go back to a pool and will be overwritten; reading a released record's
 * key, value or headers throws (RecordReleasedError) rather than showing someone else's bytes.
 * To keep one, call record.keep() (a copy that owns its bytes), or batch.retain() and later
 * batch.release() yourself to hold the whole batch.
 */
export interface ConsumerRecord<K = unknown, V = unknown> {
  readonly topic: string;
  readonly partition: number;
  readonly offset: bigint;
  /** Milliseconds since the epoch (create time, or log-append time when the topic says so). */
  readonly timestamp: number;
  readonly key: K;
  readonly value: V;
  readonly headers: readonly RecordHeader[];
  /** The leader epoch of the batch (for commits). */
  readonly leaderEpoch: number;
  /** A copy that owns its bytes and outlives the batch. */
  keep(): KeptRecord<K, V>;
}

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

type Deserialize = (data: Buffer | null, topic: string, partition: number, part: 'key' | 'value', headers: readonly RecordHeader[]) => unknown;

export function deserializerFor(d: Deserializer): Deserialize {
  if (d === 'buffer') return (data) => data;
  if (d === 'string') return (data) => (data === null ? null : data.toString('utf8'));
  if (d === 'json') return (data) => (data === null ? null : JSON.parse(data.toString('utf8')));
  return (data, topic, partition, part, headers) => d(data, { topic, partition, part, headers });
}

/** Whether a deserializer runs before delivery (it can fail, or be async) rather than when read. */
export function deserializesEarly(d: Deserializer): boolean {
  return d !== 'buffer' && d !== 'string';
}

/** Shared by every record of one partition's batches: who they belong to and how to read them. */
export interface RecordContext {
  readonly topic: string;
  readonly partition: number;
  readonly key: Deserialize;
  readonly value: Deserialize;
  readonly keyIsBuffer: boolean;
  readonly valueIsBuffer: boolean;
  readonly valueIsString: boolean;
  /** Keys, values (or both) are deserialized before delivery: see decode(). */
  readonly decodeKey: boolean;
  readonly decodeValue: boolean;
}

/**
 * The context of one topic's (or partition's) records read with these deserializers. `early`:
 * whether a deserializer that can fail or be async runs before delivery (the fetcher's batches,
 * so that a failure stops delivery at its record) or when the value is read (the share consumer).
 */
export function recordContext(topic: string, partition: number, key: Deserializer, value: Deserializer, early: boolean): RecordContext {
  return {
    topic,
    partition,
    key: deserializerFor(key),
    value: deserializerFor(value),
    keyIsBuffer: key === 'buffer',
    valueIsBuffer: value === 'buffer',
    valueIsString: value === 'string',
    decodeKey: early && deserializesEarly(key),
    decodeValue: early && deserializesEarly(value),
  };
}

/**
 * One record as the application sees it: one object per record, holding where the record is in
 * its wire batch's bytes (not a wire RecordView besides: one object rather than two). Keys and
 * values are deserialized when read, once; the value's place is kept (the value is what nearly
 * every application reads), the rest (key, timestamp, headers) is read again from the record's
 * bytes when asked, which costs a few byte reads and no memory per record.
 */
export class ConsumedRecord<K = unknown, V = unknown> implements ConsumerRecord<K, V> {
  private k: unknown = UNSET;
  private v: unknown = UNSET;

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

const UNSET = Symbol('unset');

/**
 * The view ConsumedRecord and ConsumerBatch decode a record into when they need more than they
 * keep (a key, a timestamp, headers, a first offset): one for the whole process, used
 * synchronously and never handed out, so that reading those costs no object per record.
 */
const scratch = new RecordView(null as unknown as RecordBatch);

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

/**
 * How a delivered batch reports back to the partition it came from. One object per batch (the
 * fetched partition's), so that settling costs no closure per batch.
 */
export interface BatchSettlement {
  /** The application finished every record before `offset`. */
  progressed(offset: bigint): void;
  /** The application's progress is counted by `progress` and reported when a commit asks for it. */
  progressLater(progress: LazyProgress): void;
  /** The batch is given back with what was not marked processed unfinished: deliver it again. */
  giveBack(): void;
  /** The batch ends at `offset` after all: what follows is delivered again (later). */
  cut(offset: bigint): void;
  /** The batch's memory is let go; `finished`: all of it counts as processed. */
  released(finished: boolean): void;
}

/**
 * A run of consecutive records of one partition, delivered together (at most max.poll.records).
 * Releasing it returns its memory; see the lifetime rule above.
 *
 * FINISHED RULE. What the consumer commits is what the application finished, in offset order:
 *  - a batch is finished when it is released (the loop moved on to the next batch, or past its
 *    last record; the callback resolved), or in part with markProcessed(record);
 *  - a batch given back (giveBack(): a loop left early, a callback that threw) finishes only what
 *    was marked, and its partition is delivered again from the first unmarked record;
 *  - the commit point of a partition never passes a batch still held (retained, or in a callback
 *    that has not settled), whatever happens to later batches.
 */
export class ConsumerBatch<K = unknown, V = unknown> implements Iterable<ConsumedRecord<K, V>>, LazyProgress {
  private retains = 0;
  /** Records finished as counted by countFinished(), and how many of them were marked since. */
  private finishedCount = 0;
  private flushedCount = 0;
  private counting = false;
  private released = false;
  private givenBack = false;
  /** The offset after the last record marked processed, or -1n. */
  private marked = -1n;
  /** The records as objects: given, or made on the first read of `records`. */
  private list: readonly ConsumedRecord<K, V>[] | null;
  /** Where the records are in their wire batches, when they were not given as objects. */
  private readonly spans: RecordSpans | null;
  private first: bigint | undefined;
  private last: bigint | undefined;
  /** How many records the batch holds (without making them objects: see cursor()). */
  readonly count: number;

  constructor(
    readonly topic: string,
    readonly partition: number,
    /** The records, or (from the fetcher) where they are, to be made objects only if asked for. */
    records: readonly ConsumedRecord<K, V>[] | RecordSpans,
    /** The partition's high watermark when this data was fetched. */
    readonly highWatermark: bigint,
    /** The partition's last stable offset (read_committed) when fetched; -1n when unknown. */
    readonly lastStableOffset: bigint,
    /** Where consumption continues after this batch: the last offset + 1 (past any control records). */
    readonly nextOffset: bigint,
    private readonly settlement: BatchSettlement,
    /** When its data arrived from the broker (Date.now()); 0 when unknown. */
    readonly fetchedAt = 0,
  ) {
    if (records instanceof RecordSpans) {
      this.list = null;
      this.spans = records;
      this.count = records.count;
    } else {
      this.list = records;
      this.spans = null;
      this.count = records.length;
    }
  }

  /**
   * The records, one object each. Made on the first read (the fetcher hands over only where the
   * records are): code that reads the batch through cursor() alone never makes them. Throws
   * CorruptRecordError when a record of the batch is malformed (which the fetcher does not check
   * record by record for wire batches delivered whole; their CRC was checked).
   */
  get records(): readonly ConsumedRecord<K, V>[] {
    return this.list ?? this.materialize();
  }

  /** @internal Whether `records` has been made (or was given). */
  get hasRecordObjects(): boolean {
    return this.list !== null;
  }

  private materialize(): readonly ConsumedRecord<K, V>[] {
    const s = this.spans!;
    const out = new Array<ConsumedRecord<K, V>>(s.count);
    let k = 0;
    for (const span of s.spans) {
      const batch = span.batch;
      try {
        const placed = span.position < 0;
        let p = placed ? batch.recordStart(span.index) : span.position;
        for (let i = 0; i < span.count; i++) {
          const at = p;
          const index = span.index + i;
          p = batch.readRecordAt(at, scratch, index);
          if (placed && scratch.offsetDelta !== index) throw notConsecutive(batch, index, scratch.offsetDelta);
          out[k++] = new ConsumedRecord<K, V>(batch, s.context, at, scratch.offsetDelta, scratch.valueOffset, scratch.valueLength);
        }
        if (span.index + span.count === batch.recordCount) {
          if (p !== batch.dataEnd) throw new Error(`${batch.dataEnd - p} bytes after the last of ${batch.recordCount} records`);
        } else batch.noteRecordStart(span.index + span.count, p);
      } catch (err) {
        throw this.corrupt(err, batch);
      }
    }
    this.list = out;
    return out;
  }

  /** A record error as the consumer reports corrupt data (RecordReleasedError stays itself). */
  private corrupt(err: unknown, batch: RecordBatch): unknown {
    if (err instanceof RecordReleasedError) return err;
    return new CorruptRecordError(this.topic, this.partition, batch.baseOffset, err);
  }

  /**
   * A cursor over the batch's records that allocates nothing per record: its next() returns one
   * CursorRecord moved along (see CursorRecord for what it reads without allocating), null after
   * the last. `reuse`: a cursor of an earlier batch to move here instead of making a new one, so
   * that nothing is allocated per batch either. The batch's records are not made objects for it.
   *
   * LIFETIME: the record next() returns is valid until the next call to next() (it is then the
   * next record), and its bytes until the batch is released (see the lifetime rule above).
   */
  cursor(reuse?: BatchCursor): BatchCursor {
    const c = reuse ?? new BatchCursor();
    c.reset(this as ConsumerBatch, this.spans, this.list as readonly ConsumedRecord[] | null);
    return c;
  }

  /** The records' deserializers run before delivery (JSON, functions): see ConsumedRecord.decode(). */
  get decodesEarly(): boolean {
    if (this.spans !== null) return this.spans.context.decodeKey || this.spans.context.decodeValue;
    return this.list!.length > 0 && this.list![0]!.decodesEarly;
  }

  /** The first record's timestamp (ms), or Date.now() for an empty batch; allocates nothing. */
  get firstTimestamp(): number {
    if (this.list !== null) return this.list.length ? this.list[0]!.timestamp : Date.now();
    const span = this.spans!.spans[0];
    if (span === undefined) return Date.now();
    try {
      span.batch.readRecordAt(startOf(span), scratch, span.index);
      return scratch.timestamp;
    } catch {
      // A malformed first record (reported to whoever reads the records) or a timestamp past 2^53.
      return Date.now();
    }
  }

  get firstOffset(): bigint {
    if (this.first !== undefined) return this.first;
    if (this.list !== null) return (this.first = this.list.length ? this.list[0]!.offset : this.nextOffset);
    const s = this.spans!;
    const span = s.spans[0];
    if (span === undefined) return (this.first = this.nextOffset);
    try {
      span.batch.readRecordAt(startOf(span), scratch, span.index);
      this.first = span.batch.baseOffset + BigInt(scratch.offsetDelta);
    } catch {
      // A malformed first record: where the delivery started (the records reading reports it).
      this.first = s.start;
    }
    return this.first;
  }

  get lastOffset(): bigint {
    if (this.last !== undefined) return this.last;
    if (this.list !== null) return (this.last = this.list.length ? this.list[this.list.length - 1]!.offset : this.nextOffset - 1n);
    const s = this.spans!;
    const span = s.spans[s.spans.length - 1];
    if (span === undefined) return (this.last = this.nextOffset - 1n);
    try {
      // The last record's delta (compaction leaves gaps: the wire batch's lastOffsetDelta may be
      // past it): the span walked, once, without objects.
      let p = startOf(span);
      for (let i = 0; i < span.count; i++) p = span.batch.readRecordAt(p, scratch, span.index + i);
      this.last = span.batch.baseOffset + BigInt(scratch.offsetDelta);
    } catch {
      this.last = this.nextOffset - 1n;
    }
    return this.last;
  }

  /** Records between this batch and the end of the partition when fetched. */
  get lag(): bigint {
    const lag = this.highWatermark - this.nextOffset;
    return lag > 0n ? lag : 0n;
  }

  [Symbol.iterator](): Iterator<ConsumedRecord<K, V>> {
    return this.records[Symbol.iterator]();
  }

  /** Keeps the batch (and its records) alive past the point where it would be released. */
  retain(): this {
    this.retains++;
    return this;
  }

  /**
   * The application finished this record (or the record at this offset) and every one before it in
   * the batch: commits may now cover them, even while the batch is held (kafkajs's resolveOffset).
   */
  markProcessed(record: { readonly offset: bigint } | bigint | number): void {
    const offset = typeof record === 'object' ? record.offset : BigInt(record);
    if (offset < this.firstOffset || offset > this.lastOffset) {
      throw new UsageError(`markProcessed: offset ${offset} is not in this batch of ${this.topic}-${this.partition} (${this.firstOffset}..${this.lastOffset})`);
    }
    const next = offset === this.lastOffset ? this.nextOffset : offset + 1n;
    if (next <= this.marked) return;
    this.marked = next;
    this.settlement.progressed(next);
  }

  /**
   * @internal The first `n` records are finished (run()'s eachMessage, after each callback): an
   * integer store per record; the offsets are marked when a commit reads the commit point (see
   * LazyProgress), or when the batch is given back.
   */
  countFinished(n: number): void {
    this.finishedCount = n;
    if (!this.counting) {
      this.counting = true;
      this.settlement.progressLater(this);
    }
  }

  /** @internal Marks what countFinished() counted since the last call. */
  flushProgress(): void {
    const n = this.finishedCount;
    if (n <= this.flushedCount || this.released) return;
    this.flushedCount = n;
    this.markProcessed(this.records[n - 1]!);
  }

  /** @internal A derived batch's counted progress, reported through this one's settlement. */
  progressLater(progress: LazyProgress): void {
    this.settlement.progressLater(progress);
  }

  /** Some but not all of the batch was marked processed. */
  get partlyProcessed(): boolean {
    return this.marked >= 0n && this.marked < this.nextOffset;
  }

  /** The first offset not marked processed (the first record when nothing is marked). */
  get unprocessedFrom(): bigint {
    return this.marked >= 0n ? this.marked : this.firstOffset;
  }

  /** Every record was marked processed. */
  get fullyProcessed(): boolean {
    return this.marked >= this.nextOffset;
  }

  /**
   * Lets the batch go (as release()) without finishing what was not marked processed: the commit
   * point stays before the first unmarked record and the partition is delivered again from there.
   * What a loop left early and a callback that threw do with the batch they were on.
   */
  giveBack(): void {
    if (this.released) return;
    this.flushProgress();
    if (!this.givenBack && !this.fullyProcessed) {
      this.givenBack = true;
      this.settlement.giveBack();
    }
    this.release();
  }

  /**
   * The batch cut before records[index] (which is not delivered with it): a new batch of the
   * records before it takes this one's place (and its memory); the partition goes on from that
   * record later. This object must not be used after.
   */
  cutBefore(index: number): ConsumerBatch<K, V> {
    const records = this.records;
    const at = records[index]!.offset;
    this.settlement.cut(at);
    this.released = true;
    return new ConsumerBatch(this.topic, this.partition, records.slice(0, index), this.highWatermark, this.lastStableOffset, at, this.settlement, this.fetchedAt);
  }

  /** Lets the batch go: the last release (one per retain, plus the consumer's own) frees it. */
  release(): void {
    if (this.released) return;
    if (this.retains > 0) {
      this.retains--;
      return;
    }
    this.released = true;
    this.settlement.released(!this.givenBack);
  }

  get isReleased(): boolean {
    return this.released;
  }

  /** What JSON.stringify(batch) writes: where the batch is and how many records, not their bytes (offsets as decimal strings). */
  toJSON(): { topic: string; partition: number; count: number; firstOffset?: string; lastOffset?: string; nextOffset: string; highWatermark: string; released?: true } {
    const { first, last } = this.printedOffsets();
    return {
      topic: this.topic,
      partition: this.partition,
      count: this.count,
      firstOffset: first?.toString(),
      lastOffset: last?.toString(),
      nextOffset: this.nextOffset.toString(),
      highWatermark: this.highWatermark.toString(),
      ...(this.released ? { released: true as const } : {}),
    };
  }

  /** What util.inspect and console.log show: the batch's place, offsets and size, not its records' bytes. */
  [inspect.custom](depth: number | null, options: InspectOptionsStylized): string {
    const { first, last } = this.printedOffsets();
    const fields: Record<string, unknown> = { topic: this.topic, partition: this.partition, count: this.count };
    if (first !== undefined && last !== undefined) Object.assign(fields, { firstOffset: first, lastOffset: last });
    Object.assign(fields, { nextOffset: this.nextOffset, highWatermark: this.highWatermark });
    if (this.released) fields.released = true;
    return inspectAs(this.constructor.name, `${this.topic}-${this.partition} ${this.count} records to ${this.nextOffset}`, fields, depth, options);
  }

  /**
   * The first and last offsets for printing: read from the records while the batch is live; once
   * it is released only those read before (undefined otherwise), never a read of memory that may
   * hold other records now.
   */
  private printedOffsets(): { first: bigint | undefined; last: bigint | undefined } {
    if (!this.released) return { first: this.firstOffset, last: this.lastOffset };
    return { first: this.first, last: this.last };
  }
}

/**
 * A batch whose commit point is kept elsewhere (a share consumer acknowledges record by record):
 * its settlement only lets go of its memory.
 */
export class ReleaseOnlySettlement implements BatchSettlement {
  constructor(private readonly onRelease: () => void) {}
  progressed(): void {}
  progressLater(): void {}
  giveBack(): void {}
  cut(): void {}
  released(): void {
    this.onRelease();
  }
}

/** The settlement of a batch made from another (interceptors that change the records): the original settles. */
export class DerivedSettlement implements BatchSettlement {
  constructor(private readonly original: ConsumerBatch) {}
  progressed(offset: bigint): void {
    if (offset > this.original.firstOffset) this.original.markProcessed(offset >= this.original.nextOffset ? this.original.lastOffset : offset - 1n);
  }
  progressLater(progress: LazyProgress): void {
    this.original.progressLater(progress);
  }
  giveBack(): void {
    this.original.giveBack();
  }
  cut(offset: bigint): void {
    // Interceptors run after deserialization, which is what cuts: nothing derived is cut.
    throw new Error(`a batch changed by an interceptor cannot be cut (at ${offset})`);
  }
  released(finished: boolean): void {
    if (finished) this.original.release();
    else this.original.giveBack();
  }
}

/** One wire batch's part of a delivered batch: `count` records from the one at `position`. */
export interface RecordSpan {
  readonly batch: RecordBatch;
  /**
   * Where the first of them starts in the wire batch's decoded bytes; -1 when the part was placed
   * by its index alone (a batch with consecutive offsets, cut by max.poll.records): startOf() finds
   * it, and each record's offsetDelta must then be its index.
   */
  readonly position: number;
  /** Its index among the wire batch's records. */
  readonly index: number;
  readonly count: number;
}

/**
 * @internal Where a delivered batch's records are: what the fetcher hands a ConsumerBatch instead
 * of an object per record (records are made objects only when the application reads `records`).
 */
export class RecordSpans {
  constructor(
    readonly context: RecordContext,
    readonly spans: readonly RecordSpan[],
    readonly count: number,
    /** The partition's position when the batch was taken (its first record is at or after it). */
    readonly start: bigint,
  ) {}
}

const NO_SPANS: readonly RecordSpan[] = [];

/** Where a span's first record starts (RecordBatch.recordStart for a part placed by its index). */
function startOf(span: RecordSpan): number {
  return span.position >= 0 ? span.position : span.batch.recordStart(span.index);
}

/** A record of a part placed by its index whose offsetDelta is not that index. */
function notConsecutive(batch: RecordBatch, index: number, offsetDelta: number): Error {
  return new Error(`record ${index} has offsetDelta ${offsetDelta}, but the batch's lastOffsetDelta ${batch.lastOffsetDelta} and ${batch.recordCount} records say its offsets are consecutive`);
}

/**
 * The record a BatchCursor moves along: plain fields, so that reading them allocates nothing
 * whether or not V8 inlines anything (a number past 2^31, every timestamp, returned by a getter
 * that is not inlined is a 16-byte box).
 *
 * Read without allocating:
 *  - topic, partition, leaderEpoch; offsetNumber (exact below 2^53); timestamp (ms since the
 *    epoch; NaN outside the safe integer range, where timestampBigInt is exact);
 *  - data (the backing bytes) with keyOffset/keyLength and valueOffset/valueLength (length -1 for
 *    null): e.g. `r.data.toString('utf8', r.valueOffset, r.valueOffset + r.valueLength)` makes
 *    only the string, `r.data[r.valueOffset]` reads a byte;
 *  - headerCount, and header(i), which sets headerKeyOffset/headerKeyLength and
 *    headerValueOffset/headerValueLength (-1 for null) for the i-th header.
 * Allocating, as their names say: offset (a bigint), timestampBigInt, key and value (Buffer views),
 * keyString()/valueString(), headers (an array of header objects).
 *
 * LIFETIME: the object is the cursor's and the next call to next() moves it to the next record:
 * read what you need before that. Its bytes are valid until the batch is released, like every
 * record's; after that `data` (and next()) throw RecordReleasedError. Copy what must outlive the
 * batch (Buffer.from(r.value), or data.copy(...)).
 */
export class CursorRecord implements RecordPlace {
  /** @internal The wire batch the record is in. */
  batch: RecordBatch = null as unknown as RecordBatch;
  topic = '';
  partition = -1;
  /** The offset (exact below 2^53, far past any real log; NaN past it, where `offset` is exact). */
  offsetNumber = 0.5;
  /** Milliseconds since the epoch (create time, or log-append time when the topic says so); NaN outside the safe integer range. */
  timestamp = 0.5;
  /** @internal Where the record starts in `data`. */
  position = 0;
  /** Record attributes (unused by Kafka so far: 0). */
  attributes = 0;
  /** timestamp - the batch's base timestamp (NaN when huge). */
  timestampDelta = 0;
  /** offset - the batch's base offset. */
  offsetDelta = 0;
  /** Where the key is in `data`; -1 for a null key. */
  keyOffset = -1;
  /** The key's length in bytes; -1 for a null key. */
  keyLength = -1;
  /** Where the value is in `data`; -1 for a null value. */
  valueOffset = -1;
  /** The value's length in bytes; -1 for a null value (a tombstone). */
  valueLength = -1;
  /** @internal Where the headers start in `data`. */
  headersOffset = 0;
  headerCount = 0;
  /** Set by header(i): where the header's key is in `data`, and its length in bytes. */
  headerKeyOffset = 0;
  headerKeyLength = 0;
  /** Set by header(i): where the header's value is in `data`, and its length (-1 for null). */
  headerValueOffset = -1;
  headerValueLength = -1;
  /** The header walk: the record (its position) and header it is at, and where the next starts. */
  private walkRecord = -1;
  private walkIndex = -1;
  private walkNext = 0;

  /** The bytes the record's offsets point into; RecordReleasedError once its batch is released. */
  get data(): Buffer {
    const data = this.batch.data;
    if (data === null) throw new RecordReleasedError(this.batch);
    return data;
  }

  /** The leader epoch of the record's batch (for commits). */
  get leaderEpoch(): number {
    return this.batch.partitionLeaderEpoch;
  }

  /** The offset as a bigint (a new one on each call). */
  get offset(): bigint {
    return this.batch.baseOffset + BigInt(this.offsetDelta);
  }

  /** The timestamp, exact over the whole int64 range (allocates). */
  get timestampBigInt(): bigint {
    return this.wire().timestampBigInt;
  }

  /** A view of the key bytes, or null (allocates the view). */
  get key(): Buffer | null {
    return this.viewAt(this.keyOffset, this.keyLength);
  }

  /** A view of the value bytes, or null (allocates the view). */
  get value(): Buffer | null {
    return this.viewAt(this.valueOffset, this.valueLength);
  }

  /** A view of `length` bytes at `offset` of the record's batch (null for -1), once the batch is known live. */
  private viewAt(offset: number, length: number): Buffer | null {
    if (this.batch.data === null) throw new RecordReleasedError(this.batch);
    return length < 0 ? null : this.batch.viewOf(offset, length);
  }

  /** The key as text (allocates the string only); null for a null key. */
  keyString(encoding: BufferEncoding = 'utf8'): string | null {
    const data = this.data;
    return this.keyLength < 0 ? null : data.toString(encoding, this.keyOffset, this.keyOffset + this.keyLength);
  }

  /** The value as text (allocates the string only); null for a tombstone. */
  valueString(encoding: BufferEncoding = 'utf8'): string | null {
    const data = this.data;
    return this.valueLength < 0 ? null : data.toString(encoding, this.valueOffset, this.valueOffset + this.valueLength);
  }

  /** The headers as objects, in order (a new array on each call). */
  get headers(): RecordHeader[] {
    return this.wire().headers;
  }

  /** The record decoded into the shared scratch view (synchronous use only). */
  private wire(): RecordView {
    this.batch.readRecordAt(this.position, scratch);
    return scratch;
  }

  /**
   * Moves to the header at `index` (0 .. headerCount - 1) and sets headerKeyOffset/headerKeyLength
   * and headerValueOffset/headerValueLength: in order (0, 1, 2, ...) each step is a few byte reads;
   * any other order walks from the first header. Allocates nothing.
   */
  header(index: number): void {
    if (!(index >= 0 && index < this.headerCount)) throw new RangeError(`header ${index} of a record with ${this.headerCount}`);
    const data = this.data;
    if (this.walkRecord !== this.position || this.walkIndex >= index) {
      this.walkRecord = this.position;
      this.walkIndex = -1;
      this.walkNext = this.headersOffset;
    }
    // The cursor's decoder checked every header's lengths already: plain varint reads here.
    let p = this.walkNext;
    while (this.walkIndex < index) {
      let u = 0;
      for (let shift = 0; ; shift += 7) {
        const b = data[p++]!;
        u |= (b & 0x7f) << shift;
        if (b < 0x80) break;
      }
      this.headerKeyLength = (u >>> 1) ^ -(u & 1);
      this.headerKeyOffset = p;
      p += this.headerKeyLength;
      u = 0;
      for (let shift = 0; ; shift += 7) {
        const b = data[p++]!;
        u |= (b & 0x7f) << shift;
        if (b < 0x80) break;
      }
      const valueLength = (u >>> 1) ^ -(u & 1);
      this.headerValueLength = valueLength;
      this.headerValueOffset = valueLength < 0 ? -1 : p;
      if (valueLength > 0) p += valueLength;
      this.walkIndex++;
    }
    this.walkNext = p;
  }
}

/**
 * A cursor over a ConsumerBatch's records (ConsumerBatch.cursor()): next() returns the cursor's one
 * CursorRecord moved to the next record, or null after the last. Nothing is allocated per record,
 * and nothing per batch when the cursor is reused (batch.cursor(previous)).
 */
export class BatchCursor {
  /** The one record object next() returns. */
  readonly record = new CursorRecord();
  private owner: ConsumerBatch | null = null;
  private spans: readonly RecordSpan[] = NO_SPANS;
  private list: readonly ConsumedRecord[] | null = null;
  /** The next span (or the next record of `list`). */
  private next_ = 0;
  private wire: RecordBatch | null = null;
  /** Records left in the current span, where the next starts, and its index in its wire batch. */
  private left = 0;
  private at = 0;
  private index = 0;
  /** The current span ends its wire batch: nothing may follow its last record. */
  private ends = false;
  /** The current span was placed by its index: each record's offsetDelta must be its index. */
  private placed = false;

  /** @internal See ConsumerBatch.cursor(). */
  reset(owner: ConsumerBatch, spans: RecordSpans | null, list: readonly ConsumedRecord[] | null): void {
    this.owner = owner;
    this.spans = spans === null ? NO_SPANS : spans.spans;
    this.list = list;
    this.next_ = 0;
    this.wire = null;
    this.left = 0;
    this.record.topic = owner.topic;
    this.record.partition = owner.partition;
  }

  /** The next record (always the same object, moved along), or null after the last one. */
  next(): CursorRecord | null {
    const owner = this.owner;
    if (owner === null) return null;
    if (this.left === 0 && !this.nextSpan()) return null;
    const wire = this.wire!;
    if (owner.isReleased) throw new RecordReleasedError(wire);
    const rec = this.record;
    try {
      const index = this.index++;
      if (this.at < 0) this.at = wire.recordStart(index);
      this.at = wire.readRecordAt(this.at, rec, index);
      if (this.placed && rec.offsetDelta !== index) throw notConsecutive(wire, index, rec.offsetDelta);
      rec.offsetNumber = wire.baseOffsetNumber + rec.offsetDelta;
      const t = wire.timestampType === 'LogAppendTime' ? wire.maxTimestampOrNaN : wire.baseTimestampOrNaN + rec.timestampDelta;
      rec.timestamp = Number.isSafeInteger(t) ? t : Number.NaN;
      if (--this.left === 0) {
        // A span that does not end its wire batch ends where the batch's next part starts.
        if (this.list === null && !this.ends) wire.noteRecordStart(this.index, this.at);
        else if (this.ends && this.at !== wire.dataEnd) throw new Error(`${wire.dataEnd - this.at} bytes after the last of ${wire.recordCount} records`);
      }
    } catch (err) {
      if (err instanceof RecordReleasedError) throw err;
      throw new CorruptRecordError(owner.topic, owner.partition, wire.baseOffset, err);
    }
    return rec;
  }

  /** Moves to the next span with records (or the next record of a list); false at the end. */
  private nextSpan(): boolean {
    const list = this.list;
    if (list !== null) {
      if (this.next_ >= list.length) return false;
      const r = list[this.next_++]!;
      this.wire = r.wireBatch;
      this.at = r.position;
      this.index = 0;
      this.left = 1;
      this.ends = false;
      this.placed = false;
      return true;
    }
    while (this.next_ < this.spans.length) {
      const span = this.spans[this.next_++]!;
      if (span.count === 0) continue;
      this.wire = span.batch;
      // -1 for a part placed by its index: found by next(), where errors are reported as corrupt records.
      this.at = span.position;
      this.index = span.index;
      this.left = span.count;
      this.ends = span.index + span.count === span.batch.recordCount;
      this.placed = span.position < 0;
      return true;
    }
    return false;
  }
}
