// examples/cursor.mjs: reads records with batch.cursor(), the path that allocates nothing per
// record: one record object moved along each batch, its value's bytes read where they were fetched.
//   npm install @kwire/consumer kafkajs && KWIRE_BOOTSTRAP=host:9092 node cursor.mjs
import { createConsumer } from '@kwire/consumer';
import { CompressionTypes, Kafka, logLevel } from 'kafkajs';

const bootstrapServers = process.env.KWIRE_BOOTSTRAP ?? '127.0.0.1:9092';
const topic = `cursor-${Date.now().toString(36)}`;
const RECORDS = 20_000;

// kwire is a consumer only: kafkajs creates the topic and writes the records read below
// (100-byte values, gzip-compressed batches).
const kafka = new Kafka({ brokers: bootstrapServers.split(','), logLevel: logLevel.ERROR });
const admin = kafka.admin();
await admin.connect();
await admin.createTopics({ topics: [{ topic, numPartitions: 3 }], waitForLeaders: true });
await admin.disconnect();
const producer = kafka.producer();
await producer.connect();
for (let i = 0; i < RECORDS; i += 2_000) {
  const messages = Array.from({ length: 2_000 }, (_, j) => ({ partition: (i + j) % 3, value: String(i + j).padStart(100, '.') }));
  await producer.send({ topic, compression: CompressionTypes.GZIP, messages });
}
await producer.disconnect();

const consumer = createConsumer({ bootstrapServers, autoOffsetReset: 'earliest' });
await consumer.assign([0, 1, 2].map((partition) => ({ topic, partition })));
let cursor; // reused from batch to batch: nothing allocated per batch either
let records = 0;
let valueBytes = 0;
let checksum = 0;
const next = [0, 0, 0];
for await (const batch of consumer) {
  cursor = batch.cursor(cursor);
  for (let r = cursor.next(); r !== null; r = cursor.next()) {
    // Offsets as numbers, in order per partition; the value's bytes read in place.
    if (r.offsetNumber !== next[r.partition]) throw new Error(`${r.partition}@${r.offsetNumber}: expected ${next[r.partition]}`);
    next[r.partition]++;
    const data = r.data;
    for (let i = r.valueOffset, end = r.valueOffset + r.valueLength; i < end; i++) checksum = (checksum * 31 + data[i]) >>> 0;
    valueBytes += r.valueLength;
    records++;
  }
  if (records === RECORDS) break;
}
console.log(`read ${records} records through the cursor: ${valueBytes} value bytes, checksum ${checksum.toString(16)}`);
await consumer.close();
