// librdkafka from Node: node-rdkafka 3.x on the librdkafka it bundles (built by the bench once,
// see orchestrator/rdkafka-build.ts), through its KafkaConsumer in either of the two ways its
// README shows: non-flowing, consume(N, callback) in a loop (settings.consume = N, default 1000),
// or flowing (settings.consume = 'flowing': consume() and a 'data' event per message). Every
// value touched. Throughput, alloc and latency runs assign every partition at offset 0
// (librdkafka needs a group.id even so; a fresh one, nothing committed); group and rebalance runs
// subscribe, with librdkafka's default commits in group runs.
import { createRequire } from 'node:module';
import { headerHash, valueHash } from '../meter.js';
import { now, Run, type ClientOptions, type ClientReport } from './common.js';

const require = createRequire(import.meta.url);

interface RdMessage {
  key?: Buffer | string | null;
  headers?: Record<string, Buffer | string>[];
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
  consume(): void;
  disconnect(cb: () => void): void;
  on(event: string, listener: (...a: unknown[]) => void): void;
}
interface RdModule {
  KafkaConsumer: new (global: Record<string, unknown>, topic: Record<string, unknown>) => RdConsumer;
  librdkafkaVersion: string;
}

export async function rdkafkaClient(options: ClientOptions): Promise<ClientReport> {
  const run = new Run('rdkafka', options);
  const from = options.rdkafkaDir ?? 'node-rdkafka';
  const K = require(from) as RdModule;
  const style = options.settings?.consume ?? 1000;
  run.notes.push(
    `node-rdkafka ${(require(`${from}/package.json`) as { version: string }).version}, librdkafka ${K.librdkafkaVersion}, ${style === 'flowing' ? 'flowing mode' : `consume(${String(style)})`}`,
  );
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
  const handle = (messages: RdMessage[]): void => {
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
    } else if (run.fullTouch) {
      for (let i = 0; i < n; i++) {
        const m = messages[i]!;
        let hh = 0;
        const hs = m.headers;
        if (hs) for (const h of hs) for (const k in h) hh ^= headerHash(k, toBytes(h[k]));
        run.full(m.value, toBytes(m.key), hh, m.offset, m.timestamp);
      }
    } else {
      for (let i = 0; i < n; i++) digest.add(messages[i]!.value);
    }
    run.batch(n);
    if (mode === 'rebalance' && n > 0) run.finish();
  };
  if (style === 'flowing') {
    // One 'data' event per message: the bookkeeping takes it as a batch of one (an array per
    // message would be allocation the library does not make).
    // Throughput runs count it with Run.one() (the clock read at the first and last record only,
    // as for platformatic's stream).
    const one: RdMessage[] = [];
    const counting = mode === 'throughput' || mode === 'alloc';
    consumer.on('data', (data) => {
      if (run.done) return;
      const m = data as RdMessage;
      if (counting && !run.fullTouch) {
        digest.add(m.value);
        run.one();
      } else if (counting) {
        let hh = 0;
        const hs = m.headers;
        if (hs) for (const h of hs) for (const k in h) hh ^= headerHash(k, toBytes(h[k]));
        run.full(m.value, toBytes(m.key), hh, m.offset, m.timestamp);
        run.one();
      } else {
        one[0] = m;
        handle(one);
      }
    });
    consumer.consume();
  } else {
    const size = Number(style);
    const loop = (): void => {
      consumer.consume(size, (err, messages) => {
        if (run.done) return;
        if (err) {
          run.error ??= `node-rdkafka consume: ${err.message}`;
          run.finish();
          return;
        }
        handle(messages);
        if (!run.done) loop();
      });
    };
    loop();
  }
  await run.finishedPromise;
  const extra: Partial<ClientReport> = {};
  if (mode === 'rebalance' && run.tFirst !== null) extra.joinToFirstRecordMs = Math.round((run.tFirst - tStart) * 100) / 100;
  if (style === 'flowing' && run.capped) {
    // A pass cut by its time limit (plan.ts) ends while the flowing loop still delivers what
    // librdkafka prefetched (up to queued.max.messages.kbytes, 1 GiB here): disconnecting then
    // crashed node-rdkafka (SIGSEGV), and pausing first cost 10-20 s of draining. The variant runs
    // one pass per process (plan.ts's processPerPass) and the process ends after its report.
    run.notes.push('flowing mode, pass cut at its time limit: the process ended after the pass (no disconnect)');
    return run.report(extra);
  }
  // librdkafka's close waits for its group to settle (a final commit, a rebalance under way); in
  // one full run a group member's close never returned and the run was killed at its time limit.
  // The measurement has ended by now: a close that takes longer than DISCONNECT_MS is noted and
  // the report goes out without it (the process exits after its report).
  const closed = await Promise.race([new Promise<boolean>((resolve) => consumer.disconnect(() => resolve(true))), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), DISCONNECT_MS))]);
  if (!closed) run.notes.push(`disconnect had not returned after ${DISCONNECT_MS / 1000} s; the process ended without it`);
  return run.report(extra);
}

const DISCONNECT_MS = 15_000;

function toBytes(v: Buffer | string | null | undefined): Buffer | null {
  if (v === null || v === undefined) return null;
  return typeof v === 'string' ? Buffer.from(v) : v;
}
