// examples/share.mjs: share groups (KIP-932, queues for Kafka). Three kwire share consumers in one
// share group read a 2-partition topic together: more members than partitions, each job handled by
// one of them. A job whose number ends in 0 fails on its first delivery: the handler throws, so
// it is not accepted and comes back (deliveryCount 2), with the rest of its batch.
//   npm install @kwire/consumer kafkajs && KWIRE_BOOTSTRAP=host:9092 node share.mjs   (Kafka 4.2+)
import { setTimeout as sleep } from 'node:timers/promises';
import { createShareConsumer } from '@kwire/consumer';
import { Kafka, logLevel } from 'kafkajs';

const bootstrapServers = process.env.KWIRE_BOOTSTRAP ?? '127.0.0.1:9092';
const id = Date.now().toString(36);
const topic = `jobs-${id}`;
const JOBS = 2_000;

// kwire is a consumer only: kafkajs creates the topic and writes the jobs.
const kafka = new Kafka({ brokers: bootstrapServers.split(','), logLevel: logLevel.ERROR });
const admin = kafka.admin();
await admin.connect();
await admin.createTopics({ topics: [{ topic, numPartitions: 2 }], waitForLeaders: true });
await admin.disconnect();
const producer = kafka.producer();
await producer.connect();

const members = [0, 1, 2].map(() => createShareConsumer({ bootstrapServers, groupId: `workers-${id}`, maxPollRecords: 50, valueDeserializer: 'string' }));
const handled = new Set();
const started = new Set(); // partitions the group reads (a 'hello' came from them)
let deliveries = 0;
let failures = 0;
const work = Promise.all(
  members.map(async (consumer, i) => {
    await consumer.subscribe([topic]);
    let mine = 0;
    for (;;) {
      try {
        // Implicit mode: each record is accepted when the loop moves past it.
        for await (const record of consumer.records()) {
          if (record.value === 'hello') {
            started.add(record.partition);
            continue;
          }
          deliveries++;
          if (record.value.endsWith('0') && record.deliveryCount === 1) {
            failures++;
            throw new Error('flaky handler');
          }
          handled.add(record.value);
          mine++;
          if (handled.size === JOBS) {
            // Done: accept the record in hand now (closing would release it), then stop everyone.
            await consumer.commitSync();
            for (const m of members) void m.close();
          }
        }
        break; // closed
      } catch {
        // The record that threw was released: it is delivered again, to this member or another.
      }
    }
    console.log(`member ${i}: ${mine} jobs`);
  }),
);

// A new share group starts at the end of each partition (share.auto.offset.reset, a group config:
// kafka-configs --entity-type groups sets it). So: a 'hello' to each partition until the members
// have seen one from both, then the jobs.
while (started.size < 2) {
  await producer.send({ topic, messages: [0, 1].map((partition) => ({ partition, value: 'hello' })) });
  await sleep(200);
}
await producer.send({ topic, messages: Array.from({ length: JOBS }, (_, i) => ({ partition: i % 2, value: `job ${i}` })) });
await producer.disconnect();
await work;
// A throw releases the record in hand and the rest of its batch: all of them come back.
console.log(`${handled.size} jobs handled in ${deliveries} deliveries; ${failures} handler failures, whose jobs came back`);
