// The pure parts of the benchmark: verification against the agreed checksum, medians and ratios,
// goal evaluation, and the console table, JSON, Markdown and SVG made from a fixed set of runs;
// plus the kcat output parser, the value digest and the CPU profile summary.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { LatencyHistogram } from '../../src/clients/common.js';
import { headerHash, recordHash, ValueDigest, valueHash } from '../../src/meter.js';
import { parseKcatOutput } from '../../src/orchestrator/kcat.js';
import { buildPlan } from '../../src/plan.js';
import { mergeShare } from '../../src/scenarios/share.js';
import { evaluateGoals, rssFlat } from '../../src/report/goals.js';
import { markdownReport } from '../../src/report/markdown.js';
import { summarizeProfile } from '../../src/report/profile.js';
import { bestOf, median, ratioToBest, spreadOf, summarize, verifyChecksums } from '../../src/report/summarize.js';
import { chartSvg } from '../../src/report/svg.js';
import { consoleReport, textTable } from '../../src/report/table.js';
import type { BenchResults, RunRecord, ScenarioInfo } from '../../src/report/types.js';
import type { ClientReport } from '../../src/clients/common.js';

const scenarios: ScenarioInfo[] = [
  { id: '100B-12p-none', kind: 'throughput', title: '100 B records, 12 partitions, uncompressed', recordSize: 100, partitions: 12, compression: 'none', records: 1000, repetitions: 3 },
  { id: '1KB-12p-zstd', kind: 'throughput', title: '1 KB records, 12 partitions, zstd', recordSize: 1024, partitions: 12, compression: 'zstd', records: 1000, repetitions: 1 },
  { id: '10KB-1p-none', kind: 'throughput', title: '10 KB records, 1 partition, uncompressed', recordSize: 10240, partitions: 1, compression: 'none', records: 100, repetitions: 1 },
  { id: 'group-1KB', kind: 'group', title: '3-member group', recordSize: 1024, partitions: 12, compression: 'zstd', records: 1000, members: 3, topicOf: '1KB-12p-zstd', repetitions: 1 },
  { id: 'latency-100B-1p', kind: 'latency', title: 'latency', recordSize: 100, partitions: 1, compression: 'none', records: 1000, rate: 10000, seconds: 20, repetitions: 1 },
  { id: 'rebalance', kind: 'rebalance', title: 'rebalance', recordSize: 100, partitions: 12, compression: 'none', records: 1000, topicOf: '100B-12p-none', repetitions: 2 },
  { id: 'soak', kind: 'soak', title: 'soak', recordSize: 1024, partitions: 12, compression: 'zstd', records: 1000, passes: 4, topicOf: '1KB-12p-zstd', repetitions: 1 },
  {
    id: 'share-x1',
    kind: 'share',
    title: 'share group of 1',
    recordSize: 1024,
    partitions: 12,
    compression: 'zstd',
    records: 1000,
    members: 1,
    topicOf: '1KB-12p-zstd',
    repetitions: 2,
    warmupPasses: 1,
  },
  {
    id: 'share-x3',
    kind: 'share',
    title: 'share group of 3',
    recordSize: 1024,
    partitions: 12,
    compression: 'zstd',
    records: 1000,
    members: 3,
    topicOf: '1KB-12p-zstd',
    repetitions: 1,
    warmupPasses: 1,
  },
];

function run(scenario: string, client: string, rep: number, recordsPerSec: number | null, extra: Partial<RunRecord> = {}): RunRecord {
  const s = scenarios.find((x) => x.id === scenario)!;
  return {
    scenario,
    client,
    rep,
    status: 'ok',
    records: s.records,
    expectedRecords: s.records,
    bytes: s.records * s.recordSize,
    checksum: client === 'java' || client === 'ceiling' ? null : `${s.records * s.recordSize}:abc`,
    recordsPerSec,
    mbPerSec: recordsPerSec === null ? null : (recordsPerSec * s.recordSize) / 1048576,
    fetchSeconds: 1,
    totalSeconds: 1.5,
    totalRecordsPerSec: recordsPerSec === null ? null : recordsPerSec / 1.5,
    cpuSeconds: 1,
    peakRssMb: 100,
    gcMs: 10,
    maxEventLoopStallMs: 2,
    ...extra,
  };
}

function fixture(): { runs: RunRecord[] } {
  const runs: RunRecord[] = [
    // 100 B: kwire 2.0M (median of 1.9, 2.0, 2.1), kafkajs 0.5M, platformatic 1.6M: 4x met, 1.25x missed.
    run('100B-12p-none', 'kwire', 0, 1_900_000),
    run('100B-12p-none', 'kwire', 1, 2_100_000),
    run('100B-12p-none', 'kwire', 2, 2_000_000),
    run('100B-12p-none', 'kafkajs', 0, 500_000),
    run('100B-12p-none', 'platformatic', 0, 1_600_000),
    run('100B-12p-none', 'ceiling', 0, 10_000_000),
    // A client whose values differ from what the others agree on.
    run('100B-12p-none', 'kcat', 0, 300_000, { checksum: '100000:bad' }),
    run('100B-12p-none', 'java', 0, 500_000),
    // 1 KB: kwire 400k against Java 500k: missed by 20%.
    run('1KB-12p-zstd', 'kwire', 0, 400_000),
    run('1KB-12p-zstd', 'java', 0, 500_000),
    run('1KB-12p-zstd', 'kafkajs', 0, 100_000),
    // 10 KB: kwire at 90% of the ceiling.
    run('10KB-1p-none', 'kwire', 0, 90_000),
    run('10KB-1p-none', 'ceiling', 0, 100_000),
    run('10KB-1p-none', 'kafkajs', 0, null, { status: 'skipped', reason: 'not selected', records: null, checksum: null }),
    run('group-1KB', 'kwire', 0, 300_000, { duplicates: 0 }),
    run('group-1KB', 'kafkajs', 0, 100_000, { status: 'failed', reason: 'the members consumed 990 distinct records of 1000', checksum: '1013760:abc' }),
    run('latency-100B-1p', 'kwire', 0, null, { latency: { p50: 1.2, p99: 4.5, p999: 9, max: 12, p99All: 20, count: 900, warmupExcluded: 100 } }),
    run('rebalance', 'kwire', 0, null, { joinToFirstRecordMs: 50, checksum: null }),
    run('rebalance', 'kwire', 1, null, { joinToFirstRecordMs: 70, checksum: null }),
    run('soak', 'kwire', 0, 1_000_000, { rssByPassMb: [120, 130, 131, 200], checksum: null }),
    // Share groups: kwire 60k and 80k (median 70k) against Java's 35k: 2x; of three, 90k against 100k.
    run('share-x1', 'kwire', 0, 60_000),
    run('share-x1', 'kwire', 1, 80_000),
    run('share-x1', 'java', 0, 35_000),
    run('share-x1', 'java', 1, 35_000),
    run('share-x3', 'kwire', 0, 90_000),
    run('share-x3', 'java', 0, 100_000),
  ];
  return { runs };
}

function results(): BenchResults {
  const { runs } = fixture();
  verifyChecksums(runs, scenarios);
  const rows = summarize(runs, [{ scenario: '100B-12p-none', client: 'kwire', allocBytesPerRecord: 300, windowRecords: 600, collections: 0 }], scenarios);
  return {
    machine: { cpus: 2, model: 'test cpu', memoryGb: 24, os: 'Linux', kernel: '6' },
    node: { orchestrator: '20.20.2', clients: '24.21.0', path: '/node' },
    broker: { version: '4.4.0', bootstrap: '127.0.0.1:9092', startedByBench: true },
    mode: 'full',
    startedAt: '2026-11-30T00:00:00.000Z',
    durationSeconds: 600,
    clients: [
      { id: 'kwire', label: 'kwire', available: true },
      { id: 'kcat-tuned', label: 'kcat, queued.min.messages=10M', available: false, reason: 'kcat is not on the PATH' },
    ],
    scenarios,
    results: rows,
    goals: evaluateGoals(rows, scenarios),
    profiles: [{ scenario: '100B-12p-none', file: 'results/profiles/x.cpuprofile', totalMs: 1000, top: [{ name: 'decode', where: 'protocol/records/record-batch.js:10', selfMs: 400, percent: 40 }] }],
    notes: ['a note'],
  };
}

test('median of odd and even counts, nulls ignored', () => {
  assert.is(median([3, 1, 2]), 2);
  assert.is(median([4, 1, 3, 2]), 2.5);
  assert.is(median([null, 5, undefined]), 5);
  assert.is(median([]), null);
});

test('verification: the majority checksum is the reference; the odd one out fails', () => {
  const { runs } = fixture();
  verifyChecksums(runs, scenarios);
  const kcat = runs.find((r) => r.client === 'kcat')!;
  assert.is(kcat.status, 'failed');
  assert.match(kcat.reason!, /differs from the reference 100000:abc/);
  assert.ok(runs.filter((r) => r.client === 'kwire' && r.scenario === '100B-12p-none').every((r) => r.status === 'ok'));
  // The group run reads the 1 KB topic: its checksum is checked against that scenario's reference.
  assert.is(runs.find((r) => r.scenario === 'group-1KB' && r.client === 'kwire')!.status, 'ok');
});

test('summarize: medians, ratios to the ceiling, statuses', () => {
  const r = results().results;
  const kwire = r.find((x) => x.scenario === '100B-12p-none' && x.client === 'kwire')!;
  assert.is(kwire.recordsPerSec, 2_000_000);
  assert.equal(kwire.runsRecordsPerSec, [1_900_000, 2_100_000, 2_000_000]);
  assert.is(kwire.ratioToCeiling, 0.2);
  assert.is(kwire.allocBytesPerRecord, 300);
  assert.is(kwire.verified, true);
  const kcat = r.find((x) => x.client === 'kcat')!;
  assert.is(kcat.verified, false);
  assert.is(kcat.status, 'failed');
  assert.is(kcat.ratioToCeiling, null, 'no ratio for a failed client');
  assert.is(r.find((x) => x.scenario === '10KB-1p-none' && x.client === 'kafkajs')!.status, 'skipped');
  assert.is(r.find((x) => x.scenario === 'rebalance')!.joinToFirstRecordMs, 60);
  assert.match(r.find((x) => x.client === 'java' && x.scenario === '100B-12p-none')!.verification, /checksum/);
  assert.is(kwire.spread, 0.1, '(2.1M - 1.9M) / 2.0M');
});

test('goals: met, missed by how much, and not evaluable', () => {
  const goals = results().goals;
  const by = (id: string) => goals.find((g) => g.id === id)!;
  assert.is(by('kafkajs-3x').met, true);
  assert.is(by('kafkajs-3x').value, 4);
  assert.is(by('platformatic-1.5x').met, false);
  assert.is(by('platformatic-1.5x').value, 1.25);
  assert.match(by('platformatic-1.5x').miss!, /missed by 16\.7%/);
  assert.match(by('platformatic-1.5x').miss!, /20\.0% faster/);
  assert.is(by('java-1kb').met, false);
  assert.match(by('java-1kb').miss!, /missed by 20\.0%/);
  assert.is(by('ceiling-10kb').met, true);
  assert.match(by('ceiling-10kb').measured, /90\.0%/);
  assert.is(by('latency-p99').met, true);
  assert.is(by('latency-p99').value, 4.5);
  // 200 MiB against 130 MiB settled: 70 MiB of growth, allowance 45 MiB.
  assert.is(by('flat-rss').met, false);
  assert.match(by('flat-rss').miss!, /grew 70\.0 MiB/);
  assert.equal(rssFlat([100, 110, 112, 115]), { settled: 110, worst: 115, allowance: 43, flat: true });
  assert.is(rssFlat([1, 2]), null);
});

test('goals are not evaluable when a client did not verify', () => {
  const rows = results().results.map((r) => (r.client === 'kafkajs' ? { ...r, verified: false, status: 'failed' as const } : r));
  const g = evaluateGoals(rows, scenarios).find((x) => x.id === 'kafkajs-3x')!;
  assert.is(g.met, null);
  assert.match(g.miss!, /not evaluable/);
});

test('console table, JSON, Markdown and SVG from a fixed result', () => {
  const res = results();
  const text = consoleReport(res);
  assert.match(text, /100B-12p-none\s+kwire\s+2,000,000/);
  assert.match(text, /FAILED/);
  assert.match(text, /\[MISSED\] kwire >= 1\.5x @platformatic\/kafka/);
  assert.match(text, /skipped kcat, queued\.min\.messages=10M: kcat is not on the PATH/);
  assert.match(text, /latency-100B-1p\s+kwire\s+1\.20\s+4\.50/);

  const json = JSON.parse(JSON.stringify(res)) as BenchResults;
  for (const key of ['machine', 'node', 'broker', 'results']) assert.ok(key in json, key);
  for (const key of ['scenario', 'client', 'recordsPerSec', 'mbPerSec', 'cpuSeconds', 'peakRssMb', 'allocBytesPerRecord', 'verified']) assert.ok(key in json.results[0]!, key);

  const md = markdownReport(res, 'The decoder dominates.');
  assert.match(md, /^# kwire benchmark/);
  assert.match(md, /## Goals/);
  assert.match(md, /\*\*missed\*\*: missed by 16\.7%/);
  assert.match(md, /\| \*\*kwire\*\* \| defaults \| 2,000,000 \| 1,900,000-2,100,000 \(10%\) \|/);
  assert.match(md, /!\[records\/s as a ratio to the transport ceiling\]\(chart\.svg\)/);
  assert.match(md, /### Each peer at its best/);
  assert.match(md, /## Analysis\n\nThe decoder dominates\./);
  assert.match(md, /protocol\/records\/record-batch\.js:10/);
  assert.match(md, /kcat.*\*\*FAILED\*\*/);

  const svg = chartSvg(res);
  assert.ok(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"'));
  assert.ok(svg.trimEnd().endsWith('</svg>'));
  // One bar per verified throughput client with a ratio: 5 at 100 B (kcat failed), 2 at 10 KB.
  assert.is((svg.match(/<rect x=/g) ?? []).length, 7);
  assert.match(svg, /FAILED/);
  assert.match(svg, /skipped/);
  // Balanced tags: every <text> closed.
  assert.is((svg.match(/<text /g) ?? []).length, (svg.match(/<\/text>/g) ?? []).length);
  assert.not.match(svg, /[<>]\s*[<>]&(?!amp;|lt;|gt;|quot;)/);
});

test('--heap-mib: the report and the console say what heap each Node client held; without it, nothing', () => {
  const plain = results();
  assert.not.match(markdownReport(plain), /Service heap/);
  assert.not.match(consoleReport(plain), /live heap/);
  const held = { ...results(), heapMiB: 128 };
  assert.match(markdownReport(held), /- Service heap \(--heap-mib 128\): in the throughput scenarios each Node client held 128 MiB of live objects/);
  assert.match(consoleReport(held), /^Each Node client held 128 MiB of live heap \(--heap-mib\)/);
});

test('share groups: rows per member count, the kwire / Java ratio in the console and the Markdown', () => {
  const res = results();
  const x1 = res.results.filter((r) => r.scenario === 'share-x1');
  assert.equal(
    x1.map((r) => [r.client, r.members, r.recordsPerSec, r.verified]),
    [
      ['kwire', 1, 70_000, true],
      ['java', 1, 35_000, true],
    ],
  );
  assert.match(res.results.find((r) => r.scenario === 'share-x1' && r.client === 'java')!.verification, /ShareConsumerPerformance/);
  const text = consoleReport(res);
  assert.match(text, /share-x1\s+1\s+kwire\s+70,000\s+29%.*2\.00x\s+yes/);
  assert.match(text, /share-x3\s+3\s+kwire\s+90,000.*0\.90x\s+yes/);
  const md = markdownReport(res);
  assert.match(md, /## Share groups \(KIP-932\)/);
  assert.match(md, /\| share-x1 \| 1 \| 70,000 \| 35,000 \| 2\.00x \|/);
  assert.match(md, /\| share-x3 \| 3 \| 90,000 \| 100,000 \| 0\.90x \|/);
});

test('share groups: a kwire pass is verified offset by offset across the members', () => {
  const s: ScenarioInfo = { id: 'share-t', kind: 'share', title: 't', recordSize: 4, partitions: 2, compression: 'none', records: 6, members: 2, repetitions: 1 };
  const ends = [3, 3];
  const dir = mkdtempSync(join(tmpdir(), 'kwire-share-merge-'));
  // readHashes' format: per partition, its length, the int32 hashes, the seen bytes.
  const file = (name: string, parts: [number[], number[]][]) => {
    const chunks: Buffer[] = [];
    for (const [hashes, seen] of parts) {
      const b = Buffer.alloc(4 + 4 * hashes.length + seen.length);
      b.writeUInt32LE(hashes.length, 0);
      hashes.forEach((h, i) => b.writeInt32LE(h, 4 + 4 * i));
      Buffer.from(seen).copy(b, 4 + 4 * hashes.length);
      chunks.push(b);
    }
    writeFileSync(join(dir, name), Buffer.concat(chunks));
  };
  const report = (records: number, tStart: number, tLast: number): ClientReport =>
    ({
      client: 'kwire',
      mode: 'share',
      records,
      bytes: records * 4,
      checksum: null,
      tStart,
      tReady: tStart,
      tFirst: tStart,
      tLast,
      fetchSeconds: 1,
      firstToLastSeconds: 1,
      hrReadyUs: 0,
      hrLastUs: 0,
      totalSeconds: 1,
      cpuSeconds: 9,
      fetchCpuSeconds: 0.5,
      peakRssMb: 80,
      gcMs: 3,
      gcCount: 1,
      maxEventLoopStallMs: 2,
    }) as ClientReport;
  try {
    // Member 0 got partition 0 and offset 0 of partition 1; member 1 the rest.
    file('a.0', [
      [
        [1, 2, 3],
        [1, 1, 1],
      ],
      [
        [4, 0, 0],
        [1, 0, 0],
      ],
    ]);
    file('a.1', [
      [
        [0, 0, 0],
        [0, 0, 0],
      ],
      [
        [0, 5, 6],
        [0, 1, 1],
      ],
    ]);
    const ok = mergeShare(s, 0, [report(4, 1000, 2500), report(2, 1200, 3000)], ends, (i) => join(dir, `a.${i}`));
    assert.is(ok.status, 'ok');
    assert.is(ok.records, 6);
    assert.is(ok.duplicates, 0);
    // From the first member's creation to the last record of any member: 2 s.
    assert.is(ok.recordsPerSec, 3);
    assert.is(ok.cpuSeconds, 1);
    const digest = new ValueDigest();
    for (const h of [1, 2, 3, 4, 5, 6]) digest.addHash(h, 4);
    assert.is(ok.checksum, digest.toString());
    // Offset 1 of partition 1 delivered to both (a lock expired): counted, and the pass fails.
    file('b.0', [
      [
        [1, 2, 3],
        [1, 1, 1],
      ],
      [
        [4, 5, 0],
        [1, 1, 0],
      ],
    ]);
    const twice = mergeShare(s, 0, [report(5, 1000, 2500), report(2, 1200, 3000)], ends, (i) => join(dir, `${i === 0 ? 'b' : 'a'}.${i}`));
    assert.is(twice.duplicates, 1);
    assert.is(twice.status, 'failed');
    assert.match(twice.reason!, /1 records delivered twice/);
    // Offset 2 of partition 1 never delivered.
    file('c.1', [
      [
        [0, 0, 0],
        [0, 0, 0],
      ],
      [
        [0, 5, 0],
        [0, 1, 0],
      ],
    ]);
    const short = mergeShare(s, 0, [report(4, 1000, 2500), report(1, 1200, 3000)], ends, (i) => join(dir, `${i === 0 ? 'a' : 'c'}.${i}`));
    assert.is(short.status, 'failed');
    assert.match(short.reason!, /5 distinct records of 6/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("each peer at its best: the family's fastest verified variant, ratios against it; spread", () => {
  const { runs } = fixture();
  runs.push(run('100B-12p-none', 'platformatic@1MiB', 0, 1_800_000), run('100B-12p-none', 'platformatic@4MiB', 0, 400_000, { status: 'failed', reason: 'short' }));
  const rows = summarize(runs, [], scenarios);
  assert.is(bestOf(rows, '100B-12p-none', 'platformatic')!.client, 'platformatic@1MiB');
  assert.is(bestOf(rows, '100B-12p-none', 'kafkajs')!.client, 'kafkajs');
  assert.is(ratioToBest(rows, '100B-12p-none', 'kwire', 'platformatic'), 2_000_000 / 1_800_000);
  assert.is(bestOf(rows, '100B-12p-none', 'rdkafka'), undefined);
  const g = evaluateGoals(rows, scenarios).find((x) => x.id === 'platformatic-1.5x')!;
  assert.is(g.value, 1.111, 'the goal is taken against the best setting');
  assert.match(g.measured, /against @platformatic\/kafka @1MiB/);
  const row = rows.find((r) => r.client === 'platformatic@1MiB')!;
  assert.is(row.family, 'platformatic');
  assert.match(row.setting!, /1 MiB/);
  assert.is(spreadOf([1, 2, 3]), 1);
  assert.is(spreadOf([5]), null);
});

test('full-touch record hash: every value byte counts, header order does not', () => {
  const v = Buffer.from('ABCDEFGHIJKLMNOPQRSTUVWXYZ');
  const w = Buffer.from(v);
  w[13] = 0x61; // a middle byte, which valueHash does not read
  assert.is(valueHash(v), valueHash(w));
  const key = Buffer.from('k-00000000000001');
  const hs = headerHash('trace-id', Buffer.from('XYZ')) ^ headerHash('source', Buffer.from('kwire-bench'));
  const swapped = headerHash('source', Buffer.from('kwire-bench')) ^ headerHash('trace-id', Buffer.from('XYZ'));
  assert.is(recordHash(v, key, hs, 7, 1_764_000_000_123), recordHash(v, key, swapped, 7, 1_764_000_000_123));
  assert.is.not(recordHash(v, key, hs, 7, 1_764_000_000_123), recordHash(w, key, hs, 7, 1_764_000_000_123));
  assert.is.not(recordHash(v, key, hs, 7, 1_764_000_000_123), recordHash(v, key, hs, 8, 1_764_000_000_123));
  assert.is.not(recordHash(v, key, hs, 7, 1_764_000_000_123), recordHash(v, null, hs, 7, 1_764_000_000_123));
  // A header key as a string or as bytes hashes the same (libraries hand over either).
  assert.is(headerHash('source', null), headerHash(Buffer.from('source'), null));
});

test('textTable pads and right-aligns', () => {
  assert.is(
    textTable(
      ['a', 'n'],
      [
        ['x', '1'],
        ['yy', '100'],
      ],
      [false, true],
    ),
    'a     n\n--  ---\nx     1\nyy  100',
  );
});

test('kcat output: count and bytes of "%S\\n" lines; anything else is an error', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kcat-test-'));
  try {
    const file = join(dir, 'out');
    writeFileSync(file, '26\n1\n3000\n');
    assert.equal(parseKcatOutput(file), { records: 3, bytes: 3027 });
    writeFileSync(file, '5\n5');
    assert.match(parseKcatOutput(file).error!, /unfinished/);
    writeFileSync(file, '5 ABCDE\n');
    assert.match(parseKcatOutput(file).error!, /not a size/);
    writeFileSync(file, '5\n\n');
    assert.match(parseKcatOutput(file).error!, /empty line/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('value digests combine across members like one digest', () => {
  const all = new ValueDigest();
  const a = new ValueDigest();
  const b = new ValueDigest();
  const vs = ['one', 'two', 'three', 'four'].map((s) => Buffer.from(s.repeat(5)));
  vs.forEach((v, i) => {
    all.add(v);
    (i % 2 ? a : b).add(v);
  });
  const merged = new ValueDigest();
  for (const v of vs) merged.addHash(valueHash(v), v.length);
  assert.is(merged.toString(), all.toString());
});

test('latency histogram percentiles at 50 us resolution', () => {
  const h = new LatencyHistogram();
  for (let i = 1; i <= 1000; i++) h.add(i / 100); // 0.01 .. 10 ms
  assert.is(h.count, 1000);
  assert.ok(Math.abs(h.percentile(50) - 5) <= 0.1);
  assert.ok(Math.abs(h.percentile(99) - 9.9) <= 0.1);
  assert.ok(Math.abs(h.percentile(100) - 10) <= 0.1);
});

test('CPU profile summary: self time by function, idle left out', () => {
  const profile = {
    nodes: [
      { id: 1, callFrame: { functionName: '(root)', url: '', lineNumber: -1 } },
      { id: 2, callFrame: { functionName: 'decode', url: 'file:///r/packages/protocol/dist/src/records/record-batch.js', lineNumber: 9 } },
      { id: 3, callFrame: { functionName: '(idle)', url: '', lineNumber: -1 } },
      { id: 4, callFrame: { functionName: 'onread', url: 'file:///r/node_modules/kafkajs/src/x.js', lineNumber: 0 } },
    ],
    samples: [2, 2, 3, 4, 2],
    timeDeltas: [0, 1000, 1000, 5000, 1000, 1000],
  };
  const s = summarizeProfile(profile, 'sc', 'f');
  assert.is(s.totalMs, 4);
  assert.equal(s.top[0], { name: 'decode', where: 'protocol/records/record-batch.js:10', selfMs: 3, percent: 75 });
  assert.equal(s.top[1], { name: 'onread', where: 'kafkajs/src/x.js:1', selfMs: 1, percent: 25 });
});

test('plans: full covers every size, partition count, codec and kind; quick is small', () => {
  const full = buildPlan('full');
  const tp = full.scenarios.filter((s) => s.kind === 'throughput');
  assert.equal(
    [...new Set(tp.map((s) => s.recordSize))].sort((a, b) => a - b),
    [100, 1024, 10240],
  );
  assert.equal(
    [...new Set(tp.map((s) => s.partitions))].sort((a, b) => a - b),
    [1, 12],
  );
  assert.equal([...new Set(tp.map((s) => s.compression))].sort(), ['lz4', 'none', 'zstd']);
  for (const k of ['group', 'latency', 'rebalance', 'soak', 'share'])
    assert.ok(
      full.scenarios.some((s) => s.kind === k),
      k,
    );
  // Steady state: a warm-up pass, then at least 3 measured ones of 2 s or 1 GB (issue 32); a full-touch scenario.
  assert.ok(tp.every((s) => s.repetitions >= 3 && s.warmupPasses === 1 && s.passSeconds === 2));
  assert.ok(tp.some((s) => s.touch === 'full'));
  // Share groups of 1 and of 3 members on the 1 KB topic, in steady state; not in --quick (over a minute).
  assert.equal(
    full.scenarios.filter((s) => s.kind === 'share').map((s) => [s.id, s.members, s.topicOf, s.warmupPasses, s.repetitions]),
    [
      ['share-1KB-12p-none-250k-x1', 1, '1KB-12p-none-250k', 1, 3],
      ['share-1KB-12p-none-250k-x3', 3, '1KB-12p-none-250k', 1, 3],
    ],
  );
  // --reps sets the share runs' passes too.
  assert.ok(
    buildPlan('full', 7)
      .scenarios.filter((s) => s.kind === 'share')
      .every((s) => s.repetitions === 7),
  );
  const quick = buildPlan('quick');
  assert.not.ok(quick.scenarios.some((s) => s.kind === 'share'));
  assert.ok(quick.scenarios.every((s) => s.repetitions === 1 && s.records <= 200_000));
  for (const s of [...full.scenarios, ...quick.scenarios])
    if (s.topicOf)
      assert.ok(
        (s.topicOf === s.id ? [] : [...full.scenarios, ...quick.scenarios]).some((x) => x.id === s.topicOf),
        s.id,
      );
});

test.run();
