import { errorFor, OffsetForLeaderEpoch } from '@kwire/protocol';
import { byLeader, listOffsets } from '../cluster/list-offsets.js';
import type { MetadataCache } from '../cluster/metadata.js';
import type { ResolvedConfig } from '../config.js';
import type { Connection } from '../connection/index.js';
import { LogTruncationError, OffsetOutOfRangeError } from '../errors.js';
import { groupBy } from '../group-by.js';
import type { Logger } from '../logger.js';
import { tpKey, type PartitionState, type ResetTarget } from '../state/partition-state.js';
import type { SubscriptionState } from '../state/subscription-state.js';
import type { FetcherStats } from '../metrics/types.js';

/** A position the leader's log no longer holds (KIP-320), or a reset the application should hear of. */
export interface PositionChange {
  topic: string;
  partition: number;
  /** Where the consumer was. */
  from: bigint;
  /** Where it goes on from (the divergence point, or the reset's target once known: -1n until then). */
  to: bigint;
  why: 'log-truncation' | 'offset-out-of-range';
}

/** What positions need of the fetcher: its connections to brokers, its backoff, its wake-up. */
export interface BrokerAccess {
  connect(node: number): Promise<Connection | undefined>;
  /** A broker's answer failed: back off from it and refresh metadata. */
  failNode(node: number, what: string, err: unknown): void;
  /** Run the fetcher's pass soon. */
  schedule(): void;
}

export interface PositionsOptions {
  config: ResolvedConfig;
  metadata: MetadataCache;
  logger: Logger;
  subscriptions: SubscriptionState;
  stats: FetcherStats;
  /** A position moved without the application asking (a truncation, an out-of-range reset). */
  onPositionChange?: (change: PositionChange) => void;
}

/**
 * Where partitions start and whether their positions still hold: resets through ListOffsets
 * (auto.offset.reset, a seek to the start, end or a time) and KIP-320 validation through
 * OffsetForLeaderEpoch (a new leader, an out-of-range answer, a diverging epoch), with what each
 * answer means for the partition: fetching on, a reset, a truncation said out loud, or an error
 * the application must see. The fetcher decides when; this says what follows.
 */
export class Positions {
  /** Partitions whose ListOffsets is on the wire. */
  private readonly resetting = new Set<string>();
  /** Partitions reset because their offset was out of range, and that offset: said when the reset lands. */
  private readonly outOfRangeFrom = new Map<string, bigint>();
  private readonly subscriptions: SubscriptionState;
  private readonly stats: FetcherStats;

  constructor(
    private readonly options: PositionsOptions,
    private readonly brokers: BrokerAccess,
  ) {
    this.subscriptions = options.subscriptions;
    this.stats = options.stats;
  }

  /** A reset of this partition is on the wire. */
  isResetting(key: string): boolean {
    return this.resetting.has(key);
  }

  /** OFFSET_OUT_OF_RANGE with no truncation to explain it: auto.offset.reset, said out loud. */
  outOfRange(state: PartitionState, fetchOffset: bigint): void {
    const { config, logger } = this.options;
    if (config.autoOffsetReset === 'none') {
      this.subscriptions.fail(state, new OffsetOutOfRangeError(state.topic, state.partition, fetchOffset));
      return;
    }
    // Said once the reset has found where it lands (resetDone), with the log's range then known.
    this.outOfRangeFrom.set(state.key, fetchOffset);
    this.options.onPositionChange?.({ topic: state.topic, partition: state.partition, from: fetchOffset, to: -1n, why: 'offset-out-of-range' });
    this.subscriptions.requestReset(state, config.autoOffsetReset);
  }

  /**
   * KIP-320: the end of epoch `epoch` in the leader's log is `endOffset`. Below the position means
   * the log was truncated under us: the position moves to the divergence point and says so (or,
   * with auto.offset.reset none, the application gets a LogTruncationError). As Java's
   * SubscriptionState.maybeCompleteValidation.
   */
  completeValidation(state: PartitionState, endOffset: bigint, epoch: number, source: string): void {
    const { config, logger } = this.options;
    const position = state.fetchPosition!;
    const outOfRange = state.validatingOutOfRange;
    if (endOffset < 0n || epoch < 0) {
      // The leader knows no such epoch (its log starts later): nothing to diverge from but the reset.
      this.subscriptions.completeValidation(state);
      this.outOfRange(state, position);
      return;
    }
    if (endOffset >= position) {
      this.subscriptions.completeValidation(state);
      // The log holds the position's epoch up to it, yet the fetch was out of range: a plain reset.
      if (outOfRange) this.outOfRange(state, position);
      return;
    }
    this.stats.truncations++;
    if (config.autoOffsetReset === 'none') {
      this.subscriptions.fail(state, new LogTruncationError(state.topic, state.partition, position, endOffset));
      return;
    }
    logger.warn('log truncation detected: going on from the first offset known to diverge', {
      topic: state.topic,
      partition: state.partition,
      position: position.toString(),
      divergentOffset: endOffset.toString(),
      epoch,
      source,
    });
    this.subscriptions.truncatedTo(state, endOffset, epoch);
    this.options.onPositionChange?.({ topic: state.topic, partition: state.partition, from: position, to: endOffset, why: 'log-truncation' });
  }

  /** OffsetForLeaderEpoch for positions to check, grouped by leader. */
  async validatePositions(parts: PartitionState[]): Promise<void> {
    const { metadata } = this.options;
    const { byNode, noLeader } = byLeader(parts, metadata);
    for (const p of noLeader) metadata.requestUpdate(`no leader for ${p.topic}-${p.partition} to validate its position`);
    for (const list of byNode.values()) for (const p of list) this.subscriptions.validationSent(p);
    await Promise.all([...byNode].map(([node, list]) => this.offsetForLeaderEpoch(node, list)));
  }

  private async offsetForLeaderEpoch(node: number, parts: PartitionState[]): Promise<void> {
    const { config, metadata } = this.options;
    const generations = new Map(parts.map((p) => [p.key, p.generation]));
    // What is checked: this position, fetched up to in this epoch. An answer about another one is
    // not an answer about the position now (Java's maybeCompleteValidation skips it too).
    const checked = new Map(parts.map((p) => [p.key, { position: p.fetchPosition, epoch: p.lastFetchedEpoch }]));
    const retryLater = (p: PartitionState) => this.subscriptions.retryValidation(p, config.retryBackoffMs);
    try {
      const conn = await this.brokers.connect(node);
      if (!conn) {
        parts.forEach(retryLater);
        return;
      }
      const topics = groupBy(parts, (p) => p.topic);
      const res = await conn.request(OffsetForLeaderEpoch, {
        replicaId: -1,
        topics: [...topics].map(([topic, list]) => ({
          topic,
          partitions: list.map((p) => ({
            partition: p.partition,
            currentLeaderEpoch: metadata.topics.get(p.topic)?.partitions[p.partition]?.leaderEpoch ?? -1,
            leaderEpoch: checked.get(p.key)!.epoch,
          })),
        })),
      });
      for (const t of res.topics) {
        for (const r of t.partitions) {
          const state = this.subscriptions.get(tpKey(t.topic, r.partition));
          // Sought or reset meanwhile: that position needs no check (or gets its own).
          if (!state || generations.get(state.key) !== state.generation || state.state !== 'validating') continue;
          const asked = checked.get(state.key)!;
          if (state.fetchPosition !== asked.position || state.lastFetchedEpoch !== asked.epoch) {
            this.options.logger.debug('position validation asked again: the position moved while it was checked', { topic: t.topic, partition: r.partition });
            this.subscriptions.requestValidation(state);
            continue;
          }
          if (r.errorCode !== 0) {
            const e = errorFor(r.errorCode);
            if (e.invalidMetadata) metadata.requestUpdate(`OffsetForLeaderEpoch ${e.name}`);
            this.options.logger.debug('position validation retried', { topic: t.topic, partition: r.partition, error: e.name });
            retryLater(state);
            continue;
          }
          this.completeValidation(state, r.endOffset, r.leaderEpoch, 'OffsetForLeaderEpoch');
        }
      }
    } catch (err) {
      parts.forEach(retryLater);
      this.brokers.failNode(node, `OffsetForLeaderEpoch on broker ${node} failed`, err);
    } finally {
      for (const p of parts) if (p.state === 'validating') retryLater(p);
      this.brokers.schedule();
    }
  }

  /** Starting positions through ListOffsets (earliest -2, latest -1), grouped by leader. */
  async resetOffsets(parts: PartitionState[]): Promise<void> {
    const { metadata } = this.options;
    const { byNode, noLeader } = byLeader(parts, metadata);
    for (const p of noLeader) metadata.requestUpdate(`no leader for ${p.topic}-${p.partition} to reset its offset`);
    await Promise.all([...byNode].map(([node, list]) => this.listOffsets(node, list)));
  }

  private async listOffsets(node: number, parts: PartitionState[]): Promise<void> {
    const { config, metadata, logger } = this.options;
    for (const p of parts) this.resetting.add(p.key);
    const generations = new Map(parts.map((p) => [p.key, p.generation]));
    try {
      const conn = await this.brokers.connect(node);
      if (!conn) {
        for (const p of parts) this.subscriptions.backOffState(p, config.retryBackoffMs);
        return;
      }
      const res = await listOffsets(
        conn,
        parts.map((p) => ({ topic: p.topic, partition: p.partition, timestamp: resetTimestamp(p.resetTarget) })),
        { metadata, isolationLevel: config.isolationLevel, timeoutMs: config.requestTimeoutMs },
      );
      this.stats.resets++;
      for (const t of res.topics) {
        for (const r of t.partitions) {
          const state = this.subscriptions.get(tpKey(t.name, r.partitionIndex));
          if (!state || generations.get(state.key) !== state.generation || state.resetTarget === null) continue;
          if (r.errorCode !== 0) {
            const e = errorFor(r.errorCode);
            if (e.invalidMetadata) metadata.requestUpdate(`ListOffsets ${e.name}`);
            if (!e.retriable) logger.warn('offset reset failed', { topic: t.name, partition: r.partitionIndex, error: e.name });
            this.subscriptions.backOffState(state, config.retryBackoffMs);
            continue;
          }
          if (r.offset < 0n) {
            // No record at or after that time: the end of the log, as Java's offsetsForTimes users do.
            logger.debug('no record at or after the time sought: going to the end', { topic: t.name, partition: r.partitionIndex });
            this.subscriptions.requestReset(state, 'latest');
            continue;
          }
          const from = this.outOfRangeFrom.get(state.key);
          this.outOfRangeFrom.delete(state.key);
          if (from !== undefined) {
            logger.warn(
              `${t.name}-${r.partitionIndex}: offset ${from} is out of range (${rangeOf(state, r.offset)}): going on from ${String(state.resetTarget)} offset ${r.offset} (auto.offset.reset); seek() to read elsewhere`,
              {
                topic: t.name,
                partition: r.partitionIndex,
                offset: from.toString(),
                to: r.offset.toString(),
              },
            );
          }
          logger.debug('offset reset', {
            topic: t.name,
            partition: r.partitionIndex,
            to: typeof state.resetTarget === 'object' ? `time ${state.resetTarget?.timestamp}` : state.resetTarget,
            offset: r.offset.toString(),
          });
          this.subscriptions.resetTo(state, r.offset);
        }
      }
    } catch (err) {
      for (const p of parts) this.subscriptions.backOffState(p, config.retryBackoffMs);
      this.brokers.failNode(node, `ListOffsets on broker ${node} failed`, err);
    } finally {
      for (const p of parts) this.resetting.delete(p.key);
      this.brokers.schedule();
    }
  }
}

/** The partition's log range as known after a reset to `landed` (the reset's own answer fills in its end of it). */
function rangeOf(state: PartitionState, landed: bigint): string {
  const start = state.logStartOffset >= 0n ? state.logStartOffset : state.resetTarget === 'earliest' ? landed : undefined;
  const end = state.highWatermark >= 0n ? state.highWatermark : state.resetTarget === 'latest' ? landed : undefined;
  return `the log starts at ${start ?? 'an offset not known yet'} and ends at ${end ?? 'an offset not known yet'}`;
}

/** ListOffsets' timestamp for a reset: -2 for the start of the log, -1 for its end, else a time. */
function resetTimestamp(target: ResetTarget | null): bigint {
  if (target === 'earliest') return -2n;
  if (target === 'latest' || target === null) return -1n;
  return target.timestamp;
}
