// kafkajs's configuration as kwire's (names and kafkajs's defaults), and bad input: a typed
// kafkajs error, thrown where kafkajs throws it, never a TypeError or a hang. No broker needed.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { resolveConfig } from '@kwire/consumer/internals';
import { CONSUMER_DEFAULTS, RETRY_DEFAULTS, kwireConfig, saslOf } from '../../src/config.js';
import { Kafka, KafkaJSNonRetriableError, logLevel } from '../../src/index.js';
import { roundRobinAssignor } from '../../src/assigners.js';

const quiet = { logLevel: logLevel.NOTHING } as const;
const logger = new Kafka({ brokers: ['h:1'], ...quiet }).logger();

function throwsKafkaJS(fn: () => unknown, pattern: RegExp): void {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof KafkaJSNonRetriableError, `a KafkaJSNonRetriableError, not ${(e as Error)?.name}: ${(e as Error)?.message}`);
    assert.match((e as Error).message, pattern);
    return;
  }
  assert.unreachable(`expected a KafkaJSNonRetriableError matching ${pattern}`);
}

async function rejectsKafkaJS(p: Promise<unknown>, pattern: RegExp): Promise<void> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  assert.ok(e instanceof KafkaJSNonRetriableError, `a KafkaJSNonRetriableError, not ${(e as Error)?.name}: ${(e as Error)?.message}`);
  assert.match((e as Error).message, pattern);
}

test("kafkajs's defaults become kwire's settings, and kwire accepts the result", () => {
  const c = kwireConfig({ brokers: ['a:1'] }, ['a:1', 'b:2'], { groupId: 'g' }, RETRY_DEFAULTS, logger, [roundRobinAssignor()]);
  assert.equal(c.bootstrapServers, ['a:1', 'b:2']);
  assert.is(c.clientId, 'kafkajs');
  assert.is(c.groupId, 'g');
  assert.is(c.sessionTimeoutMs, CONSUMER_DEFAULTS.sessionTimeout);
  assert.is(c.heartbeatIntervalMs, 3000);
  assert.is(c.maxPollIntervalMs, 60000, 'rebalanceTimeout');
  // Unset, kwire's own default (kafkajs's too, 1 MiB) applies, and adapts to a backlog; set, it is passed on.
  assert.is(c.maxPartitionFetchBytes, undefined);
  assert.is(c.recordBuffers, 'owned', "kafkajs's Buffers are the application's to keep");
  assert.is(c.fetchMaxBytes, 10485760);
  assert.is(c.fetchMaxWaitMs, 5000);
  assert.is(c.fetchMinBytes, 1);
  assert.is(c.isolationLevel, 'read_committed', 'kafkajs reads committed unless readUncommitted');
  assert.is(c.requestTimeoutMs, 30000);
  assert.is(c.socketConnectionSetupTimeoutMs, 1000, "kafkajs's connectionTimeout default");
  assert.is(c.retryBackoffMs, 300);
  assert.is(c.retryBackoffMaxMs, 30000);
  const resolved = resolveConfig(c);
  assert.is(resolved.isolationLevel, 'read_committed');
  assert.is(resolved.partitionAssignmentStrategy.length, 1);
});

test("kafkajs's options map one to one", () => {
  const c = kwireConfig(
    { brokers: ['a:1'], clientId: 'me', requestTimeout: 5000, connectionTimeout: 2500, ssl: true, sasl: { mechanism: 'plain', username: 'u', password: 'p' } },
    ['a:1'],
    {
      groupId: 'g',
      sessionTimeout: 10000,
      rebalanceTimeout: 20000,
      heartbeatInterval: 1000,
      maxBytesPerPartition: 2048,
      minBytes: 10,
      maxBytes: 4096,
      maxWaitTimeInMs: 100,
      readUncommitted: true,
      rackId: 'rack-1',
      metadataMaxAge: 1234,
      kwire: { groupProtocol: 'consumer', groupRemoteAssignor: 'uniform', groupInstanceId: 'i-1', recordBuffers: 'pooled' },
    },
    { ...RETRY_DEFAULTS, initialRetryTime: 50, maxRetryTime: 900 },
    logger,
    ['cooperative-sticky'],
  );
  assert.is(c.clientId, 'me');
  assert.is(c.requestTimeoutMs, 5000);
  assert.is(c.socketConnectionSetupTimeoutMs, 2500);
  assert.is(c.ssl, true);
  assert.equal(c.sasl, { mechanism: 'plain', username: 'u', password: 'p' });
  assert.is(c.sessionTimeoutMs, 10000);
  assert.is(c.maxPollIntervalMs, 20000);
  assert.is(c.heartbeatIntervalMs, 1000);
  assert.is(c.maxPartitionFetchBytes, 2048);
  assert.is(c.fetchMinBytes, 10);
  assert.is(c.fetchMaxBytes, 4096);
  assert.is(c.fetchMaxWaitMs, 100);
  assert.is(c.isolationLevel, 'read_uncommitted');
  assert.is(c.clientRack, 'rack-1');
  assert.is(c.metadataMaxAgeMs, 1234);
  assert.is(c.retryBackoffMs, 50);
  assert.is(c.retryBackoffMaxMs, 900);
  assert.is(c.groupProtocol, 'consumer');
  assert.is(c.groupRemoteAssignor, 'uniform');
  assert.is(c.groupInstanceId, 'i-1');
  assert.equal(c.partitionAssignmentStrategy, ['cooperative-sticky']);
  assert.is(c.recordBuffers, 'pooled');
  resolveConfig(c);
});

test('SASL: plain, scram and oauthbearer map; other mechanisms are refused by name', () => {
  assert.equal(saslOf({ mechanism: 'scram-sha-256', username: 'u', password: 'p' }), { mechanism: 'scram-sha-256', username: 'u', password: 'p' });
  const provider = async () => ({ value: 'token' });
  assert.equal(saslOf({ mechanism: 'oauthbearer', oauthBearerProvider: provider }), { mechanism: 'oauthbearer', oauthBearerProvider: provider });
  assert.is(saslOf(undefined), undefined);
  throwsKafkaJS(() => saslOf({ mechanism: 'aws', authorizationIdentity: 'a', accessKeyId: 'b', secretAccessKey: 'c' }), /AWS mechanism is not supported/);
  throwsKafkaJS(() => saslOf({ mechanism: 'plain' } as never), /Missing username or password/);
  throwsKafkaJS(() => saslOf({ mechanism: 'oauthbearer' } as never), /token provider/);
  throwsKafkaJS(() => saslOf({ mechanism: 'custom', authenticationProvider: () => ({ authenticate: async () => {} }) }), /custom authentication providers/);
});

test('bad configuration: typed errors where kafkajs throws them', () => {
  throwsKafkaJS(() => new Kafka(undefined as never), /configuration/);
  const kafka = new Kafka({ brokers: ['h:1'], ...quiet });
  throwsKafkaJS(() => kafka.consumer(undefined as never), /groupId must be a non-empty string/);
  throwsKafkaJS(() => kafka.consumer({ groupId: '' }), /groupId must be a non-empty string/);
  throwsKafkaJS(() => kafka.consumer({ groupId: 'g', heartbeatInterval: 5000, sessionTimeout: 5000 }), /heartbeatInterval \(5000\) must be lower than sessionTimeout \(5000\)/);
  throwsKafkaJS(() => kafka.consumer({ groupId: 'g', maxBytes: -1 }), /Invalid maxBytes/);
  throwsKafkaJS(() => kafka.consumer({ groupId: 'g', kwire: { recordBuffers: 'copied' as never } }), /kwire.recordBuffers must be 'owned' .* or 'pooled' .*, not "copied"/);
  throwsKafkaJS(() => kafka.consumer({ groupId: 'g', sessionTimeout: 'long' as never }), /Invalid sessionTimeout/);
  throwsKafkaJS(() => kafka.consumer({ groupId: 'g', partitionAssigners: [] }), /partitionAssigners/);
  throwsKafkaJS(() => kafka.consumer({ groupId: 'g', partitionAssigners: [() => ({}) as never] }), /the factory must return \{ name, version, assign\(group\), protocol\(\{ topics \}\) \}/);
  throwsKafkaJS(() => kafka.consumer({ groupId: 'g', partitionAssigners: ['roundrobin' as never] }), /Invalid partition assigner: expected a function/);
  kafka.consumer({ groupId: 'g', partitionAssigners: [() => ({ name: 'mine', version: 0, assign: async () => [], protocol: () => ({ name: 'mine', metadata: Buffer.alloc(0) }) })] });
});

test('bad arguments to the consumer: typed errors, before anything is sent', async () => {
  const kafka = new Kafka({ brokers: ['h:1'], ...quiet });
  const consumer = kafka.consumer({ groupId: 'g' });
  await rejectsKafkaJS(consumer.subscribe(undefined as never), /Missing required argument "topics"/);
  await rejectsKafkaJS(consumer.subscribe({} as never), /Missing required argument "topics"/);
  await rejectsKafkaJS(consumer.subscribe({ topics: 'x' } as never), /must be an array/);
  await rejectsKafkaJS(consumer.subscribe({ topics: [42] } as never), /Invalid topic 42 \(number\)/);
  await rejectsKafkaJS(consumer.run({ eachMessage: 'x' } as never), /eachMessage/);
  await rejectsKafkaJS(consumer.run({} as never), /eachMessage or eachBatch/);
  await rejectsKafkaJS(consumer.run({ eachMessage: async () => {}, partitionsConsumedConcurrently: 0 }), /partitionsConsumedConcurrently/);
  await rejectsKafkaJS(consumer.run({ eachMessage: async () => {} }), /subscribe\(\) first/);
  await rejectsKafkaJS(consumer.commitOffsets([{ topic: 't', partition: 0, offset: 'x' }]), /Invalid offset, expected a long received x/);
  await rejectsKafkaJS(consumer.commitOffsets([{ topic: 't', partition: 0, offset: '-1' }]), /must not be a negative number/);
  await rejectsKafkaJS(consumer.commitOffsets([{ topic: '', partition: 0, offset: '1' }]), /Invalid topic/);
  await rejectsKafkaJS(consumer.commitOffsets([{ topic: 't', partition: 0, offset: '1' }]), /consumer#run must be called first/);
  throwsKafkaJS(() => consumer.seek({ topic: 't', partition: Number.NaN, offset: '0' }), /Invalid partition/);
  throwsKafkaJS(() => consumer.seek({ topic: 't', partition: 0, offset: '-3' }), /must not be a negative number/);
  throwsKafkaJS(() => consumer.seek({ topic: 't', partition: 0, offset: '0' }), /consumer#run must be called first/);
  throwsKafkaJS(() => consumer.pause([{ topic: '' }]), /Invalid topic/);
  throwsKafkaJS(() => consumer.pause([{ topic: 't', partitions: 'x' as never }]), /Array of valid partitions/);
  throwsKafkaJS(() => consumer.pause([{ topic: 't' }]), /consumer#run must be called first/);
  throwsKafkaJS(() => consumer.resume([{ topic: 't' }]), /consumer#run must be called first/);
  throwsKafkaJS(() => consumer.on('consumer.nope' as never, () => {}), /Event name should be one of consumer.events.HEARTBEAT/);
  assert.equal(consumer.paused(), []);
  const remove = consumer.on(consumer.events.CRASH, () => {});
  assert.type(remove, 'function');
  remove();
  assert.is(consumer.events.GROUP_JOIN, 'consumer.group_join');
  assert.is(Object.keys(consumer.events).length, 16);
  await consumer.disconnect();
});

test('the brokers function: its answer is used, a failure or an empty answer is a typed error', async () => {
  const failing = new Kafka({ brokers: async () => Promise.reject(new Error('discovery down')), ...quiet }).consumer({ groupId: 'g' });
  await rejectsKafkaJS(failing.connect(), /brokers function threw: discovery down/);
  const empty = new Kafka({ brokers: async () => [], ...quiet }).consumer({ groupId: 'g' });
  await rejectsKafkaJS(empty.connect(), /returned void or empty array/);
  // As kafkajs: bad brokers are found when a client connects, not when Kafka is made.
  await rejectsKafkaJS(new Kafka({ brokers: [], ...quiet }).consumer({ groupId: 'g' }).connect(), /brokers array is empty/);
  await rejectsKafkaJS(new Kafka({ brokers: undefined as never, ...quiet }).consumer({ groupId: 'g' }).connect(), /brokers should not be null/);
  await rejectsKafkaJS(new Kafka({ brokers: [42] as never, ...quiet }).consumer({ groupId: 'g' }).connect(), /invalid broker 42/);
  await rejectsKafkaJS(new Kafka({ brokers: ['nohost'], ...quiet }).consumer({ groupId: 'g' }).connect(), /invalid broker nohost/);
});

test.run();
