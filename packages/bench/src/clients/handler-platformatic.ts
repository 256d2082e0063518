// @platformatic/kafka 2.x in the handler-bound family (issue 31), as its README's "Concurrent
// processing" example writes it: consume() a stream (a fresh group, earliest, autocommit on as in
// that example) and hwp's forEach(stream, handler, 16), 16 being the concurrency the example gives.
// hwp keeps up to 16 handlers in flight whatever their keys or partitions: no ordering at all, so
// its order figures show what that costs. Needs Node >= 22.22 or >= 24.6 (its ES module build).
import { setTimeout as sleep } from 'node:timers/promises';
import { packageVersion } from '../micro/peers/clients.js';
import { Run, type ClientOptions } from './common.js';
import { HandlerCheck, handlerReport, type HandlerReport } from './handler-check.js';
import { burn, handlerSettings } from './handler-settings.js';

interface PlatformaticMessage {
  partition: number;
  offset: bigint;
  timestamp: bigint;
  key: Buffer | null;
  value: Buffer | null;
}
interface PlatformaticStream extends AsyncIterable<PlatformaticMessage> {
  on(event: 'error', listener: (e: Error) => void): void;
  close(): Promise<void>;
}
interface PlatformaticConsumer {
  consume(o: Record<string, unknown>): Promise<PlatformaticStream>;
  close(force?: boolean): Promise<void>;
}
interface PlatformaticModule {
  Consumer: new (o: Record<string, unknown>) => PlatformaticConsumer;
}
type ForEach = <T>(iterable: AsyncIterable<T>, fn: (item: T) => Promise<void>, n?: number) => Promise<void>;

/** What its README uses: hwp's forEach at 16. */
export const PLATFORMATIC_CONCURRENCY = 16;

export async function platformaticHandlerClient(options: ClientOptions): Promise<HandlerReport> {
  const s = handlerSettings(options);
  const run = new Run('platformatic', { ...options, idleTimeoutMs: 3_600_000 });
  run.notes.push(`@platformatic/kafka ${packageVersion('@platformatic/kafka')}, hwp ${packageVersion('hwp')}`);
  const check = new HandlerCheck({ ends: options.endOffsets ?? [], records: options.records, keys: s.keys, timeLimitMs: s.timeLimitMs });
  const m = (await import('@platformatic/kafka')) as unknown as PlatformaticModule;
  const { forEach } = (await import('hwp')) as unknown as { forEach: ForEach };
  const consumer = new m.Consumer({
    groupId: options.groupId ?? `bench-handler-platformatic-${process.pid}-${Date.now().toString(36)}`,
    clientId: 'platformatic-bench',
    bootstrapBrokers: [options.bootstrap],
  });
  const stream = await consumer.consume({ topics: [options.topic], mode: 'earliest', autocommit: true, ...options.config });
  stream.on('error', (e) => {
    check.error ??= `platformatic: ${e.message}`;
    check.stop();
  });
  const consuming = forEach(
    stream,
    async (message) => {
      const i = check.begin(message.partition, Number(message.offset), message.key, message.value, Number(message.timestamp));
      if (run.tReady === null) run.ready();
      if (s.work === 'burn') burn(s.workMs);
      else await sleep(s.workMs);
      check.end(i);
    },
    s.concurrency ?? PLATFORMATIC_CONCURRENCY,
  ).catch((err: Error) => {
    if (!check.done) check.error ??= `forEach: ${err.message}`;
  });
  await Promise.race([check.finished, consuming]);
  check.stop();
  run.finish();
  await stream.close().catch(() => {});
  await consumer.close(true).catch(() => {});
  return handlerReport(run, check, undefined);
}
