// @platformatic/kafka 2.x through its consumer as its README shows it: a consumer group,
// consume({ topics, mode: 'earliest' }) returning a MessagesStream, and stream.on('data') with
// every value touched (values are Buffers with its default deserializers). Throughput, alloc and
// latency runs use a fresh group with autocommit off; group runs keep its default autocommit.
// It needs Node >= 22.22 or >= 24.6 and is loaded through its ES module build (its CommonJS one
// is broken).
import { headerHash, valueHash } from '../meter.js';
import { packageVersion } from '../micro/peers/clients.js';
import { now, Run, type ClientOptions, type ClientReport } from './common.js';

interface PlatformaticMessage {
  partition: number;
  offset: bigint;
  timestamp: bigint;
  key: Buffer | null;
  value: Buffer | null;
  headers: Map<Buffer | string, Buffer | null>;
}
interface PlatformaticStream {
  on(event: 'data', listener: (m: PlatformaticMessage) => void): void;
  on(event: 'error', listener: (e: Error) => void): void;
  pause(): void;
  close(): Promise<void>;
}
interface PlatformaticConsumer {
  consume(o: Record<string, unknown>): Promise<PlatformaticStream>;
  close(force?: boolean): Promise<void>;
  on(event: string, listener: (e: unknown) => void): void;
}
interface PlatformaticModule {
  Consumer: new (o: Record<string, unknown>) => PlatformaticConsumer;
}

export async function platformaticClient(options: ClientOptions): Promise<ClientReport> {
  const run = new Run('platformatic', options);
  run.notes.push(`@platformatic/kafka ${packageVersion('@platformatic/kafka')}`);
  const mode = run.mode;
  const m = (await import('@platformatic/kafka')) as unknown as PlatformaticModule;
  if (mode === 'group') await run.waitGo();
  const tStart = run.start();
  const consumer = new m.Consumer({
    groupId: options.groupId ?? `bench-platformatic-${process.pid}-${Date.now()}`,
    clientId: 'platformatic-bench',
    bootstrapBrokers: [options.bootstrap],
  });
  // Fetch sizes and isolation level are consume() options (the sweep sets them there).
  const stream = await consumer.consume({ topics: [options.topic], mode: 'earliest', autocommit: mode === 'group', ...options.config });
  run.ready();
  const digest = run.digest;
  stream.on('error', (e) => {
    run.error ??= `platformatic: ${e.message}`;
    run.finish();
  });
  // The stream delivers one message per 'data' event: that is its API, so the bookkeeping is per
  // message here (Run.one() reads the clock only at the first and the last record).
  stream.on('data', (message) => {
    if (run.done) return;
    const v = message.value;
    if (mode === 'latency') {
      digest.add(v);
      run.latencyOf(now(), Number(message.timestamp));
      run.one();
    } else if (mode === 'group') {
      if (v !== null) {
        const h = valueHash(v);
        digest.addHash(h, v.length);
        run.offsetSeen(message.partition, Number(message.offset), h);
      }
      run.one();
    } else if (mode === 'rebalance') {
      digest.add(v);
      run.batch(1);
      run.finish();
    } else if (run.fullTouch) {
      let hh = 0;
      for (const [k, hv] of message.headers) hh ^= headerHash(k, hv);
      run.full(v, message.key, hh, Number(message.offset), Number(message.timestamp));
      run.one();
    } else {
      digest.add(v);
      run.one();
    }
  });
  await run.finishedPromise;
  stream.pause();
  const extra: Partial<ClientReport> = {};
  if (mode === 'rebalance' && run.tFirst !== null) extra.joinToFirstRecordMs = Math.round((run.tFirst - tStart) * 100) / 100;
  await stream.close().catch(() => {});
  await consumer.close(true).catch(() => {});
  return run.report(extra);
}
