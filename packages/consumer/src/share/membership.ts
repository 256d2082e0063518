import { errorFor, ErrorCode, randomUuid, ShareGroupHeartbeat, type ShareGroupHeartbeatResponse } from '@kwire/protocol';
import type { MetadataCache } from '../cluster/metadata.js';
import type { BrokerPool } from '../connection/index.js';
import { BrokerResponseError, isKafkaError } from '../errors.js';
import { COORDINATOR_LOADING, COORDINATOR_MOVED, GroupCoordinator } from '../group/coordinator.js';
import type { Logger } from '../logger.js';
import type { ResolvedShareConfig } from './config.js';

/** One assigned partition, by topic id (as the coordinator names it) and by name. */
export interface ShareAssignment {
  readonly topicId: string;
  readonly topic: string;
  readonly partition: number;
}

export interface ShareMembershipHost {
  readonly config: ResolvedShareConfig;
  readonly pool: BrokerPool;
  readonly metadata: MetadataCache;
  readonly logger: Logger;
  /** The coordinator gave this member a new assignment (the whole of it). */
  assigned(partitions: ShareAssignment[], why: string): void;
  /** A failure no heartbeat mends (authorization, a group of another type, an invalid request). */
  fail(err: Error): void;
  emit<E extends keyof ShareGroupEventDetails>(event: E, detail: ShareGroupEventDetails[E]): void;
}

/** The detail object of each share group event, as the share consumer emits it. */
export interface ShareGroupEventDetails {
  /** The member joined the share group. */
  joined: { memberId: string; memberEpoch: number; groupId: string };
  /** The coordinator fenced the member (why: the error's name); it joins again with epoch 0. */
  fenced: { why: string; memberEpoch: number };
  /** A new assignment (all of it), its partitions as "topic-partition". */
  assigned: { memberEpoch: number; partitions: string[]; why: string };
  /** The member left; errorCode: the coordinator's answer to the leave (0: heard). */
  left: { memberId: string; errorCode: number };
}

/** Errors after which the member joins again with epoch 0 (same member id), dropping its assignment. */
const REJOIN = new Set<number>([ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.FENCED_MEMBER_EPOCH]);

/**
 * Membership of a share group (KIP-932): the ShareGroupHeartbeat loop. The member id is ours (a
 * uuid kept for the consumer's life); epoch 0 joins, the coordinator answers with the member epoch,
 * the heartbeat interval and, when it changed, the assignment (topic ids and partitions). A share
 * member owns nothing exclusively, so an assignment applies at once: no revocation handshake, no
 * owned partitions sent back. Fenced or unknown, the member rejoins with epoch 0; on close it
 * leaves with epoch -1.
 */
export class ShareMembership {
  readonly memberId = randomUuid();
  private memberEpoch = 0;
  private intervalMs = 5_000;
  private readonly coordinator: GroupCoordinator;
  private topics: string[] = [];
  private topicsChanged = true;
  private loop: Promise<void> | undefined;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private wakeUp: (() => void) | undefined;
  /** The last assignment by topic id, kept until the metadata can name every topic. */
  private unresolved: { topicId: string; partitions: number[] }[] | undefined;
  heartbeats = 0;
  /** Heartbeats since joining without an assignment yet; -1 once one came. */
  private awaitingAssignment = -1;

  constructor(private readonly host: ShareMembershipHost) {
    this.coordinator = new GroupCoordinator({ pool: host.pool, groupId: host.config.groupId, retryBackoffMs: host.config.retryBackoffMs, logger: host.logger, isClosed: () => this.stopped });
  }

  get epoch(): number {
    return this.memberEpoch;
  }

  subscribe(topics: readonly string[]): void {
    this.topics = [...new Set(topics)].sort();
    this.topicsChanged = true;
    this.loop ??= this.run();
    this.wake();
  }

  /** The metadata learnt new topic ids: an assignment waiting for their names may now apply. */
  metadataChanged(): void {
    if (this.unresolved) this.apply(this.unresolved, 'metadata named the assigned topics');
  }

  private wake(): void {
    const w = this.wakeUp;
    this.wakeUp = undefined;
    if (this.timer) clearTimeout(this.timer);
    w?.();
  }

  private wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.wakeUp = resolve;
      this.timer = setTimeout(() => this.wake(), ms);
    });
  }

  private async run(): Promise<void> {
    const { config, logger } = this.host;
    let backoff = config.retryBackoffMs;
    while (!this.stopped) {
      let wait = this.intervalMs;
      try {
        const res = await this.heartbeat(this.memberEpoch);
        if (this.stopped) break;
        if (res.errorCode === 0) {
          const joined = this.memberEpoch === 0;
          this.memberEpoch = res.memberEpoch;
          this.intervalMs = res.heartbeatIntervalMs > 0 ? res.heartbeatIntervalMs : this.intervalMs;
          wait = this.intervalMs;
          backoff = config.retryBackoffMs;
          if (joined) {
            this.awaitingAssignment = 0;
            this.host.emit('joined', { memberId: this.memberId, memberEpoch: this.memberEpoch, groupId: config.groupId });
          }
          const partitions = res.assignment?.topicPartitions.reduce((n, t) => n + t.partitions.length, 0) ?? 0;
          if (res.assignment) this.apply(res.assignment.topicPartitions, `assignment at epoch ${res.memberEpoch}`);
          if (partitions > 0) this.awaitingAssignment = -1;
          else if (this.awaitingAssignment >= 0 && this.awaitingAssignment++ < 20) {
            // The coordinator answers a new member's join with an empty assignment and assigns it a
            // moment later (group.share.assignment.interval.ms, 1 s by default): asking again soon,
            // not after a whole heartbeat interval (5 s), saves a new member seconds of idling.
            wait = Math.min(wait, 250);
          }
        } else if (REJOIN.has(res.errorCode)) {
          const why = errorFor(res.errorCode).name;
          logger.info('share group member fenced; rejoining', { groupId: config.groupId, memberId: this.memberId, why });
          this.host.emit('fenced', { why, memberEpoch: this.memberEpoch });
          this.memberEpoch = 0;
          this.topicsChanged = true;
          this.unresolved = undefined;
          this.host.assigned([], `fenced (${why})`);
          wait = 0;
        } else if (COORDINATOR_MOVED.has(res.errorCode) || res.errorCode === COORDINATOR_LOADING) {
          if (res.errorCode !== COORDINATOR_LOADING) this.coordinator.markDead(errorFor(res.errorCode).name);
          wait = backoff;
          backoff = Math.min(backoff * 2, 1_000);
        } else {
          const err = new BrokerResponseError(res.errorCode, `ShareGroupHeartbeat ${config.groupId}`, res.errorMessage);
          if (!err.retriable) {
            this.host.fail(err);
            return;
          }
          wait = backoff;
          backoff = Math.min(backoff * 2, 1_000);
        }
      } catch (err) {
        if (this.stopped) break;
        if (isKafkaError(err) && !err.retriable) {
          this.host.fail(err);
          return;
        }
        logger.debug('ShareGroupHeartbeat failed; retrying', { groupId: config.groupId, error: (err as Error).message });
        this.coordinator.markDead(`heartbeat failed: ${(err as Error).message}`);
        wait = backoff;
        backoff = Math.min(backoff * 2, 1_000);
      }
      if (!this.stopped && wait > 0) await this.wait(wait);
    }
  }

  private async heartbeat(epoch: number): Promise<ShareGroupHeartbeatResponse> {
    const conn = await this.coordinator.connection();
    const sendTopics = epoch === 0 || this.topicsChanged;
    const res = await conn.request(ShareGroupHeartbeat, {
      groupId: this.host.config.groupId,
      memberId: this.memberId,
      memberEpoch: epoch,
      rackId: epoch === 0 && this.host.config.clientRack ? this.host.config.clientRack : null,
      subscribedTopicNames: sendTopics ? this.topics : null,
    });
    this.heartbeats++;
    this.host.logger.debug('ShareGroupHeartbeat', {
      groupId: this.host.config.groupId,
      memberEpoch: epoch,
      errorCode: res.errorCode,
      newEpoch: res.memberEpoch,
      assignment: res.assignment ? res.assignment.topicPartitions.reduce((n, t) => n + t.partitions.length, 0) : null,
    });
    if (res.errorCode === 0 && sendTopics) this.topicsChanged = false;
    return res;
  }

  private apply(topicPartitions: readonly { topicId: string; partitions: readonly number[] }[], why: string): void {
    const names = this.host.metadata.topicNames;
    const missing = topicPartitions.filter((t) => !names.has(t.topicId));
    if (missing.length) {
      // The coordinator names topics by id; the metadata may not have caught up with a new topic.
      this.unresolved = topicPartitions.map((t) => ({ topicId: t.topicId, partitions: [...t.partitions] }));
      this.host.metadata.requestUpdate(`share assignment names ${missing.length} unknown topic id(s)`);
      return;
    }
    this.unresolved = undefined;
    const out: ShareAssignment[] = [];
    for (const t of topicPartitions) for (const p of t.partitions) out.push({ topicId: t.topicId, topic: names.get(t.topicId)!, partition: p });
    this.host.assigned(out, why);
    this.host.emit('assigned', { memberEpoch: this.memberEpoch, partitions: out.map((p) => `${p.topic}-${p.partition}`), why });
  }

  /** Leaves the group (epoch -1), within `timeoutMs`; never rejects. */
  async leave(timeoutMs: number): Promise<void> {
    this.stopped = true;
    this.wake();
    await this.loop?.catch(() => {});
    if (this.memberEpoch === 0 && this.heartbeats === 0) return;
    try {
      const conn = await Promise.race([this.coordinator.connection(), new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timed out')), timeoutMs).unref())]);
      const res = await conn.request(
        ShareGroupHeartbeat,
        { groupId: this.host.config.groupId, memberId: this.memberId, memberEpoch: -1, subscribedTopicNames: null },
        { timeoutMs: Math.max(1, timeoutMs) },
      );
      this.host.emit('left', { memberId: this.memberId, errorCode: res.errorCode });
    } catch (err) {
      this.host.logger.debug('leaving the share group failed', { groupId: this.host.config.groupId, error: (err as Error).message });
    }
    this.memberEpoch = -1;
  }
}
