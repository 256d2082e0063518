import { ErrorCode, errorFor, Heartbeat, JoinGroup, LeaveGroup, SyncGroup, type JoinGroupResponseMember } from '@kwire/protocol';
import type { MetadataCache } from '../cluster/metadata.js';
import type { ResolvedConfig } from '../config.js';
import { BrokerResponseError } from '../errors.js';
import { withDeadline } from '../deadline.js';
import { commonRebalanceProtocol, type Assignor, type MemberSubscription } from './assignors/index.js';
import { decodeAssignment, decodeSubscription, encodeAssignment, encodeSubscription } from './consumer-protocol.js';
import { COORDINATOR_LOADING, COORDINATOR_MOVED, type GroupCoordinator } from './coordinator.js';
import { difference, FatalGroupError, leaveTimeoutMs, MembershipLifecycle, tpString, type GroupIdentity, type MembershipHost } from './membership.js';
import type { TopicPartition } from './offsets.js';

/** Errors after which the member cannot go on: the application must hear about them. */
const FATAL = new Set<number>([
  ErrorCode.FENCED_INSTANCE_ID,
  ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
  ErrorCode.INVALID_SESSION_TIMEOUT,
  ErrorCode.GROUP_MAX_SIZE_REACHED,
  ErrorCode.INVALID_GROUP_ID,
  ErrorCode.GROUP_AUTHORIZATION_FAILED,
  ErrorCode.UNSUPPORTED_VERSION,
  ErrorCode.INVALID_REQUEST,
]);

/** A rejoin is needed; `why` says what for (every rejoin carries a reason, as franz-go's manage loop). */
class Rejoin extends Error {
  constructor(readonly why: string) {
    super(why);
  }
}

export interface ClassicOptions {
  config: ResolvedConfig;
  metadata: MetadataCache;
  coordinator: GroupCoordinator;
  assignors: readonly Assignor[];
  host: MembershipHost;
}

/**
 * A member of a classic consumer group: JoinGroup (with the MEMBER_ID_REQUIRED two-step), the
 * leader's assignment, SyncGroup, then heartbeats on their own timer until something asks for a
 * rejoin, each rejoin with a reason. Eager assignors give everything up before joining;
 * cooperative ones keep their partitions, give up only what the new assignment moves, and rejoin
 * at once so that the other member can take it (the second round of an incremental rebalance).
 * Error reactions follow the Java client's AbstractCoordinator.
 */
export class ClassicMembership extends MembershipLifecycle {
  private memberId = '';
  private generationId = -1;
  private protocolName: string | null = null;
  /** The last assignment from SyncGroup and its generation (the sticky assignors report it). */
  private lastAssignment: { partitions: TopicPartition[]; generationId: number } | null = null;
  private pendingRejoin: string | undefined;
  private readonly protocol: 'eager' | 'cooperative';

  constructor(private readonly options: ClassicOptions) {
    super(options.host, options.config);
    // The rebalance protocol is the newest one every configured assignor supports (as Java does):
    // the default [range, cooperative-sticky] is eager; [cooperative-sticky] alone is cooperative.
    this.protocol = commonRebalanceProtocol(options.assignors);
  }

  get rebalanceProtocol(): 'eager' | 'cooperative' {
    return this.protocol;
  }

  identity(): GroupIdentity | undefined {
    if (this.generationId < 0 && this.memberId === '') return undefined;
    return { memberId: this.memberId, generation: this.generationId, groupInstanceId: this.options.config.groupInstanceId ?? null, consumerProtocol: false };
  }

  rejoin(why: string): void {
    this.left = false;
    this.pendingRejoin ??= why;
    this.sleeper.wake();
    this.start();
  }

  private get groupId(): string {
    return this.options.config.groupId!;
  }

  protected async run(): Promise<void> {
    let why = 'joining the group';
    while (!this.stopped) {
      if (this.left) {
        // Left (max.poll.interval.ms exceeded): wait until the application pulls again.
        await this.sleeper.untilWoken();
        why = this.pendingRejoin ?? 'rejoining after leaving';
        this.pendingRejoin = undefined;
        continue;
      }
      try {
        this.options.host.event('rebalance', { why, memberId: this.memberId, generationId: this.generationId });
        this.log.info('joining group', { groupId: this.groupId, why });
        this.joining = true;
        void this.probeWhileJoining();
        try {
          await this.joinAndSync(why);
        } finally {
          this.joining = false;
        }
        why = await this.heartbeatUntilRejoin();
      } catch (err) {
        if (this.stopped) return;
        if (err instanceof Rejoin) {
          why = err.why;
          continue;
        }
        if (this.endedBy(err)) return;
        why = `retrying after ${(err as Error).message}`;
        this.log.warn('group request failed', { groupId: this.groupId, error: (err as Error).message });
        await this.sleeper.sleep(this.options.config.retryBackoffMs);
      }
    }
  }

  /** Generation or member id reset: everything owned is lost (no commit), as Java's onJoinPrepare. */
  private async loseAll(why: string): Promise<void> {
    const owned = this.options.host.owned();
    if (owned.length) await this.options.host.lose(owned, why);
  }

  private fatal(code: number, context: string): never {
    throw new FatalGroupError(code, context);
  }

  private async joinAndSync(why: string): Promise<void> {
    const { config, coordinator, host, assignors } = this.options;
    // Eager: hand everything back first (committing what was processed), as Java's onJoinPrepare.
    if (this.protocol === 'eager') {
      const owned = host.owned();
      if (owned.length) await host.revoke(owned, `rebalance: ${why}`);
    }
    let join;
    for (let attempt = 0; ; attempt++) {
      const conn = await coordinator.connection();
      const topics = [...host.subscribedTopics()].sort();
      const owned = host.owned();
      const protocols = assignors.map((a) => ({
        name: a.name,
        metadata: encodeSubscription({
          topics,
          // As Java: only the assignor the group last chose remembers the last assignment.
          userData: a.subscriptionUserData({ topics, ownedPartitions: owned, generationId: this.generationId, lastAssignment: a.name === this.protocolName ? this.lastAssignment : null }),
          ownedPartitions: owned,
          generationId: this.generationId,
          rackId: config.clientRack || null,
        }),
      }));
      try {
        join = await conn.request(
          JoinGroup,
          {
            groupId: this.groupId,
            sessionTimeoutMs: config.sessionTimeoutMs,
            rebalanceTimeoutMs: config.maxPollIntervalMs,
            memberId: this.memberId,
            groupInstanceId: config.groupInstanceId ?? null,
            protocolType: 'consumer',
            protocols,
            reason: why,
          },
          // The coordinator parks a JoinGroup until every member has joined (up to the rebalance timeout).
          { timeoutMs: config.maxPollIntervalMs + config.requestTimeoutMs + 5_000 },
        );
      } catch (err) {
        coordinator.markDead(`JoinGroup failed: ${(err as Error).message}`);
        throw err;
      }
      const code = join.errorCode;
      if (code === 0) break;
      if (code === ErrorCode.MEMBER_ID_REQUIRED) {
        // KIP-394: the coordinator hands a new dynamic member its id; join again with it at once.
        this.memberId = join.memberId;
        this.log.debug('member id assigned', { groupId: this.groupId, memberId: this.memberId });
        continue;
      }
      if (code === ErrorCode.UNKNOWN_MEMBER_ID) {
        this.memberId = '';
        this.generationId = -1;
        await this.loseAll('unknown member id');
        continue;
      }
      if (COORDINATOR_MOVED.has(code)) {
        // Look it up again, but not in a tight loop: right after the offsets topic is created the
        // same broker answers NOT_COORDINATOR until the group's partition is loaded.
        coordinator.markDead(`JoinGroup: ${errorFor(code).name}`);
        await this.sleeper.sleep(config.retryBackoffMs);
        continue;
      }
      if (code === COORDINATOR_LOADING || code === ErrorCode.REBALANCE_IN_PROGRESS) {
        await this.sleeper.sleep(config.retryBackoffMs);
        continue;
      }
      if (FATAL.has(code)) this.fatal(code, `JoinGroup ${this.groupId}`);
      if (!errorFor(code).retriable || attempt > 20) throw new BrokerResponseError(code, `JoinGroup ${this.groupId}`);
      await this.sleeper.sleep(config.retryBackoffMs);
    }
    this.memberId = join.memberId;
    this.generationId = join.generationId;
    this.protocolName = join.protocolName;
    const leader = join.leader === this.memberId;
    host.event('joined', { memberId: this.memberId, generationId: this.generationId, leader, protocol: this.protocolName, members: join.members.length });
    this.log.info('joined group', { groupId: this.groupId, generationId: this.generationId, memberId: this.memberId, leader, protocol: this.protocolName });

    let assignments: { memberId: string; assignment: Buffer }[] = [];
    if (leader && !join.skipAssignment) assignments = await this.computeAssignment(join.members, join.protocolName);
    const conn = await coordinator.connection();
    let sync;
    const syncSentAt = Date.now();
    try {
      sync = await conn.request(SyncGroup, {
        groupId: this.groupId,
        generationId: this.generationId,
        memberId: this.memberId,
        groupInstanceId: config.groupInstanceId ?? null,
        protocolType: 'consumer',
        protocolName: this.protocolName,
        assignments,
      });
    } catch (err) {
      coordinator.markDead(`SyncGroup failed: ${(err as Error).message}`);
      throw err;
    }
    const code = sync.errorCode;
    if (code !== 0) {
      if (code === ErrorCode.REBALANCE_IN_PROGRESS) throw new Rejoin('the group rebalanced again during SyncGroup');
      if (code === ErrorCode.ILLEGAL_GENERATION) {
        this.generationId = -1;
        await this.loseAll('illegal generation (SyncGroup)');
        throw new Rejoin('illegal generation in SyncGroup');
      }
      if (code === ErrorCode.UNKNOWN_MEMBER_ID) {
        this.memberId = '';
        this.generationId = -1;
        await this.loseAll('unknown member id (SyncGroup)');
        throw new Rejoin('unknown member id in SyncGroup');
      }
      if (COORDINATOR_MOVED.has(code)) {
        coordinator.markDead(`SyncGroup: ${errorFor(code).name}`);
        throw new Rejoin(`coordinator moved (${errorFor(code).name})`);
      }
      if (FATAL.has(code)) this.fatal(code, `SyncGroup ${this.groupId}`);
      throw new BrokerResponseError(code, `SyncGroup ${this.groupId}`);
    }
    if (sync.protocolName !== null && sync.protocolName !== this.protocolName) {
      this.fatal(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, `SyncGroup answered protocol ${sync.protocolName}, joined with ${this.protocolName}`);
    }
    // SyncGroup answered: the session is alive (heartbeats resume right after the assignment), as
    // of when the request went out at the latest (see the heartbeat's sentAt).
    this.lastHeartbeatOk = syncSentAt;
    // An empty assignment (a member the leader left out) means no partitions.
    const assigned = decodeAssignment(sync.assignment).partitions;
    this.lastAssignment = { partitions: assigned, generationId: this.generationId };
    await this.apply(assigned);
    this.resolveReady();
  }

  /** Applies a new assignment: cooperative members give up only what moved, then rejoin. */
  private async apply(assigned: TopicPartition[]): Promise<void> {
    const { host } = this.options;
    const owned = host.owned();
    const revoked = difference(owned, assigned);
    const added = difference(assigned, owned);
    if (revoked.length) {
      await host.revoke(revoked, `generation ${this.generationId} moves them`);
      if (this.protocol === 'cooperative') this.pendingRejoin ??= `handing over ${revoked.length} revoked partition(s): ${revoked.map(tpString).join(', ')}`;
    }
    if (added.length) await host.assign(added, `generation ${this.generationId}`);
    host.event('assigned', { generationId: this.generationId, assigned, added, revoked });
  }

  /** The leader's job: decode every member's subscription, run the chosen assignor, encode. */
  private async computeAssignment(members: readonly JoinGroupResponseMember[], protocolName: string | null): Promise<{ memberId: string; assignment: Buffer }[]> {
    const { assignors, metadata } = this.options;
    const assignor = assignors.find((a) => a.name === protocolName);
    if (!assignor) this.fatal(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, `the group chose ${protocolName}, which this member did not offer`);
    const subscriptions: MemberSubscription[] = members.map((m) => ({ ...decodeSubscription(m.metadata), memberId: m.memberId, groupInstanceId: m.groupInstanceId }));
    const topics = new Set(subscriptions.flatMap((s) => s.topics));
    metadata.want(topics);
    if ([...topics].some((t) => !metadata.topics.has(t))) await metadata.refresh('leader assigning partitions of topics it has no metadata for');
    const partitionsPerTopic = new Map<string, number>();
    for (const t of topics) {
      const info = metadata.topics.get(t);
      if (info && info.errorCode === 0 && info.partitions.length) partitionsPerTopic.set(t, info.partitions.length);
    }
    const result = await assignor!.assign({ members: subscriptions, partitionsPerTopic, racksPerPartition: this.racks(partitionsPerTopic) });
    this.log.debug('leader computed assignment', { groupId: this.groupId, assignor: assignor!.name, members: subscriptions.length, topics: partitionsPerTopic.size });
    return subscriptions.map((s) => {
      const a = result.get(s.memberId);
      return { memberId: s.memberId, assignment: encodeAssignment({ partitions: a?.partitions ?? [], userData: a?.userData ?? null }) };
    });
  }

  /** Replica racks per partition (KIP-881), when the brokers have racks; else undefined. */
  private racks(partitionsPerTopic: ReadonlyMap<string, number>): Map<string, (string[] | null)[]> | undefined {
    const { metadata } = this.options;
    if (![...metadata.brokers.values()].some((b) => b.rack)) return undefined;
    const out = new Map<string, (string[] | null)[]>();
    for (const topic of partitionsPerTopic.keys()) {
      const info = metadata.topics.get(topic);
      if (!info) continue;
      out.set(
        topic,
        info.partitions.map((p) => (p ? p.replicas.map((id) => metadata.brokers.get(id)?.rack).filter((r): r is string => !!r) : null)),
      );
    }
    return out;
  }

  /**
   * Heartbeats every heartbeat.interval.ms until a rejoin is needed; resolves with its reason.
   * When none has succeeded for session.timeout.ms (the coordinator unreachable, the network cut)
   * the coordinator has given the partitions to others by now: they are lost here too, so that
   * this member stops delivering them (no zombie), and it joins again when it can.
   */
  private async heartbeatUntilRejoin(): Promise<string> {
    const { config, coordinator, host } = this.options;
    this.lastHeartbeatOk = Date.now();
    for (;;) {
      const lastOk = this.lastHeartbeatOk;
      if (this.pendingRejoin !== undefined) {
        const why = this.pendingRejoin;
        this.pendingRejoin = undefined;
        return why;
      }
      if (this.stopped || this.left) return 'stopped';
      const sessionEnds = lastOk + config.sessionTimeoutMs;
      await this.sleeper.sleep(Math.min(config.heartbeatIntervalMs, Math.max(0, sessionEnds - Date.now())));
      if (this.pendingRejoin !== undefined || this.stopped || this.left) continue;
      if (Date.now() >= sessionEnds) return this.sessionExpired(lastOk);
      let res;
      // A success renews the session as of the request's sending, not its answer's reading: a
      // process frozen with the answer in its socket wakes up with its session gone.
      let sentAt = 0;
      try {
        const conn = await coordinator.connection(sessionEnds);
        sentAt = Date.now();
        res = await withDeadline(
          conn.request(Heartbeat, { groupId: this.groupId, generationId: this.generationId, memberId: this.memberId, groupInstanceId: config.groupInstanceId ?? null }),
          sessionEnds,
          'Heartbeat',
        );
      } catch (err) {
        if (this.stopped) return 'stopped';
        coordinator.markDead(`heartbeat failed: ${(err as Error).message}`);
        host.event('heartbeat-error', { error: (err as Error).message, sinceLastOkMs: Date.now() - lastOk });
        if (Date.now() >= sessionEnds) return this.sessionExpired(lastOk);
        continue;
      }
      const code = res.errorCode;
      if (code === 0) {
        this.lastHeartbeatOk = sentAt;
        continue;
      }
      if (code === ErrorCode.REBALANCE_IN_PROGRESS) return 'the group is rebalancing (heartbeat answered REBALANCE_IN_PROGRESS)';
      if (code === ErrorCode.ILLEGAL_GENERATION) {
        this.generationId = -1;
        await this.loseAll('illegal generation (heartbeat)');
        return 'illegal generation (heartbeat)';
      }
      if (code === ErrorCode.UNKNOWN_MEMBER_ID) {
        this.memberId = '';
        this.generationId = -1;
        await this.loseAll('unknown member id (heartbeat): the session expired');
        return 'unknown member id (heartbeat)';
      }
      if (COORDINATOR_MOVED.has(code)) {
        coordinator.markDead(`heartbeat: ${errorFor(code).name}`);
        await this.sleeper.sleep(config.retryBackoffMs);
        continue;
      }
      if (FATAL.has(code)) this.fatal(code, `Heartbeat ${this.groupId}`);
      host.event('heartbeat-error', { error: errorFor(code).name });
    }
  }

  /**
   * While a JoinGroup is out, no heartbeat runs, yet a cooperative member keeps delivering the
   * partitions it keeps. A JoinGroup parked by a live coordinator keeps the member in the group; one
   * that never arrived (the network cut) does not, and the coordinator gives the partitions away
   * after session.timeout.ms. So the coordinator's broker is probed every heartbeat interval: an
   * answer renews the client's view of the session; none for session.timeout.ms, and what is owned
   * is lost here too (no zombie), as the heartbeat loop does. Found by the chaos test (seed 7).
   */
  private async probeWhileJoining(): Promise<void> {
    const { config, coordinator } = this.options;
    while (this.joining && !this.stopped) {
      await new Promise<void>((resolve) => setTimeout(resolve, config.heartbeatIntervalMs).unref());
      if (!this.joining || this.stopped || this.options.host.owned().length === 0) continue;
      // Lapsed already (the process was frozen, or its loop blocked, past session.timeout.ms): an
      // answer now proves the broker is up, not that this member is still in the group.
      if (Date.now() - this.lastHeartbeatOk >= config.sessionTimeoutMs) {
        await this.sessionExpired(this.lastHeartbeatOk);
        return;
      }
      const probedAt = Date.now();
      if (await coordinator.probe(Math.min(config.requestTimeoutMs, config.heartbeatIntervalMs))) {
        this.lastHeartbeatOk = probedAt;
        continue;
      }
      if (this.joining && Date.now() - this.lastHeartbeatOk >= config.sessionTimeoutMs) {
        await this.sessionExpired(this.lastHeartbeatOk);
        return;
      }
    }
  }

  /** No heartbeat succeeded for session.timeout.ms: what is owned is lost; join again. */
  private async sessionExpired(lastOk: number): Promise<string> {
    const why = `no heartbeat succeeded for ${Date.now() - lastOk} ms (session.timeout.ms ${this.options.config.sessionTimeoutMs})`;
    this.log.warn('group session expired on the client side: partitions lost', { groupId: this.groupId, memberId: this.memberId, why });
    this.generationId = -1;
    await this.loseAll(why);
    return why;
  }

  /**
   * LeaveGroup for a dynamic member. A static member just goes quiet: its session timeout keeps its
   * place, so a restart costs no rebalance.
   */
  protected async announceLeave(why: string, deadline: number): Promise<boolean> {
    const { config, coordinator } = this.options;
    if (config.groupInstanceId !== undefined || this.memberId === '') return true;
    let told = false;
    try {
      const conn = await coordinator.connection(deadline);
      const res = await conn.request(
        LeaveGroup,
        { groupId: this.groupId, members: [{ memberId: this.memberId, groupInstanceId: null, reason: why }] },
        { timeoutMs: leaveTimeoutMs(config.requestTimeoutMs, deadline) },
      );
      if (res.errorCode !== 0) this.log.warn('LeaveGroup failed', { groupId: this.groupId, error: errorFor(res.errorCode).name });
      else told = true;
    } catch (err) {
      this.log.warn('LeaveGroup failed', { groupId: this.groupId, error: (err as Error).message });
    }
    this.memberId = '';
    this.generationId = -1;
    return told;
  }
}
