// librdkafka from Node: node-rdkafka 3.x (built by the bench against Debian's librdkafka 2.0.2,
// see orchestrator/rdkafka-build.ts), through its KafkaConsumer in non-flowing mode as its README
// shows for throughput: consume(1000, callback) in a loop, every value touched. Throughput, alloc
// and latency runs assign every partition at offset 0 (librdkafka needs a group.id even so; a
// fresh one, nothing committed); group and rebalance runs subscribe, with librdkafka's default
// commits in group runs.
import { createRequire } from 'node:module';
import { valueHash } from '../meter.js';
import { now, Run, type ClientOptions, type ClientReport } from './common.js';

const require = createRequire(import.meta.url);

interface RdMessage {
  value: Buffer | null;
  partition: number;
  offset: number;
  timestamp: number;
}
interface RdConsumer {
  connect(o: object, cb: (err: Error | null) => void): void;
  assign(a: { topic: string; partition: number; offset: number }[]): void;
  subscribe(topics: string[]): void;
  consume(n: number, cb: (err: Error | null, messages: RdMessage[]) => void): void;
  disconnect(cb: () => void): void;
  on(event: string, listener: (...a: unknown[]) => void): void;
}
interface RdModule {
  KafkaConsumer: new (global: Record<string, unknown>, topic: Record<string, unknown>) => RdConsumer;
  librdkafkaVersion: string;
}

export async function rdkafkaClient(options: ClientOptions): Promise<ClientReport> {
  const run = new Run('rdkafka', options);
  const K = require('node-rdkafka') as RdModule;
  run.notes.push(`node-rdkafka ${(require('node-rdkafka/package.json') as { version: string }).version}, librdkafka ${K.librdkafkaVersion}`);
  const mode = run.mode;
  const grouped = mode === 'group' || mode === 'rebalance';
  if (mode === 'group') await run.waitGo();
  const tStart = run.start();
  const consumer = new K.KafkaConsumer(
    {
      'metadata.broker.list': options.bootstrap,
      'group.id': options.groupId ?? `bench-rdkafka-${process.pid}-${Date.now()}`,
      'client.id': 'rdkafka-bench',
      'enable.auto.commit': mode === 'group',
      ...options.config,
    },
    { 'auto.offset.reset': 'earliest' },
  );
  consumer.on('event.error', (e) => {
    run.error ??= `node-rdkafka: ${(e as Error).message}`;
    run.finish();
  });
  await new Promise<void>((resolve, reject) => consumer.connect({}, (err) => (err ? reject(err) : resolve())));
  if (grouped) consumer.subscribe([options.topic]);
  else consumer.assign(Array.from({ length: options.partitions }, (_, partition) => ({ topic: options.topic, partition, offset: 0 })));
  run.ready();
  const digest = run.digest;
  const loop = (): void => {
    consumer.consume(1000, (err, messages) => {
      if (run.done) return;
      if (err) {
        run.error ??= `node-rdkafka consume: ${err.message}`;
        run.finish();
        return;
      }
      const n = messages.length;
      if (mode === 'latency') {
        const at = now();
        for (let i = 0; i < n; i++) {
          const m = messages[i]!;
          digest.add(m.value);
          run.latencyOf(at, m.timestamp);
        }
      } else if (mode === 'group') {
        for (let i = 0; i < n; i++) {
          const m = messages[i]!;
          if (m.value === null) continue;
          const h = valueHash(m.value);
          digest.addHash(h, m.value.length);
          run.offsetSeen(m.partition, m.offset, h);
        }
      } else {
        for (let i = 0; i < n; i++) digest.add(messages[i]!.value);
      }
      run.batch(n);
      if (mode === 'rebalance' && n > 0) run.finish();
      if (!run.done) loop();
    });
  };
  loop();
  await run.finishedPromise;
  const extra: Partial<ClientReport> = {};
  if (mode === 'rebalance' && run.tFirst !== null) extra.joinToFirstRecordMs = Math.round((run.tFirst - tStart) * 100) / 100;
  await new Promise<void>((resolve) => consumer.disconnect(() => resolve()));
  return run.report(extra);
}
