// The rest of issues 5 and 6, shown on a real broker: flow control, deserializers,
// max.poll.interval.ms, the rebalance listener, streams in a group, KIP-848 missing on the broker.
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTopic, producerPerformance, startKafka } from '@kwire/broker';
import { createConsumer, Kip848UnavailableError, type Consumer, type ConsumerBatch } from '../../src/index.js';
import { kafkaSuite, until as waitUntil, within } from '@kwire/testkit';

const run = Date.now().toString(36);

const env = kafkaSuite(test, { consumer: { autoOffsetReset: 'earliest', fetchMaxWaitMs: 100 } });

function consumer(extra: Record<string, unknown>): Consumer {
  return env.consumer(extra);
}

const until = (what: string, cond: () => boolean, ms = 30_000) => waitUntil(what, cond, ms, 50);

test('flow control: an unread partition stops being fetched at its buffer bound, and resumes when drained', async () => {
  const topic = `flow-${run}`;
  await createTopic(env.kafka, { topic, partitions: 1 });
  await producerPerformance(env.kafka, { topic, numRecords: 4_000, recordSize: 1_000 });
  const bound = 256 * 1024;
  const c = consumer({ maxPartitionFetchBytes: 64 * 1024, maxBufferedBytesPerPartition: bound });
  await c.assign([{ topic, partition: 0 }]);
  await until('the buffer to fill', () => c.metrics().bufferedBytes >= bound);
  await sleep(1_000);
  const held = c.metrics();
  await sleep(1_500);
  const later = c.metrics();
  assert.is(later.fetches, held.fetches, 'no fetch while the partition is over its bound');
  assert.ok(later.bufferedBytes < bound + 64 * 1024 + 2_000, `buffered ${later.bufferedBytes} B, bound ${bound} + one fetch`);
  let n = 0;
  for await (const batch of within(c, 60_000, '4,000 records')) {
    n += batch.records.length;
    if (n >= 4_000) break;
  }
  assert.is(n, 4_000, 'draining lets fetching resume until the end');
  assert.ok(c.metrics().fetches > later.fetches);
});

test('deserializers: json, and a function that sees topic, partition and part', async () => {
  const topic = `deser-${run}`;
  await createTopic(env.kafka, { topic, partitions: 1 });
  await env.producer.send(topic, 0, [
    { key: Buffer.from('a'), value: Buffer.from(JSON.stringify({ n: 1, s: 'x' })) },
    { key: Buffer.from('b'), value: null },
  ]);
  const seen: string[] = [];
  const c = consumer({
    valueDeserializer: 'json',
    keyDeserializer: (data: Buffer | null, ctx: { topic: string; partition: number; part: string }) => {
      seen.push(`${ctx.topic}/${ctx.partition}/${ctx.part}`);
      return data ? data.toString().toUpperCase() : null;
    },
  });
  await c.assign([{ topic, partition: 0 }]);
  const it = c[Symbol.asyncIterator]();
  const { value: batch } = await it.next();
  const [a, b] = (batch as ConsumerBatch).records;
  assert.equal(a!.value, { n: 1, s: 'x' });
  assert.is(a!.key, 'A');
  assert.is(b!.value, null, 'a tombstone stays null under json');
  assert.is(b!.key, 'B');
  assert.ok(seen.includes(`${topic}/0/key`));
  await it.return!();
});

test('max.poll.interval.ms: a member holding a batch too long leaves (event), its partitions move, it rejoins when it pulls again', async () => {
  const topic = `poll-${run}`;
  const groupId = `g-${topic}`;
  await createTopic(env.kafka, { topic, partitions: 2 });
  for (const p of [0, 1])
    await env.producer.send(
      topic,
      p,
      Array.from({ length: 20 }, (_, i) => ({ value: Buffer.from(`${i}`) })),
    );
  const settings = { groupId, maxPollIntervalMs: 3_000, sessionTimeoutMs: 10_000, heartbeatIntervalMs: 500 };
  const slow = consumer(settings);
  const events: string[] = [];
  slow.on('poll-interval-exceeded', () => events.push('exceeded'));
  slow.on('left', () => events.push('left'));
  await slow.subscribe({ topics: [topic] });
  await slow.assigned();
  const it = slow[Symbol.asyncIterator]();
  await it.next(); // hold this batch and do not come back for more
  const other = consumer(settings);
  await other.subscribe({ topics: [topic] });
  await until('the slow member to exceed max.poll.interval.ms and leave', () => events.includes('exceeded') && events.includes('left'), 20_000);
  await until('the other member to own both partitions', () => other.assignment().length === 2, 20_000);
  assert.is(slow.assignment().length, 0, 'the slow member gave its partitions up');
  // The slow member comes back: it rejoins and gets a share again.
  const back = it.next();
  await until('the slow member to rejoin and get a partition', () => slow.assignment().length === 1 && other.assignment().length === 1, 30_000);
  void back;
});

test('the rebalance listener: onPartitionsAssigned, then onPartitionsRevoked before partitions go (with commits)', async () => {
  const topic = `listener-${run}`;
  const groupId = `g-${topic}`;
  await createTopic(env.kafka, { topic, partitions: 2 });
  await env.producer.send(
    topic,
    0,
    Array.from({ length: 10 }, (_, i) => ({ value: Buffer.from(`${i}`) })),
  );
  const calls: string[] = [];
  const a = consumer({ groupId, heartbeatIntervalMs: 500, sessionTimeoutMs: 10_000 });
  await a.subscribe(
    { topics: [topic] },
    {
      onPartitionsAssigned: (tps) =>
        void calls.push(
          `assigned ${tps
            .map((t) => t.partition)
            .sort()
            .join(',')}`,
        ),
      onPartitionsRevoked: async (tps) => {
        calls.push(
          `revoked ${tps
            .map((t) => t.partition)
            .sort()
            .join(',')}`,
        );
        await a.commitSync();
      },
    },
  );
  await a.assigned();
  let n = 0;
  for await (const batch of within(a, 60_000, '10 records')) {
    n += batch.records.length;
    if (n >= 10) {
      // Finished: leaving the loop without this would give the batch back (not committed).
      batch.release();
      break;
    }
  }
  const b = consumer({ groupId, heartbeatIntervalMs: 500, sessionTimeoutMs: 10_000 });
  await b.subscribe({ topics: [topic] });
  // b's listener and a's run after each member's own offset fetch: wait for both to have run.
  await until('the second member to get a partition', () => b.assignment().length === 1 && calls.length >= 3, 30_000);
  assert.equal(calls.slice(0, 3), ['assigned 0,1', 'revoked 0,1', calls[2]!], 'eager: all revoked before the new assignment');
  assert.match(calls[2]!, /^assigned [01]$/);
  const tp0 = { topic, partition: 0 };
  const committed = await a.committed([tp0]);
  assert.is(committed.get(tp0)?.offset, 10n, 'the records read were committed on revocation');
});

test('streams in a group: partitions spread over streams; a member joining moves them without loss or duplicates', async () => {
  const topic = `gstreams-${run}`;
  const groupId = `g-${topic}`;
  await createTopic(env.kafka, { topic, partitions: 4 });
  for (let p = 0; p < 4; p++)
    await env.producer.send(
      topic,
      p,
      Array.from({ length: 50 }, (_, i) => ({ value: Buffer.from(`${p}:${i}`) })),
    );
  const settings = { groupId, heartbeatIntervalMs: 500, sessionTimeoutMs: 10_000, maxPollRecords: 10, valueDeserializer: 'string' };
  const a = consumer(settings);
  const { [topic]: streams } = a.streams({ [topic]: 2 });
  await a.subscribe({ topics: [topic] });
  const seen = new Map<string, number>();
  const byStream: Set<number>[] = [new Set(), new Set()];
  let total = 0;
  const record = (v: string, p: number, stream?: number) => {
    seen.set(v, (seen.get(v) ?? 0) + 1);
    if (stream !== undefined) byStream[stream]!.add(p);
    total++;
  };
  const loops = streams!.map(async (s, i) => {
    for await (const batch of s) {
      for (const r of batch) record(r.value as string, r.partition, i);
      await sleep(20);
    }
  });
  await until('some records', () => total >= 40);
  const b = consumer(settings);
  await b.subscribe({ topics: [topic] });
  const bLoop = (async () => {
    for await (const batch of b) for (const r of batch) record(r.value as string, r.partition);
  })();
  await until('every record', () => seen.size === 200, 60_000);
  await sleep(500);
  assert.equal(
    [...seen.values()].filter((n) => n > 1),
    [],
    'no record twice',
  );
  assert.ok([...byStream[0]!].every((p) => p % 2 === 0) && [...byStream[1]!].every((p) => p % 2 === 1), 'partition p feeds stream p mod 2');
  await Promise.all([a.close(), b.close()]);
  await Promise.all([...loops, bLoop]);
});

test('close() from inside the loop, while holding a batch, returns promptly and does not commit that batch', async () => {
  const topic = `closein-${run}`;
  const groupId = `g-${topic}`;
  await createTopic(env.kafka, { topic, partitions: 1 });
  await env.producer.send(
    topic,
    0,
    Array.from({ length: 30 }, (_, i) => ({ value: Buffer.from(`${i}`) })),
  );
  const c = consumer({ groupId, maxPollRecords: 10 });
  await c.subscribe({ topics: [topic] });
  let batches = 0;
  let closedIn = 0;
  for await (const batch of c) {
    batches++;
    if (batches === 2) {
      // Holding the second batch (offsets 10-19); the first was released when this one came.
      const started = Date.now();
      await c.close();
      closedIn = Date.now() - started;
    }
    void batch;
  }
  assert.is(batches, 2);
  assert.ok(closedIn < 5_000, `close() took ${closedIn} ms`);
  // Read the group's committed offset with a member of the same group that commits nothing.
  const check = consumer({ groupId, enableAutoCommit: false });
  await check.subscribe({ topics: [topic] });
  const tp0 = { topic, partition: 0 };
  const committed = await check.committed([tp0]);
  assert.is(committed.get(tp0)?.offset, 10n, 'the released batch was committed, the held one was not');
});

test('KIP-848 on a broker without it (3.9.1): a clear error, or classic with groupProtocolFallback', async () => {
  const old = await startKafka({ version: '3.9.1', heapMb: 384 });
  try {
    await createTopic(old, { topic: 't', partitions: 1 });
    // 3.9.1 offers ConsumerGroupHeartbeat v0 (a preview) but refuses it unless enabled.
    const strict = createConsumer({ bootstrapServers: old.bootstrap, groupId: 'g848', groupProtocol: 'consumer' });
    const fatal: Error[] = [];
    strict.on('fatal', (d) => fatal.push(d.error as Error));
    await strict.subscribe({ topics: ['t'] });
    await strict.assigned().then(
      () => assert.unreachable('expected an error'),
      (err: Error) => {
        assert.ok(err instanceof Kip848UnavailableError, String(err));
        assert.match(err.message, /does not accept KIP-848 consumer groups.*groupProtocolFallback/);
      },
    );
    assert.is(fatal.length, 1, 'and a fatal event');
    await strict.close();
    const lenient = createConsumer({ bootstrapServers: old.bootstrap, groupId: 'g848', groupProtocol: 'consumer', groupProtocolFallback: true });
    await lenient.subscribe({ topics: ['t'] });
    await lenient.assigned();
    assert.equal(lenient.assignment(), [{ topic: 't', partition: 0 }], 'joined with the classic protocol');
    await lenient.close();
  } finally {
    await old.stop();
  }
});

test.run();
