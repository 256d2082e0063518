// Latency under load (issue 16's fairness scenario): one kwire consumer at its defaults assigned
// the live topic's partition 0 and every partition of a backlog topic from the start, the backlog
// paused. ProducerPerformance writes the live partition at a steady rate; `warmupMs` after the
// first live record plus `beforeMs`, the backlog is resumed and drained. End-to-end latency of a
// live record = its batch's delivery - CreateTime; records produced before the resume are
// "before" (the first warmupMs excluded), records produced between the resume and the backlog's
// last record "during". BenchJava's `fairness` does the same with the Java consumer. kwire's
// "during" is also split at the moment the record's Fetch answer arrived (ConsumerBatch.fetchedAt),
// with the event loop's largest stall during the drain beside it, and (Linux) how long the main
// thread ran and how long it waited for a CPU in each phase: the miss is located, not guessed.
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createConsumer } from '@kwire/consumer';
import { LatencyHistogram, now, Run, type ClientOptions, type ClientReport } from './common.js';
import type { CpuShare, LatencyFigures } from '../report/types.js';

export async function kwireFairnessClient(options: ClientOptions): Promise<ClientReport> {
  const liveRecords = options.records;
  const backlogRecords = options.backlogRecords ?? 0;
  const warmupMs = options.warmupMs ?? 2_000;
  const beforeMs = options.beforeMs ?? 4_000;
  // Run counts every record (live and backlog) and ends the loop when both are in.
  const run = new Run('kwire', { ...options, records: liveRecords + backlogRecords, mode: 'fairness' });
  run.start();
  const consumer = createConsumer({ bootstrapServers: options.bootstrap, autoOffsetReset: 'earliest', clientId: 'kwire-bench', ...options.config });
  const closed = run.finishedPromise.then(() => consumer.close());
  const backlog = Array.from({ length: options.backlogPartitions ?? 1 }, (_, partition) => ({ topic: options.backlogTopic!, partition }));
  await consumer.assign([{ topic: options.topic, partition: 0, offset: 0 }, ...backlog.map((tp) => ({ ...tp, offset: 0 }))]);
  consumer.pause(backlog);
  run.ready();
  const ts = new Float64Array(liveRecords);
  const lat = new Float64Array(liveRecords);
  /** CreateTime to the arrival of the record's Fetch answer (the rest of `lat` is in the consumer). */
  const toAnswer = new Float64Array(liveRecords);
  let live = 0;
  let drained = 0;
  let firstLiveAt = 0;
  let resumedAt = 0;
  let drainEnd = 0;
  let early = 0;
  let resumeTimer: NodeJS.Timeout | undefined;
  let warmedTimer: NodeJS.Timeout | undefined;
  /** The main thread's schedstat at the end of the warm-up, at the resume and at the drain's end. */
  let atWarmed: Schedstat | undefined;
  let atResume: Schedstat | undefined;
  let atDrainEnd: Schedstat | undefined;
  // The event loop's largest stall during the drain, as Run and kwire perf measure it (a 1 ms
  // monitorEventLoopDelay histogram), enabled at the resume and disabled at the drain's end.
  const drainLoop = monitorEventLoopDelay({ resolution: 1 });
  const digest = run.digest;
  try {
    for await (const batch of consumer) {
      const at = now();
      const records = batch.records;
      const n = records.length;
      if (batch.topic === options.topic) {
        if (firstLiveAt === 0 && n > 0) {
          firstLiveAt = at;
          warmedTimer = setTimeout(() => (atWarmed = schedstat()), warmupMs);
          resumeTimer = setTimeout(() => {
            atResume = schedstat();
            consumer.resume(backlog);
            resumedAt = now();
            drainLoop.enable();
          }, warmupMs + beforeMs);
        }
        const fetchedAt = batch.fetchedAt;
        for (let i = 0; i < n; i++) {
          const r = records[i]!;
          digest.add(r.value as Buffer | null);
          if (live < liveRecords) {
            ts[live] = r.timestamp;
            lat[live] = at - r.timestamp;
            toAnswer[live] = fetchedAt - r.timestamp;
          }
          live++;
        }
      } else {
        for (let i = 0; i < n; i++) digest.add(records[i]!.value as Buffer | null);
        // Backlog records delivered before the resume (a fetch sent before pause() took effect)
        // would make the drain look shorter: counted and reported.
        if (resumedAt === 0) early += n;
        drained += n;
        if (drainEnd === 0 && drained >= backlogRecords) {
          drainEnd = at;
          atDrainEnd = schedstat();
          drainLoop.disable();
        }
      }
      if (run.batch(n)) break;
    }
  } catch (err) {
    run.error = `kwire: ${(err as Error).message}`;
  }
  clearTimeout(resumeTimer);
  clearTimeout(warmedTimer);
  drainLoop.disable();
  const maxLoopStallMs = drainLoop.count > 0 ? drainLoop.max / 1e6 : 0;
  run.finish();
  await closed;
  const firstTs = live > 0 ? ts[0]! : 0;
  const before = new LatencyHistogram();
  const during = new LatencyHistogram();
  const duringToAnswer = new LatencyHistogram();
  const duringInConsumer = new LatencyHistogram();
  for (let i = 0; i < Math.min(live, liveRecords); i++) {
    const t = ts[i]!;
    if (t < firstTs + warmupMs) continue;
    if (resumedAt === 0 || t < resumedAt) before.add(lat[i]!);
    else if (drainEnd > 0 && t <= drainEnd) {
      during.add(lat[i]!);
      // fetchedAt is whole milliseconds (Date.now()): either side may be off by up to 1 ms.
      duringToAnswer.add(Math.max(0, toAnswer[i]!));
      duringInConsumer.add(Math.max(0, lat[i]! - toAnswer[i]!));
    }
  }
  const drainSeconds = drainEnd > 0 && resumedAt > 0 ? Math.round(drainEnd - resumedAt) / 1000 : 0;
  if (!run.error && resumedAt === 0) run.error = 'the backlog was never resumed (no live record arrived)';
  if (early > 0) run.notes.push(`kwire-fairness: ${early} backlog records were delivered before the backlog was resumed`);
  return run.report({
    fairness: {
      before: figures(before),
      during: figures(during),
      backlogRecords: drained,
      drainSeconds,
      drainRecordsPerSec: drainSeconds > 0 ? Math.round(drained / drainSeconds) : 0,
      split: {
        toAnswer: figures(duringToAnswer),
        inConsumer: figures(duringInConsumer),
        maxLoopStallMs: Math.round(maxLoopStallMs * 100) / 100,
        ...(atWarmed && atResume && atDrainEnd ? { cpu: { before: share(atWarmed, atResume), during: share(atResume, atDrainEnd) } } : {}),
      },
    },
  });
}

function figures(h: LatencyHistogram): LatencyFigures {
  // A percentile is its bucket's upper edge: never above the exact maximum.
  const max = Math.round(h.max * 1000) / 1000;
  const p = (q: number) => (h.count > 0 ? Math.min(h.percentile(q), max) : 0);
  return { count: h.count, p50: p(50), p99: p(99), p999: p(99.9), max };
}

/** The main thread's CPU time and run-queue wait so far (ms), with the wall clock; undefined off Linux. */
interface Schedstat {
  at: number;
  runMs: number;
  waitMs: number;
}

function schedstat(): Schedstat | undefined {
  try {
    // /proc/self/schedstat is the thread group leader's: the JS thread, not libuv's pool or V8's
    // GC helpers. Fields: ns on a CPU, ns runnable but waiting for one, timeslices.
    const [run, wait] = readFileSync('/proc/self/schedstat', 'utf8').split(' ');
    const runMs = Number(run) / 1e6;
    const waitMs = Number(wait) / 1e6;
    return Number.isFinite(runMs) && Number.isFinite(waitMs) ? { at: now(), runMs, waitMs } : undefined;
  } catch {
    return undefined;
  }
}

/** What the main thread did between two readings, per second of wall clock. */
function share(from: Schedstat, to: Schedstat): CpuShare {
  const seconds = Math.max(1e-3, (to.at - from.at) / 1000);
  const round = (ms: number) => Math.round(ms / seconds);
  return { runMsPerSec: round(to.runMs - from.runMs), waitMsPerSec: round(to.waitMs - from.waitMs) };
}
