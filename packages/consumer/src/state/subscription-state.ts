import { UsageError } from '../errors.js';
import type { ConsumerMeter } from '../metrics/meter.js';
import type { Delivery, LazyProgress } from './delivery-ledger.js';
import { PartitionState, tpKey, type HeldBatches, type ResetTarget } from './partition-state.js';
import type { TopicPartition } from '@kwire/protocol';

/** One partition of one topic: the one type for it, from @kwire/protocol. */
export type { TopicPartition } from '@kwire/protocol';

/**
 * Where fetched data waits for the application (the consumer's streams, through their router):
 * told when a partition's buffered data is stale, and when the application must see an error.
 */
export interface BufferedData {
  /** Drops what is buffered, undelivered, for the partition (a seek, a reset, a give-back, a revocation). */
  drop(state: PartitionState): void;
  /** The partition's reader gets `error` with its next pull. */
  fail(state: PartitionState, error: Error): void;
  /** The partition's reader should look again (it was resumed). */
  wake(state: PartitionState): void;
}

/**
 * The one owner of every assigned partition's state (Java's SubscriptionState): the consumer, the
 * group manager, the fetcher, the fetch collector and the run loops change a partition only
 * through the methods here, named as Java's, and each change that a fetch decision depends on
 * wakes the fetcher. The fetch state moves by checked transitions (PartitionState.TRANSITIONS);
 * a change that makes buffered data stale drops it where it waits (BufferedData). What the
 * application finished lives in each partition's DeliveryLedger, moved by the batches it
 * delivered through settle methods here.
 */
export class SubscriptionState {
  private readonly states = new Map<string, PartitionState>();
  /**
   * Delivered batches the application has not released yet, over every partition (shared by every
   * partition state, and kept when a partition is removed: a batch the application still holds
   * still counts for max.poll.interval.ms).
   */
  readonly heldBatches: HeldBatches = { count: 0, releasedAt: 0 };
  private buffered: BufferedData = { drop() {}, fail() {}, wake() {} };

  /** `changed`: something a fetch decision depends on changed (the fetcher's schedule()). */
  constructor(
    private readonly changed: () => void,
    private readonly meter?: ConsumerMeter,
  ) {}

  /** Where buffered data waits (set once by the consumer, which builds both). */
  bufferIn(buffered: BufferedData): void {
    this.buffered = buffered;
  }

  get size(): number {
    return this.states.size;
  }

  /** Every assigned partition's state, for the fetcher's pass (in assignment order). */
  values(): IterableIterator<PartitionState> {
    return this.states.values();
  }

  get(key: string): PartitionState | undefined {
    return this.states.get(key);
  }

  /** The state of an assigned partition; a UsageError naming it when it is not assigned. */
  of(tp: TopicPartition): PartitionState {
    const state = this.states.get(tpKey(tp.topic, tp.partition));
    if (!state) throw new UsageError(`${tp.topic}-${tp.partition} is not assigned to this consumer`);
    return state;
  }

  assigned(): TopicPartition[] {
    return [...this.states.values()].map((p) => ({ topic: p.topic, partition: p.partition }));
  }

  /** A new partition's state, not yet assigned: position it (seek, requestReset, fail), then add(). */
  create(topic: string, partition: number): PartitionState {
    return new PartitionState(topic, partition, this.heldBatches, this.meter);
  }

  /** A partition starts being fetched (its start offset set, or a reset asked for). */
  add(state: PartitionState): void {
    this.states.set(state.key, state);
    this.changed();
  }

  /** A partition stops being fetched (revoked, unassigned); what is buffered for it is dropped. */
  remove(key: string): PartitionState | undefined {
    const state = this.states.get(key);
    if (state) {
      this.states.delete(key);
      state.refetch();
      this.buffered.drop(state);
    }
    return state;
  }

  /** A partition the group lost (session expiry, fencing): removed at once, nothing committed. */
  markLost(key: string): PartitionState | undefined {
    return this.remove(key);
  }

  /** A partition being handed over: nothing more is delivered from it. */
  revoke(state: PartitionState): void {
    state.revoke();
  }

  /**
   * The next record of a partition comes from `offset` (with the leader epoch it came with, when
   * known: the position is then validated, KIP-320), from the start or end of its log, or from the
   * first record at or after a time.
   */
  seek(state: PartitionState, offset: bigint | ResetTarget, leaderEpoch = -1): void {
    this.buffered.drop(state);
    if (typeof offset === 'bigint') state.seek(offset, leaderEpoch);
    else state.requestReset(offset);
    this.changed();
  }

  /** A reset by auto.offset.reset (an out-of-range position): what is buffered is dropped. */
  requestReset(state: PartitionState, target: ResetTarget): void {
    this.seek(state, target);
  }

  /** The reset found the offset to start from (ListOffsets). */
  resetTo(state: PartitionState, offset: bigint): void {
    state.resetTo(offset);
    this.changed();
  }

  /** The position is to be checked against the leader's log before it is fetched (KIP-320). */
  requestValidation(state: PartitionState, outOfRange = false): void {
    state.requestValidation(outOfRange);
    this.changed();
  }

  /** OffsetForLeaderEpoch for the position is on the wire. */
  validationSent(state: PartitionState): void {
    state.validationSent();
  }

  /** The check is due again after `backoffMs` (no answer, a retriable error). */
  retryValidation(state: PartitionState, backoffMs: number): void {
    if (state.state === 'validating' || state.state === 'awaiting-validation') state.validationRetry();
    this.backOffState(state, backoffMs);
  }

  /** The leader's log holds the position: fetching goes on. */
  completeValidation(state: PartitionState): void {
    state.completeValidation();
    this.changed();
  }

  /**
   * The log was truncated below the position (KIP-320): the partition goes on from `offset`, the
   * first offset known to diverge, in `epoch`.
   */
  truncatedTo(state: PartitionState, offset: bigint, epoch: number): void {
    this.buffered.drop(state);
    state.truncatedTo(offset, epoch);
    this.changed();
  }

  /** A new leader epoch in metadata: the position is validated when it may have been truncated. */
  leaderEpochChanged(state: PartitionState, epoch: number): void {
    if (state.leaderEpochChanged(epoch)) state.requestValidation();
  }

  /** An error the application must see: the partition is not fetched until it seeks. */
  fail(state: PartitionState, error: Error): void {
    state.fail(error);
    this.buffered.fail(state, error);
  }

  fetchSent(state: PartitionState): void {
    state.fetchSent();
  }

  /** The fetch came back (or failed): with the answer's watermarks, where it carried them. */
  fetchAnswered(state: PartitionState, highWatermark?: bigint, lastStableOffset?: bigint, logStartOffset?: bigint): void {
    state.fetchAnswered(highWatermark, lastStableOffset, logStartOffset);
  }

  /** Data up to `nextOffset` was fetched and buffered, its last batch in `lastEpoch`. */
  fetched(state: PartitionState, nextOffset: bigint, lastEpoch: number): void {
    state.fetched(nextOffset, lastEpoch);
  }

  /** Fetch from `node` instead of the leader until `until` (KIP-392); -1 to go back to the leader. */
  preferReplica(state: PartitionState, node: number, until = 0): void {
    state.preferReplica(node, until);
  }

  /** A leader named by an error answer (KIP-951); undefined once metadata knows better. */
  hintLeader(state: PartitionState, hint: { leaderId: number; leaderEpoch: number } | undefined): void {
    state.hintLeader(hint);
  }

  /** The application's next record of the partition is at `offset` (the collector handed records over, or passed some). */
  advance(state: PartitionState, offset: bigint): void {
    state.advance(offset);
  }

  /** Buffered data of the partition is dropped and fetched again from the position (it moved to another stream). */
  refetch(state: PartitionState): void {
    this.buffered.drop(state);
    state.refetch();
    this.changed();
  }

  /** Corrupt data at the position: what is buffered is dropped and fetched again (and fails again until a seek). */
  refetchCorrupt(state: PartitionState): void {
    state.refetch();
    this.changed();
  }

  // ------------------------------------------- what the application finished

  /** A batch of the partition, [start, next), goes to the application. */
  delivered(state: PartitionState, start: bigint, next: bigint, leaderEpoch: number, records: number): Delivery {
    return state.delivered(start, next, leaderEpoch, records);
  }

  /** Records beyond the commit point finished (out of order in run(), or as the commit metadata says). */
  finishedAhead(state: PartitionState, offsets: Iterable<bigint>): void {
    for (const o of offsets) state.finishedAhead(o);
  }

  /** The position passed records never delivered (control records, aborted batches). */
  skipped(state: PartitionState, from: bigint, to: bigint): void {
    state.skipped(from, to);
  }

  progressed(state: PartitionState, d: Delivery, offset: bigint): void {
    state.progressed(d, offset);
  }

  progressLater(state: PartitionState, d: Delivery, progress: LazyProgress): void {
    state.progressLater(d, progress);
  }

  released(state: PartitionState, d: Delivery, finished: boolean): void {
    state.released(d, finished);
  }

  /** A delivery given back unfinished: the partition is delivered again from its first unfinished record. */
  giveBack(state: PartitionState, d: Delivery): void {
    if (state.giveBack(d) !== null) this.buffered.drop(state);
  }

  /** A delivery cut short at `offset`: what follows is delivered again (later). */
  cutDelivery(state: PartitionState, d: Delivery, offset: bigint): void {
    if (state.cutDelivery(d, offset)) this.buffered.drop(state);
  }

  // -------------------------------------------------- the application's asks

  pause(tps: readonly TopicPartition[]): void {
    for (const tp of tps) this.of(tp).pause();
  }

  resume(tps: readonly TopicPartition[]): void {
    for (const tp of tps) {
      const state = this.of(tp);
      state.resume();
      this.buffered.wake(state);
    }
    this.changed();
  }

  paused(): TopicPartition[] {
    return [...this.states.values()].filter((p) => p.paused).map((p) => ({ topic: p.topic, partition: p.partition }));
  }

  /**
   * Records between the partition's position and its end at the last fetch (the high watermark, or
   * the last stable offset under read_committed): Java's records-lag. undefined until both are known.
   */
  lag(state: PartitionState, readCommitted: boolean): bigint | undefined {
    const end = readCommitted ? state.lastStableOffset : state.highWatermark;
    if (state.position === null || end < 0n) return undefined;
    return end > state.position ? end - state.position : 0n;
  }

  /** Not fetched (so not delivered again) for `ms`: a processing failure's backoff. */
  backOff(tp: TopicPartition, ms: number): void {
    const state = this.states.get(tpKey(tp.topic, tp.partition));
    if (state) this.backOffState(state, ms);
  }

  /** Not fetched for `ms` (a retriable error, a failed request). */
  backOffState(state: PartitionState, ms: number): void {
    state.backOffUntil(Date.now() + ms);
    this.changed();
  }
}
