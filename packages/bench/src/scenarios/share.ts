// Share groups (KIP-932): kwire's share consumer against Java's own ShareConsumerPerformance on the
// topic of a throughput scenario, with 1 and with 3 members, in steady state: a warm-up pass and
// the measured passes in the same processes, each pass in a fresh share group that starts at the
// earliest offset. Java: one JVM running the tool once per pass, `--threads` members (its way of
// running several KafkaShareConsumers of one group). kwire: one process per member (Node runs a
// consumer on one thread), started together for each pass, stopped once their counts add up to the
// topic. Both figures run from the consumers' creation (the join included: the tool times it so)
// to the last record; every record must be delivered exactly once across the members.
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readHashes, type ClientOptions, type ClientReport } from '../clients/common.js';
import { ValueDigest } from '../meter.js';
import { configureShareGroups, runBenchShare } from '../orchestrator/java.js';
import { spawnNodeClient, type NodeChild } from '../orchestrator/node-client.js';
import type { LoadedTopic } from '../orchestrator/topics.js';
import { SHARE_CLIENTS } from '../plan.js';
import type { RunRecord, ScenarioInfo } from '../report/types.js';
import type { PassReport } from '../passes.js';
import { availableClients, describe, failedRun, label, MIB, skippedRun, step, topicFor, type Ctx } from './context.js';

export async function shareScenario(ctx: Ctx, s: ScenarioInfo): Promise<void> {
  const loaded = topicFor(ctx, s);
  const clients = availableClients(ctx, s, SHARE_CLIENTS);
  const members = s.members ?? 1;
  const warmup = s.warmupPasses ?? 1;
  for (const client of clients) {
    step(ctx, `${s.id}: ${members} x ${client === 'java' ? 'ShareConsumerPerformance' : label(client)} member${members > 1 ? 's' : ''}, ${warmup} warm-up + ${s.repetitions} measured passes`);
    let runs: RunRecord[];
    try {
      runs = client === 'java' ? await javaShareRuns(ctx, s, loaded, members, warmup) : await kwireShareRuns(ctx, s, loaded, members, warmup);
    } catch (err) {
      runs = [failedRun(s, client, 0, (err as Error).message)];
    }
    ctx.runs.push(...runs);
    for (const r of runs) ctx.progress.log(`  pass ${r.rep + 1}: ${describe(r)}`);
  }
}

async function javaShareRuns(ctx: Ctx, s: ScenarioInfo, loaded: LoadedTopic, members: number, warmup: number): Promise<RunRecord[]> {
  const group = `bench-share-java-${members}-${Date.now().toString(36)}`;
  const j = await runBenchShare(ctx.target, { topic: loaded.topic, records: s.records, threads: members, warmup, passes: s.repetitions, group });
  const runs: RunRecord[] = [];
  for (const p of j.passes) {
    const bytes = Math.round(p.mb * MIB);
    const run: RunRecord = {
      ...skippedRun(s, 'java', ''),
      rep: Math.max(0, p.pass - warmup),
      status: 'ok',
      records: p.records,
      bytes,
      recordsPerSec: p.seconds > 0 ? p.records / p.seconds : null,
      mbPerSec: p.seconds > 0 ? p.mb / p.seconds : null,
      fetchSeconds: p.seconds,
      totalSeconds: p.seconds,
      totalRecordsPerSec: p.seconds > 0 ? p.records / p.seconds : null,
      cpuSeconds: Math.round(p.cpuSeconds * 100) / 100,
      peakRssMb: j.peakRssMb,
      gcMs: p.gcMs,
    };
    delete run.reason;
    // The tool counts what its threads received: a record delivered twice (a lock expired) counts twice.
    if (p.records !== s.records) Object.assign(run, { status: 'failed', reason: `${p.warmup ? 'warm-up pass: ' : ''}the members received ${p.records} records, expected ${s.records}` });
    // It prints MiB with 4 decimals: the bytes are known to 50 bytes or so.
    else if (Math.abs(bytes - s.records * s.recordSize) > 100) Object.assign(run, { status: 'failed', reason: `${p.mb} MiB of keys and values, expected ${(s.records * s.recordSize) / MIB}` });
    if (p.warmup && run.status === 'ok') continue;
    runs.push(run);
  }
  if (j.error) runs.push(failedRun(s, 'java', runs.length, j.error));
  if (runs.length === 0) runs.push(failedRun(s, 'java', 0, 'no measured pass'));
  return runs;
}

async function kwireShareRuns(ctx: Ctx, s: ScenarioInfo, loaded: LoadedTopic, members: number, warmup: number): Promise<RunRecord[]> {
  const total = warmup + s.repetitions;
  const groupId = `bench-share-kwire-${members}-${Date.now().toString(36)}`;
  // run-client names pass p's group `${groupId}-p${p}`: each must start at the earliest offset.
  await configureShareGroups(
    ctx.target,
    Array.from({ length: total }, (_, p) => `${groupId}-p${p}`),
  );
  const dir = join(tmpdir(), `kwire-bench-${process.pid}-${groupId}`);
  mkdirSync(dir, { recursive: true });
  let loadedCount = 0;
  let started = 0;
  let counts = new Array<number>(members).fill(0);
  let stopped = false;
  const children: NodeChild[] = [];
  const killAll = () => {
    for (const c of children) c.child.kill('SIGKILL');
  };
  try {
    for (let i = 0; i < members; i++) {
      const options: ClientOptions = {
        bootstrap: ctx.target.bootstrap,
        topic: loaded.topic,
        partitions: s.partitions,
        records: s.records,
        mode: 'share',
        groupId,
        endOffsets: loaded.ends,
        hashFile: join(dir, `member-${i}`),
        idleTimeoutMs: 60_000,
        warmupPasses: warmup,
        measuredPasses: s.repetitions,
      };
      const child = spawnNodeClient({
        node: ctx.node.path,
        client: 'kwire-share',
        options,
        timeoutMs: 1_800_000,
        onMessage: (m) => {
          // Every member ready for the next pass: start them together.
          if (m.ev === 'loaded' && ++loadedCount === members) {
            loadedCount = 0;
            counts = counts.map(() => 0);
            stopped = false;
            started++;
            for (const c of children) c.send({ ev: 'go' });
          }
          if (m.ev === 'progress') {
            counts[i] = m.count as number;
            if (!stopped && counts.reduce((a, b) => a + b, 0) >= s.records) {
              stopped = true;
              for (const c of children) c.send({ ev: 'stop' });
            }
          }
        },
      });
      children.push(child);
      // A member gone before the last pass started leaves the others waiting for a go that never comes.
      child.done.catch(() => {});
      child.child.once('exit', () => {
        if (started < total) killAll();
      });
    }
    const settled = await Promise.allSettled(children.map((c) => c.done));
    const failed = settled.find((x) => x.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
    const reports = settled.map((x) => ((x as PromiseFulfilledResult<ClientReport>).value as unknown as { passes: PassReport[] }).passes);
    const runs: RunRecord[] = [];
    for (let p = 0; p < total; p++) {
      const mine = reports.map((r) => r[p]);
      if (mine.some((r) => r === undefined)) {
        runs.push(failedRun(s, 'kwire', Math.max(0, p - warmup), `pass ${p}: a member stopped before it (${reports.map((r) => r.at(-1)?.error ?? 'no error').join('; ')})`));
        break;
      }
      const run = mergeShare(s, Math.max(0, p - warmup), mine as PassReport[], loaded.ends, (i) => join(dir, `member-${i}.p${p}`));
      if (p < warmup && run.status === 'ok') continue;
      if (p < warmup) run.reason = `warm-up pass: ${run.reason ?? ''}`;
      runs.push(run);
      if (run.status !== 'ok') break;
    }
    return runs.length ? runs : [failedRun(s, 'kwire', 0, 'no measured pass')];
  } finally {
    killAll();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One pass of the kwire members: every offset once with the values of the topic, timed from the first creation to the last record. */
export function mergeShare(s: ScenarioInfo, rep: number, reports: readonly ClientReport[], ends: readonly number[], hashFile: (member: number) => string): RunRecord {
  const members = reports.map((_, i) => readHashes(readFileSync(hashFile(i))));
  const digest = new ValueDigest();
  let unique = 0;
  let delivered = 0;
  let inconsistent = 0;
  for (let p = 0; p < ends.length; p++) {
    for (let off = 0; off < ends[p]!; off++) {
      let h: number | undefined;
      for (const m of members) {
        const part = m[p];
        if (part?.seen[off] !== 1) continue;
        delivered++;
        if (h === undefined) h = part.hashes[off]!;
        else if (h !== part.hashes[off]) inconsistent++;
      }
      if (h !== undefined) {
        unique++;
        digest.addHash(h, s.recordSize);
      }
    }
  }
  const received = reports.reduce((a, r) => a + r.records, 0);
  const tStart = Math.min(...reports.map((r) => r.tStart));
  const lasts = reports.map((r) => r.tLast).filter((t): t is number => t !== null);
  const seconds = lasts.length ? (Math.max(...lasts) - tStart) / 1000 : null;
  const sum = (f: (r: ClientReport) => number | null | undefined) => Math.round(reports.reduce((a, r) => a + (f(r) ?? 0), 0) * 100) / 100;
  const run: RunRecord = {
    scenario: s.id,
    client: 'kwire',
    rep,
    status: 'ok',
    records: unique,
    expectedRecords: s.records,
    bytes: unique * s.recordSize,
    checksum: digest.toString(),
    recordsPerSec: seconds ? unique / seconds : null,
    mbPerSec: seconds ? (unique * s.recordSize) / MIB / seconds : null,
    fetchSeconds: seconds,
    totalSeconds: seconds,
    totalRecordsPerSec: seconds ? unique / seconds : null,
    // Each member's fetch phase (subscribed to stopped): the passes before are not counted.
    cpuSeconds: sum((r) => r.fetchCpuSeconds),
    peakRssMb: Math.max(...reports.map((r) => r.peakRssMb)),
    gcMs: sum((r) => r.fetchGcMs ?? r.gcMs),
    maxEventLoopStallMs: Math.max(...reports.map((r) => r.maxEventLoopStallMs ?? 0)),
    duplicates: delivered - unique,
    // In results.json: how the records were spread over the members, and each member's ShareFetch count.
    notes: [...(reports.length > 1 ? [`records per member: ${reports.map((r) => r.records).join(' / ')}`] : []), ...reports.flatMap((r) => r.notes ?? [])],
  };
  const errors = reports.filter((r) => r.error).map((r) => r.error);
  if (errors.length) Object.assign(run, { status: 'failed', reason: errors.join('; ') });
  else if (unique !== s.records) Object.assign(run, { status: 'failed', reason: `the members received ${unique} distinct records of ${s.records}` });
  else if (received !== s.records) Object.assign(run, { status: 'failed', reason: `${received - s.records} records delivered twice (an acquisition lock expired or a record was released)` });
  else if (inconsistent) Object.assign(run, { status: 'failed', reason: `${inconsistent} records delivered twice with different values` });
  return run;
}
