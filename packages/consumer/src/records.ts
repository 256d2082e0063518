import type { Record as WireRecord, RecordHeader } from '@kwire/protocol';
import type { Deserializer } from './config.js';

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

type Deserialize = (data: Buffer | null, topic: string, partition: number, part: 'key' | 'value') => unknown;

export function deserializerFor(d: Deserializer): Deserialize {
  if (d === 'buffer') return (data) => data;
  if (d === 'string') return (data) => (data === null ? null : data.toString('utf8'));
  if (d === 'json') return (data) => (data === null ? null : JSON.parse(data.toString('utf8')));
  return (data, topic, partition, part) => d(data, { topic, partition, part });
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
}

/**
 * One record as the application sees it: a thin wrapper over the wire record (which holds only
 * positions into the batch's bytes). Keys and values are deserialized when read, once.
 */
export class ConsumedRecord<K = unknown, V = unknown> implements ConsumerRecord<K, V> {
  private k: unknown = UNSET;
  private v: unknown = UNSET;

  constructor(
    readonly wire: WireRecord,
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
      this.k = c.keyIsBuffer ? this.wire.key : c.key(this.wire.key, c.topic, c.partition, 'key');
    }
    return this.k as K;
  }

  get value(): V {
    if (this.v === UNSET) {
      const c = this.context;
      const w = this.wire;
      // Strings straight from the batch bytes, without a Buffer view in between.
      if (c.valueIsString) this.v = w.valueLength < 0 ? null : w.valueString();
      else this.v = c.valueIsBuffer ? w.value : c.value(w.value, c.topic, c.partition, 'value');
    }
    return this.v as V;
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
 * A run of consecutive records of one partition, delivered together (at most max.poll.records).
 * Releasing it returns its memory; see the lifetime rule above.
 */
export class ConsumerBatch<K = unknown, V = unknown> implements Iterable<ConsumedRecord<K, V>> {
  private retains = 0;
  private released = false;

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
    private readonly onRelease: () => void,
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

  /** Lets the batch go: the last release (one per retain, plus the consumer's own) frees it. */
  release(): void {
    if (this.released) return;
    if (this.retains > 0) {
      this.retains--;
      return;
    }
    this.released = true;
    this.onRelease();
  }

  get isReleased(): boolean {
    return this.released;
  }
}
