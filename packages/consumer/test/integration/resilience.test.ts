// A consumer with manual assignment across a broker crash and restart (nothing lost, nothing
// duplicated), and over a compacted topic whose offsets have gaps.
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTopic, startKafka, type KafkaCluster } from '@kwire/broker';
import { createConsumer, type Consumer } from '../../src/index.js';
import { TestProducer, within } from '@kwire/testkit';

let cluster: KafkaCluster;
let producer: TestProducer;

test.before(async () => {
  // The log cleaner looks for work every 15 s by default; the compaction test wants it sooner.
  cluster = await startKafka({ heapMb: 512, config: { 'log.cleaner.backoff.ms': 200 } });
  producer = new TestProducer(cluster.bootstrap);
});
test.after(async () => {
  await producer?.close();
  await cluster?.stop();
});

async function produceRange(topic: string, partition: number, from: number, to: number): Promise<void> {
  const records = [];
  for (let i = from; i < to; i++) records.push({ value: Buffer.from(`${partition}:${i}`) });
  await producer.send(topic, partition, records, { batchSize: 500, compression: 'lz4' });
}

test('the broker crashes (SIGKILL) and restarts mid-consumption: the consumer resumes, nothing lost or duplicated', async () => {
  const topic = 'restart';
  await createTopic(cluster, { topic, partitions: 3 });
  for (let p = 0; p < 3; p++) await produceRange(topic, p, 0, 10_000);
  const consumer: Consumer = createConsumer({
    bootstrapServers: cluster.bootstrap,
    autoOffsetReset: 'earliest',
    maxPollRecords: 100,
    reconnectBackoffMaxMs: 500,
    requestTimeoutMs: 5_000,
    fetchMaxWaitMs: 200,
  });
  await consumer.assign([0, 1, 2].map((partition) => ({ topic, partition })));
  const next = [0, 0, 0];
  let total = 0;
  let restarted = false;
  let producedAfter = false;
  const deadline = Date.now() + 120_000;
  for await (const batch of within(consumer, 120_000, 'every record across the broker restart')) {
    for (const r of batch) {
      assert.is(Number(r.offset), next[r.partition], `partition ${r.partition}: no gap, no duplicate`);
      assert.is((r.value as Buffer).toString(), `${r.partition}:${r.offset}`);
      next[r.partition]!++;
      total++;
    }
    if (!restarted && total >= 5_000) {
      restarted = true;
      await cluster.nodes[0]!.kill('SIGKILL');
      await sleep(1_000);
      await cluster.nodes[0]!.start();
    }
    if (restarted && !producedAfter && total >= 20_000) {
      // New records written after the restart arrive too.
      producedAfter = true;
      for (let p = 0; p < 3; p++) await produceRange(topic, p, 10_000, 12_000);
    }
    if (total >= 36_000 || Date.now() > deadline) break;
  }
  await consumer.close();
  assert.ok(restarted);
  assert.equal(next, [12_000, 12_000, 12_000]);
  assert.is(total, 36_000);
});

test('a compacted topic: offsets with gaps, the latest value of every key, and no stall at the gaps', async () => {
  const topic = 'compacted';
  await createTopic(cluster, {
    topic,
    partitions: 1,
    config: { 'cleanup.policy': 'compact', 'segment.ms': 100, 'min.cleanable.dirty.ratio': 0.001, 'delete.retention.ms': 100, 'min.compaction.lag.ms': 0 },
  });
  for (let round = 0; round < 10; round++) {
    await producer.send(
      topic,
      0,
      Array.from({ length: 100 }, (_, k) => ({ key: Buffer.from(`k${k}`), value: Buffer.from(`k${k}=v${round}`) })),
    );
    await sleep(150);
  }
  // Keep rolling segments (the active one is never cleaned) until the cleaner has done its work.
  let seen: { offset: bigint; key: string; value: string }[] = [];
  const deadline = Date.now() + 60_000;
  for (let tick = 0; Date.now() < deadline; tick++) {
    await producer.send(topic, 0, [{ key: Buffer.from('tick'), value: Buffer.from(`t${tick}`) }]);
    await sleep(300);
    const c = createConsumer({ bootstrapServers: cluster.bootstrap, fetchMaxWaitMs: 50 });
    await c.assign([{ topic, partition: 0, offset: 'earliest' }]);
    seen = [];
    const end = await endOffset(c, topic);
    for await (const batch of within(c, 60_000, 'the compacted log to its end')) {
      for (const r of batch) seen.push({ offset: r.offset, key: (r.key as Buffer).toString(), value: (r.value as Buffer).toString() });
      if (batch.nextOffset >= end) break;
    }
    await c.close();
    if (seen.filter((s) => s.key !== 'tick').length <= 100) break;
  }
  const data = seen.filter((s) => s.key !== 'tick');
  assert.is(data.length, 100, 'compaction left one record per key');
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i]!.offset > seen[i - 1]!.offset, 'offsets increase');
  // Compaction removed the older values (offsets 0-899 held rounds 0-8): reading from the start of
  // the log, the consumer must skip over where they were, and over any removed ticks after.
  const offsets = [-1n, ...seen.map((s) => s.offset)];
  assert.ok(
    offsets.some((o, i) => i > 0 && o - offsets[i - 1]! > 1n),
    'there are gaps, and the consumer went past them',
  );
  assert.ok(seen[0]!.offset >= 900n, `the first record left is from the last round (offset ${seen[0]!.offset})`);
  for (const s of data) assert.is(s.value, `${s.key}=v9`, `the latest value of ${s.key}`);
});

/** The log end offset of partition 0, through a first fetch's high watermark. */
async function endOffset(c: Consumer, topic: string): Promise<bigint> {
  // A fresh consumer connects, resets its offset and has a first answer: seconds on a slow machine.
  for (let i = 0; i < 300; i++) {
    const hw = c.highWatermark({ topic, partition: 0 });
    if (hw >= 0n) return hw;
    await sleep(50);
  }
  throw new Error('no high watermark');
}

test.run();
