import type { ConsumerMeter } from '../metrics/meter.js';
import { DeliveryLedger, type Delivery, type LazyProgress } from './delivery-ledger.js';

/** Where a reset goes: the start or end of the log, or the first record at or after a time. */
export type ResetTarget = 'earliest' | 'latest' | { timestamp: bigint };

export { tpKey } from '../tp-key.js';
import { tpKey } from '../tp-key.js';

/**
 * Where a partition's fetching stands (Java's FetchStates):
 *  - 'awaiting-reset': no position; a reset (ListOffsets) is due, or the group or the application
 *    has not given one yet (no target);
 *  - 'awaiting-validation': the position waits for OffsetForLeaderEpoch to confirm the leader's log
 *    still holds it (KIP-320), which is due;
 *  - 'validating': that check is on the wire;
 *  - 'fetching': the position is known and good: fetched when nothing else holds it back;
 *  - 'failed': an error the application must see (auto.offset.reset none, authorization);
 *    a seek or a reset leaves it.
 */
export type FetchState = 'awaiting-reset' | 'awaiting-validation' | 'validating' | 'fetching' | 'failed';

const ANY: readonly FetchState[] = ['awaiting-reset', 'awaiting-validation', 'validating', 'fetching', 'failed'];

/**
 * Every transition of the fetch state, by the method that makes it: the states it may start from.
 * A transition from anywhere else is a bug in the caller (an answer applied to a partition that
 * moved on), refused with an IllegalStateError rather than applied.
 */
export const TRANSITIONS = {
  requestReset: ANY,
  resetTo: ['awaiting-reset'],
  seek: ANY,
  requestValidation: ['fetching', 'awaiting-validation', 'validating'],
  validationSent: ['awaiting-validation'],
  validationRetry: ['validating', 'awaiting-validation'],
  completeValidation: ['validating', 'fetching'],
  fail: ['awaiting-reset', 'awaiting-validation', 'validating', 'fetching'],
} as const satisfies Record<string, readonly FetchState[]>;

export type Transition = keyof typeof TRANSITIONS;

/** Delivered batches the application holds, consumer-wide (see PartitionState's constructor). */
export interface HeldBatches {
  count: number;
  releasedAt: number;
}

/** A fetch-state transition asked for from a state it does not start from. */
export class IllegalStateError extends Error {
  override name = 'IllegalStateError';
}

/**
 * The consumer's state for one assigned partition. Two positions and a commit point:
 *  - `position`: the next offset to deliver to the application;
 *  - `fetchPosition`: the next offset to fetch: past everything already buffered;
 *  - `processed`: the end of what the application finished, which is what commits carry (behind
 *    `position` while delivered batches are held; see DeliveryLedger).
 * Buffered data covers [position, fetchPosition). Both positions are null until the starting
 * offset is known (a reset through ListOffsets, or a committed offset from the group).
 *
 * Every field is private: SubscriptionState changes a partition through the methods here (nothing
 * outside state/ calls them), and everyone else reads.
 */
export class PartitionState {
  readonly key: string;
  private fetchState: FetchState = 'awaiting-reset';
  private _position: bigint | null = null;
  private _fetchPosition: bigint | null = null;
  private _resetTarget: ResetTarget | null = null;
  private _generation = 0;
  private _paused = false;
  private _revoking = false;
  private _inFlight = false;
  private _highWatermark = -1n;
  private _lastStableOffset = -1n;
  private _logStartOffset = -1n;
  private _preferredReadReplica = -1;
  private _preferredUntil = 0;
  private _leaderHint: { leaderId: number; leaderEpoch: number } | undefined;
  private _backoffUntil = 0;
  private _lastFetchedEpoch = -1;
  private _validatingOutOfRange = false;
  private _leaderEpochSeen = -1;
  private _error: Error | undefined;
  /** What the application finished: the only source of commit offsets (see DeliveryLedger). */
  private readonly ledger = new DeliveryLedger();
  /** Batches delivered whose memory the application still holds (settled or not). */
  private outstanding = 0;
  private readonly waiters: (() => void)[] = [];

  constructor(
    readonly topic: string,
    readonly partition: number,
    /**
     * The consumer-wide count of delivered, unreleased batches (shared by every partition state,
     * and kept when a partition is revoked: a batch the application still holds still counts for
     * max.poll.interval.ms), and when one was last released (Date.now(): the application is
     * making progress while it releases batches, even if it always holds some, as run() with
     * maxConcurrency does).
     */
    private readonly heldBatches: HeldBatches = { count: 0, releasedAt: 0 },
    /** Where releases are counted. */
    private readonly meter?: ConsumerMeter,
  ) {
    this.key = tpKey(topic, partition);
  }

  // ------------------------------------------------------------------ reads

  get state(): FetchState {
    return this.fetchState;
  }
  get position(): bigint | null {
    return this._position;
  }
  get fetchPosition(): bigint | null {
    return this._fetchPosition;
  }
  /** A reset asked for (auto.offset.reset, a seek to the start, end or a time); null when none. */
  get resetTarget(): ResetTarget | null {
    return this._resetTarget;
  }
  /** Bumped on every seek, reset, give-back or move: data and answers from before are stale. */
  get generation(): number {
    return this._generation;
  }
  get paused(): boolean {
    return this._paused;
  }
  /** Being handed over in a rebalance: nothing more is delivered from it. */
  get revoking(): boolean {
    return this._revoking;
  }
  /** A fetch for this partition is on the wire. */
  get inFlight(): boolean {
    return this._inFlight;
  }
  /** From the last fetch answer that carried them (-1n before one). */
  get highWatermark(): bigint {
    return this._highWatermark;
  }
  get lastStableOffset(): bigint {
    return this._lastStableOffset;
  }
  get logStartOffset(): bigint {
    return this._logStartOffset;
  }
  /** Node to fetch from instead of the leader (KIP-392) until `preferredUntil`; -1 when none. */
  get preferredReadReplica(): number {
    return this._preferredReadReplica;
  }
  get preferredUntil(): number {
    return this._preferredUntil;
  }
  /** A leader named by a NOT_LEADER / FENCED answer (KIP-951), used until metadata catches up. */
  get leaderHint(): { readonly leaderId: number; readonly leaderEpoch: number } | undefined {
    return this._leaderHint;
  }
  /** Not fetched before this time (ms): after a retriable error or a processing failure. */
  get backoffUntil(): number {
    return this._backoffUntil;
  }
  /**
   * KIP-320. The leader epoch of the last batch fetched (or of the committed offset restored): sent
   * as a Fetch's lastFetchedEpoch, and the epoch whose end validates the position. -1 when unknown.
   */
  get lastFetchedEpoch(): number {
    return this._lastFetchedEpoch;
  }
  /** The validation under way was asked for by OFFSET_OUT_OF_RANGE: no truncation means a reset. */
  get validatingOutOfRange(): boolean {
    return this._validatingOutOfRange;
  }
  /** The leader epoch (from metadata) the position was last fetched or validated under. */
  get leaderEpochSeen(): number {
    return this._leaderEpochSeen;
  }
  /** The error the application must see while 'failed'. */
  get error(): Error | undefined {
    return this._error;
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

  /** Whether records beyond the commit point are already finished (see DeliveryLedger). */
  get hasFinishedAhead(): boolean {
    return this.ledger.hasFinishedAhead;
  }

  isFinishedAhead(offset: bigint): boolean {
    return this.ledger.isFinishedAhead(offset);
  }

  /** The records finished beyond the commit point, in order (what commit metadata carries). */
  finishedBeyondPoint(): { offsets: bigint[]; version: number } {
    return this.ledger.finishedBeyondPoint();
  }

  /** Delivered batches the application has not released yet. */
  get unreleased(): number {
    return this.outstanding;
  }

  // ------------------------------------------------ changes (SubscriptionState's)

  private transition(method: Transition, to: FetchState): void {
    const from: readonly FetchState[] = TRANSITIONS[method];
    if (!from.includes(this.fetchState)) throw new IllegalStateError(`${this.topic}-${this.partition}: ${method} from ${this.fetchState} (to ${to}) is not a transition`);
    this.fetchState = to;
  }

  /** The next record comes from `offset`; with the epoch it came with, validated first (KIP-320). */
  seek(offset: bigint, leaderEpoch = -1): void {
    this.transition('seek', leaderEpoch >= 0 ? 'awaiting-validation' : 'fetching');
    this.moveTo(offset, leaderEpoch);
  }

  private moveTo(offset: bigint, leaderEpoch: number): void {
    this._position = offset;
    this._fetchPosition = offset;
    this.ledger.restart(offset, leaderEpoch);
    this._lastFetchedEpoch = leaderEpoch;
    this._validatingOutOfRange = false;
    this._resetTarget = null;
    this._generation++;
    this._error = undefined;
  }

  requestReset(target: ResetTarget): void {
    this.transition('requestReset', 'awaiting-reset');
    this._position = null;
    this._fetchPosition = null;
    this._resetTarget = target;
    this.ledger.clear();
    this._lastFetchedEpoch = -1;
    this._validatingOutOfRange = false;
    this._generation++;
    this._error = undefined;
  }

  /** The reset found its offset (ListOffsets). */
  resetTo(offset: bigint): void {
    this.transition('resetTo', 'fetching');
    this.moveTo(offset, -1);
  }

  /** The position is to be checked against the leader's log (a new leader; an out-of-range answer). */
  requestValidation(outOfRange = false): void {
    this.transition('requestValidation', 'awaiting-validation');
    if (outOfRange) this._validatingOutOfRange = true;
  }

  validationSent(): void {
    this.transition('validationSent', 'validating');
  }

  /** The check could not be made (no answer, a retriable error, a position that moved): due again. */
  validationRetry(): void {
    this.transition('validationRetry', 'awaiting-validation');
  }

  /** The leader's log holds the position: fetching goes on from it. */
  completeValidation(): void {
    this.transition('completeValidation', 'fetching');
    this._validatingOutOfRange = false;
  }

  /** The check found the log truncated below the position: it goes on from `offset` (KIP-320). */
  truncatedTo(offset: bigint, leaderEpoch: number): void {
    this.transition('completeValidation', 'fetching');
    this.moveTo(offset, leaderEpoch);
  }

  fail(error: Error): void {
    this.transition('fail', 'failed');
    this._error = error;
  }

  /** A new leader epoch from metadata; returns whether the position should be validated under it. */
  leaderEpochChanged(epoch: number): boolean {
    if (epoch <= this._leaderEpochSeen) return false;
    const check = this._leaderEpochSeen >= 0 && this._lastFetchedEpoch >= 0 && this.fetchState === 'fetching';
    this._leaderEpochSeen = epoch;
    return check;
  }

  fetchSent(): void {
    this._inFlight = true;
  }

  /** The fetch came back (or failed): with the answer's watermarks, where they are known (>= 0). */
  fetchAnswered(highWatermark = -1n, lastStableOffset = -1n, logStartOffset = -1n): void {
    this._inFlight = false;
    if (highWatermark >= 0n) this._highWatermark = highWatermark;
    if (lastStableOffset >= 0n) this._lastStableOffset = lastStableOffset;
    if (logStartOffset >= 0n) this._logStartOffset = logStartOffset;
  }

  /** Data up to `nextOffset` was fetched (buffered), the last of it in `lastEpoch`. */
  fetched(nextOffset: bigint, lastEpoch: number): void {
    if (nextOffset > this._fetchPosition!) this._fetchPosition = nextOffset;
    if (lastEpoch >= 0) this._lastFetchedEpoch = lastEpoch;
  }

  preferReplica(node: number, until: number): void {
    this._preferredReadReplica = node;
    this._preferredUntil = until;
  }

  hintLeader(hint: { leaderId: number; leaderEpoch: number } | undefined): void {
    this._leaderHint = hint;
  }

  backOffUntil(time: number): void {
    this._backoffUntil = time;
  }

  pause(): void {
    this._paused = true;
  }

  resume(): void {
    this._paused = false;
  }

  revoke(): void {
    this._revoking = true;
  }

  /**
   * Buffered data is dropped and fetched again from the position (the partition moved to another
   * stream, or it is no longer assigned): nothing delivered changes.
   */
  refetch(): void {
    this._generation++;
    if (this._position !== null) this._fetchPosition = this._position;
  }

  /** The application's next record is at `offset` (records were handed over or passed: control records, aborted batches). */
  advance(offset: bigint): void {
    if (offset > this._position!) this._position = offset;
  }

  // ------------------------------------------------------------- the ledger

  /** A batch of this partition, [start, next), `records` records, goes to the application. */
  delivered(start: bigint, next: bigint, leaderEpoch: number, records = 0): Delivery {
    this.outstanding++;
    this.heldBatches.count++;
    const d = this.ledger.delivered(start, next, leaderEpoch);
    d.deliveredAt = performance.now();
    d.records = records;
    return d;
  }

  /** A record beyond the commit point was finished out of order, or the group's metadata says it was. */
  finishedAhead(offset: bigint): void {
    this.ledger.finishedAhead(offset);
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
    this.heldBatches.releasedAt = Date.now();
    if (finished) this.ledger.finished(d);
    this.meter?.released(this.topic, this.partition, d.records, performance.now() - d.deliveredAt);
    if (this.outstanding === 0) for (const w of this.waiters.splice(0)) w();
  }

  /**
   * The application gives a delivery back with records unfinished: the commit point stops at its
   * first unfinished record, and the partition goes on from there (what is buffered is stale).
   * Returns the offset it starts again from, or null if nothing needed redelivery.
   */
  giveBack(d: Delivery): bigint | null {
    const from = this.ledger.abandoned(d);
    if (from === null) return null;
    this._position = from;
    this._fetchPosition = from;
    this._generation++;
    return from;
  }

  /**
   * A delivery is cut short at `offset` (the records from there were not handed over): the
   * partition goes on from there (what is buffered is stale). Returns whether it was cut.
   */
  cutDelivery(d: Delivery, offset: bigint): boolean {
    if (!this.ledger.cut(d, offset)) return false;
    this._position = offset;
    this._fetchPosition = offset;
    this._generation++;
    return true;
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
}
