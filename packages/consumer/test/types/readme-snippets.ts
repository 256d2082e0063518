// The TypeScript fragments of the READMEs (the root README.md and this package's), compiled by
// tsc -b (never run: each sits in a function nobody calls). test/unit/guide.test.ts checks that
// every such block is here as it is there (its import lines aside: the imports are this file's);
// change both together. Blocks that are whole programs are example files instead.
import { createServer } from 'node:http';
import { type BatchCursor, type Consumer, createConsumer, createShareConsumer, prometheusText, type TopicPartition } from '../../src/index.js';

// The names of your own that the fragments use.
declare const bootstrapServers: string;
declare const consumer: Consumer;
declare function handle(...args: unknown[]): Promise<void>;
declare function bill(value: unknown): Promise<void>;
declare function flush(partitions: TopicPartition[]): Promise<void>;
declare const ledger: { apply(key: unknown, value: unknown): Promise<void> };
/** pino's logger: (fields, message). */
declare const pino: Record<'debug' | 'info' | 'warn' | 'error', (fields: object, message: string) => void>;

export async function rootReadme1(): Promise<void> {
  const consumer = createConsumer({ bootstrapServers: '127.0.0.1:9092', groupId: 'billing', valueDeserializer: 'json' });
  await consumer.subscribe({ topics: ['invoices'] });
  for await (const batch of consumer) {
    for (const record of batch) await handle(record.value);
  } // what the loop finished is committed every 5 s, on rebalance and on close (never more)
}

export async function consumerReadme2(): Promise<void> {
  const {
    events: [a, b, c],
  } = consumer.streams({ events: 3 });
  await Promise.all(
    [a, b, c].map(async (stream) => {
      for await (const record of stream.records()) handle(record);
    }),
  );
}

export async function consumerReadmeConcurrent(): Promise<void> {
  await consumer.run({
    maxConcurrency: 256, // records in flight at once (default 64)
    ordering: 'key', // an account's records in order; other accounts meanwhile
    eachMessage: async ({ message }) => {
      await ledger.apply(message.key, message.value);
    },
  });
}

export async function consumerReadmeWorker(): Promise<void> {
  await consumer.run({ worker: { module: new URL('./score.mjs', import.meta.url), threads: 2 }, maxConcurrency: 8, ordering: 'key' });
}

export async function consumerReadme3(): Promise<void> {
  const consumer = createConsumer({ bootstrapServers: 'localhost:9092', groupId: 'totals' });
  await consumer.subscribe({ topics: ['payments'] });
  let cursor: BatchCursor | undefined; // reused from batch to batch: nothing allocated per batch either
  let records = 0;
  let valueBytes = 0;
  let newest = 0;
  let traced = 0;
  for await (const batch of consumer) {
    cursor = batch.cursor(cursor);
    for (let r = cursor.next(); r !== null; r = cursor.next()) {
      const data = r.data; // the fetched bytes (or the batch's decompression buffer)
      records++;
      if (r.valueLength > 0) valueBytes += r.valueLength; // the value: data[r.valueOffset, + valueLength)
      if (r.timestamp > newest) newest = r.timestamp;
      for (let h = 0; h < r.headerCount; h++) {
        r.header(h); // sets headerKeyOffset/Length and headerValueOffset/Length (-1: null)
        if (r.headerKeyLength === 1 && data[r.headerKeyOffset] === 0x74 /* 't' */) traced++;
      }
    }
    if (records >= 1_000_000) break; // the batch before is finished; this one is given back
  }
  console.log(`${records} records, ${valueBytes} value bytes, ${traced} traced, newest at ${new Date(newest).toISOString()}`);
  await consumer.close();
}

export async function consumerReadme4(): Promise<void> {
  const consumer = createConsumer({ bootstrapServers, groupId: 'billing', valueDeserializer: 'json' });
  await consumer.subscribe({ topics: ['invoices'] }, { onPartitionsRevoked: (tps) => flush(tps) });
  await consumer.run({
    eachMessage: async ({ message }) => bill(message.value), // throws: message.offset comes again
  }); // settles when the consumer is closed
}

export async function consumerReadme5(): Promise<void> {
  const { committed, uncommitted, leftGroup, timedOut, durationMs } = await consumer.close({ timeoutMs: 10_000 });
  console.log(`closed in ${durationMs} ms: ${committed.length} offsets committed, left the group: ${leftGroup}, cut short: ${timedOut}`);
  for (const o of uncommitted) console.warn(`${o.topic}-${o.partition} finished up to ${o.offset}, not committed: ${o.error}`);
}

export async function consumerReadme6(): Promise<void> {
  // biome-ignore lint/correctness/noUnusedVariables: a fragment: the consumer is yours to use
  const logged = createConsumer({
    bootstrapServers,
    groupId: 'billing',
    logger: {
      debug: (m, f) => pino.debug(f ?? {}, m),
      info: (m, f) => pino.info(f ?? {}, m),
      warn: (m, f) => pino.warn(f ?? {}, m),
      error: (m, f) => pino.error(f ?? {}, m),
    },
  });
}

export async function consumerReadme7(): Promise<void> {
  const consumer = createShareConsumer({ bootstrapServers: '127.0.0.1:9092', groupId: 'workers', valueDeserializer: 'json' });
  await consumer.subscribe(['jobs']);
  for await (const record of consumer.records()) {
    await handle(record.value, record.deliveryCount); // accepted when the loop moves on;
  } // a handler that throws releases it
}

export async function consumerReadme8(): Promise<void> {
  createServer((req, res) => res.end(prometheusText(consumer.metrics(), { service: 'billing' }))).listen(9464);
}
