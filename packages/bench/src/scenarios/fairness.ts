// Latency under load (issue 16's fairness scenario): the end-to-end latency of a live partition
// written at a steady rate (ProducerPerformance, 100 B records with CreateTime) while the same
// consumer drains a backlog of another topic; p99 before the drain and during it. kwire
// (clients/kwire-fairness.ts) and the Java consumer (BenchJava fairness) in the same probe, each
// at its default settings. The backlog topic is loaded once; each run reads it from the start,
// with a fresh live topic of its own.
import { createTopic, producerPerformance } from '@kwire/broker';
import { runJavaFairness } from '../orchestrator/java.js';
import { spawnNodeClient } from '../orchestrator/node-client.js';
import { loadTopic } from '../orchestrator/topics.js';
import { int } from '../report/table.js';
import type { FairnessFigures, RunRecord, ScenarioInfo } from '../report/types.js';
import { availableClients, failedRun, label, rotate, skippedRun, step, topicFor, type Ctx } from './context.js';

export const FAIRNESS_CLIENTS = ['kwire', 'java'] as const;
/** --quick measures kwire alone (a JVM start and a drain fewer). */
export function fairnessClients(mode: 'full' | 'quick'): readonly string[] {
  return mode === 'quick' ? ['kwire'] : FAIRNESS_CLIENTS;
}
const WARMUP_MS = 2_000;

/** Before the drain: the warm-up (excluded) and this long measured, then the backlog is resumed. */
export function beforeMs(s: ScenarioInfo): number {
  return s.seconds && s.seconds < 10 ? 2_000 : 4_000;
}

export async function fairnessScenario(ctx: Ctx, s: ScenarioInfo): Promise<void> {
  const backlogRecords = s.backlogRecords ?? 1_000_000;
  const backlogSize = s.backlogRecordSize ?? 1024;
  const backlogPartitions = s.backlogPartitions ?? 12;
  let backlog: string;
  if (s.topicOf) backlog = topicFor(ctx, s).topic;
  else {
    backlog = `bench-${s.id}-backlog-${Date.now().toString(36)}`;
    step(ctx, `${s.id}: loading the backlog, ${int(backlogRecords)} records of ${backlogSize} B over ${backlogPartitions} partitions, into ${backlog}`);
    const loaded = await loadTopic(ctx.target, { topic: backlog, partitions: backlogPartitions, records: backlogRecords, recordSize: backlogSize, compression: 'none' });
    ctx.progress.log(`  loaded in ${loaded.seconds.toFixed(1)} s (${int(loaded.producedRecordsPerSec)} records/s)`);
  }
  const clients = availableClients(ctx, s, fairnessClients(ctx.o.mode));
  for (let rep = 0; rep < s.repetitions; rep++) {
    for (const client of rotate(clients, rep)) {
      step(ctx, `${s.id} rep ${rep + 1}/${s.repetitions}: ${label(client)}, ${int(s.rate)} records/s on the live partition, the backlog drained after ${(WARMUP_MS + beforeMs(s)) / 1000} s`);
      let run: RunRecord;
      try {
        run = { ...(await fairnessRun(ctx, s, client, { topic: backlog, partitions: backlogPartitions, records: backlogRecords, recordSize: backlogSize })), rep };
      } catch (err) {
        run = failedRun(s, client, rep, (err as Error).message);
      }
      ctx.runs.push(run);
      const f = run.fairness;
      ctx.progress.log(
        `  ${run.status === 'ok' && f ? `p99 ${f.before.p99} ms before, ${f.during.p99} ms during the drain (p50 ${f.before.p50} / ${f.during.p50} ms; ${int(f.backlogRecords)} backlog records in ${f.drainSeconds} s), verified` : `${run.status.toUpperCase()}: ${run.reason ?? ''}`}`,
      );
    }
  }
  if (clients.length === 0) ctx.runs.push(skippedRun(s, 'kwire', 'no client available'));
}

interface Backlog {
  topic: string;
  partitions: number;
  records: number;
  recordSize: number;
}

async function fairnessRun(ctx: Ctx, s: ScenarioInfo, client: string, b: Backlog): Promise<RunRecord> {
  const topic = `bench-${s.id}-live-${client}-${Date.now().toString(36)}`;
  await createTopic(ctx.target, { topic, partitions: 1 });
  const live = (s.rate ?? 10_000) * (s.seconds ?? 14);
  const produce = () => producerPerformance(ctx.target, { topic, numRecords: live, recordSize: s.recordSize, throughput: s.rate ?? 10_000, props: { 'linger.ms': 0 } });
  const run: RunRecord = { ...skippedRun(s, client, ''), status: 'ok', expectedRecords: live };
  delete run.reason;
  let fairness: FairnessFigures | undefined;
  let error: string | undefined;
  if (client === 'java') {
    const j = await runJavaFairness(
      ctx.target,
      { topic, records: live, backlog: b.topic, backlogPartitions: b.partitions, backlogRecords: b.records, warmupMs: WARMUP_MS, beforeMs: beforeMs(s) },
      produce,
    );
    fairness = j.fairness;
    error = j.error;
    run.records = j.fairness?.liveRecords ?? null;
    run.peakRssMb = j.peakRssMb;
    run.cpuSeconds = j.cpuSeconds;
  } else {
    let ready!: () => void;
    const isReady = new Promise<void>((r) => (ready = r));
    const child = spawnNodeClient({
      node: ctx.node.path,
      client: 'kwire-fairness',
      options: {
        bootstrap: ctx.target.bootstrap,
        topic,
        partitions: 1,
        records: live,
        mode: 'fairness',
        backlogTopic: b.topic,
        backlogPartitions: b.partitions,
        backlogRecords: b.records,
        warmupMs: WARMUP_MS,
        beforeMs: beforeMs(s),
        idleTimeoutMs: 60_000,
      },
      timeoutMs: 300_000,
      onMessage: (m) => {
        if (m.ev === 'ready') ready();
      },
    });
    try {
      await Promise.race([isReady, child.done]);
      await new Promise((r) => setTimeout(r, 500));
      await produce();
      const r = await child.done;
      fairness = r.fairness;
      error = r.error;
      run.records = r.records - (r.fairness?.backlogRecords ?? 0);
      run.bytes = r.bytes;
      run.checksum = null;
      run.cpuSeconds = r.cpuSeconds;
      run.peakRssMb = r.peakRssMb;
      run.gcMs = r.gcMs;
      run.maxEventLoopStallMs = r.maxEventLoopStallMs;
      run.p99EventLoopDelayMs = r.p99EventLoopDelayMs ?? null;
      if (r.notes?.length) run.notes = r.notes;
    } finally {
      child.child.kill('SIGKILL');
    }
  }
  if (fairness) run.fairness = fairness;
  if (error) Object.assign(run, { status: 'failed', reason: error });
  else if (!fairness) Object.assign(run, { status: 'failed', reason: 'no fairness figures' });
  else if (fairness.backlogRecords !== b.records) Object.assign(run, { status: 'failed', reason: `drained ${fairness.backlogRecords} backlog records, expected ${b.records}` });
  else if (run.records !== live) Object.assign(run, { status: 'failed', reason: `read ${run.records} live records, expected ${live}` });
  else if (fairness.during.count === 0) Object.assign(run, { status: 'failed', reason: 'no live record was produced during the drain (the producer ended first)' });
  return run;
}
