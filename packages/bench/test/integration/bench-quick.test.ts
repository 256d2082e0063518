// `npm run bench -- --quick` end to end against the test broker (KWIRE_BOOTSTRAP through
// useKafka, or a broker of its own): every client that ran must be verified, and the JSON, the
// Markdown report and the chart must be written. The quick run takes about a minute here.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { useKafka, type TestKafka } from '@kwire/broker';
import type { BenchResults } from '../../src/report/types.js';

const cli = join(dirname(fileURLToPath(import.meta.url)), '../../src/cli.js');
let kafka: TestKafka;
const out = mkdtempSync(join(tmpdir(), 'kwire-bench-quick-'));

test.before(async () => {
  kafka = await useKafka();
});
test.after(async () => {
  await kafka?.release();
  rmSync(out, { recursive: true, force: true });
});

test('--quick: every client present verified; results.json, --json, report.md and chart.svg written', async () => {
  const json = join(out, 'extra.json');
  const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, [cli, '--quick', '--bootstrap', kafka.bootstrap, '--out', out, '--json', json], { maxBuffer: 16 << 20, timeout: 600_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
  if (code !== 0) console.log(stderr.split('\n').slice(-40).join('\n'), stdout);
  assert.is(code, 0, 'the bench exits 0 when every client verified');
  for (const f of ['results.json', 'report.md', 'chart.svg']) assert.ok(existsSync(join(out, f)), f);
  assert.ok(existsSync(json), '--json FILE');
  const results = JSON.parse(readFileSync(json, 'utf8')) as BenchResults;
  assert.equal(Object.keys(results).slice(0, 4), ['machine', 'node', 'broker', 'mode']);
  const ran = results.results.filter((r) => r.status !== 'skipped');
  const failed = ran.filter((r) => !r.verified).map((r) => `${r.scenario} ${r.client}: ${r.reason}`);
  assert.equal(failed, [], 'every client that ran is verified');
  // Every kind of run is there, and the clients this machine has.
  for (const kind of ['throughput', 'group', 'latency', 'fairness', 'rebalance', 'soak'])
    assert.ok(
      ran.some((r) => r.kind === kind),
      kind,
    );
  const clients = new Set(ran.filter((r) => r.kind === 'throughput').map((r) => r.client));
  for (const c of ['kwire', 'kwire-nocrc', 'kafkajs', 'java@4MiB', 'ceiling', 'kwire-kafkajs']) assert.ok(clients.has(c), c);
  // Issue 32's and 33's goals are there too.
  assert.is(results.goals.filter((g) => g.issue === 32).length, 3);
  assert.is(results.goals.filter((g) => g.issue === 33).length, 2);
  for (const c of results.clients) if (!c.available) console.log(`  skipped: ${c.label}: ${c.reason}`);
  const kwire = ran.find((r) => r.kind === 'throughput' && r.client === 'kwire')!;
  assert.ok(kwire.recordsPerSec! > 0 && kwire.cpuSeconds! > 0 && kwire.peakRssMb! > 0 && kwire.allocBytesPerRecord !== null);
  // Issue 7's six goals and issue 16's, each labelled by its issue.
  assert.is(results.goals.filter((g) => g.issue === 7).length, 6);
  assert.ok(results.goals.filter((g) => g.issue === 16).length === 12);
  const fair = ran.find((r) => r.kind === 'fairness' && r.client === 'kwire')!;
  assert.ok(fair.fairness!.during.count > 0, 'live records measured during the drain');
  const split = fair.fairness!.split!;
  assert.is(split.toAnswer.count, fair.fairness!.during.count, 'every "during" record split at its answer');
  assert.is(split.inConsumer.count, fair.fairness!.during.count);
  if (process.platform === 'linux') {
    // The main thread ran during the drain (it decoded 1 KB records), and a wait is never negative.
    const cpu = split.cpu!;
    assert.ok(cpu.during.runMsPerSec > 0 && cpu.before.runMsPerSec > 0, `schedstat figures: ${JSON.stringify(cpu)}`);
    assert.ok(cpu.during.waitMsPerSec >= 0 && cpu.before.waitMsPerSec >= 0);
    assert.ok(cpu.during.runMsPerSec <= 1050 && cpu.before.runMsPerSec <= 1050, 'one thread runs at most 1000 ms a second (the readings and their clock are microseconds apart)');
  }
  assert.ok(split.toAnswer.p50 <= fair.fairness!.during.p50 + 1, 'the part until the answer is within the whole (fetchedAt is whole ms)');
  const md = readFileSync(join(out, 'report.md'), 'utf8');
  assert.match(md, /## Goals/);
  assert.match(readFileSync(join(out, 'chart.svg'), 'utf8'), /^<svg /);
  assert.match(stdout, /Throughput/);
  console.log(`  quick run: ${results.durationSeconds} s; kwire ${kwire.recordsPerSec} records/s on ${kwire.scenario}`);
});

test('the worker-thread experiment (opt-in clients split-*): the transport on a worker, records decoded on the main thread, each checksum the one kwire computes; not run unless named', async () => {
  const dir = join(out, 'split');
  const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [cli, '--quick', '--bootstrap', kafka.bootstrap, '--out', dir, '--scenarios', '100B-12p-lz4', '--clients', 'kwire,split-main,split-worker,split-worker-crc'],
      { maxBuffer: 16 << 20, timeout: 300_000 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
  if (code !== 0) console.log(stderr.split('\n').slice(-40).join('\n'), stdout);
  assert.is(code, 0);
  const results = JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8')) as BenchResults;
  const ran = results.results.filter((r) => r.status !== 'skipped');
  // Throughput rows only (the alloc pass of kwire is a row of its own kind).
  const rows = ran.filter((r) => r.kind === 'throughput');
  assert.equal(rows.map((r) => [r.client, r.verified, r.reason ?? null]).sort(), [
    ['kwire', true, null],
    ['split-main', true, null],
    ['split-worker', true, null],
    ['split-worker-crc', true, null],
  ]);
  assert.ok(rows.every((r) => r.verification.includes('checksum') && r.recordsPerSec! > 0));
  // In a run that does not name them, they do not run (the first test's --quick run).
  assert.ok(!JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')).results.some((r: { client: string; status: string }) => r.client.startsWith('split') && r.status !== 'skipped'));
});

test.run();
