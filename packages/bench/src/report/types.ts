// The shapes of the benchmark's results: one RunRecord per client run, one ResultRow per
// (scenario, client) with the medians over repetitions, and the whole BenchResults written as
// JSON and turned into the console table, the Markdown report and the SVG chart.

export type Codec = 'none' | 'lz4' | 'zstd';
export type ScenarioKind = 'throughput' | 'group' | 'latency' | 'rebalance' | 'soak' | 'share' | 'fairness' | 'handler-io' | 'handler-cpu' | 'topic';

export interface ScenarioInfo {
  id: string;
  kind: ScenarioKind;
  title: string;
  recordSize: number;
  partitions: number;
  compression: Codec;
  records: number;
  /** group and share: members; latency: records/s and seconds; soak: passes. */
  members?: number;
  rate?: number;
  seconds?: number;
  passes?: number;
  /** group, rebalance, soak and share runs read the topic of this throughput scenario (and its reference checksum). */
  topicOf?: string;
  /** Measured repetitions (throughput: measured passes after the warm-up ones). */
  repetitions: number;
  /** throughput and share: passes read first in the same process and not measured. */
  warmupPasses?: number;
  /** throughput: warm-up passes go on until this many seconds have passed too (Node clients and Java; kcat has no JIT to warm). */
  warmupSeconds?: number;
  /** throughput: the same for the Java consumer's JVM, whose measured passes were still rising after 3 s (see plan.ts). */
  jvmWarmupSeconds?: number;
  /** fairness: the backlog topic's records, record size and partitions (the live partition is `records` at `rate`). */
  backlogRecords?: number;
  backlogRecordSize?: number;
  backlogPartitions?: number;
  /**
   * throughput: a measured pass ends at the topic's end or this many seconds into its fetch phase,
   * whichever comes first (issue 32: the topic holds 1 GB of values, so a pass lasts at least this
   * long or reads at least 1 GB). A pass cut short is `capped`: counted, its bytes checked, no checksum.
   */
  passSeconds?: number;
  /** throughput: the records an allocation run reads (the window is its middle three fifths), fewer than the topic's. */
  allocRecords?: number;
  /** throughput: false = the peers' sweep is not run here (each family at its --quick settings). */
  sweep?: boolean;
  /** throughput: 'value' (values only; null keys, no headers) or 'full' (keys and headers; every field read). */
  touch?: 'value' | 'full';
  /** handler-io, handler-cpu: distinct keys, the handler's work per record (ms awaited or burnt) and the time limit of a run. */
  keys?: number;
  handlerMs?: number;
  timeLimitSeconds?: number;
}

export type RunStatus = 'ok' | 'failed' | 'skipped';

/** One run of one client. */
export interface RunRecord {
  scenario: string;
  client: string;
  rep: number;
  /** throughput: the pass ended at the scenario's passSeconds, before the topic's end. */
  capped?: boolean;
  /** throughput: the warm-up passes its process read before this one's series (more than warmupPasses when warmupSeconds asked for more). */
  warmups?: number;
  status: RunStatus;
  reason?: string;
  records: number | null;
  expectedRecords: number;
  bytes: number | null;
  /** ValueDigest of the values, or null where the client exposes none (Java, the ceiling). */
  checksum: string | null;
  /**
   * Fetch phase: from the moment the client is assigned its partitions (connected, group joined)
   * to the last record, as Java's fetch.* figures count (Java: those figures; kcat: from its start).
   */
  recordsPerSec: number | null;
  mbPerSec: number | null;
  fetchSeconds: number | null;
  /** First record delivered to last record delivered (Node clients). */
  firstToLastRecordsPerSec?: number | null;
  /** Start to last record: connect, metadata and group join included. */
  totalSeconds: number | null;
  totalRecordsPerSec: number | null;
  cpuSeconds: number | null;
  peakRssMb: number | null;
  gcMs: number | null;
  maxEventLoopStallMs: number | null;
  /** The longest single GC pause in the fetch phase (kwire and the Node clients; null when not measured). */
  maxGcPauseMs?: number | null;
  /** p99 of the event loop's 1 ms samples in the fetch phase (Node clients). */
  p99EventLoopDelayMs?: number | null;
  /** The fetch phase's CPU, user and system apart (Node clients). */
  cpuUserSeconds?: number | null;
  cpuSystemSeconds?: number | null;
  /** fairness: the live partition's end-to-end latency before the backlog's drain and during it, and the drain itself. */
  fairness?: FairnessFigures;
  latency?: { p50: number; p99: number; p999: number; max: number; p99All: number; count: number; warmupExcluded: number };
  joinToFirstRecordMs?: number | null;
  rssByPassMb?: number[];
  duplicates?: number;
  /** handler-io, handler-cpu: order, duplicates, latencies, the loop's delay, heartbeats. */
  handler?: HandlerFigures;
  notes?: string[];
}

/** The handler-bound family's figures of one run (issue 31; clients/handler-check.ts, java/BenchParallel.java). */
export interface HandlerFigures {
  /** Distinct records whose handler ended while the run was counting (at most the target). */
  records: number;
  /** First handler start to the last counted handler end. */
  seconds: number;
  /** Stopped by the time limit before the target. */
  capped: boolean;
  /** Per-key order: a lower seq after a higher one, and a start before the key's previous end. */
  outOfOrder: number;
  overlaps: number;
  /** Handler calls for a record already started. */
  duplicates: number;
  /** Records whose key did not match the key written in the value (a bad load or a bad decode). */
  badKeys: number;
  /** Handler start to handler end (the awaited 5 ms plus what the process adds to it), ms. */
  handlerP50Ms: number | null;
  handlerP99Ms: number | null;
  /** CreateTime to handler end, ms: on a topic loaded before the run, mostly the backlog's age. */
  e2eP50Ms: number | null;
  e2eP99Ms: number | null;
  /** CPU-bound rows: the main thread's event-loop delay (monitorEventLoopDelay, 1 ms resolution) over the run. */
  loopDelayP99Ms?: number | null;
  loopDelayMaxMs?: number | null;
  /** Group health over the run (kwire): see HeartbeatFigures. */
  heartbeat?: HeartbeatFigures;
  /** Threads the handler ran on (Java: the process's live threads at the end). */
  threads?: number;
}

/** Whether the member kept its group membership while handlers ran. */
export interface HeartbeatFigures {
  /** The longest time since the last successful heartbeat, sampled every 100 ms (consumer.metrics()). */
  maxAgeMs: number | null;
  intervalMs: number;
  sessionTimeoutMs: number;
  /** Rebalances after the first assignment, partitions lost, poll-interval overruns, failed heartbeats. */
  rebalances: number;
  lost: number;
  pollIntervalExceeded: number;
  heartbeatErrors: number;
}

export interface LatencyFigures {
  count: number;
  p50: number;
  p99: number;
  p999: number;
  max: number;
}

export interface FairnessFigures {
  before: LatencyFigures;
  during: LatencyFigures;
  /** Backlog records read, and the drain's duration (first backlog record to last). */
  backlogRecords: number;
  drainSeconds: number;
  drainRecordsPerSec: number;
  /**
   * Where the "during" latency went (kwire only: ConsumerBatch.fetchedAt): `toAnswer` from
   * CreateTime until the Fetch answer holding the record was read off the socket (the producer, the
   * broker, the network, and the consumer's event loop until it read the answer), `inConsumer` from
   * then until the application had it; `maxLoopStallMs`, the consumer's largest event-loop stall
   * during the drain (1 ms timer): what of `toAnswer` can be the consumer's own. `cpu` (Linux):
   * the consumer's main thread on a CPU and waiting for one, per second, before the drain and during it.
   * On a machine with fewer cores than busy processes (the broker, the producer and the consumer
   * on two), a record's latency includes that wait.
   */
  split?: { toAnswer: LatencyFigures; inConsumer: LatencyFigures; maxLoopStallMs: number; cpu?: { before: CpuShare; during: CpuShare } };
}

/** The allocation pass of a Node client on a scenario. */
export interface AllocRecord {
  scenario: string;
  client: string;
  allocBytesPerRecord: number | null;
  windowRecords: number;
  /** Collections inside the window (0: GC-free). */
  collections: number;
  reason?: string;
}

/** One (scenario, client): medians over its repetitions. */
export interface ResultRow {
  scenario: string;
  kind: ScenarioKind;
  client: string;
  label: string;
  status: RunStatus;
  verified: boolean;
  /** What verification covered for this client (count, bytes, checksum). */
  verification: string;
  reason?: string;
  repetitions: number;
  recordsPerSec: number | null;
  mbPerSec: number | null;
  totalRecordsPerSec: number | null;
  firstToLastRecordsPerSec: number | null;
  fetchSeconds: number | null;
  totalSeconds: number | null;
  cpuSeconds: number | null;
  peakRssMb: number | null;
  gcMs: number | null;
  allocBytesPerRecord: number | null;
  maxEventLoopStallMs: number | null;
  /** The longest single GC pause in the fetch phase (kwire and the Node clients; null when not measured). */
  maxGcPauseMs?: number | null;
  p99EventLoopDelayMs?: number | null;
  cpuUserSeconds?: number | null;
  cpuSystemSeconds?: number | null;
  fairness?: FairnessFigures;
  /** Median records/s over the ceiling's median records/s in the same scenario. */
  ratioToCeiling: number | null;
  /** Every repetition's records/s, to show the spread. */
  runsRecordsPerSec: (number | null)[];
  /** rebalance: every repetition's join-to-first-record ms; latency: every repetition's p99. */
  runsValues?: (number | null)[];
  /** (max - min) / median of the verified repetitions' records/s. */
  spread: number | null;
  /** throughput: the shortest and longest measured pass (fetch phase, s), the least and most value bytes a pass read, and how many passes ended at the scenario's passSeconds. */
  passSeconds?: [number, number];
  passBytes?: [number, number];
  cappedPasses?: number;
  /** throughput with a pass limit: measured passes that neither reached it nor read 1 GB (issue 32: none). */
  shortPasses?: number;
  /** Throughput variants: the client family and the setting of this row. */
  family?: string;
  setting?: string;
  latency?: RunRecord['latency'];
  joinToFirstRecordMs?: number | null;
  rssByPassMb?: number[];
  duplicates?: number;
  /** share: members of the share group. */
  members?: number;
  /** handler-io, handler-cpu: the run's figures (one run per row). */
  handler?: HandlerFigures;
  notes?: string[];
}

export interface GoalResult {
  id: string;
  /** The issue that set the goal (7: the first bench's goals; 16: twice Java, zero allocations, no stall). */
  issue?: number;
  text: string;
  /** The scenario(s) measured, and the measured figure in words. */
  measured: string;
  /** The figure compared against the target (a ratio, milliseconds, MiB). */
  value: number | null;
  target: number;
  /** 'min': value must be >= target; 'max': value must be <= target. */
  direction: 'min' | 'max';
  met: boolean | null;
  /** How far off, in words, when missed (or why it could not be evaluated). */
  miss?: string;
  /** The kwire throughput scenarios the goal was measured on (what to profile when missed). */
  scenarios: string[];
}

export interface ProfileSummary {
  scenario: string;
  file: string;
  /** Sampled CPU time counted (idle excluded), and whether it is the fetch phase alone. */
  totalMs: number;
  fetchPhaseOnly?: boolean;
  top: { name: string; where: string; selfMs: number; percent: number }[];
  /** The profiled run's fetch phase: CPU seconds in user space and in the kernel (process.cpuUsage). */
  cpuUserSeconds?: number | null;
  cpuSystemSeconds?: number | null;
  /** `perf record` of a second run of the same client process (cpu-clock samples, 5 passes; JS symbols from --perf-basic-prof), or why not. */
  perf?: PerfSummary;
}

export interface PerfSummary {
  file?: string;
  /** Samples counted (the whole process: start-up included). */
  samples?: number;
  top: { percent: number; dso: string; symbol: string }[];
  /** Why there is no perf record (perf missing, perf_event_paranoid, an error). */
  reason?: string;
}

export interface BenchResults {
  machine: { cpus: number; model: string; memoryGb: number; os: string; kernel: string };
  node: { orchestrator: string; clients: string; path: string };
  broker: { version: string; bootstrap: string; startedByBench: boolean };
  mode: 'full' | 'quick';
  /** --heap-mib: the live heap each Node client held in throughput scenarios (absent: none). */
  heapMiB?: number;
  startedAt: string;
  durationSeconds: number;
  clients: { id: string; label: string; available: boolean; reason?: string }[];
  scenarios: ScenarioInfo[];
  results: ResultRow[];
  goals: GoalResult[];
  profiles: ProfileSummary[];
  notes: string[];
}

/** A thread's time on a CPU and runnable but waiting for one, in ms per second of wall clock. */
export interface CpuShare {
  runMsPerSec: number;
  waitMsPerSec: number;
}
