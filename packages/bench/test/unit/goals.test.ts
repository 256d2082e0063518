// Issue 16's goals, evaluated from a fixed set of rows: each met, missed by how much, or not
// measured (the zero-allocation cursor until its client is wired).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { buildPlan, FULL_JVM_WARMUP_SECONDS, FULL_WARMUP_SECONDS, warmupSecondsFor, warmupsBefore } from '../../src/plan.js';
import { DEFAULT_MAX_BUFFERED_BYTES, evaluateGoals, issue16Goals, symmetricCeiling } from '../../src/report/goals.js';
import { markdownReport } from '../../src/report/markdown.js';
import { summarize } from '../../src/report/summarize.js';
import type { AllocRecord, BenchResults, FairnessFigures, ResultRow, RunRecord, ScenarioInfo } from '../../src/report/types.js';

const sc = (id: string, recordSize: number, partitions: number, compression: ScenarioInfo['compression'], records: number, touch: 'value' | 'full' = 'value'): ScenarioInfo => ({
  id,
  kind: 'throughput',
  title: id,
  recordSize,
  partitions,
  compression,
  records,
  repetitions: 1,
  touch,
});

const scenarios: ScenarioInfo[] = [
  sc('100B-12p-none', 100, 12, 'none', 1_000_000),
  sc('100B-12p-none-full', 100, 12, 'none', 1_000_000, 'full'),
  sc('1KB-12p-none', 1024, 12, 'none', 1_000_000),
  sc('10KB-12p-lz4', 10240, 12, 'lz4', 100_000),
  {
    id: 'fairness-100B-1p',
    kind: 'fairness',
    title: 'fairness',
    recordSize: 100,
    partitions: 1,
    compression: 'none',
    records: 140_000,
    rate: 10_000,
    seconds: 14,
    repetitions: 1,
    backlogRecords: 1_000_000,
    backlogRecordSize: 1024,
    backlogPartitions: 12,
  },
  { id: 'soak-1KB', kind: 'soak', title: 'soak', recordSize: 1024, partitions: 12, compression: 'none', records: 250_000, passes: 42, topicOf: '1KB-12p-none', repetitions: 1 },
];

function run(scenario: string, client: string, recordsPerSec: number | null, extra: Partial<RunRecord> = {}): RunRecord {
  const s = scenarios.find((x) => x.id === scenario)!;
  return {
    scenario,
    client,
    rep: 0,
    status: 'ok',
    records: s.records,
    expectedRecords: s.records,
    bytes: s.records * s.recordSize,
    checksum: null,
    recordsPerSec,
    mbPerSec: null,
    fetchSeconds: 1,
    totalSeconds: 1,
    totalRecordsPerSec: null,
    cpuSeconds: 1,
    peakRssMb: 100,
    gcMs: 1,
    maxEventLoopStallMs: 3,
    p99EventLoopDelayMs: 1.1,
    ...extra,
  };
}

const lat = (p50: number, p99: number) => ({ count: 10_000, p50, p99, p999: p99 + 1, max: p99 + 2 });
const fair = (before: number, during: number): FairnessFigures => ({ before: lat(1, before), during: lat(2, during), backlogRecords: 1_000_000, drainSeconds: 2, drainRecordsPerSec: 500_000 });

/** The fairness client's schedstat figures (Linux): the main thread's CPU time and run-queue wait per second. */
const CPU = { before: { runMsPerSec: 240, waitMsPerSec: 180 }, during: { runMsPerSec: 520, waitMsPerSec: 410 } };

function rows(extraRuns: RunRecord[] = [], allocs: AllocRecord[] = []): ResultRow[] {
  const runs: RunRecord[] = [
    // 100 B: kwire 5M against Java at its best 2M: 2.5x, met.
    run('100B-12p-none', 'kwire', 5_000_000, { cpuSeconds: 1.2 }),
    run('100B-12p-none', 'java', 2_000_000),
    run('100B-12p-none', 'ceiling', 8_000_000, { cpuSeconds: 1 }),
    // Full touch: 2.4M against 2M: 1.2x, missed (1.5x).
    run('100B-12p-none-full', 'kwire', 2_400_000),
    run('100B-12p-none-full', 'java', 2_000_000),
    // 1 KB: 1.0M against 0.5M: 2x, missed by 20%; CPU 1.5x the ceiling's: the CPU goal's worst.
    run('1KB-12p-none', 'kwire', 1_000_000, { cpuSeconds: 1.5, maxEventLoopStallMs: 7.5, maxGcPauseMs: 6.25, p99EventLoopDelayMs: 2.5 }),
    run('1KB-12p-none', 'java', 500_000),
    run('1KB-12p-none', 'ceiling', 1_500_000, { cpuSeconds: 1 }),
    // 10 KB lz4: 95k against the decompressing ceiling's 100k (the scanning one's 200k does not count).
    run('10KB-12p-lz4', 'kwire', 95_000, { cpuSeconds: 1.2 }),
    run('10KB-12p-lz4', 'ceiling', 200_000, { cpuSeconds: 0.5 }),
    run('10KB-12p-lz4', 'ceiling-decompress', 100_000, { cpuSeconds: 1 }),
    run('fairness-100B-1p', 'kwire', null, { fairness: { ...fair(5, 12), split: { toAnswer: lat(1, 9), inConsumer: lat(0.5, 3), maxLoopStallMs: 4.5, cpu: CPU } } }),
    run('fairness-100B-1p', 'java', null, { fairness: fair(6, 150) }),
    run('soak-1KB', 'kwire', 1_000_000, { rssByPassMb: [120, 130, 131, 135], peakRssMb: 250 }),
    ...extraRuns,
  ];
  return summarize(runs, [{ scenario: '100B-12p-none', client: 'kwire', allocBytesPerRecord: 309, windowRecords: 600_000, collections: 3 }, ...allocs], scenarios);
}

const by = (goals: ReturnType<typeof issue16Goals>, id: string) => {
  const g = goals.find((x) => x.id === id);
  if (!g) throw new Error(`no goal ${id}`);
  return g;
};

test('issue 16: the ratio goals against Java and the symmetric ceiling', () => {
  const goals = issue16Goals(rows(), scenarios);
  assert.ok(goals.every((g) => g.issue === 16));
  assert.is(by(goals, 'java-2x-100b').met, true);
  assert.is(by(goals, 'java-2x-100b').value, 2.5);
  assert.equal(by(goals, 'java-2x-100b').scenarios, ['100B-12p-none'], 'value only, not the full-touch scenario');
  assert.is(by(goals, 'java-1.5x-100b-full').met, false);
  assert.is(by(goals, 'java-1.5x-100b-full').value, 1.2);
  assert.match(by(goals, 'java-1.5x-100b-full').miss!, /missed by 20\.0%/);
  assert.is(by(goals, 'java-2.5x-1kb').met, false);
  assert.match(by(goals, 'java-2.5x-1kb').miss!, /missed by 20\.0%: kwire would need to be 25\.0% faster/);
  const ten = by(goals, 'ceiling-90-10kb');
  assert.is(ten.value, 0.95, 'against ceiling-decompress on lz4, not the scanning ceiling');
  assert.is(ten.met, true);
  assert.match(ten.measured, /95\.0%/);
});

test("issue 16: Java at --fetch-size 4 MiB (java@4MiB) is the Java family's best where it is faster, and only there", () => {
  // 1 KB: java@4MiB 625k beats java's 500k: kwire's 1.0M is 1.6x, not 2x.
  const goals = issue16Goals(rows([run('1KB-12p-none', 'java@4MiB', 625_000), run('100B-12p-none', 'java@4MiB', 1_900_000)]), scenarios);
  const oneKb = by(goals, 'java-2.5x-1kb');
  assert.is(oneKb.value, 1.6);
  assert.match(oneKb.measured, /against Java consumer @4MiB/);
  // 100 B: java's 2.0M beats java@4MiB's 1.9M: still 2.5x against the defaults' row.
  assert.is(by(goals, 'java-2x-100b').value, 2.5);
  const summarized = rows([run('1KB-12p-none', 'java@4MiB', 625_000)]);
  assert.match(summarized.find((r) => r.client === 'java@4MiB')!.verification, /BenchJava/);
});

test('issue 16: the symmetric ceiling is the decompressing one on compressed topics where it ran', () => {
  const r = rows();
  assert.is(symmetricCeiling(r, scenarios[3]!), 'ceiling-decompress');
  assert.is(symmetricCeiling(r, scenarios[0]!), 'ceiling');
  assert.is(
    symmetricCeiling(
      r.filter((x) => x.client !== 'ceiling-decompress'),
      scenarios[3]!,
    ),
    'ceiling',
  );
});

test('issue 16: CPU per GB against the ceiling, every record size; stalls; allocation', () => {
  const goals = issue16Goals(rows(), scenarios);
  const cpu = by(goals, 'cpu-per-gb-1.3x');
  assert.is(cpu.value, 1.5);
  assert.is(cpu.met, false);
  assert.match(cpu.miss!, /missed by 0\.20 x .* \(1KB-12p-none\)/);
  assert.match(cpu.measured, /10KB-12p-lz4: .* against ceiling-decompress's .* \(1\.20x\)/);
  const stall = by(goals, 'stall-max-5ms');
  assert.is(stall.value, 7.5);
  assert.match(stall.miss!, /missed by 2\.50 ms \(50% over\)/);
  // The longest GC pause beside the largest stall, where it was measured; not on the p99 goal.
  assert.match(stall.measured, /1KB-12p-none: 7\.5 ms \(ceiling [\d.]+ ms; kwire's longest GC pause 6\.25 ms\)/);
  assert.not.match(by(goals, 'stall-p99-2ms').measured, /GC pause/);
  assert.is(by(goals, 'stall-p99-2ms').value, 2.5);
  assert.is(by(goals, 'stall-p99-2ms').met, false);
  const alloc = by(goals, 'alloc-100b');
  assert.is(alloc.value, 309);
  assert.match(alloc.miss!, /missed by 209 B\/record/);
  assert.match(alloc.miss!, /not measured on 1KB-12p-none, 10KB-12p-lz4/);
});

test('issue 16: the zero-allocation cursor is "not measured" until its client runs, then evaluated', () => {
  const none = by(issue16Goals(rows(), scenarios), 'alloc-cursor-0b');
  assert.is(none.met, null);
  assert.match(none.miss!, /not measured: no 'kwire-cursor' allocation pass/);
  const withCursor = rows([run('100B-12p-none', 'kwire-cursor', 6_000_000)], [{ scenario: '100B-12p-none', client: 'kwire-cursor', allocBytesPerRecord: 0, windowRecords: 600_000, collections: 0 }]);
  const met = by(issue16Goals(withCursor, scenarios), 'alloc-cursor-0b');
  assert.is(met.met, true);
  assert.is(met.value, 0);
});

test('issue 16: latency under load, RSS over 10 GB and the peak RSS cap', () => {
  const goals = issue16Goals(rows(), scenarios);
  const l = by(goals, 'latency-under-load');
  assert.is(l.value, 7);
  assert.is(l.met, false);
  assert.match(l.miss!, /missed by 2\.00 ms/);
  assert.match(l.measured, /the Java consumer in the same probe: p99 6 ms before, 150 ms during/);
  // kwire's "during" split at the Fetch answer's arrival; Java has no split (no fetchedAt).
  assert.match(
    l.measured,
    /9 ms from CreateTime until the Fetch answer was read, 3 ms from there to the application \(max 5\), the consumer's largest event-loop stall during the drain 4\.5 ms; its main thread ran 520 ms and waited 410 ms for a CPU per second during the drain \(before it: 240 and 180\)/,
  );
  // A run without schedstat (not Linux) says nothing of the CPU, rather than a zero.
  const noCpu = summarize([run('fairness-100B-1p', 'kwire', null, { fairness: { ...fair(5, 12), split: { toAnswer: lat(1, 9), inConsumer: lat(0.5, 3), maxLoopStallMs: 4.5 } } })], [], scenarios);
  assert.is(noCpu[0]!.fairness!.split!.cpu, undefined);
  assert.not.match(by(issue16Goals(noCpu, scenarios), 'latency-under-load').measured, /waited/);
  assert.is(rows().find((r) => r.scenario === 'fairness-100B-1p' && r.client === 'java')!.fairness!.split, undefined);
  const flat = by(goals, 'flat-rss-10gb');
  assert.is(flat.met, true, '42 passes of 256 MB: 10.75 GB, flat');
  assert.match(flat.text, /10\.8 GB/);
  const peak = by(goals, 'peak-rss');
  assert.is(peak.target, (2 * DEFAULT_MAX_BUFFERED_BYTES) / 1048576 + 64);
  assert.is(peak.met, true);
  // A shorter soak: flat, but not over 10 GB.
  const short = scenarios.map((s) => (s.kind === 'soak' ? { ...s, passes: 12 } : s));
  const g = by(issue16Goals(rows(), short), 'flat-rss-10gb');
  assert.is(g.met, null);
  assert.match(g.miss!, /not evaluable: flat, but over 3\.1 GB only/);
});

test("both issues' goals in evaluateGoals and in the report", () => {
  const r = rows();
  const goals = evaluateGoals(r, scenarios);
  assert.ok(goals.some((g) => g.issue === 7));
  assert.ok(goals.some((g) => g.issue === 16));
  const results: BenchResults = {
    machine: { cpus: 2, model: 'cpu', memoryGb: 8, os: 'Linux', kernel: '6' },
    node: { orchestrator: '20', clients: '24', path: '/node' },
    broker: { version: '4', bootstrap: 'b', startedByBench: true },
    mode: 'full',
    startedAt: '2026-12-01T00:00:00.000Z',
    durationSeconds: 1,
    clients: [],
    scenarios,
    results: r,
    goals,
    profiles: [],
    notes: [],
  };
  const md = markdownReport(results);
  assert.match(md, /\| #16 \| kwire >= 2x the Java consumer/);
  assert.match(md, /\| #7 \| kwire >= 3x kafkajs/);
  assert.match(md, /## Latency under load \(fairness\)/);
  assert.match(md, /\| kwire \| 12\.00 \| 1\.00 \| 9\.00 \| 11\.00 \| 0\.50 \| 3\.00 \| 5\.00 \| 4\.50 \| 180 \| 410 \|/, 'the split table, kwire only');
});

test('the full plan has the 100 B full-touch and fairness scenarios and a 10 GB soak; quick stays small', () => {
  const full = buildPlan('full');
  const f = full.scenarios.find((s) => s.id === '100B-12p-none-full');
  assert.ok(f);
  assert.is(f!.sweep, false);
  // Warm-up by time in full runs (a fast client's pass is 0.2-0.4 s at 100 B); quick keeps one pass.
  assert.ok(full.scenarios.filter((s) => s.kind === 'throughput').every((s) => s.warmupSeconds === FULL_WARMUP_SECONDS && s.jvmWarmupSeconds === FULL_JVM_WARMUP_SECONDS));
  assert.ok(buildPlan('quick').scenarios.every((s) => !s.warmupSeconds));
  // One rule for every program: the JVM its own time, every other program the scenario's.
  assert.is(warmupSecondsFor(f!, 'java'), FULL_JVM_WARMUP_SECONDS);
  assert.is(warmupSecondsFor(f!, 'kwire'), FULL_WARMUP_SECONDS);
  assert.is(warmupSecondsFor(buildPlan('quick').scenarios[0]!, 'java'), 0);
  // Warm-ups before the first measured pass; the planned count when no pass was measured.
  assert.is(warmupsBefore([{ warmup: true }, { warmup: true }, { warmup: false }], 1), 2);
  assert.is(warmupsBefore([{ warmup: true }], 1), 1);
  const fairness = full.scenarios.find((s) => s.kind === 'fairness')!;
  assert.is(fairness.backlogRecords, 1_000_000);
  const soak = full.scenarios.find((s) => s.kind === 'soak')!;
  assert.ok(soak.records * soak.recordSize * soak.passes! >= 10e9);
  const quick = buildPlan('quick');
  const qf = quick.scenarios.find((s) => s.kind === 'fairness')!;
  assert.is(qf.topicOf, '100B-12p-lz4', 'quick drains its 100 B lz4 topic: no second load');
  assert.is(qf.backlogRecords, 200_000);
});

test.run();
