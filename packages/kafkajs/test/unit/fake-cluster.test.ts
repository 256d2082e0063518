// The facade end to end on the test kit's FakeCluster (no broker): kafkajs's message and batch
// shapes as handlers get them, commits, events, and kafkajs's crash rules (a TypeError is not
// retried; other errors are retried `retry.retries` times, then the consumer crashes and restarts
// unless restartOnFailure says no).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FakeCluster, until } from '@kwire/testkit';
import { Kafka, KafkaJSNonRetriableError, KafkaJSNumberOfRetriesExceeded, logLevel, type EachBatchPayload, type InstrumentationEvent, type KafkaMessage } from '../../src/index.js';

let cluster: FakeCluster;
test.before(async () => {
  cluster = await FakeCluster.start();
});
test.after(async () => {
  await cluster.stop();
});

/** Every consumer a test made: disconnected after it, so that a failed wait fails the test instead of keeping the process alive. */
const made: { disconnect(): Promise<void> }[] = [];
test.after.each(async () => {
  for (const c of made.splice(0)) await c.disconnect().catch(() => {});
});

function kafka(): Kafka {
  const k = new Kafka({ brokers: [cluster.bootstrap], clientId: 'unit', logLevel: logLevel.NOTHING, retry: { initialRetryTime: 20, maxRetryTime: 100 } });
  const consumer = k.consumer.bind(k);
  k.consumer = (options) => {
    const c = consumer(options);
    made.push(c);
    return c;
  };
  return k;
}

const consumerOptions = { maxWaitTimeInMs: 50, heartbeatInterval: 500, sessionTimeout: 6000 };

test('eachMessage: kafkajs messages in order per partition, offsets committed, events in kafkajs shape', async () => {
  cluster.createTopic('shapes', 2);
  for (const p of [0, 1]) cluster.append('shapes', p, 5, (o) => (o === 0n ? null : `k${o}`));
  const consumer = kafka().consumer({ groupId: 'g-shapes', ...consumerOptions });
  const events: InstrumentationEvent<unknown>[] = [];
  for (const name of Object.values(consumer.events)) consumer.on(name, (e) => events.push(e));
  const seen: { partition: number; message: KafkaMessage }[] = [];
  await consumer.connect();
  await consumer.subscribe({ topic: 'shapes', fromBeginning: true });
  await consumer.run({
    partitionsConsumedConcurrently: 2,
    eachMessage: async ({ topic, partition, message, heartbeat, pause }) => {
      assert.is(topic, 'shapes');
      assert.type(pause, 'function');
      await heartbeat();
      seen.push({ partition, message });
    },
  });
  await until('10 messages', () => seen.length === 10, 20_000, 10);
  for (const p of [0, 1]) {
    const mine = seen.filter((s) => s.partition === p).map((s) => s.message);
    assert.equal(
      mine.map((m) => m.offset),
      ['0', '1', '2', '3', '4'],
      `partition ${p} in order`,
    );
    const m = mine[1]! as KafkaMessage & { magicByte: number; isControlRecord: boolean; batchContext: { firstOffset: string } };
    assert.ok(Buffer.isBuffer(m.value));
    assert.is(m.value!.toString(), `shapes-${p}-1-e0`);
    assert.is(m.key!.toString(), 'k1');
    assert.is(mine[0]!.key, null);
    assert.type(m.timestamp, 'string');
    assert.match(m.timestamp, /^\d+$/);
    assert.is(m.attributes, 0);
    assert.is(m.magicByte, 2);
    assert.is(m.isControlRecord, false);
    assert.equal(m.headers, {});
    assert.type(m.batchContext.firstOffset, 'string');
  }
  // The Buffers are the application's: still intact after their batches were released.
  assert.is(seen[0]!.message.value!.toString(), `shapes-${seen[0]!.partition}-0-e0`);
  await until('offsets 5 committed', () => cluster.committed.get('shapes\u00000')?.offset === 5n && cluster.committed.get('shapes\u00001')?.offset === 5n, 10_000, 10);
  await consumer.disconnect();
  const types = events.map((e) => e.type);
  for (const t of ['consumer.connect', 'consumer.group_join', 'consumer.start_batch_process', 'consumer.end_batch_process', 'consumer.commit_offsets', 'consumer.stop', 'consumer.disconnect']) {
    assert.ok(types.includes(t), `${t} emitted (${types.join(', ')})`);
  }
  const join = events.find((e) => e.type === 'consumer.group_join')!.payload as Record<string, unknown>;
  assert.equal(Object.keys(join).sort(), ['duration', 'groupId', 'groupProtocol', 'isLeader', 'leaderId', 'memberAssignment', 'memberId']);
  assert.equal(join.memberAssignment, { shapes: [0, 1] });
  assert.is(join.groupProtocol, 'RoundRobinAssigner');
  assert.is(join.isLeader, true);
  const start = events.find((e) => e.type === 'consumer.start_batch_process')!;
  assert.equal(Object.keys(start.payload as object).sort(), ['batchSize', 'firstOffset', 'highWatermark', 'lastOffset', 'offsetLag', 'offsetLagLow', 'partition', 'topic']);
  assert.type(start.id, 'number');
  assert.type(start.timestamp, 'number');
  const commit = events.find((e) => e.type === 'consumer.commit_offsets')!.payload as { groupId: string; topics: { topic: string; partitions: { partition: number; offset: string }[] }[] };
  assert.is(commit.groupId, 'g-shapes');
  assert.type(commit.topics[0]!.partitions[0]!.offset, 'string');
  assert.ok(types.indexOf('consumer.stop') < types.indexOf('consumer.disconnect'), 'STOP before DISCONNECT');
});

test('eachBatch: the payload, resolveOffset with a throw commits what was resolved, and the batch comes again from there', async () => {
  cluster.createTopic('batches', 1, 10);
  const consumer = kafka().consumer({ groupId: 'g-batches', ...consumerOptions });
  const firsts: string[] = [];
  let thrown = false;
  let payload: EachBatchPayload | undefined;
  // The cluster records a commit when the request arrives; the consumer learns of it from the answer.
  const commitsAnswered: string[] = [];
  consumer.on(consumer.events.COMMIT_OFFSETS, (e) => {
    for (const t of e.payload.topics) for (const p of t.partitions) commitsAnswered.push(p.offset);
  });
  await consumer.subscribe({ topics: ['batches'], fromBeginning: true });
  await consumer.run({
    eachBatch: async (p) => {
      payload ??= p;
      const { batch, resolveOffset } = p;
      firsts.push(batch.firstOffset()!);
      assert.is(batch.highWatermark, '10');
      for (const m of batch.messages) {
        if (!thrown && m.offset === '4') {
          thrown = true;
          throw new Error('fails at 4');
        }
        resolveOffset(m.offset);
      }
    },
  });
  await until('the batch again from 4', () => firsts.includes('4'), 20_000, 10);
  await until('all committed', () => cluster.committed.get('batches\u00000')?.offset === 10n, 10_000, 10);
  await until('the commit of 10 answered', () => commitsAnswered.includes('10'), 10_000, 10);
  assert.is(firsts[0], '0');
  assert.ok(payload);
  assert.is(payload!.isRunning(), true);
  assert.is(payload!.isStale(), false);
  assert.equal(payload!.uncommittedOffsets(), { topics: [] });
  assert.equal(payload!.batch.offsetLagLow(), '9');
  await consumer.disconnect();
  assert.is(payload!.isRunning(), false);
});

test('a TypeError in eachMessage crashes the consumer at once, not to be restarted (kafkajs: not retriable)', async () => {
  cluster.createTopic('typeerror', 1, 3);
  const consumer = kafka().consumer({ groupId: 'g-typeerror', ...consumerOptions });
  const crashes: { error: Error; restart: boolean; groupId: string }[] = [];
  consumer.on(consumer.events.CRASH, (e) => crashes.push(e.payload));
  let calls = 0;
  await consumer.subscribe({ topics: ['typeerror'], fromBeginning: true });
  await consumer.run({
    eachMessage: async () => {
      calls++;
      throw new TypeError('undefined is not a function');
    },
  });
  await until('a crash', () => crashes.length === 1, 20_000, 10);
  const { error, restart, groupId } = crashes[0]!;
  assert.ok(error instanceof KafkaJSNonRetriableError);
  assert.is(error.name, 'KafkaJSNonRetriableError');
  assert.ok((error as { cause?: unknown }).cause instanceof TypeError);
  assert.is(restart, false);
  assert.is(groupId, 'g-typeerror');
  assert.is(calls, 1, 'not retried');
  assert.is(cluster.committed.get('typeerror\u00000')?.offset ?? 0n, 0n, 'nothing committed past the failed record');
  await consumer.disconnect();
});

test('an Error is retried retry.retries times, then KafkaJSNumberOfRetriesExceeded; restartOnFailure false keeps it down', async () => {
  cluster.createTopic('retries', 1, 3);
  let asked: Error | undefined;
  const consumer = kafka().consumer({
    groupId: 'g-retries',
    ...consumerOptions,
    retry: {
      retries: 2,
      initialRetryTime: 10,
      maxRetryTime: 20,
      restartOnFailure: async (e) => {
        asked = e;
        return false;
      },
    },
  });
  const crashes: { error: Error; restart: boolean }[] = [];
  consumer.on(consumer.events.CRASH, (e) => crashes.push(e.payload));
  const attempts: string[] = [];
  await consumer.subscribe({ topics: ['retries'], fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ message }) => {
      attempts.push(message.offset);
      if (message.offset === '1') throw new Error('keeps failing');
    },
  });
  await until('a crash', () => crashes.length === 1, 20_000, 10);
  assert.equal(attempts, ['0', '1', '1', '1'], 'the first try and two retries');
  const { error, restart } = crashes[0]!;
  assert.ok(error instanceof KafkaJSNumberOfRetriesExceeded);
  assert.is((error as unknown as { retryCount: number }).retryCount, 2);
  assert.is(error.message, 'keeps failing');
  assert.ok(asked === error, 'restartOnFailure was asked with the error');
  assert.is(restart, false);
  await until('offset 1 committed (what finished before the failure)', () => cluster.committed.get('retries\u00000')?.offset === 1n, 10_000, 10);
  await new Promise((r) => setTimeout(r, 200));
  assert.is(attempts.length, 4, 'not restarted');
  await consumer.disconnect();
});

test('restartOnFailure true (the default): the consumer restarts and the record comes again', async () => {
  cluster.createTopic('restart', 1, 2);
  const consumer = kafka().consumer({ groupId: 'g-restart', ...consumerOptions, retry: { retries: 0, initialRetryTime: 10, maxRetryTime: 20 } });
  const crashes: { restart: boolean }[] = [];
  consumer.on(consumer.events.CRASH, (e) => crashes.push(e.payload));
  const joins: unknown[] = [];
  consumer.on(consumer.events.GROUP_JOIN, (e) => joins.push(e.payload));
  const attempts: string[] = [];
  await consumer.subscribe({ topics: ['restart'], fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ message }) => {
      attempts.push(message.offset);
      if (message.offset === '1' && attempts.filter((o) => o === '1').length === 1) throw new Error('once');
    },
  });
  await until('offset 1 handled again after the restart', () => attempts.filter((o) => o === '1').length === 2, 20_000, 10);
  assert.equal(crashes, [{ error: crashes[0] && (crashes[0] as { error?: unknown }).error, groupId: 'g-restart', restart: true }]);
  assert.ok(joins.length >= 2, 'joined again');
  await until('both committed', () => cluster.committed.get('restart\u00000')?.offset === 2n, 10_000, 10);
  await consumer.disconnect();
});

test('stop() and disconnect() awaited inside a handler resolve, and the consumer stops after it', async () => {
  cluster.createTopic('inside', 1, 20);
  for (const how of ['stop', 'disconnect'] as const) {
    const consumer = kafka().consumer({ groupId: `g-inside-${how}`, ...consumerOptions });
    const events: string[] = [];
    consumer.on(consumer.events.STOP, () => events.push('stop'));
    let handled = 0;
    let resolved = false;
    await consumer.subscribe({ topics: ['inside'], fromBeginning: true });
    await consumer.run({
      eachMessage: async () => {
        handled++;
        if (handled === 3) {
          // disconnect() after an await of the handler's own: the call comes from a resumed frame.
          if (how === 'disconnect') await new Promise((r) => setImmediate(r));
          await consumer[how]();
          resolved = true;
        }
      },
    });
    await until(`${how}() resolved inside the handler`, () => resolved, 10_000, 10);
    await until('STOP emitted', () => events.includes('stop'), 10_000, 10);
    assert.is(handled, 3, 'no message after the one that stopped it');
    await until('the three handled committed', () => cluster.committed.get(`inside\u00000`) !== undefined, 10_000, 10);
    await consumer.disconnect();
  }
});

test('pause() from the payload holds the partition; the resume function it returns lets it go on', async () => {
  cluster.createTopic('pausing', 1, 6);
  const consumer = kafka().consumer({ groupId: 'g-pausing', ...consumerOptions });
  const offsets: string[] = [];
  let resume: (() => void) | undefined;
  await consumer.subscribe({ topics: ['pausing'], fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ message, pause }) => {
      offsets.push(message.offset);
      if (message.offset === '2' && !resume) resume = pause();
    },
  });
  await until('paused after offset 2', () => resume !== undefined, 10_000, 10);
  assert.equal(consumer.paused(), [{ topic: 'pausing', partitions: [0] }]);
  await new Promise((r) => setTimeout(r, 150));
  assert.equal(offsets, ['0', '1', '2'], 'nothing while paused');
  resume!();
  assert.equal(consumer.paused(), []);
  await until('the rest after resume', () => offsets.length === 6, 10_000, 10);
  assert.equal(offsets, ['0', '1', '2', '3', '4', '5']);
  await consumer.disconnect();
});

test("pause and resume keep kafkajs's state: a topic paused but one partition resumed; a seek of a partition not assigned waits", async () => {
  cluster.createTopic('pstate', 3, 2);
  const consumer = kafka().consumer({ groupId: 'g-pstate', ...consumerOptions });
  const seen: string[] = [];
  await consumer.subscribe({ topics: ['pstate'], fromBeginning: true });
  consumer.on(consumer.events.GROUP_JOIN, () => consumer.pause([{ topic: 'pstate' }]));
  await consumer.run({ eachMessage: async ({ partition, message }) => void seen.push(`${partition}@${message.offset}`) });
  assert.equal(consumer.paused(), [{ topic: 'pstate', partitions: [0, 1, 2] }]);
  consumer.resume([{ topic: 'pstate', partitions: [1] }]);
  assert.equal(consumer.paused(), [{ topic: 'pstate', partitions: [0, 2] }]);
  await until('partition 1 read', () => seen.length === 2, 10_000, 10);
  await new Promise((r) => setTimeout(r, 150));
  assert.equal(seen, ['1@0', '1@1'], 'only the resumed partition');
  // A partition this member does not have: kafkajs keeps the seek (no error).
  consumer.seek({ topic: 'pstate', partition: 7, offset: '0' });
  consumer.resume([{ topic: 'pstate' }]);
  assert.equal(consumer.paused(), []);
  await until('the rest', () => seen.length === 6, 10_000, 10);
  await consumer.disconnect();
});

test("commits follow kafkajs's rule: nothing for a partition nothing was read from, no extra commit on disconnect", async () => {
  cluster.createTopic('rule', 2);
  cluster.append('rule', 0, 4);
  const consumer = kafka().consumer({ groupId: 'g-rule', ...consumerOptions });
  const seen: string[] = [];
  await consumer.subscribe({ topics: ['rule'], fromBeginning: true });
  await consumer.run({ eachMessage: async ({ message }) => void seen.push(message.offset) });
  await until('4 messages', () => seen.length === 4, 10_000, 10);
  await until('partition 0 committed', () => cluster.committed.get('rule\u00000')?.offset === 4n, 10_000, 10);
  // The application rewinds by hand: disconnect() must not commit its finished position over it.
  await consumer.commitOffsets([{ topic: 'rule', partition: 0, offset: '1' }]);
  await consumer.disconnect();
  assert.is(cluster.committed.get('rule\u00000')?.offset, 1n, "the application's commit stays");
  assert.is(cluster.committed.get('rule\u00001'), undefined, 'nothing committed for the empty partition');
});

test.run();
