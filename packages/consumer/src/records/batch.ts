// A run of one partition's records delivered together (ConsumerBatch), and the FINISHED RULE: what
// releasing, marking and giving a batch back mean for the partition's commit point.
import { inspect, type InspectOptionsStylized } from 'node:util';
import { RecordReleasedError, type RecordBatch } from '@kwire/protocol';
import { CorruptRecordError, UsageError } from '../errors.js';
import { inspectAs } from '../record-json.js';
import type { LazyProgress } from '../state/delivery-ledger.js';
import { BatchCursor } from './cursor.js';
import { ConsumerRecord } from './record.js';
import { scratch } from './scratch.js';
import type { BatchSettlement } from './settlement.js';
import { notConsecutive, RecordSpans, startOf } from './spans.js';

/**
 * A run of consecutive records of one partition, delivered together (at most max.poll.records).
 * Releasing it returns its memory; see the lifetime rule of ConsumerRecord.
 *
 * FINISHED RULE. What the consumer commits is what the application finished, in offset order:
 *  - a batch is finished when it is released (the loop moved on to the next batch, or past its
 *    last record; the callback resolved), or in part with markProcessed(record);
 *  - a batch given back (giveBack(): a loop left early, a callback that threw) finishes only what
 *    was marked, and its partition is delivered again from the first unmarked record;
 *  - the commit point of a partition never passes a batch still held (retained, or in a callback
 *    that has not settled), whatever happens to later batches.
 */
export class ConsumerBatch<K = unknown, V = unknown> implements Iterable<ConsumerRecord<K, V>> {
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
  private list: readonly ConsumerRecord<K, V>[] | null;
  /** Where the records are in their wire batches, when they were not given as objects. */
  private readonly spans: RecordSpans | null;
  private first: bigint | undefined;
  private last: bigint | undefined;
  /** How many records the batch holds (without making them objects: see cursor()). */
  readonly count: number;

  /** @internal Batches are made by the consumer (and by cutBefore()), not by applications. */
  constructor(
    readonly topic: string,
    readonly partition: number,
    /** The records, or (from the fetcher) where they are, to be made objects only if asked for. */
    records: readonly ConsumerRecord<K, V>[] | RecordSpans,
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
  get records(): readonly ConsumerRecord<K, V>[] {
    return this.list ?? this.materialize();
  }

  /** @internal Whether `records` has been made (or was given). */
  get hasRecordObjects(): boolean {
    return this.list !== null;
  }

  private materialize(): readonly ConsumerRecord<K, V>[] {
    const s = this.spans!;
    const out = new Array<ConsumerRecord<K, V>>(s.count);
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
          out[k++] = new ConsumerRecord<K, V>(batch, s.context, at, scratch.offsetDelta, scratch.valueOffset, scratch.valueLength);
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
   * next record), and its bytes until the batch is released (see the lifetime rule of ConsumerRecord).
   */
  cursor(reuse?: BatchCursor): BatchCursor {
    const c = reuse ?? new BatchCursor();
    c.reset(this, this.spans, this.list as readonly ConsumerRecord[] | null);
    return c;
  }

  /** The records' deserializers run before delivery (JSON, functions): see ConsumerRecord.decode(). */
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

  [Symbol.iterator](): Iterator<ConsumerRecord<K, V>> {
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
    // The record objects go with the memory they read (their getters would throw now). Whoever
    // still holds the batch object (a run() loop parked on its next take holds its last one) must
    // not keep thousands of records alive: with run({ eachBatch }) over batches of 5,000, records
    // surviving collections into the old generation halved throughput. Records made from spans can
    // be made again (and throw RecordReleasedError); the offsets they gave are kept.
    if (this.list !== null && this.spans !== null) {
      void this.firstOffset;
      void this.lastOffset;
      this.list = null;
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
