// Starts a local Kafka with the project's launcher, writes a few thousand records with the Java
// producer, and reads them back with kwire through two message streams.
//   node packages/consumer/examples/tail.mjs          (after `npm test` or `npm run build`)
import { createTopic, producerPerformance, startKafka } from '@kwire/broker';
import { createConsumer } from '@kwire/consumer';

const kafka = await startKafka({ log: (l) => console.error(`[broker] ${l}`) });
try {
  await createTopic(kafka, { topic: 'demo', partitions: 4 });
  await producerPerformance(kafka, { topic: 'demo', numRecords: 5_000, recordSize: 64, compression: 'lz4' });

  const consumer = createConsumer({ bootstrapServers: kafka.bootstrap, autoOffsetReset: 'earliest', valueDeserializer: 'string' });
  await consumer.assign([0, 1, 2, 3].map((partition) => ({ topic: 'demo', partition })));
  const { demo: streams } = consumer.streams({ demo: 2 });
  // Each stream reads its partitions (0 and 2, 1 and 3); closing the consumer ends both loops.
  let total = 0;
  const counts = await Promise.all(
    streams.map(async (stream) => {
      let n = 0;
      for await (const batch of stream) {
        n += batch.records.length;
        total += batch.records.length;
        if (total >= 5_000) void consumer.close();
      }
      return n;
    }),
  );
  counts.forEach((n, i) => console.log(`stream ${i}: ${n} records from partitions ${i} and ${i + 2}`));
  console.log(`read ${total} records`);
  await consumer.close();
} finally {
  await kafka.stop();
}
