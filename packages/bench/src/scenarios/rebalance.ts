// Rebalance: a fresh group of one member each time, from subscribe to the first record delivered
// (Java: ConsumerPerformance's rebalance.time.ms, subscribe to assignment).
import type { ClientOptions } from '../clients/common.js';
import { runJavaConsumer } from '../orchestrator/java.js';
import { spawnNodeClient } from '../orchestrator/node-client.js';
import { REBALANCE_CLIENTS } from '../plan.js';
import type { RunRecord, ScenarioInfo } from '../report/types.js';
import { availableClients, describe, failedRun, fromReport, label, rotate, skippedRun, step, topicFor, type Ctx } from './context.js';

export async function rebalanceScenario(ctx: Ctx, s: ScenarioInfo): Promise<void> {
  const loaded = topicFor(ctx, s);
  const clients = availableClients(ctx, s, REBALANCE_CLIENTS);
  for (let rep = 0; rep < s.repetitions; rep++) {
    for (const client of rotate(clients, rep)) {
      step(ctx, `${s.id} rep ${rep + 1}/${s.repetitions}: ${label(client)} joins a fresh group`);
      let run: RunRecord;
      try {
        if (client === 'java') {
          // 1,000 records: enough for the tool to finish its first poll; its rebalance.time.ms is the figure.
          const j = await runJavaConsumer(ctx.target, loaded.topic, 1_000);
          if (!j.result) throw new Error(j.error ?? 'no result');
          run = { ...skippedRun(s, client, ''), rep, status: 'ok', records: j.result.records, joinToFirstRecordMs: j.result.rebalanceMs, cpuSeconds: j.cpuSeconds, peakRssMb: j.peakRssMb };
          delete run.reason;
          if (j.result.records < 1) Object.assign(run, { status: 'failed', reason: 'no record consumed' });
        } else {
          const options: ClientOptions = {
            bootstrap: ctx.target.bootstrap,
            topic: loaded.topic,
            partitions: s.partitions,
            records: 1,
            mode: 'rebalance',
            groupId: `bench-rebalance-${client}-${Date.now().toString(36)}`,
            idleTimeoutMs: 60_000,
            ...(client === 'rdkafka' && ctx.rdkafka.dir ? { rdkafkaDir: ctx.rdkafka.dir } : {}),
          };
          const r = await spawnNodeClient({ node: ctx.node.path, client, options, timeoutMs: 120_000 }).done;
          run = { ...fromReport(s, client, rep, r, r.records), recordsPerSec: null, mbPerSec: null, totalRecordsPerSec: null, checksum: null, joinToFirstRecordMs: r.joinToFirstRecordMs ?? null };
          if (r.records < 1 || r.error) Object.assign(run, { status: 'failed', reason: r.error ?? 'no record delivered' });
        }
      } catch (err) {
        run = failedRun(s, client, rep, (err as Error).message);
      }
      ctx.runs.push(run);
      ctx.progress.log(`  ${describe(run)}`);
    }
  }
}
