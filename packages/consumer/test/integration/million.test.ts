// Issue acceptance: 1,000,000 records loaded by ProducerPerformance into 6 partitions with lz4 are
// consumed completely, the exact count, offsets contiguous per partition, and values identical to
// what the Java console consumer reads (compared per partition through a digest of the values in
// offset order).
import { createHash } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { consoleConsumer, createTopic, producerPerformance, useKafka, type TestKafka } from '@kwire/broker';
import { createConsumer } from '../../src/index.js';
import { within } from '@kwire/testkit';

const TOTAL = 1_000_000;
const PARTITIONS = 6;
let kafka: TestKafka;
const topic = `million-${Date.now().toString(36)}`;

test.before(async () => {
  kafka = await useKafka();
  await createTopic(kafka, { topic, partitions: PARTITIONS });
  await producerPerformance(kafka, { topic, numRecords: TOTAL, recordSize: 100, compression: 'lz4', props: { 'batch.size': 262144, 'linger.ms': 20 } });
});
test.after(async () => {
  await kafka?.release();
});

test('1,000,000 lz4 records over 6 partitions: all of them, once, in order, the same values as the Java console consumer', async () => {
  const consumer = createConsumer({ bootstrapServers: kafka.bootstrap, autoOffsetReset: 'earliest' });
  await consumer.assign(Array.from({ length: PARTITIONS }, (_, partition) => ({ topic, partition })));
  const digests = Array.from({ length: PARTITIONS }, () => createHash('sha256'));
  const next = new Array<bigint>(PARTITIONS).fill(0n);
  let count = 0;
  const started = performance.now();
  for await (const batch of within(consumer, 60_000, '1,000,000 records')) {
    const digest = digests[batch.partition]!;
    for (const r of batch) {
      assert.is(r.offset, next[batch.partition], `offset contiguity in partition ${batch.partition}`);
      next[batch.partition] = r.offset + 1n;
      const value = r.value as Buffer;
      digest.update(value);
      digest.update('\n');
    }
    count += batch.records.length;
    if (count >= TOTAL) break;
  }
  const seconds = (performance.now() - started) / 1000;
  await consumer.close();
  assert.is(count, TOTAL);
  assert.is(
    next.reduce((a, b) => a + b, 0n),
    BigInt(TOTAL),
    "the partitions' ends add up to the total",
  );
  console.log(`  kwire: ${TOTAL} records in ${seconds.toFixed(2)} s (${Math.round(TOTAL / seconds)} records/s)`);

  // The Java console consumer, one partition at a time, values only (one line each).
  for (let p = 0; p < PARTITIONS; p++) {
    const lines = await consoleConsumer(kafka, { topic, partition: p, offset: 'earliest', maxMessages: Number(next[p]), idleTimeoutMs: 30_000 });
    assert.is(lines.length, Number(next[p]), `the console consumer read partition ${p} whole`);
    const java = createHash('sha256');
    for (const line of lines) {
      java.update(line);
      java.update('\n');
    }
    assert.is(digests[p]!.digest('hex'), java.digest('hex'), `partition ${p}: same values in the same order`);
  }
});

test.run();
