import { ErrorCode, errorFor, OffsetCommit, OffsetFetch, ZERO_UUID } from '@kwire/protocol';
import type { MetadataCache } from '../cluster/metadata.js';
import { BrokerResponseError, KafkaError } from '../errors.js';
import type { Logger } from '../logger.js';
import { remaining, withDeadline } from '../deadline.js';
import { COORDINATOR_LOADING, COORDINATOR_MOVED, type GroupCoordinator } from './coordinator.js';
import type { TopicPartition } from '@kwire/protocol';
import { groupBy } from '../group-by.js';
import { tpKey } from '../tp-key.js';

/** One partition of one topic: the one type for it, from @kwire/protocol. */
export type { TopicPartition } from '@kwire/protocol';

export interface CommittedOffset {
  /** The next offset to read (the last processed + 1). */
  offset: bigint;
  leaderEpoch: number;
  metadata: string | null;
}

export interface OffsetToCommit extends TopicPartition {
  offset: bigint;
  leaderEpoch?: number;
  metadata?: string | null;
}

/** Who commits: the group generation (classic) or member epoch (KIP-848), and the member. */
export interface CommitIdentity {
  generationIdOrMemberEpoch: number;
  memberId: string;
  groupInstanceId: string | null;
  /** KIP-848 members identify themselves in OffsetFetch too (v9+). */
  consumerProtocol: boolean;
}

/** A failed commit: which partitions, and the group-level reason the membership must react to. */
export class CommitFailedError extends BrokerResponseError {
  override name = 'CommitFailedError';
  constructor(
    errorCode: number,
    readonly partitions: TopicPartition[],
  ) {
    super(errorCode, `OffsetCommit of ${partitions.map((p) => `${p.topic}-${p.partition}`).join(', ')}`);
  }
}

/**
 * Committed offsets of one group, read and written on its coordinator: OffsetFetch (v8+, the
 * batched form; v10 by topic id when every id is known, else v9) and OffsetCommit (v8+; v10 by
 * topic id likewise). Coordinator moves and loading are retried here; group errors (a rebalance,
 * a stale generation, a fenced member) are the membership's business and come back as errors.
 */
export class OffsetStore {
  constructor(
    private readonly coordinator: GroupCoordinator,
    private readonly metadata: MetadataCache,
    private readonly options: { groupId: string; requireStable: boolean; retryBackoffMs: number; logger: Logger; isClosed: () => boolean },
  ) {}

  private topicId(topic: string): string {
    return this.metadata.topics.get(topic)?.topicId ?? ZERO_UUID;
  }

  /** OffsetFetch and OffsetCommit v10+ name topics by id only: v9 at most while one id is unknown. */
  private version(supported: number, topics: Iterable<string>): number {
    for (const t of topics) if (this.topicId(t) === ZERO_UUID) return Math.min(supported, 9);
    return supported;
  }

  /** Committed offsets of these partitions (null where nothing is committed). */
  async fetch(partitions: readonly TopicPartition[], identity: CommitIdentity): Promise<Map<string, CommittedOffset | null>> {
    const byTopic = groupByTopic(partitions);
    for (let attempt = 0; ; attempt++) {
      const conn = await this.coordinator.connection();
      const version = this.version(conn.version(OffsetFetch), byTopic.keys());
      let res;
      try {
        res = await conn.request(
          OffsetFetch,
          {
            groups: [
              {
                groupId: this.options.groupId,
                memberId: identity.consumerProtocol ? identity.memberId : null,
                memberEpoch: identity.consumerProtocol ? identity.generationIdOrMemberEpoch : -1,
                topics: [...byTopic].map(([name, list]) => ({ name, topicId: this.topicId(name), partitionIndexes: list })),
              },
            ],
            requireStable: this.options.requireStable,
          },
          { version },
        );
      } catch (err) {
        if (!this.retry(err, attempt)) throw err;
        this.coordinator.markDead(`OffsetFetch failed: ${(err as Error).message}`);
        await this.pause(attempt);
        continue;
      }
      const group = res.groups[0];
      const code = group?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR;
      const partitionCodes = group ? group.topics.flatMap((t) => t.partitions.map((p) => p.errorCode)) : [];
      const retryCode = [code, ...partitionCodes].find((c) => c === COORDINATOR_LOADING || COORDINATOR_MOVED.has(c) || c === ErrorCode.UNSTABLE_OFFSET_COMMIT);
      if (retryCode !== undefined) {
        if (COORDINATOR_MOVED.has(retryCode)) this.coordinator.markDead(`OffsetFetch: ${errorFor(retryCode).name}`);
        this.options.logger.debug('OffsetFetch retried', { groupId: this.options.groupId, error: errorFor(retryCode).name });
        await this.pause(attempt);
        continue;
      }
      if (code !== 0) throw new BrokerResponseError(code, `OffsetFetch ${this.options.groupId}`);
      const out = new Map<string, CommittedOffset | null>();
      for (const t of group!.topics) {
        const name = version >= 10 ? this.metadata.topicNames.get(t.topicId) : t.name;
        if (name === undefined) continue;
        for (const p of t.partitions) {
          if (p.errorCode !== 0) throw new BrokerResponseError(p.errorCode, `OffsetFetch ${name}-${p.partitionIndex}`);
          out.set(tpKey(name, p.partitionIndex), p.committedOffset < 0n ? null : { offset: p.committedOffset, leaderEpoch: p.committedLeaderEpoch, metadata: p.metadata });
        }
      }
      return out;
    }
  }

  /**
   * Commits offsets. Resolves when the coordinator has them; rejects with CommitFailedError when it
   * refuses them for a group reason (REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID,
   * FENCED_INSTANCE_ID, STALE_MEMBER_EPOCH, ...) or with a BrokerResponseError for a partition.
   * With a `deadline` (Date.now() time), retries end there with a RequestTimeoutError.
   */
  async commit(offsets: readonly OffsetToCommit[], identity: CommitIdentity, deadline = Infinity, stillCurrent: () => boolean = () => true): Promise<void> {
    if (offsets.length === 0) return;
    const byTopic = groupBy(offsets, (o) => o.topic);
    for (let attempt = 0; ; attempt++) {
      const conn = await this.coordinator.connection(deadline);
      // A retry after the member lost its partitions and joined again would land offsets from before
      // the loss after the new owner (perhaps this member) read the committed ones: the group's
      // committed offset would go back. Found by the chaos test (seed 18, a coordinator killed).
      if (!stillCurrent())
        throw new CommitFailedError(
          ErrorCode.REBALANCE_IN_PROGRESS,
          offsets.map((o) => ({ topic: o.topic, partition: o.partition })),
        );
      const version = this.version(conn.version(OffsetCommit), byTopic.keys());
      let res;
      try {
        res = await conn.request(
          OffsetCommit,
          {
            groupId: this.options.groupId,
            generationIdOrMemberEpoch: identity.generationIdOrMemberEpoch,
            memberId: identity.memberId,
            groupInstanceId: identity.groupInstanceId,
            topics: [...byTopic].map(([name, list]) => ({
              name,
              topicId: this.topicId(name),
              partitions: list.map((o) => ({ partitionIndex: o.partition, committedOffset: o.offset, committedLeaderEpoch: o.leaderEpoch ?? -1, committedMetadata: o.metadata ?? null })),
            })),
          },
          { version, timeoutMs: deadline === Infinity ? undefined : Math.max(1, remaining(deadline)) },
        );
      } catch (err) {
        if (!this.retry(err, attempt) || remaining(deadline) === 0) throw err;
        this.coordinator.markDead(`OffsetCommit failed: ${(err as Error).message}`);
        await withDeadline(this.pause(attempt), deadline, 'OffsetCommit');
        continue;
      }
      let retryCode: number | undefined;
      const failed = new Map<number, TopicPartition[]>();
      for (const t of res.topics) {
        const name = version >= 10 ? (this.metadata.topicNames.get(t.topicId) ?? t.topicId) : t.name;
        for (const p of t.partitions) {
          if (p.errorCode === 0) continue;
          if (p.errorCode === COORDINATOR_LOADING || COORDINATOR_MOVED.has(p.errorCode)) retryCode = p.errorCode;
          let l = failed.get(p.errorCode);
          if (!l) failed.set(p.errorCode, (l = []));
          l.push({ topic: name, partition: p.partitionIndex });
        }
      }
      if (retryCode !== undefined) {
        if (COORDINATOR_MOVED.has(retryCode)) this.coordinator.markDead(`OffsetCommit: ${errorFor(retryCode).name}`);
        await withDeadline(this.pause(attempt), deadline, 'OffsetCommit');
        continue;
      }
      const first = failed.entries().next();
      if (!first.done) throw new CommitFailedError(first.value[0], first.value[1]);
      return;
    }
  }

  private retry(err: unknown, attempt: number): boolean {
    if (this.options.isClosed() || attempt > 20) return false;
    return !(err instanceof KafkaError) || err.retriable;
  }

  private pause(attempt: number): Promise<void> {
    return new Promise((r) => setTimeout(r, Math.min(this.options.retryBackoffMs * 2 ** Math.min(attempt, 4), 1_000)));
  }
}

function groupByTopic(partitions: readonly TopicPartition[]): Map<string, number[]> {
  return groupBy(
    partitions,
    (p) => p.topic,
    (p) => p.partition,
  );
}
