import { errorFor, ErrorCode, readRecordBatches, ShareAcknowledge, ShareFetch, type BufferPool, type RecordBatch, type ShareFetchResponse } from '@kwire/protocol';
import type { MetadataCache } from '../cluster/metadata.js';
import type { BrokerPool, Connection } from '../connection/index.js';
import { decodeResponseBody } from '../connection/index.js';
import { BrokerResponseError, CorruptRecordError, KafkaError, isKafkaError } from '../errors.js';
import { SharedFrame } from '../connection/shared-frame.js';
import type { Logger } from '../logger.js';
import type { ShareCounters } from '../metrics/types.js';
import type { RecordContext } from '../records/index.js';
import type { ResolvedShareConfig } from './config.js';
import { ACK, Acquisition, PENDING, SENT, ShareBatch, ShareRecord } from './records.js';

/** An assigned partition, as the share fetcher names it. */
export interface SharePartitionRef {
  readonly key: string;
  readonly topic: string;
  readonly topicId: string;
  readonly partition: number;
}

/** What one acknowledgement request did for one partition. */
export interface ShareAcknowledgeResult {
  readonly topic: string;
  readonly partition: number;
  /** Records whose acknowledgement this request carried. */
  readonly records: number;
  /** Of those, records whose acquisition lock had expired before they were sent (not sent: the broker has given them back). */
  readonly lockExpired: number;
  /** null when the broker took them; otherwise why not (the records will be delivered again). */
  readonly error: KafkaError | null;
}

/** What a share fetcher needs from its share consumer. */
export interface ShareFetcherHost {
  readonly config: ResolvedShareConfig;
  readonly pool: BrokerPool;
  readonly bufferPool: BufferPool;
  readonly metadata: MetadataCache;
  readonly logger: Logger;
  readonly memberId: string;
  readonly counters: ShareCounters;
  /** True once close() began: nothing new is delivered, what arrives is released. */
  readonly closing: boolean;
  /**
   * The application wants more: nothing waits in the queue and it has not left its loop. Records
   * are acquired only then: what a member acquires is locked away from the others until it is
   * settled or the lock runs out, so a member that stopped reading must not keep taking more.
   */
  readonly wantsRecords: boolean;
  /** Assigned partitions whose leader is `nodeId`. */
  assignedAt(nodeId: number): Map<string, SharePartitionRef>;
  context(topic: string, partition: number): RecordContext;
  deliver(batches: ShareBatch[]): void;
  /** A problem the application should hear of at its next pull (corrupt data). */
  report(err: Error): void;
  /** A failure no retry mends (authorization, an unknown group type): the consumer stops. */
  fail(err: Error): void;
  acknowledged(results: ShareAcknowledgeResult[], via: 'fetch' | 'commit' | 'close'): void;
}

/** One AcknowledgementBatch of ShareFetch/ShareAcknowledge: one type for the range, or one per offset. */
export interface AckBatch {
  firstOffset: bigint;
  lastOffset: bigint;
  acknowledgeTypes: number[];
}

/**
 * Takes an acquisition's settled slots (marking them SENT) as acknowledgement batches: consecutive
 * offsets form one batch, with a single type when they share it and a type per offset when not.
 * Past the acquisition lock nothing is sent: the broker took the records back when the lock ran
 * out (and may have given them to another member), so acknowledging them now would only be
 * refused; they are counted as lockExpired instead (gaps are not counted: they were never records).
 */
export function takeSettled(d: Acquisition, now: number): { batches: AckBatch[]; records: number; lockExpired: number; byType: number[] } {
  const batches: AckBatch[] = [];
  const byType = [0, 0, 0, 0, 0];
  let records = 0;
  let lockExpired = 0;
  const expired = now > d.deadline;
  const types = d.types;
  let run: AckBatch | undefined;
  let runType = -1;
  let runEnd = -2;
  for (let i = 0; i < types.length; i++) {
    const t = types[i]!;
    if (t < 0) continue;
    types[i] = SENT;
    d.settled--;
    if (expired) {
      if (t !== ACK.gap) lockExpired++;
      continue;
    }
    records++;
    byType[t]!++;
    if (run && runEnd === i - 1) {
      run.lastOffset = d.first + BigInt(i);
      if (runType >= 0 && t !== runType) {
        // Mixed types: one type per offset from here on.
        run.acknowledgeTypes = new Array<number>(Number(run.lastOffset - run.firstOffset)).fill(runType);
        runType = -2;
      }
      if (runType === -2) run.acknowledgeTypes.push(t);
    } else {
      run = { firstOffset: d.first + BigInt(i), lastOffset: d.first + BigInt(i), acknowledgeTypes: [t] };
      runType = t;
      batches.push(run);
    }
    runEnd = i;
  }
  return { batches, records, lockExpired, byType };
}

interface PartitionAcks {
  ref: { topic: string; topicId: string; partition: number; key: string };
  batches: AckBatch[];
  records: number;
  lockExpired: number;
}

const MAX_EPOCH = 0x7fffffff;
/** The widest span of offsets one acquisition tracks (one byte each). */
const MAX_SPAN = 1 << 24;

/**
 * Fetches a share group's records from one broker (the leader of some assigned partitions) and
 * acknowledges them there: the ShareFetch loop, and ShareAcknowledge for commit, renew and close,
 * all in one share session (KIP-932) with that broker (Java's ShareConsumeRequestManager and
 * ShareSessionHandler, for one node). Like a fetch session, the share session is opened with epoch
 * 0 naming every partition, then each request adds new partitions, forgets old ones and bumps the
 * epoch; -1 closes it. Acknowledgements of records the application settled ride on the next
 * ShareFetch (as the Java client does) or, for commit and close, on a ShareAcknowledge. Requests
 * are strictly one after another (`chain`), so epochs follow each other on the wire.
 *
 * Flow control: a fetcher fetches again only once every record it acquired has been settled, so
 * what one member holds is bounded by one response (max.poll.records, fetch.max.bytes), and the
 * acknowledgements of a whole poll go back together.
 */
export class ShareFetcher {
  private epoch = 0;
  private readonly inSession = new Map<string, SharePartitionRef>();
  /** Acquisitions with slots pending or settled-but-unsent. */
  private readonly acquisitions = new Set<Acquisition>();
  private chain: Promise<unknown> = Promise.resolve();
  private waiter: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private lockTimeoutMs = 30_000;

  constructor(
    readonly nodeId: number,
    private readonly host: ShareFetcherHost,
  ) {}

  /** Records acquired through this fetcher not settled yet. */
  get outstanding(): number {
    let n = 0;
    for (const d of this.acquisitions) n += d.pending;
    return n;
  }

  start(): void {
    this.running ??= this.loop();
  }

  wake(): void {
    const w = this.waiter;
    this.waiter = undefined;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    w?.();
  }

  private sleep(ms?: number): Promise<void> {
    return new Promise((resolve) => {
      this.waiter = resolve;
      if (ms !== undefined) this.timer = setTimeout(() => this.wake(), ms);
    });
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.chain.then(fn, fn);
    this.chain = next.catch(() => {});
    return next;
  }

  private async loop(): Promise<void> {
    let backoff = this.host.config.retryBackoffMs;
    while (!this.stopped && !this.host.closing) {
      if (this.host.assignedAt(this.nodeId).size === 0 && this.inSession.size === 0) {
        await this.sleep();
        continue;
      }
      if (this.outstanding > 0 || !this.host.wantsRecords) {
        // The application holds records of the last response (their acknowledgements go on the
        // next fetch), or has enough: wait for it.
        await this.sleep();
        continue;
      }
      try {
        await this.serial(() => this.fetchOnce());
        backoff = this.host.config.retryBackoffMs;
      } catch (err) {
        if (this.stopped || this.host.closing) break;
        if (isKafkaError(err) && !err.retriable && !(err instanceof BrokerResponseError && err.invalidMetadata)) {
          this.host.fail(err);
          break;
        }
        this.host.logger.debug('ShareFetch failed; retrying', { nodeId: this.nodeId, error: (err as Error).message });
        this.host.metadata.requestUpdate(`ShareFetch to node ${this.nodeId} failed`);
        await this.sleep(backoff);
        backoff = Math.min(backoff * 2, 1_000);
      }
    }
  }

  private async connection(): Promise<Connection> {
    const broker = this.host.metadata.brokers.get(this.nodeId);
    if (!broker) throw new KafkaError('KWIRE_BROKER', `node ${this.nodeId} is not in the metadata`, { retriable: true });
    return this.host.pool.get({ nodeId: broker.nodeId, host: broker.host, port: broker.port }, 'data');
  }

  /** The acknowledgements settled so far, grouped by partition; locks that expired are counted, not sent. */
  private takeAcks(): Map<string, PartitionAcks> {
    const out = new Map<string, PartitionAcks>();
    const now = Date.now();
    for (const d of this.acquisitions) {
      if (d.settled === 0) continue;
      let acks = out.get(d.key);
      if (!acks) {
        acks = { ref: { topic: d.topic, topicId: d.topicId, partition: d.partition, key: d.key }, batches: [], records: 0, lockExpired: 0 };
        out.set(d.key, acks);
      }
      const taken = takeSettled(d, now);
      acks.batches.push(...taken.batches);
      acks.records += taken.records;
      acks.lockExpired += taken.lockExpired;
      const c = this.host.counters.acknowledged;
      c.accept += taken.byType[ACK.accept]!;
      c.release += taken.byType[ACK.release]!;
      c.reject += taken.byType[ACK.reject]!;
      c.gap += taken.byType[ACK.gap]!;
      if (d.done) this.acquisitions.delete(d);
    }
    for (const [k, a] of out) if (a.records === 0 && a.lockExpired === 0) out.delete(k);
    return out;
  }

  private static topics(acks: Iterable<PartitionAcks>, extra: Iterable<SharePartitionRef> = []) {
    const byTopic = new Map<string, { topicId: string; partitions: Map<number, { partitionIndex: number; acknowledgementBatches: AckBatch[] }> }>();
    const add = (topicId: string, partition: number, batches: AckBatch[]) => {
      let t = byTopic.get(topicId);
      if (!t) byTopic.set(topicId, (t = { topicId, partitions: new Map() }));
      const p = t.partitions.get(partition);
      if (p) p.acknowledgementBatches.push(...batches);
      else t.partitions.set(partition, { partitionIndex: partition, acknowledgementBatches: [...batches] });
    };
    for (const a of acks) if (a.batches.length) add(a.ref.topicId, a.ref.partition, a.batches);
    for (const r of extra) add(r.topicId, r.partition, []);
    return [...byTopic.values()].map((t) => ({ topicId: t.topicId, partitions: [...t.partitions.values()] }));
  }

  private results(acks: Map<string, PartitionAcks>, errorOf: (a: PartitionAcks) => KafkaError | null): ShareAcknowledgeResult[] {
    const out: ShareAcknowledgeResult[] = [];
    for (const a of acks.values()) {
      const error = a.records > 0 ? errorOf(a) : null;
      if (error) this.host.counters.acknowledgementErrors += a.records;
      this.host.counters.lockExpired += a.lockExpired;
      out.push({ topic: a.ref.topic, partition: a.ref.partition, records: a.records, lockExpired: a.lockExpired, error });
    }
    return out;
  }

  private nextEpoch(): void {
    this.epoch = this.epoch >= MAX_EPOCH ? 1 : this.epoch + 1;
  }

  /** Forget the session (the broker lost it, or the epoch went out of step): start again at 0. */
  private reset(why: string): void {
    this.host.counters.sessionResets++;
    this.host.logger.info('share session reset', { nodeId: this.nodeId, why });
    this.epoch = 0;
    this.inSession.clear();
    // What was acquired in the old session cannot be acknowledged in a new one: the broker
    // releases it when its lock expires, and delivers it again.
    for (const d of this.acquisitions) d.settleAll(SENT);
    this.acquisitions.clear();
  }

  private async fetchOnce(): Promise<void> {
    const host = this.host;
    const config = host.config;
    const assigned = host.assignedAt(this.nodeId);
    const acks = this.epoch === 0 ? new Map<string, PartitionAcks>() : this.takeAcks();
    const added = [...assigned.values()].filter((r) => this.epoch === 0 || !this.inSession.has(r.key));
    const forgotten = [...this.inSession.values()].filter((r) => !assigned.has(r.key) && !acks.has(r.key));
    if (added.length === 0 && forgotten.length === 0 && this.inSession.size === 0 && acks.size === 0) return;
    const conn = await this.connection();
    const version = conn.version(ShareFetch);
    const forgottenTopics = new Map<string, number[]>();
    for (const r of forgotten) forgottenTopics.set(r.topicId, [...(forgottenTopics.get(r.topicId) ?? []), r.partition]);
    const epoch = this.epoch;
    const body = {
      groupId: config.groupId,
      memberId: host.memberId,
      shareSessionEpoch: epoch,
      maxWaitMs: config.fetchMaxWaitMs,
      minBytes: config.fetchMinBytes,
      maxBytes: config.fetchMaxBytes,
      maxRecords: config.maxPollRecords,
      batchSize: config.maxPollRecords,
      ...(version >= 2 ? { shareAcquireMode: config.shareAcquireMode === 'record_limit' ? 1 : 0, isRenewAck: false } : {}),
      topics: ShareFetcher.topics(
        acks.values(),
        added.filter((r) => !acks.has(r.key)),
      ),
      forgottenTopicsData: [...forgottenTopics].map(([topicId, partitions]) => ({ topicId, partitions })),
    };
    host.counters.fetches++;
    let lease;
    try {
      lease = await conn.requestFrame(ShareFetch, body, { timeoutMs: config.fetchMaxWaitMs + config.requestTimeoutMs });
    } catch (err) {
      // Unknown whether the broker applied it: the session is out of step either way.
      host.acknowledged(
        this.results(acks, () => asKafkaError(err)),
        'fetch',
      );
      this.reset(`ShareFetch failed: ${(err as Error).message}`);
      throw err;
    }
    const frame = new SharedFrame(() => lease.release());
    try {
      let res: ShareFetchResponse;
      try {
        res = decodeResponseBody(ShareFetch, lease);
      } catch (err) {
        host.acknowledged(
          this.results(acks, () => asKafkaError(err)),
          'fetch',
        );
        this.reset('undecodable ShareFetch response');
        throw err;
      }
      if (res.errorCode !== 0) {
        const err = new BrokerResponseError(res.errorCode, `ShareFetch to node ${this.nodeId}`, res.errorMessage);
        host.acknowledged(
          this.results(acks, () => err),
          'fetch',
        );
        if (res.errorCode === ErrorCode.SHARE_SESSION_NOT_FOUND || res.errorCode === ErrorCode.INVALID_SHARE_SESSION_EPOCH) {
          this.reset(err.errorName);
          return;
        }
        throw err;
      }
      this.lockTimeoutMs = res.acquisitionLockTimeoutMs > 0 ? res.acquisitionLockTimeoutMs : this.lockTimeoutMs;
      for (const r of added) this.inSession.set(r.key, r);
      for (const r of forgotten) this.inSession.delete(r.key);
      this.nextEpoch();
      const deadline = Date.now() + this.lockTimeoutMs;
      const ackErrors = new Map<string, KafkaError>();
      const batches: ShareBatch[] = [];
      for (const t of res.responses) {
        const topic = host.metadata.topicNames.get(t.topicId);
        for (const p of t.partitions) {
          const key = `${topic ?? t.topicId}\0${p.partitionIndex}`;
          if (p.acknowledgeErrorCode !== 0) ackErrors.set(key, new BrokerResponseError(p.acknowledgeErrorCode, `acknowledging ${topic ?? t.topicId}-${p.partitionIndex}`, p.acknowledgeErrorMessage));
          if (p.errorCode !== 0) {
            const e = errorFor(p.errorCode);
            host.logger.debug('ShareFetch partition error', { topic, partition: p.partitionIndex, error: e.name });
            if (e.invalidMetadata || e.retriable) host.metadata.requestUpdate(`ShareFetch ${topic}-${p.partitionIndex}: ${e.name}`);
            else host.report(new BrokerResponseError(p.errorCode, `ShareFetch ${topic ?? t.topicId}-${p.partitionIndex}`, p.errorMessage));
          }
          if (p.acquiredRecords.length === 0) continue;
          if (topic === undefined) {
            // A topic id the metadata does not know yet: nothing to name the records by. Not
            // acknowledged, they come back after the lock; the metadata catches up meanwhile.
            host.metadata.requestUpdate(`ShareFetch: unknown topic id ${t.topicId}`);
            continue;
          }
          this.acquired({ key, topic, topicId: t.topicId, partition: p.partitionIndex }, p.acquiredRecords, p.records, deadline, frame, batches);
        }
      }
      host.acknowledged(
        this.results(acks, (a) => ackErrors.get(a.ref.key) ?? null),
        'fetch',
      );
      if (batches.length) host.deliver(batches);
    } finally {
      frame.release();
    }
  }

  /** Turns one partition's acquired records into an acquisition and batches for the application. */
  private acquired(
    ref: SharePartitionRef,
    ranges: readonly { firstOffset: bigint; lastOffset: bigint; deliveryCount: number }[],
    records: Buffer,
    deadline: number,
    frame: SharedFrame,
    out: ShareBatch[],
  ): void {
    const host = this.host;
    const sorted = [...ranges].sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : a.firstOffset > b.firstOffset ? 1 : 0));
    const first = sorted[0]!.firstOffset;
    const last = sorted.reduce((m, r) => (r.lastOffset > m ? r.lastOffset : m), sorted[0]!.lastOffset);
    if (last < first || last - first + 1n > BigInt(MAX_SPAN)) {
      host.report(
        new KafkaError('KWIRE_BROKER', `ShareFetch ${ref.topic}-${ref.partition}: acquired offsets ${first}..${last} span more than ${MAX_SPAN} offsets; not acknowledged, they return after the lock`),
      );
      return;
    }
    const span = Number(last - first + 1n);
    const acquisition = new Acquisition(ref.key, ref.topic, ref.topicId, ref.partition, first, span, deadline, (d) => {
      if (d.pending === 0) this.wake();
    });
    const counts = new Int16Array(span);
    for (const r of sorted) {
      const from = Number(r.firstOffset - first);
      const n = Number(r.lastOffset - r.firstOffset + 1n);
      for (let i = from; i < from + n; i++) {
        acquisition.acquireAt(i);
        counts[i] = r.deliveryCount;
      }
      host.counters.recordsAcquired += n;
      if (r.deliveryCount > 1) host.counters.redeliveries += n;
    }
    this.acquisitions.add(acquisition);
    if (host.closing) {
      acquisition.settleAll(ACK.release);
      return;
    }
    const context = host.context(ref.topic, ref.partition);
    const given = new Uint8Array(span);
    const wireBatches: RecordBatch[] = [];
    const recs: ShareRecord[] = [];
    try {
      const reader = readRecordBatches(records, { checkCrc: host.config.checkCrcs, pool: host.bufferPool });
      for (let b = reader.next(); b !== null; b = reader.next()) {
        if (b.nextOffset <= first || b.baseOffset > last) continue;
        // Offsets of this batch inside the span: a gap unless a data record below says otherwise.
        const lo = b.baseOffset > first ? Number(b.baseOffset - first) : 0;
        const hi = Math.min(span - 1, Number(b.lastOffset - first));
        for (let i = lo; i <= hi; i++) if (given[i] === 0) given[i] = 2;
        if (b.isControl) continue;
        wireBatches.push(b);
        const base = Number(b.baseOffset - first);
        for (const r of b.records()) {
          const i = base + r.offsetDelta;
          if (i < 0 || i >= span || acquisition.types[i] !== PENDING) continue;
          given[i] = 1;
          recs.push(new ShareRecord(r, context, counts[i]!, acquisition));
        }
      }
    } catch (err) {
      for (const b of wireBatches) b.release();
      // Not handed out: released, so the broker counts a delivery and (past the limit) archives it.
      acquisition.settleAll(ACK.release);
      host.report(new CorruptRecordError(ref.topic, ref.partition, first, err));
      return;
    }
    // Acquired offsets with no data record: transaction markers and compacted-away offsets are
    // gaps; offsets whose batch did not come at all are released, never claimed as gaps.
    for (let i = 0; i < span; i++) {
      if (acquisition.types[i] !== PENDING || given[i] === 1) continue;
      acquisition.settle(first + BigInt(i), given[i] === 2 ? ACK.gap : ACK.release);
    }
    if (recs.length === 0) {
      for (const b of wireBatches) b.release();
      return;
    }
    const max = host.config.maxPollRecords;
    let holds = Math.ceil(recs.length / max);
    const releaseOne = () => {
      if (--holds > 0) return;
      for (const b of wireBatches) b.release();
      frame.release();
    };
    frame.retain();
    for (let i = 0; i < recs.length; i += max) {
      const slice = recs.slice(i, i + max);
      out.push(new ShareBatch(ref.topic, ref.partition, slice, releaseOne));
    }
  }

  /** Sends what the application settled now (commit), on a ShareAcknowledge. */
  commit(timeoutMs: number): Promise<ShareAcknowledgeResult[]> {
    return this.serial(async () => {
      if (this.epoch === 0) return [];
      const acks = this.takeAcks();
      if (acks.size === 0) return [];
      return this.acknowledge(acks, this.epoch, timeoutMs, 'commit');
    });
  }

  /** Renews the locks of these records (KIP-1222), on a ShareAcknowledge of their own. */
  renew(records: readonly ShareRecord[], timeoutMs: number): Promise<ShareAcknowledgeResult[]> {
    return this.serial(async () => {
      if (this.epoch === 0) return [];
      const acks = new Map<string, PartitionAcks>();
      for (const r of records) {
        const d = r.acquisition;
        if (!d.isPending(r.offset)) continue;
        let a = acks.get(d.key);
        if (!a) acks.set(d.key, (a = { ref: { topic: d.topic, topicId: d.topicId, partition: d.partition, key: d.key }, batches: [], records: 0, lockExpired: 0 }));
        a.batches.push({ firstOffset: r.offset, lastOffset: r.offset, acknowledgeTypes: [ACK.renew] });
        a.records++;
      }
      if (acks.size === 0) return [];
      const results = await this.acknowledge(acks, this.epoch, timeoutMs, 'commit', true);
      const deadline = Date.now() + this.lockTimeoutMs;
      for (const r of records) if (!results.some((x) => x.error && x.topic === r.topic && x.partition === r.partition)) r.acquisition.deadline = Math.max(r.acquisition.deadline, deadline);
      this.host.counters.acknowledged.renew += records.length;
      return results;
    });
  }

  private async acknowledge(acks: Map<string, PartitionAcks>, epoch: number, timeoutMs: number, via: 'commit' | 'close', renew = false): Promise<ShareAcknowledgeResult[]> {
    let results: ShareAcknowledgeResult[];
    try {
      const conn = await this.connection();
      const version = conn.version(ShareAcknowledge);
      if (renew && version < 2) throw new KafkaError('KWIRE_BROKER', `renewing acquisition locks needs ShareAcknowledge v2; node ${this.nodeId} offers v${version}`);
      const res = await conn.request(
        ShareAcknowledge,
        { groupId: this.host.config.groupId, memberId: this.host.memberId, shareSessionEpoch: epoch, ...(version >= 2 ? { isRenewAck: renew } : {}), topics: ShareFetcher.topics(acks.values()) },
        { timeoutMs },
      );
      if (epoch !== -1) this.nextEpoch();
      const top = res.errorCode !== 0 ? new BrokerResponseError(res.errorCode, `ShareAcknowledge to node ${this.nodeId}`, res.errorMessage) : null;
      const errors = new Map<string, KafkaError>();
      for (const t of res.responses) {
        for (const p of t.partitions) {
          if (p.errorCode === 0) continue;
          const topic = this.host.metadata.topicNames.get(t.topicId) ?? t.topicId;
          errors.set(`${topic}\0${p.partitionIndex}`, new BrokerResponseError(p.errorCode, `acknowledging ${topic}-${p.partitionIndex}`, p.errorMessage));
        }
      }
      results = this.results(acks, (a) => top ?? errors.get(a.ref.key) ?? null);
      if (top && (res.errorCode === ErrorCode.SHARE_SESSION_NOT_FOUND || res.errorCode === ErrorCode.INVALID_SHARE_SESSION_EPOCH)) this.reset(top.errorName);
    } catch (err) {
      results = this.results(acks, () => asKafkaError(err));
      if (epoch !== -1) this.reset(`ShareAcknowledge failed: ${(err as Error).message}`);
    }
    this.host.acknowledged(results, via);
    return results;
  }

  /**
   * Stops fetching; once the fetch in flight is answered (its records released), sends what was
   * settled on a ShareAcknowledge with epoch -1, which closes the session on the broker.
   */
  async close(deadline: number): Promise<ShareAcknowledgeResult[]> {
    this.stopped = true;
    this.wake();
    return this.serial(async () => {
      if (this.epoch === 0) return [];
      const acks = this.takeAcks();
      const remaining = Math.max(1, deadline - Date.now());
      const results = await this.acknowledge(acks, -1, Math.min(remaining, this.host.config.requestTimeoutMs), 'close');
      this.epoch = 0;
      this.inSession.clear();
      return results;
    });
  }

  /** Releases every record not settled yet (close, or the partitions left this member). */
  releasePending(filter?: (d: Acquisition) => boolean): number {
    let n = 0;
    for (const d of this.acquisitions) if (!filter || filter(d)) n += d.settleAll(ACK.release);
    return n;
  }

  /** Every acquisition still pending (commit in implicit mode accepts them). */
  pendingAcquisitions(): Acquisition[] {
    return [...this.acquisitions].filter((d) => d.pending > 0);
  }

  /** Resolves when the fetch loop has ended (after close()). */
  async finished(): Promise<void> {
    await this.running;
  }
}

function asKafkaError(err: unknown): KafkaError {
  return isKafkaError(err) ? err : new KafkaError('KWIRE_BROKER', (err as Error)?.message ?? String(err), { cause: err, retriable: true });
}
