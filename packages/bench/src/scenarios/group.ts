// The consumer group: three processes of the same client with one group id, started together,
// timed from the first start until every partition's last record was delivered by some member.
// Each member records a hash of every value by offset; the union must cover every offset with the
// same values (records delivered twice across a rebalance are counted, not failed).
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readHashes, type ClientOptions, type ClientReport } from '../clients/common.js';
import { ValueDigest } from '../meter.js';
import { spawnNodeClient } from '../orchestrator/node-client.js';
import type { LoadedTopic } from '../orchestrator/topics.js';
import { GROUP_CLIENTS } from '../plan.js';
import type { RunRecord, ScenarioInfo } from '../report/types.js';
import { availableClients, describe, failedRun, label, MIB, rotate, step, topicFor, type Ctx } from './context.js';

/**
 * A member's pass lasts seconds and it gives up after 60 s without records: one still running after
 * 2 minutes has hung, and its run fails without spending the full run's 40-minute budget.
 */
const GROUP_RUN_MS = 120_000;

export async function groupScenario(ctx: Ctx, s: ScenarioInfo): Promise<void> {
  const loaded = topicFor(ctx, s);
  const clients = availableClients(ctx, s, GROUP_CLIENTS);
  for (let rep = 0; rep < s.repetitions; rep++) {
    for (const client of rotate(clients, rep)) {
      step(ctx, `${s.id} rep ${rep + 1}/${s.repetitions}: ${s.members} x ${label(client)}`);
      let run: RunRecord;
      try {
        run = await groupRun(ctx, s, loaded, client, rep);
      } catch (err) {
        run = failedRun(s, client, rep, (err as Error).message);
      }
      ctx.runs.push(run);
      ctx.progress.log(`  ${describe(run)}`);
    }
  }
}

async function groupRun(ctx: Ctx, s: ScenarioInfo, loaded: LoadedTopic, client: string, rep: number): Promise<RunRecord> {
  const members = s.members ?? 3;
  const groupId = `bench-group-${client}-${Date.now().toString(36)}`;
  const dir = join(tmpdir(), `kwire-bench-${process.pid}-${groupId}`);
  mkdirSync(dir, { recursive: true });
  const ends = loaded.ends;
  const next: number[][] = Array.from({ length: members }, () => ends.map(() => 0));
  let loadedCount = 0;
  let stopped = false;
  const children = Array.from({ length: members }, (_, i) => {
    const options: ClientOptions = {
      bootstrap: ctx.target.bootstrap,
      topic: loaded.topic,
      partitions: s.partitions,
      records: s.records,
      mode: 'group',
      groupId,
      endOffsets: ends,
      hashFile: join(dir, `member-${i}.bin`),
      idleTimeoutMs: 60_000,
      ...(client === 'rdkafka' && ctx.rdkafka.dir ? { rdkafkaDir: ctx.rdkafka.dir } : {}),
    };
    return spawnNodeClient({
      node: ctx.node.path,
      client,
      options,
      timeoutMs: GROUP_RUN_MS,
      onMessage: (m) => {
        if (m.ev === 'loaded' && ++loadedCount === members) for (const c of children) c.send({ ev: 'go' });
        if (m.ev === 'progress') {
          next[i] = m.next as number[];
          // Every partition's last record delivered by some member: the group is done.
          if (!stopped && ends.every((e, p) => next.some((n) => (n[p] ?? 0) >= e))) {
            stopped = true;
            for (const c of children) c.send({ ev: 'stop' });
          }
        }
      },
    });
  });
  try {
    const settled = await Promise.allSettled(children.map((c) => c.done));
    const failed = settled.find((x) => x.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
    const reports = settled.map((x) => (x as PromiseFulfilledResult<ClientReport>).value);
    return mergeGroup(s, client, rep, reports, ends, dir);
  } finally {
    for (const c of children) c.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The members' per-offset hashes merged: coverage, duplicates, the checksum of the union. */
function mergeGroup(s: ScenarioInfo, client: string, rep: number, reports: ClientReport[], ends: number[], dir: string): RunRecord {
  const members = reports.map((_, i) => readHashes(readFileSync(join(dir, `member-${i}.bin`))));
  const digest = new ValueDigest();
  let unique = 0;
  let delivered = 0;
  let inconsistent = 0;
  for (let p = 0; p < ends.length; p++) {
    for (let off = 0; off < ends[p]!; off++) {
      let h: number | undefined;
      for (const m of members) {
        const part = m[p];
        if (!part || part.seen[off] !== 1) continue;
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
  const tStart = Math.min(...reports.map((r) => r.tStart));
  // A partition is done when the first member delivered its last record.
  const doneAt = ends.map((e, p) => {
    if (e === 0) return tStart;
    const t = reports.map((r) => r.partitionDoneAt?.[p]).filter((x): x is number => typeof x === 'number');
    return t.length ? Math.min(...t) : null;
  });
  const complete = doneAt.every((t) => t !== null);
  const tEnd = complete ? Math.max(...(doneAt as number[])) : null;
  const seconds = tEnd !== null ? (tEnd - tStart) / 1000 : null;
  const run: RunRecord = {
    scenario: s.id,
    client,
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
    cpuSeconds: Math.round(reports.reduce((a, r) => a + r.cpuSeconds, 0) * 100) / 100,
    peakRssMb: Math.max(...reports.map((r) => r.peakRssMb)),
    gcMs: Math.round(reports.reduce((a, r) => a + r.gcMs, 0)),
    maxEventLoopStallMs: Math.max(...reports.map((r) => r.maxEventLoopStallMs ?? 0)),
    duplicates: delivered - unique,
    notes: [...new Set(reports.flatMap((r) => r.notes ?? []))],
  };
  const errors = reports.filter((r) => r.error).map((r) => r.error);
  if (errors.length) Object.assign(run, { status: 'failed', reason: errors.join('; ') });
  else if (unique !== s.records) Object.assign(run, { status: 'failed', reason: `the members consumed ${unique} distinct records of ${s.records}` });
  else if (inconsistent) Object.assign(run, { status: 'failed', reason: `${inconsistent} records delivered twice with different values` });
  else if (!complete) Object.assign(run, { status: 'failed', reason: 'a partition was never completed' });
  return run;
}
