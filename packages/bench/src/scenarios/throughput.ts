// Throughput: load the scenario's topic once, then run every client variant on it in steady
// state: each Node client in a process of its own reading the whole topic warm-up + measured
// times (run-client.ts), Java the same in one JVM (BenchJava), kcat once per process; then the
// allocation passes of the Node clients' defaults.
import type { ClientOptions, ClientReport } from '../clients/common.js';
import { runBenchJava } from '../orchestrator/java.js';
import { runKcat } from '../orchestrator/kcat.js';
import { spawnNodeClient } from '../orchestrator/node-client.js';
import { loadTopic, type LoadedTopic } from '../orchestrator/topics.js';
import { allocClients, variantsFor, warmupSecondsFor, warmupsBefore, type ClientVariant } from '../plan.js';
import { int } from '../report/table.js';
import type { AllocRecord, RunRecord, ScenarioInfo } from '../report/types.js';
import { runPasses, type PassReport } from '../passes.js';
import { describe, failedRun, fromReport, label, MIB, rotate, skippedRun, step, type Ctx } from './context.js';

const ALLOC_FLAGS = ['--expose-gc', '--min-semi-space-size=128', '--max-semi-space-size=128'];

/** Why `v` cannot run on `s`, or null. */
function unavailable(ctx: Ctx, s: ScenarioInfo, v: ClientVariant): string | null {
  if (ctx.o.clients && !ctx.o.clients.includes(v.id) && !ctx.o.clients.includes(v.family)) return 'not selected (--clients)';
  const why = ctx.available.get(v.family);
  if (why) return why;
  if (v.family === 'rdkafka' && s.compression === 'zstd' && ctx.rdkafka.noZstd) return ctx.rdkafka.noZstd;
  return null;
}

/** Steps this scenario will count (for the progress line). */
export function throughputSteps(ctx: Ctx, s: ScenarioInfo): number {
  const run = variantsFor(s, ctx.o.mode, ctx.o.clients).filter((v) => unavailable(ctx, s, v) === null);
  return 1 + run.length + allocClients(ctx.o.mode).filter((c) => run.some((v) => v.id === c)).length;
}

export async function throughputScenario(ctx: Ctx, s: ScenarioInfo): Promise<void> {
  const { progress } = ctx;
  const topic = `bench-${s.id}-${Date.now().toString(36)}`;
  step(ctx, `${s.id}: loading ${int(s.records)} records of ${s.recordSize} B (${s.compression}, ${s.partitions} partitions${s.touch === 'full' ? ', keys and headers' : ''}) into ${topic}`);
  const loaded = await loadTopic(ctx.target, { topic, partitions: s.partitions, records: s.records, recordSize: s.recordSize, compression: s.compression, keyed: s.touch === 'full' });
  ctx.topics.set(s.id, loaded);
  progress.log(`  loaded in ${loaded.seconds.toFixed(1)} s (${int(loaded.producedRecordsPerSec)} records/s)`);
  const variants = variantsFor(s, ctx.o.mode, ctx.o.clients).filter((v) => {
    const why = unavailable(ctx, s, v);
    if (why) ctx.runs.push(skippedRun(s, v.id, why));
    return !why;
  });
  // Each variant runs all its passes in one process; the order changes from scenario to scenario.
  const order = rotate(variants, ctx.topics.size - 1);
  for (const v of order) {
    step(ctx, `${s.id}: ${label(v.id)} (${v.setting}), ${s.warmupPasses ?? 1} warm-up${s.warmupSeconds ? ` (at least ${warmupSecondsFor(s, v.program)} s)` : ''} + ${s.repetitions} measured passes`);
    const runs = await variantRuns(ctx, s, loaded, v);
    ctx.runs.push(...runs);
    if (runs[0]?.warmups !== undefined) progress.log(`  after ${runs[0].warmups} warm-up pass${runs[0].warmups === 1 ? '' : 'es'}`);
    for (const r of runs) progress.log(`  pass ${r.rep + 1}: ${describe(r)}`);
  }
  for (const client of allocClients(ctx.o.mode)) {
    const v = variants.find((x) => x.id === client);
    if (!v) continue;
    step(ctx, `${s.id}: heap bytes per record, ${label(client)}`);
    const a = await allocRun(ctx, s, loaded, v);
    ctx.allocs.push(a);
    progress.log(
      `  ${a.allocBytesPerRecord === null ? `not measured: ${a.reason ?? ''}` : `${a.allocBytesPerRecord} B of heap per record (window of ${int(a.windowRecords)} records, ${a.collections} collections inside)`}`,
    );
  }
}

/** A topic for other runs (group, soak, share): loaded and checked, no runs of its own. */
export async function topicScenario(ctx: Ctx, s: ScenarioInfo): Promise<void> {
  const topic = `bench-${s.id}-${Date.now().toString(36)}`;
  step(ctx, `${s.id}: loading ${int(s.records)} records of ${s.recordSize} B (${s.compression}, ${s.partitions} partitions) into ${topic}`);
  const loaded = await loadTopic(ctx.target, { topic, partitions: s.partitions, records: s.records, recordSize: s.recordSize, compression: s.compression, keyed: s.touch === 'full' });
  ctx.topics.set(s.id, loaded);
  ctx.progress.log(`  loaded in ${loaded.seconds.toFixed(1)} s (${int(loaded.producedRecordsPerSec)} records/s)`);
}

/** A variant's settings with 'partitions' resolved for this scenario. */
function settingsFor(s: ScenarioInfo, v: ClientVariant): Record<string, unknown> | undefined {
  if (!v.settings) return undefined;
  return Object.fromEntries(Object.entries(v.settings).map(([k, x]) => [k, x === 'partitions' ? s.partitions : x]));
}

export function nodeOptions(ctx: Ctx, s: ScenarioInfo, loaded: LoadedTopic, v: ClientVariant): ClientOptions {
  const settings = settingsFor(s, v);
  return {
    bootstrap: ctx.target.bootstrap,
    topic: loaded.topic,
    partitions: s.partitions,
    records: s.records,
    mode: 'throughput',
    recordSize: s.recordSize,
    touch: s.touch ?? 'value',
    idleTimeoutMs: 30_000,
    ...(s.passSeconds ? { passSeconds: s.passSeconds } : {}),
    ...(v.config ? { config: v.config } : {}),
    ...(settings ? { settings } : {}),
    ...(ctx.o.heapMiB ? { heapMiB: ctx.o.heapMiB } : {}),
    ...(v.family === 'rdkafka' && ctx.rdkafka.dir ? { rdkafkaDir: ctx.rdkafka.dir } : {}),
  };
}

/** The measured passes of one variant (one RunRecord each); a failure is one failed run. */
async function variantRuns(ctx: Ctx, s: ScenarioInfo, loaded: LoadedTopic, v: ClientVariant): Promise<RunRecord[]> {
  const warmup = s.warmupPasses ?? 1;
  try {
    if (v.program === 'java') return await javaRuns(ctx, s, loaded, v, warmup);
    if (v.program === 'kcat') return await kcatRuns(ctx, s, loaded, v, warmup);
    const options: ClientOptions = { ...nodeOptions(ctx, s, loaded, v), warmupPasses: warmup, warmupSeconds: warmupSecondsFor(s, v.program), measuredPasses: s.repetitions };
    const out =
      v.processPerPass && s.passSeconds
        ? await passPerProcess(ctx, v, options)
        : ((await spawnNodeClient({ node: ctx.node.path, client: v.program, options, timeoutMs: 1_800_000 }).done) as unknown as { passes: PassReport[] });
    const runs: RunRecord[] = [];
    const warmups = warmupsBefore(out.passes, warmup);
    for (const p of out.passes) {
      const run = passRun(s, v.id, p, warmups);
      if (p.warmup && run.status === 'ok') continue;
      if (!p.warmup) run.warmups = warmups;
      runs.push(run);
      if (run.status !== 'ok') break;
    }
    if (runs.length === 0) return [failedRun(s, v.id, 0, 'no measured pass')];
    return runs;
  } catch (err) {
    return [failedRun(s, v.id, 0, (err as Error).message)];
  }
}

/** The longest a process of one pass (passPerProcess) may take. */
const PASS_PROCESS_TIMEOUT_MS = 60_000;

/**
 * A variant that cannot stop mid-topic and go on (ClientVariant.processPerPass): runPasses' loop
 * (warm-up by count and time, then the measured passes), each pass in a process of its own that
 * ends after it.
 */
async function passPerProcess(ctx: Ctx, v: ClientVariant, options: ClientOptions): Promise<{ passes: PassReport[] }> {
  const one = { ...options, warmupPasses: 0, warmupSeconds: 0, measuredPasses: 1 };
  const passes = await runPasses({ ...options, measuredPasses: options.measuredPasses ?? 1 }, async () => {
    // One pass of at most passSeconds and a connect: a process still there after a minute is hung
    // (one of node-rdkafka's flowing-mode processes was, at 1KB-12p-zstd in the eleventh run, and
    // the 10 minutes the general timeout let it have cost the run its time budget).
    const out = (await spawnNodeClient({ node: ctx.node.path, client: v.program, options: one, timeoutMs: PASS_PROCESS_TIMEOUT_MS }).done) as unknown as { passes: PassReport[] };
    return out.passes[0] ?? ({ client: v.program, records: 0, error: 'the process reported no pass' } as ClientReport);
  });
  return { passes };
}

/** One pass of a Node client: CPU and GC of its fetch phase (the process's totals would count the earlier passes). */
function passRun(s: ScenarioInfo, client: string, p: PassReport, warmupPasses: number): RunRecord {
  const measuredIndex = p.pass - warmupPasses;
  const run = p.capped ? cappedRun(s, client, Math.max(0, measuredIndex), p) : fromReport(s, client, Math.max(0, measuredIndex), p as ClientReport, s.records);
  run.cpuSeconds = p.fetchCpuSeconds;
  if (p.fetchGcMs !== undefined) run.gcMs = p.fetchGcMs;
  if (p.warmup && run.status !== 'ok') run.reason = `warm-up pass: ${run.reason ?? ''}`;
  return run;
}

/**
 * A pass that ended at the scenario's passSeconds: its records are a prefix of the topic whose
 * length depends on the client's speed, so there is no checksum to compare; the value bytes must
 * still be records x record size.
 */
function cappedRun(s: ScenarioInfo, client: string, rep: number, p: ClientReport): RunRecord {
  const run = fromReport(s, client, rep, { ...p, checksum: null }, p.records);
  run.capped = true;
  run.expectedRecords = s.records;
  if (run.status === 'ok' && p.checksum !== null && p.bytes !== p.records * s.recordSize) {
    run.status = 'failed';
    run.reason = `${p.bytes} value bytes in ${p.records} records, expected ${p.records * s.recordSize}`;
  }
  return run;
}

async function javaRuns(ctx: Ctx, s: ScenarioInfo, loaded: LoadedTopic, v: ClientVariant, warmup: number): Promise<RunRecord[]> {
  // A variant's config goes to the consumer as properties, over ConsumerPerformance's.
  const props = v.config ? Object.fromEntries(Object.entries(v.config).map(([k, x]) => [k, String(x)])) : undefined;
  const j = await runBenchJava(ctx.target, {
    topic: loaded.topic,
    partitions: s.partitions,
    records: s.records,
    warmup,
    warmupSeconds: warmupSecondsFor(s, 'java'),
    passes: s.repetitions,
    ...(s.passSeconds ? { passSeconds: s.passSeconds } : {}),
    touch: s.touch ?? 'value',
    ...(props ? { props } : {}),
  });
  const runs: RunRecord[] = [];
  const warmups = warmupsBefore(j.passes, warmup);
  for (const p of j.passes) {
    const run: RunRecord = {
      scenario: s.id,
      client: v.id,
      rep: Math.max(0, p.pass - warmups),
      status: 'ok',
      records: p.records,
      expectedRecords: s.records,
      bytes: p.bytes,
      checksum: p.checksum,
      recordsPerSec: p.seconds > 0 ? p.records / p.seconds : null,
      mbPerSec: p.seconds > 0 ? p.bytes / MIB / p.seconds : null,
      fetchSeconds: p.seconds,
      totalSeconds: p.seconds,
      totalRecordsPerSec: p.seconds > 0 ? p.records / p.seconds : null,
      cpuSeconds: Math.round(p.cpuSeconds * 100) / 100,
      peakRssMb: j.peakRssMb,
      gcMs: p.gcMs,
      maxEventLoopStallMs: null,
    };
    if (p.capped) Object.assign(run, { capped: true, checksum: null });
    const want = p.capped ? p.records : s.records;
    if (p.records !== want) Object.assign(run, { status: 'failed', reason: `${p.warmup ? 'warm-up pass: ' : ''}consumed ${p.records} records, expected ${s.records}` });
    else if (p.bytes !== want * s.recordSize) Object.assign(run, { status: 'failed', reason: `${p.bytes} value bytes, expected ${want * s.recordSize}` });
    if (p.warmup && run.status === 'ok') continue;
    if (!p.warmup) run.warmups = warmups;
    runs.push(run);
  }
  if (j.error) runs.push(failedRun(s, v.id, runs.length, j.error));
  if (runs.length === 0) runs.push(failedRun(s, v.id, 0, 'no measured pass'));
  return runs;
}

async function kcatRuns(ctx: Ctx, s: ScenarioInfo, loaded: LoadedTopic, v: ClientVariant, warmup: number): Promise<RunRecord[]> {
  const runs: RunRecord[] = [];
  for (let i = 0; i < warmup + s.repetitions; i++) {
    const k = await runKcat(ctx.target.bootstrap, loaded.topic, s.records, s.recordSize, v.kcatArgs ?? [], 300_000, s.passSeconds);
    const run: RunRecord = {
      scenario: s.id,
      client: v.id,
      rep: Math.max(0, i - warmup),
      status: 'ok',
      records: k.records,
      expectedRecords: s.records,
      bytes: k.bytes,
      checksum: null,
      recordsPerSec: k.fetchSeconds ? k.records / k.fetchSeconds : null,
      mbPerSec: k.fetchSeconds ? k.bytes / MIB / k.fetchSeconds : null,
      fetchSeconds: k.fetchSeconds,
      totalSeconds: k.totalSeconds,
      totalRecordsPerSec: k.totalSeconds ? k.records / k.totalSeconds : null,
      firstToLastRecordsPerSec: k.firstToLastSeconds ? k.records / k.firstToLastSeconds : null,
      cpuSeconds: k.cpuSeconds,
      peakRssMb: k.peakRssMb,
      gcMs: null,
      maxEventLoopStallMs: null,
    };
    if (k.capped) run.capped = true;
    const want = k.capped ? k.records : s.records;
    if (k.error) Object.assign(run, { status: 'failed', reason: k.error });
    else if (k.records !== want) Object.assign(run, { status: 'failed', reason: `consumed ${k.records} records, expected ${s.records}` });
    else if (k.bytes !== want * s.recordSize) Object.assign(run, { status: 'failed', reason: `${k.bytes} value bytes, expected ${want * s.recordSize}` });
    if (i < warmup && run.status === 'ok') continue;
    runs.push(run);
    if (run.status !== 'ok') break;
  }
  return runs;
}

async function allocRun(ctx: Ctx, s: ScenarioInfo, loaded: LoadedTopic, v: ClientVariant): Promise<AllocRecord> {
  const records = Math.min(s.records, s.allocRecords ?? s.records);
  const options: ClientOptions = {
    ...nodeOptions(ctx, s, loaded, v),
    records,
    mode: 'alloc',
    allocSkip: Math.floor(records / 5),
    allocWindow: Math.floor((records * 3) / 5),
  };
  try {
    const r = await spawnNodeClient({ node: ctx.node.path, client: v.program, options, nodeFlags: ALLOC_FLAGS, timeoutMs: 600_000 }).done;
    return {
      scenario: s.id,
      client: v.id,
      allocBytesPerRecord: r.allocBytesPerRecord ?? null,
      windowRecords: r.allocWindowRecords ?? 0,
      collections: r.allocCollections ?? 0,
      ...(r.error ? { reason: r.error } : r.allocBytesPerRecord == null ? { reason: (r.notes ?? []).join('; ') || 'no GC-free window' } : {}),
    };
  } catch (err) {
    return { scenario: s.id, client: v.id, allocBytesPerRecord: null, windowRecords: 0, collections: 0, reason: (err as Error).message };
  }
}
