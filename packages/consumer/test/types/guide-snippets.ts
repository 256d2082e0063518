// The TypeScript blocks of GUIDE.md, compiled by tsc -b (never run: each sits in a function
// nobody calls). test/unit/guide.test.ts checks that every block of the guide is here as it is
// there; change both together.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import {
  bridgeOpenTelemetry,
  createConsumer,
  DeserializationError,
  isKafkaError,
  openTelemetryMeter,
  prometheusText,
  RecordReleasedError,
  type BatchCursor,
  type ConsumerRecord,
  type KeptRecord,
  type RebalanceListener,
  UsageError,
} from '../../src/index.js';
import type { Consumer, TopicPartition } from '../../src/index.js';

// The names of your own that the blocks use.
interface Invoice {
  id: string;
  cents: number;
}
declare const bootstrapServers: string;
declare const consumer: Consumer<string | null, Invoice>;
declare function bill(customer: string | null, invoice: Invoice): Promise<void>;
declare function handle(record: ConsumerRecord<string | null, Invoice>): Promise<boolean>;
declare function flush(partitions: TopicPartition[]): Promise<void>;
declare function discard(partitions: TopicPartition[]): void;
declare function important(record: ConsumerRecord<string | null, Invoice>): boolean;
declare function deadLetter(topic: string, partition: number, offset: bigint, cause: unknown): Promise<void>;
declare const deadLetters: { send(record: ConsumerRecord<string | null, Invoice>, error: unknown): Promise<void> };

export async function oneGroupMember(): Promise<void> {
  const consumer = createConsumer({
    bootstrapServers, // 'host:9092,host2:9092' or a list
    groupId: 'billing',
    autoOffsetReset: 'earliest', // where a partition without a committed offset starts
    keyDeserializer: 'string',
    valueDeserializer: (data) => JSON.parse(String(data)) as Invoice,
  });
  await consumer.subscribe({ topics: ['invoices'] });
  await consumer.assigned(); // optional: resolves at the first assignment
  for await (const batch of consumer) {
    for (const record of batch) await bill(record.key, record.value); // string | null, Invoice
  }
}

export async function finishedRule(): Promise<void> {
  for await (const batch of consumer) {
    for (const record of batch) {
      if (!(await handle(record))) {
        batch.giveBack(); // let go unfinished: the partition comes again from this record
        break;
      }
      batch.markProcessed(record); // finished (with those before it), even before the batch is
    }
  }
}

export async function runCallbacks(): Promise<void> {
  await consumer.run({
    maxConcurrency: 256, // records in flight at once, over every partition
    ordering: 'key', // a customer's records one at a time, in order; other customers meanwhile
    eachMessage: async ({ message }) => {
      await bill(message.key, message.value); // throws: this record is retried, its key waits
    },
    onFailure: (_error, { attempts }) => (attempts < 5 ? 'retry' : 'skip'),
    onSkip: (record, error) => deadLetters.send(record, error), // then the record counts as finished
  });
}

export async function rebalanceListeners(): Promise<void> {
  const listener: RebalanceListener = {
    // A clean handover: the records delivered were finished or given back first; commit your own state now.
    onPartitionsRevoked: async (partitions) => {
      await flush(partitions);
    },
    onPartitionsAssigned: (partitions) => console.log('now reading', partitions),
    // Gone without a handover (fenced, session expired): another member may have them already.
    onPartitionsLost: (partitions) => discard(partitions),
  };
  await consumer.subscribe({ topics: ['invoices'] }, listener);
}

export async function groupEvents(): Promise<void> {
  consumer.on('rebalance', ({ why }) => console.log('rebalance:', why));
  consumer.on('assigned', ({ added, revoked }) => console.log(`+${added.length} -${revoked.length}`));
  consumer.on('lost', ({ partitions, why }) => console.warn('lost', partitions, why));
  consumer.on('log-truncation', ({ topic, partition, from, to }) => console.warn(`${topic}-${partition}: truncated, ${from} -> ${to}`));
  consumer.on('offset-reset', ({ topic, partition, to }) => console.warn(`${topic}-${partition}: reset to ${to}`));
  consumer.on('error', (err) => console.error(err)); // a fatal group error, also thrown by the streams
}

export async function streams(): Promise<void> {
  const {
    invoices: [a, b, c],
  } = consumer.streams({ invoices: 3 });
  await Promise.all(
    [a, b, c].map(async (stream) => {
      for await (const record of stream.records()) await handle(record);
    }),
  );
}

export async function lifetimeRule(): Promise<void> {
  const kept: KeptRecord[] = [];
  let late: ConsumerRecord | undefined;
  for await (const batch of consumer) {
    for (const record of batch) {
      if (important(record)) kept.push(record.keep()); // a copy that owns its bytes
      late = record;
    }
  }
  try {
    console.log(late?.headers);
  } catch (err) {
    if (err instanceof RecordReleasedError) console.log('released: keep() what you need later');
  }
}

export async function cursorPath(): Promise<void> {
  let cursor: BatchCursor | undefined;
  let valueBytes = 0;
  for await (const batch of consumer) {
    cursor = batch.cursor(cursor); // reused: nothing allocated per batch either
    for (let r = cursor.next(); r !== null; r = cursor.next()) {
      if (r.valueLength > 0) valueBytes += r.valueLength; // bytes: r.data, from r.valueOffset
      if (r.offsetNumber % 100_000 === 0) console.log(`${r.topic}-${r.partition}@${r.offsetNumber}`, r.timestamp, r.keyString());
    }
  }
  console.log(`${valueBytes} value bytes`);
}

export async function poisonRecords(): Promise<void> {
  for (;;) {
    try {
      for await (const batch of consumer) for (const record of batch) await handle(record);
      break; // the consumer was closed
    } catch (err) {
      if (!(err instanceof DeserializationError)) throw err;
      await deadLetter(err.topic, err.partition, err.offset, err.cause);
      const tp = { topic: err.topic, partition: err.partition };
      consumer.seek(tp, err.offset + 1n);
      consumer.resume([tp]);
    }
  }
}

export async function errorCodes(): Promise<void> {
  try {
    await consumer.commitSync();
  } catch (err) {
    if (isKafkaError(err) && err.retriable) consumer.commitAsync();
    else if (err instanceof UsageError) console.error('no group to commit to:', err.message);
    else throw err;
  }
}

export async function shutdown(): Promise<void> {
  process.once('SIGTERM', async () => {
    const { committed, uncommitted, leftGroup, timedOut, durationMs } = await consumer.close({ timeoutMs: 10_000 });
    console.log(`closed in ${durationMs} ms: ${committed.length} offsets committed, left the group: ${leftGroup}, cut short: ${timedOut}`);
    for (const o of uncommitted) console.warn(`${o.topic}-${o.partition} finished up to ${o.offset}, not committed: ${o.error}`);
  });
}

export async function metrics(): Promise<void> {
  createServer((req, res) => res.end(prometheusText(consumer.metrics(), { service: 'billing' }))).listen(9464);

  // @opentelemetry/api is an optional peer: install it to use the bridge (kwire runs without it).
  const bridge = bridgeOpenTelemetry(consumer, { meter: await openTelemetryMeter(), attributes: { service: 'billing' } });
  // bridge.close() stops it
}

export async function securityInCode(): Promise<void> {
  const secured = createConsumer({
    bootstrapServers: 'broker:9094',
    groupId: 'billing',
    ssl: { ca: [readFileSync('ca.pem')] },
    sasl: { mechanism: 'scram-sha-512', username: 'billing', password: process.env.KAFKA_PASSWORD ?? '' },
  });
}

export async function securityFromProperties(): Promise<void> {
  const fromProperties = createConsumer({
    'bootstrap.servers': 'broker:9094',
    'group.id': 'billing',
    'security.protocol': 'SASL_SSL',
    'sasl.mechanism': 'SCRAM-SHA-256',
    'sasl.jaas.config': 'org.apache.kafka.common.security.scram.ScramLoginModule required username="billing" password="secret";',
    'ssl.ca.location': '/etc/kafka/ca.pem',
  });
}

export async function fromKafkajs(): Promise<void> {
  const consumer = createConsumer({
    clientId: 'billing-service', // kafkajs: new Kafka({ clientId, brokers })
    bootstrapServers: 'broker1:9092,broker2:9092',
    groupId: 'billing', // kafkajs: kafka.consumer({ groupId })
    autoOffsetReset: 'earliest', // kafkajs: subscribe({ topics, fromBeginning: true })
    keyDeserializer: 'string',
    valueDeserializer: 'json',
  });
  await consumer.subscribe({ topics: ['invoices'] }); // no connect(): the first call connects
  const running = consumer.run({
    eachMessage: async ({ topic, partition, message }) => {
      const headers = Object.fromEntries(message.headers.map((h) => [h.key, h.value?.toString()])); // kafkajs's shape
      console.log(topic, partition, message.offset, new Date(message.timestamp), message.key, message.value, headers);
    },
  });
  process.once('SIGTERM', () => void consumer.close({ timeoutMs: 10_000 })); // kafkajs: disconnect()
  await running; // unlike kafkajs's, kwire's run() settles when the consumer is closed
}

export async function fromKafkajsManual(): Promise<void> {
  const tp = { topic: 'invoices', partition: 0 };
  consumer.seek(tp, 42n); // kafkajs: seek({ topic, partition, offset: '42' })
  await consumer.commitSync([{ ...tp, offset: 43n }]); // kafkajs: commitOffsets([{ topic, partition, offset: '43' }])
  const committed = await consumer.committed([tp]); // kafkajs: admin.fetchOffsets({ groupId, topics })
  const found = await consumer.offsetsForTimes([{ ...tp, timestamp: Date.parse('2026-12-04T09:00:00Z') }]);
  console.log(committed.get(tp)?.offset, [...found.values()][0]?.offset);
}
