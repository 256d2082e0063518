// RSS soak: kwire reads one topic pass after pass (seeking back to the start), RSS at the end of
// each pass: the flat-RSS goal.
import { spawnNodeClient } from '../orchestrator/node-client.js';
import { int } from '../report/table.js';
import type { RunRecord, ScenarioInfo } from '../report/types.js';
import { describe, failedRun, step, topicFor, type Ctx } from './context.js';

export async function soakScenario(ctx: Ctx, s: ScenarioInfo): Promise<void> {
  const loaded = topicFor(ctx, s);
  const passes = s.passes ?? 3;
  step(ctx, `${s.id}: kwire reads ${int(s.records)} records ${passes} times over, RSS per pass`);
  let run: RunRecord;
  try {
    // The original multi-pass runner (runKwire, as the memory test uses it): RSS at each pass's end.
    const r = (await spawnNodeClient({
      node: ctx.node.path,
      client: 'kwire',
      options: { bootstrap: ctx.target.bootstrap, topic: loaded.topic, partitions: s.partitions, records: s.records, passes },
      timeoutMs: 900_000,
    }).done) as unknown as {
      records: number;
      bytes: number;
      seconds: number;
      recordsPerSec: number;
      mbPerSec: number;
      cpuSeconds: number;
      peakRssMb: number;
      rssByPassMb: number[];
      gcMs: number;
      steadyMaxEventLoopStallMs: number | null;
    };
    run = {
      scenario: s.id,
      client: 'kwire',
      rep: 0,
      status: 'ok',
      records: r.records,
      expectedRecords: s.records * passes,
      bytes: r.bytes,
      checksum: null,
      recordsPerSec: r.recordsPerSec,
      mbPerSec: r.mbPerSec,
      fetchSeconds: r.seconds,
      totalSeconds: r.seconds,
      totalRecordsPerSec: r.recordsPerSec,
      cpuSeconds: r.cpuSeconds,
      peakRssMb: r.peakRssMb,
      gcMs: r.gcMs,
      maxEventLoopStallMs: r.steadyMaxEventLoopStallMs,
      rssByPassMb: r.rssByPassMb,
    };
    if (r.records !== s.records * passes || r.bytes !== s.records * passes * s.recordSize) {
      Object.assign(run, { status: 'failed', reason: `read ${r.records} records (${r.bytes} bytes), expected ${s.records * passes}` });
    }
  } catch (err) {
    run = failedRun(s, 'kwire', 0, (err as Error).message);
  }
  ctx.runs.push(run);
  ctx.progress.log(`  ${run.status === 'ok' ? `RSS by pass ${run.rssByPassMb?.join(', ')} MiB, ${int(run.recordsPerSec)} records/s` : describe(run)}`);
}
