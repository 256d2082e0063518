// The Java consumer, measured like every other client: BenchJava.java (compiled once by the
// launcher's compileJava against the broker's own jars) reads the topic warm-up + measured times
// in one JVM, configured as Kafka's ConsumerPerformance configures it (check.crcs=false,
// receive.buffer.bytes 2 MiB, max.partition.fetch.bytes 1 MiB), each pass timed from its
// seekToBeginning to its last record, with the same digest of the values as the Node clients.
// CPU and GC time per pass come from the JVM's own beans; peak RSS from /proc while it runs.
// ConsumerPerformance itself stays for the rebalance scenario (its rebalance.time.ms).
//
// BenchJava also loads the full-touch topics (keys and headers: ProducerPerformance writes
// neither).
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compileJava, consumerPerformance, liveJavaProcesses, runTool, type ConsumerPerformanceResult, type KafkaTarget } from '@kwire/broker';
import { ProcSampler } from './proc.js';

const SOURCE = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'java', 'BenchJava.java');

export interface JavaRun {
  result?: ConsumerPerformanceResult;
  error?: string;
  cpuSeconds: number | null;
  peakRssMb: number | null;
}

export interface JavaPass {
  pass: number;
  warmup: boolean;
  records: number;
  bytes: number;
  checksum: string;
  seconds: number;
  cpuSeconds: number;
  gcMs: number;
  /** The pass ended at --pass-seconds, before the topic's end. */
  capped?: boolean;
}

/** Samples the JVM the launcher labelled `label` from /proc while `work` runs. */
async function sampled<T>(label: string, work: () => Promise<T>): Promise<{ value?: T; error?: Error; cpuSeconds: number | null; peakRssMb: number | null }> {
  const sampler = new ProcSampler();
  let found = false;
  // The launcher knows the JVM's pid as soon as it is spawned: find it and sample it.
  const finder = setInterval(() => {
    const jvm = liveJavaProcesses().find((p) => p.label === label);
    if (jvm && !found) {
      found = true;
      clearInterval(finder);
      sampler.watch(jvm.pid);
    }
  }, 5);
  try {
    const value = await work();
    return { value, ...sampler.stop() };
  } catch (err) {
    return { error: err as Error, ...sampler.stop() };
  } finally {
    clearInterval(finder);
  }
}

export async function runJavaConsumer(target: KafkaTarget, topic: string, messages: number, props?: Record<string, string | number>): Promise<JavaRun> {
  const r = await sampled(`ConsumerPerformance ${topic}`, () => consumerPerformance(target, { topic, messages, timeoutMs: 60_000, ...(props ? { props } : {}) }));
  return { ...(r.value ? { result: r.value } : {}), ...(r.error ? { error: r.error.message.split('\n')[0] } : {}), cpuSeconds: r.cpuSeconds, peakRssMb: r.peakRssMb };
}

async function classes(target: KafkaTarget): Promise<string> {
  return compileJava(SOURCE, { classpath: join(target.dist.libDir, '*') });
}

export interface BenchJavaRun {
  passes: JavaPass[];
  error?: string;
  peakRssMb: number | null;
}

export async function runBenchJava(
  target: KafkaTarget,
  o: { topic: string; partitions: number; records: number; warmup: number; warmupSeconds?: number; passes: number; passSeconds?: number; touch: 'value' | 'full'; props?: Record<string, string> },
): Promise<BenchJavaRun> {
  const dir = await classes(target);
  const label = `BenchJava consume ${o.topic}`;
  const args = [
    'consume',
    '--bootstrap',
    target.bootstrap,
    '--topic',
    o.topic,
    '--partitions',
    String(o.partitions),
    '--records',
    String(o.records),
    '--warmup',
    String(o.warmup),
    '--warmup-seconds',
    String(o.warmupSeconds ?? 0),
    '--passes',
    String(o.passes),
    '--touch',
    o.touch,
    '--pass-seconds',
    String(o.passSeconds ?? 0),
  ];
  for (const [k, v] of Object.entries(o.props ?? {})) args.push('--prop', `${k}=${v}`);
  const r = await sampled(label, () => runTool(target.dist, 'BenchJava', args, { extraClasspath: [dir], heapMb: 1024, label, timeoutMs: 900_000 }));
  const passes: JavaPass[] = [];
  for (const line of (r.value?.stdout ?? '').split('\n')) if (line.startsWith('{"pass"')) passes.push(JSON.parse(line) as JavaPass);
  let error = r.error?.message.split('\n')[0];
  if (!error && r.value && r.value.code !== 0) error = `BenchJava exited with ${r.value.code}: ${r.value.stderr.trim().split('\n').slice(-3).join(' | ')}`;
  return { passes, ...(error ? { error } : {}), peakRssMb: r.peakRssMb };
}

/** Loads `records` keyed records with two headers each (BenchJava produce). */
export async function produceKeyed(target: KafkaTarget, o: { topic: string; records: number; recordSize: number; compression: string }): Promise<{ seconds: number }> {
  const dir = await classes(target);
  const r = await runTool(
    target.dist,
    'BenchJava',
    ['produce', '--bootstrap', target.bootstrap, '--topic', o.topic, '--records', String(o.records), '--size', String(o.recordSize), '--compression', o.compression],
    {
      extraClasspath: [dir],
      heapMb: 1024,
      label: `BenchJava produce ${o.topic}`,
      timeoutMs: 900_000,
    },
  );
  if (r.code !== 0) throw new Error(`BenchJava produce exited with ${r.code}: ${r.stderr.trim().split('\n').slice(-3).join(' | ')}`);
  const line = r.stdout.split('\n').find((l) => l.startsWith('{'));
  return line ? (JSON.parse(line) as { seconds: number }) : { seconds: r.ms / 1000 };
}

const SHARE_SOURCE = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'java', 'BenchShare.java');

export interface SharePass {
  pass: number;
  warmup: boolean;
  records: number;
  /** Key + value bytes in MiB, as ShareConsumerPerformance prints it. */
  mb: number;
  /** Its fetch.time.ms: the consumers' creation to the last thread's end. */
  seconds: number;
  cpuSeconds: number;
  gcMs: number;
  /** The tool warned that it stopped short (its --timeout). */
  warning: boolean;
}

export interface BenchShareRun {
  passes: SharePass[];
  error?: string;
  peakRssMb: number | null;
}

/** ShareConsumerPerformance warm-up + measured times in one JVM (java/BenchShare.java), each pass in a fresh share group. */
export async function runBenchShare(target: KafkaTarget, o: { topic: string; records: number; threads: number; warmup: number; passes: number; group: string }): Promise<BenchShareRun> {
  const dir = await compileJava(SHARE_SOURCE, { classpath: join(target.dist.libDir, '*') });
  const label = `BenchShare perf ${o.topic} x${o.threads}`;
  const args = [
    'perf',
    '--bootstrap',
    target.bootstrap,
    '--topic',
    o.topic,
    '--records',
    String(o.records),
    '--threads',
    String(o.threads),
    '--warmup',
    String(o.warmup),
    '--passes',
    String(o.passes),
    '--group',
    o.group,
  ];
  const r = await sampled(label, () => runTool(target.dist, 'BenchShare', args, { extraClasspath: [dir], heapMb: 1024, label, timeoutMs: 900_000 }));
  const passes: SharePass[] = [];
  let error = r.error?.message.split('\n')[0];
  for (const line of (r.value?.stdout ?? '').split('\n')) {
    if (!line.startsWith('{"pass"')) continue;
    const p = JSON.parse(line) as SharePass & { error?: string };
    if (p.error) error ??= `BenchShare pass ${p.pass}: ${p.error}`;
    else passes.push(p);
  }
  if (!error && r.value && r.value.code !== 0) error = `BenchShare exited with ${r.value.code}: ${r.value.stderr.trim().split('\n').slice(-3).join(' | ')}`;
  return { passes, ...(error ? { error } : {}), peakRssMb: r.peakRssMb };
}

/** share.auto.offset.reset=earliest on each of these share groups (a new share group starts at the latest offset), one JVM for all. */
export async function configureShareGroups(target: KafkaTarget, groups: readonly string[]): Promise<void> {
  const dir = await compileJava(SHARE_SOURCE, { classpath: join(target.dist.libDir, '*') });
  const r = await runTool(target.dist, 'BenchShare', ['configure', '--bootstrap', target.bootstrap, '--groups', groups.join(',')], {
    extraClasspath: [dir],
    heapMb: 256,
    label: 'BenchShare configure',
    timeoutMs: 120_000,
  });
  if (r.code !== 0) throw new Error(`BenchShare configure exited with ${r.code}: ${r.stderr.trim().split('\n').slice(-3).join(' | ')}`);
}

export interface JavaFairness {
  fairness?: import('../report/types.js').FairnessFigures & { liveRecords: number };
  error?: string;
  peakRssMb: number | null;
  cpuSeconds: number | null;
}

/**
 * BenchJava fairness: the Java consumer at its defaults on the live topic and the paused backlog;
 * `whileRunning` (the live producer) is started once the JVM has had `startMs` to assign.
 */
export async function runJavaFairness(
  target: KafkaTarget,
  o: { topic: string; records: number; backlog: string; backlogPartitions: number; backlogRecords: number; warmupMs: number; beforeMs: number },
  whileRunning: () => Promise<unknown>,
  startMs = 3_000,
): Promise<JavaFairness> {
  const dir = await classes(target);
  const label = `BenchJava fairness ${o.topic}`;
  const args = [
    'fairness',
    '--bootstrap',
    target.bootstrap,
    '--topic',
    o.topic,
    '--records',
    String(o.records),
    '--backlog',
    o.backlog,
    '--backlog-partitions',
    String(o.backlogPartitions),
    '--backlog-records',
    String(o.backlogRecords),
    '--warmup-ms',
    String(o.warmupMs),
    '--before-ms',
    String(o.beforeMs),
  ];
  const r = await sampled(label, async () => {
    const tool = runTool(target.dist, 'BenchJava', args, { extraClasspath: [dir], heapMb: 1024, label, timeoutMs: 300_000 });
    await new Promise((res) => setTimeout(res, startMs));
    const produced = whileRunning();
    const [out] = await Promise.all([tool, produced]);
    return out;
  });
  let error = r.error?.message.split('\n')[0];
  let fairness: JavaFairness['fairness'];
  for (const line of (r.value?.stdout ?? '').split('\n')) {
    if (!line.startsWith('{"fairness"')) continue;
    const p = JSON.parse(line) as { fairness: NonNullable<JavaFairness['fairness']>; error?: string };
    fairness = p.fairness;
    if (p.error) error ??= p.error;
  }
  if (!error && r.value && r.value.code !== 0) error = `BenchJava exited with ${r.value.code}: ${r.value.stderr.trim().split('\n').slice(-3).join(' | ')}`;
  if (!error && !fairness) error = 'BenchJava printed no fairness line';
  return { ...(fairness ? { fairness } : {}), ...(error ? { error } : {}), peakRssMb: r.peakRssMb, cpuSeconds: r.cpuSeconds };
}
