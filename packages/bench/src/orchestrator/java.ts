// The Java consumer: Kafka's ConsumerPerformance from the broker's own jars (a fresh group each
// run, auto.offset.reset=earliest, check.crcs=false as the tool sets it). Its fetch.* figures
// exclude the group join and are the ones compared; its whole-run figures include it. It exposes
// no values, so verification is its count and byte total. CPU and peak RSS come from /proc while
// the JVM runs (JVM start-up included).
import { consumerPerformance, liveJavaProcesses, type ConsumerPerformanceResult, type KafkaTarget } from '@kwire/broker';
import { ProcSampler } from './proc.js';

export interface JavaRun {
  result?: ConsumerPerformanceResult;
  error?: string;
  cpuSeconds: number | null;
  peakRssMb: number | null;
}

export async function runJavaConsumer(target: KafkaTarget, topic: string, messages: number, props?: Record<string, string | number>): Promise<JavaRun> {
  const sampler = new ProcSampler();
  const label = `ConsumerPerformance ${topic}`;
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
    const result = await consumerPerformance(target, { topic, messages, timeoutMs: 60_000, ...(props ? { props } : {}) });
    return { result, ...sampler.stop() };
  } catch (err) {
    return { error: (err as Error).message.split('\n')[0], ...sampler.stop() };
  } finally {
    clearInterval(finder);
  }
}
