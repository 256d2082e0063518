import { UsageError } from '../errors.js';
import type { ConsumerMeter } from '../metrics/meter.js';
import { type PartitionState, tpKey, type ResetTarget } from './partition-state.js';
import type { TopicPartition } from '@kwire/protocol';

/** One partition of one topic: the one type for it, from @kwire/protocol. */
export type { TopicPartition } from '@kwire/protocol';

/**
 * The one owner of every assigned partition's state (Java's SubscriptionState): the consumer, the
 * group manager and the run loops change partitions through its methods (assign, remove, seek,
 * pause, resume, back off), and each change wakes the fetcher, which reads this state to decide
 * what to fetch (a scheduler; it writes only the fetch-side fields of a PartitionState: leaders,
 * watermarks, in-flight and validation marks). What the application finished lives in each
 * partition's DeliveryLedger, changed only by the batches it delivered.
 */
export class SubscriptionState {
  private readonly states = new Map<string, PartitionState>();
  /**
   * Delivered batches the application has not released yet, over every partition (shared by every
   * partition state, and kept when a partition is removed: a batch the application still holds
   * still counts for max.poll.interval.ms).
   */
  readonly heldBatches = { count: 0 };

  /** `changed`: something a fetch decision depends on changed (the fetcher's schedule()). */
  constructor(
    private readonly changed: () => void,
    private readonly meter?: ConsumerMeter,
  ) {}

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

  /** A partition starts being fetched (its start offset set, or a reset asked for). */
  add(state: PartitionState): void {
    state.heldBatches = this.heldBatches;
    state.meter = this.meter;
    this.states.set(state.key, state);
    this.changed();
  }

  /** A partition stops being fetched; what is buffered for it is dropped. */
  remove(key: string): PartitionState | undefined {
    const state = this.states.get(key);
    if (state) {
      this.states.delete(key);
      state.generation++;
      state.stream.dropPartition(key);
    }
    return state;
  }

  /**
   * The next record of a partition comes from `offset` (with the leader epoch it came with, when
   * known: the position is then validated, KIP-320), from the start or end of its log, or from the
   * first record at or after a time.
   */
  seek(state: PartitionState, offset: bigint | ResetTarget, leaderEpoch = -1): void {
    state.stream.dropPartition(state.key);
    if (typeof offset === 'bigint') state.seek(offset, leaderEpoch);
    else state.requestReset(offset);
    this.changed();
  }

  pause(tps: readonly TopicPartition[]): void {
    for (const tp of tps) this.of(tp).paused = true;
  }

  resume(tps: readonly TopicPartition[]): void {
    for (const tp of tps) {
      const state = this.of(tp);
      state.paused = false;
      state.stream.wake();
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
    if (!state) return;
    state.backoffUntil = Date.now() + ms;
    this.changed();
  }
}
