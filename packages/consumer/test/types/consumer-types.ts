// Type-level tests, checked by `tsc -b` (never run: every check sits in a function nobody calls).
// A wrong type makes the build fail: `expectType<Equal<A, B>>()` does not compile unless A and B
// are the same type, and a `@ts-expect-error` line whose code compiles is itself an error.
import {
  createConsumer,
  createShareConsumer,
  type ConsumedRecord,
  type ConsumedRecord as ConsumedRecordValue,
  type ConsumerRecord,
  type ConsumerRecord as ConsumerRecordValue,
  type ConsumerConfig,
  type Consumer,
  type ConsumerBatch,
  type DeserializationError,
  type GroupEventDetails,
  type GroupEventName,
  type MessageStream,
  type PositionChange,
  type ShareConsumer,
  type ShareRecord,
  type TopicPartition,
} from '../../src/index.js';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function expectType<_T extends true>(): void {}

type KeyOf<C> = C extends Consumer<infer K, unknown> ? K : never;
type ValueOf<C> = C extends Consumer<unknown, infer V> ? V : never;

interface Order {
  id: string;
  cents: number;
}
const bootstrapServers = '127.0.0.1:9092';

export function recordTypesFollowTheDeserializers(): void {
  // No deserializers: the bytes (a null key or value stays null).
  const bytes = createConsumer({ bootstrapServers });
  expectType<Equal<KeyOf<typeof bytes>, Buffer | null>>();
  expectType<Equal<ValueOf<typeof bytes>, Buffer | null>>();

  const buffers = createConsumer({ bootstrapServers, keyDeserializer: 'buffer', valueDeserializer: 'buffer' });
  expectType<Equal<typeof buffers, Consumer<Buffer | null, Buffer | null>>>();

  const strings = createConsumer({ bootstrapServers, keyDeserializer: 'string', valueDeserializer: 'string' });
  expectType<Equal<typeof strings, Consumer<string | null, string | null>>>();

  // JSON has no schema: unknown until the application says more.
  const json = createConsumer({ bootstrapServers, valueDeserializer: 'json' });
  expectType<Equal<typeof json, Consumer<Buffer | null, unknown>>>();

  // A function: its return type; an async one's, awaited. The arguments are typed by context.
  const typed = createConsumer({
    bootstrapServers,
    keyDeserializer: 'string',
    valueDeserializer: (data, context) => {
      expectType<Equal<typeof data, Buffer | null>>();
      expectType<Equal<typeof context.part, 'key' | 'value'>>();
      return JSON.parse(data!.toString()) as Order;
    },
  });
  expectType<Equal<typeof typed, Consumer<string | null, Order>>>();
  const awaited = createConsumer({ bootstrapServers, valueDeserializer: async (data: Buffer | null) => data?.length ?? 0 });
  expectType<Equal<ValueOf<typeof awaited>, number>>();

  // A configuration typed only as ConsumerConfig does not say which deserializer it holds.
  const config: ConsumerConfig = { bootstrapServers, valueDeserializer: 'string' };
  const opaque = createConsumer(config);
  expectType<Equal<typeof opaque, Consumer<unknown, unknown>>>();

  // Dotted Java names, as from a properties file, count too.
  const dotted = createConsumer({ bootstrapServers, 'key.deserializer': 'string' } as const);
  expectType<Equal<KeyOf<typeof dotted>, string | null>>();
}

export async function theTypesReachRecordsBatchesAndCallbacks(): Promise<void> {
  const consumer = createConsumer({ bootstrapServers, keyDeserializer: 'string', valueDeserializer: (data: Buffer | null): Order => JSON.parse(String(data)) });
  for await (const batch of consumer) {
    expectType<Equal<typeof batch, ConsumerBatch<string | null, Order>>>();
    for (const record of batch) {
      expectType<Equal<typeof record.key, string | null>>();
      expectType<Equal<typeof record.value, Order>>();
      // @ts-expect-error: the value is an Order, not a Buffer
      record.value.toString('hex');
      // @ts-expect-error: the key may be null
      record.key.length;
    }
  }
  for await (const record of consumer.records()) expectType<Equal<typeof record, ConsumerRecord<string | null, Order>>>();
  const {
    orders: [first],
  } = consumer.streams({ orders: 2 });
  expectType<Equal<typeof first, MessageStream<string | null, Order>>>();
  await consumer.run({
    eachMessage: async ({ message }) => {
      expectType<Equal<typeof message.value, Order>>();
    },
  });
  await consumer.run({
    eachBatch: async ({ batch }) => {
      expectType<Equal<(typeof batch.records)[number]['value'], Order>>();
    },
  });
}

export function explicitGenericsStillWork(): void {
  const consumer = createConsumer<string, Order>({ bootstrapServers, valueDeserializer: 'json' });
  expectType<Equal<typeof consumer, Consumer<string, Order>>>();
  // Per call, as before: records<K, V>() and run<K, V>() take their own.
  const records = consumer.records<Buffer, string>();
  expectType<Equal<typeof records, AsyncIterable<ConsumerRecord<Buffer, string>>>>();
  void consumer.run<string, number>({
    eachMessage: async ({ message }) => {
      expectType<Equal<typeof message.value, number>>();
    },
  });
  // A typed consumer is still a Consumer where the code does not care about record types.
  const any: Consumer = consumer;
  void any;
  // @ts-expect-error: the record types are part of the consumer's type
  const wrong: Consumer<number, Order> = consumer;
  void wrong;
}

export function eventListenersGetTypedArguments(): void {
  const consumer = createConsumer({ bootstrapServers, groupId: 'g' });
  consumer.on('rebalance', (detail) => expectType<Equal<typeof detail.why, string>>());
  consumer.on('assigned', (detail) => {
    expectType<Equal<typeof detail.added, TopicPartition[]>>();
    expectType<Equal<typeof detail.generationId, number | undefined>>();
  });
  consumer.on('revoked', (detail) => expectType<Equal<typeof detail.partitions, TopicPartition[]>>());
  consumer.on('left', (detail) => expectType<Equal<typeof detail.told, boolean>>());
  consumer.on('fatal', (detail) => expectType<Equal<typeof detail.error, Error>>());
  consumer.on('log-truncation', (change) => expectType<Equal<typeof change, PositionChange>>());
  consumer.once('offset-reset', (change) => expectType<Equal<typeof change.to, bigint>>());
  consumer.on('deserialization-error', (err) => expectType<Equal<typeof err, DeserializationError>>());
  consumer.on('error', (err) => expectType<Equal<typeof err, Error>>());
  // @ts-expect-error: a rebalance's detail has no partitions
  consumer.on('rebalance', (detail) => detail.partitions);
  // @ts-expect-error: no such event
  consumer.on('rebalanced', () => {});
  // A listener for several events gets the union of their details.
  for (const name of ['revoked', 'lost'] as const) consumer.on(name, (detail) => expectType<Equal<typeof detail, GroupEventDetails['revoked'] | GroupEventDetails['lost']>>());
  for (const name of ['rebalance', 'joined'] as GroupEventName[]) consumer.off(name, (detail) => void detail);
}

export function theShareConsumerToo(): void {
  const share = createShareConsumer({ bootstrapServers, groupId: 'workers', valueDeserializer: 'string' });
  expectType<Equal<typeof share, ShareConsumer<Buffer | null, string | null>>>();
  const explicit = createShareConsumer<string, Order>({ bootstrapServers, groupId: 'workers' });
  expectType<Equal<typeof explicit, ShareConsumer<string, Order>>>();
  void (async () => {
    for await (const record of share.records()) expectType<Equal<typeof record, ShareRecord<Buffer | null, string | null>>>();
  })();
  share.on('assigned', (detail) => expectType<Equal<typeof detail.partitions, string[]>>());
  share.on('acknowledged', (results, via) => {
    expectType<Equal<typeof via, 'fetch' | 'commit' | 'close'>>();
    void results;
  });
  // @ts-expect-error: 'fenced' carries why and memberEpoch, no partitions
  share.on('fenced', (detail) => detail.partitions);
}

// ConsumedRecord, the class's old name, stays as a deprecated alias of ConsumerRecord: the same
// type, and the same class at run time (instanceof, new), so that code written against it compiles.
export function consumedRecordAlias(record: ConsumerRecord<string, number>): void {
  expectType<Equal<ConsumedRecord<string, number>, ConsumerRecord<string, number>>>();
  expectType<Equal<typeof ConsumedRecordValue, typeof ConsumerRecordValue>>();
  const old: ConsumedRecord<string, number> = record;
  void old;
}
