// A consumer program written as against kafkajs 2.2.4's types, importing from @kwire/kafkajs:
// compiled by `tsc -b` (never run), so the build fails when this package's types drift from what
// kafkajs programs use. It touches every consumer method, both payloads, every event and the
// error classes; the last part checks the classes against kafkajs's own declarations.
import type * as KafkaJSTypes from 'kafkajs';
import {
  type Batch,
  type Consumer,
  type ConsumerConfig,
  type ConsumerCrashEvent,
  type ConsumerGroupJoinEvent,
  type EachBatchPayload,
  type EachMessagePayload,
  type GroupDescription,
  type KafkaConfig,
  type KafkaMessage,
  type LogEntry,
  type logCreator,
  CompressionTypes,
  Kafka,
  KafkaJSConnectionError,
  KafkaJSError,
  KafkaJSNonRetriableError,
  KafkaJSNumberOfRetriesExceeded,
  KafkaJSOffsetOutOfRange,
  KafkaJSProtocolError,
  KafkaJSRequestTimeoutError,
  PartitionAssigners,
  logLevel,
} from '@kwire/kafkajs';

const myLogCreator: logCreator = (level) => (entry: LogEntry) => {
  if (level >= logLevel.WARN) console.log(entry.namespace, entry.label, entry.log.message);
};

const config: KafkaConfig = {
  clientId: 'orders',
  brokers: async () => ['localhost:9092'],
  ssl: { rejectUnauthorized: false },
  sasl: { mechanism: 'scram-sha-512', username: 'u', password: 'p' },
  connectionTimeout: 3000,
  requestTimeout: 25000,
  retry: { initialRetryTime: 100, retries: 8 },
  logLevel: logLevel.INFO,
  logCreator: myLogCreator,
};
const kafka = new Kafka(config);

const consumerConfig: ConsumerConfig = {
  groupId: 'orders',
  partitionAssigners: [PartitionAssigners.roundRobin],
  sessionTimeout: 30000,
  rebalanceTimeout: 60000,
  heartbeatInterval: 3000,
  maxBytesPerPartition: 1048576,
  minBytes: 1,
  maxBytes: 10485760,
  maxWaitTimeInMs: 5000,
  readUncommitted: false,
  rackId: 'r1',
  allowAutoTopicCreation: false,
  retry: { retries: 3, restartOnFailure: async (e: Error) => e.name !== 'KafkaJSNonRetriableError' },
  kwire: { groupProtocol: 'consumer', partitionAssignmentStrategy: ['cooperative-sticky'], closeTimeoutMs: 10000 },
};
const consumer: Consumer = kafka.consumer(consumerConfig);

function handle(message: KafkaMessage): string {
  const key: Buffer | null = message.key;
  const value: Buffer | null = message.value;
  const offset: string = message.offset;
  const timestamp: string = message.timestamp;
  const attributes: number = message.attributes;
  const header = message.headers?.['trace-id'];
  const trace = Array.isArray(header) ? header.map(String).join(',') : header?.toString();
  return `${key?.toString()} ${value?.toString()} ${offset} ${timestamp} ${attributes} ${trace}`;
}

export async function main(): Promise<void> {
  await consumer.connect();
  await consumer.subscribe({ topic: 'orders', fromBeginning: true });
  await consumer.subscribe({ topics: ['payments', /^audit-.*/], fromBeginning: false });

  const removers = [
    consumer.on(consumer.events.HEARTBEAT, (e) => console.log(e.payload.groupId, e.payload.memberId, e.payload.groupGenerationId)),
    consumer.on(consumer.events.COMMIT_OFFSETS, (e) => {
      for (const t of e.payload.topics)
        console.log(
          t.topic,
          t.partitions.map((p) => p.offset),
        );
    }),
    consumer.on(consumer.events.GROUP_JOIN, (e: ConsumerGroupJoinEvent) => console.log(e.payload.isLeader, e.payload.memberAssignment, e.payload.duration)),
    consumer.on(consumer.events.FETCH_START, (e) => console.log(e.payload.nodeId)),
    consumer.on(consumer.events.FETCH, (e) => console.log(e.payload.numberOfBatches, e.payload.duration)),
    consumer.on(consumer.events.START_BATCH_PROCESS, (e) => console.log(e.payload.topic, e.payload.offsetLag, e.payload.batchSize)),
    consumer.on(consumer.events.END_BATCH_PROCESS, (e) => console.log(e.payload.duration, e.payload.lastOffset)),
    consumer.on(consumer.events.CONNECT, (e) => console.log(e.type, e.timestamp)),
    consumer.on(consumer.events.DISCONNECT, (e) => console.log(e.id)),
    consumer.on(consumer.events.STOP, (e) => console.log(e.payload)),
    consumer.on(consumer.events.CRASH, (e: ConsumerCrashEvent) => console.log(e.payload.error.message, e.payload.restart, e.payload.groupId)),
    consumer.on(consumer.events.REBALANCING, (e) => console.log(e.payload.memberId)),
    consumer.on(consumer.events.RECEIVED_UNSUBSCRIBED_TOPICS, (e) => console.log(e.payload.topicsNotSubscribed)),
    consumer.on(consumer.events.REQUEST, (e) => console.log(e.payload.apiName, e.payload.duration)),
    consumer.on(consumer.events.REQUEST_TIMEOUT, (e) => console.log(e.payload.broker)),
    consumer.on(consumer.events.REQUEST_QUEUE_SIZE, (e) => console.log(e.payload.queueSize)),
  ];
  for (const remove of removers) remove();

  await consumer.run({
    autoCommit: true,
    autoCommitInterval: 5000,
    autoCommitThreshold: 100,
    partitionsConsumedConcurrently: 3,
    eachMessage: async ({ topic, partition, message, heartbeat, pause }: EachMessagePayload) => {
      console.log(topic, partition, handle(message));
      await heartbeat();
      if (message.value === null) {
        const resume = pause();
        setTimeout(resume, 1000);
      }
    },
  });

  await consumer.run({
    eachBatchAutoResolve: false,
    eachBatch: async ({ batch, resolveOffset, heartbeat, commitOffsetsIfNecessary, uncommittedOffsets, isRunning, isStale, pause }: EachBatchPayload) => {
      const b: Batch = batch;
      console.log(b.topic, b.partition, b.highWatermark, b.isEmpty(), b.firstOffset(), b.lastOffset(), b.offsetLag(), b.offsetLagLow());
      for (const message of batch.messages) {
        if (!isRunning() || isStale()) break;
        handle(message);
        resolveOffset(message.offset);
        await heartbeat();
      }
      console.log(uncommittedOffsets().topics.length);
      await commitOffsetsIfNecessary();
      await commitOffsetsIfNecessary({ topics: [{ topic: b.topic, partitions: [{ partition: b.partition, offset: '10' }] }] });
      pause()();
    },
  });

  await consumer.commitOffsets([{ topic: 'orders', partition: 0, offset: '42', metadata: 'note' }]);
  consumer.seek({ topic: 'orders', partition: 0, offset: '0' });
  consumer.pause([{ topic: 'orders' }, { topic: 'payments', partitions: [0, 1] }]);
  const paused: { topic: string; partitions: number[] }[] = consumer.paused();
  consumer.resume(paused);
  const group: GroupDescription = await consumer.describeGroup();
  console.log(
    group.state,
    group.members.map((m) => m.memberId),
    group.protocol,
  );
  consumer.logger().info('done', { compression: CompressionTypes.GZIP });
  await consumer.stop();
  await consumer.disconnect();

  try {
    await consumer.connect();
  } catch (e) {
    if (e instanceof KafkaJSNumberOfRetriesExceeded) console.log(e.retryCount, e.retryTime);
    else if (e instanceof KafkaJSOffsetOutOfRange) console.log(e.topic, e.partition);
    else if (e instanceof KafkaJSProtocolError) console.log(e.type, e.code, e.retriable);
    else if (e instanceof KafkaJSConnectionError) console.log(e.broker);
    else if (e instanceof KafkaJSRequestTimeoutError) console.log(e.pendingDuration);
    else if (e instanceof KafkaJSNonRetriableError || e instanceof KafkaJSError) console.log(e.name, e.retriable);
  }
}

// The classes against kafkajs's own declarations: what kafkajs code expects, this package gives.
export const asKafkaJSConsumer: KafkaJSTypes.Consumer = consumer;
export const asKafkaJSClient: Pick<KafkaJSTypes.Kafka, 'consumer' | 'producer' | 'admin' | 'logger'> = kafka;
export const asKafkaJSLogLevel: typeof KafkaJSTypes.logLevel = logLevel;
export const asKafkaJSCompression: typeof KafkaJSTypes.CompressionTypes = CompressionTypes;
export const asKafkaJSAssigners: typeof KafkaJSTypes.PartitionAssigners = PartitionAssigners;
export const asKafkaJSError: typeof KafkaJSTypes.KafkaJSError = KafkaJSError;
