// Acceptance: a fresh capture of a Java consumer group session through `kwire record` passes
// `kwire conformance` on the first try. Both through the real CLI as users run it (@kwire/consumer's
// bin/kwire.js, which hands record and conformance to this package): the recorder as a child
// process stopped with SIGINT, the runner's exit code and table. The manifest's facts are
// what this test wrote and ran, not what our decoder read.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { consoleConsumer, consoleProducer, createTopic, useKafka, type TestKafka } from '@kwire/broker';
import type { CaptureManifest } from '../../src/index.js';

// dist/test/integration -> packages/consumer/bin.
const bin = resolve(dirname(fileURLToPath(import.meta.url)), '../../../../consumer/bin/kwire.js');
const run = Date.now().toString(36);
let kafka: TestKafka;
let dir: string;

test.before(async () => {
  kafka = await useKafka();
  dir = join(mkdtempSync(join(tmpdir(), 'kwire-accept-')), 'capture');
});

test.after(async () => {
  await kafka?.release();
  rmSync(dirname(dir), { recursive: true, force: true });
});

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((r) => child.once('exit', (code) => r(code)));
}

test('a Java consumer group session recorded through `kwire record` passes `kwire conformance` on the first try', async () => {
  const topic = `accept-${run}`;
  const group = `accept-g-${run}`;
  const records = Array.from({ length: 30 }, (_, i) => ({ key: `key-${i}`, value: `value ${i} of ${run}` }));
  await createTopic(kafka, { topic, partitions: 4 });

  const recorder = spawn(process.execPath, [bin, 'record', '--target', kafka.bootstrap.split(',')[0]!, '--out', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  recorder.stderr!.on('data', (c) => (stderr += c));
  const bootstrap = await new Promise<string>((resolvePromise, reject) => {
    let out = '';
    recorder.stdout!.on('data', (c) => {
      out += c;
      if (out.includes('\n')) resolvePromise(out.split('\n')[0]!.trim());
    });
    recorder.once('exit', (code) => reject(new Error(`kwire record exited with ${code}: ${stderr}`)));
  });
  assert.match(bootstrap, /^127\.0\.0\.1:\d+$/);
  const via = { bootstrap, dist: kafka.dist };
  try {
    await consoleProducer(via, { topic, lines: records.map((r) => `${r.key}\t${r.value}`), parseKey: true });
    // Two members: the second joins while the first runs, so the group rebalances.
    const props = { 'heartbeat.interval.ms': 500, 'auto.commit.interval.ms': 500 };
    const first = consoleConsumer(via, { topic, group, maxMessages: 1_000_000, idleTimeoutMs: 12_000, props });
    first.catch(() => {});
    await new Promise((r) => setTimeout(r, 4_000));
    const second = consoleConsumer(via, { topic, group, maxMessages: 1_000_000, idleTimeoutMs: 5_000, props });
    const [a, b] = await Promise.all([first, second]);
    assert.ok(a.length + b.length >= records.length, 'the members printed every record');
  } finally {
    recorder.kill('SIGINT');
  }
  assert.is(await exited(recorder), 0, stderr);
  assert.match(stderr, /stopped: \d+ connections, \d+ exchanges/);

  const manifest: CaptureManifest = {
    scenario: 'acceptance: Java consumer group',
    description: 'the console producer writes 30 keyed records; two console consumers of one group read them, the second joining while the first runs',
    origin: 'peer',
    client: { name: 'apache-kafka-java', version: kafka.dist.version.text },
    broker: { version: kafka.dist.version.text, nodes: 1 },
    facts: {
      clientSoftware: [{ name: 'apache-kafka-java', version: kafka.dist.version.text }],
      records: [{ topic, count: records.length, records, produced: true, fetched: 'all' }],
      topics: [{ name: topic, partitions: 4 }],
      groups: [{ groupId: group, protocol: 'classic', members: 2, topics: [topic] }],
      // The first member hears of the rebalance from a heartbeat or a commit, whichever comes first.
      errors: [{ api: 'JoinGroup', error: 'MEMBER_ID_REQUIRED' }, { error: 'REBALANCE_IN_PROGRESS' }],
    },
  };
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2));

  const conformance = spawn(process.execPath, [bin, 'conformance', dir, '--verbose'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  conformance.stdout!.on('data', (c) => (out += c));
  conformance.stderr!.on('data', (c) => (out += c));
  const code = await exited(conformance);
  assert.is(code, 0, out);
  assert.match(out, /JoinGroup \(11\)\s+9\s+\d+\s+\d+\s+0\s+0\s+yes/);
  assert.match(out, /SyncGroup \(14\)\s+5\s+\d+\s+\d+\s+0\s+0\s+yes/);
  assert.match(out, /ok\s+group .* members: the leader's JoinGroup responses list at most 2 members/);
  assert.match(out, /\nPASS\n$/);
  const index = readFileSync(join(dir, 'index.jsonl'), 'utf8');
  assert.ok(index.includes('"rewritten"'), 'Metadata/FindCoordinator answers were rewritten');
});

test.run();
