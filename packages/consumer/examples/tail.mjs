// examples/tail.mjs: reads a 4-partition topic through two message streams, each a loop of its
// own over its partitions (0 and 2, 1 and 3), and closes the consumer once every record is read.
//   npm install @kwire/consumer kafkajs && KWIRE_BOOTSTRAP=host:9092 node tail.mjs
import { createConsumer } from '@kwire/consumer';
import { Kafka, logLevel } from 'kafkajs';

const bootstrapServers = process.env.KWIRE_BOOTSTRAP ?? '127.0.0.1:9092';
const topic = `demo-${Date.now().toString(36)}`;
const RECORDS = 5_000;

// kwire is a consumer only: kafkajs creates the topic and writes the records read below.
const kafka = new Kafka({ brokers: bootstrapServers.split(','), logLevel: logLevel.ERROR });
const admin = kafka.admin();
await admin.connect();
await admin.createTopics({ topics: [{ topic, numPartitions: 4 }], waitForLeaders: true });
await admin.disconnect();
const producer = kafka.producer();
await producer.connect();
for (let i = 0; i < RECORDS; i += 1_000) {
  await producer.send({ topic, messages: Array.from({ length: 1_000 }, (_, j) => ({ partition: (i + j) % 4, value: `record ${i + j}` })) });
}
await producer.disconnect();

const consumer = createConsumer({ bootstrapServers, autoOffsetReset: 'earliest', valueDeserializer: 'string' });
await consumer.assign([0, 1, 2, 3].map((partition) => ({ topic, partition })));
const { [topic]: streams } = consumer.streams({ [topic]: 2 });
let total = 0;
const counts = await Promise.all(
  streams.map(async (stream) => {
    let n = 0;
    for await (const batch of stream) {
      n += batch.count;
      total += batch.count;
      if (total === RECORDS) void consumer.close(); // ends both loops
    }
    return n;
  }),
);
for (const [i, n] of counts.entries()) console.log(`stream ${i}: ${n} records from partitions ${i} and ${i + 2}`);
console.log(`read ${total} records`);
await consumer.close(); // the same close: its result again
