import type { Logger } from '../logger.js';
import type { PartitionState } from '../state/partition-state.js';
import type { SubscriptionState } from '../state/subscription-state.js';
import { tpKey } from '../tp-key.js';
import { decodeFinished, encodeFinished, maxSpan } from './finished-metadata.js';
import type { CommittedOffset, OffsetToCommit } from './offsets.js';

/**
 * What a group member (or a consumer with a groupId and assign()) last committed per partition,
 * and what it would commit now: the partition's commit point, with the records finished beyond it
 * as metadata (finished-metadata.ts). A commit is due when either moved. On assignment the
 * committed metadata is read back: records it says were finished are not handled again; metadata
 * that is not ours, or that does not check out, is ignored and said once.
 */
export class CommitPositions {
  private readonly last = new Map<string, { offset: bigint; metadata: string | null }>();
  /** Bytes of the metadata of each partition's last commit (for metrics). */
  readonly metadataBytes = new Map<string, number>();
  private warnedForeign = false;
  private warnedCorrupt = false;

  constructor(
    private readonly maxBytes: number,
    private readonly logger: Logger,
  ) {}

  /** What a commit of the partition carries now (null before it has a commit point). */
  current(s: PartitionState): OffsetToCommit | null {
    const offset = s.processed;
    if (offset === null) return null;
    return { topic: s.topic, partition: s.partition, offset, leaderEpoch: s.processedLeaderEpoch, metadata: this.metadataOf(s, offset) };
  }

  /** Whether `o` is what was last committed for its partition. */
  isCommitted(o: OffsetToCommit): boolean {
    const last = this.last.get(tpKey(o.topic, o.partition));
    return last !== undefined && last.offset === o.offset && last.metadata === (o.metadata ?? null);
  }

  /** The finished records beyond `base`, encoded; those beyond what fits are left out (delivered again, never lost). */
  private metadataOf(s: PartitionState, base: bigint): string | null {
    if (!s.hasFinishedAhead) return null;
    let offsets = s.finishedBeyondPoint().offsets.filter((o) => o > base);
    if (offsets.length === 0) return null;
    const limit = base + BigInt(maxSpan(this.maxBytes));
    if (offsets[offsets.length - 1]! >= limit) offsets = offsets.filter((o) => o < limit);
    return encodeFinished(base, offsets, this.maxBytes);
  }

  committed(offsets: readonly OffsetToCommit[]): void {
    for (const o of offsets) {
      const key = tpKey(o.topic, o.partition);
      const metadata = o.metadata ?? null;
      this.last.set(key, { offset: o.offset, metadata });
      this.metadataBytes.set(key, metadata?.length ?? 0);
    }
  }

  forget(key: string): void {
    this.last.delete(key);
    this.metadataBytes.delete(key);
  }

  /**
   * The partition starts at its committed offset: what was committed is noted, and the records its
   * metadata marks finished are told to the partition state (never handled again by run()).
   */
  restore(subscriptions: SubscriptionState, state: PartitionState, c: CommittedOffset): void {
    this.last.set(state.key, { offset: c.offset, metadata: c.metadata });
    const decoded = decodeFinished(c.metadata);
    switch (decoded.kind) {
      case 'none':
        return;
      case 'foreign':
        if (!this.warnedForeign) {
          this.warnedForeign = true;
          this.logger.warn('commit metadata not written by kwire: ignored (every record after the committed offset is delivered again); said once', {
            partition: `${state.topic}-${state.partition}`,
            offset: c.offset.toString(),
            metadataChars: c.metadata?.length ?? 0,
          });
        }
        return;
      case 'corrupt':
        this.warnCorrupt(state, c, decoded.reason);
        return;
      case 'finished':
        if (decoded.base !== c.offset) {
          this.warnCorrupt(state, c, `it was written for offset ${decoded.base}`);
          return;
        }
        subscriptions.finishedAhead(state, decoded.offsets);
    }
  }

  private warnCorrupt(state: PartitionState, c: CommittedOffset, reason: string): void {
    if (this.warnedCorrupt) return;
    this.warnedCorrupt = true;
    this.logger.warn('commit metadata of finished records does not check out: ignored (every record after the committed offset is delivered again); said once', {
      partition: `${state.topic}-${state.partition}`,
      offset: c.offset.toString(),
      reason,
    });
  }
}
