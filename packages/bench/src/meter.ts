import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';

/** What one client run measured, the fields the benchmark report and the JSON output use. */
export interface RunMetrics {
  records: number;
  /** Value bytes delivered. */
  bytes: number;
  seconds: number;
  recordsPerSec: number;
  /** MiB of values per second. */
  mbPerSec: number;
  /** User + system CPU of the process over the run. */
  cpuSeconds: number;
  peakRssMb: number;
  /** RSS at the end of each pass (when a run has several), to show whether memory stays flat. */
  rssByPassMb: number[];
  gcMs: number;
  gcCount: number;
  /** Longest event-loop stall seen over the whole run, start-up included (perf_hooks.monitorEventLoopDelay at 1 ms resolution: a value is the time a 1 ms timer waited, so an idle loop shows about 1 ms). */
  maxEventLoopStallMs: number;
  p99EventLoopDelayMs: number;
  /** The same after the first pass: consuming at full speed, connections open, code compiled. */
  steadyMaxEventLoopStallMs: number | null;
  steadyP99EventLoopDelayMs: number | null;
  /** XOR-and-sum digest of every value, so that clients can be checked against each other. */
  checksum: string;
}

/**
 * Measures a consumption run from inside the process that consumes: wall time, CPU, peak RSS
 * (sampled every 50 ms), GC time and the event loop's longest stall.
 */
export class Meter {
  private readonly started = performance.now();
  private readonly cpu = process.cpuUsage();
  private readonly loop = monitorEventLoopDelay({ resolution: 1 });
  private readonly steadyLoop = monitorEventLoopDelay({ resolution: 1 });
  private steady = false;
  private readonly gc: PerformanceObserver;
  private readonly sampler: NodeJS.Timeout;
  private peakRss = process.memoryUsage.rss();
  private gcMs = 0;
  private gcCount = 0;
  readonly rssByPass: number[] = [];

  constructor() {
    this.loop.enable();
    this.gc = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        this.gcMs += e.duration;
        this.gcCount++;
      }
    });
    this.gc.observe({ entryTypes: ['gc'] });
    this.sampler = setInterval(() => {
      const rss = process.memoryUsage.rss();
      if (rss > this.peakRss) this.peakRss = rss;
    }, 50);
    this.sampler.unref();
  }

  endPass(): void {
    this.rssByPass.push(round(process.memoryUsage.rss() / 1048576));
    if (!this.steady) {
      this.steady = true;
      this.steadyLoop.enable();
    }
  }

  get gcs(): number {
    return this.gcCount;
  }

  stop(records: number, bytes: number, checksum: string): RunMetrics {
    clearInterval(this.sampler);
    this.gc.disconnect();
    this.loop.disable();
    this.steadyLoop.disable();
    // A single-pass run has no steady part: only the whole-run figures.
    const steadySamples = this.rssByPass.length > 1 && this.steadyLoop.count > 0;
    const seconds = (performance.now() - this.started) / 1000;
    const cpu = process.cpuUsage(this.cpu);
    const rss = process.memoryUsage.rss();
    if (rss > this.peakRss) this.peakRss = rss;
    return {
      records,
      bytes,
      seconds: round(seconds),
      recordsPerSec: Math.round(records / seconds),
      mbPerSec: round(bytes / 1048576 / seconds),
      cpuSeconds: round((cpu.user + cpu.system) / 1e6),
      peakRssMb: round(this.peakRss / 1048576),
      rssByPassMb: this.rssByPass,
      gcMs: round(this.gcMs),
      gcCount: this.gcCount,
      maxEventLoopStallMs: round(this.loop.max / 1e6),
      p99EventLoopDelayMs: round(this.loop.percentile(99) / 1e6),
      steadyMaxEventLoopStallMs: steadySamples ? round(this.steadyLoop.max / 1e6) : null,
      steadyP99EventLoopDelayMs: steadySamples ? round(this.steadyLoop.percentile(99) / 1e6) : null,
      checksum,
    };
  }
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}

/**
 * The hash ValueDigest folds in for one value: FNV-1a over the length and the first and last 8
 * bytes. Cheap (a 10 KB value costs the same as a 100 B one), and enough to catch a wrong value.
 */
export function valueHash(value: Uint8Array): number {
  return valueHashRange(value, 0, value.length);
}

/** valueHash of data[start, start + length), for readers that hold positions rather than views (the cursor). */
export function valueHashRange(data: Uint8Array, start: number, length: number): number {
  let h = 0x811c9dc5 ^ length;
  const end = start + length;
  for (let i = start; i < start + 8 && i < end; i++) h = Math.imul(h ^ data[i]!, 0x01000193);
  for (let i = Math.max(start + 8, end - 8); i < end; i++) h = Math.imul(h ^ data[i]!, 0x01000193);
  return h | 0;
}

/**
 * Order-independent digest of values: sum of lengths and XOR of valueHash per value. Clients that
 * deliver the same records in any order and any grouping agree; digests of disjoint sets combine
 * (sums add, XORs XOR), which is how a group's members are put together.
 */
export class ValueDigest {
  private sum = 0;
  private xor = 0;
  add(value: Uint8Array | null): void {
    if (value === null) return;
    this.sum += value.length;
    this.xor ^= valueHash(value);
  }
  /** The same as add() for the value at data[start, start + length) (length -1: null), with no view made. */
  addRange(data: Uint8Array, start: number, length: number): void {
    if (length < 0) return;
    this.sum += length;
    this.xor ^= valueHashRange(data, start, length);
  }
  /** Folds in a value known only by its hash and length. */
  addHash(h: number, length: number): void {
    this.sum += length;
    this.xor ^= h;
  }
  get bytes(): number {
    return this.sum;
  }
  toString(): string {
    return `${this.sum}:${(this.xor >>> 0).toString(16)}`;
  }
}

/** FNV-1a over every byte of `b` (full-touch workload: every value byte is read). */
export function fnvBytes(h: number, b: Uint8Array | null): number {
  return b === null ? fnvRange(h, NO_BYTES, 0, -1) : fnvRange(h, b, 0, b.length);
}

const NO_BYTES = new Uint8Array(0);

/** fnvBytes of data[start, start + length) (length -1: null). */
export function fnvRange(h: number, data: Uint8Array, start: number, length: number): number {
  if (length < 0) return Math.imul(h ^ 0xff, 0x01000193);
  const end = start + length;
  for (let i = start; i < end; i++) h = Math.imul(h ^ data[i]!, 0x01000193);
  return Math.imul(h ^ length, 0x01000193);
}

/** FNV-1a over the UTF-16 code units of a string (header keys: ASCII in the bench's data). */
export function fnvString(h: number, s: string): number {
  const n = s.length;
  for (let i = 0; i < n; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return Math.imul(h ^ n, 0x01000193);
}

/**
 * The full-touch hash of one record, the same in every client (and in BenchJava.java): FNV-1a
 * over every byte of the value, then the key, then the headers (each header's key and value
 * hashed on its own and XORed, so the order a library lists them in does not matter), mixed with
 * the low 32 bits of the offset and of the timestamp. Clients fold it into ValueDigest with
 * addHash, so the digest of a run is independent of delivery order like the value-only one.
 */
export function recordHash(value: Uint8Array | null, key: Uint8Array | null, headersHash: number, offset: number, timestamp: number): number {
  return recordHashTail(fnvBytes(fnvBytes(0x811c9dc5, value), key), headersHash, offset, timestamp);
}

/** recordHash of a record known by positions into `data` (lengths -1: null): the cursor's reader. */
export function recordHashRange(data: Uint8Array, valueStart: number, valueLength: number, keyStart: number, keyLength: number, headersHash: number, offset: number, timestamp: number): number {
  return recordHashTail(fnvRange(fnvRange(0x811c9dc5, data, valueStart, valueLength), data, keyStart, keyLength), headersHash, offset, timestamp);
}

function recordHashTail(h: number, headersHash: number, offset: number, timestamp: number): number {
  h = Math.imul(h ^ headersHash, 0x01000193);
  h = Math.imul(h ^ (offset | 0), 0x01000193);
  h = Math.imul(h ^ ((timestamp % 4294967296) | 0), 0x01000193);
  return h | 0;
}

/** headerHash of a header known by positions into `data` (its key as bytes; value length -1: null). */
export function headerHashRange(data: Uint8Array, keyStart: number, keyLength: number, valueStart: number, valueLength: number): number {
  return fnvRange(fnvRange(0x811c9dc5, data, keyStart, keyLength), data, valueStart, valueLength) | 0;
}

/** One header's contribution to recordHash's headersHash (XOR them over a record's headers). */
export function headerHash(key: string | Uint8Array, value: Uint8Array | null): number {
  // An ASCII key hashes the same as a string or as bytes: libraries hand it over either way.
  return fnvBytes(typeof key === 'string' ? fnvString(0x811c9dc5, key) : fnvBytes(0x811c9dc5, key), value) | 0;
}
