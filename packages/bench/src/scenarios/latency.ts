// End-to-end latency: ProducerPerformance at a fixed rate into a fresh topic while one consumer
// with its default fetch settings reads it; latency = delivery to the application - CreateTime.
import { createTopic, producerPerformance } from '@kwire/broker';
import { spawnNodeClient } from '../orchestrator/node-client.js';
import { int } from '../report/table.js';
import type { RunRecord, ScenarioInfo } from '../report/types.js';
import { availableClients, describe, failedRun, fromReport, label, rotate, step, type Ctx } from './context.js';

export async function latencyScenario(ctx: Ctx, s: ScenarioInfo, all: readonly string[]): Promise<void> {
  const clients = availableClients(ctx, s, all);
  for (let rep = 0; rep < s.repetitions; rep++) {
    for (const client of rotate(clients, rep)) {
      step(ctx, `${s.id} rep ${rep + 1}/${s.repetitions}: ${label(client)} while ProducerPerformance writes ${int(s.rate)} records/s for ${s.seconds} s`);
      let run: RunRecord;
      try {
        run = { ...(await latencyRun(ctx, s, client)), rep };
      } catch (err) {
        run = failedRun(s, client, rep, (err as Error).message);
      }
      ctx.runs.push(run);
      ctx.progress.log(`  ${describe(run)}`);
    }
  }
}

async function latencyRun(ctx: Ctx, s: ScenarioInfo, client: string): Promise<RunRecord> {
  const topic = `bench-latency-${client}-${Date.now().toString(36)}`;
  await createTopic(ctx.target, { topic, partitions: s.partitions });
  let ready!: () => void;
  const isReady = new Promise<void>((r) => (ready = r));
  const child = spawnNodeClient({
    node: ctx.node.path,
    client,
    options: {
      bootstrap: ctx.target.bootstrap,
      topic,
      partitions: s.partitions,
      records: s.records,
      mode: 'latency',
      warmupMs: 2_000,
      idleTimeoutMs: 60_000,
      ...(client === 'rdkafka' && ctx.rdkafka.dir ? { rdkafkaDir: ctx.rdkafka.dir } : {}),
    },
    timeoutMs: 600_000,
    onMessage: (m) => {
      if (m.ev === 'ready') ready();
    },
  });
  try {
    await Promise.race([isReady, child.done]);
    // Give a group client its first fetch in flight before the producer starts.
    await new Promise((r) => setTimeout(r, 500));
    await producerPerformance(ctx.target, { topic, numRecords: s.records, recordSize: s.recordSize, throughput: s.rate, props: { 'linger.ms': 0 } });
    const r = await child.done;
    const run = fromReport(s, client, 0, r, s.records);
    if (r.latency) run.latency = { ...r.latency };
    // The run's own pace is the producer's: throughput figures mean nothing here.
    run.recordsPerSec = null;
    run.mbPerSec = null;
    run.totalRecordsPerSec = null;
    return run;
  } finally {
    child.child.kill('SIGKILL');
  }
}
