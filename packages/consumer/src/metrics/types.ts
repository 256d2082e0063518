// What metrics() returns, for a consumer and a share consumer: the shapes the exporters
// (prometheus.ts, opentelemetry.ts) read. Here, in the metrics layer, so that an exporter depends
// on the figures and not on the consumer classes that count them.
import type { BufferPoolStats } from '@kwire/protocol';
import type { LatencySummary } from './latency.js';
import type { GroupMetrics, RecordLatency } from './meter.js';

/** The fetcher's counters (Fetcher.stats). */
export interface FetcherStats {
  fetches: number;
  /** Fetch requests sent, by broker node id (shows preferred read replicas at work). */
  fetchesByNode: Record<number, number>;
  fetchErrors: number;
  emptyFetches: number;
  bytesFetched: number;
  resets: number;
  /** Truncations detected (KIP-320: OffsetForLeaderEpoch or a Fetch's diverging epoch). */
  truncations: number;
}

/** Consumer.metrics(). */
export interface ConsumerMetrics extends FetcherStats {
  /** Fetched bytes not yet handed to the application and released (decompressed size). */
  bufferedBytes: number;
  assignedPartitions: number;
  /** The process's buffer pool (socket frames and decompression, shared by its consumers): hits are reused buffers. */
  pool: BufferPoolStats;
  /** Fetch requests from send to answer (Java's fetch-latency-avg and -max, and percentiles). */
  fetchLatency: LatencySummary;
  /** Records delivered to the application, and per second over the last 30 s (records-consumed-rate). */
  recordsConsumed: number;
  recordsConsumedRate: number;
  /** Record bytes fetched per second over the last 30 s (bytes-consumed-rate). */
  bytesConsumedRate: number;
  /** Per partition ("topic-partition"), records between the position and the end (records-lag); -1 max when none known. */
  recordsLag: Record<string, number>;
  recordsLagMax: number;
  /** Where a record's time goes: before kwire, buffered in kwire, in the application (per batch). */
  recordLatency: RecordLatency;
  /** Commits, rebalances and heartbeats of a group member (undefined without a group). */
  group: GroupMetrics | undefined;
  /** run()'s records: in flight, finished, skipped, retried, and what waits. */
  processing: ProcessingMetrics;
}

/** run() with eachMessage (its counters last across runs; in-flight figures are the running one's). */
export interface ProcessingMetrics {
  /** Records whose callback is running now. */
  inFlight: number;
  /** The running (or last) run's maxConcurrency. */
  maxConcurrency: number;
  /** Records whose callback resolved (skipped ones included). */
  finished: number;
  /** Records whose callback failed and that onFailure set aside ('skip'). */
  skipped: number;
  /** Failed records handled again after a backoff ('retry'). */
  retried: number;
  /** Records passed over because they were finished before (commit metadata, an earlier delivery). */
  alreadyFinished: number;
  /** Per partition ("topic-partition"): records from its first unfinished one to the last dispatched. */
  unfinishedSpan: Record<string, number>;
  /** The largest unfinishedSpan (0 when no partition has records under way). */
  unfinishedSpanMax: number;
  /** Per partition: the bytes of the metadata of its last commit (finished records beyond the commit point). */
  commitMetadataBytes: Record<string, number>;
  /** From a record's dispatch to its callback's start: waiting for its key (or partition) and a slot. */
  keyWait: LatencySummary;
}

/** A share consumer's counters, kept by its share sessions (ShareConsumer.counters). */
export interface ShareCounters {
  fetches: number;
  recordsAcquired: number;
  /** Acquired with a delivery count above 1. */
  redeliveries: number;
  acknowledged: { accept: number; release: number; reject: number; gap: number; renew: number };
  acknowledgementErrors: number;
  lockExpired: number;
  sessionResets: number;
}

/** ShareConsumer.metrics(). */
export interface ShareConsumerMetrics extends ShareCounters {
  /** Partitions assigned to this member now. */
  assignedPartitions: number;
  /** Records acquired and not settled yet (held by the application or waiting in the queue). */
  outstanding: number;
  memberEpoch: number;
  heartbeats: number;
}
