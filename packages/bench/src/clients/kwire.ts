import { createConsumer, type BatchCursor, type ConsumerBatch } from '@kwire/consumer';
import { headerHash, headerHashRange, Meter, recordHashRange, ValueDigest, valueHash, type RunMetrics } from '../meter.js';
import { now, Run, type ClientOptions, type ClientReport } from './common.js';

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

/**
 * kwire in the benchmark's modes (see ClientOptions): its normal consumer API, `for await` over
 * batches, every value touched through record.value. Throughput, alloc and latency runs assign
 * every partition at offset 0 (no group: kwire needs none to read a topic); group and rebalance
 * runs subscribe with a group id.
 */
export async function kwireClient(options: ClientOptions): Promise<ClientReport> {
  const run = new Run('kwire', options);
  const mode = run.mode;
  const grouped = mode === 'group' || mode === 'rebalance';
  if (mode === 'group') await run.waitGo();
  const tStart = run.start();
  const consumer = createConsumer({
    bootstrapServers: options.bootstrap,
    autoOffsetReset: 'earliest',
    clientId: 'kwire-bench',
    ...(grouped ? { groupId: options.groupId } : {}),
    ...options.config,
  });
  // Ends the loop below when the run is complete, stopped by the orchestrator or idle too long.
  const closed = run.finishedPromise.then(() => consumer.close());
  if (grouped) await consumer.subscribe({ topics: [options.topic] });
  else await consumer.assign(Array.from({ length: options.partitions }, (_, partition) => ({ topic: options.topic, partition, offset: 0 })));
  run.ready();
  const digest = run.digest;
  // settings.cursor: read through ConsumerBatch.cursor() (the 'kwire-cursor' variant; throughput and alloc runs).
  const cursorPath = options.settings?.cursor === true && (mode === 'throughput' || mode === 'alloc');
  let cursor: BatchCursor | undefined;
  try {
    for await (const batch of consumer) {
      if (cursorPath) {
        // The zero-allocation path: one reused record object, bytes read by position.
        cursor = batch.cursor(cursor);
        if (run.fullTouch) touchFullByCursor(run, cursor);
        else touchValuesByCursor(digest, cursor);
        if (run.batch(batch.count)) break;
        continue;
      }
      const records = batch.records;
      const n = records.length;
      if (mode === 'latency') {
        const at = now();
        for (let i = 0; i < n; i++) {
          const r = records[i]!;
          digest.add(r.value as Buffer | null);
          run.latencyOf(at, r.timestamp);
        }
      } else if (mode === 'group') {
        groupBatch(run, batch as ConsumerBatch<unknown, Buffer | null>);
      } else if (run.fullTouch) {
        for (let i = 0; i < n; i++) {
          const r = records[i]!;
          const hs = r.headers;
          let hh = 0;
          for (let j = 0; j < hs.length; j++) hh ^= headerHash(hs[j]!.key, hs[j]!.value);
          run.full(r.value as Buffer | null, r.key as Buffer | null, hh, r.offsetNumber, r.timestamp);
        }
      } else {
        for (let i = 0; i < n; i++) digest.add(records[i]!.value as Buffer | null);
      }
      if (mode === 'rebalance' && n > 0) {
        run.batch(n);
        run.finish();
        break;
      }
      if (run.batch(n)) break;
    }
  } catch (err) {
    run.error = `kwire: ${(err as Error).message}`;
  }
  run.finish();
  const m = consumer.metrics();
  await closed;
  // How the fetcher worked: the count of Fetch requests explains a good part of the cost per byte.
  if (mode === 'throughput') {
    const l = m.fetchLatency;
    run.notes.push(`kwire: ${m.fetches} fetches (${m.emptyFetches} empty), ${(m.bytesFetched / 1048576).toFixed(0)} MiB fetched; fetch latency p50/p90/p99 ${l.p50Ms}/${l.p90Ms}/${l.p99Ms} ms`);
  }
  const extra: Partial<ClientReport> = {};
  if (mode === 'rebalance' && run.tFirst !== null) extra.joinToFirstRecordMs = Math.round((run.tFirst - tStart) * 100) / 100;
  return run.report(extra);
}

/** Every value of the cursor's batch into the digest, by position (no Buffer view per record). */
function touchValuesByCursor(digest: ValueDigest, cursor: BatchCursor): void {
  for (let r = cursor.next(); r !== null; r = cursor.next()) digest.addRange(r.data, r.valueOffset, r.valueLength);
}

/** The full touch through the cursor: key, every value byte, headers, offset and timestamp, by position. */
function touchFullByCursor(run: Run, cursor: BatchCursor): void {
  for (let r = cursor.next(); r !== null; r = cursor.next()) {
    const data = r.data;
    let hh = 0;
    for (let j = 0; j < r.headerCount; j++) {
      r.header(j);
      hh ^= headerHashRange(data, r.headerKeyOffset, r.headerKeyLength, r.headerValueOffset, r.headerValueLength);
    }
    const h = recordHashRange(data, r.valueOffset, r.valueLength, r.keyOffset, r.keyLength, hh, r.offsetNumber, r.timestamp);
    run.digest.addHash(h, r.valueLength < 0 ? 0 : r.valueLength);
  }
}

/** A group member's batch: value hashes by offset, so that the orchestrator can merge members. */
function groupBatch(run: Run, batch: ConsumerBatch<unknown, Buffer | null>): void {
  const records = batch.records;
  const n = records.length;
  if (n === 0) return;
  // Offsets are contiguous within a batch here (no compaction, no transactions): read the first
  // one (a bigint) once per batch rather than per record, and check the claim with the last.
  const first = Number(batch.firstOffset);
  if (Number(batch.lastOffset) - first + 1 !== n) run.error ??= `non-contiguous batch ${batch.partition}@${first}`;
  for (let i = 0; i < n; i++) {
    const v = records[i]!.value;
    if (v === null) continue;
    const h = valueHash(v);
    run.digest.addHash(h, v.length);
    run.offsetSeen(batch.partition, first + i, h);
  }
}
