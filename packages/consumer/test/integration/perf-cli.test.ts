// kwire perf against a real broker: it reads exactly the records there are (by count, by the
// timeout at the end, as a group member), its figures are consistent with each other and with the
// records' timestamps, --json writes them, and bad input gets a clear usage error.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTopic, useKafka, type TestKafka } from '@kwire/broker';
import type { PerfResult } from '../../src/cli/perf.js';
import { TestProducer } from '@kwire/testkit';

const exec = promisify(execFile);
const bin = join(dirname(fileURLToPath(import.meta.url)), '../../../bin/kwire.js');
let kafka: TestKafka;
const topic = `perf-${Date.now().toString(36)}`;
const dir = mkdtempSync(join(tmpdir(), 'kwire-perf-'));
const PER_PARTITION = 3_000;
const VALUE = 200;
let producedAt = 0;

test.before(async () => {
  kafka = await useKafka();
  await createTopic(kafka, { topic, partitions: 3 });
  const producer = new TestProducer(kafka.bootstrap);
  producedAt = Date.now();
  for (let p = 0; p < 3; p++) {
    for (let i = 0; i < PER_PARTITION; i += 500) {
      const records = Array.from({ length: 500 }, (_, j) => ({
        key: Buffer.from(`k${p}-${i + j}`),
        value: Buffer.alloc(VALUE, 65 + ((i + j) % 26)),
        headers: [{ key: 'h', value: Buffer.from('v') }],
      }));
      await producer.send(topic, p, records);
    }
  }
  await producer.close();
});
test.after(async () => {
  await kafka?.release();
  rmSync(dir, { recursive: true, force: true });
});

async function perf(...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [bin, 'perf', ...args], { timeout: 120_000 });
    return { stdout, stderr, code: 0 };
  } catch (err) {
    const e = err as { stdout: string; stderr: string; code: number };
    return { stdout: e.stdout, stderr: e.stderr, code: e.code };
  }
}

function json(file: string): PerfResult {
  return JSON.parse(readFileSync(file, 'utf8')) as PerfResult;
}

test('--records: reads exactly N, figures consistent; --json writes them', async () => {
  const file = join(dir, 'records.json');
  const { stdout, stderr, code } = await perf('--bootstrap', kafka.bootstrap, '--topic', topic, '--records', '5000', '--json', file);
  assert.is(code, 0, stderr);
  const r = json(file);
  assert.is(r.records, 5000);
  assert.is(r.stoppedBy, 'records');
  assert.is(r.partitions, 3);
  assert.is(r.bytes, 5000 * VALUE);
  assert.ok(r.seconds > 0 && r.recordsPerSec > 0);
  // records/s and MB/s say the same thing as the seconds. The rates come from the unrounded time and
  // `seconds` is rounded to 1 ms, so compare the time each rate implies, within that 0.5 ms (a run of
  // 29 ms in CI: 1.6% apart as rates, 0.46 ms as times).
  const slack = 0.0005 + 0.001 * r.seconds;
  assert.ok(Math.abs(r.records / r.recordsPerSec - r.seconds) <= slack, `${r.records} records at ${r.recordsPerSec}/s in ${r.seconds} s`);
  // mbPerSec is rounded to 0.01 too.
  assert.ok(Math.abs(r.bytes / 1e6 / r.mbPerSec - r.seconds) <= slack + (r.seconds * 0.005) / r.mbPerSec, `${r.bytes} B at ${r.mbPerSec} MB/s in ${r.seconds} s`);
  assert.ok(r.fetches >= 1 && r.fetchLatencyMs.p50 > 0 && r.fetchLatencyMs.p99 >= r.fetchLatencyMs.p50);
  // End to end: the records were written before the run, so every latency is at least the time since.
  assert.ok(r.endToEnd !== null && r.endToEnd.count === 5000);
  assert.ok(r.endToEnd!.p50 <= r.endToEnd!.p99 && r.endToEnd!.p99 <= r.endToEnd!.max + 0.05);
  assert.ok(r.endToEnd!.max < Date.now() - producedAt + 1000 && r.endToEnd!.p50 > 0);
  assert.ok(r.cpuSeconds > 0 && r.peakRssMb > 20 && r.gcMs >= 0 && r.maxEventLoopStallMs !== null);
  // The longest collection is one of those counted: never more than their sum, and there is one when any ran.
  assert.ok(r.maxGcPauseMs <= r.gcMs + 0.1 && (r.gcCount === 0 || r.maxGcPauseMs > 0), `longest GC ${r.maxGcPauseMs} ms of ${r.gcMs} ms in ${r.gcCount}`);
  assert.match(stdout, /throughput +[\d,]+ records\/s, [\d.]+ MB\/s/);
  assert.match(stdout, /fetch latency +p50 [\d.]+ ms, p90/);
  assert.match(stdout, /end to end +p50/);
  assert.match(stdout, /peak RSS/);
});

test('-X and --config: the connection settings from properties (no --bootstrap)', async () => {
  const props = join(dir, 'client.properties');
  writeFileSync(props, `bootstrap.servers=${kafka.bootstrap}\nsecurity.protocol=PLAINTEXT\n`);
  const file = join(dir, 'config.json');
  const viaFile = await perf('--config', props, '--topic', topic, '--records', '100', '--json', file);
  assert.is(viaFile.code, 0, viaFile.stderr);
  assert.is(json(file).records, 100);
  const viaX = await perf('-X', `bootstrap.servers=${kafka.bootstrap}`, '-X', 'fetch.max.wait.ms=100', '--topic', topic, '--records', '100');
  assert.is(viaX.code, 0, viaX.stderr);
});

test('no --records: the whole topic, ended by --timeout; --full-touch; --group', async () => {
  const file = join(dir, 'all.json');
  const all = await perf('--bootstrap', kafka.bootstrap, '--topic', topic, '--timeout', '3000', '--full-touch', '--json', file);
  assert.is(all.code, 0, all.stderr);
  const r = json(file);
  assert.is(r.records, 3 * PER_PARTITION);
  assert.is(r.stoppedBy, 'timeout');
  assert.is(r.fullTouch, true);
  // The run lasts the 3 s timeout at least: progress lines every second on stderr.
  assert.match(all.stderr, /[\d.]+ s {2}9,000 records {2}[\d,]+ records\/s {2}[\d.]+ MB\/s {2}CPU \d+%/, 'progress lines on stderr');
  const group = await perf('--bootstrap', kafka.bootstrap, '--topic', topic, '--group', `perf-g-${topic}`, '--records', String(3 * PER_PARTITION), '--json', '-');
  assert.is(group.code, 0, group.stderr);
  const g = JSON.parse(group.stdout.trim().split('\n').pop()!) as PerfResult;
  assert.is(g.records, 3 * PER_PARTITION);
  assert.is(g.stoppedBy, 'records');
});

test('--duration stops a run on a topic that keeps nothing new; failures are clear', async () => {
  const file = join(dir, 'duration.json');
  const d = await perf('--bootstrap', kafka.bootstrap, '--topic', topic, '--from', 'latest', '--duration', '2', '--timeout', '60000', '--json', file);
  // Nothing new arrives: no record, so exit 1 and say so, after the duration (not the timeout).
  assert.is(d.code, 1);
  assert.match(d.stderr, /no record read/);
  const missing = await perf('--bootstrap', kafka.bootstrap, '--topic', `no-such-${topic}`);
  assert.is(missing.code, 1);
  assert.match(missing.stderr, /does not exist/);
  const usage = await perf('--bootstrap', kafka.bootstrap, '--topic', topic, '--records', '0');
  assert.is(usage.code, 2);
  assert.match(usage.stderr, /--records must be a positive number/);
  const none = await perf('--topic', topic);
  assert.is(none.code, 2);
  assert.match(none.stderr, /--bootstrap is required/);
});

test.run();
