// Issue 10, "processed means finished", on a real broker: the four ways of losing records that
// were measured (a throwing eachMessage, a loop left by an exception, a retained batch, and the
// partial batch), each checked with Kafka's own ConsumerGroupCommand, not with kwire.
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { describeGroupOffsets } from '@kwire/broker';
import type { Consumer, ConsumerBatch } from '../../src/index.js';
import { kafkaSuite, within } from '@kwire/testkit';

const run = Date.now().toString(36);
const RECORDS = 2_000;

const env = kafkaSuite(test, { consumer: { autoOffsetReset: 'earliest', fetchMaxWaitMs: 100, valueDeserializer: 'string' } });

/** A one-partition topic of RECORDS records in batches of 500 (as the measurement). */
async function topicWithRecords(name: string): Promise<string> {
  const topic = `${name}-${run}`;
  await env.producer.createTopics([topic]);
  const records = Array.from({ length: RECORDS }, (_, i) => ({ key: null, value: `v${i}` }));
  await env.producer.send(topic, 0, records, { batchSize: 500 });
  return topic;
}

function member(groupId: string, extra: Record<string, unknown> = {}): Consumer {
  return env.consumer({ groupId, ...extra });
}

/** The group's committed offset of partition 0, as kafka-consumer-groups --describe shows it. */
async function committed(groupId: string): Promise<bigint | null> {
  const rows = await describeGroupOffsets(env.kafka, groupId);
  return rows.find((r) => r.partition === 0)?.committed ?? null;
}

/** The first batch another member of the group gets: where the group goes on from. */
async function nextFirstOffset(groupId: string, topic: string): Promise<bigint> {
  const c = member(groupId);
  await c.subscribe({ topics: [topic] });
  for await (const batch of within(c, 60_000, `the first batch of ${topic}`)) {
    const first = batch.firstOffset;
    await c.close();
    return first;
  }
  throw new Error('the stream ended without a batch');
}

test("run({ eachMessage }) whose handler throws at offset 2, onFailure 'stop': nothing past 2 is committed, and 2 comes again", async () => {
  const topic = await topicWithRecords('throw-stop');
  const groupId = `throw-stop-${run}`;
  const c = member(groupId);
  await c.subscribe({ topics: [topic] });
  const seen: bigint[] = [];
  const failure = await c
    .run({
      onFailure: 'stop',
      eachMessage: async ({ message }) => {
        seen.push(message.offset);
        if (message.offset === 2n) throw new Error('handler failed on offset 2');
      },
    })
    .then(
      () => undefined,
      (err: Error) => err,
    );
  assert.is(failure?.message, 'handler failed on offset 2', 'run() rejects with the handler error');
  assert.equal(seen, [0n, 1n, 2n]);
  const closed = await c.close();
  assert.is(closed.timedOut, false);
  assert.is(await committed(groupId), 2n, 'committed offset per ConsumerGroupCommand: the failed record, not past it');
  assert.is(await nextFirstOffset(groupId, topic), 2n, 'the group goes on from the failed record');
});

test("run({ eachMessage }) with the default onFailure ('retry'): the failed record is delivered again after the backoff, then everything", async () => {
  const topic = await topicWithRecords('throw-retry');
  const groupId = `throw-retry-${run}`;
  const c = member(groupId, { retryBackoffMs: 300 });
  await c.subscribe({ topics: [topic] });
  const seen: bigint[] = [];
  let failedAt = 0;
  let retriedAt = 0;
  let end!: () => void;
  const allSeen = new Promise<void>((resolve) => (end = resolve));
  const running = c.run({
    eachMessage: async ({ message }) => {
      seen.push(message.offset);
      if (message.offset === 2n && failedAt === 0) {
        failedAt = performance.now();
        throw new Error('first attempt fails');
      }
      if (message.offset === 2n) retriedAt = performance.now();
      if (message.offset === BigInt(RECORDS - 1)) end();
    },
  });
  await Promise.race([allSeen, sleep(90_000).then(() => assert.unreachable(`only ${seen.length} records handled in 90 s`))]);
  // The last handler has returned; its batch is released right after.
  await sleep(200);
  const closed = await c.close();
  await running;
  assert.equal(seen.slice(0, 4), [0n, 1n, 2n, 2n], 'offset 2 again right after its failure, nothing after it first');
  assert.is(seen.length, RECORDS + 1, 'every record once, offset 2 twice');
  assert.ok(retriedAt - failedAt >= 290, `retried ${Math.round(retriedAt - failedAt)} ms after the failure (retryBackoffMs 300)`);
  assert.equal(closed.uncommitted, []);
  assert.is(await committed(groupId), BigInt(RECORDS));
});

test('for await over batches, left by an exception at offset 2: the batch it was on is not committed and comes again', async () => {
  const topic = await topicWithRecords('batch-loop');
  const groupId = `batch-loop-${run}`;
  const c = member(groupId);
  await c.subscribe({ topics: [topic] });
  let thrown: unknown;
  try {
    for await (const batch of within(c, 60_000, 'the first batch')) {
      for (const record of batch) if (record.offset === 2n) throw new Error('failed in the loop');
    }
  } catch (err) {
    thrown = err;
  }
  assert.is((thrown as Error)?.message, 'failed in the loop');
  // The same consumer, a new loop: the batch comes again from its start.
  for await (const batch of within(c, 60_000, 'the batch again')) {
    assert.is(batch.firstOffset, 0n, 'the batch the loop was on is delivered again');
    break;
  }
  await c.close();
  assert.is(await committed(groupId), 0n, 'nothing of the unfinished batch committed (ConsumerGroupCommand)');
});

test('for await over records, left by an exception at offset 2: records 0-1 are committed, 2 comes again', async () => {
  const topic = await topicWithRecords('record-loop');
  const groupId = `record-loop-${run}`;
  const c = member(groupId);
  await c.subscribe({ topics: [topic] });
  try {
    for await (const record of within(c.records<null, string>(), 60_000, 'records')) {
      if (record.offset === 2n) throw new Error('failed on a record');
    }
  } catch {
    // expected
  }
  for await (const record of within(c.records(), 60_000, 'the record again')) {
    assert.is(record.offset, 2n, 'the record the loop was on is delivered again');
    break;
  }
  await c.close();
  assert.is(await committed(groupId), 2n);
  assert.is(await nextFirstOffset(groupId, topic), 2n);
});

test('a retained batch holds the commit point until it is released, whatever later batches do', async () => {
  const topic = await topicWithRecords('retain');
  const groupId = `retain-${run}`;
  const c = member(groupId, { enableAutoCommit: false, maxPollRecords: 500 });
  await c.subscribe({ topics: [topic] });
  let retained: ConsumerBatch | undefined;
  let n = 0;
  let secondNext = -1n;
  for await (const batch of within(c, 60_000, 'batches')) {
    n++;
    if (n === 1) {
      assert.is(batch.firstOffset, 0n);
      retained = batch.retain();
      continue;
    }
    if (n === 2) {
      secondNext = batch.nextOffset;
      continue;
    }
    // The second batch was released when this one was asked for; the first is still held.
    await c.commitSync();
    assert.is(await committed(groupId), 0n, 'the retained first batch holds the commit point (ConsumerGroupCommand)');
    retained!.release();
    await c.commitSync();
    assert.is(await committed(groupId), secondNext, 'released: the commit point moves over both batches, not over the one in hand');
    break;
  }
  assert.ok(secondNext > 0n);
  await c.close();
  assert.is(await committed(groupId), secondNext, 'the batch the loop broke out of is not committed');
});

test('eachBatch that marks part of its batch: the rest is delivered again; a throwing eachBatch keeps what it marked', async () => {
  const topic = await topicWithRecords('each-batch');
  const groupId = `each-batch-${run}`;
  const c = member(groupId, { retryBackoffMs: 50 });
  await c.subscribe({ topics: [topic] });
  const firsts: bigint[] = [];
  let calls = 0;
  let end!: () => void;
  const finished = new Promise<void>((resolve) => (end = resolve));
  const running = c.run({
    eachBatch: async ({ batch }) => {
      calls++;
      firsts.push(batch.firstOffset);
      if (calls === 1) {
        // Only the first 10 records, then return: the other 490 come again.
        batch.markProcessed(batch.records[9]!);
        return;
      }
      if (calls === 2) {
        batch.markProcessed(batch.records[4]!);
        throw new Error('failed after 5 records');
      }
      if (batch.lastOffset === BigInt(RECORDS - 1)) end();
    },
  });
  await Promise.race([finished, sleep(90_000).then(() => assert.unreachable('the last batch never came'))]);
  await sleep(200);
  await c.close();
  await running;
  assert.equal(firsts.slice(0, 3), [0n, 10n, 15n], 'delivered again from the first unmarked record each time');
  assert.is(await committed(groupId), BigInt(RECORDS));
});

test.run();
