// What every scenario kind shares: the run's context (broker, client Node, availability, the runs
// collected so far) and the helpers that turn a client's report into a RunRecord.
import type { KafkaCluster, KafkaTarget } from '@kwire/broker';
import type { ClientReport } from '../clients/common.js';
import type { ClientNode } from '../orchestrator/node-runtime.js';
import type { RdkafkaBuild } from '../orchestrator/rdkafka-build.js';
import type { LoadedTopic } from '../orchestrator/topics.js';
import type { Progress } from '../progress.js';
import { clientLabel } from '../report/summarize.js';
import { int } from '../report/table.js';
import type { AllocRecord, RunRecord, ScenarioInfo } from '../report/types.js';

export interface BenchOptions {
  mode: 'full' | 'quick';
  bootstrap?: string;
  /** Where profiles go (results/profiles). */
  outDir: string;
  reps?: number;
  /** Only these client families or variant ids. */
  clients?: string[];
  /** Only these scenario ids. */
  scenarios?: string[];
  cpuProf: boolean;
  node?: string;
  /** Throughput scenarios: each Node client holds this many MiB of live heap, as a service does (service-heap.ts). */
  heapMiB?: number;
}

export const MIB = 1048576;

export interface Ctx {
  o: BenchOptions;
  /** The broker the bench started (undefined with --bootstrap). */
  cluster: KafkaCluster | undefined;
  target: KafkaTarget;
  node: ClientNode;
  /** Per client family: null = available; a string = why not. */
  available: Map<string, string | null>;
  rdkafka: RdkafkaBuild;
  progress: Progress;
  runs: RunRecord[];
  allocs: AllocRecord[];
  topics: Map<string, LoadedTopic>;
  notes: string[];
}

/** The broker is gone (killed from outside, crashed): nothing after this can be measured. */
export class BrokerGone extends Error {}

/** A step of the run: counted and shown; refused when the bench's broker is no longer running. */
export function step(ctx: Ctx, what: string): void {
  const dead = ctx.cluster?.nodes.find((n) => !n.running);
  if (dead) throw new BrokerGone(`the broker (node ${dead.nodeId}) is no longer running; its log ends with:\n${dead.logTail(5)}`);
  ctx.progress.step(what);
}

/** Repetition r runs the clients starting from the r-th: no client always goes first or last. */
export function rotate<T>(list: readonly T[], r: number): T[] {
  const k = r % Math.max(1, list.length);
  return [...list.slice(k), ...list.slice(0, k)];
}

/** The clients of `all` that can run, recording a skipped run for each that cannot. */
export function availableClients(ctx: Ctx, s: ScenarioInfo, all: readonly string[]): string[] {
  return all.filter((c) => {
    const why = ctx.available.get(c);
    if (why) ctx.runs.push(skippedRun(s, c, why));
    return !why;
  });
}

export function skippedRun(s: ScenarioInfo, client: string, reason: string): RunRecord {
  return {
    scenario: s.id,
    client,
    rep: 0,
    status: 'skipped',
    reason,
    records: null,
    expectedRecords: s.records,
    bytes: null,
    checksum: null,
    recordsPerSec: null,
    mbPerSec: null,
    fetchSeconds: null,
    totalSeconds: null,
    totalRecordsPerSec: null,
    cpuSeconds: null,
    peakRssMb: null,
    gcMs: null,
    maxEventLoopStallMs: null,
  };
}

export function failedRun(s: ScenarioInfo, client: string, rep: number, reason: string): RunRecord {
  return { ...skippedRun(s, client, reason), rep, status: 'failed' };
}

/** A Node client's report as a run: figures over its fetch phase, checked against what was loaded. */
export function fromReport(s: ScenarioInfo, client: string, rep: number, r: ClientReport, expected: number): RunRecord {
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
    maxGcPauseMs: r.maxGcPauseMs ?? null,
    p99EventLoopDelayMs: r.p99EventLoopDelayMs ?? null,
    cpuUserSeconds: r.fetchCpuUserSeconds ?? null,
    cpuSystemSeconds: r.fetchCpuSystemSeconds ?? null,
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

export function describe(r: RunRecord): string {
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

export function label(client: string): string {
  return clientLabel(client);
}

export function topicFor(ctx: Ctx, s: ScenarioInfo): LoadedTopic {
  const id = s.topicOf ?? s.id;
  const t = ctx.topics.get(id);
  if (!t) throw new Error(`the topic of ${id} was not loaded`);
  return t;
}
