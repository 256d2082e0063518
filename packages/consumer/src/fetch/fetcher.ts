import {
  ErrorCode,
  errorFor,
  Fetch,
  scanRecordBatches,
  ZERO_UUID,
  type BufferPool,
  type FetchTopic,
  type FetchRequestForgottenTopic,
  type FetchRequest,
  type FetchResponse,
  type Input,
} from '@kwire/protocol';
import type { MetadataCache } from '../cluster/metadata.js';
import type { ResolvedConfig } from '../config.js';
import { decodeResponseBody, type BrokerPool, type Connection } from '../connection/index.js';
import { BrokerResponseError } from '../errors.js';
import type { Logger } from '../logger.js';
import { recordContext, type RecordContext } from '../records/index.js';
import { FetchSession, type SessionPartition, type SessionRequest } from './fetch-session.js';
import { SharedFrame } from '../connection/shared-frame.js';
import { FetchedPartition } from './fetched-partition.js';
import { BufferBudget } from './buffer-budget.js';
import { FetchSizes } from './fetch-sizes.js';
import { Positions, type PositionChange } from './positions.js';
import { LatencyWindow } from '../metrics/latency.js';
import { tpKey, type PartitionState } from '../state/partition-state.js';
import type { SubscriptionState } from '../state/subscription-state.js';
import type { ConsumerMeter } from '../metrics/meter.js';
import type { FetcherStats } from '../metrics/types.js';

/** Partition errors after which the metadata is stale and the partition waits for a new leader. */
const REFRESH_METADATA = new Set<number>([
  ErrorCode.NOT_LEADER_OR_FOLLOWER,
  ErrorCode.REPLICA_NOT_AVAILABLE,
  ErrorCode.KAFKA_STORAGE_ERROR,
  ErrorCode.FENCED_LEADER_EPOCH,
  ErrorCode.OFFSET_NOT_AVAILABLE,
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  ErrorCode.UNKNOWN_TOPIC_ID,
  ErrorCode.INCONSISTENT_TOPIC_ID,
  ErrorCode.LEADER_NOT_AVAILABLE,
]);

/** fetch.max.wait.ms is cut to this while other partitions of the broker are held back by their buffers. */
const HELD_BACK_MAX_WAIT_MS = 25;

/**
 * A broker's partitions are fetched in two lanes, each with its own Fetch in flight, fetch session
 * and connection: 'live' for partitions caught up with their log (at the high watermark of their
 * last answer), 'bulk' for the others. A broker answers one connection's requests in turn, and a
 * Fetch holding lagging partitions comes back with up to max.partition.fetch.bytes of each: a few
 * new records of a caught-up partition in the same Fetch waited for those megabytes to be read,
 * sent and received, then for the next such Fetch (the fairness probe, a 10k records/s partition
 * next to 12 partitions of backlog: 12 MiB answers every ~20 ms, the live records 19-26 ms old at
 * the median, 1 ms before the drain). With fetch.max.bytes lowered the broker rotates the
 * partitions of a session through the answers, and the caught-up one waited its turn instead.
 */
type Lane = 'live' | 'bulk';

function laneKey(node: number, lane: Lane): string {
  return `${node}/${lane}`;
}

/** The connection a lane's Fetches go on: the live lane's own, so that a bulk answer never queues ahead of it. */
function lanePurpose(lane: Lane): 'data' | 'live-fetch' {
  return lane === 'live' ? 'live-fetch' : 'data';
}

/** Answers of at least this many record bytes have the next Fetch sent before they are delivered. */
const EARLY_FETCH_BYTES = 32 * 1024;

/** run()'s empty lane map, for a pass that sends nothing. */
const NO_LANES: ReadonlyMap<string, { node: number; lane: Lane; parts: PartitionState[] }> = new Map();

const SESSION_ERRORS = new Set<number>([ErrorCode.FETCH_SESSION_ID_NOT_FOUND, ErrorCode.INVALID_FETCH_SESSION_EPOCH, ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR]);

/** How long a preferred read replica (KIP-392) is used before asking the leader again: metadata.max.age.ms, as Java. */

export type { PositionChange } from './positions.js';

/** Where fetched data goes: the stream its partition feeds (the consumer's stream router). */
export interface FetchedDataSink {
  /** `caughtUp`: the data ends at the partition's high watermark. */
  push(data: FetchedPartition, caughtUp: boolean): void;
}

export interface FetcherOptions {
  config: ResolvedConfig;
  sink: FetchedDataSink;
  metadata: MetadataCache;
  pool: BrokerPool;
  /** Decompression output's pool; null with recordBuffers 'owned'. */
  bufferPool: BufferPool | null;
  logger: Logger;
  /** A position moved without the application asking (a truncation, an out-of-range reset). */
  onPositionChange?: (change: PositionChange) => void;
  subscriptions: SubscriptionState;
  /** Record bytes fetched go to its rate. */
  meter?: ConsumerMeter;
}

/**
 * The fetcher: one Fetch in flight per broker, for the partitions it leads (or a preferred read
 * replica serves) that are fetchable now: position known, not paused, not over their buffer limit,
 * not backing off. It wakes up when something changes (an answer, a drained buffer, a new
 * assignment, metadata, a backoff ending) rather than polling; an empty answer comes back only
 * after the broker's long poll (fetch.max.wait.ms), so an idle topic costs nothing.
 *
 * Answers are handed to each partition's stream undecoded (FetchedPartition decodes as the
 * application pulls); only the batch headers are walked on arrival, to move the fetch position.
 */
export class Fetcher {
  /** The partitions to fetch, owned by the subscription state; the fetcher reads them. */
  private readonly partitions: SubscriptionState;
  readonly stats: FetcherStats = { fetches: 0, fetchesByNode: {}, fetchErrors: 0, emptyFetches: 0, bytesFetched: 0, resets: 0, truncations: 0 };
  /** Send to answer of every Fetch that was answered (fetch-latency-avg/max, percentiles). */
  readonly latency = new LatencyWindow();
  /** By laneKey(node, lane); each knows its broker and lane, for closing it. */
  private readonly sessions = new Map<string, { node: number; lane: Lane; session: FetchSession }>();
  /** By laneKey(node, lane): one Fetch in flight per broker and lane. */
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly nodeBackoff = new Map<number, number>();
  /** Resets and KIP-320 validation: where partitions start, and whether their positions hold. */
  private readonly positions: Positions;
  private readonly contexts = new Map<string, RecordContext>();
  /** Fetched bytes not yet let go by the application, in all and per partition. */
  private readonly budget = new BufferBudget(() => this.schedule());
  /** Each partition's partitionMaxBytes: adapted to its backlog unless max.partition.fetch.bytes is set. */
  private readonly fetchSizes: FetchSizes;
  private scheduled = false;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly options: FetcherOptions) {
    this.partitions = options.subscriptions;
    this.fetchSizes = new FetchSizes(options.config, (key) => {
      const p = this.partitions.get(key);
      return p !== undefined && p.state === 'fetching' && !p.paused;
    });
    const { config, metadata, logger, subscriptions, onPositionChange } = options;
    this.positions = new Positions(
      { config, metadata, logger, subscriptions, stats: this.stats, onPositionChange },
      { connect: (node) => this.connect(node), failNode: (node, what, err) => this.failNode(node, what, err), schedule: () => this.schedule() },
    );
  }

  get buffered(): number {
    return this.budget.total;
  }

  /** Runs the fetch loop soon (coalesced: many wake-ups in one tick cost one pass). */
  schedule(): void {
    if (this.scheduled || this.closed) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      this.run();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await Promise.allSettled([...this.inFlight.values()]);
    await this.closeSessions();
  }

  private run(): void {
    if (this.closed) return;
    const now = Date.now();
    const { config, metadata } = this.options;
    // Made only when a partition needs them: most passes (a partition's answer released while the
    // next Fetch is in flight) send nothing, and allocate nothing for it.
    let resets: PartitionState[] | undefined;
    let validations: PartitionState[] | undefined;
    let byLane: Map<string, { node: number; lane: Lane; parts: PartitionState[] }> | undefined;
    /** Lanes (laneKey) with partitions held back by their buffers. */
    let heldBack: Set<string> | undefined;
    let wakeAt = Infinity;
    const subscriptions = this.partitions;
    for (const p of subscriptions.values()) {
      if (p.state === 'failed') continue;
      if (p.backoffUntil > now) {
        wakeAt = Math.min(wakeAt, p.backoffUntil);
        continue;
      }
      if (p.state === 'awaiting-reset') {
        if (p.resetTarget !== null && !this.positions.isResetting(p.key)) (resets ??= []).push(p);
        continue;
      }
      if (p.inFlight) continue;
      // A new leader (a higher epoch in metadata) may have a shorter log: check the position first.
      const leaderEpoch = metadata.topics.get(p.topic)?.partitions[p.partition]?.leaderEpoch ?? -1;
      if (leaderEpoch > p.leaderEpochSeen) subscriptions.leaderEpochChanged(p, leaderEpoch);
      if (p.state === 'awaiting-validation') {
        (validations ??= []).push(p);
        continue;
      }
      if (p.state !== 'fetching' || p.paused) continue;
      if (this.budget.of(p.key).bytes >= config.maxBufferedBytesPerPartition || this.budget.total >= config.maxBufferedBytes) {
        // Held back until the application drains it (onBytes schedules a pass then).
        const leader = this.nodeFor(p, now);
        if (leader !== undefined) (heldBack ??= new Set()).add(laneKey(leader, atEnd(p) ? 'live' : 'bulk'));
        continue;
      }
      const node = this.nodeFor(p, now);
      if (node === undefined) {
        metadata.requestUpdate(`no leader known for ${p.topic}-${p.partition}`);
        continue;
      }
      const backoff = this.nodeBackoff.get(node) ?? 0;
      if (backoff > now) {
        wakeAt = Math.min(wakeAt, backoff);
        continue;
      }
      const lane: Lane = atEnd(p) ? 'live' : 'bulk';
      const key = laneKey(node, lane);
      if (this.inFlight.has(key)) continue;
      byLane ??= new Map();
      let entry = byLane.get(key);
      if (!entry) byLane.set(key, (entry = { node, lane, parts: [] }));
      entry.parts.push(p);
    }
    if (resets) void this.positions.resetOffsets(resets);
    if (validations) void this.positions.validatePositions(validations);
    for (const [key, { node, lane, parts }] of byLane ?? NO_LANES) {
      // Only partitions already at their end can go, while others of this broker wait for their
      // buffers to drain: a Fetch waiting the full fetch.max.wait.ms for new data would keep those
      // out for as long (one Fetch in flight per broker), however soon they drain. A short wait
      // instead; the pass after it takes them in. (Seen with a per-partition buffer of one
      // max.partition.fetch.bytes: 14 waits of 500 ms in 8 s, 18k records/s of 10 KB.)
      const maxWaitMs = heldBack?.has(key) && parts.every(atEnd) ? Math.min(config.fetchMaxWaitMs, HELD_BACK_MAX_WAIT_MS) : config.fetchMaxWaitMs;
      const run: Promise<void> = this.fetchFrom(node, lane, parts, maxWaitMs)
        .catch((err: unknown) => this.options.logger.error('fetch failed unexpectedly', { node, error: (err as Error).message }))
        .finally(() => {
          // A successful fetch has already handed the node over (fetchFrom's early re-run).
          if (this.inFlight.get(key) !== run) return;
          this.inFlight.delete(key);
          this.schedule();
        });
      this.inFlight.set(key, run);
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (wakeAt !== Infinity) {
      this.timer = setTimeout(() => this.schedule(), Math.max(1, wakeAt - now));
      this.timer.unref();
    }
  }

  /** The node to fetch a partition from: a preferred read replica, a leader hint, or the leader. */
  private nodeFor(p: PartitionState, now: number): number | undefined {
    if (p.preferredReadReplica >= 0) {
      if (now < p.preferredUntil && this.options.metadata.brokers.has(p.preferredReadReplica)) return p.preferredReadReplica;
      this.partitions.preferReplica(p, -1);
    }
    const leader = this.options.metadata.leaderOf(p.topic, p.partition);
    if (p.leaderHint && (!leader || p.leaderHint.leaderEpoch > leader.leaderEpoch)) return p.leaderHint.leaderId;
    if (p.leaderHint) this.partitions.hintLeader(p, undefined);
    return leader?.leaderId;
  }

  private session(node: number, lane: Lane): FetchSession {
    const key = laneKey(node, lane);
    let s = this.sessions.get(key);
    if (!s) this.sessions.set(key, (s = { node, lane, session: new FetchSession() }));
    return s.session;
  }

  private context(topic: string): RecordContext {
    let c = this.contexts.get(topic);
    if (!c) {
      const { keyDeserializer, valueDeserializer } = this.options.config;
      c = recordContext(topic, -1, keyDeserializer, valueDeserializer, true);
      this.contexts.set(topic, c);
    }
    return c;
  }

  private partitionContext(p: PartitionState): RecordContext {
    const base = this.context(p.topic);
    return { ...base, partition: p.partition };
  }

  private async connect(node: number, purpose: 'data' | 'live-fetch' = 'data'): Promise<Connection | undefined> {
    const broker = this.options.metadata.brokers.get(node);
    if (!broker) {
      this.options.metadata.requestUpdate(`broker ${node} unknown`);
      return undefined;
    }
    try {
      return await this.options.pool.get({ host: broker.host, port: broker.port, nodeId: node }, purpose);
    } catch (err) {
      // close() closed the pool under a connection being opened: nothing failed.
      if (this.closed) return undefined;
      this.failNode(node, `cannot connect to broker ${node}`, err);
      return undefined;
    }
  }

  /** A broker is unreachable or its answer unusable: back off from it and refresh metadata. */
  private failNode(node: number, what: string, err: unknown): void {
    this.stats.fetchErrors++;
    this.sessions.get(laneKey(node, 'live'))?.session.reset();
    this.sessions.get(laneKey(node, 'bulk'))?.session.reset();
    this.nodeBackoff.set(node, Date.now() + Math.max(this.options.config.retryBackoffMs, this.options.config.reconnectBackoffMs));
    this.options.logger.warn(what, { node, error: (err as Error)?.message ?? String(err) });
    this.options.metadata.requestUpdate(what);
  }

  private async fetchFrom(node: number, lane: Lane, chosen: PartitionState[], maxWaitMs: number): Promise<void> {
    const { config, metadata, logger } = this.options;
    const purpose = lanePurpose(lane);
    // Each chosen partition's generation now, by index (no map per Fetch).
    const chosenGenerations = chosen.map((p) => p.generation);
    // Synchronous when the connection is open, so that an early re-run (below) really sends now.
    const broker = metadata.brokers.get(node);
    const conn = (broker && this.options.pool.ready({ host: broker.host, port: broker.port, nodeId: node }, purpose)) || (await this.connect(node, purpose));
    if (!conn || this.closed) return;
    // While a connection was being opened, a partition may have been sought, given back (and put
    // to back off by run()'s retry), paused or been taken by the other lane: it waits for the next
    // pass. (Found with the live lane's first connection: a record given back at offset 2 came
    // again 7-15 ms later, inside its 300 ms retry backoff.)
    const now = Date.now();
    const parts = chosen.filter((p, i) => chosenGenerations[i] === p.generation && !p.inFlight && !p.paused && p.backoffUntil <= now && p.state === 'fetching');
    if (parts.length === 0) return;
    let version = conn.version(Fetch);
    const wanted: SessionPartition[] = [];
    const generations = new Map<string, number>();
    for (const p of parts) {
      const topic = metadata.topics.get(p.topic);
      const topicId = topic?.topicId ?? ZERO_UUID;
      // v13+ name topics by id; Java falls back to v12 (names) while an id is unknown.
      if (topicId === ZERO_UUID) version = Math.min(version, 12);
      wanted.push({
        key: p.key,
        topic: p.topic,
        topicId,
        partition: p.partition,
        fetchOffset: p.fetchPosition!,
        currentLeaderEpoch: topic?.partitions[p.partition]?.leaderEpoch ?? -1,
        lastFetchedEpoch: p.lastFetchedEpoch,
        partitionMaxBytes: this.fetchSizes.sizeFor(p.key),
      });
      generations.set(p.key, p.generation);
      this.partitions.fetchSent(p);
    }
    const session = this.session(node, lane);
    const request = session.build(wanted);
    const body = fetchBody(config, request, maxWaitMs);
    this.stats.fetches++;
    this.stats.fetchesByNode[node] = (this.stats.fetchesByNode[node] ?? 0) + 1;
    let lease;
    const sentAt = performance.now();
    try {
      lease = await conn.requestFrame<FetchRequest>(Fetch, body, { version, timeoutMs: config.fetchMaxWaitMs + config.requestTimeoutMs });
      this.latency.record(performance.now() - sentAt);
    } catch (err) {
      for (const p of parts) this.partitions.fetchAnswered(p);
      // close() cuts the fetch connections: their long polls end with ClosedError, nothing to say.
      if (!this.closed) this.failNode(node, `fetch from broker ${node} failed`, err);
      return;
    }
    for (const p of parts) this.partitions.fetchAnswered(p);
    const frame = new SharedFrame(() => lease.release());
    try {
      let res: FetchResponse;
      try {
        res = decodeResponseBody(Fetch, lease);
      } catch (err) {
        this.failNode(node, `undecodable Fetch response from broker ${node}`, err);
        return;
      }
      if (res.errorCode !== 0) {
        if (SESSION_ERRORS.has(res.errorCode)) {
          logger.debug('fetch session reset', { node, error: errorFor(res.errorCode).name });
          session.reset();
        } else {
          this.failNode(node, `Fetch answered ${errorFor(res.errorCode).name}`, new BrokerResponseError(res.errorCode, 'Fetch'));
        }
        return;
      }
      session.accepted(request, res.sessionId);
      this.nodeBackoff.delete(node);
      for (const ep of res.nodeEndpoints) {
        if (!metadata.brokers.has(ep.nodeId)) metadata.brokers.set(ep.nodeId, { nodeId: ep.nodeId, host: ep.host, port: ep.port, rack: ep.rack });
      }
      let anyData = false;
      let answerBytes = 0;
      let fetchAsked = 0;
      for (const a of request.covered.values()) fetchAsked += a.partitionMaxBytes;
      for (const t of res.responses) {
        const name = version >= 13 ? metadata.topicNames.get(t.topicId) : t.topic;
        if (name === undefined) continue;
        for (const pd of t.partitions) {
          const key = tpKey(name, pd.partitionIndex);
          const state = this.partitions.get(key);
          const asked = request.covered.get(key);
          // Not ours any more, sought since, or an answer for an offset we no longer want.
          if (!state || !asked || (generations.get(key) !== undefined && generations.get(key) !== state.generation) || state.fetchPosition !== asked.fetchOffset) continue;
          // Its position is being checked against the leader's log (KIP-320): data fetched before
          // the check began would move the position under it. Fetched again once it is done (as
          // Java's fetcher drops what it fetched for a partition awaiting validation).
          if (state.state !== 'fetching') continue;
          // (An error answer carries -1 for these: what the last good answer said is kept.)
          this.partitions.fetchAnswered(state, pd.highWatermark, pd.lastStableOffset, pd.logStartOffset);
          if (pd.errorCode !== 0) {
            this.partitionError(state, pd.errorCode, pd.currentLeader, asked.fetchOffset, node);
            continue;
          }
          // KIP-320: the leader's log diverges from what we fetched (v12+): the answer carries no
          // records, only the end of the last epoch both logs share.
          if (pd.divergingEpoch.epoch >= 0 || pd.divergingEpoch.endOffset >= 0n) {
            this.positions.completeValidation(state, pd.divergingEpoch.endOffset, pd.divergingEpoch.epoch, 'a Fetch answer with a diverging epoch');
            continue;
          }
          if (pd.preferredReadReplica >= 0 && pd.preferredReadReplica !== node) {
            this.partitions.preferReplica(state, pd.preferredReadReplica, Date.now() + config.metadataMaxAgeMs);
          }
          const records = pd.records;
          const scan = records === null || records.length === 0 ? undefined : scanRecordBatches(records);
          // Full (all bytes asked for, a cut last batch included) and still short of the high
          // watermark: behind, and its next Fetch may ask for more.
          const end = scan !== undefined && scan.batches > 0 ? scan.nextOffset : asked.fetchOffset;
          this.fetchSizes.answered(key, asked.partitionMaxBytes, records?.length ?? 0, end < pd.highWatermark, fetchAsked);
          if (records === null || scan === undefined || scan.batches === 0) continue;
          anyData = true;
          answerBytes += scan.wholeBytes;
          this.stats.bytesFetched += scan.wholeBytes;
          this.options.meter?.bytesRate.add(scan.wholeBytes);
          const data = new FetchedPartition(state, state.generation, frame, records, pd.highWatermark, pd.lastStableOffset, pd.abortedTransactions, {
            readCommitted: config.isolationLevel === 'read_committed',
            checkCrcs: config.checkCrcs,
            pool: this.options.bufferPool,
            maxDecompressedBytes: config.maxDecompressedBytes,
            context: this.partitionContext(state),
            account: this.budget.of(state.key),
          });
          this.partitions.fetched(state, scan.nextOffset, scan.lastLeaderEpoch);
          this.options.sink.push(data, state.fetchPosition! >= pd.highWatermark);
        }
      }
      if (!anyData) this.stats.emptyFetches++;
      // A large answer: send the next Fetch now, before the application sees this one's data. The
      // streams' readers resume in microtasks queued by the pushes above, ahead of this promise's
      // own handlers: left to those, the next request would wait until the application had decoded
      // (CRC included) and processed a whole answer, and fetching and decoding would take turns
      // instead of overlapping (on 1 MiB answers of 10 KB records that wait was a third of the time
      // per Fetch). A small answer goes to the application first: sending a request (encoding, the
      // socket write) took 70 us at the median and 340 us at p99 here, more than decoding a few
      // KiB, and it would sit between the records and the application (end-to-end latency).
      if (answerBytes >= EARLY_FETCH_BYTES) {
        this.inFlight.delete(laneKey(node, lane));
        this.run();
      }
    } finally {
      frame.release();
    }
  }

  /** What Java's fetcher does for each partition error. */
  private partitionError(state: PartitionState, code: number, currentLeader: { leaderId: number; leaderEpoch: number }, fetchOffset: bigint, node: number): void {
    const { config, metadata, logger } = this.options;
    const _now = Date.now();
    const name = errorFor(code).name;
    if (code === ErrorCode.OFFSET_OUT_OF_RANGE) {
      if (state.preferredReadReplica >= 0) {
        // The replica may lag the leader: ask the leader before resetting.
        this.partitions.preferReplica(state, -1);
        return;
      }
      if (state.lastFetchedEpoch >= 0 && state.state === 'fetching' && fetchOffset > state.logStartOffset) {
        // Past the end after a leader change: the log may have been truncated (an unclean
        // election). Find out where it diverges before any reset jumps to latest (KIP-320).
        this.partitions.requestValidation(state, true);
        return;
      }
      this.positions.outOfRange(state, fetchOffset);
      return;
    }
    if (REFRESH_METADATA.has(code)) {
      this.partitions.preferReplica(state, -1);
      // KIP-951: the broker names the new leader; use it until metadata agrees.
      if (currentLeader.leaderId >= 0 && currentLeader.leaderId !== node && metadata.brokers.has(currentLeader.leaderId)) {
        this.partitions.hintLeader(state, { leaderId: currentLeader.leaderId, leaderEpoch: currentLeader.leaderEpoch });
      }
      this.partitions.backOffState(state, config.retryBackoffMs);
      metadata.requestUpdate(`${name} for ${state.topic}-${state.partition}`);
      return;
    }
    if (code === ErrorCode.UNKNOWN_LEADER_EPOCH) {
      this.partitions.backOffState(state, config.retryBackoffMs);
      return;
    }
    const err = new BrokerResponseError(code, `Fetch ${state.topic}-${state.partition}`);
    if (err.retriable) {
      logger.warn('retriable fetch error', { topic: state.topic, partition: state.partition, error: name });
      this.partitions.backOffState(state, config.retryBackoffMs);
      return;
    }
    this.partitions.fail(state, err);
  }

  /** Ends the brokers' fetch sessions (best effort, bounded): they would linger until they expire. */
  private async closeSessions(): Promise<void> {
    const closing: Promise<unknown>[] = [];
    for (const { node, lane, session } of this.sessions.values()) {
      const close = session.closeRequest();
      const broker = this.options.metadata.brokers.get(node);
      if (!close || !broker) continue;
      closing.push(
        this.options.pool
          .get({ host: broker.host, port: broker.port, nodeId: node }, lanePurpose(lane))
          .then((conn) =>
            conn.request<FetchRequest, FetchResponse>(
              Fetch,
              { maxWaitMs: 0, minBytes: 0, maxBytes: 1, isolationLevel: 0, sessionId: close.sessionId, sessionEpoch: close.sessionEpoch, topics: [], forgottenTopicsData: [] },
              { timeoutMs: 1_000 },
            ),
          )
          .catch(() => {}),
      );
    }
    await Promise.allSettled(closing);
  }
}

/** The partition has fetched everything its leader had at the last answer. */
function atEnd(p: PartitionState): boolean {
  return p.highWatermark >= 0n && p.fetchPosition !== null && p.fetchPosition >= p.highWatermark;
}

function fetchBody(config: ResolvedConfig, request: SessionRequest, maxWaitMs: number): Input<FetchRequest> {
  const topics = new Map<string, Input<FetchTopic> & { partitions: unknown[] }>();
  for (const p of request.partitions) {
    let t = topics.get(p.topic);
    if (!t) topics.set(p.topic, (t = { topic: p.topic, topicId: p.topicId, partitions: [] }));
    t.partitions.push({
      partition: p.partition,
      currentLeaderEpoch: p.currentLeaderEpoch,
      fetchOffset: p.fetchOffset,
      lastFetchedEpoch: p.lastFetchedEpoch,
      logStartOffset: -1n,
      partitionMaxBytes: p.partitionMaxBytes,
    });
  }
  const forgotten = new Map<string, Input<FetchRequestForgottenTopic> & { partitions: number[] }>();
  for (const p of request.forgotten) {
    let t = forgotten.get(p.topic);
    if (!t) forgotten.set(p.topic, (t = { topic: p.topic, topicId: p.topicId, partitions: [] }));
    t.partitions.push(p.partition);
  }
  return {
    replicaId: -1,
    maxWaitMs,
    minBytes: config.fetchMinBytes,
    maxBytes: config.fetchMaxBytes,
    isolationLevel: config.isolationLevel === 'read_committed' ? 1 : 0,
    sessionId: request.sessionId,
    sessionEpoch: request.sessionEpoch,
    topics: [...topics.values()] as Input<FetchTopic>[],
    forgottenTopicsData: [...forgotten.values()],
    rackId: config.clientRack,
  };
}
