import type { TopicPartition } from '@kwire/protocol';
import type { MetadataCache } from '../cluster/metadata.js';
import type { ResolvedConfig } from '../config.js';
import type { BrokerPool } from '../connection/index.js';
import type { ConsumerMeter } from '../metrics/meter.js';
import type { PartitionState } from '../state/partition-state.js';
import type { SubscriptionState } from '../state/subscription-state.js';
import { CommitPositions } from './commit-positions.js';
import { CommitTurns } from './commit-turns.js';
import { GroupCoordinator } from './coordinator.js';
import type { GroupCloseReport } from './group-manager.js';
import { OffsetStore, type CommitIdentity, type CommittedOffset, type OffsetToCommit } from './offsets.js';

/** A member of no generation: what the coordinator takes from a consumer that is not in the group. */
const NO_MEMBER: CommitIdentity = { generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, consumerProtocol: false };

export interface AssignedOffsetsOptions {
  config: ResolvedConfig;
  pool: BrokerPool;
  metadata: MetadataCache;
  subscriptions: SubscriptionState;
  meter: ConsumerMeter;
  isClosed: () => boolean;
}

/**
 * The commits of a consumer with a groupId that assign()s its partitions itself (Java's assign()
 * with group.id): no membership, so commits go as no member of no generation, which the
 * coordinator takes while the group has no members of its own. As for a subscribed member:
 * partitions assigned without an offset start at the committed one, auto-commit (every
 * auto.commit.interval.ms) and close() commit what the application finished, and commitSync()
 * commits it (or the offsets given). One commit at a time.
 */
export class AssignedOffsets {
  private readonly store: OffsetStore;
  /** What was last committed per partition, and what would be now (with its metadata). */
  readonly positions: CommitPositions;
  private readonly commits = new CommitTurns();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: AssignedOffsetsOptions) {
    const { config, pool, metadata, isClosed } = options;
    const groupId = config.groupId!;
    this.positions = new CommitPositions(config.commitMetadataMaxBytes, config.logger);
    const coordinator = new GroupCoordinator({ pool, groupId, retryBackoffMs: config.retryBackoffMs, logger: config.logger, isClosed });
    this.store = new OffsetStore(coordinator, metadata, { groupId, requireStable: config.isolationLevel === 'read_committed', retryBackoffMs: config.retryBackoffMs, logger: config.logger, isClosed });
    if (config.enableAutoCommit) {
      this.timer = setInterval(() => {
        this.commit().catch((err: unknown) => config.logger.warn('auto-commit failed', { error: (err as Error).message }));
      }, config.autoCommitIntervalMs);
      this.timer.unref();
    }
  }

  /** The group's committed offsets of these partitions (keyed by tpKey; null where none). */
  fetch(partitions: readonly TopicPartition[]): Promise<Map<string, CommittedOffset | null>> {
    return this.store.fetch(partitions, NO_MEMBER);
  }

  /** Finished positions of assigned partitions that moved since their last commit. */
  pending(): OffsetToCommit[] {
    const out: OffsetToCommit[] = [];
    for (const s of this.options.subscriptions.values()) {
      const o = this.positions.current(s);
      if (o !== null && !this.positions.isCommitted(o)) out.push(o);
    }
    return out;
  }

  /** Assigned partitions whose finished offset is already committed (nothing finished since). */
  upToDate(): OffsetToCommit[] {
    const out: OffsetToCommit[] = [];
    for (const s of this.options.subscriptions.values()) {
      const o = this.positions.current(s);
      if (o !== null && this.positions.isCommitted(o)) out.push(o);
    }
    return out;
  }

  /** The partition starts at the group's committed offset: nothing to commit until it moves; its metadata's finished records are not handled again. */
  restore(state: PartitionState, c: CommittedOffset): void {
    this.positions.restore(this.options.subscriptions, state, c);
  }

  /** Commits the offsets given, or every finished position that moved. */
  async commit(offsets?: readonly OffsetToCommit[], deadline = Infinity): Promise<void> {
    await this.commits.turn(deadline);
    const wanted = offsets ?? this.pending();
    if (wanted.length === 0) return;
    const started = performance.now();
    const committed = wanted.map((o) => ({ topic: o.topic, partition: o.partition, offset: o.offset, metadata: o.metadata ?? null }));
    return this.commits.run(async () => {
      try {
        await this.store.commit(wanted, NO_MEMBER, deadline);
      } catch (err) {
        this.options.meter.committed(committed, performance.now() - started, err as Error);
        throw err;
      }
      this.positions.committed(wanted);
      this.options.meter.committed(committed, performance.now() - started);
      for (const i of this.options.config.interceptors) i.onCommit?.(committed);
    });
  }

  /** Stops auto-commit and, with it enabled, commits what was finished, within `deadline`. */
  async close(deadline: number, report: GroupCloseReport): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (!this.options.config.enableAutoCommit) return;
    const wanted = this.pending();
    try {
      await this.commit(wanted, deadline);
      report.committed.push(...wanted);
    } catch (err) {
      const error = (err as Error).message;
      report.uncommitted.push(...wanted.map((o) => ({ ...o, error })));
    }
  }
}
