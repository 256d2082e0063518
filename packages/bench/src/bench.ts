// The benchmark: load each scenario's topic once, run every client on it (each in a process of its
// own, alternating the order over the repetitions), then the allocation passes, the group,
// latency, rebalance and RSS-soak runs; verify every run, take medians, evaluate the goals and,
// on request, profile kwire where a goal is missed.
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, release, tmpdir, totalmem, type as osType } from 'node:os';
import { join } from 'node:path';
import { createTopic, ensureKafka, producerPerformance, startKafka, type KafkaCluster, type KafkaTarget } from '@kwire/broker';
import { readHashes, type ClientOptions, type ClientReport } from './clients/common.js';
import { runJavaConsumer } from './orchestrator/java.js';
import { kcatVersion, runKcat } from './orchestrator/kcat.js';
import { spawnNodeClient } from './orchestrator/node-client.js';
import { platformaticSupports, resolveClientNode, type ClientNode } from './orchestrator/node-runtime.js';
import { ensureRdkafka } from './orchestrator/rdkafka-build.js';
import { groupCoordinatorsReady } from './orchestrator/coordinators.js';
import { loadTopic, type LoadedTopic } from './orchestrator/topics.js';
import { ALLOC_CLIENTS, buildPlan, GROUP_CLIENTS, REBALANCE_CLIENTS, THROUGHPUT_CLIENTS, type Plan } from './plan.js';
import { Progress } from './progress.js';
import { evaluateGoals } from './report/goals.js';
import { summarizeProfile } from './report/profile.js';
import { CLIENT_LABELS, summarize, verifyChecksums } from './report/summarize.js';
import { int } from './report/table.js';
import type { AllocRecord, BenchResults, ProfileSummary, RunRecord, ScenarioInfo } from './report/types.js';
import { ValueDigest } from './meter.js';

export interface BenchOptions {
  mode: 'full' | 'quick';
  bootstrap?: string;
  /** Where profiles go (results/profiles). */
  outDir: string;
  reps?: number;
  /** Only these clients (ids as in THROUGHPUT_CLIENTS). */
  clients?: string[];
  /** Only these scenario ids. */
  scenarios?: string[];
  cpuProf: boolean;
  node?: string;
}

const ALLOC_FLAGS = ['--expose-gc', '--min-semi-space-size=128', '--max-semi-space-size=128'];
const MIB = 1048576;

interface Ctx {
  o: BenchOptions;
  /** The broker the bench started (undefined with --bootstrap). */
  cluster: KafkaCluster | undefined;
  target: KafkaTarget;
  node: ClientNode;
  available: Map<string, string | null>;
  progress: Progress;
  runs: RunRecord[];
  allocs: AllocRecord[];
  topics: Map<string, LoadedTopic>;
  notes: string[];
}

export async function runBench(o: BenchOptions): Promise<BenchResults> {
  const started = Date.now();
  const plan = filterPlan(buildPlan(o.mode, o.reps), o.scenarios);
  const boot = new Progress(0);
  // Other work on the machine skews every figure: say how busy it was when the run started and ended.
  const loadAtStart = loadavg().map((x) => x.toFixed(2)).join(' ');
  boot.log(`${o.mode} run: ${plan.scenarios.map((s) => s.id).join(', ')}`);
  const node = resolveClientNode(o.node);
  boot.log(`clients run under Node ${node.version} (${node.path})`);
  const notes: string[] = [];
  if (node.fallback) {
    boot.log(`WARNING: ${node.fallback}`);
    notes.push(node.fallback);
  }
  // null = available; a string = why not.
  const available = new Map<string, string | null>();
  for (const c of THROUGHPUT_CLIENTS) available.set(c, null);
  if (!platformaticSupports(node.version)) available.set('platformatic', `@platformatic/kafka 2.x needs Node >= 22.22 or >= 24.6; the clients run under ${node.version}`);
  const kcat = kcatVersion();
  if (kcat === null) {
    const why = 'kcat is not on the PATH: install it with `apt-get install -y kcat` (Debian\'s kcat, librdkafka 2.0.2) and run again';
    available.set('kcat', why);
    available.set('kcat-tuned', why);
  } else boot.log(`kcat: ${kcat}`);
  const rd = ensureRdkafka(node, (l) => boot.log(l));
  if (!rd.ok) available.set('rdkafka', rd.reason ?? 'node-rdkafka could not be built');
  else boot.log(`node-rdkafka ${rd.version}: ${rd.built ? 'built' : 'already built'} for Node ${node.version}`);
  if (o.clients) for (const c of THROUGHPUT_CLIENTS) if (!o.clients.includes(c)) available.set(c, 'not selected (--clients)');
  for (const [c, why] of available) if (why) boot.log(`skipping ${CLIENT_LABELS[c]}: ${why}`);

  let cluster: KafkaCluster | undefined;
  let target: KafkaTarget;
  if (o.bootstrap) target = { bootstrap: o.bootstrap, dist: await ensureKafka(undefined, { log: (l: string) => boot.log(l) }) };
  else {
    cluster = await startKafka({ log: (l: string) => boot.log(l) });
    target = cluster;
  }
  let coordinators;
  try {
    coordinators = await groupCoordinatorsReady(target.bootstrap);
  } catch (err) {
    await cluster?.stop();
    throw err;
  }
  boot.log(`group coordinators ready: ${coordinators.partitions} partitions of __consumer_offsets answered in ${coordinators.milliseconds} ms (${coordinators.rounds} round(s))`);
  boot.end();
  const progress = new Progress(countSteps(plan, available));
  const ctx: Ctx = { o, cluster, target, node, available, progress, runs: [], allocs: [], topics: new Map(), notes };
  const profiles: ProfileSummary[] = [];
  let results: BenchResults;
  try {
    for (const s of plan.scenarios) {
      try {
        if (s.kind === 'throughput') await throughputScenario(ctx, s);
        else if (s.kind === 'group') await groupScenario(ctx, s);
        else if (s.kind === 'latency') await latencyScenario(ctx, s, plan.latencyClients);
        else if (s.kind === 'rebalance') await rebalanceScenario(ctx, s);
        else await soakScenario(ctx, s);
      } catch (err) {
        // A scenario that cannot run (its topic failed to load) is shown, not hidden.
        progress.log(`${s.id} FAILED: ${(err as Error).message}`);
        notes.push(`${s.id} could not run: ${(err as Error).message.split('\n')[0]}`);
        if (err instanceof BrokerGone) {
          notes.push('the run stopped there: every later scenario is missing');
          break;
        }
      }
    }
    verifyChecksums(ctx.runs, plan.scenarios);
    const rows = summarize(ctx.runs, ctx.allocs, plan.scenarios);
    const goals = evaluateGoals(rows, plan.scenarios);
    if (o.cpuProf) {
      const missed = new Set(goals.filter((g) => g.met === false).flatMap((g) => g.scenarios));
      let ids = plan.scenarios.filter((s) => s.kind === 'throughput' && missed.has(s.id)).map((s) => s.id);
      if (ids.length === 0) ids = plan.scenarios.filter((s) => s.kind === 'throughput').slice(0, 1).map((s) => s.id);
      progress.addSteps(ids.length);
      try {
        for (const id of ids) {
          const p = await profileKwire(ctx, plan.scenarios.find((s) => s.id === id)!);
          if (p) profiles.push(p);
        }
      } catch (err) {
        notes.push(`profiles: ${(err as Error).message.split('\n')[0]}`);
      }
    }
    notes.push(`load average (1, 5, 15 min) at the start: ${loadAtStart}; at the end: ${loadavg().map((x) => x.toFixed(2)).join(' ')} (${cpus().length} cores; the bench's own clients and broker count too)`);
    const cpu = cpus();
    results = {
      machine: { cpus: cpu.length, model: cpu[0]?.model ?? '?', memoryGb: Math.round(totalmem() / 2 ** 30), os: osType(), kernel: release() },
      node: { orchestrator: process.versions.node, clients: node.version, path: node.path },
      broker: { version: target.dist.version.text, bootstrap: target.bootstrap, startedByBench: cluster !== undefined },
      mode: o.mode,
      startedAt: new Date(started).toISOString(),
      durationSeconds: Math.round((Date.now() - started) / 1000),
      clients: THROUGHPUT_CLIENTS.map((id) => ({
        id,
        label: id === 'kcat' && kcat ? kcat : CLIENT_LABELS[id] ?? id,
        available: available.get(id) === null,
        ...(available.get(id) ? { reason: available.get(id)! } : {}),
      })),
      scenarios: plan.scenarios,
      results: rows,
      goals,
      profiles,
      notes,
    };
  } finally {
    progress.end();
    await cluster?.stop();
  }
  return results;
}

function filterPlan(plan: Plan, only?: string[]): Plan {
  if (!only) return plan;
  const keep = new Set(only);
  // A dependent scenario brings the one whose topic it reads.
  for (const s of plan.scenarios) if (keep.has(s.id) && s.topicOf) keep.add(s.topicOf);
  return { ...plan, scenarios: plan.scenarios.filter((s) => keep.has(s.id)) };
}

function countSteps(plan: Plan, available: Map<string, string | null>): number {
  const ok = (c: string) => available.get(c) === null;
  let n = 0;
  for (const s of plan.scenarios) {
    if (s.kind === 'throughput') n += 1 + s.repetitions * THROUGHPUT_CLIENTS.filter(ok).length + ALLOC_CLIENTS.filter(ok).length;
    else if (s.kind === 'group') n += s.repetitions * GROUP_CLIENTS.filter(ok).length;
    else if (s.kind === 'latency') n += s.repetitions * plan.latencyClients.filter(ok).length;
    else if (s.kind === 'rebalance') n += s.repetitions * REBALANCE_CLIENTS.filter(ok).length;
    else n += 1;
  }
  return n;
}

/** The broker is gone (killed from outside, crashed): nothing after this can be measured. */
class BrokerGone extends Error {}

/** A step of the run: counted and shown; refused when the bench's broker is no longer running. */
function step(ctx: Ctx, what: string): void {
  const dead = ctx.cluster?.nodes.find((n) => !n.running);
  if (dead) throw new BrokerGone(`the broker (node ${dead.nodeId}) is no longer running; its log ends with:\n${dead.logTail(5)}`);
  ctx.progress.step(what);
}

/** Repetition r runs the clients starting from the r-th: no client always goes first or last. */
function rotate<T>(list: readonly T[], r: number): T[] {
  const k = r % Math.max(1, list.length);
  return [...list.slice(k), ...list.slice(0, k)];
}

function skippedRun(s: ScenarioInfo, client: string, reason: string): RunRecord {
  return { scenario: s.id, client, rep: 0, status: 'skipped', reason, records: null, expectedRecords: s.records, bytes: null, checksum: null, recordsPerSec: null, mbPerSec: null, fetchSeconds: null, totalSeconds: null, totalRecordsPerSec: null, cpuSeconds: null, peakRssMb: null, gcMs: null, maxEventLoopStallMs: null };
}

function failedRun(s: ScenarioInfo, client: string, rep: number, reason: string): RunRecord {
  return { ...skippedRun(s, client, reason), rep, status: 'failed' };
}

/** Which run-client program a benchmark client id is, and with what configuration. */
function nodeProgram(client: string): { program: string; config?: Record<string, unknown> } {
  if (client === 'kwire-nocrc') return { program: 'kwire', config: { checkCrcs: false } };
  return { program: client };
}

function fromReport(s: ScenarioInfo, client: string, rep: number, r: ClientReport, expected: number): RunRecord {
  const fetch = r.fetchSeconds && r.fetchSeconds > 0 ? r.fetchSeconds : null;
  const run: RunRecord = {
    scenario: s.id,
    client,
    rep,
    status: 'ok',
    records: r.records,
    expectedRecords: expected,
    bytes: r.bytes,
    checksum: r.checksum,
    recordsPerSec: fetch ? r.records / fetch : null,
    mbPerSec: fetch ? r.bytes / MIB / fetch : null,
    fetchSeconds: r.fetchSeconds,
    totalSeconds: r.totalSeconds,
    totalRecordsPerSec: r.totalSeconds ? r.records / r.totalSeconds : null,
    firstToLastRecordsPerSec: r.firstToLastSeconds ? r.records / r.firstToLastSeconds : null,
    cpuSeconds: r.cpuSeconds,
    peakRssMb: r.peakRssMb,
    gcMs: r.gcMs,
    maxEventLoopStallMs: r.maxEventLoopStallMs,
    ...(r.notes ? { notes: r.notes } : {}),
  };
  if (r.error) {
    run.status = 'failed';
    run.reason = r.error;
  } else if (r.records !== expected) {
    run.status = 'failed';
    run.reason = `consumed ${r.records} records, expected ${expected}`;
  } else if (r.checksum !== null && r.bytes !== expected * s.recordSize) {
    run.status = 'failed';
    run.reason = `${r.bytes} value bytes, expected ${expected * s.recordSize}`;
  }
  return run;
}

function describe(r: RunRecord): string {
  if (r.status !== 'ok') return `${r.status.toUpperCase()}: ${r.reason ?? ''}`;
  const parts = [];
  if (r.recordsPerSec !== null) parts.push(`${int(r.recordsPerSec)} records/s (${r.mbPerSec?.toFixed(1)} MiB/s)`);
  if (r.totalSeconds !== null) parts.push(`${r.totalSeconds.toFixed(2)} s with connect/join`);
  if (r.cpuSeconds !== null) parts.push(`CPU ${r.cpuSeconds} s`);
  if (r.peakRssMb !== null) parts.push(`RSS ${Math.round(r.peakRssMb)} MiB`);
  if (r.latency) parts.push(`p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, p999 ${r.latency.p999} ms`);
  if (r.joinToFirstRecordMs != null) parts.push(`join to first record ${r.joinToFirstRecordMs} ms`);
  return `${parts.join(', ')}, verified`;
}

async function topicFor(ctx: Ctx, s: ScenarioInfo): Promise<LoadedTopic> {
  const id = s.topicOf ?? s.id;
  const t = ctx.topics.get(id);
  if (!t) throw new Error(`the topic of ${id} was not loaded`);
  return t;
}

// ---------------------------------------------------------------------------------------- throughput

async function throughputScenario(ctx: Ctx, s: ScenarioInfo): Promise<void> {
  const { progress } = ctx;
  const topic = `bench-${s.id}-${Date.now().toString(36)}`;
  step(ctx, `${s.id}: loading ${int(s.records)} records of ${s.recordSize} B (${s.compression}, ${s.partitions} partitions) into ${topic}`);
  const loaded = await loadTopic(ctx.target, { topic, partitions: s.partitions, records: s.records, recordSize: s.recordSize, compression: s.compression });
  ctx.topics.set(s.id, loaded);
  progress.log(`  loaded in ${loaded.seconds.toFixed(1)} s (ProducerPerformance ${int(loaded.producedRecordsPerSec)} records/s)`);
  const clients = THROUGHPUT_CLIENTS.filter((c) => {
    const why = ctx.available.get(c);
    if (why) ctx.runs.push(skippedRun(s, c, why));
    return !why;
  });
  for (let rep = 0; rep < s.repetitions; rep++) {
    for (const client of rotate(clients, rep)) {
      step(ctx, `${s.id} rep ${rep + 1}/${s.repetitions}: ${CLIENT_LABELS[client]}`);
      const run = await throughputRun(ctx, s, loaded, client, rep);
      ctx.runs.push(run);
      progress.log(`  ${describe(run)}`);
    }
  }
  for (const client of ALLOC_CLIENTS) {
    if (ctx.available.get(client)) continue;
    step(ctx, `${s.id}: heap bytes per record, ${CLIENT_LABELS[client]}`);
    const a = await allocRun(ctx, s, loaded, client);
    ctx.allocs.push(a);
    progress.log(`  ${a.allocBytesPerRecord === null ? `not measured: ${a.reason ?? ''}` : `${a.allocBytesPerRecord} B of heap per record (window of ${int(a.windowRecords)} records, ${a.collections} collections inside)`}`);
  }
}

async function throughputRun(ctx: Ctx, s: ScenarioInfo, loaded: LoadedTopic, client: string, rep: number): Promise<RunRecord> {
  const { target } = ctx;
  try {
    if (client === 'java') return javaRun(ctx, s, loaded, rep);
    if (client === 'kcat' || client === 'kcat-tuned') {
      const k = await runKcat(target.bootstrap, loaded.topic, s.records, s.recordSize, client === 'kcat-tuned' ? ['-X', 'queued.min.messages=10000000'] : []);
      const run: RunRecord = {
        scenario: s.id,
        client,
        rep,
        status: 'ok',
        records: k.records,
        expectedRecords: s.records,
        bytes: k.bytes,
        checksum: k.checksum,
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
      if (k.error) Object.assign(run, { status: 'failed', reason: k.error });
      else if (k.records !== s.records) Object.assign(run, { status: 'failed', reason: `consumed ${k.records} records, expected ${s.records}` });
      else if (k.bytes !== s.records * s.recordSize) Object.assign(run, { status: 'failed', reason: `${k.bytes} value bytes, expected ${s.records * s.recordSize}` });
      return run;
    }
    const { program, config } = nodeProgram(client);
    const options: ClientOptions = { bootstrap: target.bootstrap, topic: loaded.topic, partitions: s.partitions, records: s.records, mode: 'throughput', recordSize: s.recordSize, idleTimeoutMs: 30_000, ...(config ? { config } : {}) };
    const report = await spawnNodeClient({ node: ctx.node.path, client: program, options, timeoutMs: 600_000 }).done;
    return fromReport(s, client, rep, report, s.records);
  } catch (err) {
    return failedRun(s, client, rep, (err as Error).message);
  }
}

async function javaRun(ctx: Ctx, s: ScenarioInfo, loaded: LoadedTopic, rep: number): Promise<RunRecord> {
  const j = await runJavaConsumer(ctx.target, loaded.topic, s.records);
  if (!j.result) return { ...failedRun(s, 'java', rep, j.error ?? 'no result'), cpuSeconds: j.cpuSeconds, peakRssMb: j.peakRssMb };
  const r = j.result;
  const run: RunRecord = {
    scenario: s.id,
    client: 'java',
    rep,
    status: 'ok',
    records: r.records,
    expectedRecords: s.records,
    bytes: Math.round(r.mb * MIB),
    checksum: null,
    recordsPerSec: r.fetchRecordsPerSec,
    mbPerSec: r.fetchMbPerSec,
    fetchSeconds: r.fetchMs / 1000,
    totalSeconds: r.recordsPerSec > 0 ? r.records / r.recordsPerSec : null,
    totalRecordsPerSec: r.recordsPerSec,
    cpuSeconds: j.cpuSeconds,
    peakRssMb: j.peakRssMb,
    gcMs: null,
    maxEventLoopStallMs: null,
    joinToFirstRecordMs: r.rebalanceMs,
    notes: ['CPU and RSS include the JVM start-up'],
  };
  // The tool prints MB (MiB) with 4 decimals: the byte total is checked to that precision.
  const expectedMb = (s.records * s.recordSize) / MIB;
  if (r.records !== s.records) Object.assign(run, { status: 'failed', reason: `consumed ${r.records} records, expected ${s.records}` });
  else if (Math.abs(r.mb - expectedMb) > 0.0002) Object.assign(run, { status: 'failed', reason: `${r.mb} MB consumed, expected ${expectedMb.toFixed(4)}` });
  return run;
}

async function allocRun(ctx: Ctx, s: ScenarioInfo, loaded: LoadedTopic, client: string): Promise<AllocRecord> {
  const { program, config } = nodeProgram(client);
  const options: ClientOptions = {
    bootstrap: ctx.target.bootstrap,
    topic: loaded.topic,
    partitions: s.partitions,
    records: s.records,
    mode: 'alloc',
    recordSize: s.recordSize,
    allocSkip: Math.floor(s.records / 5),
    allocWindow: Math.floor((s.records * 3) / 5),
    idleTimeoutMs: 30_000,
    ...(config ? { config } : {}),
  };
  try {
    const r = await spawnNodeClient({ node: ctx.node.path, client: program, options, nodeFlags: ALLOC_FLAGS, timeoutMs: 600_000 }).done;
    return {
      scenario: s.id,
      client,
      allocBytesPerRecord: r.allocBytesPerRecord ?? null,
      windowRecords: r.allocWindowRecords ?? 0,
      collections: r.allocCollections ?? 0,
      ...(r.error ? { reason: r.error } : r.allocBytesPerRecord == null ? { reason: (r.notes ?? []).join('; ') || 'no GC-free window' } : {}),
    };
  } catch (err) {
    return { scenario: s.id, client, allocBytesPerRecord: null, windowRecords: 0, collections: 0, reason: (err as Error).message };
  }
}

// -------------------------------------------------------------------------------------------- group

async function groupScenario(ctx: Ctx, s: ScenarioInfo): Promise<void> {
  const loaded = await topicFor(ctx, s);
  const clients = GROUP_CLIENTS.filter((c) => {
    const why = ctx.available.get(c);
    if (why) ctx.runs.push(skippedRun(s, c, why));
    return !why;
  });
  for (let rep = 0; rep < s.repetitions; rep++) {
    for (const client of rotate(clients, rep)) {
      step(ctx, `${s.id} rep ${rep + 1}/${s.repetitions}: ${s.members} x ${CLIENT_LABELS[client]}`);
      let run: RunRecord;
      try {
        run = await groupRun(ctx, s, loaded, client, rep);
      } catch (err) {
        run = failedRun(s, client, rep, (err as Error).message);
      }
      ctx.runs.push(run);
      ctx.progress.log(`  ${describe(run)}`);
    }
  }
}

async function groupRun(ctx: Ctx, s: ScenarioInfo, loaded: LoadedTopic, client: string, rep: number): Promise<RunRecord> {
  const members = s.members ?? 3;
  const groupId = `bench-group-${client}-${Date.now().toString(36)}`;
  const dir = join(tmpdir(), `kwire-bench-${process.pid}-${groupId}`);
  mkdirSync(dir, { recursive: true });
  const ends = loaded.ends;
  const next: number[][] = Array.from({ length: members }, () => ends.map(() => 0));
  let loadedCount = 0;
  let stopped = false;
  const children = Array.from({ length: members }, (_, i) => {
    const options: ClientOptions = {
      bootstrap: ctx.target.bootstrap,
      topic: loaded.topic,
      partitions: s.partitions,
      records: s.records,
      mode: 'group',
      groupId,
      endOffsets: ends,
      hashFile: join(dir, `member-${i}.bin`),
      idleTimeoutMs: 60_000,
    };
    return spawnNodeClient({
      node: ctx.node.path,
      client: nodeProgram(client).program,
      options,
      timeoutMs: 600_000,
      onMessage: (m) => {
        if (m.ev === 'loaded' && ++loadedCount === members) for (const c of children) c.send({ ev: 'go' });
        if (m.ev === 'progress') {
          next[i] = m.next as number[];
          // Every partition's last record delivered by some member: the group is done.
          if (!stopped && ends.every((e, p) => next.some((n) => (n[p] ?? 0) >= e))) {
            stopped = true;
            for (const c of children) c.send({ ev: 'stop' });
          }
        }
      },
    });
  });
  try {
    const settled = await Promise.allSettled(children.map((c) => c.done));
    const failed = settled.find((x) => x.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
    const reports = settled.map((x) => (x as PromiseFulfilledResult<ClientReport>).value);
    return mergeGroup(s, client, rep, reports, ends, dir);
  } finally {
    for (const c of children) c.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The members' per-offset hashes merged: coverage, duplicates, the checksum of the union. */
function mergeGroup(s: ScenarioInfo, client: string, rep: number, reports: ClientReport[], ends: number[], dir: string): RunRecord {
  const members = reports.map((_, i) => readHashes(readFileSync(join(dir, `member-${i}.bin`))));
  const digest = new ValueDigest();
  let unique = 0;
  let delivered = 0;
  let inconsistent = 0;
  for (let p = 0; p < ends.length; p++) {
    for (let off = 0; off < ends[p]!; off++) {
      let h: number | undefined;
      for (const m of members) {
        const part = m[p];
        if (!part || part.seen[off] !== 1) continue;
        delivered++;
        if (h === undefined) h = part.hashes[off]!;
        else if (h !== part.hashes[off]) inconsistent++;
      }
      if (h !== undefined) {
        unique++;
        digest.addHash(h, s.recordSize);
      }
    }
  }
  const tStart = Math.min(...reports.map((r) => r.tStart));
  // A partition is done when the first member delivered its last record.
  const doneAt = ends.map((e, p) => {
    if (e === 0) return tStart;
    const t = reports.map((r) => r.partitionDoneAt?.[p]).filter((x): x is number => typeof x === 'number');
    return t.length ? Math.min(...t) : null;
  });
  const complete = doneAt.every((t) => t !== null);
  const tEnd = complete ? Math.max(...(doneAt as number[])) : null;
  const seconds = tEnd !== null ? (tEnd - tStart) / 1000 : null;
  const run: RunRecord = {
    scenario: s.id,
    client,
    rep,
    status: 'ok',
    records: unique,
    expectedRecords: s.records,
    bytes: unique * s.recordSize,
    checksum: digest.toString(),
    recordsPerSec: seconds ? unique / seconds : null,
    mbPerSec: seconds ? (unique * s.recordSize) / MIB / seconds : null,
    fetchSeconds: seconds,
    totalSeconds: seconds,
    totalRecordsPerSec: seconds ? unique / seconds : null,
    cpuSeconds: Math.round(reports.reduce((a, r) => a + r.cpuSeconds, 0) * 100) / 100,
    peakRssMb: Math.max(...reports.map((r) => r.peakRssMb)),
    gcMs: Math.round(reports.reduce((a, r) => a + r.gcMs, 0)),
    maxEventLoopStallMs: Math.max(...reports.map((r) => r.maxEventLoopStallMs ?? 0)),
    duplicates: delivered - unique,
    notes: [...new Set(reports.flatMap((r) => r.notes ?? []))],
  };
  const errors = reports.filter((r) => r.error).map((r) => r.error);
  if (errors.length) Object.assign(run, { status: 'failed', reason: errors.join('; ') });
  else if (unique !== s.records) Object.assign(run, { status: 'failed', reason: `the members consumed ${unique} distinct records of ${s.records}` });
  else if (inconsistent) Object.assign(run, { status: 'failed', reason: `${inconsistent} records delivered twice with different values` });
  else if (!complete) Object.assign(run, { status: 'failed', reason: 'a partition was never completed' });
  return run;
}

// ------------------------------------------------------------------------------------------ latency

async function latencyScenario(ctx: Ctx, s: ScenarioInfo, all: readonly string[]): Promise<void> {
  const clients = all.filter((c) => {
    const why = ctx.available.get(c);
    if (why) ctx.runs.push(skippedRun(s, c, why));
    return !why;
  });
  for (let rep = 0; rep < s.repetitions; rep++) {
    for (const client of rotate(clients, rep)) {
      step(ctx, `${s.id} rep ${rep + 1}/${s.repetitions}: ${CLIENT_LABELS[client]} while ProducerPerformance writes ${int(s.rate)} records/s for ${s.seconds} s`);
      let run: RunRecord;
      try {
        run = { ...(await latencyRun(ctx, s, client)), rep };
      } catch (err) {
        run = failedRun(s, client, rep, (err as Error).message);
      }
      ctx.runs.push(run);
      ctx.progress.log(`  ${describe(run)}`);
    }
  }
}

async function latencyRun(ctx: Ctx, s: ScenarioInfo, client: string): Promise<RunRecord> {
  const topic = `bench-latency-${client}-${Date.now().toString(36)}`;
  await createTopic(ctx.target, { topic, partitions: s.partitions });
  let ready!: () => void;
  const isReady = new Promise<void>((r) => (ready = r));
  const child = spawnNodeClient({
    node: ctx.node.path,
    client: nodeProgram(client).program,
    options: { bootstrap: ctx.target.bootstrap, topic, partitions: s.partitions, records: s.records, mode: 'latency', warmupMs: 2_000, idleTimeoutMs: 60_000 },
    timeoutMs: 600_000,
    onMessage: (m) => {
      if (m.ev === 'ready') ready();
    },
  });
  try {
    await Promise.race([isReady, child.done]);
    // Give a group client its first fetch in flight before the producer starts.
    await new Promise((r) => setTimeout(r, 500));
    await producerPerformance(ctx.target, { topic, numRecords: s.records, recordSize: s.recordSize, throughput: s.rate, props: { 'linger.ms': 0 } });
    const r = await child.done;
    const run = fromReport(s, client, 0, r, s.records);
    if (r.latency) run.latency = { ...r.latency };
    // The run's own pace is the producer's: throughput figures mean nothing here.
    run.recordsPerSec = null;
    run.mbPerSec = null;
    run.totalRecordsPerSec = null;
    return run;
  } finally {
    child.child.kill('SIGKILL');
  }
}

// ---------------------------------------------------------------------------------------- rebalance

async function rebalanceScenario(ctx: Ctx, s: ScenarioInfo): Promise<void> {
  const loaded = await topicFor(ctx, s);
  const clients = REBALANCE_CLIENTS.filter((c) => {
    const why = ctx.available.get(c);
    if (why) ctx.runs.push(skippedRun(s, c, why));
    return !why;
  });
  for (let rep = 0; rep < s.repetitions; rep++) {
    for (const client of rotate(clients, rep)) {
      step(ctx, `${s.id} rep ${rep + 1}/${s.repetitions}: ${CLIENT_LABELS[client]} joins a fresh group`);
      let run: RunRecord;
      try {
        if (client === 'java') {
          // 1,000 records: enough for the tool to finish its first poll; its rebalance.time.ms is the figure.
          const j = await runJavaConsumer(ctx.target, loaded.topic, 1_000);
          if (!j.result) throw new Error(j.error ?? 'no result');
          run = { ...skippedRun(s, client, ''), rep, status: 'ok', records: j.result.records, joinToFirstRecordMs: j.result.rebalanceMs, cpuSeconds: j.cpuSeconds, peakRssMb: j.peakRssMb };
          delete run.reason;
          if (j.result.records < 1) Object.assign(run, { status: 'failed', reason: 'no record consumed' });
        } else {
          const options: ClientOptions = { bootstrap: ctx.target.bootstrap, topic: loaded.topic, partitions: s.partitions, records: 1, mode: 'rebalance', groupId: `bench-rebalance-${client}-${Date.now().toString(36)}`, idleTimeoutMs: 60_000 };
          const r = await spawnNodeClient({ node: ctx.node.path, client: nodeProgram(client).program, options, timeoutMs: 120_000 }).done;
          run = { ...fromReport(s, client, rep, r, r.records), recordsPerSec: null, mbPerSec: null, totalRecordsPerSec: null, checksum: null, joinToFirstRecordMs: r.joinToFirstRecordMs ?? null };
          if (r.records < 1 || r.error) Object.assign(run, { status: 'failed', reason: r.error ?? 'no record delivered' });
        }
      } catch (err) {
        run = failedRun(s, client, rep, (err as Error).message);
      }
      ctx.runs.push(run);
      ctx.progress.log(`  ${describe(run)}`);
    }
  }
}

// --------------------------------------------------------------------------------------------- soak

async function soakScenario(ctx: Ctx, s: ScenarioInfo): Promise<void> {
  const loaded = await topicFor(ctx, s);
  const passes = s.passes ?? 3;
  step(ctx, `${s.id}: kwire reads ${int(s.records)} records ${passes} times over, RSS per pass`);
  let run: RunRecord;
  try {
    // The original multi-pass runner (runKwire, as the memory test uses it): RSS at each pass's end.
    const r = (await spawnNodeClient({
      node: ctx.node.path,
      client: 'kwire',
      options: { bootstrap: ctx.target.bootstrap, topic: loaded.topic, partitions: s.partitions, records: s.records, passes },
      timeoutMs: 900_000,
    }).done) as unknown as { records: number; bytes: number; seconds: number; recordsPerSec: number; mbPerSec: number; cpuSeconds: number; peakRssMb: number; rssByPassMb: number[]; gcMs: number; steadyMaxEventLoopStallMs: number | null };
    run = {
      scenario: s.id,
      client: 'kwire',
      rep: 0,
      status: 'ok',
      records: r.records,
      expectedRecords: s.records * passes,
      bytes: r.bytes,
      checksum: null,
      recordsPerSec: r.recordsPerSec,
      mbPerSec: r.mbPerSec,
      fetchSeconds: r.seconds,
      totalSeconds: r.seconds,
      totalRecordsPerSec: r.recordsPerSec,
      cpuSeconds: r.cpuSeconds,
      peakRssMb: r.peakRssMb,
      gcMs: r.gcMs,
      maxEventLoopStallMs: r.steadyMaxEventLoopStallMs,
      rssByPassMb: r.rssByPassMb,
    };
    if (r.records !== s.records * passes || r.bytes !== s.records * passes * s.recordSize) {
      Object.assign(run, { status: 'failed', reason: `read ${r.records} records (${r.bytes} bytes), expected ${s.records * passes}` });
    }
  } catch (err) {
    run = failedRun(s, 'kwire', 0, (err as Error).message);
  }
  ctx.runs.push(run);
  ctx.progress.log(`  ${run.status === 'ok' ? `RSS by pass ${run.rssByPassMb?.join(', ')} MiB, ${int(run.recordsPerSec)} records/s` : describe(run)}`);
}

// ---------------------------------------------------------------------------------------- profiles

async function profileKwire(ctx: Ctx, s: ScenarioInfo): Promise<ProfileSummary | null> {
  const loaded = ctx.topics.get(s.id);
  if (!loaded) return null;
  const dir = join(ctx.o.outDir, 'profiles');
  mkdirSync(dir, { recursive: true });
  const name = `kwire-${s.id}.cpuprofile`;
  step(ctx, `${s.id}: CPU profile of kwire (node --cpu-prof) into ${join(dir, name)}`);
  try {
    const options: ClientOptions = { bootstrap: ctx.target.bootstrap, topic: loaded.topic, partitions: s.partitions, records: s.records, mode: 'throughput', idleTimeoutMs: 30_000 };
    const r = await spawnNodeClient({ node: ctx.node.path, client: 'kwire', options, nodeFlags: ['--cpu-prof', '--cpu-prof-interval', '100', '--cpu-prof-dir', dir, '--cpu-prof-name', name], timeoutMs: 600_000 }).done;
    if (r.records !== s.records) throw new Error(`profiled run consumed ${r.records} records`);
    const profile = JSON.parse(readFileSync(join(dir, name), 'utf8')) as Parameters<typeof summarizeProfile>[0];
    // Only the fetch phase: Node's start-up and module loading are a large share of a short run.
    const window = r.hrReadyUs !== null && r.hrLastUs !== null ? { fromUs: r.hrReadyUs, toUs: r.hrLastUs } : undefined;
    let summary = summarizeProfile(profile, s.id, `results/profiles/${name}`, 15, window);
    if (window && summary.totalMs === 0) summary = summarizeProfile(profile, s.id, `results/profiles/${name}`, 15);
    else if (window) summary.fetchPhaseOnly = true;
    ctx.progress.log(`  top: ${summary.top.slice(0, 5).map((t) => `${t.name} ${t.percent}%`).join(', ')}`);
    return summary;
  } catch (err) {
    ctx.progress.log(`  profile failed: ${(err as Error).message}`);
    ctx.notes.push(`CPU profile of ${s.id} failed: ${(err as Error).message}`);
    return null;
  }
}
