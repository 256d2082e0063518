import { EventEmitter } from 'node:events';
import { type BufferPool, type BufferPoolStats, ErrorCode, Metadata, type Input, type MetadataRequest, type MetadataResponse } from '@kwire/protocol';
import { retainedFor, sharedBufferPool } from './shared-pool.js';
import { MetadataCache } from './cluster/metadata.js';
import { ConsumerMeter } from './metrics/meter.js';
import type { ConsumerMetrics } from './metrics/types.js';
import { EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, lookUpOffsets, type OffsetAndTimestamp } from './cluster/offset-lookup.js';
import { resolveConfig, type ConsumerConfig, type DeserializedKey, type DeserializedValue, type ResolvedConfig } from './config.js';
import { BrokerPool } from './connection/index.js';
import { clientPoolOptions } from './connection/broker-pool.js';
import { freshFrames } from './connection/frame-pool.js';
import { BrokerResponseError, ClosedError, ConfigError, UsageError, type DeserializationError } from './errors.js';
import { AssignedOffsets } from './group/assigned-offsets.js';
import { resolveAssignors } from './group/assignors/index.js';
import { GroupManager, type GroupCloseReport, type RebalanceListener, type Subscription } from './group/group-manager.js';
import { remaining, settledBy } from './deadline.js';
import type { GroupEventDetails, GroupEventName } from './group/membership.js';
import type { CommittedOffset, OffsetToCommit } from './group/offsets.js';
import { Fetcher, type PositionChange } from './fetch/fetcher.js';
import { tpKey, type PartitionState, type ResetTarget } from './state/partition-state.js';
import { maxSpan } from './group/finished-metadata.js';
import { RunStats } from './run/run-stats.js';
import { SubscriptionState } from './state/subscription-state.js';
import { ConsumerBatch, DerivedSettlement, type ConsumedRecord } from './records/index.js';
import { startRun, type InFlightRecord, type RunHandle, type RunOptions } from './run.js';
import type { MessageStream, StreamOwner } from './streams.js';
import { StreamRouter } from './stream-router.js';
import { FetchCollector } from './fetch/fetch-collector.js';
import * as usage from './usage.js';
import type { OffsetsToCommit, PartitionList, TimesToLookUp } from './usage.js';
import type { PartitionAssignment, StartOffset } from './usage.js';
import type { TopicPartition } from '@kwire/protocol';

export type { EachBatchPayload, EachMessagePayload, FailurePolicy, InFlightRecord, ProcessingFailure, RunOptions } from './run.js';

/** One partition of one topic: the one type for it, from @kwire/protocol. */
export type { TopicPartition } from '@kwire/protocol';

// assign()'s argument, with the other argument shapes in usage.ts (which checks them).
export type { PartitionAssignment, StartOffset } from './usage.js';

/**
 * The consumer's events and their listeners' arguments: group events, each with its detail object
 * (GroupEventDetails: why, partitions, member id, generation...); positions that moved without the
 * application asking ('log-truncation', KIP-320, and 'offset-reset' by auto.offset.reset); 'error'.
 */
export type ConsumerEvents = { [K in GroupEventName]: [detail: GroupEventDetails[K]] } & {
  error: [err: Error];
  'log-truncation': [change: PositionChange];
  'offset-reset': [change: PositionChange];
  /** A record skipped under deserializationErrorPolicy 'skip'. */
  'deserialization-error': [err: DeserializationError];
};

/** metrics().pool with recordBuffers 'owned': no pool is used. */
const NO_POOL_STATS: BufferPoolStats = Object.freeze({ hits: 0, misses: 0, released: 0, dropped: 0, ignored: 0, bytesRetained: 0, buffersRetained: 0, outstanding: 0 });

/**
 * A Kafka consumer on kwire's own protocol stack.
 *
 *   const consumer = createConsumer({ bootstrapServers: 'localhost:9092' });
 *   await consumer.assign([{ topic: 'events', partition: 0, offset: 'earliest' }]);
 *   for await (const batch of consumer) for (const record of batch) use(record.value);
 *
 * Partitions feed message streams (MessageStream): the consumer's default stream (iterate the
 * consumer itself), or N streams per topic from streams({ topic: N }). A partition feeds exactly
 * one stream; a topic's partitions are spread over its streams (partition p goes to stream p mod N).
 *
 * K and V are the types of the records' keys and values: createConsumer() works them out from the
 * keyDeserializer and valueDeserializer (Buffer | null for 'buffer' or none, string | null for
 * 'string', what a function returns, awaited), or takes them as createConsumer<K, V>(...).
 */
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the merged interface declares only typed signatures of EventEmitter's own listener methods (nothing left uninitialized)
export class Consumer<K = unknown, V = unknown> extends EventEmitter<ConsumerEvents> implements AsyncIterable<ConsumerBatch<K, V>> {
  readonly config: ResolvedConfig;
  /** @internal The cluster's metadata as this consumer knows it. */
  readonly metadata: MetadataCache;
  /** @internal This consumer's connections. */
  readonly pool: BrokerPool;
  private readonly fetcher: Fetcher;
  /** Counters, rates and latencies for metrics() and diagnostics_channel. */
  private readonly meter = new ConsumerMeter(this);
  /** Every assigned partition's state: changed only through its methods. */
  private readonly subscriptions: SubscriptionState;
  /** Null with recordBuffers 'owned': frames and decompression output are fresh memory, never reused. */
  private readonly bufferPool: BufferPool | null;
  /** Which stream each partition feeds, and the streams. */
  private readonly router: StreamRouter;
  private connected: Promise<void> | undefined;
  private group: GroupManager | undefined;
  /** Commits of a consumer with a groupId and a manual assignment (made on the first need). */
  private assignedOffsets: AssignedOffsets | undefined;
  /** The run() under way, if any: one at a time. */
  private running: RunHandle | undefined;
  /** run()'s counters, across runs. */
  private readonly runStats = new RunStats();
  private manual = false;
  private closing: Promise<CloseResult> | undefined;
  private closed = false;

  constructor(config: ConsumerConfig | Record<string, unknown>) {
    super();
    this.config = resolveConfig(config);
    const c = this.config;
    // One pool for both: a Fetch frame's memory goes from the socket to the record decoder and
    // back, and decompression output comes from the same free lists.
    // What it keeps must cover the working set: the buffered frames, rounded up to their
    // power-of-two classes (a frame just over 2 MiB takes a 4 MiB buffer), one more in flight, and
    // the decompression buffers. Kept at maxBufferedBytes, a consumer with fetchMaxBytes 2 MiB
    // (maxBufferedBytes 4 MiB) could keep nothing, allocated a fresh 4 MiB frame per Fetch, and
    // spent 0.73 s of 2.9 CPU seconds in GC over 1.5 GB (64k records/s of 10 KB against 140k).
    // The process's pool (shared-pool.ts): a consumer created after another one closed finds its buffers.
    this.bufferPool = c.recordBuffers === 'owned' ? null : sharedBufferPool.join(this, retainedFor(c.maxBufferedBytes));
    this.pool = new BrokerPool(clientPoolOptions(c, this.bufferPool ?? freshFrames));
    this.metadata = new MetadataCache((body) => this.sendMetadata(body), { maxAgeMs: c.metadataMaxAgeMs, retryBackoffMs: c.retryBackoffMs, retryBackoffMaxMs: c.retryBackoffMaxMs, logger: c.logger });
    this.subscriptions = new SubscriptionState(() => this.fetcher.schedule(), this.meter);
    const collector = new FetchCollector(this.subscriptions);
    // What the streams see of the consumer (the collector, interceptors, the fetcher's wake-up).
    const streamOwner: StreamOwner = {
      maxPollRecords: c.maxPollRecords,
      yieldIntervalMs: c.yieldIntervalMs,
      delivered: (batch) => this.intercepted(batch),
      drained: () => this.fetcher.schedule(),
      mayDeliver: () => this.group?.mayDeliver() ?? true,
      collect: (data, max) => collector.next(data, max),
      corrupt: (state) => this.subscriptions.refetchCorrupt(state),
      deserializationErrorPolicy: c.deserializationErrorPolicy,
      deserializationFailed: (err, policy) => {
        const where = { topic: err.topic, partition: err.partition, offset: err.offset.toString(), part: err.part, error: (err.cause as Error)?.message ?? String(err.cause) };
        if (policy === 'skip') {
          c.logger.warn('a record that does not deserialize is skipped (deserializationErrorPolicy skip)', where);
          this.emit('deserialization-error', err);
          return;
        }
        c.logger.warn('a record does not deserialize: its partition is paused (seek past it, then resume)', where);
        if (this.subscriptions.get(tpKey(err.topic, err.partition))) this.subscriptions.pause([{ topic: err.topic, partition: err.partition }]);
      },
    };
    this.router = new StreamRouter(streamOwner);
    this.subscriptions.bufferIn(this.router);
    this.fetcher = new Fetcher({
      subscriptions: this.subscriptions,
      sink: this.router,
      meter: this.meter,
      config: c,
      metadata: this.metadata,
      pool: this.pool,
      bufferPool: this.bufferPool,
      logger: c.logger,
      onPositionChange: (change) => this.emit(change.why === 'log-truncation' ? 'log-truncation' : 'offset-reset', change),
    });
    this.metadata.onChange(() => this.fetcher.schedule());
  }

  /** Interceptors see each batch before the application; the meter counts it. */
  private intercepted(batch: ConsumerBatch): ConsumerBatch {
    // Counts and the first timestamp without the records as objects: a cursor reader never makes them.
    this.meter.delivered(batch.topic, batch.partition, batch.count, batch.firstTimestamp, batch.fetchedAt || Date.now(), batch.lag);
    const interceptors = this.config.interceptors;
    if (interceptors.length === 0) return batch;
    let records: readonly ConsumedRecord[];
    try {
      records = batch.records;
    } catch (err) {
      // Corrupt records (found as the records are made): the batch goes back undelivered.
      batch.giveBack();
      throw err;
    }
    for (const i of interceptors) {
      const out = i.onConsume?.(records, { topic: batch.topic, partition: batch.partition });
      if (Array.isArray(out)) records = out as ConsumedRecord[];
    }
    if (records === batch.records) return batch;
    return new ConsumerBatch(batch.topic, batch.partition, records, batch.highWatermark, batch.lastStableOffset, batch.nextOffset, new DerivedSettlement(batch), batch.fetchedAt);
  }

  /** Connects to a bootstrap server and loads metadata. Optional: the first assign() does it. */
  connect(): Promise<void> {
    if (this.closed) return Promise.reject(new ClosedError('the consumer'));
    this.connected ??= (async () => {
      await this.metadata.refresh('connect');
      this.metadata.start();
    })().catch((err: unknown) => {
      this.connected = undefined;
      throw err;
    });
    return this.connected;
  }

  private async sendMetadata(body: Input<MetadataRequest>): Promise<MetadataResponse> {
    const conn = await this.pool.leastLoaded();
    return conn.request(Metadata, body);
  }

  /**
   * Assigns these partitions (replacing the current assignment), without a consumer group. Each
   * starts at its offset, or at auto.offset.reset when none is given.
   */
  async assign(assignments: Iterable<PartitionAssignment>): Promise<void> {
    if (this.closed) throw new ClosedError('the consumer');
    if (this.group) throw new UsageError('assign() and subscribe() exclude each other: this consumer is subscribed to a group');
    const checked = usage.assignments(assignments, !this.config.groupId && this.config.autoOffsetReset === 'none');
    this.manual = true;
    const wanted = new Map<string, PartitionAssignment>();
    for (const a of checked) wanted.set(tpKey(a.topic, a.partition), a);
    // Only the assigned topics are refreshed (a manual consumer has no other interest).
    this.metadata.setInterest(new Set([...wanted.values()].map((a) => a.topic)));
    await this.connect();
    const missing = [...new Set([...wanted.values()].map((a) => a.topic))].filter((t) => !this.metadata.topics.get(t)?.partitions.length);
    if (missing.length) await this.metadata.refresh(`assigned topics ${missing.join(', ')}`);
    // With a groupId, a partition given no offset starts at the group's committed one (as Java's
    // assign() with group.id), and auto.offset.reset where none is committed.
    const fromGroup = [...wanted.values()].filter((a) => a.offset === undefined && !this.subscriptions.get(tpKey(a.topic, a.partition)));
    const committed = this.config.groupId && fromGroup.length > 0 ? await this.offsetsOfAssigned().fetch(fromGroup) : new Map<string, CommittedOffset | null>();
    for (const { key } of [...this.subscriptions.values()]) if (!wanted.has(key)) this.subscriptions.remove(key);
    for (const [key, a] of wanted) {
      const known = this.subscriptions.get(key);
      const state = known ?? this.subscriptions.create(a.topic, a.partition);
      const c = committed.get(key);
      if (c) {
        this.subscriptions.seek(state, c.offset, c.leaderEpoch);
        this.assignedOffsets?.restore(state, c);
      } else if (a.offset !== undefined || !known) {
        const offset = a.offset ?? this.config.autoOffsetReset;
        if (offset === 'none') throw new ConfigError(`${a.topic}-${a.partition}: no offset given, none committed, and auto.offset.reset is none`);
        this.subscriptions.seek(state, startTarget(offset));
      }
      this.subscriptions.add(state);
    }
  }

  /**
   * Joins the consumer group (groupId) and consumes the topics (or the topics matching the
   * pattern, as they come and go) with the partitions the group gives this member. Resolves once
   * the membership has started; `await consumer.assigned()` waits for the first assignment.
   */
  async subscribe(subscription: Subscription, listener?: RebalanceListener): Promise<void> {
    if (this.closed) throw new ClosedError('the consumer');
    subscription = usage.subscription(subscription);
    listener = usage.rebalanceListener(listener);
    if (this.manual) throw new UsageError('assign() and subscribe() exclude each other: this consumer has a manual assignment');
    if (!this.config.groupId) throw new ConfigError('subscribe() needs groupId (group.id) in the configuration: the group to join');
    await this.connect();
    if (!this.group) {
      let protocol = this.config.groupProtocol;
      if (protocol === 'consumer') {
        const conn = await this.pool.leastLoaded();
        if (!conn.apiVersions.has(68)) {
          if (!this.config.groupProtocolFallback) {
            throw new ConfigError('groupProtocol is consumer (KIP-848) but the broker does not offer ConsumerGroupHeartbeat: enable it on the cluster, or set groupProtocolFallback to use classic');
          }
          this.config.logger.warn('the broker lacks KIP-848: falling back to the classic group protocol', { groupId: this.config.groupId });
          protocol = 'classic';
        }
      }
      this.group = new GroupManager({
        config: this.config,
        pool: this.pool,
        metadata: this.metadata,
        subscriptions: this.subscriptions,
        meter: this.meter,
        assignors: resolveAssignors(this.config.partitionAssignmentStrategy),
        protocol,
        emit: (name, detail) => {
          (this.emit as (name: GroupEventName, detail: unknown) => boolean)(name, detail);
          if (name === 'fatal') {
            const err = (detail as GroupEventDetails['fatal']).error;
            if (this.listenerCount('error') > 0) this.emit('error', err);
            this.router.failAll(err);
          }
        },
        isClosed: () => this.closed,
      });
    }
    await this.group.subscribe(subscription, listener);
  }

  /**
   * Gives up every partition (what was finished is committed, bounded by request.timeout.ms) and
   * leaves the group. subscribe() again to rejoin.
   */
  async unsubscribe(): Promise<void> {
    await this.group?.unsubscribe();
  }

  /** Asks the group for a rebalance now; `reason` goes to the coordinator's log (KIP-800). */
  enforceRebalance(reason = 'the application asked'): void {
    if (!this.group) throw new UsageError('enforceRebalance() needs a subscription: call subscribe() first');
    this.group.enforceRebalance(reason);
  }

  /** Resolves when the group has first given this member its partitions (rejects if the membership fails). */
  assigned(): Promise<void> {
    if (!this.group) return Promise.reject(new UsageError('assigned() is for subscribed consumers: call subscribe() first (with assign() the partitions are yours at once)'));
    return this.group.ready;
  }

  /**
   * Commits offsets to the group: the given ones (a list of { topic, partition, offset }, or a Map
   * from { topic, partition } to the offset or { offset, metadata? }: the next offset to read,
   * the last processed + 1), or the processed position of every owned
   * partition (the offset after the last record of the last batch the application released).
   * Rejects with CommitFailedError when the group refuses (e.g. a rebalance is under way).
   */
  commitSync(offsets?: OffsetsToCommit): Promise<void> {
    let list: OffsetToCommit[] | undefined;
    try {
      list = usage.offsetsToCommit(offsets);
    } catch (err) {
      return Promise.reject(err);
    }
    if (this.closed) return Promise.reject(new ClosedError('the consumer'));
    if (this.group) return this.group.commit(list);
    if (!this.config.groupId) return Promise.reject(new UsageError('commits need a groupId (group.id) in the configuration: they are stored in the group'));
    return this.offsetsOfAssigned().commit(list);
  }

  /** The commits of a consumer with a groupId and no subscription (made on the first need). */
  private offsetsOfAssigned(): AssignedOffsets {
    this.assignedOffsets ??= new AssignedOffsets({
      config: this.config,
      pool: this.pool,
      metadata: this.metadata,
      subscriptions: this.subscriptions,
      meter: this.meter,
      isClosed: () => this.closed,
    });
    return this.assignedOffsets;
  }

  /** commitSync without waiting; errors go to the callback (or the 'error' event, or the log). */
  commitAsync(offsets?: OffsetsToCommit, callback?: (err: Error | undefined) => void): void {
    // Wrong arguments are the program's fault: thrown here, not handed to the callback.
    usage.offsetsToCommit(offsets, 'commitAsync()');
    if (callback !== undefined && typeof callback !== 'function') throw new UsageError(`commitAsync(): the callback must be a function, not ${usage.shown(callback)}`);
    this.commitSync(offsets).then(
      () => callback?.(undefined),
      (err: Error) => {
        if (callback) callback(err);
        else this.config.logger.warn('commitAsync failed', { error: err.message });
      },
    );
  }

  /**
   * The group's committed offsets for these partitions (null where none), keyed by the objects
   * given. Needs a groupId, with subscribe() or assign().
   */
  async committed(tps: PartitionList): Promise<Map<TopicPartition, CommittedOffset | null>> {
    if (this.closed) throw new ClosedError('the consumer');
    if (!this.config.groupId) throw new UsageError('committed() needs a groupId (group.id) in the configuration: committed offsets are stored in the group');
    const list = usage.partitionList(tps, 'committed()');
    await this.connect();
    let found: Map<string, CommittedOffset | null>;
    if (this.group) {
      const id = this.group.membership.identity();
      found = await this.group.offsets.fetch(list, {
        generationIdOrMemberEpoch: id?.generation ?? -1,
        memberId: id?.memberId ?? '',
        groupInstanceId: id?.groupInstanceId ?? null,
        consumerProtocol: id?.consumerProtocol ?? false,
      });
    } else found = await this.offsetsOfAssigned().fetch(list);
    return new Map(list.map((tp) => [tp, found.get(tpKey(tp.topic, tp.partition)) ?? null]));
  }

  /** The member's place in its group, when it has one. */
  groupMetadata(): { groupId: string; memberId: string; generationId: number } | undefined {
    const id = this.group?.membership.identity();
    return id && { groupId: this.config.groupId!, memberId: id.memberId, generationId: id.generation };
  }

  private allStreams(): MessageStream[] {
    return this.router.streams();
  }

  /**
   * The partitions of a topic (Java's partitionsFor), from metadata, refreshed if the topic is not
   * known yet. Rejects with a BrokerResponseError (UNKNOWN_TOPIC_OR_PARTITION, ...) when it does
   * not exist or is not visible.
   */
  async partitionsFor(topic: string): Promise<number[]> {
    topic = usage.topicArgument(topic, 'partitionsFor()');
    await this.connect();
    const wanted = this.metadata.wants(topic);
    if (!wanted) this.metadata.probe(topic);
    let info = this.metadata.topics.get(topic);
    if (info?.errorCode !== 0) {
      try {
        await this.metadata.refresh(`partitions of ${topic} asked for`);
      } finally {
        // Asked about, not consumed: not refreshed from now on (nor watched for while missing).
        if (!wanted) this.metadata.unwant(topic);
      }
      info = this.metadata.topics.get(topic);
    }
    if (info?.errorCode !== 0) throw new BrokerResponseError(info?.errorCode ?? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `topic ${topic}`);
    return info.partitions.filter((p) => p !== undefined).map((p) => p.partition);
  }

  /** The partitions assigned now. */
  assignment(): TopicPartition[] {
    return this.subscriptions.assigned();
  }

  /**
   * N message streams per topic: `const { events: [a, b, c] } = consumer.streams({ events: 3 })`.
   * Partition p of the topic feeds stream p mod N. Calling it again for a topic re-spreads its
   * partitions: data queued for a partition that moves is dropped and fetched again from its
   * position, so nothing is lost or delivered twice.
   */
  streams(spec: Readonly<Record<string, number>> | ReadonlyMap<string, number>): Record<string, MessageStream<K, V>[]> {
    const out: Record<string, MessageStream<K, V>[]> = {};
    for (const [topic, n] of usage.streamCounts(spec)) {
      const { streams, moved } = this.router.spread(topic, n, this.subscriptions.values());
      out[topic] = streams as MessageStream<K, V>[];
      // Fetched again from what was delivered: the dropped data comes again, in the new stream.
      for (const state of moved) this.subscriptions.refetch(state);
    }
    this.fetcher.schedule();
    return out;
  }

  /** The default stream: every assigned partition not given to streams(). */
  [Symbol.asyncIterator](): AsyncIterator<ConsumerBatch<K, V>> {
    return (this.router.defaultStream as MessageStream<K, V>)[Symbol.asyncIterator]();
  }

  /** The default stream record by record (types: the consumer's, or given here). */
  records<RK = K, RV = V>(): AsyncIterable<ConsumedRecord<RK, RV>> {
    return this.router.defaultStream.records<RK, RV>();
  }

  /**
   * kafkajs-style callbacks over every stream (the default one and those from streams()): up to
   * `maxConcurrency` records (eachBatch: batches) at once over every partition, in the order
   * `ordering` asks for (default: one record of a partition at a time, partitions at once).
   * Resolves when the consumer closes. A record whose callback throws is not finished: it is
   * handled again after a backoff (its key or partition waiting), set aside, or run() rejects, as
   * `onFailure` says (see FailurePolicy). Consumer errors (OffsetOutOfRangeError,
   * CorruptRecordError, a fatal group error) reject it, after which the consumer keeps running.
   */
  run<RK = K, RV = V>(options: RunOptions<RK, RV>): Promise<void> {
    if (this.closed || this.closing) return Promise.reject(new ClosedError('the consumer'));
    if (this.running) return Promise.reject(new UsageError('run() is already running on this consumer: it runs until close(); call it once'));
    try {
      usage.checkRunOptions(options);
    } catch (err) {
      return Promise.reject(err);
    }
    const { logger, retryBackoffMs, retryBackoffMaxMs } = this.config;
    const handle = startRun(this.allStreams(), options, {
      logger,
      retryBackoffMs,
      retryBackoffMaxMs,
      backOff: (topic, partition, ms) => this.subscriptions.backOff({ topic, partition }, ms),
      partition: (topic, partition) => this.subscriptions.get(tpKey(topic, partition)),
      finishedAhead: (state, offset) => this.subscriptions.finishedAhead(state as PartitionState, [offset]),
      yieldIntervalMs: this.config.yieldIntervalMs,
      maxSpan: maxSpan(this.config.commitMetadataMaxBytes),
      stats: this.runStats,
      mayStart: () => this.group?.mayDeliver() ?? true,
    });
    this.running = handle;
    // Ended by a 'stop' failure: run() may be called again.
    const clear = () => {
      if (this.running === handle) this.running = undefined;
    };
    handle.done.then(clear, clear);
    return handle.done;
  }

  /** Moves a partition to an offset (or the start or end of its log): the next record comes from there. */
  seek(tp: TopicPartition, offset: StartOffset): void {
    const checked = usage.seekArguments(tp, offset);
    this.subscriptions.seek(this.subscriptions.of(checked.tp), checked.target);
  }

  /** The offset of the next record the application will get for a partition (null while unknown). */
  position(tp: TopicPartition): bigint | null {
    return this.subscriptions.of(usage.topicPartition(tp, 'position()')).position;
  }

  /** Stops fetching and delivering these partitions until resume(); what is buffered stays. */
  pause(tps: PartitionList): void {
    const list = usage.partitionList(tps, 'pause()', this.subscriptions.assigned());
    this.subscriptions.pause(list);
  }

  /**
   * Fetches and delivers these partitions again. pause() and resume() take { topic, partition }
   * items, or kafkajs's { topic, partitions: [0, 1] } ({ topic } alone: every partition of the
   * topic assigned now), in an array or a Set.
   */
  resume(tps: PartitionList): void {
    const list = usage.partitionList(tps, 'resume()', this.subscriptions.assigned());
    this.subscriptions.resume(list);
  }

  paused(): TopicPartition[] {
    return this.subscriptions.paused();
  }

  /** The partition's high watermark from the last fetch (-1n before one). */
  highWatermark(tp: TopicPartition): bigint {
    return this.subscriptions.of(usage.topicPartition(tp, 'highWatermark()')).highWatermark;
  }

  /**
   * The earliest offset of each partition whose record's timestamp is at or after the given time
   * (Java's offsetsForTimes), null where no record is that late. Takes a Map from { topic,
   * partition } to the time, or a list of { topic, partition, timestamp }; the result's keys are
   * the objects given (the Map's keys, or the list's items).
   */
  async offsetsForTimes(times: TimesToLookUp, options?: { timeoutMs?: number }): Promise<Map<TopicPartition, OffsetAndTimestamp | null>> {
    const wanted = usage.timesToLookUp(times);
    return this.lookUp(wanted, usage.timeoutOption(options, 'offsetsForTimes()'));
  }

  /** The first offset of each partition (its log start). Keys are the objects given. */
  async beginningOffsets(tps: Iterable<TopicPartition>, options?: { timeoutMs?: number }): Promise<Map<TopicPartition, bigint>> {
    const found = await this.lookUp(
      usage.partitionList(tps, 'beginningOffsets()').map((tp) => ({ tp, timestamp: EARLIEST_TIMESTAMP })),
      usage.timeoutOption(options, 'beginningOffsets()'),
    );
    return new Map([...found].map(([tp, o]) => [tp, o?.offset ?? -1n]));
  }

  /**
   * The end of each partition: the offset the next record will take (the high watermark), or under
   * read_committed the last stable offset. Keys are the objects given.
   */
  async endOffsets(tps: Iterable<TopicPartition>, options?: { timeoutMs?: number }): Promise<Map<TopicPartition, bigint>> {
    const found = await this.lookUp(
      usage.partitionList(tps, 'endOffsets()').map((tp) => ({ tp, timestamp: LATEST_TIMESTAMP })),
      usage.timeoutOption(options, 'endOffsets()'),
    );
    return new Map([...found].map(([tp, o]) => [tp, o?.offset ?? -1n]));
  }

  private async lookUp(wanted: { tp: TopicPartition; timestamp: bigint }[], timeoutMs = 60_000): Promise<Map<TopicPartition, OffsetAndTimestamp | null>> {
    // (Every caller checked its partitions: usage.ts.)
    if (this.closed) throw new ClosedError('the consumer');
    await this.connect();
    const byKey = new Map(wanted.map((w) => [tpKey(w.tp.topic, w.tp.partition), w]));
    const { isolationLevel, retryBackoffMs, logger } = this.config;
    const found = await lookUpOffsets({ metadata: this.metadata, pool: this.pool, isolationLevel, retryBackoffMs, logger }, byKey, Date.now() + timeoutMs);
    return new Map(wanted.map((w) => [w.tp, found.get(tpKey(w.tp.topic, w.tp.partition)) ?? null]));
  }

  /**
   * Records between the partition's position and its end at the last fetch (Java's currentLag;
   * under read_committed, to the last stable offset); undefined until a fetch has told.
   */
  currentLag(tp: TopicPartition): bigint | undefined {
    return this.subscriptions.lag(this.subscriptions.of(usage.topicPartition(tp, 'currentLag()')), this.config.isolationLevel === 'read_committed');
  }

  metrics(): ConsumerMetrics {
    const readCommitted = this.config.isolationLevel === 'read_committed';
    const recordsLag: Record<string, number> = {};
    let recordsLagMax = -1;
    for (const state of this.subscriptions.values()) {
      const lag = this.subscriptions.lag(state, readCommitted);
      if (lag === undefined) continue;
      const n = Number(lag);
      recordsLag[`${state.topic}-${state.partition}`] = n;
      if (n > recordsLagMax) recordsLagMax = n;
    }
    return {
      ...this.fetcher.stats,
      recordsConsumed: this.meter.recordsConsumed,
      recordsConsumedRate: this.meter.recordsRate.perSecond(),
      bytesConsumedRate: this.meter.bytesRate.perSecond(),
      recordsLag,
      recordsLagMax,
      recordLatency: this.meter.recordLatency(),
      group: this.group ? this.meter.group(this.group.membership.sinceLastHeartbeatMs()) : undefined,
      bufferedBytes: this.fetcher.buffered,
      assignedPartitions: this.subscriptions.size,
      pool: this.bufferPool?.stats ?? NO_POOL_STATS,
      fetchLatency: this.fetcher.latency.summary(),
      processing: this.runStats.snapshot(
        Object.fromEntries([...((this.group?.positions ?? this.assignedOffsets?.positions)?.metadataBytes ?? [])].map(([key, bytes]) => [key.replace('\u0000', '-'), bytes])),
      ),
    };
  }

  /**
   * Commits what the application finished, leaves the group, stops fetching, ends the streams
   * (iterators finish), closes every connection and frees pooled memory: within `timeoutMs`
   * (default 30 s, as Java's close()) whatever the cluster does. Never rejects: what could not be
   * done is in the result (and logged at warn), e.g. offsets that stayed uncommitted because the
   * coordinator was unreachable. Calling it again returns the same result.
   */
  close(options: { timeoutMs?: number } = {}): Promise<CloseResult> {
    this.closing ??= this.shutDown(options.timeoutMs ?? 30_000);
    return this.closing;
  }

  private async shutDown(timeoutMs: number): Promise<CloseResult> {
    if (!(Number.isFinite(timeoutMs) && timeoutMs >= 0)) timeoutMs = 30_000;
    const started = Date.now();
    const deadline = started + timeoutMs;
    const { logger } = this.config;
    const group: GroupCloseReport = { committed: [], uncommitted: [], leftGroup: false };
    let timedOut = false;
    // run() starts nothing more, and its callbacks under way are given half the budget to finish
    // (their records then count as finished and are committed below); it settles then even with a
    // callback that hangs: what that callback had in hand stays unfinished (not committed), and is
    // reported. (A callback that awaits this very close() holds it that long: call close() from a
    // callback without awaiting it.)
    const inFlight = (await this.running?.stop(timeoutMs / 2)) ?? [];
    if (inFlight.length > 0) {
      logger.warn('close(): callbacks of run() were still running: their records stay uncommitted (delivered again to the next reader)', {
        records: inFlight.map((r) => `${r.topic}-${r.partition}@${r.offset}`),
      });
    }
    const alreadyCommitted = this.group?.upToDate() ?? this.assignedOffsets?.upToDate() ?? [];
    if (this.assignedOffsets) {
      const work = this.assignedOffsets.close(started + Math.max(0, timeoutMs - Math.min(1_000, timeoutMs / 10)), group);
      if (!(await settledBy(work, deadline))) timedOut = true;
    }
    if (this.group) {
      // A group member commits what was finished and leaves (or, static, goes quiet) first. Leave
      // the last part of the budget for closing connections.
      const groupDeadline = started + Math.max(0, timeoutMs - Math.min(1_000, timeoutMs / 10));
      const work = this.group.close(groupDeadline, group).catch((err: unknown) => logger.warn('leaving the group failed', { error: (err as Error).message }));
      if (!(await settledBy(work, groupDeadline))) timedOut = true;
      const done = new Set(group.committed.map((o) => tpKey(o.topic, o.partition)).concat(group.uncommitted.map((o) => tpKey(o.topic, o.partition))));
      for (const o of this.group.uncommitted()) {
        if (!done.has(tpKey(o.topic, o.partition))) group.uncommitted.push({ ...o, error: `not committed within close()'s ${timeoutMs} ms` });
      }
    }
    this.closed = true;
    this.metadata.close();
    const fetcher = this.fetcher.close();
    this.router.close();
    for (const i of this.config.interceptors) i.close?.();
    // Closing the connections ends every request still pending (fetches, a parked JoinGroup).
    const closed = Promise.all([fetcher, this.pool.close({ timeoutMs: Math.min(5_000, remaining(deadline)), abandon: ['data', 'live-fetch'] })]);
    if (!(await settledBy(closed, deadline + 100))) timedOut = true;
    sharedBufferPool.leave(this);
    // A copy, one entry per partition: group work cut off by the deadline goes on in the
    // background and may still report into `group` (a revocation commit failing late reported
    // the same partition twice, and into a result already returned).
    const uncommitted = new Map<string, GroupCloseReport['uncommitted'][number]>();
    for (const o of group.uncommitted) if (!uncommitted.has(tpKey(o.topic, o.partition))) uncommitted.set(tpKey(o.topic, o.partition), o);
    const reported = new Set([...group.committed, ...uncommitted.values()].map((o) => tpKey(o.topic, o.partition)));
    const result: CloseResult = {
      durationMs: Date.now() - started,
      timedOut,
      committed: [...group.committed],
      alreadyCommitted: alreadyCommitted.filter((o) => !reported.has(tpKey(o.topic, o.partition))),
      uncommitted: [...uncommitted.values()],
      leftGroup: group.leftGroup,
      inFlight,
    };
    if (result.uncommitted.length) {
      logger.warn('close(): finished offsets left uncommitted', { offsets: result.uncommitted.map((o) => `${o.topic}-${o.partition}@${o.offset}: ${o.error}`) });
    }
    if (timedOut) logger.warn('close() reached its timeout', { timeoutMs, durationMs: result.durationMs });
    return result;
  }
}

/** What close() did: the group part (commits, leave) and whether it had to cut anything short. */
export interface CloseResult extends GroupCloseReport {
  /**
   * Partitions whose finished offset was already committed before close() (by auto-commit or
   * commitSync, nothing finished since): nothing to commit on the way out, nothing lost.
   */
  alreadyCommitted: OffsetToCommit[];
  /** Records (eachBatch: batches, from their first unfinished record) whose run() callback had not settled: not committed. */
  inFlight: InFlightRecord[];
  durationMs: number;
  /** Something was still pending at the deadline and was cut off (connections destroyed). */
  timedOut: boolean;
}

/** A start offset as the fetch state takes it (checked by usage.ts: a UsageError when it is not one). */
function startTarget(offset: StartOffset): bigint | ResetTarget {
  return usage.startOffset(offset, 'start offset');
}

/**
 * A consumer whose records' key and value types follow from its deserializers:
 * `createConsumer({ ..., keyDeserializer: 'string', valueDeserializer: (data) => parse(data) })`
 * is a Consumer<string | null, ReturnType<typeof parse>>. Or give them: createConsumer<K, V>(...).
 */
export function createConsumer<const C extends ConsumerConfig>(config: C): Consumer<DeserializedKey<C>, DeserializedValue<C>>;
export function createConsumer<K, V = unknown>(config: ConsumerConfig | Record<string, unknown>): Consumer<K, V>;
export function createConsumer(config: ConsumerConfig | Record<string, unknown>): Consumer {
  return new Consumer(config);
}

/**
 * Listeners typed by ConsumerEvents, for one event name or a union of them (checked by
 * test/types/consumer-types.ts); the methods are EventEmitter's.
 */
export interface Consumer<K, V> {
  on<E extends keyof ConsumerEvents>(event: E, listener: (...args: ConsumerEvents[E]) => void): this;
  once<E extends keyof ConsumerEvents>(event: E, listener: (...args: ConsumerEvents[E]) => void): this;
  addListener<E extends keyof ConsumerEvents>(event: E, listener: (...args: ConsumerEvents[E]) => void): this;
  prependListener<E extends keyof ConsumerEvents>(event: E, listener: (...args: ConsumerEvents[E]) => void): this;
  prependOnceListener<E extends keyof ConsumerEvents>(event: E, listener: (...args: ConsumerEvents[E]) => void): this;
  off<E extends keyof ConsumerEvents>(event: E, listener: (...args: ConsumerEvents[E]) => void): this;
  removeListener<E extends keyof ConsumerEvents>(event: E, listener: (...args: ConsumerEvents[E]) => void): this;
}
