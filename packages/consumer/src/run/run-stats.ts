import { LatencyWindow } from '../metrics/latency.js';
import type { ProcessingMetrics } from '../metrics/types.js';

/** What a running scheduler tells the stats when asked. */
export interface RunStatsSource {
  readonly inFlightRecords: number;
  spans(): { topic: string; partition: number; span: number }[];
}

/**
 * run()'s counters, kept by the consumer across runs (metrics() reads them): records finished,
 * skipped, retried and passed over as finished before, how long records waited for their key and a
 * slot, and, while a run is under way, what it has in flight.
 */
export class RunStats {
  finished = 0;
  skipped = 0;
  retried = 0;
  /** Records not handed to the callback because they were finished before (commit metadata, an earlier delivery). */
  alreadyFinished = 0;
  maxConcurrency = 0;
  private readonly keyWait = new LatencyWindow();
  private source: RunStatsSource | undefined;

  started(source: RunStatsSource, maxConcurrency: number): void {
    this.source = source;
    this.maxConcurrency = maxConcurrency;
  }

  stopped(source: RunStatsSource): void {
    if (this.source === source) this.source = undefined;
  }

  waited(ms: number): void {
    this.keyWait.record(ms);
  }

  snapshot(commitMetadataBytes: Record<string, number>): ProcessingMetrics {
    const unfinishedSpan: Record<string, number> = {};
    let unfinishedSpanMax = 0;
    for (const s of this.source?.spans() ?? []) {
      unfinishedSpan[`${s.topic}-${s.partition}`] = s.span;
      if (s.span > unfinishedSpanMax) unfinishedSpanMax = s.span;
    }
    return {
      inFlight: this.source?.inFlightRecords ?? 0,
      maxConcurrency: this.maxConcurrency,
      finished: this.finished,
      skipped: this.skipped,
      retried: this.retried,
      alreadyFinished: this.alreadyFinished,
      unfinishedSpan,
      unfinishedSpanMax,
      commitMetadataBytes,
      keyWait: this.keyWait.summary(),
    };
  }
}
