// kafkajs 2.2.4 through its consumer as its users run it: a consumer group (kafkajs has no
// group-less consumer), subscribe fromBeginning, run({ eachBatch }) with every value touched.
// Throughput, alloc and latency runs use a fresh group with autoCommit off (nothing to commit for
// a read-once benchmark, and a commit per batch would slow it); group runs keep kafkajs's default
// commits, as a real group would. lz4 and zstd through the codec packages kafkajs users register.
// settings.each = 'message' runs the same program through run({ eachMessage }) instead.
//
// The program takes the module as a parameter: kwire-kafkajs.ts runs it unchanged through
// @kwire/kafkajs (kafkajs's consumer API on kwire), so that the two rows differ by the library only.
import { createRequire } from 'node:module';
import { headerHash, valueHash } from '../meter.js';
import { packageVersion } from '../micro/peers/clients.js';
import { now, Run, type ClientOptions, type ClientReport } from './common.js';

const require = createRequire(import.meta.url);

export interface KafkajsMessage {
  offset: string;
  timestamp: string;
  key: Buffer | null;
  value: Buffer | null;
  headers?: Record<string, Buffer | string | (Buffer | string)[] | undefined>;
}
interface KafkajsBatch {
  topic: string;
  partition: number;
  messages: KafkajsMessage[];
}
interface KafkajsConsumer {
  connect(): Promise<void>;
  subscribe(o: { topics: string[]; fromBeginning: boolean }): Promise<void>;
  run(o: {
    autoCommit?: boolean;
    partitionsConsumedConcurrently?: number;
    eachBatch?: (p: { batch: KafkajsBatch }) => Promise<void>;
    eachMessage?: (p: { topic: string; partition: number; message: KafkajsMessage }) => Promise<void>;
  }): Promise<void>;
  disconnect(): Promise<void>;
  on(event: string, listener: (e: unknown) => void): void;
  events: Record<string, string>;
}
/** What the program uses of the module: kafkajs's, or @kwire/kafkajs's. */
export interface KafkajsModule {
  Kafka: new (o: Record<string, unknown>) => { consumer(o: Record<string, unknown>): KafkajsConsumer };
  logLevel: Record<string, number>;
}
interface KafkajsCodecs {
  CompressionTypes: Record<string, number>;
  CompressionCodecs: Record<number, (() => unknown) & { name?: string }>;
}

async function loadKafkajs(): Promise<KafkajsModule> {
  const kafkajs = require('kafkajs') as KafkajsModule & KafkajsCodecs;
  const LZ4Codec = require('@2l/kafkajs-lz4') as new () => { codec: () => unknown };
  kafkajs.CompressionCodecs[kafkajs.CompressionTypes.LZ4!] = new LZ4Codec().codec;
  // Its CommonJS build is broken: the ES module registers the codec on the same kafkajs instance.
  const zstdCodec: string = '@sensejs/kafkajs-zstd-support';
  await import(zstdCodec);
  return kafkajs;
}

export async function kafkajsClient(options: ClientOptions): Promise<ClientReport> {
  return kafkajsProgram('kafkajs', await loadKafkajs(), `kafkajs ${packageVersion('kafkajs')}`, options);
}

/**
 * The program, through `kafkajs` (a module with kafkajs's consumer API): `client` names the report
 * and the group ids, `note` the library's version.
 */
export async function kafkajsProgram(client: string, kafkajs: KafkajsModule, note: string, options: ClientOptions): Promise<ClientReport> {
  const run = new Run(client, options);
  run.notes.push(note);
  const mode = run.mode;
  if (mode === 'group') await run.waitGo();
  const tStart = run.start();
  const kafka = new kafkajs.Kafka({
    clientId: `${client}-bench`,
    brokers: [options.bootstrap],
    logLevel: kafkajs.logLevel.NOTHING,
  });
  const consumer = kafka.consumer({
    groupId: options.groupId ?? `bench-${client}-${process.pid}-${Date.now()}`,
    ...options.config,
  });
  consumer.on(consumer.events.GROUP_JOIN!, () => run.ready());
  consumer.on(consumer.events.CRASH!, (e) => {
    run.error ??= `${client} crashed: ${String((e as { payload?: { error?: Error } }).payload?.error?.message)}`;
    run.finish();
  });
  await consumer.connect();
  await consumer.subscribe({ topics: [options.topic], fromBeginning: true });
  // partitionsConsumedConcurrently is a run() option, not a consumer one (the sweep sets it).
  const concurrency = options.settings?.partitionsConsumedConcurrently as number | undefined;
  await consumer.run({
    autoCommit: mode === 'group',
    ...(concurrency ? { partitionsConsumedConcurrently: concurrency } : {}),
    ...(options.settings?.each === 'message' ? { eachMessage: eachMessage(run) } : { eachBatch: eachBatch(run) }),
  });
  await run.finishedPromise;
  const extra: Partial<ClientReport> = {};
  if (mode === 'rebalance' && run.tFirst !== null) extra.joinToFirstRecordMs = Math.round((run.tFirst - tStart) * 100) / 100;
  await consumer.disconnect().catch(() => {});
  return run.report(extra);
}

/** run({ eachBatch }): every record of the batch touched as the mode says, then the batch counted. */
function eachBatch(run: Run): (p: { batch: KafkajsBatch }) => Promise<void> {
  const mode = run.mode;
  const digest = run.digest;
  return async ({ batch }) => {
    if (run.done) return;
    const messages = batch.messages;
    const n = messages.length;
    if (mode === 'latency') {
      const at = now();
      for (let i = 0; i < n; i++) {
        const m = messages[i]!;
        digest.add(m.value);
        run.latencyOf(at, Number(m.timestamp));
      }
    } else if (mode === 'group') {
      for (let i = 0; i < n; i++) {
        const m = messages[i]!;
        if (m.value === null) continue;
        const h = valueHash(m.value);
        digest.addHash(h, m.value.length);
        run.offsetSeen(batch.partition, Number(m.offset), h);
      }
    } else if (run.fullTouch) {
      for (let i = 0; i < n; i++) {
        const m = messages[i]!;
        let hh = 0;
        const hs = m.headers;
        if (hs) for (const k in hs) hh ^= headerHash(k, toBytes(hs[k]));
        run.full(m.value, m.key, hh, Number(m.offset), Number(m.timestamp));
      }
    } else {
      for (let i = 0; i < n; i++) digest.add(messages[i]!.value);
    }
    run.batch(n);
    if (mode === 'rebalance' && n > 0) run.finish();
  };
}

/** run({ eachMessage }): the same touch, one record per call, counted with run.one(). */
function eachMessage(run: Run): (p: { partition: number; message: KafkajsMessage }) => Promise<void> {
  const mode = run.mode;
  const digest = run.digest;
  return async ({ partition, message: m }) => {
    if (run.done) return;
    if (mode === 'latency') {
      digest.add(m.value);
      run.latencyOf(now(), Number(m.timestamp));
    } else if (mode === 'group') {
      if (m.value !== null) {
        const h = valueHash(m.value);
        digest.addHash(h, m.value.length);
        run.offsetSeen(partition, Number(m.offset), h);
      }
    } else if (run.fullTouch) {
      let hh = 0;
      const hs = m.headers;
      if (hs) for (const k in hs) hh ^= headerHash(k, toBytes(hs[k]));
      run.full(m.value, m.key, hh, Number(m.offset), Number(m.timestamp));
    } else {
      digest.add(m.value);
    }
    run.one();
    if (mode === 'rebalance') run.finish();
  };
}

/** A kafkajs header value (a Buffer; a string or an array when a producer sent those) as bytes. */
function toBytes(v: Buffer | string | (Buffer | string)[] | undefined): Buffer | null {
  if (v === undefined) return null;
  if (Array.isArray(v)) return toBytes(v[0]);
  return typeof v === 'string' ? Buffer.from(v) : v;
}
