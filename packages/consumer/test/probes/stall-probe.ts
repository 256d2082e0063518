// Stall probe (issue 16, "no stall an embedding service can feel"): how late a 1 ms timer runs
// while a consumer reads a loaded topic at full speed, and which late ticks had a GC inside.
//
//   kwire-broker start                                  # @kwire/broker's CLI; prints HOST:PORT
//   kwire-broker create-topic --bootstrap B --topic s100 --partitions 12
//   kwire-broker produce-perf --bootstrap B --topic s100 --num-records 3000000 --record-size 100
//   node packages/consumer/dist/test/probes/stall-probe.js --bootstrap B --topic s100 --records 500000 --passes 6
//
// Like the bench's throughput passes: each pass creates a consumer (defaults, or --config), assigns
// every partition from offset 0, reads --records records touching each value, and closes it; the
// timer's ticks count from the pass's first record to its last. Per pass: records/s, the ticks'
// p50/p99/max (a tick is the time between two runs of the timer: 1 ms on an idle loop), and the
// worst ticks with when they came and the GCs inside them (kind 1 scavenge, 4 major, 8
// incremental marking). The first pass also compiles the code.
//
// Measured with it (2 shared cores, one broker, 3M x 100 B over 12 partitions, passes of 500k):
//  - yield after 2 ms since the stream's last yield (before c994958): ticks p50 2.2-2.4 ms, p99 of
//    passes 1-4 5.9-9.3 ms.
//  - the loop clock, 1 ms (c994958): p50 1.1 ms; p99 1.5-6.8 ms; the worst ticks had major GCs of
//    5-16 ms inside, in most passes: each new consumer allocated its frames afresh.
//  - one buffer pool for the process (32cb956): passes 1-5 p99 1.55-2.25 ms, max 2.0-5.0 ms, no
//    major GC inside a pass. Against 435f896 (both changes before), alternating, two rounds each:
//    passes 1-5 p99 6.4-15.0 -> 1.5-4.5 ms, max 8.3-19.3 -> 1.6-5.6 ms, 1.5-2.2M -> 2.5-3.6M
//    records/s; the worst ticks left are scavenges (gc1, 2-5 ms).
import { parseArgs } from 'node:util';
import { PerformanceObserver } from 'node:perf_hooks';
import { createConsumer, type ConsumerConfig } from '../../src/index.js';

const HELP = `stall-probe: a 1 ms timer's lateness while consumers read a topic at full speed

  --bootstrap HOST:PORT   the broker (required)
  --topic T               a loaded topic (required)
  --partitions P          its partitions (default 12)
  --records N             records per pass (default 500000)
  --passes N              passes, a new consumer each (default 6)
  --config JSON           extra consumer config, e.g. '{"yieldIntervalMs":2}'
  --help`;

const { values } = parseArgs({
  options: {
    bootstrap: { type: 'string' },
    topic: { type: 'string' },
    partitions: { type: 'string', default: '12' },
    records: { type: 'string', default: '500000' },
    passes: { type: 'string', default: '6' },
    config: { type: 'string', default: '{}' },
    help: { type: 'boolean' },
  },
});
if (values.help || !values.bootstrap || !values.topic) {
  console.log(HELP);
  process.exit(values.help ? 0 : 2);
}
const bootstrap = values.bootstrap;
const topic = values.topic;
const partitions = Number(values.partitions);
const records = Number(values.records);
const config = JSON.parse(values.config!) as Partial<ConsumerConfig>;

/** [startTime, duration, kind] of every GC, on performance.now()'s clock. */
const gcs: [number, number, number][] = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcs.push([e.startTime, e.duration, (e as { detail?: { kind?: number } }).detail?.kind ?? 0]);
}).observe({ entryTypes: ['gc'] });

function percentile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

for (let pass = 0; pass < Number(values.passes); pass++) {
  /** [length, at (performance.now()), records read by then] of each tick after the first record. */
  const ticks: [number, number, number][] = [];
  let last = performance.now();
  let firstAt = 0;
  let n = 0;
  let touched = 0;
  const timer = setInterval(() => {
    const t = performance.now();
    if (firstAt) ticks.push([t - last, t, n]);
    last = t;
  }, 1);
  const consumer = createConsumer({ bootstrapServers: bootstrap, clientId: 'stall-probe', ...config });
  await consumer.assign(Array.from({ length: partitions }, (_, partition) => ({ topic, partition, offset: 0 })));
  for await (const batch of consumer) {
    if (!firstAt) firstAt = performance.now();
    for (const r of batch.records) {
      const v = r.value as Buffer | null;
      if (v) touched ^= v[0]! ^ v.length;
    }
    n += batch.count;
    if (n >= records) break;
  }
  const seconds = (performance.now() - firstAt) / 1000;
  clearInterval(timer);
  await consumer.close();
  const lengths = ticks.map((t) => t[0]).sort((a, b) => a - b);
  const worst = [...ticks]
    .sort((a, b) => b[0] - a[0])
    .slice(0, 4)
    .map(([length, at, count]) => {
      const inside = gcs.filter(([start, duration]) => start < at && start + duration > at - length);
      const gc = inside.map(([, duration, kind]) => `gc${kind} ${duration.toFixed(1)} ms`).join(', ');
      return `${length.toFixed(1)} ms at ${(at - firstAt).toFixed(0)} ms (${count} records)${gc ? ` [${gc}]` : ''}`;
    });
  console.log(
    `pass ${pass}: ${Math.round(n / seconds)} records/s; ${lengths.length} ticks, p50 ${percentile(lengths, 0.5).toFixed(2)} p99 ${percentile(lengths, 0.99).toFixed(2)} max ${lengths[lengths.length - 1]!.toFixed(2)} ms; worst: ${worst.join('; ')}`,
  );
}
