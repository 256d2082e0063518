import { ConsumerGroupHeartbeat, ErrorCode, errorFor, randomUuid, ZERO_UUID } from '@kwire/protocol';
import type { MetadataCache } from '../cluster/metadata.js';
import type { ResolvedConfig } from '../config.js';
import { withDeadline } from '../deadline.js';
import { COORDINATOR_LOADING, COORDINATOR_MOVED, type GroupCoordinator } from './coordinator.js';
import { difference, FatalGroupError, leaveTimeoutMs, MembershipLifecycle, type GroupIdentity, type MembershipHost } from './membership.js';
import type { TopicPartition } from './offsets.js';
import { groupBy } from '../group-by.js';

const FATAL = new Set<number>([
  ErrorCode.FENCED_INSTANCE_ID,
  ErrorCode.UNSUPPORTED_ASSIGNOR,
  ErrorCode.INVALID_REQUEST,
  ErrorCode.INVALID_REGULAR_EXPRESSION,
  ErrorCode.GROUP_MAX_SIZE_REACHED,
  ErrorCode.GROUP_AUTHORIZATION_FAILED,
  ErrorCode.UNSUPPORTED_VERSION,
  ErrorCode.GROUP_ID_NOT_FOUND,
]);

/**
 * The cluster does not run KIP-848 groups: ConsumerGroupHeartbeat is missing from ApiVersions, or
 * (a 3.x broker with the feature off) offered but answered UNSUPPORTED_VERSION.
 */
export class Kip848UnavailableError extends FatalGroupError {
  override name = 'Kip848UnavailableError';
}

export interface Kip848Options {
  config: ResolvedConfig;
  metadata: MetadataCache;
  coordinator: GroupCoordinator;
  host: MembershipHost;
}

/**
 * A member of a KIP-848 consumer group (groupProtocol 'consumer'): no JoinGroup or SyncGroup, one
 * ConsumerGroupHeartbeat loop. The member id is generated here and kept for the process (v1); the
 * broker runs the assignor (uniform or range) and answers with the complete set of partitions the
 * member may own now; the member reconciles against what it owns (revoke what is gone, committing
 * first; take what is new) and reports what it owns in the next heartbeat, which is how the
 * coordinator learns that a revoked partition is free for its next owner.
 */
export class ConsumerGroupMembership extends MembershipLifecycle {
  /** v1+: generated here, kept for the process. v0: handed out by the coordinator. */
  private memberId: string = randomUuid();
  private idFromServer = false;
  private joinedOnce = false;
  private memberEpoch = 0;
  private intervalMs: number;
  /** The next heartbeat carries the full state (joining, after an error, a subscription change). */
  private full = true;
  private lastReported = '';
  private pendingWhy: string | undefined;
  private target: { topicId: string; partitions: number[] }[] | undefined;

  constructor(private readonly options: Kip848Options) {
    super(options.host, options.config);
    this.intervalMs = options.config.heartbeatIntervalMs;
  }

  identity(): GroupIdentity | undefined {
    if (this.memberEpoch <= 0) return undefined;
    return { memberId: this.memberId, generation: this.memberEpoch, groupInstanceId: this.options.config.groupInstanceId ?? null, consumerProtocol: true };
  }

  rejoin(why: string): void {
    this.left = false;
    this.full = true;
    this.pendingWhy ??= why;
    this.sleeper.wake();
    this.start();
  }

  protected async run(): Promise<void> {
    const { config, coordinator, host } = this.options;
    this.lastHeartbeatOk = Date.now();
    while (!this.stopped) {
      if (this.left) {
        await this.sleeper.untilWoken();
        this.lastHeartbeatOk = Date.now();
        continue;
      }
      if (this.pendingWhy) {
        host.event('rebalance', { why: this.pendingWhy, memberId: this.memberId, memberEpoch: this.memberEpoch });
        this.log.info('group heartbeat with full state', { groupId: config.groupId, why: this.pendingWhy });
        this.pendingWhy = undefined;
      }
      let wait = this.intervalMs;
      const sessionEnds = this.lastHeartbeatOk + config.sessionTimeoutMs;
      try {
        const code = await this.heartbeat(sessionEnds);
        if (code !== 0) wait = config.retryBackoffMs;
      } catch (err) {
        if (this.stopped) return;
        if (this.endedBy(err)) return;
        coordinator.markDead(`ConsumerGroupHeartbeat failed: ${(err as Error).message}`);
        this.full = true;
        wait = config.retryBackoffMs;
        if (Date.now() >= sessionEnds) await this.sessionExpired();
      }
      // A new assignment to reconcile, or an ownership change to report: do not wait a whole interval.
      if (this.target) await this.reconcile();
      if (this.ownedSignature() !== this.lastReported) wait = 0;
      if (!this.stopped) await this.sleeper.sleep(wait);
    }
  }

  private ownedSignature(): string {
    return this.options.host
      .owned()
      .map((tp) => `${tp.topic}:${tp.partition}`)
      .sort()
      .join(',');
  }

  /**
   * No heartbeat succeeded for session.timeout.ms: the coordinator has fenced this member by now
   * and given its partitions to others. They are lost here too (no zombie delivering them); the
   * member joins again with epoch 0 when the coordinator answers.
   */
  private async sessionExpired(): Promise<void> {
    const { config, host } = this.options;
    const lost = host.owned();
    const why = `no heartbeat succeeded for ${Date.now() - this.lastHeartbeatOk} ms (session.timeout.ms ${config.sessionTimeoutMs})`;
    this.log.warn('group session expired on the client side: partitions lost', { groupId: config.groupId, memberId: this.memberId, why });
    this.memberEpoch = 0;
    this.target = undefined;
    this.lastHeartbeatOk = Date.now();
    if (lost.length) await host.lose(lost, why);
    this.pendingWhy = `rejoining after ${why}`;
  }

  /** One ConsumerGroupHeartbeat; returns its error code (0, or one already handled). */
  private async heartbeat(deadline: number): Promise<number> {
    const { config, coordinator, host, metadata } = this.options;
    const conn = await coordinator.connection(deadline);
    const version = conn.version(ConsumerGroupHeartbeat);
    const owned = host.owned();
    const signature = this.ownedSignature();
    const reportOwned = this.full || signature !== this.lastReported;
    const byTopic = groupBy(
      owned,
      (tp) => metadata.topics.get(tp.topic)?.topicId ?? ZERO_UUID,
      (tp) => tp.partition,
    );
    const pattern = host.subscribedPattern();
    const full = this.full;
    // The session is renewed as of when the coordinator read the request: no earlier than now. A
    // response read late (the process frozen with it in the socket) must not renew it as of then.
    const sentAt = Date.now();
    const res = await withDeadline(
      conn.request(ConsumerGroupHeartbeat, {
        groupId: config.groupId!,
        memberId: version === 0 && !this.idFromServer ? '' : this.memberId,
        memberEpoch: this.memberEpoch,
        instanceId: full ? (config.groupInstanceId ?? null) : null,
        rackId: full && config.clientRack ? config.clientRack : null,
        rebalanceTimeoutMs: full ? config.maxPollIntervalMs : -1,
        subscribedTopicNames: full ? (pattern !== null ? null : host.subscribedTopics()) : null,
        subscribedTopicRegex: full && version >= 1 ? pattern : null,
        serverAssignor: full ? (config.groupRemoteAssignor ?? null) : null,
        topicPartitions: reportOwned ? [...byTopic].map(([topicId, partitions]) => ({ topicId, partitions })) : null,
      }),
      deadline,
      'ConsumerGroupHeartbeat',
    );
    const code = res.errorCode;
    if (code === 0) {
      this.lastHeartbeatOk = sentAt;
      const wasJoining = this.memberEpoch === 0;
      if (res.memberId) {
        this.memberId = res.memberId;
        this.idFromServer = true;
      }
      this.memberEpoch = res.memberEpoch;
      if (res.heartbeatIntervalMs > 0) this.intervalMs = res.heartbeatIntervalMs;
      this.full = false;
      if (reportOwned) this.lastReported = signature;
      this.joinedOnce = true;
      if (wasJoining) host.event('joined', { memberId: this.memberId, memberEpoch: this.memberEpoch });
      if (res.assignment) this.target = res.assignment.topicPartitions.map((t) => ({ topicId: t.topicId, partitions: [...t.partitions] }));
      return 0;
    }
    this.full = true;
    if (code === ErrorCode.FENCED_MEMBER_EPOCH || code === ErrorCode.UNKNOWN_MEMBER_ID) {
      // Fenced: everything is lost (no commit); join again with epoch 0 and the same member id.
      const lost = host.owned();
      this.memberEpoch = 0;
      if (code === ErrorCode.UNKNOWN_MEMBER_ID) this.idFromServer = false;
      this.target = undefined;
      if (lost.length) await host.lose(lost, errorFor(code).name);
      this.pendingWhy = `rejoining after ${errorFor(code).name}`;
      return code;
    }
    if (COORDINATOR_MOVED.has(code)) {
      coordinator.markDead(`ConsumerGroupHeartbeat: ${errorFor(code).name}`);
      return code;
    }
    if (code === COORDINATOR_LOADING || code === ErrorCode.UNRELEASED_INSTANCE_ID) return code;
    if (code === ErrorCode.UNSUPPORTED_VERSION && !this.joinedOnce) {
      throw new Kip848UnavailableError(
        code,
        `ConsumerGroupHeartbeat ${config.groupId}`,
        'the cluster does not accept KIP-848 consumer groups (groupProtocol consumer): enable them on the brokers (group.coordinator.rebalance.protocols, Kafka 4.0+), or set groupProtocolFallback to use the classic protocol',
      );
    }
    if (FATAL.has(code)) throw new FatalGroupError(code, `ConsumerGroupHeartbeat ${config.groupId}`, res.errorMessage);
    host.event('heartbeat-error', { error: errorFor(code).name, message: res.errorMessage });
    return code;
  }

  /** Moves from what is owned to the target: revoke (committing) what left it, take what is new. */
  private async reconcile(): Promise<void> {
    const { host, metadata } = this.options;
    const target = this.target!;
    const wanted: TopicPartition[] = [];
    for (const t of target) {
      let name = metadata.topicNames.get(t.topicId);
      if (name === undefined) {
        await metadata.refresh('assignment names a topic id the metadata does not know').catch(() => {});
        name = metadata.topicNames.get(t.topicId);
        // Still unknown (created a moment ago): reconcile on a later heartbeat.
        if (name === undefined) return;
      }
      for (const p of t.partitions) wanted.push({ topic: name, partition: p });
    }
    this.target = undefined;
    const owned = host.owned();
    const revoked = difference(owned, wanted);
    const added = difference(wanted, owned);
    if (revoked.length) await host.revoke(revoked, `member epoch ${this.memberEpoch}`);
    if (added.length) await host.assign(added, `member epoch ${this.memberEpoch}`);
    host.event('assigned', { memberEpoch: this.memberEpoch, assigned: wanted, added, revoked });
    this.resolveReady();
  }

  /** Epoch -1 (dynamic: gone) or -2 (static: back within the session timeout, same assignment). */
  protected async announceLeave(_why: string, deadline: number): Promise<boolean> {
    const { config, coordinator } = this.options;
    let told = this.memberEpoch <= 0;
    if (this.memberEpoch > 0) {
      try {
        const conn = await coordinator.connection(deadline);
        const res = await conn.request(
          ConsumerGroupHeartbeat,
          {
            groupId: config.groupId!,
            memberId: this.memberId,
            memberEpoch: config.groupInstanceId ? -2 : -1,
            instanceId: config.groupInstanceId ?? null,
            topicPartitions: null,
            subscribedTopicNames: null,
          },
          { timeoutMs: leaveTimeoutMs(config.requestTimeoutMs, deadline) },
        );
        told = res.errorCode === 0;
        if (!told) this.log.warn('leaving the group failed', { groupId: config.groupId, error: errorFor(res.errorCode).name });
      } catch (err) {
        this.log.warn('leaving the group failed', { groupId: config.groupId, error: (err as Error).message });
      }
    }
    this.memberEpoch = 0;
    this.full = true;
    return told;
  }
}
