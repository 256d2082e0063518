import { ControlRecordType, readRecordBatches, type BufferPool, type RecordBatch, type RecordBatchReader, type RecordCursor } from '@kwire/protocol';
import type { SharedFrame } from '../connection/shared-frame.js';
import { ConsumerBatch, RecordSpans, type BatchSettlement, type RecordContext, type RecordSpan } from '../records/index.js';
import type { Delivery, LazyProgress } from '../state/delivery-ledger.js';
import type { PartitionState } from '../state/partition-state.js';
import type { SubscriptionState } from '../state/subscription-state.js';
import type { BufferAccount } from './buffer-budget.js';

/**
 * A wire batch whose records are being delivered: its memory (a decompression buffer) is freed
 * when it is fully read AND every delivered slice of it has been released.
 */
class BatchHold {
  slices = 0;
  private finished = false;
  constructor(
    readonly batch: RecordBatch,
    private readonly grown: number,
    private readonly account: BufferAccount,
  ) {}
  releaseSlice(): void {
    if (--this.slices === 0 && this.finished) this.free();
  }
  finish(): void {
    this.finished = true;
    if (this.slices === 0) this.free();
  }
  private free(): void {
    this.batch.release();
    if (this.grown > 0) this.account.add(-this.grown);
  }
}

/**
 * A delivered batch's link back to its partition and its memory: progress and give-backs go to the
 * partition's ledger through the subscription state (the ledger ignores them once a seek or reset
 * has restarted the partition), and the release lets go of the wire batches' slices and the frame.
 */
class DeliveredBatch implements BatchSettlement {
  constructor(
    private readonly subscriptions: SubscriptionState,
    private readonly state: PartitionState,
    private readonly delivery: Delivery,
    private readonly holds: readonly BatchHold[],
    private readonly frame: SharedFrame,
  ) {}

  progressed(offset: bigint): void {
    this.subscriptions.progressed(this.state, this.delivery, offset);
  }

  progressLater(progress: LazyProgress): void {
    this.subscriptions.progressLater(this.state, this.delivery, progress);
  }

  giveBack(): void {
    this.subscriptions.giveBack(this.state, this.delivery);
  }

  cut(offset: bigint): void {
    this.subscriptions.cutDelivery(this.state, this.delivery, offset);
  }

  released(finished: boolean): void {
    this.subscriptions.released(this.state, this.delivery, finished);
    for (const h of this.holds) h.releaseSlice();
    this.frame.release();
  }
}

/** What take() gathered: where the records are and the memory they hold, for batchOf(). */
export interface TakenRecords {
  /** The position they start from. */
  readonly start: bigint;
  /** The offset after the last of them. */
  readonly nextOffset: bigint;
  readonly count: number;
  /** The leader epoch of their last wire batch (committed with them). */
  readonly leaderEpoch: number;
  readonly spans: readonly RecordSpan[];
  readonly holds: readonly unknown[];
}

interface AbortedTransaction {
  producerId: bigint;
  firstOffset: bigint;
}

/** What most answers carry (read_uncommitted, or no aborted transaction): one array for all. */
const NO_ABORTED: readonly AbortedTransaction[] = [];

export interface FetchedPartitionOptions {
  readCommitted: boolean;
  checkCrcs: boolean;
  /** Where decompression output comes from; null: fresh memory (recordBuffers 'owned'). */
  pool: BufferPool | null;
  /** The consumer's maxDecompressedBytes (the codec default when absent). */
  maxDecompressedBytes?: number;
  context: RecordContext;
  /** The partition's buffered bytes: + on arrival and decompression, - when memory is let go. */
  account: BufferAccount;
}

/**
 * One partition's data from one Fetch response, decoded lazily: batch headers when the
 * application pulls, records (and decompression) one wire batch at a time. Does what Java's
 * CompletedFetch does: drops records before the position (a compressed batch can start earlier),
 * hides control records, and under read_committed skips the batches of aborted transactions.
 */
export class FetchedPartition {
  private readonly reader: RecordBatchReader;
  private readonly aborted: readonly AbortedTransaction[];
  private abortedIndex = 0;
  /** Producers whose aborted transaction has begun (read_committed only: made on the first). */
  private abortedProducers: Set<bigint> | undefined;
  private hold: BatchHold | undefined;
  /**
   * Walks the current wire batch when it cannot be delivered whole (the position is inside it, or
   * max.poll.records cuts it): one object for all of this partition's wire batches.
   */
  private cursor: RecordCursor | undefined;
  /**
   * Records of the current wire batch placed by arithmetic (a batch whose offsets are consecutive:
   * see gather): the next part starts at this index. 0 when the cursor walks the batch instead.
   */
  private placed = 0;
  private exhausted = false;
  private readonly size: number;
  /** When the answer arrived (Date.now()), for the record latency metrics. */
  private readonly fetchedAt = Date.now();

  constructor(
    readonly state: PartitionState,
    /** The partition's generation when the fetch was sent: stale data is dropped after a seek. */
    readonly generation: number,
    private readonly frame: SharedFrame,
    records: Buffer,
    readonly highWatermark: bigint,
    readonly lastStableOffset: bigint,
    abortedTransactions: readonly AbortedTransaction[] | null,
    private readonly options: FetchedPartitionOptions,
  ) {
    frame.retain();
    this.reader = readRecordBatches(records, { checkCrc: options.checkCrcs, pool: options.pool, maxDecompressedBytes: options.maxDecompressedBytes });
    this.aborted =
      options.readCommitted && abortedTransactions?.length ? [...abortedTransactions].sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : a.firstOffset > b.firstOffset ? 1 : 0)) : NO_ABORTED;
    this.size = records.length;
    options.account.add(this.size);
  }

  /** Nothing more to deliver. */
  get done(): boolean {
    return this.exhausted;
  }

  /**
   * The next run of at most `max` records at or after `from` (the partition's position), or null
   * when this fetch has no more; `passedTo` then says where the position goes (past control
   * records and aborted batches too). It writes nothing of the partition's state: the collector
   * (FetchCollector) advances the position and records the delivery through the subscription
   * state, then makes the batch with batchOf(). Throws KafkaProtocolError on corrupt data (the
   * caller decides).
   */
  take(max: number, from: bigint): TakenRecords | null {
    // The reference of the batch this may return, taken first: reading to the end of the data
    // (advance() → finish()) drops this partition's own reference, and without one held here the
    // frame would go back to the pool, to be overwritten by the next response, while the batch's
    // records still point into it.
    if (this.exhausted) {
      this.passed = from;
      return null;
    }
    this.frame.retain();
    this.passed = from;
    const spans: RecordSpan[] = [];
    const holds: BatchHold[] = [];
    let nextOffset: bigint;
    try {
      nextOffset = this.gather(spans, holds, max, from);
    } catch (err) {
      // Corrupt data further on: nothing of this call is delivered (the stream fetches again from
      // the position), so the slices taken of earlier batches are given back.
      for (const h of holds) h.releaseSlice();
      this.frame.release();
      throw err;
    }
    if (nextOffset > this.passed) this.passed = nextOffset;
    if (this.gathered === 0) {
      // Only control records or aborted batches were passed: nothing for the application to finish.
      this.frame.release();
      return null;
    }
    const leaderEpoch = holds[holds.length - 1]!.batch.partitionLeaderEpoch;
    return { start: from, nextOffset, count: this.gathered, leaderEpoch, spans, holds };
  }

  /** Where the last take() left the position: past what it returned and what it passed. */
  get passedTo(): bigint {
    return this.passed;
  }

  /** The batch of records a take() returned, settled through `subscriptions` as `delivery`. */
  batchOf(taken: TakenRecords, subscriptions: SubscriptionState, delivery: Delivery): ConsumerBatch {
    const state = this.state;
    const settlement = new DeliveredBatch(subscriptions, state, delivery, taken.holds as BatchHold[], this.frame);
    const records = new RecordSpans(this.options.context, taken.spans, taken.count, taken.start);
    return new ConsumerBatch(state.topic, state.partition, records, this.highWatermark, this.lastStableOffset, taken.nextOffset, settlement, this.fetchedAt);
  }

  /** Records gathered by the last gather(). */
  private gathered = 0;
  /** The position as the last take() moved it: past control records and aborted batches it skipped. */
  private passed = 0n;

  /**
   * Records at or after `from` into `spans` (at most `max`), the batches they hold into `holds`;
   * returns the offset after what it passed. A wire batch that starts at or after `from` and fits
   * in what is left of `max` is taken whole without decoding a record (the application's cursor or
   * `records` decodes it, once); only a batch the position is inside of, or that `max` cuts, is
   * placed here. A batch with consecutive offsets (lastOffsetDelta = recordCount - 1: no compaction
   * gap, the rule for every batch a producer writes) by arithmetic, record i being offset
   * baseOffset + i: its part's start is found when the part is read (RecordBatch.recordStart),
   * where the reading of the part before it ended, so its records are walked once, by the reader,
   * who also checks that each offsetDelta is its index. Any other batch is walked here, by the
   * records' lengths and offset deltas alone (RecordCursor.skip), to find where its part starts or
   * ends.
   */
  private gather(spans: RecordSpan[], holds: BatchHold[], max: number, from: bigint): bigint {
    let nextOffset = from;
    let n = 0;
    while (n < max && !this.exhausted) {
      if (this.hold === undefined && !this.advance()) break;
      const hold = this.hold!;
      const batch = hold.batch;
      const cursor = this.cursor!;
      if (cursor.index === 0 && this.placed === 0 && batch.startsAtOrAfter(nextOffset) && batch.recordCount <= max - n) {
        // Whole: no record before the position, all of them within max.poll.records.
        if (batch.recordCount > 0) {
          spans.push({ batch, position: batch.dataStart, index: 0, count: batch.recordCount });
          n += batch.recordCount;
          hold.slices++;
          holds.push(hold);
        }
        // Past the whole batch, compaction gaps included.
        if (batch.nextOffset > nextOffset) nextOffset = batch.nextOffset;
        this.hold = undefined;
        hold.finish();
        continue;
      }
      const base = batch.baseOffset;
      if (batch.lastOffsetDelta === batch.recordCount - 1) {
        // Consecutive offsets: the part is [index, index + count), its start found when read.
        const index = nextOffset > base ? Math.max(this.placed, Number(nextOffset - base)) : this.placed;
        const count = Math.min(max - n, batch.recordCount - index);
        if (count > 0) {
          spans.push({ batch, position: -1, index, count });
          n += count;
          nextOffset = base + BigInt(index + count);
          hold.slices++;
          holds.push(hold);
        }
        this.placed = index + Math.max(count, 0);
        if (this.placed >= batch.recordCount) {
          if (batch.nextOffset > nextOffset) nextOffset = batch.nextOffset;
          this.hold = undefined;
          hold.finish();
        }
        continue;
      }
      // Offsets as deltas from the batch's base, in plain numbers: no bigint per record. The
      // records are passed by their lengths only (cursor.skip): the application's cursor or
      // `records` decodes them, once.
      // A compressed batch comes whole even when the position is inside it.
      if (nextOffset > base) cursor.skipBefore(Number(nextOffset - base));
      const position = cursor.position;
      const index = cursor.index;
      const count = Math.min(max - n, batch.recordCount - index);
      if (count > 0) {
        const lastDelta = cursor.skip(count);
        spans.push({ batch, position, index, count });
        n += count;
        nextOffset = base + BigInt(lastDelta + 1);
        hold.slices++;
        holds.push(hold);
      }
      if (cursor.index >= batch.recordCount) {
        // The end of the records: next() checks nothing is left after the last.
        cursor.next();
        if (batch.nextOffset > nextOffset) nextOffset = batch.nextOffset;
        this.hold = undefined;
        hold.finish();
      }
    }
    this.gathered = n;
    return nextOffset;
  }

  /** Moves to the next wire batch with records to deliver; false at the end of the data. */
  private advance(): boolean {
    for (;;) {
      const batch = this.reader.next();
      if (batch === null) {
        this.finish();
        return false;
      }
      // Entirely before the position: skip it without decompressing.
      if (batch.nextOffset <= this.passed) continue;
      if (this.options.readCommitted && batch.producerId >= 0n) {
        this.abortedUpTo(batch.lastOffset);
        if (batch.isControl) {
          if (batch.controlType === ControlRecordType.ABORT) this.abortedProducers?.delete(batch.producerId);
        } else if (batch.isTransactional && this.abortedProducers?.has(batch.producerId)) {
          this.passed = batch.nextOffset;
          continue;
        }
      }
      if (batch.isControl) {
        // Commit and abort markers are the consumer's business, never the application's.
        this.passed = batch.nextOffset;
        continue;
      }
      // Decompresses a compressed batch (records are decoded later, by whoever reads them).
      this.cursor = batch.cursor(this.cursor);
      this.placed = 0;
      // A compressed batch now also holds its decompressed records: count them while they live.
      const grown = batch.compression === 'none' ? 0 : batch.recordsSizeInBytes;
      if (grown > 0) this.options.account.add(grown);
      this.hold = new BatchHold(batch, grown, this.options.account);
      return true;
    }
  }

  /** Aborted transactions that started at or before `offset` now apply. */
  private abortedUpTo(offset: bigint): void {
    while (this.abortedIndex < this.aborted.length && this.aborted[this.abortedIndex]!.firstOffset <= offset) {
      (this.abortedProducers ??= new Set()).add(this.aborted[this.abortedIndex++]!.producerId);
    }
  }

  private finish(): void {
    if (this.exhausted) return;
    this.exhausted = true;
    this.options.account.add(-this.size);
    this.frame.release();
  }

  /** Drops what was not delivered (seek, revocation, close). Batches already delivered stay valid. */
  drop(): void {
    if (this.exhausted) return;
    const hold = this.hold;
    this.hold = undefined;
    hold?.finish();
    this.finish();
  }
}
