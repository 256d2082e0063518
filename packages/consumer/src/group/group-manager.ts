import type { MetadataCache } from '../cluster/metadata.js';
import type { ResolvedConfig } from '../config.js';
import { ConfigError, isKafkaError, UsageError } from '../errors.js';
import { settledBy } from '../deadline.js';
import { CommitPositions } from './commit-positions.js';
import { CommitTurns } from './commit-turns.js';
import type { SubscriptionState } from '../state/subscription-state.js';
import type { ConsumerMeter } from '../metrics/meter.js';
import { tpKey, type PartitionState } from '../state/partition-state.js';
import type { BrokerPool } from '../connection/index.js';
import type { Assignor } from './assignors/index.js';
import { ClassicMembership } from './classic.js';
import { GroupCoordinator } from './coordinator.js';
import { ConsumerGroupMembership, Kip848UnavailableError } from './kip848.js';
import type { GroupEventDetails, GroupEventName, Membership, MembershipHost } from './membership.js';
import { CommitFailedError, OffsetStore, type OffsetToCommit, type TopicPartition } from './offsets.js';

/** Called around assignment changes, as the Java client's ConsumerRebalanceListener. */
export interface RebalanceListener {
  /** Partitions are going away in a clean handover: commit what you need to, now. */
  onPartitionsRevoked?(partitions: TopicPartition[]): Promise<void> | void;
  onPartitionsAssigned?(partitions: TopicPartition[]): Promise<void> | void;
  /** Partitions are gone without a handover (fenced, session expired): do not commit them. */
  onPartitionsLost?(partitions: TopicPartition[]): Promise<void> | void;
}

export type Subscription = { topics: readonly string[] } | { pattern: RegExp | string };

/** What close() could and could not do for the group. */
export interface GroupCloseReport {
  /** Offsets committed on the way out. */
  committed: OffsetToCommit[];
  /** Offsets finished but not committed (the coordinator was unreachable, or refused), with why. */
  uncommitted: (OffsetToCommit & { error: string })[];
  /** The coordinator was told the member leaves (a static member going quiet counts). */
  leftGroup: boolean;
}

export interface GroupManagerOptions {
  config: ResolvedConfig;
  pool: BrokerPool;
  metadata: MetadataCache;
  subscriptions: SubscriptionState;
  meter: ConsumerMeter;
  assignors: readonly Assignor[];
  protocol: 'classic' | 'consumer';
  emit<N extends GroupEventName>(name: N, detail: GroupEventDetails[N]): void;
  isClosed(): boolean;
}

/**
 * The consumer's side of group membership: it turns the membership's decisions into partitions
 * fetched or dropped, fetches committed offsets for new partitions, commits processed positions
 * (on an interval, on revocation, on close, and when asked), resolves a pattern subscription
 * against metadata, and watches max.poll.interval.ms.
 */
export class GroupManager implements MembershipHost {
  readonly coordinator: GroupCoordinator;
  readonly offsets: OffsetStore;
  membership: Membership;
  private resolveReady!: () => void;
  private rejectReady!: (err: Error) => void;
  /** Settles when this member first has an assignment, whichever protocol it ended up with. */
  readonly ready: Promise<void>;
  private subscription: Subscription | undefined;
  /** The pattern as Java's subscribe(Pattern) applies it: whole topic names. */
  private matcher: RegExp | undefined;
  private listener: RebalanceListener | undefined;
  private readonly ownedPartitions = new Map<string, TopicPartition>();
  private autoCommitTimer: NodeJS.Timeout | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private readonly commits = new CommitTurns();
  private exceeded = false;
  /** Positions last committed, to commit only what moved. */
  /** What was last committed per owned partition, and what would be now (with its metadata). */
  readonly positions: CommitPositions;
  private started = false;

  constructor(private readonly options: GroupManagerOptions) {
    const { config, pool, metadata } = options;
    if (!config.groupId) throw new ConfigError('subscribe() needs groupId (group.id)');
    this.coordinator = new GroupCoordinator({ pool, groupId: config.groupId, retryBackoffMs: config.retryBackoffMs, logger: config.logger, isClosed: options.isClosed });
    this.positions = new CommitPositions(config.commitMetadataMaxBytes, config.logger);
    this.offsets = new OffsetStore(this.coordinator, metadata, {
      groupId: config.groupId,
      requireStable: config.isolationLevel === 'read_committed',
      retryBackoffMs: config.retryBackoffMs,
      logger: config.logger,
      isClosed: options.isClosed,
    });
    this.ready = new Promise((resolve, reject) => {
      this.resolveReady = resolve;
      this.rejectReady = reject;
    });
    this.ready.catch(() => {});
    this.membership = this.attach(
      options.protocol === 'consumer'
        ? new ConsumerGroupMembership({ config, metadata, coordinator: this.coordinator, host: this })
        : new ClassicMembership({ config, metadata, coordinator: this.coordinator, assignors: options.assignors, host: this }),
    );
    metadata.onChange((change) => {
      // Before the membership starts (subscribe() loading metadata) the first join will see it all.
      if (!this.subscription || !this.started) return;
      // Rebalance triggers from metadata: a new topic matching the pattern, a subscribed topic
      // that gained partitions (or vanished).
      const subscribed = new Set(this.subscribedTopics());
      const grown = change.resized.filter((t) => subscribed.has(t));
      // A topic the pattern now matches, or a subscribed topic that did not exist until now.
      const matched = change.added.filter((t) => subscribed.has(t));
      const gone = change.removed.filter((t) => this.knownTopics.has(t));
      if (grown.length || matched.length || gone.length) {
        const why = [
          grown.length && `partitions added to ${grown.join(', ')}`,
          matched.length && `new topics match the pattern: ${matched.join(', ')}`,
          gone.length && `topics deleted: ${gone.join(', ')}`,
        ]
          .filter(Boolean)
          .join('; ');
        this.membership.rejoin(why);
      }
      this.knownTopics = subscribed;
    });
  }

  private knownTopics = new Set<string>();

  private attach(m: Membership): Membership {
    m.ready.then(
      () => this.resolveReady(),
      (err: Error) => {
        if (!this.fellBack(err)) this.rejectReady(err);
      },
    );
    return m;
  }

  /**
   * groupProtocolFallback: a cluster that refuses KIP-848 groups (a 3.x broker with them off
   * offers the API and answers UNSUPPORTED_VERSION) gets the classic protocol instead.
   */
  private fellBack(err: Error): boolean {
    const { config, metadata } = this.options;
    if (!(err instanceof Kip848UnavailableError) || !config.groupProtocolFallback || this.membership instanceof ClassicMembership) return false;
    config.logger.warn('the cluster refuses KIP-848 groups: using the classic protocol', { groupId: config.groupId, error: err.message });
    this.membership = this.attach(new ClassicMembership({ config, metadata, coordinator: this.coordinator, assignors: this.options.assignors, host: this }));
    this.membership.start();
    return true;
  }

  /**
   * Starts (or changes) the subscription. A pattern first loads every topic's metadata, so that the
   * first join already names the topics it matches.
   */
  async subscribe(subscription: Subscription, listener?: RebalanceListener): Promise<void> {
    const { metadata, config } = this.options;
    let matcher: RegExp | undefined;
    if ('pattern' in subscription) {
      matcher = wholeNameMatcher(subscription.pattern);
      metadata.setInterest([], true);
    } else {
      if (!subscription.topics.length) throw new UsageError('subscribe: no topics');
      metadata.setInterest(subscription.topics);
    }
    this.subscription = subscription;
    this.matcher = matcher;
    this.listener = listener;
    if (matcher) await metadata.refresh('pattern subscription: every topic, to match against');
    else if ('topics' in subscription && subscription.topics.some((t) => !metadata.topics.get(t)?.partitions.length)) await metadata.refresh('subscribed topics');
    this.knownTopics = new Set(this.subscribedTopics());
    this.reportMissing();
    if (!this.started) {
      this.started = true;
      this.membership.start();
      if (config.enableAutoCommit && config.autoCommitIntervalMs > 0) {
        this.autoCommitTimer = setInterval(() => void this.autoCommit(), config.autoCommitIntervalMs);
        this.autoCommitTimer.unref();
      }
      this.pollTimer = setInterval(() => this.tick(), Math.min(1_000, Math.max(50, config.maxPollIntervalMs / 10)));
      this.pollTimer.unref();
    } else {
      this.membership.rejoin('the subscription changed');
    }
  }

  /**
   * Gives up every partition (committing what was finished, bounded by request.timeout.ms) and
   * leaves the group; subscribe() again to come back.
   */
  async unsubscribe(): Promise<void> {
    if (!this.subscription) return;
    this.subscription = undefined;
    this.matcher = undefined;
    this.options.metadata.setInterest([]);
    this.unsubscribing = true;
    try {
      await this.membership.leave('the consumer unsubscribed', Date.now() + this.options.config.requestTimeoutMs);
    } finally {
      this.unsubscribing = false;
    }
  }

  private unsubscribing = false;

  /** A rebalance now, with a reason the coordinator logs (Java's enforceRebalance). */
  enforceRebalance(reason: string): void {
    if (!this.subscription) throw new UsageError('enforceRebalance() needs a subscription');
    this.membership.rejoin(`enforced by the application: ${reason}`);
  }

  /** Subscribed topics the cluster does not have (yet): waited for, as Java does, with a debug line. */
  private reportMissing(): void {
    const s = this.subscription;
    if (!s || !('topics' in s)) return;
    const { metadata, config } = this.options;
    const missing = s.topics.filter((t) => !metadata.topics.get(t)?.partitions.length);
    if (missing.length === 0) return;
    config.logger.debug('subscribed topics do not exist yet: waiting for them', { topics: missing });
    metadata.requestUpdate(`subscribed topics missing: ${missing.join(', ')}`);
  }

  private tick(): void {
    this.checkPollInterval();
    this.reportMissing();
  }

  // ---------------------------------------------------------------- MembershipHost

  subscribedTopics(): string[] {
    const s = this.subscription;
    if (!s) return [];
    if ('topics' in s) return [...s.topics];
    const re = this.matcher!;
    return [...this.options.metadata.topics.values()].filter((t) => t.errorCode === 0 && !t.isInternal && re.test(t.name)).map((t) => t.name);
  }

  subscribedPattern(): string | null {
    const s = this.subscription;
    if (!s || !('pattern' in s)) return null;
    // KIP-848's SubscribedTopicRegex is matched by the broker (RE2/J, whole names).
    return typeof s.pattern === 'string' ? s.pattern : s.pattern.source;
  }

  owned(): TopicPartition[] {
    return [...this.ownedPartitions.values()];
  }

  /** Whether records of owned partitions may be delivered now: not while the session has lapsed (no zombie). */
  mayDeliver(): boolean {
    return this.ownedPartitions.size === 0 || !this.membership.sessionLapsed();
  }

  async assign(partitions: TopicPartition[], why: string): Promise<void> {
    const { subscriptions, config, metadata } = this.options;
    metadata.want(new Set(partitions.map((p) => p.topic)));
    if (partitions.some((p) => !metadata.topics.get(p.topic)?.partitions.length)) await metadata.refresh('new partitions assigned');
    const identity = this.membership.identity();
    const committed = identity
      ? await this.offsets.fetch(partitions, {
          generationIdOrMemberEpoch: identity.generation,
          memberId: identity.memberId,
          groupInstanceId: identity.groupInstanceId,
          consumerProtocol: identity.consumerProtocol,
        })
      : new Map();
    for (const tp of partitions) {
      const key = tpKey(tp.topic, tp.partition);
      const state = subscriptions.create(tp.topic, tp.partition);
      const c = committed.get(key);
      if (c) {
        // With its leader epoch: the position is checked against the log before fetching (KIP-320).
        subscriptions.seek(state, c.offset, c.leaderEpoch);
        this.positions.restore(subscriptions, state, c);
      } else if (config.autoOffsetReset === 'none') {
        subscriptions.fail(state, new ConfigError(`${tp.topic}-${tp.partition}: no committed offset and auto.offset.reset is none`));
      } else {
        subscriptions.seek(state, config.autoOffsetReset);
      }
      this.ownedPartitions.set(key, tp);
      subscriptions.add(state);
    }
    await this.callListener('onPartitionsAssigned', partitions);
  }

  async revoke(partitions: TopicPartition[], why: string): Promise<void> {
    const { subscriptions, config } = this.options;
    const states = partitions.map((tp) => subscriptions.get(tpKey(tp.topic, tp.partition))).filter((s): s is PartitionState => s !== undefined);
    // Stop delivering, then let the application finish what it holds (bounded by the rebalance
    // timeout), so that the commit covers every record handed out: no duplicates after a clean
    // rebalance.
    for (const s of states) subscriptions.revoke(s);
    // After max.poll.interval.ms was exceeded the application is stuck, and on close() it may be
    // the very caller holding a batch (close() from inside its loop): do not wait for it then. What
    // it holds is not committed (at least once).
    // So is unsubscribe(), called by the application, perhaps with a batch in its hands.
    const wait = this.exceeded || this.closing || this.unsubscribing ? 0 : Math.max(1_000, config.maxPollIntervalMs - 1_000);
    await Promise.all(states.map((s) => s.whenReleased(wait)));
    await this.callListener('onPartitionsRevoked', partitions);
    if (config.enableAutoCommit) {
      const wanted = this.pending(states);
      const report = this.closeReport;
      try {
        // Bounded: a coordinator that is gone must not hold a rebalance (or close) for ever.
        await this.commit(wanted, this.closing ? this.closeDeadline : Date.now() + config.requestTimeoutMs);
        report?.committed.push(...wanted);
      } catch (err) {
        const error = (err as Error).message;
        config.logger.warn('commit on revocation failed: these offsets stay uncommitted', { error, offsets: wanted.map((o) => `${o.topic}-${o.partition}@${o.offset}`) });
        report?.uncommitted.push(...wanted.map((o) => ({ ...o, error })));
      }
    }
    for (const tp of partitions) this.drop(tp);
    this.options.emit('revoked', { partitions, why });
  }

  async lose(partitions: TopicPartition[], why: string): Promise<void> {
    if (partitions.length > 0) {
      this.options.config.logger.warn(
        'partitions lost: their records are no longer delivered here, and what was finished of them is not committed (the next owner reads them from the committed offset)',
        {
          groupId: this.options.config.groupId,
          partitions: partitions.map((tp) => `${tp.topic}-${tp.partition}`),
          why,
        },
      );
    }
    for (const tp of partitions) this.drop(tp, true);
    this.options.emit('lost', { partitions, why });
    await this.callListener('onPartitionsLost', partitions);
  }

  event<N extends GroupEventName>(name: N, detail: GroupEventDetails[N]): void {
    if (name === 'rebalance') this.options.meter.rebalanceStarted(String((detail as GroupEventDetails['rebalance']).why));
    else if (name === 'assigned') this.options.meter.rebalanceEnded();
    // A refusal that the fallback will handle is not fatal for the application.
    if (name === 'fatal' && (detail as GroupEventDetails['fatal']).error instanceof Kip848UnavailableError && this.options.config.groupProtocolFallback) return;
    this.options.config.logger.debug(`group ${name}`, detail as object as Record<string, unknown>);
    this.options.emit(name, detail);
  }

  private drop(tp: TopicPartition, lost = false): void {
    const key = tpKey(tp.topic, tp.partition);
    this.ownedPartitions.delete(key);
    this.positions.forget(key);
    if (lost) this.options.subscriptions.markLost(key);
    else this.options.subscriptions.remove(key);
  }

  private async callListener(name: keyof RebalanceListener, partitions: TopicPartition[]): Promise<void> {
    const fn = this.listener?.[name];
    if (!fn || partitions.length === 0) return;
    try {
      await fn.call(this.listener, partitions);
    } catch (err) {
      this.options.config.logger.error(`${name} threw`, { error: (err as Error).message });
    }
  }

  // ---------------------------------------------------------------- commits

  /** Processed positions of owned partitions that moved since their last commit. */
  private pending(states?: PartitionState[]): OffsetToCommit[] {
    const out: OffsetToCommit[] = [];
    for (const s of states ?? this.options.subscriptions.values()) {
      if (!this.ownedPartitions.has(s.key)) continue;
      const o = this.positions.current(s);
      if (o !== null && !this.positions.isCommitted(o)) out.push(o);
    }
    return out;
  }

  private async commitProcessed(states?: PartitionState[]): Promise<void> {
    // Without states, commit() reads what to commit itself, once the commit before it is done.
    await this.commit(states && this.pending(states));
  }

  /**
   * Commits offsets (given, or every processed position that moved); one commit at a time. With a
   * `deadline` (Date.now() time) it gives up there with a RequestTimeoutError.
   */
  async commit(offsets?: readonly OffsetToCommit[], deadline = Infinity): Promise<void> {
    if ((offsets ?? this.pending()).length === 0) return;
    await this.commits.turn(deadline);
    // What is owned and finished is read after the commit before this one settled, not before:
    // auto-commits queued behind one that hung (an unreachable coordinator) would otherwise send,
    // once the member had lost those partitions and rejoined, the offsets they had then, and the
    // coordinator takes them with the new epoch: the group's committed offset went back.
    const wanted = offsets ?? this.pending();
    if (wanted.length === 0) return;
    const identity = this.membership.identity();
    if (!identity)
      throw new CommitFailedError(
        25,
        wanted.map((o) => ({ topic: o.topic, partition: o.partition })),
      );
    const started = performance.now();
    const statesAtStart = wanted
      .map((o) => tpKey(o.topic, o.partition))
      .flatMap((key) => {
        const state = this.ownedPartitions.has(key) ? this.options.subscriptions.get(key) : undefined;
        return state ? [[key, state] as const] : [];
      });
    return this.commits.run(async () => {
      try {
        await this.offsets.commit(
          wanted,
          { generationIdOrMemberEpoch: identity.generation, memberId: identity.memberId, groupInstanceId: identity.groupInstanceId, consumerProtocol: identity.consumerProtocol },
          deadline,
          // Still the membership the offsets belong to: the same member (classic: the same
          // generation; a KIP-848 epoch moves with every reconciliation), and every partition that
          // was owned at the start still owned by the same assignment (a partition lost and given
          // back has a new state).
          () => {
            const now = this.membership.identity();
            if (now === undefined || now.memberId !== identity.memberId || (!identity.consumerProtocol && now.generation !== identity.generation)) return false;
            return statesAtStart.every(([key, state]) => this.options.subscriptions.get(key) === state);
          },
        );
        this.positions.committed(wanted);
        const committed = wanted.map((o) => ({ topic: o.topic, partition: o.partition, offset: o.offset, metadata: o.metadata ?? null }));
        this.options.meter.committed(committed, performance.now() - started);
        for (const i of this.options.config.interceptors) i.onCommit?.(committed);
      } catch (err) {
        this.options.meter.committed(
          wanted.map((o) => ({ topic: o.topic, partition: o.partition, offset: o.offset })),
          performance.now() - started,
          err as Error,
        );
        // A commit refused for a group reason means the membership is stale: rejoin. Unless the
        // membership has moved on since the commit was sent (a rebalance completed while it was
        // in flight): the refusal is about the old generation, and rejoining again would start
        // one rebalance per auto-commit (Java checks generationUnchanged() the same way).
        const now = this.membership.identity();
        const moved = now === undefined || now.generation !== identity.generation || now.memberId !== identity.memberId;
        if (err instanceof CommitFailedError && [27, 22, 25, 110, 113].includes(err.errorCode) && !moved) this.membership.rejoin(`commit refused: ${err.errorName}`);
        throw err;
      }
    });
  }

  private async autoCommit(): Promise<void> {
    try {
      await this.commitProcessed();
    } catch (err) {
      this.options.config.logger.warn('auto-commit failed', { error: (err as Error).message, retriable: isKafkaError(err) ? err.retriable : undefined });
    }
  }

  /**
   * max.poll.interval.ms: a batch held by the application for longer means it is stuck; like the
   * Java client, the member leaves the group (so its partitions go to others) and says so; it
   * rejoins when the application comes back for more.
   */
  private checkPollInterval(): void {
    const { config, subscriptions } = this.options;
    // Counted consumer-wide: a batch of a partition revoked meanwhile is still in the application's hands.
    const held = subscriptions.heldBatches.count > 0;
    const now = Date.now();
    if (held) {
      // Held since the last release: an application that keeps releasing batches is not stuck.
      this.heldSince = Math.max(this.heldSince ?? now, subscriptions.heldBatches.releasedAt);
      if (!this.exceeded && now - this.heldSince > config.maxPollIntervalMs) {
        this.exceeded = true;
        config.logger.warn('max.poll.interval.ms exceeded: leaving the group', { groupId: config.groupId, heldMs: now - this.heldSince });
        this.options.emit('poll-interval-exceeded', { heldMs: now - this.heldSince });
        void this.membership.leave('max.poll.interval.ms exceeded: the application held a batch too long');
      }
    } else {
      this.heldSince = undefined;
      if (this.exceeded) {
        this.exceeded = false;
        this.membership.rejoin('the application is consuming again after exceeding max.poll.interval.ms');
      }
    }
  }

  private heldSince: number | undefined;

  private closing = false;
  /** While closing: the deadline of the commit on the way out, and what it managed. */
  private closeDeadline = Infinity;
  private closeReport: GroupCloseReport | undefined;

  /**
   * Commits what was finished, revokes everything and leaves the group, by `deadline` (a
   * Date.now() time) whatever the cluster does; fills `report` as it goes (the caller reads it
   * even when the deadline cut this short).
   */
  async close(deadline: number, report: GroupCloseReport): Promise<void> {
    this.closing = true;
    this.closeDeadline = deadline;
    this.closeReport = report;
    if (this.autoCommitTimer) clearInterval(this.autoCommitTimer);
    if (this.pollTimer) clearInterval(this.pollTimer);
    if (this.started) report.leftGroup = await this.membership.stop('the consumer is closing', deadline);
    await settledBy(this.commits.pending ?? Promise.resolve(), deadline);
  }

  /** Finished offsets of owned partitions not committed yet (what a close cut short leaves behind). */
  uncommitted(): OffsetToCommit[] {
    return this.pending();
  }

  /** Owned partitions whose finished offset is already committed (nothing finished since the last commit). */
  upToDate(): OffsetToCommit[] {
    const out: OffsetToCommit[] = [];
    for (const s of this.options.subscriptions.values()) {
      if (!this.ownedPartitions.has(s.key)) continue;
      const o = this.positions.current(s);
      if (o !== null && this.positions.isCommitted(o)) out.push(o);
    }
    return out;
  }
}

/**
 * A subscription pattern as Java's subscribe(Pattern) matches: the whole topic name
 * (Matcher.matches()), so `t.*c` takes `tc` and `txyc`, not `txycz` or `atc`. The g and y flags,
 * which would make test() remember where it stopped, are dropped; i, m, s, u, v stay.
 */
export function wholeNameMatcher(pattern: RegExp | string): RegExp {
  const source = typeof pattern === 'string' ? pattern : pattern.source;
  const flags = typeof pattern === 'string' ? '' : pattern.flags.replace(/[gyd]/g, '');
  try {
    return new RegExp(`^(?:${source})$`, flags);
  } catch (err) {
    throw new UsageError(`subscribe: pattern ${JSON.stringify(source)} is not a valid regular expression: ${(err as Error).message}`);
  }
}
