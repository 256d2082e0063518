import type { MessageStream } from '../streams.js';
import type { ConsumerMeter } from '../metrics/meter.js';
import { DeliveryLedger, type Delivery, type LazyProgress } from './delivery-ledger.js';

/** Where a reset goes: the start or end of the log, or the first record at or after a time. */
export type ResetTarget = 'earliest' | 'latest' | { timestamp: bigint };

export function tpKey(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

/**
 * The consumer's state for one assigned partition. Two positions and a commit point:
 *  - `position`: the next offset to deliver to the application;
 *  - `fetchPosition`: the next offset to fetch: past everything already buffered;
 *  - `processed`: the end of what the application finished, which is what commits carry (behind
 *    `position` while delivered batches are held; see DeliveryLedger).
 * Buffered data covers [position, fetchPosition). All are null until the starting offset is known
 * (a reset through ListOffsets, or a committed offset from the group).
 */
export class PartitionState {
  readonly key: string;
  position: bigint | null = null;
  fetchPosition: bigint | null = null;
  /**
   * A reset asked for (auto.offset.reset, or an explicit seek to the start or end), or a seek to
   * the first record at or after a time (ms; the end of the log when there is none).
   */
  reset: ResetTarget | null = null;
  /** Bumped on every seek or reset: answers to fetches sent before are dropped. */
  generation = 0;
  paused = false;
  /** Bytes of fetched, undelivered data for this partition (decompressed size once known). */
  bufferedBytes = 0;
  /** A fetch for this partition is on the wire. */
  inFlight = false;
  /** From the last fetch response. */
  highWatermark = -1n;
  lastStableOffset = -1n;
  logStartOffset = -1n;
  /** Node to fetch from instead of the leader (KIP-392), until `preferredUntil`. */
  preferredReadReplica = -1;
  preferredUntil = 0;
  /** A leader hint from a NOT_LEADER / FENCED answer (KIP-951), used until metadata catches up. */
  leaderHint: { leaderId: number; leaderEpoch: number } | undefined;
  /** Not before this time (ms): after a retriable error. */
  backoffUntil = 0;
  /**
   * KIP-320. The leader epoch of the last batch fetched (or of the committed offset restored): sent
   * as a Fetch's lastFetchedEpoch, and the epoch whose end validates the position. -1 when unknown.
   */
  lastFetchedEpoch = -1;
  /** The position waits for OffsetForLeaderEpoch to confirm the leader's log still holds it. */
  validation: 'none' | 'due' | 'sent' = 'none';
  /** The validation under way was asked for by OFFSET_OUT_OF_RANGE: no truncation means a reset. */
  validatingOutOfRange = false;
  /** The leader epoch (from metadata) the position was last fetched or validated under. */
  leaderEpochSeen = -1;
  /** An error the application must see (auto.offset.reset=none, authorization). */
  error: Error | undefined;
  /**
   * The consumer-wide count of delivered, unreleased batches (shared by every partition state, and
   * kept when a partition is revoked: a batch the application still holds still counts for
   * max.poll.interval.ms).
   */
  heldBatches: { count: number } = { count: 0 };
  /** Where releases are counted (shared, like heldBatches). */
  meter: ConsumerMeter | undefined;
  /** Being handed over in a rebalance: nothing more is delivered from it. */
  revoking = false;
  /** What the application finished: the only source of commit offsets (see DeliveryLedger). */
  private readonly ledger = new DeliveryLedger();
  /** Batches delivered whose memory the application still holds (settled or not). */
  private outstanding = 0;
  private readonly waiters: (() => void)[] = [];

  constructor(
    readonly topic: string,
    readonly partition: number,
    public stream: MessageStream,
  ) {
    this.key = tpKey(topic, partition);
  }

  /**
   * The offset a commit carries: the end of the contiguous run of records the application finished
   * (null until the partition has a starting offset). With the leader epoch of its last record.
   */
  get processed(): bigint | null {
    return this.ledger.commitPoint;
  }

  get processedLeaderEpoch(): number {
    return this.ledger.commitPointEpoch;
  }

  /** Delivered batches the application has not released yet. */
  get unreleased(): number {
    return this.outstanding;
  }

  /** The application (or a seek, a committed offset, a reset) moves the partition to `offset`. */
  seek(offset: bigint, leaderEpoch = -1): void {
    this.position = offset;
    this.fetchPosition = offset;
    this.ledger.restart(offset, leaderEpoch);
    // An offset that comes with its epoch (a committed one) is checked against the leader's log
    // before it is fetched: the log may have been truncated below it since (KIP-320).
    this.lastFetchedEpoch = leaderEpoch;
    this.validation = leaderEpoch >= 0 ? 'due' : 'none';
    this.validatingOutOfRange = false;
    this.reset = null;
    this.generation++;
    this.error = undefined;
  }

  /**
   * Buffered data is dropped and fetched again from the position (the partition moved to another
   * stream): nothing delivered changes.
   */
  refetch(): void {
    if (this.position === null) return;
    this.fetchPosition = this.position;
    this.generation++;
  }

  /** A batch of this partition, [start, next), `records` records, goes to the application. */
  delivered(start: bigint, next: bigint, leaderEpoch: number, records = 0): Delivery {
    this.outstanding++;
    this.heldBatches.count++;
    const d = this.ledger.delivered(start, next, leaderEpoch);
    d.deliveredAt = performance.now();
    d.records = records;
    return d;
  }

  /** The position passed records that are never delivered (control records, aborted batches). */
  skipped(from: bigint, to: bigint): void {
    this.ledger.skipped(from, to);
  }

  /** The application finished the records of a delivery before `offset`. */
  progressed(d: Delivery, offset: bigint): void {
    this.ledger.progressed(d, offset);
  }

  /** The application's progress on a delivery is counted by `progress`, reported when a commit asks. */
  progressLater(d: Delivery, progress: LazyProgress): void {
    this.ledger.progressLater(d, progress);
  }

  /**
   * A delivered batch was released. `finished`: the application is done with all of it; otherwise
   * it let it go with records unfinished (already settled by giveBack()).
   */
  released(d: Delivery, finished: boolean): void {
    this.outstanding--;
    this.heldBatches.count--;
    if (finished) this.ledger.finished(d);
    this.meter?.released(this.topic, this.partition, d.records, performance.now() - d.deliveredAt);
    if (this.outstanding === 0) for (const w of this.waiters.splice(0)) w();
  }

  /**
   * The application gives a delivery back with records unfinished: the commit point stops at its
   * first unfinished record, and the partition is delivered again from there (buffered data and
   * fetches in flight are dropped). Returns the offset it starts again from, or null if nothing
   * needed redelivery.
   */
  giveBack(d: Delivery): bigint | null {
    const from = this.ledger.abandoned(d);
    if (from === null) return null;
    this.position = from;
    this.fetchPosition = from;
    this.generation++;
    this.stream.dropPartition(this.key);
    return from;
  }

  /**
   * A delivery is cut short at `offset` (the records from there were not handed over): the
   * partition is delivered again from there, buffered data and fetches in flight dropped.
   */
  cutDelivery(d: Delivery, offset: bigint): void {
    if (!this.ledger.cut(d, offset)) return;
    this.position = offset;
    this.fetchPosition = offset;
    this.generation++;
    this.stream.dropPartition(this.key);
  }

  /** Resolves when every delivered batch of the partition has been released (or after `ms`). */
  whenReleased(ms: number): Promise<boolean> {
    if (this.outstanding <= 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  requestReset(policy: ResetTarget): void {
    this.position = null;
    this.fetchPosition = null;
    this.reset = policy;
    this.ledger.clear();
    this.lastFetchedEpoch = -1;
    this.validation = 'none';
    this.generation++;
  }
}
