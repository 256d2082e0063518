// Run as-is after log2runs.py: node render.mjs '<meta json>' packages/bench/results packages/bench/results/analysis.md
// The full run's progress log (parsed by /tmp/log2runs.py) through the bench's own summarize,
// goals, Markdown and SVG: for a run that could not finish.
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { cpus, totalmem, release, type as osType } from 'node:os';
const root = '/work/wt-12/packages/bench/dist/src';
const { buildPlan, THROUGHPUT_CLIENTS } = await import(`${root}/plan.js`);
const { summarize, clientLabel } = await import(`${root}/report/summarize.js`);
const { evaluateGoals } = await import(`${root}/report/goals.js`);
const { markdownReport } = await import(`${root}/report/markdown.js`);
const { chartSvg } = await import(`${root}/report/svg.js`);
const { runs, allocs } = JSON.parse(readFileSync('/tmp/fallback-runs.json', 'utf8'));
const plan = buildPlan('full');
const measured = new Set(runs.map((r) => r.scenario));
const scenarios = plan.scenarios.filter((s) => measured.has(s.id));
for (const r of runs) {
  const s = scenarios.find((x) => x.id === r.scenario);
  r.expectedRecords = s.records;
  r.records = r.status === 'ok' ? s.records : null;
  r.bytes = r.status === 'ok' ? s.records * s.recordSize : null;
  if (r.recordsPerSec) {
    r.fetchSeconds = s.records / r.recordsPerSec;
    r.totalRecordsPerSec = r.totalSeconds ? s.records / r.totalSeconds : null;
  }
}
// kcat was skipped on every scenario (not installed).
for (const s of scenarios.filter((x) => x.touch !== 'full')) for (const id of ['kcat', 'kcat@queued']) runs.push({ scenario: s.id, client: id, rep: 0, status: 'skipped', reason: 'kcat is not on the PATH: install it with `apt-get install -y kcat` (Debian\'s kcat, librdkafka 2.0.2) and run again', records: null, expectedRecords: s.records, bytes: null, checksum: null, recordsPerSec: null, mbPerSec: null, fetchSeconds: null, totalSeconds: null, totalRecordsPerSec: null, cpuSeconds: null, peakRssMb: null, gcMs: null, maxEventLoopStallMs: null });
const rows = summarize(runs, allocs, scenarios);
const goals = evaluateGoals(rows, scenarios);
const meta = JSON.parse(process.argv[2]);
const cpu = cpus();
const results = {
  machine: { cpus: cpu.length, model: cpu[0]?.model ?? '?', memoryGb: Math.round(totalmem() / 2 ** 30), os: osType(), kernel: release() },
  node: { orchestrator: process.versions.node, clients: '24.21.0', path: meta.node },
  broker: { version: '4.4.0', bootstrap: meta.bootstrap, startedByBench: true },
  mode: 'full',
  startedAt: meta.startedAt,
  durationSeconds: meta.durationSeconds,
  clients: THROUGHPUT_CLIENTS.filter((id) => id !== 'ceiling-burn').map((id) => ({ id, label: id === 'rdkafka' ? 'node-rdkafka 3.6.1 (librdkafka 2.12.0)' : clientLabel(id), available: id !== 'kcat', ...(id === 'kcat' ? { reason: 'kcat is not on the PATH: install it with `apt-get install -y kcat`' } : {}) })),
  scenarios,
  results: rows,
  goals,
  profiles: [],
  notes: meta.notes,
};
const out = process.argv[3] ?? '/work/wt-12/packages/bench/results';
writeFileSync(`${out}/results.json`, `${JSON.stringify(results, null, 1)}\n`);
const analysis = readFileSync(process.argv[4] ?? `${out}/analysis.md`, 'utf8');
writeFileSync(`${out}/report.md`, markdownReport(results, analysis).replace('\n\n- Machine:', '\n\n> **An incomplete run, rendered from its progress log** (stopped at step 147 of 191 on a machine at load 19-42): read the Analysis section first.\n\n- Machine:'));
writeFileSync(`${out}/chart.svg`, chartSvg(results));
console.log(rows.length, 'rows;', goals.map((g) => `${g.id}: ${g.met} ${g.value}`).join('; '));
