// kwire in the handler-bound family (issue 31): a fresh group, subscribe, and
// run({ eachMessage, maxConcurrency, ordering }) with a handler that awaits 5 ms (I/O-bound) or
// burns 1 ms of CPU (CPU-bound), or run({ worker: { module, threads } }) with the burn in
// handler-worker.ts. A group rather than assign(): every peer of the family runs in one (and
// commits), the commit point and its metadata are part of what the feature costs, and the
// CPU-bound rows ask whether heartbeats stay on time.
import { BroadcastChannel } from 'node:worker_threads';
import { setTimeout as sleep } from 'node:timers/promises';
import { createConsumer, type RunOptions } from '@kwire/consumer';
import { Run, type ClientOptions } from './common.js';
import { HandlerCheck, handlerReport, type HandlerReport, type HeartbeatFigures } from './handler-check.js';
import { burn, HANDLER_CHANNEL, handlerSettings, WORKER_FIELDS } from './handler-settings.js';

export async function kwireHandlerClient(options: ClientOptions): Promise<HandlerReport> {
  const s = handlerSettings(options);
  // The family's own idle and time limits apply (HandlerCheck); Run only measures.
  const run = new Run('kwire', { ...options, idleTimeoutMs: 3_600_000 });
  const check = new HandlerCheck({ ends: options.endOffsets ?? [], records: options.records, keys: s.keys, timeLimitMs: s.timeLimitMs });
  const consumer = createConsumer({
    bootstrapServers: options.bootstrap,
    groupId: options.groupId ?? `bench-handler-kwire-${process.pid}-${Date.now().toString(36)}`,
    autoOffsetReset: 'earliest',
    clientId: 'kwire-bench',
    ...options.config,
  });
  const hb: HeartbeatFigures = {
    maxAgeMs: null,
    intervalMs: consumer.config.heartbeatIntervalMs,
    sessionTimeoutMs: consumer.config.sessionTimeoutMs,
    rebalances: 0,
    lost: 0,
    pollIntervalExceeded: 0,
    heartbeatErrors: 0,
  };
  let assigned = false;
  consumer.on('assigned', () => (assigned = true));
  consumer.on('rebalance', () => {
    if (assigned) hb.rebalances++;
  });
  consumer.on('lost', () => hb.lost++);
  consumer.on('poll-interval-exceeded', () => hb.pollIntervalExceeded++);
  consumer.on('heartbeat-error', () => hb.heartbeatErrors++);
  // The age of the last successful heartbeat, while handlers run: a sample taken late (the loop
  // was blocked) still reads the true age, so the maximum is not lost to the blocking.
  const sampler = setInterval(() => {
    if (check.tFirst === null || check.done) return;
    const age = consumer.metrics().group?.sinceLastHeartbeatMs;
    if (age !== undefined && (hb.maxAgeMs === null || age > hb.maxAgeMs)) hb.maxAgeMs = Math.round(age);
  }, 100);

  const opened = () => {
    // The measured window (CPU, GC, event-loop delay) opens at the first handler start.
    if (run.tReady === null) run.ready();
  };
  let channel: BroadcastChannel | undefined;
  let runOptions: RunOptions<Buffer | null, Buffer | null>;
  // The bench's handlers never throw: a failure is a bug (or a feature not there yet) and ends the
  // run at once, rather than being retried for ever.
  const extra: Record<string, unknown> = { onFailure: 'stop' };
  if (s.maxConcurrency !== undefined) extra.maxConcurrency = s.maxConcurrency;
  if (s.ordering !== undefined) extra.ordering = s.ordering;
  if (s.workerThreads !== undefined) {
    // The worker reports each record it handled with its own clock readings (handler-worker.ts).
    channel = new BroadcastChannel(HANDLER_CHANNEL);
    channel.onmessage = (e) => {
      const f = (e as { data: Float64Array }).data;
      opened();
      for (let j = 0; j + WORKER_FIELDS <= f.length; j += WORKER_FIELDS) check.handledParsed(f[j]!, f[j + 1]!, f[j + 2]!, f[j + 3]!, f[j + 4]!, f[j + 5]!, f[j + 6]!);
    };
    const module = new URL('./handler-worker.js', import.meta.url);
    runOptions = { ...extra, worker: { module, threads: s.workerThreads } } as RunOptions<Buffer | null, Buffer | null>;
  } else {
    const work = s.work === 'burn' ? null : s.workMs;
    runOptions = {
      ...extra,
      eachMessage: async ({ partition, message }) => {
        const i = check.begin(partition, Number(message.offset), message.key, message.value, message.timestamp);
        opened();
        if (work === null) burn(s.workMs);
        else await sleep(work);
        check.end(i);
      },
    } as RunOptions<Buffer | null, Buffer | null>;
  }
  await consumer.subscribe({ topics: [options.topic] });
  let runError: Error | undefined;
  const running = consumer.run(runOptions).catch((err: Error) => {
    runError = err;
  });
  await Promise.race([check.finished, running]);
  check.stop();
  clearInterval(sampler);
  // The measured window ends here, before close() waits for what is still in flight.
  run.finish();
  channel?.close();
  const closed = await consumer.close({ timeoutMs: 15_000 }).catch((err: Error) => err);
  if (closed instanceof Error) run.notes.push(`close(): ${closed.message}`);
  // run() refusing an option it does not know yet, or (worker) taking it without handling a record:
  // the row is skipped with the reason, not failed, while the feature is being built.
  let skipped: string | undefined;
  if (runError && runError.name === 'UsageError' && /maxConcurrency|ordering|worker/.test(runError.message) && check.handled === 0) skipped = `run() refused the option: ${runError.message}`;
  else if (runError && s.workerThreads !== undefined && check.handled === 0) skipped = `run({ worker }) handled no record in this build: ${runError.message}`;
  else if (runError) run.error = `run() rejected: ${runError.message}`;
  return handlerReport(run, check, skipped, { heartbeat: hb, ...(s.workerThreads ? { threads: s.workerThreads } : {}) });
}
