// No JVM outlives the process that started it, whichever way that process ends; and a node
// restarts on its own ports and data.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { consumerPerformance, createTopic, probeApiVersions, producerPerformance, startKafka, strayJvms } from '../../src/index.js';

const holder = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'hold-broker.js');

/** Alive and not a zombie (a re-parented JVM may wait to be reaped by a PID 1 that never reaps). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

async function gone(pid: number, withinMs: number): Promise<number> {
  const started = Date.now();
  while (alive(pid)) {
    if (Date.now() - started > withinMs) return -1;
    await sleep(100);
  }
  return Date.now() - started;
}

/** Starts hold-broker.js in `mode`; resolves with the child and the broker's JVM pid. */
async function hold(mode: 'wait' | 'throw') {
  const child = spawn(process.execPath, [holder, mode], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.on('exit', (code, signal) => r({ code, signal })));
  let stderr = '';
  child.stderr.on('data', (c) => (stderr += c));
  const info = await new Promise<{ pid: number; bootstrap: string }>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (c) => {
      out += c;
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve(JSON.parse(line));
    });
    void exited.then(({ code, signal }) => reject(new Error(`holder ended (${signal ?? code}) before the broker started: ${stderr}`)));
  });
  assert.ok(alive(info.pid), 'the broker JVM runs');
  await probeApiVersions('127.0.0.1', Number(info.bootstrap.split(':')[1]));
  return { child, exited, jvm: info.pid };
}

test('SIGKILL of the Node process: the watchdog ends the JVM', async () => {
  const { child, exited, jvm } = await hold('wait');
  child.kill('SIGKILL');
  await exited;
  const ms = await gone(jvm, 30_000);
  assert.ok(ms >= 0, `JVM ${jvm} still alive 30 s after its parent was killed`);
});

test('SIGINT (Ctrl-C) of the Node process: the launcher stops the JVM, then the process ends by the signal', async () => {
  const { child, exited, jvm } = await hold('wait');
  child.kill('SIGINT');
  const { signal } = await exited;
  assert.is(signal, 'SIGINT', 're-raised, so the exit status says "interrupted"');
  assert.ok((await gone(jvm, 10_000)) >= 0, `JVM ${jvm} survived SIGINT of its parent`);
});

test('an uncaught exception after start: the exit handler kills the JVM', async () => {
  const { exited, jvm } = await hold('throw');
  const { code } = await exited;
  assert.is(code, 1);
  assert.ok((await gone(jvm, 10_000)) >= 0, `JVM ${jvm} survived its parent's crash`);
});

test('no pid file points at a live JVM from the runs above', () => {
  const mine = strayJvms().filter((s) => s.label.startsWith('kafka node') && s.owner !== process.pid && !alive(s.owner));
  assert.equal(mine, []);
});

test('a node stopped and started again keeps its ports and its data', async () => {
  const cluster = await startKafka({ heapMb: 512 });
  try {
    const node = cluster.nodes[0]!;
    await createTopic(cluster, { topic: 'restart', partitions: 2 });
    await producerPerformance(cluster, { topic: 'restart', numRecords: 5_000, recordSize: 50 });
    const before = node.pid;
    await node.stop();
    assert.not.ok(node.running);
    await probeApiVersions('127.0.0.1', node.port, 1_000).then(
      () => assert.unreachable('a stopped broker answered'),
      () => {},
    );
    await node.start();
    assert.ok(node.running);
    assert.is.not(node.pid, before);
    const consumed = await consumerPerformance(cluster, { topic: 'restart', messages: 5_000 });
    assert.is(consumed.records, 5_000);
  } finally {
    await cluster.stop();
  }
  assert.not.ok(cluster.nodes[0]!.running);
});

test.run();
