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
    this.reset = null;
    this.generation++;
    this.error = undefined;
  }

  requestReset(policy: 'earliest' | 'latest'): void {
    this.position = null;
    this.fetchPosition = null;
    this.reset = policy;
    this.generation++;
  }
}
