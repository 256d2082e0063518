// What every Node client of the benchmark shares: its options, the report it prints, and the
// bookkeeping around the consuming loop (counting, value digests, fetch-phase timing, the
// allocation window, latency histograms, per-offset hashes for groups, IPC with the orchestrator).
//
// The clients' loops stay their own (each uses its library the way its users do); they call into
// this module once per batch, never through a closure per record, so that the bookkeeping costs
// every client the same small amount.
import { writeFileSync } from 'node:fs';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { GCProfiler, getHeapStatistics } from 'node:v8';
// The measuring core `kwire perf` uses too: CPU, GC, event-loop stall and latency are counted the
// same way in both.
import { LatencyHistogram, PerfMeter } from '@kwire/consumer/perf-meter';
import { recordHash, valueHash, ValueDigest } from '../meter.js';
import type { FairnessFigures } from '../report/types.js';

export { LatencyHistogram };

/** What a run is for. */
export type ClientMode =
  /** Consume `records` records from the start as fast as possible, timed. */
  | 'throughput'
  /** The same, untimed, measuring heap bytes allocated per record over a long window (needs --expose-gc). */
  | 'alloc'
  /** One member of a group of several processes: consume until the orchestrator says stop. */
  | 'group'
  /** Consume records as a producer writes them at a fixed rate; histogram of delivery - CreateTime. */
  | 'latency'
  /** A fresh group: time from subscribe to the first record delivered, then stop. */
  | 'rebalance'
  /** One member of a share group (KIP-932), in a process of its own: as 'group', passes driven by the orchestrator. */
  | 'share'
  /** Latency under load (clients/kwire-fairness.ts): a live partition's latency before and while a paused backlog topic is drained. */
  | 'fairness';

export interface ClientOptions {
  bootstrap: string;
  topic: string;
  partitions: number;
  /** Records to consume (the topic's whole content for throughput and alloc runs). */
  records: number;
  mode?: ClientMode;
  /** Group id for the clients that consume in a group (kafkajs, platformatic; kwire in group/rebalance modes). */
  groupId?: string;
  /** Extra configuration handed to the client library (e.g. kwire's { checkCrcs: false }). */
  config?: Record<string, unknown>;
  /** Record size in bytes, for clients that do not decode values (the fetch ceiling). */
  recordSize?: number;
  /** group mode: the end offset of every partition, and where to write the per-offset hashes. */
  endOffsets?: number[];
  hashFile?: string;
  /** latency mode: records whose timestamp falls in the first warmupMs of the run are counted apart. */
  warmupMs?: number;
  /** alloc mode: records in the window, and records consumed before it opens. */
  allocWindow?: number;
  allocSkip?: number;
  /** Give up when no record has arrived for this long (the run is then reported short). */
  idleTimeoutMs?: number;
  /** kwire legacy (memory test): read the topic this many times. */
  passes?: number;
  /**
   * What the loop reads of each record: 'value' (the value, hashed by its length and first and last
   * 8 bytes) or 'full' (key, value with every byte hashed, headers, offset and timestamp: recordHash).
   */
  touch?: 'value' | 'full';
  /** How the bench drives the library, beyond its configuration (e.g. node-rdkafka's consume style). */
  settings?: Record<string, unknown>;
  /** A service's live heap: run-client holds this many MiB of objects for the whole process (--heap-mib; service-heap.ts). */
  heapMiB?: number;
  /** Steady state (run-client.ts): passes over the topic in this process, each with a fresh consumer; the first `warmupPasses` are not reported as measured. */
  warmupPasses?: number;
  /** Warm-up passes go on until this many seconds have passed too (a fast client's 0.3 s pass does not warm a JIT): the steady state is reached by time, not by a count. */
  warmupSeconds?: number;
  measuredPasses?: number;
  /** throughput: a pass ends this many seconds after ready() (or its first record) if the topic's end has not come first. */
  passSeconds?: number;
  /** Which pass this is (0-based), set by run-client for group ids and notes. */
  pass?: number;
  /** fairness mode: the backlog topic, its partitions and records; the live topic is `topic` partition 0 with `records` records. */
  backlogTopic?: string;
  backlogPartitions?: number;
  backlogRecords?: number;
  /** fairness mode: the backlog is resumed this long after the warm-up (warmupMs) that follows the first live record. */
  beforeMs?: number;
  /** node-rdkafka: the package folder of the build to load (orchestrator/rdkafka-build.ts). */
  rdkafkaDir?: string;
}

/** The JSON line a client prints on stdout at the end of a run. */
export interface ClientReport {
  client: string;
  mode: ClientMode;
  records: number;
  /** Value bytes delivered (or, for the ceiling, records x recordSize). */
  bytes: number;
  /** ValueDigest of every value, or null where values are not decoded (the ceiling). */
  checksum: string | null;
  /** Epoch milliseconds (sub-millisecond, from performance.timeOrigin): comparable across processes. */
  tStart: number;
  /** When the client was connected and assigned (joined) and about to fetch; null if never. */
  tReady: number | null;
  tFirst: number | null;
  tLast: number | null;
  /**
   * The fetch phase: ready (assigned) to last record, as Java's ConsumerPerformance counts its
   * fetch.* figures (from partition assignment); first record to last where there is no ready.
   */
  fetchSeconds: number | null;
  /** First record to last record. */
  firstToLastSeconds: number | null;
  /** The fetch phase on the monotonic clock in microseconds (what V8's CPU profiles use). */
  hrReadyUs: number | null;
  hrLastUs: number | null;
  /** Start (before connecting) to last record: connect, metadata, group join included. */
  totalSeconds: number | null;
  /** User + system CPU of the whole process (Node start-up and module loading included). */
  cpuSeconds: number;
  /** The part of it spent in the fetch phase: ready (or the first record) to the last record. */
  fetchCpuSeconds: number | null;
  /** getrusage's peak resident set size. */
  peakRssMb: number;
  /** GC time in the fetch phase (PerfMeter's window: ready to the last record). */
  gcMs: number;
  fetchGcMs?: number;
  gcCount: number;
  /** Longest event-loop stall in the fetch phase (1 ms resolution). */
  maxEventLoopStallMs: number | null;
  /** The longest single collection in the fetch phase (Node clients that use the measuring core). */
  maxGcPauseMs?: number;
  /** p99 of the event loop's 1 ms timer samples in the fetch phase (issue 16: <= 2 ms). */
  p99EventLoopDelayMs?: number | null;
  /** The fetch phase's CPU split into user and system time (process.cpuUsage): where the CPU goes, kernel or JS. */
  fetchCpuUserSeconds?: number | null;
  fetchCpuSystemSeconds?: number | null;
  /** alloc mode: heap (JS objects) and external (ArrayBuffer) bytes allocated per record. */
  allocBytesPerRecord?: number | null;
  allocWindowRecords?: number;
  /** Collections inside the allocation window (0: a GC-free window). */
  allocCollections?: number;
  latency?: LatencySummary;
  /** fairness mode: the live partition's latency before the drain and during it. */
  fairness?: FairnessFigures;
  /** rebalance mode: subscribe (or connect) to first record. */
  joinToFirstRecordMs?: number;
  /** group mode: when this member delivered the last record of each partition (epoch ms), or null. */
  partitionDoneAt?: (number | null)[];
  /** throughput: the pass ended at passSeconds, before `records` records (a partial read: no checksum to compare). */
  capped?: boolean;
  /** Anything the client noticed that makes the run invalid (non-contiguous batch, error...). */
  error?: string;
  /** Things worth showing next to the figures (library version, settings). */
  notes?: string[];
}

export interface LatencySummary {
  count: number;
  warmupExcluded: number;
  p50: number;
  p99: number;
  p999: number;
  max: number;
  /** p99 over every record, warm-up included. */
  p99All: number;
}

export function now(): number {
  return performance.timeOrigin + performance.now();
}

function round3(n: number): number {
  return Math.round(n * 1000) / 1000;
}
function round2(n: number): number {
  return Math.round(n * 100) / 100;
}

/**
 * The per-run bookkeeping: the loop calls begin() before creating its consumer, then batch(n) for
 * every batch it has read (after touching the values), and checks `done`.
 */
export class Run {
  readonly digest = new ValueDigest();
  /** When the client started connecting: set again by start(), after imports and the group's go. */
  tStart = now();
  tReady: number | null = null;
  private hrReady: number | null = null;
  private hrLast: number | null = null;
  tFirst: number | null = null;
  tLast: number | null = null;
  count = 0;
  /** Set once `records` records were seen, the pass's time was up, or stop() was called: the loop must end. */
  done = false;
  /** The pass ended at passSeconds, before `records` records. */
  capped = false;
  /** now() at which a throughput pass ends (0: only at `records`). */
  private capAt = 0;
  error: string | undefined;
  notes: string[] = [];
  /** The fetch phase's window: opened at ready() (or the first record), closed by finish(). */
  private readonly meter = new PerfMeter();
  /** The fetch phase's event-loop delay samples (1 ms timer) and its CPU at both ends, user and system apart. */
  private readonly loopDelay: IntervalHistogram = monitorEventLoopDelay({ resolution: 1 });
  private cpu0: NodeJS.CpuUsage | undefined;
  private cpu1: NodeJS.CpuUsage | undefined;
  /** True when the loop must read key, headers, offset and timestamp too (ClientOptions.touch). */
  readonly fullTouch: boolean;
  private finished!: () => void;
  /** Resolves when done becomes true: for callback-style clients. */
  readonly finishedPromise = new Promise<void>((resolve) => (this.finished = resolve));
  private idleTimer: NodeJS.Timeout | undefined;
  private lastProgress = now();
  // alloc mode
  private readonly gc: (() => void) | undefined;
  private window: { count: number; used: number; profiler: GCProfiler } | undefined;
  private allocResult: { records: number; bytes: number; collections: number } | undefined;
  // latency mode
  readonly latency: LatencyHistogram | undefined;
  readonly latencyAll: LatencyHistogram | undefined;
  private warmupUntil = 0;
  private warmupExcluded = 0;
  // group mode
  private readonly hashes: Int32Array[] | undefined;
  private readonly seen: Uint8Array[] | undefined;
  private readonly partitionDoneAt: (number | null)[] | undefined;
  private readonly progress: Float64Array | undefined;
  private progressTimer: NodeJS.Timeout | undefined;
  readonly mode: ClientMode;
  /** A member of a group or share group: it runs until the orchestrator says stop, recording every offset. */
  get member(): boolean {
    return this.mode === 'group' || this.mode === 'share';
  }
  private readonly onStop = (m: { ev?: string }): void => {
    if (m?.ev === 'stop') this.finish();
  };

  constructor(
    readonly client: string,
    readonly options: ClientOptions,
  ) {
    this.mode = options.mode ?? 'throughput';
    this.fullTouch = options.touch === 'full';
    if (this.mode === 'alloc') {
      this.gc = (globalThis as { gc?: () => void }).gc;
      if (!this.gc) this.error = 'alloc mode needs --expose-gc';
    }
    if (this.mode === 'latency') {
      this.latency = new LatencyHistogram();
      this.latencyAll = new LatencyHistogram();
    }
    if (this.member) {
      const ends = options.endOffsets ?? [];
      this.hashes = ends.map((e) => new Int32Array(e));
      this.seen = ends.map((e) => new Uint8Array(e));
      this.partitionDoneAt = ends.map(() => null);
      this.progress = new Float64Array(ends.length);
      // Progress to the orchestrator, which stops every member once each partition is complete.
      this.progressTimer = setInterval(() => process.send?.({ ev: 'progress', next: Array.from(this.progress!), count: this.count }), 50);
      this.progressTimer.unref();
    }
    const idle = options.idleTimeoutMs ?? 60_000;
    this.idleTimer = setInterval(() => {
      if (!this.done && now() - this.lastProgress > idle) {
        this.error = `no record for ${idle} ms after ${this.count} records`;
        this.finish();
      }
    }, 1000);
    this.idleTimer.unref();
    process.on('message', this.onStop);
  }

  /** Marks the client's start: called right before it creates its consumer. */
  start(): number {
    this.tStart = now();
    return this.tStart;
  }

  /** Tells the orchestrator this client is connected (and joined): latency and group runs wait for it. */
  ready(detail: Record<string, unknown> = {}): void {
    this.lastProgress = now();
    if (this.tReady === null) {
      this.tReady = this.lastProgress;
      this.armCap(this.tReady);
      this.hrReady = Number(process.hrtime.bigint() / 1000n);
      this.meter.begin();
      this.beginWindow();
    }
    process.send?.({ ev: 'ready', ...detail });
  }

  /** Waits for the orchestrator's go (group members start together); immediate without IPC. */
  waitGo(): Promise<void> {
    if (!process.send) return Promise.resolve();
    return new Promise((resolve) => {
      const on = (m: { ev?: string }) => {
        if (m?.ev === 'go') {
          process.off('message', on);
          resolve();
        }
      };
      process.on('message', on);
      process.send!({ ev: 'loaded' });
    });
  }

  /**
   * After a batch of n records (values already digested by the loop). Returns true when the run
   * is complete.
   */
  batch(n: number): boolean {
    if (n === 0) return this.done;
    const t = now();
    this.lastProgress = t;
    if (this.tFirst === null) {
      this.tFirst = t;
      if (this.tReady === null) this.armCap(t);
      this.meter.begin();
      this.beginWindow();
    }
    this.count += n;
    this.tLast = t;
    if (this.gc !== undefined) this.allocStep();
    if (!this.member && this.count >= this.options.records) this.finish();
    else if (this.capAt !== 0 && t >= this.capAt) this.cap();
    return this.done;
  }

  /** A throughput pass's end by time, counted from the start of its fetch phase. */
  private armCap(from: number): void {
    const s = this.options.passSeconds;
    if (this.mode === 'throughput' && s !== undefined && s > 0) this.capAt = from + s * 1000;
  }

  private cap(): void {
    this.capped = true;
    this.finish();
  }

  /** Full touch: one record's recordHash folded into the digest (value bytes counted). */
  full(value: Uint8Array | null, key: Uint8Array | null, headersHash: number, offset: number, timestamp: number): void {
    this.digest.addHash(recordHash(value, key, headersHash, offset, timestamp), value === null ? 0 : value.length);
  }

  /** latency mode: a record's CreateTime, against the batch's delivery time. */
  latencyOf(deliveredAt: number, timestamp: number): void {
    if (this.warmupUntil === 0) this.warmupUntil = timestamp + (this.options.warmupMs ?? 0);
    const ms = deliveredAt - timestamp;
    this.latencyAll!.add(ms);
    if (timestamp < this.warmupUntil) this.warmupExcluded++;
    else this.latency!.add(ms);
  }

  /**
   * One record, for clients that deliver record by record (platformatic's stream): the clock is
   * read only for the first and the last record, not for every one.
   */
  one(): boolean {
    if (this.tFirst === null) return this.batch(1);
    this.count++;
    if (this.gc !== undefined) this.allocStep();
    if (!this.member && this.count >= this.options.records) {
      this.tLast = now();
      this.lastProgress = this.tLast;
      this.finish();
    } else if ((this.count & 0x3ff) === 0) {
      // The clock every 1,024 records: often enough for the pass's time limit at 10 KB records.
      const t = now();
      this.lastProgress = t;
      if (this.capAt !== 0 && t >= this.capAt) {
        this.tLast = t;
        this.cap();
      }
    }
    return this.done;
  }

  /** group mode: the record at `offset` of `partition` had value hash h. */
  offsetSeen(partition: number, offset: number, h: number): void {
    const seen = this.seen![partition];
    if (seen === undefined || offset >= seen.length) {
      this.error ??= `record ${partition}@${offset} beyond the end offsets given`;
      return;
    }
    seen[offset] = 1;
    this.hashes![partition]![offset] = h;
    if (offset + 1 > this.progress![partition]!) this.progress![partition] = offset + 1;
    if (offset + 1 === seen.length) {
      this.partitionDoneAt![partition] = now();
      this.tLast = this.partitionDoneAt![partition]!;
    }
  }

  /**
   * Heap bytes allocated per record, measured over one long window (from a fifth of the records to
   * four fifths): a forced collection, then v8's used heap size at both ends plus what every
   * collection inside the window freed (v8.GCProfiler reports the used size before and after each).
   * With no collection inside, this is exactly the GC-free window of decode-records.ts; with some
   * (kafkajs and platformatic allocate more than a young generation holds between two of their
   * fetches) it still counts every byte allocated in between. The window must span many fetches:
   * clients decode a whole Fetch response before delivering its first record, so a short window
   * could fall between two responses and see almost nothing.
   */
  private allocStep(): void {
    const w = this.window;
    const records = this.options.records;
    if (w === undefined) {
      if (this.allocResult === undefined && this.count >= (this.options.allocSkip ?? Math.floor(records / 5))) {
        this.gc!();
        const profiler = new GCProfiler();
        profiler.start();
        this.window = { count: this.count, used: getHeapStatistics().used_heap_size, profiler };
      }
    } else if (this.count - w.count >= (this.options.allocWindow ?? Math.floor((records * 3) / 5)) || this.count >= records) {
      const used = getHeapStatistics().used_heap_size;
      const stats = w.profiler.stop()?.statistics ?? [];
      let freed = 0;
      for (const g of stats) freed += g.beforeGC.heapStatistics.usedHeapSize - g.afterGC.heapStatistics.usedHeapSize;
      this.allocResult = { records: this.count - w.count, bytes: used - w.used + freed, collections: stats.length };
      this.window = undefined;
      this.finish();
    }
  }

  /** Opens the stall histogram and the user/system CPU window (once: at ready, or the first record). */
  private beginWindow(): void {
    if (this.cpu0) return;
    this.cpu0 = process.cpuUsage();
    this.loopDelay.enable();
  }

  finish(): void {
    if (this.done) return;
    this.done = true;
    this.hrLast = Number(process.hrtime.bigint() / 1000n);
    if (this.cpu0) {
      this.cpu1 = process.cpuUsage();
      this.loopDelay.disable();
    }
    this.meter.end();
    this.finished();
  }

  /** The report; waits a moment so that GC entries of the last window reach the observer. */
  async report(extra: Partial<ClientReport> = {}): Promise<ClientReport> {
    this.finish();
    clearInterval(this.idleTimer);
    clearInterval(this.progressTimer);
    process.off('message', this.onStop);
    await new Promise((r) => setTimeout(r, 30));
    const cpu = process.cpuUsage();
    const usage = process.resourceUsage();
    const m = this.meter.summary();
    this.meter.close();
    const fetchCpu = this.meter.begun ? m.cpuSeconds : null;
    const report: ClientReport = {
      client: this.client,
      mode: this.mode,
      records: this.count,
      bytes: this.digest.bytes,
      checksum: this.digest.toString(),
      tStart: this.tStart,
      tReady: this.tReady,
      tFirst: this.tFirst,
      tLast: this.tLast,
      fetchSeconds: this.tLast !== null && (this.tReady ?? this.tFirst) !== null ? (this.tLast - (this.tReady ?? this.tFirst)!) / 1000 : null,
      firstToLastSeconds: this.tFirst !== null && this.tLast !== null ? (this.tLast - this.tFirst) / 1000 : null,
      hrReadyUs: this.hrReady,
      hrLastUs: this.hrLast,
      totalSeconds: this.tLast !== null ? (this.tLast - this.tStart) / 1000 : null,
      cpuSeconds: round2((cpu.user + cpu.system) / 1e6),
      fetchCpuSeconds: fetchCpu === null ? null : round2(fetchCpu),
      peakRssMb: round2(usage.maxRSS / 1024),
      gcMs: m.gcMs,
      fetchGcMs: m.gcMs,
      gcCount: m.gcCount,
      maxGcPauseMs: m.maxGcPauseMs,
      maxEventLoopStallMs: m.maxEventLoopStallMs,
      p99EventLoopDelayMs: this.loopDelay.count > 0 ? round2(this.loopDelay.percentile(99) / 1e6) : null,
      fetchCpuUserSeconds: this.cpu0 && this.cpu1 ? round3((this.cpu1.user - this.cpu0.user) / 1e6) : null,
      fetchCpuSystemSeconds: this.cpu0 && this.cpu1 ? round3((this.cpu1.system - this.cpu0.system) / 1e6) : null,
      ...(this.capped ? { capped: true } : {}),
      ...(this.error ? { error: this.error } : {}),
      ...(this.notes.length ? { notes: this.notes } : {}),
      ...extra,
    };
    if (this.mode === 'alloc') {
      const a = this.allocResult;
      report.allocBytesPerRecord = a && a.records > 0 ? Math.round(a.bytes / a.records) : null;
      report.allocWindowRecords = a?.records ?? 0;
      report.allocCollections = a?.collections ?? 0;
      if (!a) report.notes = [...(report.notes ?? []), 'the allocation window never closed'];
    }
    if (this.mode === 'latency') {
      const h = this.latency!;
      report.latency = {
        count: h.count,
        warmupExcluded: this.warmupExcluded,
        p50: h.percentile(50),
        p99: h.percentile(99),
        p999: h.percentile(99.9),
        max: round3(h.max),
        p99All: this.latencyAll!.percentile(99),
      };
    }
    if (this.member) {
      report.partitionDoneAt = this.partitionDoneAt;
      if (this.options.hashFile) writeHashes(this.options.hashFile, this.hashes!, this.seen!);
    }
    return report;
  }
}

/**
 * The per-offset hashes of a group member, for the orchestrator to merge: for each partition, its
 * length (uint32 LE), the hashes (int32 LE each) and the seen flags (one byte each).
 */
function writeHashes(file: string, hashes: Int32Array[], seen: Uint8Array[]): void {
  const parts: Buffer[] = [];
  for (let p = 0; p < hashes.length; p++) {
    const len = Buffer.alloc(4);
    len.writeUInt32LE(hashes[p]!.length);
    parts.push(len, Buffer.from(hashes[p]!.buffer, hashes[p]!.byteOffset, hashes[p]!.byteLength), Buffer.from(seen[p]!.buffer, seen[p]!.byteOffset, seen[p]!.byteLength));
  }
  writeFileSync(file, Buffer.concat(parts));
}

export function readHashes(buf: Buffer): { hashes: Int32Array; seen: Uint8Array }[] {
  const out: { hashes: Int32Array; seen: Uint8Array }[] = [];
  let pos = 0;
  while (pos < buf.length) {
    const n = buf.readUInt32LE(pos);
    pos += 4;
    const hashes = new Int32Array(n);
    for (let i = 0; i < n; i++) hashes[i] = buf.readInt32LE(pos + 4 * i);
    pos += 4 * n;
    const seen = new Uint8Array(buf.subarray(pos, pos + n));
    pos += n;
    out.push({ hashes, seen });
  }
  return out;
}

export { valueHash };
