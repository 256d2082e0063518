import { ControlRecordType, readRecordBatches, type BufferPool, type RecordBatch, type RecordBatchReader, type RecordCursor } from '@kwire/protocol';
import { ConsumerBatch, RecordSpans, type BatchSettlement, type RecordContext, type RecordSpan } from '../records.js';
import type { Delivery, LazyProgress } from '../state/delivery-ledger.js';
import type { PartitionState } from '../state/partition-state.js';

/**
 * A response frame shared by the partitions it carries: released when the last of them, and the
 * last batch delivered from it, lets go.
 */
export class SharedFrame {
  private refs = 1;
  constructor(private readonly releaseFrame: () => void) {}
  retain(): void {
    this.refs++;
  }
  release(): void {
    // Once at zero the frame is gone: a stray release must not hand it to the pool a second time.
    if (this.refs <= 0) return;
    if (--this.refs === 0) this.releaseFrame();
  }
}

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
    private readonly onBytes: (delta: number) => void,
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
    if (this.grown > 0) this.onBytes(-this.grown);
  }
}

/**
 * A delivered batch's link back to its partition and its memory: progress and give-backs go to the
 * partition's ledger (which ignores them once a seek or reset has restarted the partition), and the
 * release lets go of the wire batches' slices and the frame.
 */
class DeliveredBatch implements BatchSettlement {
  constructor(
    private readonly state: PartitionState,
    private readonly delivery: Delivery,
    private readonly holds: readonly BatchHold[],
    private readonly frame: SharedFrame,
  ) {}

  progressed(offset: bigint): void {
    this.state.progressed(this.delivery, offset);
  }

  progressLater(progress: LazyProgress): void {
    this.state.progressLater(this.delivery, progress);
  }

  giveBack(): void {
    this.state.giveBack(this.delivery);
  }

  cut(offset: bigint): void {
    this.state.cutDelivery(this.delivery, offset);
  }

  released(finished: boolean): void {
    this.state.released(this.delivery, finished);
    for (const h of this.holds) h.releaseSlice();
    this.frame.release();
  }
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
  pool: BufferPool;
  /** The consumer's maxDecompressedBytes (the codec default when absent). */
  maxDecompressedBytes?: number;
  context: RecordContext;
  /** Buffered bytes changed: + on arrival and decompression, - when memory is let go. */
  onBytes: (delta: number) => void;
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
    options.onBytes(this.size);
  }

  /** Nothing more to deliver. */
  get done(): boolean {
    return this.exhausted;
  }

  /**
   * The next run of at most `max` records at or after the partition's position, or null when this
   * fetch has no more. Advances the position past what it returns, and past control records and
   * aborted batches it skips. Throws KafkaProtocolError on corrupt data (the caller decides).
   */
  next(max: number): ConsumerBatch | null {
    // The reference of the batch this may return, taken first: reading to the end of the data
    // (advance() → finish()) drops this partition's own reference, and without one held here the
    // frame would go back to the pool, to be overwritten by the next response, while the batch's
    // records still point into it.
    if (this.exhausted) return null;
    this.frame.retain();
    let batch: ConsumerBatch | null = null;
    try {
      batch = this.collect(max);
      return batch;
    } finally {
      if (batch === null) this.frame.release();
    }
  }

  private collect(max: number): ConsumerBatch | null {
    const state = this.state;
    const spans: RecordSpan[] = [];
    const holds: BatchHold[] = [];
    const start = state.position!;
    let nextOffset: bigint;
    try {
      nextOffset = this.gather(spans, holds, max, start);
    } catch (err) {
      // Corrupt data further on: nothing of this call is delivered (the stream fetches again from
      // the position), so the slices taken of earlier batches are given back.
      for (const h of holds) h.releaseSlice();
      throw err;
    }
    if (nextOffset > state.position!) state.position = nextOffset;
    if (this.gathered === 0) {
      // Only control records or aborted batches were passed: nothing for the application to finish.
      state.skipped(start, state.position!);
      return null;
    }
    const count = this.gathered;
    const leaderEpoch = holds[holds.length - 1]!.batch.partitionLeaderEpoch;
    const delivery = state.delivered(start, nextOffset, leaderEpoch, count);
    const settlement = new DeliveredBatch(state, delivery, holds, this.frame);
    const records = new RecordSpans(this.options.context, spans, count, start);
    return new ConsumerBatch(state.topic, state.partition, records, this.highWatermark, this.lastStableOffset, nextOffset, settlement, this.fetchedAt);
  }

  /** Records gathered by the last gather(). */
  private gathered = 0;

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
    const state = this.state;
    for (;;) {
      const batch = this.reader.next();
      if (batch === null) {
        this.finish();
        return false;
      }
      // Entirely before the position: skip it without decompressing.
      if (batch.nextOffset <= state.position!) continue;
      if (this.options.readCommitted && batch.producerId >= 0n) {
        this.abortedUpTo(batch.lastOffset);
        if (batch.isControl) {
          if (batch.controlType === ControlRecordType.ABORT) this.abortedProducers?.delete(batch.producerId);
        } else if (batch.isTransactional && this.abortedProducers?.has(batch.producerId)) {
          state.position = batch.nextOffset;
          continue;
        }
      }
      if (batch.isControl) {
        // Commit and abort markers are the consumer's business, never the application's.
        state.position = batch.nextOffset;
        continue;
      }
      // Decompresses a compressed batch (records are decoded later, by whoever reads them).
      this.cursor = batch.cursor(this.cursor);
      this.placed = 0;
      // A compressed batch now also holds its decompressed records: count them while they live.
      const grown = batch.compression === 'none' ? 0 : batch.recordsSizeInBytes;
      if (grown > 0) this.options.onBytes(grown);
      this.hold = new BatchHold(batch, grown, this.options.onBytes);
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
    this.options.onBytes(-this.size);
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
