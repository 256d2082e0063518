// The handler-bound family (issue 31): what a service sees when its handler does I/O (awaits 5 ms)
// or burns CPU (1 ms), kwire's run({ maxConcurrency, ordering, worker }) against kafkajs,
// @platformatic/kafka and Confluent's Java parallel-consumer. One keyed topic (HandlerTopic.java:
// 200,000 records of 100 B over 2,000 keys and 12 partitions, values "key|seq|..."), loaded once;
// each row one run in a process of its own, in a fresh group, stopping at exactly the target count
// of distinct records handled or after its time limit (the slow peers: their first 30 s).
//
// Every run is checked (clients/handler-check.ts, BenchParallel.java): a row whose setting
// promises per-key order (kwire's 'key' and 'partition', kafkajs's partition order, the
// parallel-consumer's KEY) fails when a key's records ran out of order or overlapped, as does any
// row with a duplicate or a key that does not match its value, or one that fell short without
// reaching its time limit.
import { createTopic } from '@kwire/broker';
import type { HandlerReport } from '../clients/handler-check.js';
import type { HandlerSettings } from '../clients/handler-settings.js';
import { spawnNodeClient } from '../orchestrator/node-client.js';
import { ensureParallelConsumer, produceHandlerTopic, runParallelConsumer, type ParallelConsumerJars } from '../orchestrator/parallel-consumer.js';
import { endOffsets, type LoadedTopic } from '../orchestrator/topics.js';
import { handlerIo, handlerVariantsFor, HANDLER_TIME_LIMIT_SECONDS, type HandlerVariant } from '../plan.js';
import { int } from '../report/table.js';
import type { HandlerFigures, RunRecord, ScenarioInfo } from '../report/types.js';
import { failedRun, skippedRun, step, type Ctx } from './context.js';

/** Where the family's topic is kept in ctx.topics (both scenarios read it). */
const TOPIC_KEY = 'handler-io';

let parallelConsumer: Promise<ParallelConsumerJars> | undefined;

/** The variants of `s` that --clients selects (a family or a variant id). */
export function handlerRows(ctx: Ctx, s: ScenarioInfo): HandlerVariant[] {
  const only = ctx.o.clients;
  return handlerVariantsFor(s).filter((v) => !only || only.includes(v.id) || only.includes(v.family));
}

/** Steps for the progress line: the topic's load once, then a run per row. */
export function handlerSteps(ctx: Ctx, s: ScenarioInfo, first: boolean): number {
  return (first ? 1 : 0) + handlerRows(ctx, s).length;
}

export async function handlerScenario(ctx: Ctx, s: ScenarioInfo): Promise<void> {
  const rows = handlerRows(ctx, s);
  if (rows.length === 0) return;
  const loaded = await handlerTopic(ctx);
  for (const v of rows) {
    step(ctx, `${s.id}: ${v.id}${s.kind === 'handler-io' ? `, ${int(s.records)} records, a ${s.handlerMs} ms await each` : `, ${int(s.records)} records, ${s.handlerMs} ms of CPU each`}`);
    let run: RunRecord;
    const why = unavailable(ctx, v);
    if (why) run = skippedRun(s, v.id, why);
    else {
      try {
        run = v.program === 'java-parallel' ? await javaRow(ctx, s, v, loaded) : await nodeRow(ctx, s, v, loaded);
      } catch (err) {
        run = failedRun(s, v.id, 0, (err as Error).message.split('\n')[0]!);
      }
    }
    ctx.runs.push(run);
    ctx.progress.log(`  ${describeHandler(run)}`);
  }
}

/** Why a row cannot run here (its library needs another Node), or null. */
function unavailable(ctx: Ctx, v: HandlerVariant): string | null {
  const why = ctx.available.get(v.family);
  // Selection was decided by handlerRows (the families' list in bench.ts knows no handler variants).
  return why && !why.startsWith('not selected') ? why : null;
}

/** Loads the family's topic once (either scenario may come first), checked against ListOffsets. */
async function handlerTopic(ctx: Ctx): Promise<LoadedTopic> {
  const have = ctx.topics.get(TOPIC_KEY);
  if (have) return have;
  const s = handlerIo();
  step(ctx, `${TOPIC_KEY}: loading ${int(s.records)} records of ${s.recordSize} B keyed over ${int(s.keys)} keys into ${s.partitions} partitions (HandlerTopic.java)`);
  const topic = `bench-handler-${Date.now().toString(36)}`;
  const started = Date.now();
  await createTopic(ctx.target, { topic, partitions: s.partitions });
  const p = await produceHandlerTopic(ctx.target, { topic, records: s.records, keys: s.keys!, recordSize: s.recordSize });
  const ends = await endOffsets(ctx.target.bootstrap, topic);
  const total = ends.reduce((a, b) => a + b, 0);
  if (total !== s.records) throw new Error(`${topic} holds ${total} records after loading ${s.records}`);
  const loaded: LoadedTopic = { topic, ends, producedRecordsPerSec: s.records / p.seconds, seconds: (Date.now() - started) / 1000 };
  ctx.topics.set(TOPIC_KEY, loaded);
  ctx.progress.log(`  loaded in ${loaded.seconds.toFixed(1)} s`);
  return loaded;
}

function settingsOf(s: ScenarioInfo, v: HandlerVariant): HandlerSettings {
  return {
    work: s.kind === 'handler-cpu' ? 'burn' : 'sleep',
    workMs: s.handlerMs ?? 5,
    keys: s.keys ?? 2000,
    timeLimitMs: (s.timeLimitSeconds ?? HANDLER_TIME_LIMIT_SECONDS) * 1000,
    ...v.settings,
  };
}

async function nodeRow(ctx: Ctx, s: ScenarioInfo, v: HandlerVariant, t: LoadedTopic): Promise<RunRecord> {
  const settings = settingsOf(s, v);
  const child = spawnNodeClient({
    node: ctx.node.path,
    client: v.program,
    options: { bootstrap: ctx.target.bootstrap, topic: t.topic, partitions: s.partitions, records: s.records, endOffsets: t.ends, settings: settings as unknown as Record<string, unknown> },
    timeoutMs: (settings.timeLimitMs / 1000 + 120) * 1000,
  });
  try {
    const r = (await child.done) as HandlerReport;
    if (r.skipped) return { ...skippedRun(s, v.id, r.skipped), ...(r.notes ? { notes: r.notes } : {}) };
    if (!r.handler) return failedRun(s, v.id, 0, r.error ?? 'no handler figures in the report');
    const run = handlerRun(s, v, r.handler, r.error);
    run.cpuSeconds = r.fetchCpuSeconds ?? r.cpuSeconds;
    run.peakRssMb = r.peakRssMb;
    run.gcMs = r.gcMs;
    run.maxEventLoopStallMs = r.maxEventLoopStallMs;
    run.p99EventLoopDelayMs = r.p99EventLoopDelayMs ?? null;
    run.totalSeconds = r.totalSeconds;
    if (r.notes) run.notes = [...(run.notes ?? []), ...r.notes];
    return run;
  } finally {
    child.child.kill('SIGKILL');
  }
}

async function javaRow(ctx: Ctx, s: ScenarioInfo, v: HandlerVariant, t: LoadedTopic): Promise<RunRecord> {
  parallelConsumer ??= ensureParallelConsumer((l) => ctx.progress.log(`  ${l}`));
  let jars: ParallelConsumerJars;
  try {
    jars = await parallelConsumer;
  } catch (err) {
    return skippedRun(s, v.id, `the parallel-consumer could not be resolved: ${(err as Error).message}`);
  }
  const settings = settingsOf(s, v);
  const r = await runParallelConsumer(ctx.target, jars, {
    topic: t.topic,
    ends: t.ends,
    records: s.records,
    keys: settings.keys,
    concurrency: settings.maxConcurrency ?? 16,
    order: 'KEY',
    sleepMs: settings.workMs,
    timeLimitSeconds: settings.timeLimitMs / 1000,
    group: `bench-handler-java-${Date.now().toString(36)}`,
  });
  if (!r.handler) return failedRun(s, v.id, 0, r.error ?? 'no result');
  const { cpuSeconds, gcMs, ...figures } = r.handler;
  const run = handlerRun(s, v, figures, r.error);
  run.cpuSeconds = cpuSeconds ?? r.cpuSeconds;
  run.gcMs = gcMs ?? null;
  run.peakRssMb = r.peakRssMb;
  run.totalSeconds = r.wallSeconds;
  run.notes = [
    ...(run.notes ?? []),
    `parallel-consumer ${jars.jars.find((j) => j.startsWith('parallel-consumer-core-'))?.replace(/\.jar$/, '')}, on its own ${jars.jars.find((j) => j.startsWith('kafka-clients-'))?.replace(/\.jar$/, '')}`,
  ];
  return run;
}

/** A run from the family's figures: records/s from the first handler start to the last end, and the checks. */
export function handlerRun(s: ScenarioInfo, v: HandlerVariant, h: HandlerFigures, error?: string): RunRecord {
  const run: RunRecord = {
    ...skippedRun(s, v.id, ''),
    status: 'ok',
    records: h.records,
    recordsPerSec: h.seconds > 0 ? Math.round(h.records / h.seconds) : null,
    fetchSeconds: h.seconds,
    firstToLastRecordsPerSec: h.seconds > 0 ? Math.round(h.records / h.seconds) : null,
    handler: h,
  };
  delete run.reason;
  const limit = s.timeLimitSeconds ?? HANDLER_TIME_LIMIT_SECONDS;
  if (h.capped) run.notes = [`time limit: the first ${limit} s measured, ${int(h.records)} of ${int(s.records)} records`];
  const problems: string[] = [];
  if (error) problems.push(error);
  if (!h.capped && h.records !== s.records) problems.push(`handled ${h.records} records, expected ${s.records}`);
  if (h.duplicates > 0) problems.push(`${h.duplicates} records handled twice`);
  if (h.badKeys > 0) problems.push(`${h.badKeys} records whose key is not the one their value names`);
  if (v.promises === 'key' && h.outOfOrder + h.overlaps > 0) problems.push(`per-key order broken: ${h.outOfOrder} records out of order, ${h.overlaps} started before their key's previous one ended`);
  if (problems.length) {
    run.status = 'failed';
    run.reason = problems.join('; ');
  }
  return run;
}

export function describeHandler(r: RunRecord): string {
  if (r.status === 'skipped') return `skipped: ${r.reason ?? ''}`;
  const h = r.handler;
  if (!h) return `${r.status.toUpperCase()}: ${r.reason ?? ''}`;
  const parts = [`${int(r.recordsPerSec)} records/s (${int(h.records)} records in ${h.seconds.toFixed(2)} s${h.capped ? ', time limit' : ''})`];
  parts.push(`order violations ${h.outOfOrder + h.overlaps} (${h.outOfOrder} out of order, ${h.overlaps} overlapping), duplicates ${h.duplicates}`);
  parts.push(`handler p99 ${h.handlerP99Ms} ms, e2e p99 ${h.e2eP99Ms === null ? '-' : int(h.e2eP99Ms)} ms`);
  if (h.loopDelayP99Ms != null) parts.push(`main loop p99 delay ${h.loopDelayP99Ms} ms (max ${h.loopDelayMaxMs} ms)`);
  if (h.heartbeat) parts.push(`heartbeat age max ${h.heartbeat.maxAgeMs} ms (interval ${h.heartbeat.intervalMs}), ${h.heartbeat.rebalances} rebalances, ${h.heartbeat.lost} lost`);
  return `${parts.join(', ')}${r.status === 'failed' ? `, FAILED: ${r.reason}` : ''}`;
}
