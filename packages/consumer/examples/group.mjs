// examples/group.mjs: a consumer group member as a service runs one: run({ eachMessage }) with a
// handler that fails now and then (the record comes again: nothing is committed past what the
// handler finished), a bounded close() that reports what it committed, and the metrics to watch.
//   npm install @kwire/consumer kafkajs && KWIRE_BOOTSTRAP=host:9092 node group.mjs
import { createConsumer, prometheusText } from '@kwire/consumer';
import { Kafka, logLevel } from 'kafkajs';

const bootstrapServers = process.env.KWIRE_BOOTSTRAP ?? '127.0.0.1:9092';
const topic = `orders-${Date.now().toString(36)}`;
const groupId = `billing-${Date.now().toString(36)}`;
const RECORDS = 3_000;

// kwire is a consumer only: kafkajs creates the topic and writes the records read below, and
// reads the group's committed offsets at the end, as a second opinion.
const kafka = new Kafka({ brokers: bootstrapServers.split(','), logLevel: logLevel.ERROR });
const admin = kafka.admin();
await admin.connect();
await admin.createTopics({ topics: [{ topic, numPartitions: 3 }], waitForLeaders: true });
const producer = kafka.producer();
await producer.connect();
await producer.send({ topic, messages: Array.from({ length: RECORDS }, (_, i) => ({ partition: i % 3, key: `customer-${i % 7}`, value: JSON.stringify({ order: i, cents: 100 + i }) })) });
await producer.disconnect();

const consumer = createConsumer({ bootstrapServers, groupId, autoOffsetReset: 'earliest', valueDeserializer: 'json', retryBackoffMs: 50 });
consumer.on('assigned', (d) => console.log(`assigned ${d.added.map((tp) => `${tp.topic}-${tp.partition}`).join(', ')}`));
await consumer.subscribe({ topics: [topic] });

let handled = 0;
let failures = 0;
let printed = false;
let closing;
const running = consumer.run({
  // Partitions are handled concurrently (up to maxConcurrency records at once, default 64), each
  // partition's records one at a time in order (ordering 'partition', the default).
  eachMessage: async ({ partition, message }) => {
    if (!printed) {
      printed = true;
      console.log(message); // topic, partition, offset, timestamp, key, value, headers
    }
    // Offset 500 of each partition fails once: a warning is logged and the record comes again.
    if (message.offset === 500n && failures < 3) {
      failures++;
      throw new Error(`could not bill ${partition}@${message.offset} (this time)`);
    }
    if (++handled === RECORDS) closing = consumer.close({ timeoutMs: 10_000 });
  },
});
await running; // run() settles when the consumer is closed: nothing after it runs before
const result = await closing;
console.log(
  `closed in ${result.durationMs} ms: ${result.committed.length} offsets committed on the way out, ${result.alreadyCommitted.length} committed before, ${result.uncommitted.length} left uncommitted`,
);
const m = consumer.metrics();
console.log(`handled ${handled} records (${failures} failures retried); ${m.group.commits} commits, ${m.group.rebalances} rebalance`);
console.log(
  prometheusText(m)
    .split('\n')
    .filter((l) => l.startsWith('kwire_consumer_records_consumed_total'))
    .join('\n'),
);
const [{ partitions }] = await admin.fetchOffsets({ groupId, topics: [topic] });
const committed = partitions.reduce((n, p) => n + Number(p.offset), 0);
console.log(`the group's committed offsets add up to ${committed} (read with kafkajs)`);
await admin.disconnect();
if (committed !== RECORDS) process.exitCode = 1;
