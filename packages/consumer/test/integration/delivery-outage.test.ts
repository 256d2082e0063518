// Issue 10 on a cluster of its own that the tests freeze and kill: a member that cannot heartbeat
// for session.timeout.ms stops delivering (no zombie) and rejoins when it can; close() with the
// cluster gone resolves within its timeout and says what stayed uncommitted.
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startKafka, type KafkaCluster } from '@kwire/broker';
import { createConsumer, type Consumer } from '../../src/index.js';
import { TestProducer, until, within } from '@kwire/testkit';

let cluster: KafkaCluster;
let producer: TestProducer;
const run = Date.now().toString(36);
const open: Consumer[] = [];
const SESSION_MS = 6_000;
const HEARTBEAT_MS = 1_000;

test.before(async () => {
  cluster = await startKafka();
  producer = new TestProducer(cluster.bootstrap);
});
test.after(async () => {
  await Promise.allSettled(open.map((c) => c.close({ timeoutMs: 2_000 })));
  await producer?.close();
  await cluster?.stop();
});

function member(groupId: string, extra: Record<string, unknown> = {}): Consumer {
  const c = createConsumer({
    bootstrapServers: cluster.bootstrap,
    groupId,
    autoOffsetReset: 'earliest',
    fetchMaxWaitMs: 100,
    sessionTimeoutMs: SESSION_MS,
    heartbeatIntervalMs: HEARTBEAT_MS,
    requestTimeoutMs: 4_000,
    retryBackoffMs: 100,
    ...extra,
  });
  open.push(c);
  return c;
}

test('a member whose heartbeats cannot get through for session.timeout.ms loses its partitions, then rejoins', async () => {
  const topic = `zombie-${run}`;
  await producer.createTopics([topic], 2);
  await producer.send(
    topic,
    0,
    Array.from({ length: 100 }, (_, i) => ({ value: `a${i}` })),
  );
  const c = member(`zombie-${run}`);
  await c.subscribe({ topics: [topic] });
  await c.assigned();
  const it = within(c, 60_000, 'the first batch')[Symbol.asyncIterator]();
  await it.next();
  assert.is(c.assignment().length, 2);
  const pid = cluster.nodes[0]!.pid!;
  const lost = once(c, 'lost');
  // A frozen broker: connections stay open, nothing answers (a black hole, not a refusal).
  process.kill(pid, 'SIGSTOP');
  const frozenAt = Date.now();
  let lostAfter: number;
  try {
    await Promise.race([lost, sleep(SESSION_MS + 20_000).then(() => assert.unreachable('no lost event'))]);
    lostAfter = Date.now() - frozenAt;
    assert.equal(c.assignment(), [], 'nothing is fetched or delivered after the session expired');
  } finally {
    process.kill(pid, 'SIGCONT');
  }
  assert.ok(lostAfter <= SESSION_MS + HEARTBEAT_MS + 1_500, `lost ${lostAfter} ms after the freeze (session ${SESSION_MS} + heartbeat ${HEARTBEAT_MS})`);
  assert.ok(lostAfter >= SESSION_MS - HEARTBEAT_MS - 500, `lost only ${lostAfter} ms after the freeze: not before the session could have expired`);
  // Back: the member joins again and gets its partitions.
  await until('the partitions to come back', () => c.assignment().length === 2, 60_000);
  await it.return?.(undefined);
});

test('close() with the cluster gone resolves within its timeout and reports what was not committed', async () => {
  const topic = `gone-${run}`;
  await producer.createTopics([topic]);
  await producer.send(
    topic,
    0,
    Array.from({ length: 50 }, (_, i) => ({ value: `b${i}` })),
  );
  // No auto-commit before the kill: the commit on close is the one that cannot happen.
  const c = member(`gone-${run}`, { autoCommitIntervalMs: 600_000 });
  await c.subscribe({ topics: [topic] });
  const it = within(c, 60_000, 'the records')[Symbol.asyncIterator]();
  const first = await it.next();
  const next = (first.value as { nextOffset: bigint }).nextOffset;
  // Finish the batch (the loop asks for the next one), then the cluster goes away.
  const pending = it.next();
  pending.catch(() => {});
  await sleep(100);
  await cluster.nodes[0]!.kill('SIGKILL');
  const started = Date.now();
  const result = await c.close({ timeoutMs: 5_000 });
  const took = Date.now() - started;
  assert.ok(took <= 5_000 + 1_000, `close() took ${took} ms with a 5000 ms timeout`);
  assert.is(result.leftGroup, false, 'the coordinator could not be told');
  assert.equal(
    result.uncommitted.map((o) => [o.topic, o.partition, o.offset]),
    [[topic, 0, next]],
    'the finished offset that could not be committed is reported',
  );
  await cluster.nodes[0]!.start();
});

test.run();
