import { channel } from 'node:diagnostics_channel';
import { LatencyWindow, type LatencySummary } from './latency.js';

/**
 * What a service watches its consumer by, counted where it happens at batch granularity (never per
 * record: the hot path stays as it is), readable through metrics() and published on
 * node:diagnostics_channel (only while someone subscribes):
 *
 *   kwire:consumer:batch      { topic, partition, records, lag, brokerWaitMs, bufferedMs } at delivery
 *   kwire:consumer:release    { topic, partition, records, processingMs } when a batch is released
 *   kwire:consumer:commit     { offsets, durationMs, error? } after each commit
 *   kwire:consumer:rebalance  { reason, durationMs } when a rebalance ends with an assignment
 *
 * Each message also carries `consumer`, the Consumer it is about: the channels are the process's,
 * shared by every consumer in it.
 */
export const CHANNELS = {
  batch: channel('kwire:consumer:batch'),
  release: channel('kwire:consumer:release'),
  commit: channel('kwire:consumer:commit'),
  rebalance: channel('kwire:consumer:rebalance'),
} as const;

/** Events per second over the last `seconds` whole seconds (a ring of per-second counts). */
export class RateWindow {
  private readonly counts: Float64Array;
  private second = 0;

  constructor(private readonly seconds = 30) {
    this.counts = new Float64Array(seconds);
  }

  add(n: number, nowMs = Date.now()): void {
    this.roll(nowMs);
    this.counts[this.second % this.seconds]! += n;
  }

  /** The average rate over the window's completed seconds. */
  perSecond(nowMs = Date.now()): number {
    this.roll(nowMs);
    let sum = 0;
    for (let i = 1; i < this.seconds; i++) sum += this.counts[(this.second - i + this.seconds * 2) % this.seconds]!;
    return Math.round((sum / (this.seconds - 1)) * 1000) / 1000;
  }

  private roll(nowMs: number): void {
    const s = Math.floor(nowMs / 1000);
    if (this.second === 0) this.second = s;
    const gap = Math.min(s - this.second, this.seconds);
    for (let i = 1; i <= gap; i++) this.counts[(this.second + i) % this.seconds] = 0;
    if (s > this.second) this.second = s;
  }
}

export interface RecordLatency {
  /** From a record's timestamp to its arrival in kwire (producer, broker and network), per batch, by its first record. */
  brokerWait: LatencySummary;
  /** From arrival to delivery to the application (buffered in kwire). */
  buffered: LatencySummary;
  /** From delivery to release (in the application). */
  processing: LatencySummary;
}

export interface GroupMetrics {
  commits: number;
  commitFailures: number;
  commitLatency: LatencySummary;
  rebalances: number;
  lastRebalanceReason: string | undefined;
  rebalanceLatency: LatencySummary;
  /** Milliseconds since a heartbeat last succeeded (undefined without a group). */
  sinceLastHeartbeatMs: number | undefined;
}

export class ConsumerMeter {
  recordsConsumed = 0;
  readonly recordsRate = new RateWindow();
  /** Record bytes fetched (whole batches, as Java's bytes-consumed-rate counts them). */
  readonly bytesRate = new RateWindow();
  readonly brokerWait = new LatencyWindow();
  readonly buffered = new LatencyWindow();
  readonly processing = new LatencyWindow();
  commits = 0;
  commitFailures = 0;
  readonly commitLatency = new LatencyWindow();
  rebalances = 0;
  lastRebalanceReason: string | undefined;
  readonly rebalanceLatency = new LatencyWindow();
  private rebalanceStartedAt: number | undefined;

  /** `consumer`: what the channel messages name as their source. */
  constructor(private readonly consumer?: object) {}

  /** A batch goes to the application: `fetchedAt` (Date.now()) when its data arrived. */
  delivered(topic: string, partition: number, records: number, firstTimestamp: number, fetchedAt: number, lag: bigint): void {
    const now = Date.now();
    this.recordsConsumed += records;
    this.recordsRate.add(records, now);
    const brokerWaitMs = Math.max(0, fetchedAt - firstTimestamp);
    const bufferedMs = Math.max(0, now - fetchedAt);
    this.brokerWait.record(brokerWaitMs);
    this.buffered.record(bufferedMs);
    if (CHANNELS.batch.hasSubscribers) CHANNELS.batch.publish({ consumer: this.consumer, topic, partition, records, lag, brokerWaitMs, bufferedMs });
  }

  released(topic: string, partition: number, records: number, processingMs: number): void {
    this.processing.record(processingMs);
    if (CHANNELS.release.hasSubscribers) CHANNELS.release.publish({ consumer: this.consumer, topic, partition, records, processingMs });
  }

  committed(offsets: readonly { topic: string; partition: number; offset: bigint }[], durationMs: number, error?: Error): void {
    this.commits++;
    if (error) this.commitFailures++;
    else this.commitLatency.record(durationMs);
    if (CHANNELS.commit.hasSubscribers) CHANNELS.commit.publish({ consumer: this.consumer, offsets, durationMs, error });
  }

  rebalanceStarted(reason: string): void {
    this.rebalanceStartedAt ??= performance.now();
    this.lastRebalanceReason = reason;
  }

  rebalanceEnded(): void {
    if (this.rebalanceStartedAt === undefined) return;
    const durationMs = performance.now() - this.rebalanceStartedAt;
    this.rebalanceStartedAt = undefined;
    this.rebalances++;
    this.rebalanceLatency.record(durationMs);
    if (CHANNELS.rebalance.hasSubscribers) CHANNELS.rebalance.publish({ consumer: this.consumer, reason: this.lastRebalanceReason, durationMs });
  }

  recordLatency(): RecordLatency {
    return { brokerWait: this.brokerWait.summary(), buffered: this.buffered.summary(), processing: this.processing.summary() };
  }

  group(sinceLastHeartbeatMs: number | undefined): GroupMetrics {
    return {
      commits: this.commits,
      commitFailures: this.commitFailures,
      commitLatency: this.commitLatency.summary(),
      rebalances: this.rebalances,
      lastRebalanceReason: this.lastRebalanceReason,
      rebalanceLatency: this.rebalanceLatency.summary(),
      sinceLastHeartbeatMs,
    };
  }
}
