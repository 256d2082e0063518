import { EventEmitter } from 'node:events';
import { type BufferPool, Metadata, type Input, type MetadataRequest, type MetadataResponse } from '@kwire/protocol';
import { retainedFor, sharedBufferPool } from './shared-pool.js';
import { MetadataCache } from './cluster/metadata.js';
import { BrokerPool } from './connection/index.js';
import { clientPoolOptions } from './connection/broker-pool.js';
import { ClosedError, ConfigError, KafkaError, UsageError } from './errors.js';
import { loopClock, yieldToLoop } from './loop-clock.js';
import { recordContext, type RecordContext } from './records/index.js';
import { resolveShareConfig, type ResolvedShareConfig, type ShareConsumerConfig } from './share/config.js';
import type { DeserializedKey, DeserializedValue } from './config.js';
import { ShareMembership, type ShareAssignment, type ShareGroupEventDetails } from './share/membership.js';
import { ACK, ACK_TYPES, type ShareBatch, ShareRecord, type AcknowledgeType } from './share/records.js';
import { ShareFetcher, type ShareAcknowledgeResult, type SharePartitionRef } from './share/fetcher.js';
import type { ShareConsumerMetrics, ShareCounters } from './metrics/types.js';

export type { AcknowledgeType, ShareAcknowledgeResult };

/** The application acknowledged a record it may not: not delivered to it, settled already, or the wrong mode. */
export class AcknowledgementError extends KafkaError {
  override name = 'AcknowledgementError';
  constructor(message: string) {
    super('KWIRE_CONFIG', message);
  }
}

/** The share consumer's events and their listeners' arguments. */
export type ShareConsumerEvents = {
  joined: [detail: ShareGroupEventDetails['joined']];
  left: [detail: ShareGroupEventDetails['left']];
  fenced: [detail: ShareGroupEventDetails['fenced']];
  assigned: [detail: ShareGroupEventDetails['assigned']];
  /** The broker's answer to acknowledgements: piggybacked on a ShareFetch, committed, or sent on close. */
  acknowledged: [results: ShareAcknowledgeResult[], via: 'fetch' | 'commit' | 'close'];
  error: [err: Error];
};

/**
 * A member of a share group (KIP-932, "queues for Kafka"): members read the same partitions
 * together, each record goes to one member at a time under an acquisition lock, and every record
 * is settled (accepted, released for redelivery, rejected) by whoever got it.
 *
 *   const consumer = createShareConsumer({ bootstrapServers, groupId: 'workers', valueDeserializer: 'json' });
 *   await consumer.subscribe(['jobs']);
 *   for await (const batch of consumer) for (const record of batch) await handle(record.value);
 *
 * The finished rule (implicit mode, the default): a batch is accepted when the loop asks for the
 * next one, a record of `records()` when the loop moves past it; leaving the loop (break, throw)
 * releases what was not finished, so a record whose handler threw is delivered again (with
 * deliveryCount + 1). Explicit mode: acknowledge(record, type) every record before asking for more.
 * Acknowledgements travel on the next ShareFetch, or at once with commitSync()/commitAsync().
 */
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the merged interface declares only typed signatures of EventEmitter's own listener methods (nothing left uninitialized)
export class ShareConsumer<K = unknown, V = unknown> extends EventEmitter<ShareConsumerEvents> implements AsyncIterable<ShareBatch<K, V>> {
  /** The configuration as resolved: every option with its value, defaults filled in. */
  readonly config: ResolvedShareConfig;
  /** @internal The cluster's metadata, as the consumer's fetchers use it. */
  readonly metadata: MetadataCache;
  /** @internal The consumer's connections. */
  readonly pool: BrokerPool;
  /** @internal Where fetched records' memory comes from. */
  readonly bufferPool: BufferPool;
  /** @internal The counters metrics() reports. */
  readonly counters: ShareCounters = {
    fetches: 0,
    recordsAcquired: 0,
    redeliveries: 0,
    acknowledged: { accept: 0, release: 0, reject: 0, gap: 0, renew: 0 },
    acknowledgementErrors: 0,
    lockExpired: 0,
    sessionResets: 0,
  };
  private readonly membership: ShareMembership;
  private readonly fetchers = new Map<number, ShareFetcher>();
  /** Assigned partitions by key, and by leader. */
  private assignment = new Map<string, SharePartitionRef>();
  private byLeader = new Map<number, Map<string, SharePartitionRef>>();
  private readonly contexts = new Map<string, RecordContext>();
  private readonly queue: ShareBatch<K, V>[] = [];
  private waiter: (() => void) | undefined;
  private problem: Error | undefined;
  private fatal: Error | undefined;
  private connected: Promise<void> | undefined;
  private closingPromise: Promise<void> | undefined;
  private closed = false;
  /** The application left its loop (break, throw): nothing more is acquired until it polls again. */
  private parked = false;
  /** The batch the application holds now (iteration), settled by the finished rule. */
  private current: ShareBatch<K, V> | undefined;
  /** Iterating records(): how many records of `current` were handed out (the last one is in hand). */
  private currentUpTo: number | undefined;

  constructor(config: ShareConsumerConfig | Record<string, unknown>) {
    super();
    this.config = resolveShareConfig(config);
    const c = this.config;
    this.bufferPool = sharedBufferPool.join(this, retainedFor(c.fetchMaxBytes));
    this.pool = new BrokerPool(clientPoolOptions(c, this.bufferPool));
    this.metadata = new MetadataCache((body) => this.sendMetadata(body), { maxAgeMs: c.metadataMaxAgeMs, retryBackoffMs: c.retryBackoffMs, retryBackoffMaxMs: c.retryBackoffMaxMs, logger: c.logger });
    this.membership = new ShareMembership({
      config: c,
      pool: this.pool,
      metadata: this.metadata,
      logger: c.logger,
      assigned: (partitions, why) => this.assign(partitions, why),
      fail: (err) => this.fail(err),
      emit: (event, detail) => (this.emit as (event: string, detail: unknown) => boolean)(event, detail),
    });
    this.metadata.onChange(() => {
      this.membership.metadataChanged();
      this.regroup();
    });
  }

  get logger() {
    return this.config.logger;
  }

  get memberId(): string {
    return this.membership.memberId;
  }

  get closing(): boolean {
    return this.closingPromise !== undefined;
  }

  private async sendMetadata(body: Input<MetadataRequest>): Promise<MetadataResponse> {
    const conn = await this.pool.leastLoaded();
    return conn.request(Metadata, body);
  }

  private connect(): Promise<void> {
    this.connected ??= (async () => {
      await this.metadata.refresh('connect');
      this.metadata.start();
      const conn = await this.pool.leastLoaded();
      for (const key of [76, 78, 79]) {
        if (!conn.apiVersions.has(key)) {
          throw new ConfigError('the broker does not offer share groups (ShareGroupHeartbeat/ShareFetch/ShareAcknowledge): Kafka 4.1 or newer with share.version enabled is needed');
        }
      }
    })().catch((err: unknown) => {
      this.connected = undefined;
      throw err;
    });
    return this.connected;
  }

  /** Joins the share group with these topics (replacing the subscription). Resolves once the membership started. */
  async subscribe(topics: readonly string[] | { topics: readonly string[] }): Promise<void> {
    if (this.closed || this.closing) throw new ClosedError('the share consumer');
    const list = Array.isArray(topics) ? topics : (topics as { topics: readonly string[] }).topics;
    if (!Array.isArray(list) || list.length === 0 || list.some((t) => typeof t !== 'string' || t.length === 0)) {
      throw new UsageError('subscribe() needs a non-empty list of topic names');
    }
    this.metadata.want(list);
    await this.connect();
    await this.metadata.refresh(`subscribed to ${list.join(', ')}`);
    this.membership.subscribe(list);
  }

  /** Resolves once the coordinator has assigned this member at least one partition. */
  assigned(timeoutMs = this.config.defaultApiTimeoutMs): Promise<ShareAssignment[]> {
    if (this.assignment.size) return Promise.resolve(this.assignmentList());
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.off('assigned', on);
        reject(new KafkaError('KWIRE_TIMEOUT', `no assignment within ${timeoutMs} ms`, { retriable: true }));
      }, timeoutMs);
      const on = () => {
        if (!this.assignment.size) return;
        clearTimeout(timer);
        this.off('assigned', on);
        resolve(this.assignmentList());
      };
      this.on('assigned', on);
    });
  }

  private assignmentList(): ShareAssignment[] {
    return [...this.assignment.values()].map((r) => ({ topicId: r.topicId, topic: r.topic, partition: r.partition }));
  }

  /** The coordinator's assignment (membership), applied at once. */
  private assign(partitions: ShareAssignment[], why: string): void {
    const next = new Map<string, SharePartitionRef>();
    for (const p of partitions) {
      const key = `${p.topic}\0${p.partition}`;
      next.set(key, { key, topic: p.topic, topicId: p.topicId, partition: p.partition });
    }
    const removed = [...this.assignment.keys()].filter((k) => !next.has(k));
    this.assignment = next;
    if (removed.length) {
      // Records of partitions no longer ours that the application has not been given: released
      // now, so that the members that still read them get them without waiting for the lock.
      const gone = new Set(removed);
      for (let i = this.queue.length - 1; i >= 0; i--) {
        const b = this.queue[i]!;
        if (!gone.has(`${b.topic}\0${b.partition}`)) continue;
        this.queue.splice(i, 1);
        for (const r of b.records) r.acquisition.settle(r.offset, ACK.release);
        b.release();
      }
    }
    this.logger.debug('share assignment', { why, partitions: partitions.length });
    this.regroup();
  }

  /** Partitions by leader, fetchers started for the leaders. */
  private regroup(): void {
    const byLeader = new Map<number, Map<string, SharePartitionRef>>();
    for (const r of this.assignment.values()) {
      const leader = this.metadata.leaderOf(r.topic, r.partition);
      if (!leader) {
        this.metadata.requestUpdate(`no leader for ${r.topic}-${r.partition}`);
        continue;
      }
      let m = byLeader.get(leader.leaderId);
      if (!m) byLeader.set(leader.leaderId, (m = new Map()));
      m.set(r.key, r);
    }
    this.byLeader = byLeader;
    if (this.closing) return;
    for (const nodeId of byLeader.keys()) {
      if (!this.fetchers.has(nodeId)) {
        const s = new ShareFetcher(nodeId, this.fetcherHost());
        this.fetchers.set(nodeId, s);
        s.start();
      }
    }
    for (const s of this.fetchers.values()) s.wake();
  }

  private fetcherHost() {
    const self = this;
    return {
      config: this.config,
      pool: this.pool,
      bufferPool: this.bufferPool,
      metadata: this.metadata,
      logger: this.logger,
      memberId: this.memberId,
      counters: this.counters,
      get closing() {
        return self.closing;
      },
      get wantsRecords() {
        return !self.parked && self.queue.length === 0 && !self.closing;
      },
      assignedAt: (nodeId: number) => this.byLeader.get(nodeId) ?? new Map<string, SharePartitionRef>(),
      context: (topic: string, partition: number) => this.context(topic, partition),
      deliver: (batches: ShareBatch[]) => {
        for (const b of batches) this.queue.push(b as ShareBatch<K, V>);
        this.wake();
      },
      report: (err: Error) => {
        this.problem ??= err;
        if (this.listenerCount('error') > 0) this.emit('error', err);
        this.wake();
      },
      fail: (err: Error) => this.fail(err),
      acknowledged: (results: ShareAcknowledgeResult[], via: 'fetch' | 'commit' | 'close') => {
        if (results.length) this.emit('acknowledged', results, via);
      },
    };
  }

  private context(topic: string, partition: number): RecordContext {
    const key = `${topic}\0${partition}`;
    let c = this.contexts.get(key);
    if (!c) {
      c = recordContext(topic, partition, this.config.keyDeserializer, this.config.valueDeserializer, false);
      this.contexts.set(key, c);
    }
    return c;
  }

  private fail(err: Error): void {
    if (this.fatal) return;
    this.fatal = err;
    this.logger.error('share consumer stopped', { error: err.message });
    if (this.listenerCount('error') > 0) this.emit('error', err);
    this.wake();
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = undefined;
    w?.();
  }

  private wakeFetchers(): void {
    for (const s of this.fetchers.values()) s.wake();
  }

  /**
   * Java's poll(): finishes the batch the previous poll() returned (implicit mode: accepts it;
   * explicit mode: every record must have been acknowledged) and returns the next one, waiting for
   * it; null once closed. What iterating the consumer does, for loops that want to drive it.
   */
  async poll(): Promise<ShareBatch<K, V> | null> {
    const previous = this.current;
    this.current = undefined;
    this.currentUpTo = undefined;
    if (previous) this.finished(previous);
    const batch = await this.take();
    this.current = batch ?? undefined;
    return batch;
  }

  /**
   * The next batch of acquired records, waiting for one; null once closed. Throws the consumer's
   * fatal error, or once a problem worth hearing (corrupt data, which was released).
   */
  private async take(): Promise<ShareBatch<K, V> | null> {
    for (;;) {
      if (this.fatal) throw this.fatal;
      if (this.problem) {
        const err = this.problem;
        this.problem = undefined;
        throw err;
      }
      if (this.closed || this.closing) return null;
      if (this.parked) {
        this.parked = false;
        this.wakeFetchers();
      }
      const batch = this.queue.shift();
      if (batch) {
        if (this.queue.length === 0) this.wakeFetchers();
        if (loopClock.due(this.config.yieldIntervalMs)) await yieldToLoop();
        return batch;
      }
      await new Promise<void>((resolve) => (this.waiter = resolve));
    }
  }

  /** The application is done with this batch: the finished rule settles it, then it is released. */
  private finished(batch: ShareBatch<K, V>, upTo = batch.records.length): void {
    if (this.config.shareAcknowledgementMode === 'implicit') {
      for (let i = 0; i < upTo; i++) {
        const r = batch.records[i]!;
        r.acquisition.settle(r.offset, ACK.accept);
      }
    } else {
      let unsettled = 0;
      for (let i = 0; i < upTo; i++) if (!batch.records[i]!.acknowledged) unsettled++;
      if (unsettled > 0) {
        // As Java's poll() in explicit mode: asking for more with records unacknowledged is a bug.
        this.abandon(batch, 0);
        throw new AcknowledgementError(
          `explicit acknowledgement mode: ${unsettled} record(s) of ${batch.topic}-${batch.partition} from offset ${batch.firstOffset} were not acknowledged before asking for more; they were released`,
        );
      }
    }
    this.abandon(batch, upTo);
  }

  /** Leaving a batch unfinished: its records from `from` on that are not settled are released. */
  private abandon(batch: ShareBatch<K, V>, from: number): void {
    for (let i = from; i < batch.records.length; i++) {
      const r = batch.records[i]!;
      r.acquisition.settle(r.offset, ACK.release);
    }
    batch.release();
  }

  [Symbol.asyncIterator](): AsyncIterator<ShareBatch<K, V>> {
    return {
      next: async () => {
        const batch = await this.poll();
        if (batch === null) return { value: undefined, done: true };
        return { value: batch, done: false };
      },
      return: async () => {
        // break or throw: whatever the loop did not settle was not finished.
        const previous = this.current;
        this.current = undefined;
        this.parked = true;
        if (previous) this.abandon(previous, 0);
        return { value: undefined, done: true };
      },
    };
  }

  /** Records one by one; in implicit mode each is accepted when the loop moves past it. */
  records(): AsyncIterable<ShareRecord<K, V>> {
    const self = this;
    return {
      [Symbol.asyncIterator](): AsyncIterator<ShareRecord<K, V>> {
        let batch: ShareBatch<K, V> | undefined;
        let i = 0;
        return {
          next: async () => {
            for (;;) {
              if (batch !== undefined && i < batch.records.length) {
                if (i > 0 && self.config.shareAcknowledgementMode === 'implicit') {
                  const r = batch.records[i - 1]!;
                  r.acquisition.settle(r.offset, ACK.accept);
                }
                self.currentUpTo = i + 1;
                return { value: batch.records[i++]!, done: false };
              }
              self.current = undefined;
              self.currentUpTo = undefined;
              if (batch) self.finished(batch);
              batch = (await self.take()) ?? undefined;
              i = 0;
              if (batch === undefined) return { value: undefined, done: true };
              self.current = batch;
            }
          },
          return: async () => {
            // The record the loop was on (and the rest of its batch) was not finished.
            self.parked = true;
            if (batch && self.current === batch) {
              self.current = undefined;
              self.currentUpTo = undefined;
              self.abandon(batch, Math.max(0, i - 1));
            }
            batch = undefined;
            return { value: undefined, done: true };
          },
        };
      },
    };
  }

  /**
   * Settles one record (explicit mode): 'accept' (done), 'release' (deliver it again, to anyone),
   * 'reject' (never deliver it again), 'renew' (keep it, with a fresh acquisition lock: sent at
   * once; the record still needs one of the other three later). Resolves with the broker's answer
   * for a renew; the others travel on the next ShareFetch or commit.
   */
  acknowledge(record: ShareRecord<K, V>, type: AcknowledgeType = 'accept'): Promise<ShareAcknowledgeResult[]> | void {
    if (this.config.shareAcknowledgementMode !== 'explicit') {
      throw new AcknowledgementError('acknowledge() needs shareAcknowledgementMode (share.acknowledgement.mode) explicit; in implicit mode records are accepted when finished');
    }
    if (!(record instanceof ShareRecord)) throw new AcknowledgementError('acknowledge() takes a record this share consumer delivered');
    const wire = ACK_TYPES[type];
    if (wire === undefined) throw new AcknowledgementError(`acknowledge type must be accept, release, reject or renew, not ${JSON.stringify(type)}`);
    if (!record.acquisition.isPending(record.offset)) {
      throw new AcknowledgementError(`${record.topic}-${record.partition} offset ${record.offset} is not held by this member any more (acknowledged already, or its share session ended)`);
    }
    if (wire === ACK.renew) {
      const fetcher = this.fetcherOf(record);
      if (!fetcher) throw new AcknowledgementError(`${record.topic}-${record.partition}: no share session holds offset ${record.offset}`);
      return fetcher.renew([record], this.config.requestTimeoutMs);
    }
    record.acquisition.settle(record.offset, wire);
  }

  private fetcherOf(record: ShareRecord<K, V>): ShareFetcher | undefined {
    for (const s of this.fetchers.values()) if (s.pendingAcquisitions().includes(record.acquisition)) return s;
    return undefined;
  }

  /**
   * In implicit mode a commit accepts what was delivered, as Java's commitSync() does: the whole
   * batch in hand, or with records() the records handed out so far (the one in hand included).
   */
  private settleDelivered(): void {
    const batch = this.current;
    if (this.config.shareAcknowledgementMode !== 'implicit' || !batch) return;
    const upTo = this.currentUpTo ?? batch.records.length;
    for (let i = 0; i < upTo; i++) {
      const r = batch.records[i]!;
      r.acquisition.settle(r.offset, ACK.accept);
    }
  }

  /**
   * Sends the acknowledgements settled so far now (not waiting for the next fetch) and resolves
   * with the broker's answer per partition. In implicit mode the batch the application holds is
   * accepted first (the application says, by committing, that it is done with it).
   */
  async commitSync(timeoutMs = this.config.defaultApiTimeoutMs): Promise<ShareAcknowledgeResult[]> {
    if (this.closed) throw new ClosedError('the share consumer');
    this.settleDelivered();
    const all = await Promise.all([...this.fetchers.values()].map((s) => s.commit(Math.min(timeoutMs, this.config.requestTimeoutMs))));
    return all.flat();
  }

  /** commitSync() without waiting: the answer comes to `callback` and to the 'acknowledged' event. */
  commitAsync(callback?: (results: ShareAcknowledgeResult[], error?: Error) => void): void {
    this.commitSync().then(
      (r) => callback?.(r),
      (err: Error) => callback?.([], err),
    );
  }

  metrics(): ShareConsumerMetrics {
    let outstanding = 0;
    for (const s of this.fetchers.values()) outstanding += s.outstanding;
    return {
      ...this.counters,
      acknowledged: { ...this.counters.acknowledged },
      assignedPartitions: this.assignment.size,
      outstanding,
      memberEpoch: this.membership.epoch,
      heartbeats: this.membership.heartbeats,
    };
  }

  /**
   * Leaves the share group, within closeTimeoutMs (30 s): what the application finished is
   * acknowledged, everything else it holds or that waits in the queue is released (delivered
   * again to the other members at once, not after the lock), each share session is closed with a
   * final ShareAcknowledge (epoch -1), the member leaves (epoch -1), connections close. Never rejects.
   */
  close(): Promise<void> {
    this.closingPromise ??= this.doClose();
    return this.closingPromise;
  }

  private async doClose(): Promise<void> {
    const deadline = Date.now() + this.config.closeTimeoutMs;
    this.wake();
    // Fetch loops see `closing` and stop after the request they may have in flight.
    for (const s of this.fetchers.values()) s.wake();
    const current = this.current;
    this.current = undefined;
    this.currentUpTo = undefined;
    if (current) this.abandon(current, 0);
    for (const b of this.queue.splice(0)) this.abandon(b, 0);
    for (const s of this.fetchers.values()) s.releasePending();
    const bounded = <T>(p: Promise<T>) => Promise.race([p, new Promise<void>((r) => setTimeout(r, Math.max(0, deadline - Date.now())).unref())]);
    try {
      await bounded(
        Promise.all(
          [...this.fetchers.values()].map(async (s) => {
            await s.finished();
            // The fetch in flight at close delivered nothing: its records were released on arrival.
            s.releasePending();
            await s.close(deadline);
          }),
        ),
      );
      await bounded(this.membership.leave(Math.max(1, deadline - Date.now())));
    } catch (err) {
      this.logger.warn('share consumer close', { error: (err as Error).message });
    } finally {
      this.closed = true;
      this.metadata.close();
      await this.pool.close().catch(() => {});
      sharedBufferPool.leave(this);
      this.wake();
    }
  }
}

/**
 * A share consumer whose records' key and value types follow from its deserializers (as
 * createConsumer's), or are given: createShareConsumer<K, V>(...).
 */
export function createShareConsumer<const C extends ShareConsumerConfig>(config: C): ShareConsumer<DeserializedKey<C>, DeserializedValue<C>>;
export function createShareConsumer<K, V = unknown>(config: ShareConsumerConfig | Record<string, unknown>): ShareConsumer<K, V>;
export function createShareConsumer(config: ShareConsumerConfig | Record<string, unknown>): ShareConsumer {
  return new ShareConsumer(config);
}

/** Listeners typed by ShareConsumerEvents, for one event name or a union of them; the methods are EventEmitter's. */
export interface ShareConsumer<K, V> {
  on<E extends keyof ShareConsumerEvents>(event: E, listener: (...args: ShareConsumerEvents[E]) => void): this;
  once<E extends keyof ShareConsumerEvents>(event: E, listener: (...args: ShareConsumerEvents[E]) => void): this;
  addListener<E extends keyof ShareConsumerEvents>(event: E, listener: (...args: ShareConsumerEvents[E]) => void): this;
  prependListener<E extends keyof ShareConsumerEvents>(event: E, listener: (...args: ShareConsumerEvents[E]) => void): this;
  prependOnceListener<E extends keyof ShareConsumerEvents>(event: E, listener: (...args: ShareConsumerEvents[E]) => void): this;
  off<E extends keyof ShareConsumerEvents>(event: E, listener: (...args: ShareConsumerEvents[E]) => void): this;
  removeListener<E extends keyof ShareConsumerEvents>(event: E, listener: (...args: ShareConsumerEvents[E]) => void): this;
}
