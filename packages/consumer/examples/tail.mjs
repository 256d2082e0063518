// Writes a few thousand records with the Java producer and reads them back with kwire through two
// message streams. Against the broker KWIRE_BOOTSTRAP names, or a local one the project's launcher
// starts for the run.
//   node packages/consumer/examples/tail.mjs          (after `npm test` or `npm run build`)
import { createTopic, producerPerformance, useKafka } from '@kwire/broker';
import { createConsumer } from '@kwire/consumer';

const kafka = await useKafka({ log: (l) => console.error(`[broker] ${l}`) });
const topic = `demo-${Date.now().toString(36)}`;
try {
  await createTopic(kafka, { topic, partitions: 4 });
  await producerPerformance(kafka, { topic, numRecords: 5_000, recordSize: 64, compression: 'lz4' });

  const consumer = createConsumer({ bootstrapServers: kafka.bootstrap, autoOffsetReset: 'earliest', valueDeserializer: 'string' });
  await consumer.assign([0, 1, 2, 3].map((partition) => ({ topic, partition })));
  const { [topic]: streams } = consumer.streams({ [topic]: 2 });
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
  await kafka.release();
}
