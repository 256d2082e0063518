// Share groups (KIP-932, queues for Kafka): starts a local Kafka with the project's launcher, writes
// 2,000 records to a 2-partition topic, and reads them with three kwire share consumers in one
// share group: more members than partitions, each record handled by one of them. A record at an
// offset divisible by ten fails on its first delivery: the handler throws, so it is not accepted
// and comes back (deliveryCount 2), with the rest of its batch.
//   node packages/consumer/examples/share.mjs          (after `npm test` or `npm run build`)
import { alterGroupConfig, createTopic, producerPerformance, startKafka } from '@kwire/broker';
import { createShareConsumer } from '@kwire/consumer';

const kafka = await startKafka({ log: (l) => console.error(`[broker] ${l}`) });
try {
  await createTopic(kafka, { topic: 'jobs', partitions: 2 });
  // A new share group starts at the latest offset; this one reads what is already there.
  await alterGroupConfig(kafka, 'workers', { 'share.auto.offset.reset': 'earliest' });
  await producerPerformance(kafka, { topic: 'jobs', numRecords: 2_000, recordSize: 32 });

  const members = [0, 1, 2].map(() => createShareConsumer({ bootstrapServers: kafka.bootstrap, groupId: 'workers', maxPollRecords: 50 }));
  const handled = new Set();
  let deliveries = 0;
  let failures = 0;
  await Promise.all(
    members.map(async (consumer, i) => {
      await consumer.subscribe(['jobs']);
      let mine = 0;
      for (;;) {
        try {
          // Implicit mode: each record is accepted when the loop moves past it.
          for await (const record of consumer.records()) {
            deliveries++;
            if (record.offset % 10n === 0n && record.deliveryCount === 1) {
              failures++;
              throw new Error('flaky handler');
            }
            handled.add(`${record.partition}:${record.offset}`);
            mine++;
            if (handled.size === 2_000) {
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
      console.log(`member ${i}: ${mine} records`);
    }),
  );
  // A throw releases the record in hand and the rest of its batch: all of them come back.
  console.log(`${handled.size} records handled in ${deliveries} deliveries; ${failures} handler failures, whose records came back`);
} finally {
  await kafka.stop();
}
