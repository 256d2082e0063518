// Development script (not shipped): records test-fixtures/kafkajs-2.2.4/produce-consume and
// test-fixtures/platformatic-2.12.1/produce-consume through kwire's recording proxy (`kwire
// record`): each client's producer writes 10 keyed records (kafkajs: with headers) to a topic of
// 3 partitions and its consumer reads them all in a classic group of one. Writes each capture's
// manifest with the facts the scenario knows. The clients come from @kwire/bench's dependencies;
// @platformatic/kafka 2.x needs Node >= 22.22, so run this under Node 24:
//   npx -y -p node@24.21.0 node packages/tools/scripts/capture-js-clients.mjs   (KWIRE_BOOTSTRAP=... to reuse a broker)
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createTopic, useKafka } from '@kwire/broker';

const fixtures = fileURLToPath(new URL('../../../test-fixtures/', import.meta.url));
const benchRequire = createRequire(fileURLToPath(new URL('../../bench/package.json', import.meta.url)));
const load = async (name) => import(pathToFileURL(benchRequire.resolve(name)).href);
// The package.json above the resolved entry point (not every package exports its package.json).
const version = (name) => {
  let dir = dirname(benchRequire.resolve(name));
  while (!existsSync(join(dir, 'package.json')) || JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name !== name) dir = dirname(dir);
  return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version;
};
// The recording proxy is not part of @kwire/consumer's public surface: reach it by path.
const { RecordingProxy } = await import(new URL('../dist/src/record/proxy.js', import.meta.url).href);
const { parseAddress } = await import(new URL('../dist/src/record/address.js', import.meta.url).href);

const kafka = await useKafka({ log: (l) => console.error(`[broker] ${l}`) });
const log = (l) => console.error(`[capture] ${l}`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const keyed = (prefix, n, headers) => Array.from({ length: n }, (_, i) => ({ key: `${prefix}-key-${i}`, value: `${prefix} value ${i}`, ...(headers ? { headers: [[`${prefix}-h`, `h${i}`]] } : {}) }));

async function record(name, client, description, run) {
  const dir = `${fixtures}${name}`;
  rmSync(dir, { recursive: true, force: true });
  const proxy = await RecordingProxy.start({
    listen: { host: '127.0.0.1', port: 0 },
    target: parseAddress(kafka.bootstrap),
    out: dir,
    recorder: 'kwire record (packages/tools/scripts/capture-js-clients.mjs)',
  });
  let facts;
  try {
    facts = await run(proxy.bootstrap);
  } finally {
    await proxy.stop();
  }
  const manifest = { scenario: name, description, origin: 'peer', client, broker: { version: kafka.dist.version.text, nodes: 1 }, capturedAt: new Date().toISOString(), facts };
  writeFileSync(`${dir}/manifest.json`, `${JSON.stringify(manifest, null, 2)}\n`);
  log(`${name}: ${proxy.stats.connections} connections, ${proxy.stats.exchanges} exchanges`);
}

async function untilCount(seen, n, ms) {
  const deadline = Date.now() + ms;
  while (seen.length < n && Date.now() < deadline) await sleep(50);
  if (seen.length < n) throw new Error(`only ${seen.length} of ${n} records consumed`);
}

try {
  // kafkajs: its admin creates the topic (CreateTopics recorded too), producer, consumer group.
  const { Kafka, logLevel } = await load('kafkajs');
  const kjsVersion = version('kafkajs');
  await record(
    `kafkajs-${kjsVersion}/produce-consume`,
    { name: 'kafkajs', version: kjsVersion, tools: ['admin.createTopics', 'producer.send', 'consumer.run'] },
    'kafkajs creates a topic of 3 partitions, its producer writes 10 keyed records with a header each, its consumer reads them all in a classic group of one.',
    async (bootstrap) => {
      const topic = 'kafkajs-t';
      const group = 'kafkajs-g';
      const records = keyed('kafkajs', 10, true);
      const k = new Kafka({ clientId: 'kwire-fixture-kafkajs', brokers: [bootstrap], logLevel: logLevel.NOTHING });
      const admin = k.admin();
      await admin.connect();
      await admin.createTopics({ topics: [{ topic, numPartitions: 3, replicationFactor: 1 }], waitForLeaders: true });
      await admin.disconnect();
      const producer = k.producer();
      await producer.connect();
      await producer.send({ topic, messages: records.map((r) => ({ key: r.key, value: r.value, headers: Object.fromEntries(r.headers) })) });
      await producer.disconnect();
      const consumer = k.consumer({ groupId: group });
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      const seen = [];
      await consumer.run({ eachMessage: async ({ message }) => void seen.push(String(message.value)) });
      await untilCount(seen, records.length, 60_000);
      await consumer.disconnect();
      return {
        topics: [{ name: topic, partitions: 3 }],
        records: [{ topic, count: records.length, records, produced: true, fetched: 'all' }],
        groups: [{ groupId: group, protocol: 'classic', members: 1, topics: [topic] }],
      };
    },
  );

  // @platformatic/kafka: the topic made directly (not recorded), producer, consumer group.
  const pk = await load('@platformatic/kafka');
  const pkVersion = version('@platformatic/kafka');
  await record(
    `platformatic-${pkVersion}/produce-consume`,
    { name: '@platformatic/kafka', version: pkVersion, tools: ['Producer.send', 'Consumer.consume'] },
    '@platformatic/kafka: its producer writes 10 keyed records to a topic of 3 partitions (created beforehand, not recorded), its consumer reads them all in a classic group of one.',
    async (bootstrap) => {
      const topic = 'platformatic-t';
      const group = 'platformatic-g';
      const records = keyed('platformatic', 10, false);
      await createTopic(kafka, { topic, partitions: 3 });
      const producer = new pk.Producer({ clientId: 'kwire-fixture-platformatic', bootstrapBrokers: [bootstrap], serializers: pk.stringSerializers });
      await producer.send({ messages: records.map((r) => ({ topic, key: r.key, value: r.value })) });
      await producer.close();
      const consumer = new pk.Consumer({ groupId: group, clientId: 'kwire-fixture-platformatic', bootstrapBrokers: [bootstrap], deserializers: pk.stringDeserializers });
      const stream = await consumer.consume({ topics: [topic], mode: 'earliest', autocommit: true });
      const seen = [];
      stream.on('data', (m) => seen.push(m.value));
      await untilCount(seen, records.length, 60_000);
      await stream.close();
      await consumer.close();
      return {
        topics: [{ name: topic, partitions: 3 }],
        records: [{ topic, count: records.length, records, produced: true, fetched: 'all' }],
        groups: [{ groupId: group, protocol: 'classic', members: 1, topics: [topic] }],
      };
    },
  );
} finally {
  await kafka.release();
}
