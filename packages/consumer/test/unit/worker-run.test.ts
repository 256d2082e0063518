// run({ worker }) on the fake cluster: the handler of a module runs on worker threads with the
// scheduler's rules (key order, a failure retried with its key waiting, the commit of what
// finished), while the main thread's event loop stays free.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createConsumer, UsageError } from '../../src/index.js';
import { capturingLogger, FakeCluster, until } from '@kwire/testkit';

const dir = mkdtempSync(join(tmpdir(), 'kwire-worker-run-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

// Burns 1 ms of CPU per record, fails once on offset 13 of partition 0, and logs what it finished.
const HANDLER = `
import { appendFileSync, existsSync, writeFileSync } from 'node:fs';
export default async function (record) {
  const t = performance.now();
  while (performance.now() - t < 1) {}
  if (record.partition === 0 && record.offset === 13n && !existsSync(process.env.KWIRE_TEST_MARK)) {
    writeFileSync(process.env.KWIRE_TEST_MARK, '');
    throw new TypeError('worker says no');
  }
  appendFileSync(process.env.KWIRE_TEST_LOG, record.partition + ' ' + Buffer.from(record.key).toString() + ' ' + record.offset + ' ' + Buffer.from(record.value).toString() + '\\n');
}
`;

test('the handler runs on worker threads, keys in order, a failure retried, everything committed', async () => {
  const module = join(dir, 'handler.mjs');
  writeFileSync(module, HANDLER);
  process.env.KWIRE_TEST_LOG = join(dir, 'log.txt');
  process.env.KWIRE_TEST_MARK = join(dir, 'failed-once');
  const cluster = await FakeCluster.start();
  cluster.createTopic('t', 2);
  for (const p of [0, 1]) cluster.append('t', p, 200, (o) => `k${Number(o) % 16}`);
  const { logger, lines } = capturingLogger();
  const c = createConsumer({ bootstrapServers: cluster.bootstrap, groupId: 'g', autoOffsetReset: 'earliest', fetchMaxWaitMs: 50, enableAutoCommit: false, retryBackoffMs: 50, logger });
  const delay = monitorEventLoopDelay({ resolution: 5 });
  try {
    await c.subscribe({ topics: ['t'] });
    const run = c.run({ worker: { module, threads: 2 }, maxConcurrency: 8, ordering: 'key' });
    delay.enable();
    const logged = () => (existsSync(process.env.KWIRE_TEST_LOG!) ? readFileSync(process.env.KWIRE_TEST_LOG!, 'utf8').trim().split('\n') : []);
    // A worker logs a record before its answer reaches the main thread: the commit below needs the answers.
    await until('every record handled on the workers', () => logged().length === 400 && c.metrics().processing.finished === 400, 60_000, 20);
    delay.disable();
    const records = logged().map((l) => l.split(' '));
    assert.is(new Set(records.map((r) => `${r[0]}@${r[2]}`)).size, 400, 'each record once');
    const last = new Map<string, number>();
    let outOfOrder = 0;
    for (const [p, key, offset] of records) {
      if ((last.get(`${p}/${key}`) ?? -1) > Number(offset)) outOfOrder++;
      last.set(`${p}/${key}`, Number(offset));
    }
    assert.is(outOfOrder, 0, 'per key in offset order');
    assert.ok(
      records.every(([p, , o, v]) => v === `t-${p}-${o}-e0`),
      'the bytes crossed intact',
    );
    assert.is(c.metrics().processing.retried, 1);
    assert.ok(
      lines.some((l) => l.includes('processing failed') && l.includes('worker says no')),
      'the worker\u2019s error is in the log',
    );
    assert.ok(delay.max / 1e6 < 100, `the main thread's event loop stayed free: max delay ${(delay.max / 1e6).toFixed(1)} ms`);
    await c.commitSync();
    assert.is(cluster.committed.get('t\u00000')?.offset, 200n);
    assert.is(cluster.committed.get('t\u00001')?.offset, 200n);
    await c.close({ timeoutMs: 3_000 });
    await run;
  } finally {
    await c.close({ timeoutMs: 1_000 });
    await cluster.stop();
  }
});

test('a module that does not load rejects run() with a UsageError before any record is taken', async () => {
  const cluster = await FakeCluster.start();
  cluster.createTopic('t', 1, 10);
  const c = createConsumer({ bootstrapServers: cluster.bootstrap, groupId: 'g', autoOffsetReset: 'earliest', fetchMaxWaitMs: 50 });
  try {
    await c.subscribe({ topics: ['t'] });
    const err = await c.run({ worker: { module: join(dir, 'missing.mjs') } }).then(
      () => null,
      (e: unknown) => e,
    );
    assert.instance(err, UsageError);
    assert.match((err as Error).message, /missing\.mjs/);
    const both = await c.run({ worker: { module: join(dir, 'handler.mjs') }, eachMessage: async () => {} } as never).then(
      () => null,
      (e: unknown) => e,
    );
    assert.match(String(both), /worker replaces eachMessage/);
  } finally {
    await c.close({ timeoutMs: 1_000 });
    await cluster.stop();
  }
});

test.run();
