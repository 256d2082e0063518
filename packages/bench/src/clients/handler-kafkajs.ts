// kafkajs 2.2.4 in the handler-bound family (issue 31): a fresh group, subscribe fromBeginning and
// run({ partitionsConsumedConcurrently, eachMessage }) with a handler that awaits 5 ms, as its users
// write it. partitionsConsumedConcurrently = the partition count is its best: one record of each
// partition at a time, nothing finer (kafkajs has no per-key concurrency). Its default commits
// (autoCommit) stay on, as in a service.
import { createRequire } from 'node:module';
import { setTimeout as sleep } from 'node:timers/promises';
import { packageVersion } from '../micro/peers/clients.js';
import { Run, type ClientOptions } from './common.js';
import { HandlerCheck, handlerReport, type HandlerReport } from './handler-check.js';
import { burn, handlerSettings } from './handler-settings.js';

const require = createRequire(import.meta.url);

interface KafkajsMessage {
  offset: string;
  timestamp: string;
  key: Buffer | null;
  value: Buffer | null;
}
interface KafkajsConsumer {
  connect(): Promise<void>;
  subscribe(o: { topics: string[]; fromBeginning: boolean }): Promise<void>;
  run(o: { partitionsConsumedConcurrently?: number; eachMessage: (p: { partition: number; message: KafkajsMessage }) => Promise<void> }): Promise<void>;
  stop(): Promise<void>;
  disconnect(): Promise<void>;
  on(event: string, listener: (e: unknown) => void): void;
  events: Record<string, string>;
}
interface KafkajsModule {
  Kafka: new (o: Record<string, unknown>) => { consumer(o: Record<string, unknown>): KafkajsConsumer };
  logLevel: Record<string, number>;
}

export async function kafkajsHandlerClient(options: ClientOptions): Promise<HandlerReport> {
  const s = handlerSettings(options);
  const run = new Run('kafkajs', { ...options, idleTimeoutMs: 3_600_000 });
  run.notes.push(`kafkajs ${packageVersion('kafkajs')}`);
  const check = new HandlerCheck({ ends: options.endOffsets ?? [], records: options.records, keys: s.keys, timeLimitMs: s.timeLimitMs });
  const kafkajs = require('kafkajs') as KafkajsModule;
  const kafka = new kafkajs.Kafka({ clientId: 'kafkajs-bench', brokers: [options.bootstrap], logLevel: kafkajs.logLevel.NOTHING });
  const consumer = kafka.consumer({ groupId: options.groupId ?? `bench-handler-kafkajs-${process.pid}-${Date.now().toString(36)}`, ...options.config });
  consumer.on(consumer.events.CRASH!, (e) => {
    check.error ??= `kafkajs crashed: ${String((e as { payload?: { error?: Error } }).payload?.error?.message)}`;
    check.stop();
  });
  await consumer.connect();
  await consumer.subscribe({ topics: [options.topic], fromBeginning: true });
  await consumer.run({
    ...(s.partitionsConsumedConcurrently ? { partitionsConsumedConcurrently: s.partitionsConsumedConcurrently } : {}),
    eachMessage: async ({ partition, message }) => {
      const i = check.begin(partition, Number(message.offset), message.key, message.value, Number(message.timestamp));
      if (run.tReady === null) run.ready();
      if (s.work === 'burn') burn(s.workMs);
      else await sleep(s.workMs);
      check.end(i);
    },
  });
  await check.finished;
  run.finish();
  await consumer.disconnect().catch(() => {});
  return handlerReport(run, check, undefined);
}
