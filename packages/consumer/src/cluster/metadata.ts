import { ErrorCode, errorFor, ZERO_UUID, type Input, type MetadataRequest, type MetadataResponse } from '@kwire/protocol';
import { BrokerResponseError } from '../errors.js';
import type { Logger } from '../logger.js';

export interface BrokerInfo {
  readonly nodeId: number;
  readonly host: string;
  readonly port: number;
  readonly rack: string | null;
}

export interface PartitionInfo {
  readonly topic: string;
  readonly partition: number;
  /** -1 while the partition has no leader (LEADER_NOT_AVAILABLE). */
  readonly leaderId: number;
  readonly leaderEpoch: number;
  readonly replicas: readonly number[];
  readonly isr: readonly number[];
  readonly errorCode: number;
}

export interface TopicInfo {
  readonly name: string;
  readonly topicId: string;
  readonly isInternal: boolean;
  readonly partitions: readonly PartitionInfo[];
  /** Topic-level error (UNKNOWN_TOPIC_OR_PARTITION, TOPIC_AUTHORIZATION_FAILED, ...); 0 when fine. */
  readonly errorCode: number;
}

/** What changed in one refresh: the group layer turns these into rebalance triggers. */
export interface MetadataChange {
  readonly added: readonly string[];
  readonly removed: readonly string[];
  /** Topics whose partition count grew (or shrank). */
  readonly resized: readonly string[];
  /** Partitions whose leader or leader epoch moved. */
  readonly leaderMoved: readonly { topic: string; partition: number }[];
}

export type MetadataSender = (body: Input<MetadataRequest>) => Promise<MetadataResponse>;

export interface MetadataOptions {
  /** metadata.max.age.ms: refresh at least this often. */
  maxAgeMs: number;
  /** retry.backoff.ms: the least time between two refreshes asked for by errors. */
  retryBackoffMs: number;
  /**
   * retry.backoff.max.ms: while a topic asked about does not exist, refreshes come at
   * retry.backoff.ms doubling up to this (1 s when absent), not every metadata.max.age.ms.
   */
  retryBackoffMaxMs?: number;
  logger: Logger;
}

/**
 * The consumer's view of the cluster: brokers, topics, partitions, leaders and leader epochs, topic
 * ids both ways. Refreshed every metadata.max.age.ms and whenever something says it is stale
 * (NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION, FENCED_LEADER_EPOCH, UNKNOWN_TOPIC_ID, a
 * broker gone, a new subscription). Concurrent refresh requests share one Metadata request.
 */
export class MetadataCache {
  readonly brokers = new Map<number, BrokerInfo>();
  readonly topics = new Map<string, TopicInfo>();
  readonly topicNames = new Map<string, string>();
  clusterId: string | null = null;
  controllerId = -1;
  /** When the last refresh completed (ms since epoch); 0 before the first. */
  updatedAt = 0;

  /** Topics to ask about; `all` for pattern subscriptions (Metadata with null topics). */
  private interest = new Set<string>();
  private all = false;
  private inflight: Promise<MetadataChange> | undefined;
  private again: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly listeners = new Set<(change: MetadataChange) => void>();
  private closed = false;
  /** Topics asked about that the cluster did not have (said once each, until they appear). */
  private readonly missing = new Set<string>();
  /** Topics asked about for partitionsFor() only (see probe()). */
  private readonly probing = new Set<string>();
  /** Refreshes in a row that found a topic missing: the backoff grows with them. */
  private missingStreak = 0;

  constructor(
    private readonly send: MetadataSender,
    private readonly options: MetadataOptions,
  ) {}

  /** Adds topics to the set refreshed. */
  want(topics: Iterable<string>): void {
    for (const t of topics) {
      this.interest.add(t);
      this.probing.delete(t);
    }
  }

  /** Whether a topic is in the set refreshed. */
  wants(topic: string): boolean {
    return this.all || this.interest.has(topic);
  }

  /**
   * Asks about a topic in the next refreshes without consuming it (partitionsFor): its absence is
   * the caller's to report, not a warning; unwant() ends it.
   */
  probe(topic: string): void {
    this.interest.add(topic);
    this.probing.add(topic);
  }

  /** Takes a probed topic out of the set refreshed. */
  unwant(topic: string): void {
    this.interest.delete(topic);
    this.probing.delete(topic);
    this.missing.delete(topic);
  }

  /** Replaces the set of topics refreshed (a subscription changed). */
  setInterest(topics: Iterable<string>, all = false): void {
    this.interest = new Set(topics);
    this.all = all;
    for (const t of this.interest) this.probing.delete(t);
    for (const t of [...this.missing]) if (all || !this.interest.has(t)) this.missing.delete(t);
  }

  onChange(listener: (change: MetadataChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Starts the periodic refresh (metadata.max.age.ms). */
  start(): void {
    this.schedule(this.options.maxAgeMs);
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
  }

  leaderOf(topic: string, partition: number): { leaderId: number; leaderEpoch: number } | undefined {
    const p = this.topics.get(topic)?.partitions[partition];
    return p && p.leaderId >= 0 ? { leaderId: p.leaderId, leaderEpoch: p.leaderEpoch } : undefined;
  }

  /**
   * Refreshes now (joining a refresh already under way; if that one started before this call's
   * reason arose, another follows it). Resolves with what changed.
   */
  refresh(reason: string): Promise<MetadataChange> {
    if (this.inflight) {
      this.again ??= reason;
      return this.inflight.then(() => this.refresh(this.again ?? reason));
    }
    this.again = undefined;
    this.inflight = this.fetch(reason).finally(() => {
      this.inflight = undefined;
      if (this.closed) return;
      if (this.missing.size === 0) {
        this.missingStreak = 0;
        this.schedule(this.options.maxAgeMs);
        return;
      }
      // A topic assigned or subscribed before it exists is consumed within a second or so of its
      // creation (as Java and kafkajs do), not after metadata.max.age.ms (5 minutes).
      const { retryBackoffMs, retryBackoffMaxMs = 1_000 } = this.options;
      const wait = Math.min(Math.max(retryBackoffMs, 1) * 2 ** Math.min(this.missingStreak++, 20), Math.max(retryBackoffMs, retryBackoffMaxMs));
      this.schedule(wait, `topics missing: ${[...this.missing].join(', ')}`);
    });
    return this.inflight;
  }

  /**
   * Marks the metadata stale: a refresh happens soon, but not sooner than retry.backoff.ms after
   * the last one, so a burst of errors from one fetch costs one Metadata request.
   */
  requestUpdate(reason: string): void {
    if (this.closed) return;
    const wait = Math.max(0, this.updatedAt + this.options.retryBackoffMs - Date.now());
    this.options.logger.debug('metadata update requested', { reason, inMs: wait });
    this.schedule(wait, reason);
  }

  private schedule(ms: number, reason = 'metadata.max.age.ms'): void {
    if (this.closed) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.refresh(reason).catch((err: unknown) => {
        this.options.logger.warn('metadata refresh failed', { reason, error: (err as Error).message });
        this.schedule(Math.max(this.options.retryBackoffMs, 100), reason);
      });
    }, ms);
    // Never keep the process alive for a refresh.
    this.timer.unref();
  }

  private async fetch(reason: string): Promise<MetadataChange> {
    const topics = this.all ? null : [...this.interest].map((name) => ({ topicId: ZERO_UUID, name }));
    this.options.logger.debug('refreshing metadata', { reason, topics: topics === null ? 'all' : topics.length });
    const res = await this.send({ topics, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
    if (res.errorCode !== 0) throw new BrokerResponseError(res.errorCode, 'Metadata');
    return this.apply(res);
  }

  /** Folds a Metadata response into the cache (exported for tests through the class). */
  apply(res: MetadataResponse): MetadataChange {
    this.brokers.clear();
    for (const b of res.brokers) this.brokers.set(b.nodeId, { nodeId: b.nodeId, host: b.host, port: b.port, rack: b.rack });
    this.clusterId = res.clusterId;
    this.controllerId = res.controllerId;
    const added: string[] = [];
    const resized: string[] = [];
    const leaderMoved: { topic: string; partition: number }[] = [];
    const seen = new Set<string>();
    for (const t of res.topics) {
      if (t.name === null) continue;
      seen.add(t.name);
      if (t.errorCode !== 0) {
        // A topic that is gone or not yet there: forget it, and say why in the log.
        const old = this.topics.get(t.name);
        if (old) this.topicNames.delete(old.topicId);
        this.topics.delete(t.name);
        if (t.errorCode !== ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) {
          this.options.logger.warn('topic metadata error', { topic: t.name, error: errorFor(t.errorCode).name });
        }
        if (!this.all && this.interest.has(t.name) && !this.probing.has(t.name) && !this.missing.has(t.name)) {
          this.missing.add(t.name);
          this.options.logger.warn(`topic ${t.name} does not exist or is not visible to this client: its partitions are consumed once it appears (metadata is checked every second meanwhile)`, {
            topic: t.name,
            error: errorFor(t.errorCode).name,
          });
        }
        this.topics.set(t.name, { name: t.name, topicId: t.topicId, isInternal: t.isInternal, partitions: [], errorCode: t.errorCode });
        continue;
      }
      const partitions: PartitionInfo[] = [];
      for (const p of t.partitions) {
        partitions[p.partitionIndex] = {
          topic: t.name,
          partition: p.partitionIndex,
          leaderId: p.errorCode === ErrorCode.LEADER_NOT_AVAILABLE ? -1 : p.leaderId,
          leaderEpoch: p.leaderEpoch,
          replicas: p.replicaNodes,
          isr: p.isrNodes,
          errorCode: p.errorCode,
        };
      }
      if (this.missing.delete(t.name)) this.options.logger.info(`topic ${t.name} exists now`, { topic: t.name, partitions: partitions.length });
      const before = this.topics.get(t.name);
      if (before?.errorCode !== 0) added.push(t.name);
      else {
        if (before.partitions.length !== partitions.length) resized.push(t.name);
        for (const p of partitions) {
          const old = before.partitions[p.partition];
          if (old && (old.leaderId !== p.leaderId || old.leaderEpoch !== p.leaderEpoch)) leaderMoved.push({ topic: t.name, partition: p.partition });
        }
      }
      this.topics.set(t.name, { name: t.name, topicId: t.topicId, isInternal: t.isInternal, partitions, errorCode: 0 });
      if (t.topicId !== ZERO_UUID) this.topicNames.set(t.topicId, t.name);
    }
    const removed: string[] = [];
    if (this.all) {
      // A full listing: topics it does not name are gone.
      for (const name of [...this.topics.keys()]) {
        if (!seen.has(name)) {
          removed.push(name);
          this.topicNames.delete(this.topics.get(name)!.topicId);
          this.topics.delete(name);
        }
      }
    }
    this.updatedAt = Date.now();
    const change: MetadataChange = { added, removed, resized, leaderMoved };
    if (added.length || removed.length || resized.length || leaderMoved.length) {
      for (const l of this.listeners) l(change);
    }
    return change;
  }
}
