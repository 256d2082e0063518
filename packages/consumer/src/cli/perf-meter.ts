// The measuring core of `kwire perf` and of @kwire/bench's clients (exported as
// @kwire/consumer/perf-meter), so that both count the same way: records and value bytes over a
// window, the process's CPU (user + system) and GC time over that window, its peak RSS, the event
// loop's longest stall, and a histogram of end-to-end latency (delivery - record timestamp).
//
// Nothing here runs per record except LatencyHistogram.add (an index and an increment); the rest
// is read at the window's ends.
import { monitorEventLoopDelay, PerformanceObserver, type IntervalHistogram } from 'node:perf_hooks';

const BUCKET_MS = 0.05;
const BUCKETS = 1_200_000; // 60 s at 50 us

/** Latency histogram in 50 us buckets up to 60 s (later values count in the last): no allocation per value. */
export class LatencyHistogram {
  private readonly counts = new Uint32Array(BUCKETS);
  private n = 0;
  private maxMs = 0;

  add(ms: number): void {
    let b = Math.floor(ms / BUCKET_MS);
    if (b < 0) b = 0;
    else if (b >= BUCKETS) b = BUCKETS - 1;
    this.counts[b]!++;
    this.n++;
    if (ms > this.maxMs) this.maxMs = ms;
  }

  get count(): number {
    return this.n;
  }

  /** The largest value added (ms), exact. */
  get max(): number {
    return this.maxMs;
  }

  /** The upper edge of the bucket holding the p-th percentile (ms), NaN when empty. */
  percentile(p: number): number {
    if (this.n === 0) return NaN;
    const want = Math.max(1, Math.ceil((p / 100) * this.n));
    let seen = 0;
    for (let b = 0; b < BUCKETS; b++) {
      seen += this.counts[b]!;
      if (seen >= want) return round((b + 1) * BUCKET_MS, 3);
    }
    return round(BUCKETS * BUCKET_MS, 3);
  }
}

export interface MeterSummary {
  records: number;
  /** Value bytes. */
  bytes: number;
  seconds: number;
  recordsPerSec: number;
  /** MB/s of values (10^6 bytes, as ConsumerPerformance's MB is 2^20: both are given). */
  mbPerSec: number;
  mibPerSec: number;
  /** User + system CPU over the window, and as a share of one core. */
  cpuSeconds: number;
  cpuPercent: number;
  /** getrusage's maximum resident set of the process (MiB). */
  peakRssMb: number;
  gcMs: number;
  gcCount: number;
  /** The longest single collection in the window (ms): set against the longest stall, it says whether that stall can be a pause. */
  maxGcPauseMs: number;
  /** Longest event-loop delay over the window (1 ms resolution: an idle loop shows about 1 ms). */
  maxEventLoopStallMs: number | null;
  /** Delivery - record timestamp, when records were given with timestamps. */
  endToEnd: { count: number; p50: number; p99: number; p999: number; max: number } | null;
}

/**
 * One measuring window: begin() opens it (CPU, GC and the loop monitor start counting), add()
 * counts delivered records, end() closes it; summary() reads the figures. The constructor only
 * starts the GC observer, so GC time before begin() is not counted.
 */
export class PerfMeter {
  readonly latency = new LatencyHistogram();
  records = 0;
  bytes = 0;
  private gcMs = 0;
  private gcCount = 0;
  private maxGcMs = 0;
  private gcOpen = false;
  private readonly gc: PerformanceObserver;
  private readonly loop: IntervalHistogram;
  private t0 = 0;
  private t1 = 0;
  private cpu0: NodeJS.CpuUsage | undefined;
  private cpu1: NodeJS.CpuUsage | undefined;

  constructor() {
    this.gc = new PerformanceObserver((list) => {
      if (!this.gcOpen) return;
      for (const e of list.getEntries()) {
        // Entries arrive after the fact: count only those that started inside the window.
        if (e.startTime < this.t0 || (this.cpu1 !== undefined && e.startTime > this.t1)) continue;
        this.gcMs += e.duration;
        this.gcCount++;
        if (e.duration > this.maxGcMs) this.maxGcMs = e.duration;
      }
    });
    this.gc.observe({ entryTypes: ['gc'] });
    this.loop = monitorEventLoopDelay({ resolution: 1 });
  }

  get begun(): boolean {
    return this.cpu0 !== undefined;
  }

  get ended(): boolean {
    return this.cpu1 !== undefined;
  }

  begin(): void {
    if (this.cpu0) return;
    this.t0 = performance.now();
    this.cpu0 = process.cpuUsage();
    this.gcOpen = true;
    this.loop.enable();
  }

  /** Counts n records of `bytes` value bytes. */
  add(n: number, bytes: number): void {
    this.records += n;
    this.bytes += bytes;
    this.lastAt = performance.now();
    this.lastCpu = process.cpuUsage();
  }

  /** When add() was last called (performance.now()), 0 before; and the CPU usage then. */
  lastAt = 0;
  private lastCpu: NodeJS.CpuUsage | undefined;

  /** One record's end-to-end latency: `now` (epoch ms) against its timestamp. */
  latencyOf(now: number, timestamp: number): void {
    this.latency.add(now - timestamp);
  }

  /**
   * Closes the window now, or at `at` (a performance.now() in the past: the last record, when a
   * run ends by waiting in vain for more, so that the wait is not counted as reading time).
   */
  end(at?: number): void {
    if (this.cpu1 || !this.cpu0) return;
    const atLast = at !== undefined && at === this.lastAt && this.lastCpu !== undefined;
    this.t1 = at !== undefined && at >= this.t0 ? at : performance.now();
    this.cpu1 = atLast ? this.lastCpu! : process.cpuUsage();
    this.loop.disable();
  }

  /** Seconds since begin() (to end() once ended). */
  get elapsed(): number {
    if (!this.cpu0) return 0;
    return ((this.cpu1 ? this.t1 : performance.now()) - this.t0) / 1000;
  }

  /** CPU seconds over the window (to now while it is open). */
  get cpuSeconds(): number {
    if (!this.cpu0) return 0;
    const c = this.cpu1 ?? process.cpuUsage();
    return (c.user - this.cpu0.user + c.system - this.cpu0.system) / 1e6;
  }

  get gcMilliseconds(): number {
    return this.gcMs;
  }

  get maxStallMs(): number | null {
    return this.loop.count > 0 ? round(this.loop.max / 1e6, 2) : null;
  }

  /** Stops the GC observer: call once, after the last summary is read. */
  close(): void {
    this.end();
    this.gcOpen = false;
    this.gc.disconnect();
  }

  summary(): MeterSummary {
    const seconds = this.elapsed;
    const cpu = this.cpuSeconds;
    const h = this.latency;
    return {
      records: this.records,
      bytes: this.bytes,
      seconds: round(seconds, 3),
      recordsPerSec: seconds > 0 ? Math.round(this.records / seconds) : 0,
      mbPerSec: seconds > 0 ? round(this.bytes / 1e6 / seconds, 2) : 0,
      mibPerSec: seconds > 0 ? round(this.bytes / 1048576 / seconds, 2) : 0,
      cpuSeconds: round(cpu, 2),
      cpuPercent: seconds > 0 ? Math.round((cpu / seconds) * 100) : 0,
      peakRssMb: round(process.resourceUsage().maxRSS / 1024, 1),
      gcMs: round(this.gcMs, 1),
      gcCount: this.gcCount,
      maxGcPauseMs: round(this.maxGcMs, 2),
      maxEventLoopStallMs: this.maxStallMs,
      endToEnd: h.count > 0 ? { count: h.count, p50: h.percentile(50), p99: h.percentile(99), p999: h.percentile(99.9), max: round(h.max, 3) } : null,
    };
  }
}

function round(n: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
