// The handler-bound family's Java side (issue 31): Confluent's parallel-consumer resolved from
// Maven Central once into the git-ignored cache (java/parallel-consumer.pom.xml, the way the
// launcher assembles Kafka), BenchParallel.java compiled against it, and HandlerTopic.java (the
// family's topic loader) compiled against the broker's jars.
//
// BenchParallel runs on the parallel-consumer's own runtime jars, kafka-clients 3.7.0 included,
// not on the broker's: with kafka-clients 4.4.0 in its place the processor starts and never hands
// a record to its handler (see the pom). A 3.7 client speaks to the 4.4 broker as any older client does.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { cacheDir, compileJava, liveJavaProcesses, runTool, type KafkaTarget } from '@kwire/broker';
import type { HandlerFigures } from '../clients/handler-check.js';
import { ProcSampler } from './proc.js';

const run = promisify(execFile);
const JAVA_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'java');
const POM = join(JAVA_DIR, 'parallel-consumer.pom.xml');
export const PARALLEL_CONSUMER_VERSION = '0.5.3.2';

export interface ParallelConsumerJars {
  /** The folder of its runtime jars. */
  libDir: string;
  /** Jars resolved, for the notes. */
  jars: string[];
}

/** Resolves parallel-consumer-core and its runtime dependencies into the cache, once (staging folder renamed when complete). */
export async function ensureParallelConsumer(log: (line: string) => void): Promise<ParallelConsumerJars> {
  const root = join(cacheDir(), 'parallel-consumer', PARALLEL_CONSUMER_VERSION);
  const libDir = join(root, 'libs');
  const marker = join(root, 'complete');
  if (!existsSync(marker)) {
    const started = Date.now();
    log(`resolving io.confluent.parallelconsumer:parallel-consumer-core:${PARALLEL_CONSUMER_VERSION} from Maven Central into ${libDir}`);
    await mkdir(root, { recursive: true });
    const staging = join(root, `libs.partial-${process.pid}-${randomBytes(3).toString('hex')}`);
    try {
      await run('mvn', ['-B', '-q', '-f', POM, 'dependency:copy-dependencies', `-Dparallel-consumer.version=${PARALLEL_CONSUMER_VERSION}`, '-DincludeScope=runtime', `-DoutputDirectory=${staging}`], {
        maxBuffer: 64 * 1024 * 1024,
      });
    } catch (err) {
      await rm(staging, { recursive: true, force: true });
      const e = err as { stdout?: string; stderr?: string; code?: unknown };
      const tail = `${e.stdout ?? ''}${e.stderr ?? ''}`.trim().split('\n').slice(-5).join(' | ');
      throw new Error(e.code === 'ENOENT' ? 'mvn is not on the PATH (Apache Maven resolves the parallel-consumer)' : `mvn could not resolve the parallel-consumer: ${tail}`);
    }
    const jars = (await readdir(staging)).filter((f) => f.endsWith('.jar')).sort();
    if (!jars.some((j) => j.startsWith('parallel-consumer-core-'))) throw new Error(`Maven finished but ${staging} lacks parallel-consumer-core`);
    await rm(libDir, { recursive: true, force: true });
    await rename(staging, libDir);
    await writeFile(marker, `${jars.join('\n')}\n`);
    log(`resolved ${jars.length} jars in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  return { libDir, jars: (await readdir(libDir)).filter((f) => f.endsWith('.jar')).sort() };
}

/** Loads the family's topic (HandlerTopic.java on the broker's jars): records keyed over `keys` keys, values "key|seq|" + filler. */
export async function produceHandlerTopic(target: KafkaTarget, o: { topic: string; records: number; keys: number; recordSize: number }): Promise<{ seconds: number }> {
  const dir = await compileJava(join(JAVA_DIR, 'HandlerTopic.java'), { classpath: join(target.dist.libDir, '*') });
  const r = await runTool(
    target.dist,
    'HandlerTopic',
    ['produce', '--bootstrap', target.bootstrap, '--topic', o.topic, '--records', String(o.records), '--keys', String(o.keys), '--size', String(o.recordSize)],
    { extraClasspath: [dir], heapMb: 512, label: `HandlerTopic produce ${o.topic}`, timeoutMs: 300_000 },
  );
  if (r.code !== 0) throw new Error(`HandlerTopic exited with ${r.code}: ${r.stderr.trim().split('\n').slice(-3).join(' | ')}`);
  const line = r.stdout.split('\n').find((l) => l.startsWith('{'));
  return line ? (JSON.parse(line) as { seconds: number }) : { seconds: r.ms / 1000 };
}

export interface ParallelRun {
  handler?: HandlerFigures & { cpuSeconds?: number; gcMs?: number };
  error?: string;
  peakRssMb: number | null;
  cpuSeconds: number | null;
  /** The JVM's start to its exit (s). */
  wallSeconds: number;
}

/** BenchParallel parallel: the parallel-consumer at one ProcessingOrder and maxConcurrency, a handler that sleeps `sleepMs`. */
export async function runParallelConsumer(
  target: KafkaTarget,
  jars: ParallelConsumerJars,
  o: { topic: string; ends: readonly number[]; records: number; keys: number; concurrency: number; order: 'KEY' | 'PARTITION' | 'UNORDERED'; sleepMs: number; timeLimitSeconds: number; group: string },
): Promise<ParallelRun> {
  const libs = join(jars.libDir, '*');
  const dir = await compileJava(join(JAVA_DIR, 'BenchParallel.java'), { classpath: libs });
  // Its own jars only (kafka-clients 3.7.0; see above), behind the launcher's watchdog (the
  // classpath's first entry), which ends the JVM if this process dies.
  const watchdog = target.dist.classpath.split(delimiter)[0]!;
  const dist = { ...target.dist, classpath: [watchdog, libs].join(delimiter) };
  const label = `BenchParallel ${o.topic} ${o.order} ${o.concurrency}`;
  const args = ['parallel', '--bootstrap', target.bootstrap, '--topic', o.topic, '--ends', o.ends.join(','), '--records', String(o.records), '--keys', String(o.keys)];
  args.push('--concurrency', String(o.concurrency), '--order', o.order, '--sleep-ms', String(o.sleepMs), '--time-limit-s', String(o.timeLimitSeconds), '--group', o.group);
  const sampler = new ProcSampler();
  const started = Date.now();
  const finder = setInterval(() => {
    const jvm = liveJavaProcesses().find((p) => p.label === label);
    if (jvm) {
      clearInterval(finder);
      sampler.watch(jvm.pid);
    }
  }, 5);
  try {
    // 1,024 pool threads and 200,000 records' bookkeeping: 1 GiB of heap, as BenchJava.
    const r = await runTool(dist, 'BenchParallel', args, {
      extraClasspath: [dir],
      heapMb: 1024,
      label,
      timeoutMs: (o.timeLimitSeconds + 120) * 1000,
    });
    const figures = sampler.stop();
    const line = r.stdout.split('\n').find((l) => l.startsWith('{"handler"'));
    const out: ParallelRun = { ...figures, wallSeconds: (Date.now() - started) / 1000 };
    if (line) out.handler = (JSON.parse(line) as { handler: NonNullable<ParallelRun['handler']> }).handler;
    if (r.code !== 0 || !line) out.error = `BenchParallel exited with ${r.code}${line ? '' : ' without its result line'}: ${r.stderr.trim().split('\n').slice(-3).join(' | ')}`;
    return out;
  } catch (err) {
    return { error: (err as Error).message.split('\n')[0], ...sampler.stop(), wallSeconds: (Date.now() - started) / 1000 };
  } finally {
    clearInterval(finder);
  }
}
