// kafkajs's Consumer on kwire's consumer: kafkajs's methods, options, payloads, events and
// errors; kwire underneath (its fetcher, group protocols and the finished rule for commits).
//
// Lifecycle as kafkajs has it: connect() reaches the cluster; subscribe() only records topics;
// run() joins the group and resolves once the member has its partitions (processing goes on in
// the background); stop() leaves the group (run() may be called again); disconnect() stops and
// closes. A kwire consumer lives from connect() (or run()) to stop(): a restart after a crash,
// or run() after stop(), makes a new one, as kafkajs makes a new consumer group.
import { type Assignor, createConsumer, type Consumer as KwireConsumer, type ConsumerBatch, type GroupEventDetails, type ProcessingFailure, type TopicPartition } from '@kwire/consumer';
import type {
  Consumer as KafkaJSConsumer,
  ConsumerRunConfig,
  ConsumerSubscribeTopic,
  ConsumerSubscribeTopics,
  EachBatchPayload,
  EachMessagePayload,
  GroupDescription,
  KafkaConfig,
  Logger,
  OffsetsByTopicPartition,
  TopicPartitionOffset,
  TopicPartitionOffsetAndMetadata,
  TopicPartitions,
} from 'kafkajs-upstream';
import { assignorsFor } from './assigners.js';
import { RETRY_DEFAULTS, kwireConfig, type ConsumerConfig, type RetryConfig } from './config.js';
import { CONSUMER_EVENTS, EVENT_KEYS, InstrumentationEmitter, isConsumerEventName, type ConsumerEventName, type Event } from './events.js';
import { KafkaJSNonRetriableError, KafkaJSNumberOfRetriesExceeded } from './error-classes.js';
import { nonRetriable, retriableForKafkaJS, toKafkaJSError } from './errors.js';
import { Batch, toMessages } from './message.js';
import { withRetries } from './retry.js';
import { Long } from './upstream.js';

/** What a consumer needs of its Kafka client. */
export interface ClientContext {
  readonly config: KafkaConfig;
  brokers(): Promise<string[]>;
  logger(): Logger;
  /** The topics of the cluster (for RegExp subscriptions), as kafkajs's metadata lists them. */
  topicNames(): Promise<string[]>;
  /** The group's description, by kafkajs's own DescribeGroups. */
  describeGroup(groupId: string): Promise<GroupDescription>;
}

type RunConfig = ConsumerRunConfig;

/** A partition's resolved offset: the offset after its last record finished (a number while exact). */
interface PauseState {
  paused: Set<number>;
  pauseAll: boolean;
  resumed: Set<number>;
}

interface ResolvedEntry {
  topic: string;
  partition: number;
  offset: number | bigint;
}

/**
 * Whether the caller runs inside one of this module's batch handlers (stop() or disconnect()
 * awaited by an eachMessage/eachBatch). V8's async stack traces follow the await chain from the
 * caller up to the handler that awaits it, at no cost until asked (AsyncLocalStorage would put a
 * hook on every promise of the process on Node 20).
 */
function calledFromHandler(): boolean {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 200;
  const stack = new Error().stack ?? '';
  Error.stackTraceLimit = limit;
  return stack.split('\n').some((line) => line.includes(HANDLER_FRAME) && line.includes(THIS_FILE));
}
const HANDLER_FRAME = 'Consumer.handleBatch ';
const THIS_FILE = new URL(import.meta.url).pathname;
const SPECIAL_OFFSETS = new Set(['-1', '-2']);
/** The longest kwire's own close() may take once the facade has committed (leave the group, close connections). */
const CLOSE_MS = 5_000;

function tpKey(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

function isPartitionNumber(p: unknown): boolean {
  return typeof p === 'number' ? !Number.isNaN(p) : !Number.isNaN(Number(p));
}

/** A kafkajs offset (string, number or bigint) as a bigint; a KafkaJSNonRetriableError when it is not one. */
function offsetOf(offset: unknown): bigint {
  try {
    if (typeof offset === 'bigint') return offset;
    if (typeof offset === 'number' && Number.isInteger(offset)) return BigInt(offset);
    if (typeof offset === 'string' && /^-?\d+$/.test(offset.trim())) return BigInt(offset.trim());
    if (offset !== null && typeof offset === 'object' && typeof (offset as { toString(): string }).toString === 'function') {
      const s = String(offset);
      if (/^-?\d+$/.test(s)) return BigInt(s);
    }
  } catch {
    // not an integer: the error below
  }
  throw new KafkaJSNonRetriableError(`Invalid offset, expected a long received ${String(offset)}`);
}

export class Consumer implements KafkaJSConsumer {
  readonly events = CONSUMER_EVENTS;
  private readonly log: Logger;
  private readonly instrumentation = new InstrumentationEmitter();
  private readonly groupId: string;
  private readonly retry: RetryConfig;
  private readonly assignors: readonly (string | Assignor)[];
  /** Subscribed topics and whether each starts from the beginning (kafkajs's `topics`). */
  private readonly topics = new Map<string, { fromBeginning: boolean }>();
  private kw: KwireConsumer | undefined;
  private kwCreating: Promise<KwireConsumer> | undefined;
  /** The run() configuration while the consumer runs (kafkajs's consumerGroup). */
  private runConfig: RunConfig | undefined;
  private running = false;
  private restartTimer: NodeJS.Timeout | undefined;
  private stopping: Promise<void> | undefined;
  /**
   * Seeks per partition: a batch taken before one is stale (kafkajs's isStale). A counter object
   * per partition, so that a batch reads its partition's count without a map lookup per message.
   */
  private readonly seeks = new Map<string, { count: number }>();
  /** The crash a run() failure decision made (the kafkajs error for it). */
  private pendingCrash: Error | undefined;
  private member: { memberId: string; generationId: number; leader: boolean; protocol: string } = { memberId: '', generationId: -1, leader: false, protocol: '' };
  private rebalanceStarted = 0;
  private joinedOnce = false;
  /** run()'s autoCommit. */
  private autoCommit = true;
  /** Offsets finished since the last commit (autoCommitThreshold) and when it was (autoCommitInterval). */
  private resolvedSinceCommit = 0;
  private lastCommit = 0;
  /** Batches whose handlers are running, and who waits for there to be none (stop()). */
  private activeHandlers = 0;
  private idleWaiters: (() => void)[] = [];
  private commitInFlight: Promise<void> | undefined;
  private commitAgain = false;
  /** Per partition: the offset after the last record finished here, and the last one committed (uncommittedOffsets()). */
  private readonly resolvedOffsets = new Map<string, ResolvedEntry>();
  private readonly committedOffsets = new Map<string, bigint>();
  /** Polls kwire's counters for HEARTBEAT, FETCH_START and FETCH while someone listens. */
  private poller: NodeJS.Timeout | undefined;
  private lastHeartbeatAt = 0;
  private fetchesSeen: Record<number, number> = {};

  constructor(
    private readonly client: ClientContext,
    private readonly options: ConsumerConfig,
  ) {
    if (options === null || typeof options !== 'object' || typeof options.groupId !== 'string' || options.groupId.length === 0) {
      throw new KafkaJSNonRetriableError('Consumer groupId must be a non-empty string.');
    }
    this.groupId = options.groupId;
    this.log = client.logger().namespace('Consumer');
    this.retry = { ...RETRY_DEFAULTS, ...(client.config.retry ?? {}), ...(options.retry ?? {}) };
    // Made and checked now, as kafkajs does when the consumer is made (a bad option throws here).
    this.assignors = options.kwire?.partitionAssignmentStrategy ?? assignorsFor(options.partitionAssigners, { groupId: this.groupId, logger: this.log });
    kwireConfig(client.config, ['localhost:9092'], options, this.retry, this.log, this.assignors);
  }

  // ------------------------------------------------------------------ the kwire consumer

  private async kwire(): Promise<KwireConsumer> {
    if (this.kw) return this.kw;
    this.kwCreating ??= (async () => {
      const brokers = await this.client.brokers();
      const kw = createConsumer(kwireConfig(this.client.config, brokers, this.options, this.retry, this.log, this.assignors));
      this.watch(kw);
      this.kw = kw;
      return kw;
    })().finally(() => {
      this.kwCreating = undefined;
    });
    return this.kwCreating;
  }

  /** kwire's group events as kafkajs's instrumentation events. */
  private watch(kw: KwireConsumer): void {
    this.unwatch = () => {
      clearInterval(this.poller);
      this.poller = undefined;
    };
    this.startPolling(kw);
    kw.on('rebalance', (d: GroupEventDetails['rebalance']) => {
      this.rebalanceStarted = Date.now();
      if (this.joinedOnce) this.instrumentation.emit(CONSUMER_EVENTS.REBALANCING, { groupId: this.groupId, memberId: this.member.memberId || d.memberId });
    });
    kw.on('joined', (d: GroupEventDetails['joined']) => {
      this.member = { memberId: d.memberId, generationId: d.generationId ?? d.memberEpoch ?? -1, leader: d.leader === true, protocol: d.protocol ?? '' };
    });
    kw.on('assigned', (d: GroupEventDetails['assigned']) => {
      this.joinedOnce = true;
      const memberAssignment: Record<string, number[]> = {};
      for (const tp of d.assigned) (memberAssignment[tp.topic] ??= []).push(tp.partition);
      for (const list of Object.values(memberAssignment)) list.sort((a, b) => a - b);
      if (d.generationId !== undefined) this.member.generationId = d.generationId;
      else if (d.memberEpoch !== undefined) this.member.generationId = d.memberEpoch;
      this.instrumentation.emit(CONSUMER_EVENTS.GROUP_JOIN, {
        duration: this.rebalanceStarted ? Date.now() - this.rebalanceStarted : 0,
        groupId: this.groupId,
        isLeader: this.member.leader,
        leaderId: this.member.leader ? this.member.memberId : '',
        groupProtocol: this.member.protocol,
        memberId: this.member.memberId,
        memberAssignment,
      });
      const assignedTopics = Object.keys(memberAssignment);
      const topicsNotSubscribed = assignedTopics.filter((t) => !this.topics.has(t));
      if (topicsNotSubscribed.length > 0) {
        this.instrumentation.emit(CONSUMER_EVENTS.RECEIVED_UNSUBSCRIBED_TOPICS, {
          groupId: this.groupId,
          generationId: this.member.generationId,
          memberId: this.member.memberId,
          assignedTopics,
          topicsSubscribed: [...this.topics.keys()],
          topicsNotSubscribed,
        });
      }
    });
    kw.on('error', (err: Error) => {
      this.log.error(`kwire consumer error: ${err.message}`, { groupId: this.groupId });
    });
  }

  // ------------------------------------------------------------------ kafkajs's API

  async connect(): Promise<void> {
    const kw = await this.kwire();
    await withRetries(this.retry, () => kw.connect());
    this.instrumentation.emit(CONSUMER_EVENTS.CONNECT);
  }

  disconnect(): Promise<void> {
    if (this.activeHandlers > 0 && calledFromHandler()) {
      // As stop(): from a handler, the disconnection goes on once the handler returns.
      this.running = false;
      this.disconnectNow().catch(() => undefined);
      return Promise.resolve();
    }
    return this.disconnectNow();
  }

  private async disconnectNow(): Promise<void> {
    try {
      await this.stop();
      this.log.debug('consumer has stopped, disconnecting', { groupId: this.groupId });
      await this.closeKwire();
      this.instrumentation.emit(CONSUMER_EVENTS.DISCONNECT);
    } catch (e) {
      this.log.error(`Caught error when disconnecting the consumer: ${(e as Error).message}`, { stack: (e as Error).stack, groupId: this.groupId });
      throw e;
    }
  }

  stop(): Promise<void> {
    const fromHandler = this.activeHandlers > 0 && calledFromHandler();
    this.stopping ??= this.stopNow().finally(() => {
      this.stopping = undefined;
    });
    // From inside a handler, waiting for the stop would wait for the handler itself: the stop goes
    // on once the handler returns, and the handler is not held (kafkajs would wait for ever).
    if (fromHandler) {
      this.stopping.catch(() => undefined);
      return Promise.resolve();
    }
    return this.stopping;
  }

  private async stopNow(): Promise<void> {
    if (this.running || this.runConfig) {
      this.running = false;
      this.runConfig = undefined;
      await this.closeKwire();
      this.instrumentation.emit(CONSUMER_EVENTS.STOP);
    }
    clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    this.log.info('Stopped', { groupId: this.groupId });
  }

  private unwatch: (() => void) | undefined;

  /**
   * A commit went through: COMMIT_OFFSETS with kafkajs's payload. Its own commits carry what
   * uncommittedOffsets() lists (partitions as strings); commitOffsets() carries the partitions as
   * given, the offsets as kafkajs's Long and the metadata.
   */
  private committed(topics: { topic: string; partitions: unknown[] }[]): void {
    this.instrumentation.emit(CONSUMER_EVENTS.COMMIT_OFFSETS, {
      groupId: this.groupId,
      memberId: this.member.memberId,
      groupGenerationId: this.member.generationId,
      topics,
    });
  }

  /**
   * kwire reports no single heartbeat or fetch, only counters: HEARTBEAT, FETCH_START and FETCH are
   * emitted from them (each heartbeat that succeeded, each fetch answered per node), a little
   * after the fact, while someone listens.
   */
  private startPolling(kw: KwireConsumer): void {
    const interval = Math.max(50, Math.min(500, Math.floor((this.options.heartbeatInterval ?? 3_000) / 3)));
    this.poller = setInterval(() => {
      const e = CONSUMER_EVENTS;
      const wantsHeartbeat = this.instrumentation.listening(e.HEARTBEAT);
      const wantsFetch = this.instrumentation.listening(e.FETCH) || this.instrumentation.listening(e.FETCH_START);
      if (!wantsHeartbeat && !wantsFetch) return;
      let m: ReturnType<KwireConsumer['metrics']>;
      try {
        m = kw.metrics();
      } catch {
        return;
      }
      if (wantsHeartbeat && m.group?.sinceLastHeartbeatMs !== undefined && this.joinedOnce && this.member.memberId) {
        const at = Date.now() - m.group.sinceLastHeartbeatMs;
        if (at - this.lastHeartbeatAt > 10) {
          if (this.lastHeartbeatAt !== 0) this.instrumentation.emit(e.HEARTBEAT, { groupId: this.groupId, memberId: this.member.memberId, groupGenerationId: this.member.generationId });
          this.lastHeartbeatAt = at;
        }
      }
      if (wantsFetch) this.fetchEvents(m);
    }, interval);
    this.poller.unref();
  }

  /** FETCH_START and FETCH for the fetches kwire counted since the last look (at most 100 per node at once). */
  private fetchEvents(m: ReturnType<KwireConsumer['metrics']>): void {
    const e = CONSUMER_EVENTS;
    const duration = Math.round(m.fetchLatency.avgMs ?? 0);
    for (const [node, count] of Object.entries(m.fetchesByNode)) {
      // kafkajs's node ids here are the keys of its broker map: strings at run time.
      const nodeId = String(node);
      const seen = this.fetchesSeen[Number(node)] ?? 0;
      for (let i = seen; i < count && i < seen + 100; i++) {
        this.instrumentation.emit(e.FETCH_START, { nodeId });
        this.instrumentation.emit(e.FETCH, { numberOfBatches: 0, duration, nodeId });
      }
      this.fetchesSeen[Number(node)] = count;
    }
  }

  /** Before a batch is processed, the fetch that brought it is reported (kafkajs: FETCH comes before START_BATCH_PROCESS). */
  private fetchEventsNow(): void {
    const kw = this.kw;
    if (!kw || !(this.instrumentation.listening(CONSUMER_EVENTS.FETCH) || this.instrumentation.listening(CONSUMER_EVENTS.FETCH_START))) return;
    try {
      this.fetchEvents(kw.metrics());
    } catch {
      // metrics of a closing consumer: nothing to report
    }
  }

  /** Closes the kwire consumer (commits what was finished, leaves the group), bounded. */
  private async closeKwire(): Promise<void> {
    const kw = this.kw ?? (this.kwCreating ? await this.kwCreating.catch(() => undefined) : undefined);
    if (!kw) {
      this.kw = undefined;
      return;
    }
    const budget = this.options.kwire?.closeTimeoutMs ?? 30_000;
    const started = Date.now();
    // The handlers under way finish their batches (running is false: no further message starts),
    // and their end-of-batch commits go out, before the member leaves: as kafkajs stops.
    await this.idle(budget / 2);
    await this.flushCommits();
    this.kw = undefined;
    try {
      // kwire commits nothing here (the facade did). What is left is leaving the group and
      // closing connections; a Fetch long-polling at the broker is not waited for past this.
      await kw.close({ timeoutMs: Math.max(100, Math.min(CLOSE_MS, budget - (Date.now() - started))) });
    } finally {
      this.unwatch?.();
      this.unwatch = undefined;
      this.joinedOnce = false;
      this.pauses.clear();
      this.pendingSeeks.clear();
      this.lastHeartbeatAt = 0;
      this.fetchesSeen = {};
      this.resolvedOffsets.clear();
      this.committedOffsets.clear();
    }
  }

  async subscribe(subscription: ConsumerSubscribeTopics | ConsumerSubscribeTopic): Promise<void> {
    if (this.running) throw new KafkaJSNonRetriableError('Cannot subscribe to topic while consumer is running');
    if (subscription === null || typeof subscription !== 'object') throw new KafkaJSNonRetriableError('Missing required argument "topics"');
    const { topic, topics, fromBeginning = false } = subscription as { topic?: unknown; topics?: unknown; fromBeginning?: boolean };
    if (!topic && !topics) throw new KafkaJSNonRetriableError('Missing required argument "topics"');
    if (topics != null && !Array.isArray(topics)) throw new KafkaJSNonRetriableError('Argument "topics" must be an array');
    const list = (topics as unknown[] | undefined) ?? [topic];
    for (const s of list) {
      if (typeof s !== 'string' && !(s instanceof RegExp)) {
        throw new KafkaJSNonRetriableError(`Invalid topic ${String(s)} (${typeof s}), the topic name has to be a String or a RegExp`);
      }
    }
    const names = list.some((s) => s instanceof RegExp) ? await this.client.topicNames() : [];
    const matched: string[] = [];
    for (const s of list as (string | RegExp)[]) {
      if (typeof s === 'string') matched.push(s);
      else {
        const found = names.filter((n) => s.test(n));
        this.log.debug('Subscription based on RegExp', { groupId: this.groupId, topicRegExp: s.toString(), matchedTopics: found });
        matched.push(...found);
      }
    }
    // kafkajs loads the topics' metadata here: with allowAutoTopicCreation false, a topic the
    // cluster does not have is an error after the retries (UNKNOWN_TOPIC_OR_PARTITION).
    if (this.options.allowAutoTopicCreation === false) {
      const kw = await this.kwire();
      for (const t of new Set(matched.filter((n) => typeof n === 'string'))) {
        await withRetries(this.retry, () => kw.partitionsFor(t), { wrap: false });
      }
    }
    for (const t of matched) this.topics.set(t, { fromBeginning: fromBeginning === true });
  }

  async run(config: RunConfig = {}): Promise<void> {
    if (this.running) {
      this.log.warn('consumer#run was called, but the consumer is already running', { groupId: this.groupId });
      return;
    }
    if (config === null || typeof config !== 'object') throw new KafkaJSNonRetriableError(`Invalid run() configuration: expected an object, received ${String(config)}`);
    const { eachMessage, eachBatch, partitionsConsumedConcurrently = 1 } = config;
    if (eachMessage != null && typeof eachMessage !== 'function') throw new KafkaJSNonRetriableError('Invalid eachMessage: expected a function');
    if (eachBatch != null && typeof eachBatch !== 'function') throw new KafkaJSNonRetriableError('Invalid eachBatch: expected a function');
    if (eachMessage == null && eachBatch == null) throw new KafkaJSNonRetriableError('Consumer#run needs eachMessage or eachBatch');
    if (!Number.isInteger(partitionsConsumedConcurrently) || partitionsConsumedConcurrently < 1) {
      throw new KafkaJSNonRetriableError(`Invalid partitionsConsumedConcurrently: expected a positive integer, received ${String(partitionsConsumedConcurrently)}`);
    }
    if (this.topics.size === 0) throw new KafkaJSNonRetriableError('Consumer#run needs a subscription: call subscribe() first');
    this.runConfig = config;
    this.running = true;
    await this.start();
  }

  /** Joins the group and starts processing; a failure is a crash (kafkajs's onCrash). */
  private async start(): Promise<void> {
    const config = this.runConfig;
    if (!config || !this.running) return;
    this.log.info('Starting', { groupId: this.groupId });
    let kw: KwireConsumer;
    try {
      kw = await this.kwire();
      await withRetries(this.retry, () => kw.connect());
      // kafkajs's ConsumerGroup connects (and says so) each time the consumer starts, before it joins.
      this.instrumentation.emit(CONSUMER_EVENTS.CONNECT);
      this.autoCommit = config.autoCommit !== false;
      this.lastCommit = Date.now();
      // Commits are this facade's (kafkajs's rule: what was resolved, when a batch ends, on an
      // error, at the threshold or interval, on a rebalance; never a position nothing moved),
      // so kwire commits nothing by itself. Where to start is kwire configuration, set before the
      // group is joined.
      const c = kw.config as { enableAutoCommit: boolean; autoOffsetReset: 'earliest' | 'latest' | 'none' };
      c.enableAutoCommit = false;
      const fromBeginning = [...this.topics.values()].filter((t) => t.fromBeginning).length;
      c.autoOffsetReset = fromBeginning * 2 > this.topics.size ? 'earliest' : 'latest';
      const minority = new Set([...this.topics].filter(([, t]) => (t.fromBeginning ? 'earliest' : 'latest') !== c.autoOffsetReset).map(([name]) => name));
      await kw.subscribe(
        { topics: [...this.topics.keys()] },
        {
          onPartitionsAssigned: (tps) => this.assigned(kw, tps, minority),
          onPartitionsRevoked: (tps) => this.revoked(tps),
          onPartitionsLost: (tps) => this.forget(tps),
        },
      );
      await kw.assigned();
    } catch (err) {
      return this.crash(err);
    }
    if (!this.running || this.kw !== kw) return;
    this.pendingCrash = undefined;
    const concurrency = config.partitionsConsumedConcurrently ?? 1;
    kw.run({
      eachBatch: ({ batch }) => this.tracked(batch, config),
      eachBatchAutoResolve: false,
      maxConcurrency: concurrency,
      onFailure: (error, failure) => this.onFailure(error, failure),
    }).then(
      () => undefined,
      (err: unknown) => {
        if (this.kw === kw && this.running) void this.crash(err);
      },
    );
  }

  /** Partitions assigned: paused if kafkajs's pause state says so, sought if a seek waited for them. */
  private async assigned(kw: KwireConsumer, tps: TopicPartition[], minority: ReadonlySet<string>): Promise<void> {
    if (this.pauses.size > 0) this.applyPauses(undefined, tps);
    await this.startMinority(kw, tps, minority);
    for (const tp of tps) {
      const key = tpKey(tp.topic, tp.partition);
      const offset = this.pendingSeeks.get(key);
      if (offset === undefined) continue;
      this.pendingSeeks.delete(key);
      this.seekNow(kw, tp, offset);
    }
  }

  /**
   * Topics whose fromBeginning differs from the consumer's reset setting: their partitions with
   * no committed offset are moved to the start (or end) of their log, as kafkajs does per topic.
   */
  private async startMinority(kw: KwireConsumer, assigned: TopicPartition[], minority: ReadonlySet<string>): Promise<void> {
    if (minority.size === 0) return;
    const tps = assigned.filter((tp) => minority.has(tp.topic));
    if (tps.length === 0) return;
    const committed = await kw.committed(tps);
    for (const [tp, c] of committed) {
      if (c === null) kw.seek(tp, this.topics.get(tp.topic)?.fromBeginning ? 'earliest' : 'latest');
    }
  }

  /** Partitions go in a clean rebalance: what was resolved of them is committed first (kafkajs commits on a rebalance). */
  private async revoked(tps: TopicPartition[]): Promise<void> {
    if (this.autoCommit) await this.commitFinished(tps);
    this.forget(tps);
  }

  /** Partitions no longer this member's: their resolved offsets are dropped. */
  private forget(tps: TopicPartition[]): void {
    for (const tp of tps) {
      const key = tpKey(tp.topic, tp.partition);
      this.resolvedOffsets.delete(key);
      this.committedOffsets.delete(key);
    }
  }

  /** What kafkajs's retrier and crash would make of a callback's error. */
  private onFailure(error: unknown, failure: ProcessingFailure): 'retry' | 'stop' {
    const e = error instanceof Error ? error : new Error(String(error));
    if (!retriableForKafkaJS(e)) {
      this.pendingCrash = nonRetriable(e);
      return 'stop';
    }
    const retries = this.retry.retries ?? RETRY_DEFAULTS.retries;
    if (failure.attempts <= retries) return 'retry';
    const retryTime = Math.min((this.retry.initialRetryTime ?? 300) * 2 ** Math.max(0, failure.attempts - 1), this.retry.maxRetryTime ?? 30_000);
    this.pendingCrash = new KafkaJSNumberOfRetriesExceeded(e, { retryCount: failure.attempts - 1, retryTime });
    return 'stop';
  }

  /** kafkajs's onCrash: log, disconnect, ask restartOnFailure, emit CRASH, restart after a while. */
  private async crash(err: unknown): Promise<void> {
    const e = this.pendingCrash ?? toKafkaJSError(err);
    this.pendingCrash = undefined;
    const retryCount = (e as { retryCount?: number }).retryCount;
    this.log.error(`Crash: ${e.name}: ${e.message}`, { groupId: this.groupId, retryCount, stack: e.stack });
    const config = this.runConfig;
    try {
      await this.disconnect();
    } catch {
      // logged by disconnect()
    }
    const original = (x: unknown): unknown => ((x as { cause?: unknown })?.cause ? original((x as { cause: unknown }).cause) : x);
    const retriable = e.name === 'KafkaJSNumberOfRetriesExceeded' || (original(e) as { retriable?: unknown })?.retriable === true;
    let restart = retriable;
    if (restart && typeof this.retry.restartOnFailure === 'function') {
      restart = await this.retry.restartOnFailure(e).then(
        (r) => r === true,
        (error: unknown) => {
          this.log.error('Caught error when invoking user-provided "restartOnFailure" callback. Defaulting to restarting.', {
            error: (error as Error)?.message ?? error,
            cause: e.message,
            groupId: this.groupId,
          });
          return true;
        },
      );
    }
    this.instrumentation.emit(CONSUMER_EVENTS.CRASH, { error: e, groupId: this.groupId, restart });
    if (restart && config) {
      const retryTime = (e as { retryTime?: number }).retryTime || this.retry.initialRetryTime || RETRY_DEFAULTS.initialRetryTime;
      this.log.error(`Restarting the consumer in ${retryTime}ms`, { retryCount, retryTime, groupId: this.groupId });
      this.restartTimer = setTimeout(() => {
        this.restartTimer = undefined;
        this.runConfig = config;
        this.running = true;
        void this.start();
      }, retryTime);
    }
  }

  // ------------------------------------------------------------------ batches

  /** A batch's handling, counted: stop() waits for the batches under way, as kafkajs's runner does. */
  private async tracked(kb: ConsumerBatch, config: RunConfig): Promise<void> {
    this.activeHandlers++;
    try {
      await this.handleBatch(kb, config);
    } finally {
      if (--this.activeHandlers === 0) for (const wake of this.idleWaiters.splice(0)) wake();
    }
  }

  /** Resolves when no batch is being handled, or after `ms`. */
  private idle(ms: number): Promise<void> {
    if (this.activeHandlers === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.idleWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private async handleBatch(kb: ConsumerBatch, config: RunConfig): Promise<void> {
    const { topic, partition } = kb;
    const key = tpKey(topic, partition);
    const seeks = this.seekCount(key);
    const seeksAtStart = seeks.count;
    const isStale = () => seeks.count !== seeksAtStart;
    const { messages, offsets } = toMessages(kb, config.eachMessage !== undefined);
    const batch = new Batch(topic, partition, kb.highWatermark.toString(), messages);
    const started = Date.now();
    const payload =
      this.instrumentation.listening(CONSUMER_EVENTS.START_BATCH_PROCESS) || this.instrumentation.listening(CONSUMER_EVENTS.END_BATCH_PROCESS)
        ? {
            topic,
            partition,
            highWatermark: batch.highWatermark,
            offsetLag: batch.offsetLag(),
            offsetLagLow: batch.offsetLagLow(),
            batchSize: messages.length,
            firstOffset: batch.firstOffset(),
            lastOffset: batch.lastOffset(),
          }
        : undefined;
    this.fetchEventsNow();
    if (payload) this.instrumentation.emit(CONSUMER_EVENTS.START_BATCH_PROCESS, payload);
    const pause = () => {
      this.pause([{ topic, partitions: [partition] }]);
      return () => this.resume([{ topic, partitions: [partition] }]);
    };
    const heartbeat = async () => {};
    const autoCommit = config.autoCommit !== false;
    // What this batch resolved: the partition's entry (the offset after the last record resolved),
    // and, for kwire, the last record to mark processed when the handler is done with the batch
    // (commits are the facade's, from the entry, so kwire needs the mark only then).
    let entry: ResolvedEntry | undefined;
    let mark: number | bigint | undefined;
    const resolve = (offset: number | bigint) => {
      // After a seek the partition's resolved offset is the sought one: a stale batch moves it no more.
      if (isStale()) return;
      entry ??= this.resolvedEntry(topic, partition);
      entry.offset = typeof offset === 'number' ? offset + 1 : offset + 1n;
      mark = offset;
    };
    try {
      if (config.eachMessage) {
        const eachMessage = config.eachMessage;
        for (let i = 0; i < messages.length; i++) {
          if (!this.running || isStale()) break;
          const message = messages[i]!;
          try {
            await eachMessage({ topic, partition, message: message as unknown as EachMessagePayload['message'], heartbeat, pause });
          } catch (e) {
            if (!(e instanceof Error && e.name.startsWith('KafkaJS'))) {
              this.log.error('Error when calling eachMessage', { topic, partition, offset: message.offset, stack: (e as Error)?.stack, error: e });
            }
            if (autoCommit) await this.commitFinished();
            throw e;
          }
          const o = offsets![i]!;
          resolve(o < Number.MAX_SAFE_INTEGER ? o : BigInt(message.offset));
          if (autoCommit) this.resolved(1, config);
          if (this.pauses.size > 0 && this.isPaused(topic, partition)) break;
        }
      } else if (config.eachBatch) {
        const first = messages.length > 0 ? BigInt(messages[0]!.offset) : 0n;
        const last = BigInt(batch.lastOffset());
        let resolvedHere = 0;
        const resolveOffset = (offset: string) => {
          if (isStale()) return;
          const o = offsetOf(offset);
          if (o < first) return;
          resolve(o > last ? last : o);
          resolvedHere++;
        };
        try {
          await config.eachBatch({
            batch,
            resolveOffset,
            heartbeat,
            pause,
            commitOffsetsIfNecessary: async (offsets?: Parameters<EachBatchPayload['commitOffsetsIfNecessary']>[0]) => {
              if (offsets) return this.commitOffsets(offsets.topics.flatMap((t) => t.partitions.map((p) => ({ topic: t.topic, partition: p.partition, offset: p.offset }))));
              if (autoCommit) await this.commitIfNecessary(config);
            },
            uncommittedOffsets: () => this.uncommittedOffsets(),
            isRunning: () => this.running,
            isStale,
          });
        } catch (e) {
          if (!(e instanceof Error && e.name.startsWith('KafkaJS'))) {
            this.log.error('Error when calling eachBatch', { topic, partition, offset: batch.firstOffset(), stack: (e as Error)?.stack, error: e });
          }
          if (autoCommit) await this.commitFinished();
          throw e;
        }
        if (config.eachBatchAutoResolve !== false && !isStale() && messages.length > 0) {
          resolve(last);
          resolvedHere = messages.length;
        }
        if (autoCommit && resolvedHere > 0) this.resolved(resolvedHere, config);
      }
    } finally {
      if (mark !== undefined) kb.markProcessed(mark);
    }
    if (payload) this.instrumentation.emit(CONSUMER_EVENTS.END_BATCH_PROCESS, { ...payload, duration: Date.now() - started });
    // kafkajs commits after every batch when autoCommit is on: here without holding the partition.
    if (autoCommit) this.commitSoon();
  }

  /** The partition's resolved offset (the offset after the last record finished; a number while exact). */
  private resolvedEntry(topic: string, partition: number): ResolvedEntry {
    const key = tpKey(topic, partition);
    let known = this.resolvedOffsets.get(key);
    if (!known) {
      known = { topic, partition, offset: 0 };
      this.resolvedOffsets.set(key, known);
    }
    return known;
  }

  private resolved(n: number, config: RunConfig): void {
    this.resolvedSinceCommit += n;
    if (this.commitDue(config)) this.commitSoon();
  }

  /** kafkajs's commitOffsetsIfNecessary condition: the interval passed, or the threshold reached. */
  private commitDue(config: RunConfig): boolean {
    const { autoCommitThreshold: threshold, autoCommitInterval: interval } = config;
    if (typeof interval === 'number' && Date.now() >= this.lastCommit + interval) return true;
    return typeof threshold === 'number' && threshold > 0 && this.resolvedSinceCommit >= threshold;
  }

  private async commitIfNecessary(config: RunConfig): Promise<void> {
    if (this.commitDue(config)) await this.commitFinished();
  }

  /**
   * Commits what was resolved and not committed yet (of these partitions, or all), now, awaited;
   * nothing when nothing moved. Errors are logged: the next commit carries the same offsets.
   */
  private async commitFinished(only?: readonly TopicPartition[]): Promise<void> {
    if (!only) {
      this.resolvedSinceCommit = 0;
      this.lastCommit = Date.now();
    }
    await this.serially(async () => {
      const kw = this.kw;
      if (!kw) return;
      const wanted = only && new Set(only.map((tp) => tpKey(tp.topic, tp.partition)));
      const list: { topic: string; partition: number; offset: bigint }[] = [];
      for (const [key, r] of this.resolvedOffsets) {
        if (wanted && !wanted.has(key)) continue;
        const offset = BigInt(r.offset);
        if (this.committedOffsets.get(key) !== offset) list.push({ topic: r.topic, partition: r.partition, offset });
      }
      if (list.length === 0) return;
      try {
        await kw.commitSync(list);
        const byTopic = new Map<string, { partition: string; offset: string }[]>();
        for (const o of list) {
          this.committedOffsets.set(tpKey(o.topic, o.partition), o.offset);
          const entries = byTopic.get(o.topic) ?? [];
          entries.push({ partition: String(o.partition), offset: o.offset.toString() });
          byTopic.set(o.topic, entries);
        }
        if (this.instrumentation.listening(CONSUMER_EVENTS.COMMIT_OFFSETS)) this.committed([...byTopic].map(([topic, partitions]) => ({ topic, partitions })));
      } catch (err) {
        this.log.warn(`commit failed: ${(err as Error).message}`, { groupId: this.groupId });
      }
    });
  }

  /**
   * Runs commits one after another, in the order they were asked for: a commit of a sought offset
   * and the commit of records read after the seek must reach the group in that order.
   */
  private serially<T>(commit: () => Promise<T>): Promise<T> {
    const done = this.commitChain.then(commit);
    this.commitChain = done.then(
      () => undefined,
      () => undefined,
    );
    return done;
  }

  private commitChain: Promise<void> = Promise.resolve();

  /** A commit of what was finished, soon, one at a time (one more after the one in flight). */
  private commitSoon(): void {
    if (this.commitInFlight) {
      this.commitAgain = true;
      return;
    }
    this.commitInFlight = (async () => {
      do {
        this.commitAgain = false;
        await this.commitFinished();
      } while (this.commitAgain && this.kw);
    })().finally(() => {
      this.commitInFlight = undefined;
    });
  }

  private async flushCommits(): Promise<void> {
    await this.commitInFlight;
    await this.commitChain;
  }

  /** kafkajs's uncommittedOffsets(): per partition, the offset after the last record finished, where it was not committed yet. */
  private uncommittedOffsets(): OffsetsByTopicPartition {
    // Partitions as strings, as kafkajs has them (keys of its offset maps).
    const byTopic = new Map<string, { partition: number; offset: string }[]>();
    for (const [key, r] of this.resolvedOffsets) {
      if (this.committedOffsets.get(key) === BigInt(r.offset)) continue;
      const list = byTopic.get(r.topic) ?? [];
      list.push({ partition: String(r.partition) as unknown as number, offset: r.offset.toString() });
      byTopic.set(r.topic, list);
    }
    return { topics: [...byTopic].map(([topic, partitions]) => ({ topic, partitions })) };
  }

  // ------------------------------------------------------------------ offsets, pause, seek

  async commitOffsets(topicPartitions: TopicPartitionOffsetAndMetadata[] = []): Promise<void> {
    if (!Array.isArray(topicPartitions)) throw new KafkaJSNonRetriableError('Invalid offsets: expected an array of { topic, partition, offset }');
    const list = topicPartitions.map(({ topic, partition, offset, metadata = null }) => {
      if (!topic) throw new KafkaJSNonRetriableError(`Invalid topic ${String(topic)}`);
      if (!isPartitionNumber(partition)) throw new KafkaJSNonRetriableError(`Invalid partition, expected a number received ${String(partition)}`);
      const o = offsetOf(offset);
      if (o < 0n) throw new KafkaJSNonRetriableError('Offset must not be a negative number');
      if (metadata !== null && typeof metadata !== 'string') throw new KafkaJSNonRetriableError(`Invalid offset metadata, expected string or null, received ${String(metadata)}`);
      return { topic, partition: Number(partition), offset: o, metadata };
    });
    const kw = this.kw;
    if (!this.running || !kw) throw new KafkaJSNonRetriableError('Consumer group was not initialized, consumer#run must be called first');
    try {
      await this.serially(async () => {
        await kw.commitSync(list);
        for (const o of list) this.committedOffsets.set(tpKey(o.topic, o.partition), o.offset);
      });
    } catch (err) {
      throw toKafkaJSError(err);
    }
    const byTopic = new Map<string, { partition: number; offset: unknown; metadata: string | null }[]>();
    for (const o of list) {
      const entries = byTopic.get(o.topic) ?? [];
      entries.push({ partition: o.partition, offset: Long.fromValue(o.offset.toString()), metadata: o.metadata });
      byTopic.set(o.topic, entries);
    }
    if (this.instrumentation.listening(CONSUMER_EVENTS.COMMIT_OFFSETS)) this.committed([...byTopic].map(([topic, partitions]) => ({ topic, partitions })));
  }

  seek({ topic, partition, offset }: TopicPartitionOffset): void {
    if (!topic) throw new KafkaJSNonRetriableError(`Invalid topic ${String(topic)}`);
    if (!isPartitionNumber(partition)) throw new KafkaJSNonRetriableError(`Invalid partition, expected a number received ${String(partition)}`);
    const o = offsetOf(offset);
    if (o < 0n && !SPECIAL_OFFSETS.has(o.toString())) throw new KafkaJSNonRetriableError('Offset must not be a negative number');
    const kw = this.kw;
    if (!this.running || !kw) throw new KafkaJSNonRetriableError('Consumer group was not initialized, consumer#run must be called first');
    const tp = { topic, partition: Number(partition) };
    if (!kw.assignment().some((a) => a.topic === tp.topic && a.partition === tp.partition)) {
      // kafkajs keeps a seek of a partition this member does not have, for when it gets it.
      this.pendingSeeks.set(tpKey(tp.topic, tp.partition), o);
      return;
    }
    this.seekNow(kw, tp, o);
  }

  /** Seeks kafkajs's consumers waiting for their partitions, by partition. */
  private readonly pendingSeeks = new Map<string, bigint>();

  private seekCount(key: string): { count: number } {
    let seeks = this.seeks.get(key);
    if (!seeks) {
      seeks = { count: 0 };
      this.seeks.set(key, seeks);
    }
    return seeks;
  }

  private seekNow(kw: KwireConsumer, tp: TopicPartition, o: bigint): void {
    const { topic, partition } = tp;
    const key = tpKey(topic, partition);
    this.seekCount(key).count++;
    try {
      kw.seek(tp, o === -1n ? 'latest' : o === -2n ? 'earliest' : o);
    } catch (err) {
      throw toKafkaJSError(err);
    }
    if (o < 0n) return;
    // kafkajs: with autoCommit the sought offset is committed; without, it becomes the resolved one.
    this.resolvedEntry(topic, partition).offset = o;
    if (this.autoCommit) {
      // In the queue of commits: those asked for before it go first, and those after see the
      // sought offset as committed (records read again after the seek then commit past it).
      this.serially(() => {
        this.committedOffsets.set(key, o);
        return kw.commitSync([{ topic, partition, offset: o }]);
      }).catch((err: unknown) => {
        if (this.committedOffsets.get(key) === o) this.committedOffsets.delete(key);
        this.log.warn(`commit of the sought offset failed: ${(err as Error).message}`, { groupId: this.groupId, topic, partition });
      });
    }
  }

  async describeGroup(): Promise<GroupDescription> {
    return this.client.describeGroup(this.groupId);
  }

  private checkPartitions(topicPartitions: Array<{ topic: string; partitions?: number[] }>): void {
    if (!Array.isArray(topicPartitions)) throw new KafkaJSNonRetriableError(`Invalid topic ${String(topicPartitions)}`);
    for (const tp of topicPartitions) {
      if (!tp?.topic) throw new KafkaJSNonRetriableError(`Invalid topic ${String(tp?.topic ?? tp)}`);
      if (tp.partitions !== undefined && (!Array.isArray(tp.partitions) || tp.partitions.some((p) => !isPartitionNumber(p)))) {
        throw new KafkaJSNonRetriableError(`Array of valid partitions required to pause specific partitions instead of ${String(tp.partitions)}`);
      }
    }
    if (!this.running || !this.kw) throw new KafkaJSNonRetriableError('Consumer group was not initialized, consumer#run must be called first');
  }

  /**
   * kafkajs's pause: remembered per topic (every partition, or some), whether or not they are
   * assigned now, kept across rebalances until resume() or stop(); kwire pauses the assigned ones
   * now and the others when they are assigned.
   */
  pause(topicPartitions: Array<{ topic: string; partitions?: number[] }>): void {
    this.checkPartitions(topicPartitions);
    for (const { topic, partitions } of topicPartitions) {
      const state = this.pauseState(topic);
      if (partitions === undefined) {
        state.paused.clear();
        state.resumed.clear();
        state.pauseAll = true;
      } else {
        for (const p of partitions.map(Number)) {
          state.paused.add(p);
          state.resumed.delete(p);
        }
        state.pauseAll = false;
      }
    }
    this.applyPauses(new Set(topicPartitions.map((tp) => tp.topic)));
  }

  resume(topicPartitions: Array<{ topic: string; partitions?: number[] }>): void {
    this.checkPartitions(topicPartitions);
    for (const { topic, partitions } of topicPartitions) {
      const state = this.pauseState(topic);
      if (partitions === undefined) {
        state.paused.clear();
        state.resumed.clear();
        state.pauseAll = false;
      } else {
        for (const p of partitions.map(Number)) {
          state.paused.delete(p);
          if (state.pauseAll) state.resumed.add(p);
        }
      }
    }
    this.applyPauses(new Set(topicPartitions.map((tp) => tp.topic)));
  }

  /** The assigned partitions that are paused, by topic, as kafkajs lists them. */
  paused(): TopicPartitions[] {
    const kw = this.kw;
    if (!kw || this.pauses.size === 0) return [];
    const byTopic = new Map<string, number[]>();
    for (const tp of kw.assignment()) {
      const list = byTopic.get(tp.topic) ?? [];
      if (this.isPaused(tp.topic, tp.partition)) list.push(tp.partition);
      byTopic.set(tp.topic, list);
    }
    // kafkajs sorts with Array.prototype.sort's default order.
    return [...byTopic].filter(([, partitions]) => partitions.length > 0).map(([topic, partitions]) => ({ topic, partitions: partitions.sort() }));
  }

  /** Whether kafkajs would hold the partition paused (checked after each message). */
  private isPaused(topic: string, partition: number): boolean {
    if (this.pauses.size === 0) return false;
    const state = this.pauses.get(topic);
    if (!state) return false;
    return (state.pauseAll && !state.resumed.has(partition)) || state.paused.has(partition);
  }

  private pauseState(topic: string): PauseState {
    let state = this.pauses.get(topic);
    if (!state) {
      state = { paused: new Set(), pauseAll: false, resumed: new Set() };
      this.pauses.set(topic, state);
    }
    return state;
  }

  /** Brings kwire's paused partitions (of these topics, or all) in line with kafkajs's pause state. */
  private applyPauses(topics?: ReadonlySet<string>, assigned?: readonly TopicPartition[]): void {
    const kw = this.kw;
    if (!kw) return;
    const pausedNow = new Set(kw.paused().map((tp) => tpKey(tp.topic, tp.partition)));
    const toPause: TopicPartition[] = [];
    const toResume: TopicPartition[] = [];
    for (const tp of assigned ?? kw.assignment()) {
      if (topics && !topics.has(tp.topic)) continue;
      const want = this.isPaused(tp.topic, tp.partition);
      const is = pausedNow.has(tpKey(tp.topic, tp.partition));
      if (want && !is) toPause.push(tp);
      else if (!want && is) toResume.push(tp);
    }
    try {
      if (toPause.length > 0) kw.pause(toPause);
      if (toResume.length > 0) kw.resume(toResume);
    } catch (err) {
      throw toKafkaJSError(err);
    }
  }

  /** kafkajs's pauses by topic (its SubscriptionState): every partition but those resumed, or those named. */
  private readonly pauses = new Map<string, PauseState>();

  // ------------------------------------------------------------------ events and logger

  /**
   * Adds a listener for one of consumer.events; returns the function that removes it. Listeners get
   * kafkajs's `{ id, type, timestamp, payload }`; a listener that throws (or rejects) is logged.
   */
  readonly on: KafkaJSConsumer['on'] = (eventName: ConsumerEventName, listener: (event: never) => void): (() => void) => {
    if (!isConsumerEventName(eventName)) throw new KafkaJSNonRetriableError(`Event name should be one of ${EVENT_KEYS}`);
    if (typeof listener !== 'function') throw new KafkaJSNonRetriableError(`Invalid listener for ${eventName}: expected a function`);
    return this.instrumentation.addListener(eventName, (event) => {
      try {
        Promise.resolve((listener as (e: Event<unknown>) => unknown)(event)).catch((e: unknown) => {
          this.log.error(`Failed to execute listener: ${(e as Error)?.message}`, { eventName, stack: (e as Error)?.stack });
        });
      } catch (e) {
        this.log.error(`Failed to execute listener: ${(e as Error)?.message}`, { eventName, stack: (e as Error)?.stack });
      }
    });
  };

  logger(): Logger {
    return this.log;
  }
}
