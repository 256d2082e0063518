import { createConsumer } from '@kwire/consumer';
import { Meter, ValueDigest, type RunMetrics } from '../meter.js';

export interface KwireRunOptions {
  bootstrap: string;
  topic: string;
  partitions: number;
  /** Records per pass (the topic must hold at least this many). */
  records: number;
  /** Read the topic this many times (seeking back to the start), to run long on little data. */
  passes?: number;
  /** Extra consumer options. */
  config?: Record<string, unknown>;
  /**
   * After the passes, measure heap bytes allocated per record over this many records in a window
   * without garbage collection (needs --expose-gc, and a young generation large enough to hold the
   * window: --min-semi-space-size=128 --max-semi-space-size=128).
   */
  allocWindow?: number;
}

export interface KwireRunMetrics extends RunMetrics {
  allocBytesPerRecord?: number;
}

/**
 * kwire through its normal consumer API, touching every value (length and a digest of its bytes),
 * as an application would.
 */
export async function runKwire(options: KwireRunOptions): Promise<KwireRunMetrics> {
  const consumer = createConsumer({ bootstrapServers: options.bootstrap, autoOffsetReset: 'earliest', ...options.config });
  const tps = Array.from({ length: options.partitions }, (_, partition) => ({ topic: options.topic, partition }));
  await consumer.assign(tps.map((tp) => ({ ...tp, offset: 0 })));
  const meter = new Meter();
  const digest = new ValueDigest();
  let total = 0;
  const passes = options.passes ?? 1;
  for (let pass = 0; pass < passes; pass++) {
    if (pass > 0) for (const tp of tps) consumer.seek(tp, 0n);
    let n = 0;
    for await (const batch of consumer) {
      for (const r of batch.records) digest.add(r.value as Buffer | null);
      n += batch.records.length;
      if (n >= options.records) break;
    }
    total += n;
    meter.endPass();
  }
  const result: KwireRunMetrics = meter.stop(total, digest.bytes, digest.toString());
  const gc = (globalThis as { gc?: () => void }).gc;
  if (options.allocWindow && gc) result.allocBytesPerRecord = await allocationPerRecord(consumer, tps, options.allocWindow, gc);
  await consumer.close();
  return result;
}

/**
 * Heap bytes allocated per record: collect, read heapUsed, consume `window` records, read heapUsed
 * again; valid only if no collection ran in between (checked, retried up to 5 times).
 */
async function allocationPerRecord(consumer: ReturnType<typeof createConsumer>, tps: { topic: string; partition: number }[], window: number, gc: () => void): Promise<number | undefined> {
  const { PerformanceObserver } = await import('node:perf_hooks');
  let collections = 0;
  const observer = new PerformanceObserver((list) => (collections += list.getEntries().length));
  observer.observe({ entryTypes: ['gc'] });
  try {
    for (let attempt = 0; attempt < 5; attempt++) {
      for (const tp of tps) consumer.seek(tp, 0n);
      // Let the first fetches land so that the window measures steady-state consumption.
      const it = consumer[Symbol.asyncIterator]();
      let first = await it.next();
      gc();
      // GC entries reach the observer asynchronously: let the forced one land before counting.
      await new Promise((r) => setTimeout(r, 20));
      const before = collections;
      const heap = process.memoryUsage().heapUsed;
      const digest = new ValueDigest();
      let n = 0;
      while (!first.done && n < window) {
        for (const r of first.value.records) digest.add(r.value as Buffer | null);
        n += first.value.records.length;
        first = await it.next();
      }
      const grown = process.memoryUsage().heapUsed - heap;
      await it.return?.();
      await new Promise((r) => setTimeout(r, 20));
      if (collections === before && n > 0) return Math.round(grown / n);
    }
    return undefined;
  } finally {
    observer.disconnect();
  }
}
