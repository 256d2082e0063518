/**
 * A latency's count, average, maximum and recent percentiles: the meter's record, commit and
 * rebalance latencies, and fetch latency, from a Fetch request's send until its whole answer is
 * handed to the fetcher: the Java consumer's fetch-latency-avg and fetch-latency-max, plus
 * percentiles over the most recent answers. With data waiting on the broker it is what one fetch
 * cycle costs; on an idle topic it includes the broker's long poll (fetch.max.wait.ms), as Java's does.
 *
 * Recording is one store into a fixed ring (no allocation per Fetch); percentiles are computed
 * when asked, over at most WINDOW samples.
 */
const WINDOW = 1024;

export interface LatencySummary {
  /** Answers measured since the start. */
  count: number;
  avgMs: number;
  maxMs: number;
  /** Percentiles over the last `window` answers (0 before the first). */
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  window: number;
}

export class LatencyWindow {
  private readonly ring = new Float64Array(WINDOW);
  private count = 0;
  private totalMs = 0;
  private maxMs = 0;

  record(ms: number): void {
    this.ring[this.count % WINDOW] = ms;
    this.count++;
    this.totalMs += ms;
    if (ms > this.maxMs) this.maxMs = ms;
  }

  summary(): LatencySummary {
    const n = Math.min(this.count, WINDOW);
    const recent = this.ring.slice(0, n).sort();
    // Nearest rank: the smallest sample with at least p of the window at or below it.
    const at = (p: number) => (n === 0 ? 0 : round3(recent[Math.max(0, Math.ceil(p * n) - 1)]!));
    return {
      count: this.count,
      avgMs: this.count === 0 ? 0 : round3(this.totalMs / this.count),
      maxMs: round3(this.maxMs),
      p50Ms: at(0.5),
      p90Ms: at(0.9),
      p99Ms: at(0.99),
      window: n,
    };
  }
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
