// examples/concurrent.mjs: a handler that calls an HTTP service (here a local one that takes 5 ms,
// as a database call would), run with many records in flight: run({ maxConcurrency, ordering:
// 'key' }) keeps each account's records in order while different accounts go on at once.
//   npm install @kwire/consumer kafkajs && KWIRE_BOOTSTRAP=host:9092 node concurrent.mjs
import { createServer } from 'node:http';
import { createConsumer } from '@kwire/consumer';
import { Kafka, logLevel } from 'kafkajs';

const bootstrapServers = process.env.KWIRE_BOOTSTRAP ?? '127.0.0.1:9092';
const topic = `payments-${Date.now().toString(36)}`;
const groupId = `ledger-${Date.now().toString(36)}`;
const RECORDS = 3_000;
const ACCOUNTS = 300;

// kwire is a consumer only: kafkajs creates the topic and writes the payments, each account's
// numbered 0, 1, 2, ... in the order written (the partitioner keeps an account on one partition).
const kafka = new Kafka({ brokers: bootstrapServers.split(','), logLevel: logLevel.ERROR });
const admin = kafka.admin();
await admin.connect();
await admin.createTopics({ topics: [{ topic, numPartitions: 6 }], waitForLeaders: true });
await admin.disconnect();
const producer = kafka.producer();
await producer.connect();
await producer.send({
  topic,
  messages: Array.from({ length: RECORDS }, (_, i) => ({ key: `account-${i % ACCOUNTS}`, value: JSON.stringify({ seq: Math.floor(i / ACCOUNTS), cents: 100 + i }) })),
});
await producer.disconnect();

// The service the handler calls: 5 ms per request. It checks that each account's payments come in order.
const lastSeq = new Map();
let outOfOrder = 0;
let open = 0;
let mostOpen = 0;
const server = createServer((req, res) => {
  let body = '';
  req.on('data', (chunk) => (body += chunk));
  req.on('end', () => {
    const { account, seq } = JSON.parse(body);
    if ((lastSeq.get(account) ?? -1) !== seq - 1) outOfOrder++;
    lastSeq.set(account, seq);
    mostOpen = Math.max(mostOpen, ++open);
    setTimeout(() => {
      open--;
      res.end('ok');
    }, 5);
  });
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${server.address().port}/payments`;

const consumer = createConsumer({ bootstrapServers, groupId, autoOffsetReset: 'earliest', keyDeserializer: 'string', valueDeserializer: 'json' });
await consumer.subscribe({ topics: [topic] });

let handled = 0;
let closing;
let started; // at the first record (joining the group takes a few seconds before it)
let seconds;
const running = consumer.run({
  maxConcurrency: 256, // records in flight at once, over every partition
  ordering: 'key', // one record of an account at a time, in offset order; other accounts meanwhile
  eachMessage: async ({ message }) => {
    started ??= performance.now();
    const res = await fetch(url, { method: 'POST', body: JSON.stringify({ account: message.key, seq: message.value.seq }) });
    if (!res.ok) throw new Error(`the service said ${res.status}`); // the record is retried after a backoff; its account waits
    await res.text();
    if (++handled === RECORDS) {
      seconds = (performance.now() - started) / 1000;
      closing = consumer.close({ timeoutMs: 10_000 });
    }
  },
});
await running; // settles when the consumer is closed
const result = await closing;
server.close();
console.log(`handled ${handled} records in ${seconds.toFixed(1)} s (${Math.round(handled / seconds)} records/s; one at a time would take ${((RECORDS * 5) / 1000).toFixed(0)} s or more)`);
console.log(`at most ${mostOpen} requests at once; each account's payments in order: ${outOfOrder === 0 ? 'yes' : `no, ${outOfOrder} out of order`}`);
console.log(`closed: ${result.committed.length + result.alreadyCommitted.length} partitions committed, ${result.inFlight.length} records in flight`);
