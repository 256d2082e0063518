// run() throughput against a real broker: records/s of eachMessage from the first record to the
// last, with a no-op handler (what the scheduler costs per record) or one that awaits N ms (what
// concurrency buys), and the per-key order check. Loads its topic on first use (keyed over --keys
// values, the value "key|seq").
//   node dist/test/probes/run-probe.js --bootstrap B [--records 1000000] [--partitions 12] [--keys 2000]
//     [--sleep-ms 0] [--max-concurrency 64] [--ordering partition] [--reps 3] [--topic NAME] [--group]
// --group: each pass a member of a fresh group (subscribe) instead of assign(), as services run it.
import { createConsumer } from '@kwire/consumer';
import { TestProducer } from '@kwire/testkit';
import { parseArgs } from 'node:util';

const { values: a } = parseArgs({
  options: {
    bootstrap: { type: 'string' },
    records: { type: 'string', default: '1000000' },
    partitions: { type: 'string', default: '12' },
    keys: { type: 'string', default: '2000' },
    'sleep-ms': { type: 'string', default: '0' },
    'max-concurrency': { type: 'string' },
    ordering: { type: 'string' },
    reps: { type: 'string', default: '3' },
    topic: { type: 'string' },
    /** Skip the per-key order check (its map of every key's last sequence), to see what kwire holds. */
    'no-check': { type: 'boolean', default: false },
    group: { type: 'boolean', default: false },
  },
});
const bootstrap = a.bootstrap ?? process.env.KWIRE_BOOTSTRAP;
if (!bootstrap) throw new Error('--bootstrap host:port (or KWIRE_BOOTSTRAP)');
const records = Number(a.records);
const partitions = Number(a.partitions);
const keys = Number(a.keys);
const sleepMs = Number(a['sleep-ms']);
const noCheck = a['no-check'] === true;
const topic = a.topic ?? `run-probe-${records}-${partitions}-${keys}`;

async function load(): Promise<void> {
  const producer = new TestProducer(bootstrap!);
  try {
    try {
      await producer.createTopics([topic], partitions);
    } catch (err) {
      if (/error 36/.test((err as Error).message)) return; // already there
      throw err;
    }
    const seq = new Map<number, number>();
    const perPartition: { key: Buffer; value: Buffer }[][] = Array.from({ length: partitions }, () => []);
    for (let i = 0; i < records; i++) {
      const k = i % keys;
      const n = seq.get(k) ?? 0;
      seq.set(k, n + 1);
      const key = Buffer.from(`key-${k}`);
      perPartition[k % partitions]!.push({ key, value: Buffer.from(`${k}|${n}|${'x'.repeat(80)}`) });
    }
    await Promise.all(perPartition.map((list, p) => producer.send(topic, p, list, { batchSize: 2000, compression: 'lz4' })));
  } finally {
    await producer.close();
  }
}

async function pass(rep: number): Promise<{ rate: number; violations: number; duplicates: number; maxRssMb: number }> {
  const logger = { debug() {}, info() {}, warn: console.warn, error: console.error };
  const groupId = a.group ? `${topic}-g${process.pid}-${rep}` : undefined;
  const consumer = createConsumer({ bootstrapServers: bootstrap!, logger, ...(groupId ? { groupId, autoOffsetReset: 'earliest' as const } : {}) });
  if (groupId) await consumer.subscribe({ topics: [topic] });
  else consumer.assign(Array.from({ length: partitions }, (_, partition) => ({ topic, partition, offset: 'earliest' as const })));
  let n = 0;
  let first = 0;
  let violations = 0;
  let duplicates = 0;
  let maxRss = 0;
  const lastSeq = new Map<number, number>();
  let finish!: () => void;
  const all = new Promise<void>((r) => (finish = r));
  const run = consumer.run({
    ...(a['max-concurrency'] ? { maxConcurrency: Number(a['max-concurrency']) } : {}),
    ...(a.ordering ? { ordering: a.ordering as 'key' } : {}),
    eachMessage: async ({ message }) => {
      if (n === 0) first = performance.now();
      if (noCheck) {
        if (sleepMs > 0) await new Promise((r) => setTimeout(r, sleepMs));
        if (++n === records) finish();
        return;
      }
      const v = message.value as Buffer;
      const bar = v.indexOf(124);
      const k = Number(v.toString('latin1', 0, bar));
      const s = Number(v.toString('latin1', bar + 1, v.indexOf(124, bar + 1)));
      const last = lastSeq.get(k) ?? -1;
      if (s < last) violations++;
      else if (s === last) duplicates++;
      lastSeq.set(k, s);
      if (sleepMs > 0) await new Promise((r) => setTimeout(r, sleepMs));
      if (++n === records) finish();
    },
  });
  const rss = setInterval(() => (maxRss = Math.max(maxRss, process.memoryUsage.rss())), 100);
  await all;
  clearInterval(rss);
  const rate = records / ((performance.now() - first) / 1000);
  await consumer.close({ timeoutMs: 5_000 });
  await run.catch(() => {});
  return { rate, violations, duplicates, maxRssMb: Math.round(maxRss / 2 ** 20) };
}

await load();
for (let i = 0; i < Number(a.reps); i++) {
  const r = await pass(i);
  console.log(
    JSON.stringify({
      topic,
      sleepMs,
      maxConcurrency: a['max-concurrency'] ?? 'default',
      ordering: a.ordering ?? 'default',
      group: a.group,
      rate: Math.round(r.rate),
      violations: r.violations,
      duplicates: r.duplicates,
      maxRssMb: r.maxRssMb,
    }),
  );
}
