import type { MessageStream } from '../streams.js';

export function tpKey(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

/**
 * The consumer's state for one assigned partition. Two positions:
 *  - `position`: the next offset to deliver to the application (what commits are made of);
 *  - `fetchPosition`: the next offset to fetch: past everything already buffered.
 * Buffered data covers [position, fetchPosition). Both are null until the starting offset is known
 * (a reset through ListOffsets, or a committed offset from the group).
 */
export class PartitionState {
  readonly key: string;
  position: bigint | null = null;
  fetchPosition: bigint | null = null;
  /** A reset asked for (auto.offset.reset or an explicit seek to the start or end). */
  reset: 'earliest' | 'latest' | null = null;
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
  /** An error the application must see (auto.offset.reset=none, authorization). */
  error: Error | undefined;
  /**
   * The offset after the last record of the last batch the application released (its loop moved
   * on, its callback settled): what commits are made of, so nothing is committed before the
   * application is done with it. With the leader epoch of that record, for the commit.
   */
  processed: bigint | null = null;
  processedLeaderEpoch = -1;
  /** Batches delivered and not yet released. */
  outstanding = 0;
  /**
   * The consumer-wide count of delivered, unreleased batches (shared by every partition state, and
   * kept when a partition is revoked: a batch the application still holds still counts for
   * max.poll.interval.ms).
   */
  heldBatches: { count: number } = { count: 0 };
  /** Being handed over in a rebalance: nothing more is delivered from it. */
  revoking = false;
  private readonly waiters: (() => void)[] = [];

  constructor(
    readonly topic: string,
    readonly partition: number,
    public stream: MessageStream,
  ) {
    this.key = tpKey(topic, partition);
  }

  seek(offset: bigint): void {
    this.position = offset;
    this.fetchPosition = offset;
    this.processed = offset;
    this.processedLeaderEpoch = -1;
    this.reset = null;
    this.generation++;
    this.error = undefined;
  }

  /** A batch of this partition went to the application. */
  delivered(): void {
    this.outstanding++;
    this.heldBatches.count++;
  }

  /** A delivered batch was released: the application is done with everything before `nextOffset`. */
  released(generation: number, nextOffset: bigint, leaderEpoch: number): void {
    this.outstanding--;
    this.heldBatches.count--;
    if (generation === this.generation && (this.processed === null || nextOffset > this.processed)) {
      this.processed = nextOffset;
      this.processedLeaderEpoch = leaderEpoch;
    }
    if (this.outstanding === 0) for (const w of this.waiters.splice(0)) w();
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

  requestReset(policy: 'earliest' | 'latest'): void {
    this.position = null;
    this.fetchPosition = null;
    this.reset = policy;
    this.generation++;
  }
}
