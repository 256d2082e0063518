import type { RecordView, RecordHeader } from '@kwire/protocol';
import type { Deserializer } from './config.js';
import { ConfigError, DeserializationError } from './errors.js';

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
 * One record as the application sees it: a thin wrapper over the wire record (which holds only
 * positions into the batch's bytes). Keys and values are deserialized when read, once.
 */
export class ConsumedRecord<K = unknown, V = unknown> implements ConsumerRecord<K, V> {
  private k: unknown = UNSET;
  private v: unknown = UNSET;

  constructor(
    readonly wire: RecordView,
    private readonly context: RecordContext,
  ) {}

  get topic(): string {
    return this.context.topic;
  }

  get partition(): number {
    return this.context.partition;
  }

  get offset(): bigint {
    return this.wire.offset;
  }

  get timestamp(): number {
    return this.wire.timestamp;
  }

  get leaderEpoch(): number {
    return this.wire.batch.partitionLeaderEpoch;
  }

  get key(): K {
    if (this.k === UNSET) {
      const c = this.context;
      this.k = c.keyIsBuffer ? this.wire.key : this.deserialize('key');
    }
    return this.k as K;
  }

  get value(): V {
    if (this.v === UNSET) {
      const c = this.context;
      const w = this.wire;
      // Strings straight from the batch bytes, without a Buffer view in between.
      if (c.valueIsString) this.v = w.valueLength < 0 ? null : w.valueString();
      else this.v = c.valueIsBuffer ? w.value : this.deserialize('value');
    }
    return this.v as V;
  }

  /** A deserializer run when the key or value is read (never an unexplained SyntaxError). */
  private deserialize(part: 'key' | 'value'): unknown {
    const c = this.context;
    const w = this.wire;
    try {
      const out = (part === 'key' ? c.key : c.value)(part === 'key' ? w.key : w.value, c.topic, c.partition, part, w.headers);
      if (out instanceof Promise) throw new Error('an async deserializer must run before delivery, not when the record is read');
      return out;
    } catch (err) {
      throw new DeserializationError(c.topic, c.partition, w.offset, part, err);
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
    const w = this.wire;
    let pending: Promise<void> | undefined;
    for (const part of ['key', 'value'] as const) {
      if (!(part === 'key' ? c.decodeKey : c.decodeValue)) continue;
      let out: unknown;
      try {
        out = (part === 'key' ? c.key : c.value)(part === 'key' ? w.key : w.value, c.topic, c.partition, part, w.headers);
      } catch (err) {
        throw new DeserializationError(c.topic, c.partition, w.offset, part, err);
      }
      if (out instanceof Promise) {
        const settled = out.then(
          (v: unknown) => this.set(part, v),
          (err: unknown) => {
            throw new DeserializationError(c.topic, c.partition, w.offset, part, err);
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

  get headers(): readonly RecordHeader[] {
    return this.wire.headers;
  }

  keep(): KeptRecord<K, V> {
    const copy = (b: unknown) => (Buffer.isBuffer(b) ? Buffer.from(b) : b);
    return {
      topic: this.topic,
      partition: this.partition,
      offset: this.offset,
      timestamp: this.timestamp,
      key: copy(this.key) as K,
      value: copy(this.value) as V,
      headers: this.headers.map((h) => ({ key: h.key, value: h.value === null ? null : Buffer.from(h.value) })),
      leaderEpoch: this.leaderEpoch,
    };
  }

  toJSON(): unknown {
    return { topic: this.topic, partition: this.partition, offset: this.offset.toString(), timestamp: this.timestamp };
  }
}

const UNSET = Symbol('unset');

/**
 * How a delivered batch reports back to the partition it came from. One object per batch (the
 * fetched partition's), so that settling costs no closure per batch.
 */
export interface BatchSettlement {
  /** The application finished every record before `offset`. */
  progressed(offset: bigint): void;
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
export class ConsumerBatch<K = unknown, V = unknown> implements Iterable<ConsumedRecord<K, V>> {
  private retains = 0;
  private released = false;
  private givenBack = false;
  /** The offset after the last record marked processed, or -1n. */
  private marked = -1n;

  constructor(
    readonly topic: string,
    readonly partition: number,
    readonly records: readonly ConsumedRecord<K, V>[],
    /** The partition's high watermark when this data was fetched. */
    readonly highWatermark: bigint,
    /** The partition's last stable offset (read_committed) when fetched; -1n when unknown. */
    readonly lastStableOffset: bigint,
    /** Where consumption continues after this batch: the last offset + 1 (past any control records). */
    readonly nextOffset: bigint,
    private readonly settlement: BatchSettlement,
    /** When its data arrived from the broker (Date.now()); 0 when unknown. */
    readonly fetchedAt = 0,
  ) {}

  get firstOffset(): bigint {
    return this.records.length ? this.records[0]!.offset : this.nextOffset;
  }

  get lastOffset(): bigint {
    return this.records.length ? this.records[this.records.length - 1]!.offset : this.nextOffset - 1n;
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
  markProcessed(record: ConsumerRecord | bigint | number): void {
    const offset = typeof record === 'object' ? record.offset : BigInt(record);
    if (offset < this.firstOffset || offset > this.lastOffset) {
      throw new ConfigError(`markProcessed: offset ${offset} is not in this batch of ${this.topic}-${this.partition} (${this.firstOffset}..${this.lastOffset})`);
    }
    const next = offset === this.lastOffset ? this.nextOffset : offset + 1n;
    if (next <= this.marked) return;
    this.marked = next;
    this.settlement.progressed(next);
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
    const at = this.records[index]!.offset;
    this.settlement.cut(at);
    this.released = true;
    return new ConsumerBatch(this.topic, this.partition, this.records.slice(0, index), this.highWatermark, this.lastStableOffset, at, this.settlement, this.fetchedAt);
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
}

/**
 * A batch whose commit point is kept elsewhere (a share consumer acknowledges record by record):
 * its settlement only lets go of its memory.
 */
export class ReleaseOnlySettlement implements BatchSettlement {
  constructor(private readonly onRelease: () => void) {}
  progressed(): void {}
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
