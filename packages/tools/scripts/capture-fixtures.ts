// Re-captures test-fixtures/ against the launcher's real brokers, through the recording proxy:
//
//   node_modules/.bin/tsc -b && node packages/tools/dist/scripts/capture-fixtures.js [--out DIR] [--only SUBSTRING]...
//
// Needs the JVM, Maven Central (the launcher resolves Kafka 4.4.0, 4.2.2 and 3.9.1) and Debian's kcat
// (`apt-get install -y kcat`). CI never runs this: it checks the committed captures only.
//
// Every scenario runs real peers (or kwire's own raw requests) through a fresh RecordingProxy into
// its own folder and writes manifest.json with the facts the scenario knows independently of our
// decoder: the topics it created, the records it wrote, the groups it ran, the errors it provoked.
// Scenarios are short and their records small, so the whole folder stays a few MB.
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import type { KafkaCluster, KafkaDistribution, KafkaTarget } from '@kwire/broker';
import { SUITE_FILE, type CaptureManifest, type RecordFact, type ScenarioFacts } from '../src/index.js';
import { captureKwireRequests, captureNotCoordinator } from './capture-kwire.js';
import { captureJavaShare, captureKwireShare, warmShareGroups } from './capture-share.js';
import { RecordingProxy } from '../src/record/proxy.js';
import { parseAddress } from '../src/record/address.js';

type Broker = typeof import('@kwire/broker');

const JAVA = 'apache-kafka-java';
/** kwire's own requests name the consumer package's version as their client software (dist/scripts -> packages/consumer). */
const KWIRE = { name: 'kwire', version: (JSON.parse(readFileSync(new URL('../../../consumer/package.json', import.meta.url), 'utf8')) as { version: string }).version };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (line: string) => process.stderr.write(`[capture] ${line}\n`);

interface Scenario {
  /** Folder under the output, e.g. "java-4.4.0/console". */
  name: string;
  description: string;
  origin: 'peer' | 'kwire';
  client: { name: string; version: string; tools?: string[] };
  /** Which cluster it runs against: 4.4.0 (SASL too), three 4.4.0 nodes, 3.9.1, or 4.2.2 (share groups). */
  cluster: 'main' | 'three' | 'old' | 'share42';
  /** Proxy the SASL listener instead of PLAINTEXT. */
  sasl?: boolean;
  notes?: string[];
  run(ctx: RunContext): Promise<ScenarioFacts>;
}

interface RunContext {
  broker: Broker;
  /** The proxy's bootstrap address, and a target for the Java tools through it. */
  bootstrap: string;
  via: (dist: KafkaDistribution) => KafkaTarget;
  /** The cluster directly (setup that should not be recorded). */
  direct: KafkaTarget;
  cluster: KafkaCluster;
  proxy: RecordingProxy;
  dist44: KafkaDistribution;
  dist39: KafkaDistribution;
  dist42: KafkaDistribution;
}

/* ------------------------------------------------------------------------------------------------
 * Helpers
 * --------------------------------------------------------------------------------------------- */

function keyed(prefix: string, n: number): { lines: string[]; records: RecordFact[] } {
  const records = Array.from({ length: n }, (_, i) => ({ key: `${prefix}-key-${i}`, value: `${prefix} value ${i}` }));
  return { lines: records.map((r) => `${r.key}\t${r.value}`), records };
}

/** Two consumers of one group, the second joining while the first runs: a rebalance. */
async function twoConsumers(ctx: RunContext, dist: KafkaDistribution, topic: string, group: string, props: Record<string, string | number>): Promise<void> {
  const target = ctx.via(dist);
  // Classic members learn of a rebalance from their next heartbeat: make that quick. (KIP-848
  // members get their interval from the coordinator and refuse the setting.)
  const heartbeat: Record<string, number> = props['group.protocol'] === 'consumer' ? {} : { 'heartbeat.interval.ms': 500 };
  const common = { topic, group, maxMessages: 1_000_000, props: { ...heartbeat, 'auto.commit.interval.ms': 500, ...props } };
  const first = ctx.broker.consoleConsumer(target, { ...common, idleTimeoutMs: 14_000 });
  // Settled here too, so that a failure during the wait below is not an unhandled rejection.
  first.catch(() => {});
  await sleep(5_000);
  const second = ctx.broker.consoleConsumer(target, { ...common, idleTimeoutMs: 6_000 });
  const [a, b] = await Promise.all([first, second]);
  log(`  ${group}: the consumers printed ${a.length} and ${b.length} records`);
}

/**
 * The console producer with --compression-codec: it sets compression.type from that option alone
 * (a config file's value is overridden), which the launcher's consoleProducer does not pass.
 */
async function consoleProduceCompressed(ctx: RunContext, topic: string, lines: string[], codec: string): Promise<void> {
  const dist = ctx.dist44;
  const result = await ctx.broker.runTool(dist, 'org.apache.kafka.tools.ConsoleProducer', ['--bootstrap-server', ctx.bootstrap, '--topic', topic, '--compression-codec', codec], {
    input: `${lines.join('\n')}\n`,
    timeoutMs: 120_000,
    label: `console producer ${topic}`,
  });
  if (result.code !== 0) throw new Error(`console producer ${topic} (${codec}) exited with ${result.code}: ${result.stderr.slice(-2000)}`);
}

const execFileP = promisify(execFile);

async function kcat(args: string[], input?: string): Promise<string> {
  if (input === undefined) return (await execFileP('kcat', args, { timeout: 60_000 })).stdout;
  return new Promise((resolvePromise, reject) => {
    const child = spawn('kcat', args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolvePromise(out) : reject(new Error(`kcat ${args.join(' ')}: exit ${code}: ${err}`))));
    child.stdin.end(input);
  });
}

/* ------------------------------------------------------------------------------------------------
 * Scenarios
 * --------------------------------------------------------------------------------------------- */

const java44 = { name: JAVA, version: '4.4.0' };
const java39 = { name: JAVA, version: '3.9.1' };
const java42 = { name: JAVA, version: '4.2.2' };

const SCENARIOS: Scenario[] = [
  {
    name: 'java-4.4.0/console',
    description: 'TopicCommand creates a topic of 3 partitions; the console producer writes 12 keyed records; a console consumer in a group reads them all.',
    origin: 'peer',
    client: { ...java44, tools: ['TopicCommand', 'ConsoleProducer', 'ConsoleConsumer'] },
    cluster: 'main',
    async run(ctx) {
      const topic = 'console-t';
      const { lines, records } = keyed('console', 12);
      await ctx.broker.createTopic(ctx.via(ctx.dist44), { topic, partitions: 3 });
      await ctx.broker.consoleProducer(ctx.via(ctx.dist44), { topic, lines, parseKey: true });
      await ctx.broker.consoleConsumer(ctx.via(ctx.dist44), { topic, group: 'console-g', maxMessages: records.length });
      return {
        clientSoftware: [java44],
        topics: [{ name: topic, partitions: 3 }],
        records: [{ topic, count: records.length, records, produced: true, fetched: 'all' }],
        groups: [{ groupId: 'console-g', protocol: 'classic', members: 1, topics: [topic] }],
        errors: [{ api: 'JoinGroup', error: 'MEMBER_ID_REQUIRED' }],
      };
    },
  },
  {
    name: 'java-4.4.0/perf',
    description: 'ProducerPerformance writes 300 records of 100 random bytes with acks=0 (Produce without responses); ConsumerPerformance reads them in a group.',
    origin: 'peer',
    client: { ...java44, tools: ['ProducerPerformance', 'ConsumerPerformance'] },
    cluster: 'main',
    async run(ctx) {
      const topic = 'perf-t';
      await ctx.broker.createTopic(ctx.direct, { topic, partitions: 2 });
      await ctx.broker.producerPerformance(ctx.via(ctx.dist44), { topic, numRecords: 300, recordSize: 100, props: { acks: 0, 'batch.size': 8192 } });
      await ctx.broker.consumerPerformance(ctx.via(ctx.dist44), { topic, messages: 300, group: 'perf-g' });
      return {
        clientSoftware: [java44],
        topics: [{ name: topic, partitions: 2 }],
        records: [{ topic, count: 300, valueBytes: 100, produced: true, fetched: 'all' }],
        groups: [{ groupId: 'perf-g', protocol: 'classic', members: 1, topics: [topic] }],
      };
    },
  },
  {
    name: 'java-4.4.0/group-rebalance',
    description:
      'Two console consumers of one classic group (range assignor): the second joins while the first runs, so the first learns of the rebalance from its heartbeat and rejoins; the leader assigns 4 partitions to 2 members; each leaves at the end.',
    origin: 'peer',
    client: { ...java44, tools: ['ConsoleConsumer x2'] },
    cluster: 'main',
    async run(ctx) {
      const topic = 'rebalance-t';
      const { lines, records } = keyed('rebalance', 40);
      await ctx.broker.createTopic(ctx.direct, { topic, partitions: 4 });
      await ctx.broker.consoleProducer(ctx.direct, { topic, lines, parseKey: true });
      await twoConsumers(ctx, ctx.dist44, topic, 'rebalance-g', { 'partition.assignment.strategy': 'org.apache.kafka.clients.consumer.RangeAssignor' });
      return {
        clientSoftware: [java44],
        topics: [{ name: topic, partitions: 4 }],
        records: [{ topic, count: records.length, records, fetched: 'all' }],
        groups: [{ groupId: 'rebalance-g', protocol: 'classic', members: 2, topics: [topic] }],
        errors: [
          { api: 'JoinGroup', error: 'MEMBER_ID_REQUIRED' },
          { api: 'Heartbeat', error: 'REBALANCE_IN_PROGRESS' },
        ],
      };
    },
  },
  {
    name: 'java-4.4.0/kip848',
    description: 'Two console consumers of one group with group.protocol=consumer (KIP-848, ConsumerGroupHeartbeat); the second joins while the first runs.',
    origin: 'peer',
    client: { ...java44, tools: ['ConsoleConsumer x2'] },
    cluster: 'main',
    async run(ctx) {
      const topic = 'kip848-t';
      const { lines, records } = keyed('kip848', 20);
      await ctx.broker.createTopic(ctx.direct, { topic, partitions: 4 });
      await ctx.broker.consoleProducer(ctx.direct, { topic, lines, parseKey: true });
      await twoConsumers(ctx, ctx.dist44, topic, 'kip848-g', { 'group.protocol': 'consumer' });
      return {
        clientSoftware: [java44],
        topics: [{ name: topic, partitions: 4 }],
        records: [{ topic, count: records.length, records, fetched: 'all' }],
        groups: [{ groupId: 'kip848-g', protocol: 'consumer', members: 2, topics: [topic] }],
      };
    },
  },
  {
    name: 'java-4.4.0/compression',
    description:
      'For each of gzip, snappy, lz4 and zstd: the console producer writes 10 records with that compression.type to a topic of its own, and a console consumer reads them back (Fetch responses holding batches of that codec).',
    origin: 'peer',
    client: { ...java44, tools: ['ConsoleProducer', 'ConsoleConsumer'] },
    cluster: 'main',
    async run(ctx) {
      const facts: ScenarioFacts = { clientSoftware: [java44], topics: [], records: [] };
      for (const codec of ['gzip', 'snappy', 'lz4', 'zstd'] as const) {
        const topic = `compressed-${codec}`;
        const records = Array.from({ length: 10 }, (_, i) => ({ value: `${codec} record ${i}: ${'compressible text '.repeat(8)}` }));
        await ctx.broker.createTopic(ctx.direct, { topic, partitions: 1 });
        await consoleProduceCompressed(
          ctx,
          topic,
          records.map((r) => r.value),
          codec,
        );
        await ctx.broker.consoleConsumer(ctx.via(ctx.dist44), { topic, partition: 0, maxMessages: records.length });
        facts.topics!.push({ name: topic, partitions: 1 });
        facts.records!.push({ topic, count: records.length, records, compression: codec, produced: true, fetched: 'all' });
      }
      return facts;
    },
  },
  {
    name: 'java-4.4.0/transactions',
    description:
      'A transactional KafkaProducer (packages/broker/java/KwireTransactions.java) writes three transactions of 3 records (keys, headers, a tombstone each) to one partition: committed, aborted, committed. Console consumers read the partition read_committed and read_uncommitted.',
    origin: 'peer',
    client: { ...java44, tools: ['KafkaProducer (KwireTransactions)', 'ConsoleConsumer'] },
    cluster: 'main',
    async run(ctx) {
      const topic = 'tx-t';
      await ctx.broker.createTopic(ctx.direct, { topic, partitions: 1 });
      const written = await ctx.broker.writeTransactions(ctx.via(ctx.dist44), { topic, transactions: ['commit', 'abort', 'commit'], partition: 0, tombstone: true, recordsPerTransaction: 3 });
      const fact = (r: (typeof written.records)[number]): RecordFact => ({ key: r.key, value: r.value, headers: r.headers });
      await ctx.broker.consoleConsumer(ctx.via(ctx.dist44), { topic, partition: 0, maxMessages: written.committed.length, isolationLevel: 'read_committed' });
      await ctx.broker.consoleConsumer(ctx.via(ctx.dist44), { topic, partition: 0, maxMessages: written.records.length, isolationLevel: 'read_uncommitted' });
      return {
        clientSoftware: [java44],
        topics: [{ name: topic, partitions: 1 }],
        records: [
          {
            topic,
            count: written.records.length,
            records: written.records.map(fact),
            produced: true,
            fetched: 'all',
            transactions: { commitMarkers: 2, abortMarkers: 1, abortedRecords: written.aborted.map(fact), readCommitted: true },
          },
        ],
      };
    },
  },
  {
    name: 'java-4.4.0/errors',
    description:
      'A console consumer subscribes to a topic that does not exist (auto-creation off): Metadata answers UNKNOWN_TOPIC_OR_PARTITION until it gives up. Another reads a 5-record partition from offset 100: OFFSET_OUT_OF_RANGE, then it resets to the earliest offset.',
    origin: 'peer',
    client: { ...java44, tools: ['ConsoleConsumer'] },
    cluster: 'main',
    async run(ctx) {
      await ctx.broker.consoleConsumer(ctx.via(ctx.dist44), { topic: 'missing-t', group: 'missing-g', maxMessages: 1, idleTimeoutMs: 3_000, props: { 'allow.auto.create.topics': 'false' } });
      const topic = 'oor-t';
      const { lines, records } = keyed('oor', 5);
      await ctx.broker.createTopic(ctx.direct, { topic, partitions: 1 });
      await ctx.broker.consoleProducer(ctx.direct, { topic, lines, parseKey: true });
      await ctx.broker.consoleConsumer(ctx.via(ctx.dist44), { topic, partition: 0, offset: 100, maxMessages: records.length, props: { 'auto.offset.reset': 'earliest' } });
      return {
        clientSoftware: [java44],
        topics: [{ name: topic, partitions: 1 }],
        records: [{ topic, count: records.length, records, fetched: 'all' }],
        errors: [
          { api: 'Metadata', error: 'UNKNOWN_TOPIC_OR_PARTITION' },
          { api: 'Fetch', error: 'OFFSET_OUT_OF_RANGE' },
        ],
      };
    },
  },
  {
    name: 'java-4.4.0/sasl',
    description: 'The console producer and a console consumer on the SASL_PLAINTEXT listener, authenticating with SCRAM-SHA-256 (SaslHandshake, then SaslAuthenticate rounds).',
    origin: 'peer',
    client: { ...java44, tools: ['ConsoleProducer', 'ConsoleConsumer'] },
    cluster: 'main',
    sasl: true,
    async run(ctx) {
      const topic = 'sasl-t';
      const { lines, records } = keyed('sasl', 6);
      await ctx.broker.createTopic(ctx.direct, { topic, partitions: 1 });
      const user = ctx.cluster.sasl!.users[0]!;
      const clientConfig = {
        'security.protocol': 'SASL_PLAINTEXT',
        'sasl.mechanism': 'SCRAM-SHA-256',
        'sasl.jaas.config': `org.apache.kafka.common.security.scram.ScramLoginModule required username="${user.username}" password="${user.password}";`,
      };
      await ctx.broker.consoleProducer(ctx.via(ctx.dist44), { topic, lines, parseKey: true, clientConfig });
      await ctx.broker.consoleConsumer(ctx.via(ctx.dist44), { topic, partition: 0, maxMessages: records.length, clientConfig });
      return {
        clientSoftware: [java44],
        records: [{ topic, count: records.length, records, produced: true, fetched: 'all' }],
      };
    },
  },
  {
    name: 'java-4.4.0/share',
    description:
      'A share group (KIP-932) of two Java console share consumers over a 2-partition topic of 12 keyed records written by the console producer: ShareGroupHeartbeat, ShareFetch with acknowledgements piggybacked, ShareAcknowledge when the consumers close; then ShareGroupCommand describes the group (ShareGroupDescribe). The group reads from the earliest offset (a group config set before, not recorded).',
    origin: 'peer',
    client: { ...java44, tools: ['ConsoleProducer', 'ConsoleShareConsumer x2', 'ShareGroupCommand'] },
    cluster: 'main',
    async run(ctx) {
      const { lines, records } = keyed('share', 12);
      return captureJavaShare({ broker: ctx.broker, dist: ctx.dist44, bootstrap: ctx.bootstrap, direct: ctx.direct, topic: 'share-t', group: 'share-g', lines, records, log });
    },
  },
  {
    name: 'java-4.2.2/share',
    description:
      "The share tools of Kafka 4.2.2 against a 4.2.2 broker (the release that made share groups production-ready; a fresh cluster finalizes share.version=1 by itself, no config needed): two Java console share consumers in one share group over a 2-partition topic of 12 keyed records written by the console producer, then ShareGroupCommand describes the group. ShareGroupHeartbeat v1, ShareFetch and ShareAcknowledge v2 with the 4.2 broker's answers; the group reads from the earliest offset (a group config set before, not recorded).",
    origin: 'peer',
    client: { ...java42, tools: ['ConsoleProducer', 'ConsoleShareConsumer x2', 'ShareGroupCommand'] },
    cluster: 'share42',
    async run(ctx) {
      const { lines, records } = keyed('share42', 12);
      return captureJavaShare({ broker: ctx.broker, dist: ctx.dist42, bootstrap: ctx.bootstrap, direct: ctx.direct, topic: 'share42-t', group: 'share42-g', lines, records, log });
    },
  },
  {
    name: 'java-4.4.0-broker-4.2.2/share',
    description:
      'The share tools of Kafka 4.4.0 against a 4.2.2 broker (versions negotiated down to what 4.2 offers): two console share consumers in one share group over a 2-partition topic of 12 keyed records written by the console producer, then ShareGroupCommand describes the group. The group reads from the earliest offset (a group config set before, not recorded).',
    origin: 'peer',
    client: { ...java44, tools: ['ConsoleProducer', 'ConsoleShareConsumer x2', 'ShareGroupCommand'] },
    cluster: 'share42',
    async run(ctx) {
      const { lines, records } = keyed('share44on42', 12);
      return captureJavaShare({ broker: ctx.broker, dist: ctx.dist44, bootstrap: ctx.bootstrap, direct: ctx.direct, topic: 'share44on42-t', group: 'share44on42-g', lines, records, log });
    },
  },
  {
    name: 'kwire/share-4.4.0',
    description:
      "kwire's own share-group requests: ShareGroupHeartbeat v1, ShareGroupDescribe v1, ShareFetch v1 and v2 (record-limit acquire mode), ShareAcknowledge v1 and v2 (accept, release), with the Kafka 4.4.0 broker's responses. One member reads 10 records of a 2-partition topic, releases one acquisition once (redelivered with delivery count 2) and accepts every record. The requests are ours; the responses are the broker's.",
    origin: 'kwire',
    client: KWIRE,
    cluster: 'main',
    async run(ctx) {
      const topic = 'kw-share-t';
      const groupId = 'kw-share-g';
      const { lines, records } = keyed('kw-share', 10);
      await ctx.broker.createTopic(ctx.direct, { topic, partitions: 2 });
      await ctx.broker.consoleProducer(ctx.direct, { topic, lines, parseKey: true });
      await ctx.broker.alterGroupConfig(ctx.direct, groupId, { 'share.auto.offset.reset': 'earliest' });
      const facts = await captureKwireShare({ bootstrap: ctx.bootstrap, software: KWIRE, topic, records: records.length, groupId, log });
      return { ...facts, records: [{ topic, count: records.length, records, fetched: 'all' }] };
    },
  },
  {
    name: 'kwire/share-4.2.2',
    description:
      "kwire's own share-group requests against a Kafka 4.2.2 broker: ShareGroupHeartbeat v1, ShareGroupDescribe v1, ShareFetch v1 and v2, ShareAcknowledge v1 and v2 (accept, release), with the 4.2 broker's responses. One member reads 10 records of a 2-partition topic, releases one acquisition once (redelivered with delivery count 2) and accepts every record. The requests are ours; the responses are the broker's.",
    origin: 'kwire',
    client: KWIRE,
    cluster: 'share42',
    async run(ctx) {
      const topic = 'kw-share42-t';
      const groupId = 'kw-share42-g';
      const { lines, records } = keyed('kw-share42', 10);
      await ctx.broker.createTopic(ctx.direct, { topic, partitions: 2 });
      await ctx.broker.consoleProducer(ctx.direct, { topic, lines, parseKey: true });
      await ctx.broker.alterGroupConfig(ctx.direct, groupId, { 'share.auto.offset.reset': 'earliest' });
      const facts = await captureKwireShare({ bootstrap: ctx.bootstrap, software: KWIRE, topic, records: records.length, groupId, log });
      return { ...facts, records: [{ topic, count: records.length, records, fetched: 'all' }] };
    },
  },
  {
    name: 'java-3.9.1/console-group',
    description:
      'The Java client of Kafka 3.9.1 against a 4.4.0 broker: the console producer writes 16 keyed records; two console consumers of one classic group read them, the second joining while the first runs (a rebalance).',
    origin: 'peer',
    client: { ...java39, tools: ['ConsoleProducer', 'ConsoleConsumer x2'] },
    cluster: 'main',
    async run(ctx) {
      const topic = 'old-client-t';
      const { lines, records } = keyed('old', 16);
      await ctx.broker.createTopic(ctx.direct, { topic, partitions: 2 });
      await ctx.broker.consoleProducer(ctx.via(ctx.dist39), { topic, lines, parseKey: true });
      await twoConsumers(ctx, ctx.dist39, topic, 'old-client-g', {});
      return {
        clientSoftware: [java39],
        topics: [{ name: topic, partitions: 2 }],
        records: [{ topic, count: records.length, records, produced: true, fetched: 'all' }],
        groups: [{ groupId: 'old-client-g', protocol: 'classic', members: 2, topics: [topic] }],
        errors: [{ api: 'JoinGroup', error: 'MEMBER_ID_REQUIRED' }],
      };
    },
  },
  {
    name: 'java-4.4.0-broker-3.9.1/console',
    description:
      'The Java client of Kafka 4.4.0 against a Kafka 3.9.1 broker (responses written by the older broker, versions negotiated down): the console producer writes 8 keyed records, a console consumer in a group reads them.',
    origin: 'peer',
    client: { ...java44, tools: ['ConsoleProducer', 'ConsoleConsumer'] },
    cluster: 'old',
    async run(ctx) {
      const topic = 'new-client-t';
      const { lines, records } = keyed('new', 8);
      await ctx.broker.createTopic(ctx.direct, { topic, partitions: 2 });
      await ctx.broker.consoleProducer(ctx.via(ctx.dist44), { topic, lines, parseKey: true });
      await ctx.broker.consoleConsumer(ctx.via(ctx.dist44), { topic, group: 'new-client-g', maxMessages: records.length });
      return {
        clientSoftware: [java44],
        topics: [{ name: topic, partitions: 2 }],
        records: [{ topic, count: records.length, records, produced: true, fetched: 'all' }],
        groups: [{ groupId: 'new-client-g', protocol: 'classic', members: 1, topics: [topic] }],
      };
    },
  },
  {
    name: 'kcat-1.7.1/produce-consume',
    description:
      "Debian's kcat 1.7.1 (librdkafka 2.0.2): metadata listing, producing 6 keyed records, consuming them, and a balanced consumer group. librdkafka sends most APIs below the codec's version range (Metadata v4, Produce v7, Fetch v11, ...): those frames are skipped; ApiVersions v3 is in range.",
    origin: 'peer',
    client: { name: 'kcat', version: '1.7.1 (librdkafka 2.0.2)', tools: ['kcat -L', 'kcat -P', 'kcat -C', 'kcat -G'] },
    cluster: 'main',
    notes: ['librdkafka sends Metadata v4: the proxy rewrote its broker addresses by splicing (method "splice"), not with the codec.'],
    async run(ctx) {
      const topic = 'kcat-t';
      await ctx.broker.createTopic(ctx.direct, { topic, partitions: 2 });
      await kcat(['-b', ctx.bootstrap, '-L', '-t', topic]);
      const { lines } = keyed('kcat', 6);
      await kcat(['-b', ctx.bootstrap, '-P', '-t', topic, '-K', '\t'], `${lines.join('\n')}\n`);
      await kcat(['-b', ctx.bootstrap, '-C', '-t', topic, '-o', 'beginning', '-e', '-q']);
      await kcat(['-b', ctx.bootstrap, '-G', 'kcat-g', topic, '-o', 'beginning', '-e', '-q', '-X', 'auto.offset.reset=earliest']).catch((err) =>
        log(`  kcat -G: ${(err as Error).message.split('\n')[0]}`),
      );
      return { clientSoftware: [{ name: 'librdkafka', version: '2.0.2' }] };
    },
  },
  {
    name: 'kwire/raw-4.4.0',
    description:
      "kwire's own requests, one or more of every API and version in the codec's scope (including versions no current peer sends), with the Kafka 4.4.0 broker's responses: topics created, grown and deleted, records produced with each codec (and once with acks=0), fetched, offsets listed, classic groups with each embedded subscription/assignment version, offsets committed and fetched, KIP-848 heartbeats, SASL errors. The requests are ours; the responses are the broker's.",
    origin: 'kwire',
    client: KWIRE,
    cluster: 'main',
    async run(ctx) {
      const user = ctx.cluster.sasl!.users[0]!;
      const saslAddress = await ctx.proxy.listenerFor(parseAddress(ctx.cluster.sasl!.bootstrap.split(',')[0]!));
      return captureKwireRequests({ bootstrap: ctx.bootstrap, sasl: { bootstrap: `${saslAddress.host}:${saslAddress.port}`, user: user.username, password: user.password }, software: KWIRE, log });
    },
  },
  {
    name: 'kwire/not-coordinator-3nodes',
    description:
      "kwire's own group requests on a cluster of three Kafka 4.4.0 brokers, sent to the brokers that are not the group's coordinator: NOT_COORDINATOR. The proxy gave each of the three brokers a listener of its own.",
    origin: 'kwire',
    client: KWIRE,
    cluster: 'three',
    async run(ctx) {
      return captureNotCoordinator({ bootstrap: ctx.bootstrap, software: KWIRE, log });
    },
  },
];

/* ------------------------------------------------------------------------------------------------
 * Main
 * --------------------------------------------------------------------------------------------- */

function folderBytes(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    const s = statSync(p);
    n += s.isDirectory() ? folderBytes(p) : s.size;
  }
  return n;
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { out: { type: 'string' }, only: { type: 'string', multiple: true } } });
  const broker: Broker = await import('@kwire/broker');
  const out = resolve(values.out ?? join(broker.repoRoot, 'test-fixtures'));
  const chosen = SCENARIOS.filter((s) => !values.only || values.only.some((o) => s.name.includes(o)));
  if (chosen.length === 0) throw new Error(`no scenario matches ${values.only?.join(', ')}`);
  const dist44 = await broker.ensureKafka('4.4.0', { log });
  // 3.9.1 only when a chosen scenario runs it (a re-capture of the share scenarios needs 4.4.0 alone).
  const dist39 = chosen.some((s) => s.name.includes('3.9.1')) ? await broker.ensureKafka('3.9.1', { log }) : dist44;
  const dist42 = chosen.some((s) => s.name.includes('4.2.2')) ? await broker.ensureKafka('4.2.2', { log }) : dist44;
  const clusters = new Map<Scenario['cluster'], KafkaCluster>();
  const clusterFor = async (kind: Scenario['cluster']) => {
    let c = clusters.get(kind);
    if (!c) {
      log(`starting the ${kind} cluster`);
      const config = { 'auto.create.topics.enable': 'false' };
      c =
        kind === 'main'
          ? await broker.startKafka({ version: '4.4.0', sasl: true, config, heapMb: 768, log })
          : kind === 'three'
            ? await broker.startKafka({ version: '4.4.0', nodes: 3, config, heapMb: 512, log })
            : kind === 'share42'
              ? await broker.startKafka({ version: '4.2.2', config, heapMb: 512, log })
              : await broker.startKafka({ version: '3.9.1', config, heapMb: 512, log });
      clusters.set(kind, c);
      if (kind === 'share42') {
        await broker.createTopic(c, { topic: 'share-warm-up', partitions: 1 });
        await warmShareGroups(c.bootstrap, 'share-warm-up', log);
      }
    }
    return c;
  };
  let failed = 0;
  try {
    for (const s of chosen) {
      const cluster = await clusterFor(s.cluster);
      const dir = join(out, s.name);
      rmSync(dir, { recursive: true, force: true });
      const target = parseAddress((s.sasl ? cluster.sasl!.bootstrap : cluster.bootstrap).split(',')[0]!);
      log(`${s.name}: recording ${s.sasl ? 'SASL ' : ''}${target.host}:${target.port}`);
      const proxy = await RecordingProxy.start({ listen: { host: '127.0.0.1', port: 0 }, target, out: dir, recorder: 'kwire record (capture-fixtures)' });
      const started = Date.now();
      let facts: ScenarioFacts | undefined;
      try {
        facts = await s.run({
          broker,
          bootstrap: proxy.bootstrap,
          via: (dist) => ({ bootstrap: proxy.bootstrap, dist }),
          direct: { bootstrap: cluster.bootstrap, dist: cluster.dist },
          cluster,
          proxy,
          dist44,
          dist39,
          dist42,
        });
      } catch (err) {
        failed++;
        log(`${s.name}: FAILED: ${(err as Error).stack ?? err}`);
      } finally {
        await proxy.stop();
      }
      const manifest: CaptureManifest = {
        scenario: s.name,
        description: s.description,
        origin: s.origin,
        client: s.client,
        broker: { version: cluster.dist.version.text, nodes: cluster.nodes.length },
        capturedAt: new Date().toISOString(),
        ...(facts ? { facts } : {}),
        ...(s.notes ? { notes: s.notes } : {}),
      };
      writeFileSync(join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
      log(`${s.name}: ${proxy.stats.connections} connections, ${proxy.stats.exchanges} exchanges, ${(folderBytes(dir) / 1024).toFixed(0)} KiB in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    }
  } finally {
    for (const c of clusters.values()) await c.stop();
  }
  if (!existsSync(join(out, SUITE_FILE))) {
    mkdirSync(out, { recursive: true });
    writeFileSync(
      join(out, SUITE_FILE),
      `${JSON.stringify({ description: 'kwire conformance fixtures: every API and version of the codec must pass as a request and as a response.', requireFullCoverage: true }, null, 2)}\n`,
    );
  }
  log(`test-fixtures: ${(folderBytes(out) / 1024 / 1024).toFixed(2)} MiB`);
  return failed ? 1 : 0;
}

process.exitCode = await main();
