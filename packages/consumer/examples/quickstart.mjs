// examples/quickstart.mjs: reads two partitions with kwire, one from its start and one from an
// offset, printing each record, and stops after the records it expects.
//   npm install @kwire/consumer kafkajs && KWIRE_BOOTSTRAP=host:9092 node quickstart.mjs
import { createConsumer } from '@kwire/consumer';
import { Kafka, logLevel } from 'kafkajs';

const bootstrapServers = process.env.KWIRE_BOOTSTRAP ?? '127.0.0.1:9092';
const topic = `events-${Date.now().toString(36)}`;

// kwire is a consumer only: kafkajs creates the topic and writes the records read below.
const kafka = new Kafka({ brokers: bootstrapServers.split(','), logLevel: logLevel.ERROR });
const admin = kafka.admin();
await admin.connect();
await admin.createTopics({ topics: [{ topic, numPartitions: 2 }], waitForLeaders: true });
await admin.disconnect();
const producer = kafka.producer();
await producer.connect();
await producer.send({ topic, messages: Array.from({ length: 10 }, (_, i) => ({ partition: i % 2, key: `user-${i}`, value: `event ${i}` })) });
await producer.disconnect();

const consumer = createConsumer({ bootstrapServers, autoOffsetReset: 'earliest', valueDeserializer: 'string' });
await consumer.assign([
  { topic, partition: 0 }, // where autoOffsetReset says: the start
  { topic, partition: 1, offset: 2n }, // from offset 2
]);
let expected = 5 + 3;
for await (const batch of consumer) {
  for (const record of batch) console.log(record.partition, record.offset, record.value);
  expected -= batch.count;
  if (expected === 0) break; // the batches read are finished; nothing is left unread
}
await consumer.close();
console.log('done');
