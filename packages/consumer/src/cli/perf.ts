// kwire perf: the consumer's throughput and latency against your own cluster, as Kafka's
// ConsumerPerformance measures the Java consumer. It reads a topic with kwire's consumer at its
// defaults (or the options given), touching every value as an application would, and prints
// records/s, MB/s, Fetch latency percentiles, end-to-end latency from the record timestamps, CPU,
// peak RSS, GC time and the event loop's longest stall. Its measuring core (perf-meter.ts) is the
// one @kwire/bench's clients use, so its figures and the benchmark's agree.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createConsumer, type Consumer } from '../index.js';
import { cliSettings } from '../security-properties.js';
import { consoleLogger } from '../logger.js';
import { PerfMeter, type MeterSummary } from './perf-meter.js';

const USAGE = `usage: kwire perf --bootstrap HOST:PORT --topic T [options]

  --bootstrap HOST:PORT[,...]   brokers to start from (bootstrap.servers)
  --config FILE                 consumer settings from a Java properties file (security.protocol,
                                sasl.*, ssl.*.location... as for kwire consume)
  -X, --set KEY=VALUE           one such setting (repeatable)
  --topic T                     the topic to read (every partition)
  --group G                     read as a member of group G (subscribe; commits off) instead of
                                assigning every partition
  --records N                   stop after N records
  --duration S                  stop after S seconds of reading
  --timeout MS                  stop when no record came for MS (default 10000), as
                                ConsumerPerformance's --timeout; the figures then end at the
                                last record
  --from earliest|latest        where to start (default earliest: the topic from its start)
  --full-touch                  read each record's key, headers, offset and timestamp and every
                                value byte (default: the value's bytes are touched once)
  --json FILE                   also write the figures as JSON to FILE ("-" for stdout)
  --check-crcs true|false       verify batch CRCs (default true, the consumer's default)
  --fetch-max-bytes N, --max-partition-fetch-bytes N, --fetch-max-wait-ms N
                                the consumer's fetch sizes (defaults: the consumer's)

A progress line goes to stderr each second (updated in place on a terminal); the summary to
stdout. The clock starts when the partitions are assigned (the group joined), as
ConsumerPerformance's fetch figures count. Exit 0 when records were read, 1 on error or none.
`;

export interface PerfResult extends MeterSummary {
  topic: string;
  partitions: number;
  fullTouch: boolean;
  /** Why the run ended. */
  stoppedBy: 'records' | 'duration' | 'timeout' | 'interrupted';
  fetches: number;
  fetchLatencyMs: { avg: number; max: number; p50: number; p90: number; p99: number };
}

function fail(message: string): never {
  throw Object.assign(new Error(message), { usage: true });
}

function positive(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!(n > 0) || !Number.isFinite(n)) fail(`--${name} must be a positive number, not ${v}`);
  return n;
}

/** FNV-1a over every byte: what --full-touch does with each value, key and header value. */
function touchAll(h: number, b: Uint8Array | null): number {
  if (b === null) return h;
  for (let i = 0; i < b.length; i++) h = Math.imul(h ^ b[i]!, 0x01000193);
  return h;
}

export async function run(argv: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        bootstrap: { type: 'string' },
        topic: { type: 'string' },
        group: { type: 'string' },
        records: { type: 'string' },
        duration: { type: 'string' },
        timeout: { type: 'string' },
        from: { type: 'string' },
        'full-touch': { type: 'boolean' },
        json: { type: 'string' },
        'check-crcs': { type: 'string' },
        'fetch-max-bytes': { type: 'string' },
        'max-partition-fetch-bytes': { type: 'string' },
        'fetch-max-wait-ms': { type: 'string' },
        config: { type: 'string' },
        set: { type: 'string', short: 'X', multiple: true },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    process.stderr.write(`kwire perf: ${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  let consumer: Consumer | undefined;
  let meter: PerfMeter | undefined;
  try {
    const props = cliSettings(values.config, values.set ?? [], fail);
    if (!values.bootstrap && !props['bootstrap.servers']) fail('--bootstrap is required (or bootstrap.servers in --config / -X)');
    if (!values.topic) fail('--topic is required');
    const topic = values.topic;
    const maxRecords = positive('records', values.records) ?? Infinity;
    const durationMs = (positive('duration', values.duration) ?? Infinity) * 1000;
    const timeoutMs = positive('timeout', values.timeout) ?? 10_000;
    const from = values.from ?? 'earliest';
    if (from !== 'earliest' && from !== 'latest') fail(`--from must be earliest or latest, not ${values.from}`);
    const crcs = values['check-crcs'];
    if (crcs !== undefined && crcs !== 'true' && crcs !== 'false') fail('--check-crcs must be true or false');
    const fetchMaxBytes = positive('fetch-max-bytes', values['fetch-max-bytes']);
    const partitionBytes = positive('max-partition-fetch-bytes', values['max-partition-fetch-bytes']);
    const fetchWait = positive('fetch-max-wait-ms', values['fetch-max-wait-ms']);
    const full = values['full-touch'] === true;

    consumer = createConsumer({
      ...props,
      ...(values.bootstrap ? { 'bootstrap.servers': values.bootstrap } : {}),
      ...(props['client.id'] ? {} : { 'client.id': 'kwire-perf' }),
      'auto.offset.reset': from,
      logger: consoleLogger('warn'),
      // Dotted names, as in the file: a flag replaces the file's value instead of doubling it.
      ...(values.group ? { 'group.id': values.group, 'enable.auto.commit': false } : {}),
      ...(crcs !== undefined ? { 'check.crcs': crcs === 'true' } : {}),
      ...(fetchMaxBytes ? { 'fetch.max.bytes': fetchMaxBytes } : {}),
      ...(partitionBytes ? { 'max.partition.fetch.bytes': partitionBytes } : {}),
      ...(fetchWait ? { 'fetch.max.wait.ms': fetchWait } : {}),
    });
    const partitions = await consumer.partitionsFor(topic).catch((err: Error) => {
      throw new Error(`topic ${topic} does not exist or is not visible to this client (${err.message})`);
    });
    meter = new PerfMeter();
    const m = meter;
    if (values.group) await consumer.subscribe({ topics: [topic] });
    else await consumer.assign(partitions.map((partition) => ({ topic, partition })));
    // The window opens at the assignment (a group member's: its first batch comes after the join).
    if (!values.group) m.begin();

    let stoppedBy: PerfResult['stoppedBy'] = 'timeout';
    let lastRecord = performance.now();
    const c = consumer;
    const stopWith = (why: PerfResult['stoppedBy']) => {
      stoppedBy = why;
      // Waiting for records that never came is not reading time: the window ends at the last one.
      m.end(why === 'timeout' && m.lastAt > 0 ? m.lastAt : undefined);
      void c.close();
    };
    const tty = process.stderr.isTTY === true;
    let ticks = 0;
    const progress = setInterval(() => {
      const now = performance.now();
      if (now - lastRecord > timeoutMs) stopWith('timeout');
      else if (m.begun && m.elapsed * 1000 >= durationMs) stopWith('duration');
      if (++ticks % 4 !== 0 || m.ended) return;
      const s = m.elapsed;
      const line = `${s.toFixed(1)} s  ${m.records.toLocaleString('en-US')} records  ${Math.round(m.records / Math.max(s, 0.001)).toLocaleString('en-US')} records/s  ${(m.bytes / 1e6 / Math.max(s, 0.001)).toFixed(1)} MB/s  CPU ${Math.round((m.cpuSeconds / Math.max(s, 0.001)) * 100)}%`;
      process.stderr.write(tty ? `\r${line}   ` : `${line}\n`);
    }, 250);
    const interrupt = () => stopWith('interrupted');
    process.once('SIGINT', interrupt);
    process.once('SIGTERM', interrupt);
    let sink = 0;
    try {
      outer: for await (const batch of consumer) {
        const records = batch.records;
        const n = records.length;
        if (n === 0) continue;
        if (!m.begun) m.begin();
        const at = Date.now();
        let bytes = 0;
        for (let i = 0; i < n; i++) {
          const r = records[i]!;
          const v = r.value as Buffer | null;
          if (v !== null) {
            bytes += v.length;
            if (full) sink = touchAll(sink, v);
            else if (v.length) sink ^= v[0]! ^ v[v.length - 1]!;
          }
          if (full) {
            sink = touchAll(sink, r.key as Buffer | null);
            for (const h of r.headers) sink = touchAll(sink ^ h.key.length, h.value);
            sink ^= Number(r.offset) | 0;
          }
          m.latencyOf(at, r.timestamp);
          if (m.records + i + 1 >= maxRecords) {
            m.add(i + 1, bytes);
            stopWith('records');
            break outer;
          }
        }
        m.add(n, bytes);
        lastRecord = performance.now();
        if (m.ended) break;
      }
    } finally {
      clearInterval(progress);
      process.removeListener('SIGINT', interrupt);
      process.removeListener('SIGTERM', interrupt);
      if (tty) process.stderr.write('\n');
    }
    m.end();
    const metrics = consumer.metrics();
    await consumer.close();
    consumer = undefined;
    const l = metrics.fetchLatency;
    const result: PerfResult = {
      topic,
      partitions: partitions.length,
      fullTouch: full,
      stoppedBy,
      ...m.summary(),
      fetches: metrics.fetches,
      fetchLatencyMs: { avg: l.avgMs, max: l.maxMs, p50: l.p50Ms, p90: l.p90Ms, p99: l.p99Ms },
    };
    m.close();
    // The sink keeps the touching loop from being optimised away; it is not a figure.
    if (sink === 0.5) process.stderr.write('');
    process.stdout.write(summaryText(result));
    if (values.json === '-') process.stdout.write(`${JSON.stringify(result)}\n`);
    else if (values.json) writeFileSync(values.json, `${JSON.stringify(result, null, 1)}\n`);
    if (result.records === 0) {
      process.stderr.write(`kwire perf: no record read from ${topic} (stopped by ${stoppedBy})\n`);
      return 1;
    }
    return 0;
  } catch (err) {
    meter?.close();
    await consumer?.close().catch(() => {});
    process.stderr.write(`kwire perf: ${(err as Error).message}\n${(err as { usage?: boolean }).usage ? `\n${USAGE}` : ''}`);
    return (err as { usage?: boolean }).usage ? 2 : 1;
  }
}

/** A latency figure; the histogram holds 60 s, so a value at its top is "at least". */
function ms(v: number): string {
  return v >= 60_000 ? '>= 60000 ms' : `${v} ms`;
}

export function summaryText(r: PerfResult): string {
  const e = r.endToEnd;
  const f = r.fetchLatencyMs;
  return [
    `kwire perf: ${r.topic} (${r.partitions} partitions${r.fullTouch ? ', full touch' : ''}), stopped by ${r.stoppedBy}`,
    `  records        ${r.records.toLocaleString('en-US')} in ${r.seconds.toFixed(2)} s`,
    `  throughput     ${r.recordsPerSec.toLocaleString('en-US')} records/s, ${r.mbPerSec.toFixed(1)} MB/s (${r.mibPerSec.toFixed(1)} MiB/s) of values`,
    `  fetch latency  p50 ${f.p50.toFixed(2)} ms, p90 ${f.p90.toFixed(2)} ms, p99 ${f.p99.toFixed(2)} ms, max ${f.max.toFixed(2)} ms (${r.fetches} fetches)`,
    `  end to end     ${e ? `p50 ${ms(e.p50)}, p99 ${ms(e.p99)}, p99.9 ${ms(e.p999)}, max ${e.max} ms (delivery - record timestamp)` : '-'}`,
    `  CPU            ${r.cpuSeconds.toFixed(2)} s (${r.cpuPercent}% of one core)`,
    `  peak RSS       ${r.peakRssMb.toFixed(0)} MiB`,
    `  GC             ${r.gcMs.toFixed(0)} ms in ${r.gcCount} collections, the longest ${r.maxGcPauseMs} ms`,
    `  loop stall     ${r.maxEventLoopStallMs === null ? '-' : `${r.maxEventLoopStallMs} ms`} (longest event-loop delay)`,
    '',
  ].join('\n');
}
