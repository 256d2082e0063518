// One chaos run on a 3-node cluster: a topic of 6 partitions (RF 3), a producer at ~150 records/s
// with acks=all (keyed records: 500 keys, each in one partition), three kwire group members (child processes, each behind its own FaultProxy), a
// seeded fault schedule, then the end: faults stopped, the producer stopped, every committed offset
// at the high watermark, every member closed with its budget; then the oracle (oracle.ts) over the
// members' logs, the high watermarks (ListOffsets) and ConsumerGroupCommand's reading.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, openSync, readFileSync, readSync, closeSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { FindCoordinator, ListOffsets, Metadata, ZERO_UUID, type RecordInput } from '@kwire/protocol';
import { createTopic, describeGroupOffsets, type KafkaCluster } from '@kwire/broker';
import { BrokerPool } from '../../../src/internals.js';
import { TestProducer, FaultProxy, prng } from '@kwire/testkit';
import type { MemberOptions } from './member.js';
import { checkChaos, parseFinishedField, type FaultRecord, type OracleReport } from './oracle.js';
import { FAULT_KINDS, planFaults, type PlannedFault } from './schedule.js';

const memberScript = join(dirname(fileURLToPath(import.meta.url)), 'member.js');

export const PARTITIONS = 6;
export const SESSION_TIMEOUT_MS = 10_000;
export const HEARTBEAT_INTERVAL_MS = 1_000;
export const CLOSE_BUDGET_MS = 10_000;
const PROGRESS_WITHIN_MS = 60_000;
/** Distinct record keys; key k goes to partition k % PARTITIONS, as a key-hashing producer would. */
export const KEYS = 500;
/** The concurrent mode's members: run({ maxConcurrency, ordering: 'key' }), a handler of 0-MAX_WAIT_MS. */
export const CONCURRENT = { maxConcurrency: 64, maxWaitMs: 20 } as const;

/** Broker settings the chaos cluster needs: durable writes, and KIP-848 sessions as short as classic ones. */
export const CHAOS_BROKER_CONFIG = {
  'min.insync.replicas': 2,
  'unclean.leader.election.enable': false,
  'default.replication.factor': 3,
  'group.consumer.session.timeout.ms': SESSION_TIMEOUT_MS,
  'group.consumer.min.session.timeout.ms': 6_000,
  'group.consumer.heartbeat.interval.ms': HEARTBEAT_INTERVAL_MS,
  'group.consumer.min.heartbeat.interval.ms': HEARTBEAT_INTERVAL_MS,
} as const;

export interface ChaosOptions {
  cluster: KafkaCluster;
  seed: number;
  groupProtocol: 'classic' | 'consumer';
  /**
   * The concurrent mode: members run({ maxConcurrency: 64, ordering: 'key' }) with a handler that
   * waits 0-20 ms (seeded), and the oracle checks rules (8)-(10) instead of (6).
   */
  concurrent?: boolean;
  /** How long faults are injected. */
  faultMs: number;
  /** The faults to inject; by default the seed's schedule for `faultMs` (planFaults). */
  plan?: readonly PlannedFault[];
  /** Where the member logs go. */
  dir: string;
  log?: (line: string) => void;
}

export interface ChaosResult {
  seed: number;
  /** The members' logs. */
  dir: string;
  /** Records acknowledged per second while the producer ran. */
  produceRate: number;
  groupProtocol: string;
  concurrent: boolean;
  report: OracleReport;
  produced: number;
  highWatermarks: number[];
  faultsByKind: Record<string, number>;
  proxyEffects: { rst: number; cut: number };
  drainMs: number;
  durationMs: number;
  summary: string;
}

/** A member slot: its proxy, its log, and the process that currently fills it. */
class Slot {
  child: ChildProcess | undefined;
  exited: Promise<void> = Promise.resolve();
  /** Set while the harness stops it on purpose (kill, term): an exit is expected. */
  expectExit = false;
  /** Between SIGSTOP and SIGCONT. */
  frozen = false;
  unexpectedExits: string[] = [];
  /** Processes started in this slot: each incarnation's handler waits come from its own seed. */
  starts = 0;
  readonly logFile: string;
  private readonly errFile: string;

  constructor(
    readonly index: number,
    readonly proxy: FaultProxy,
    private readonly options: Omit<MemberOptions, 'log' | 'bootstrap'> & { bootstrap: string },
    private readonly seed: number,
    dir: string,
  ) {
    this.logFile = join(dir, `member-${index}.log`);
    this.errFile = join(dir, `member-${index}.stderr`);
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  start(): void {
    const err = openSync(this.errFile, 'a');
    const options: MemberOptions = { ...this.options, log: this.logFile };
    if (options.concurrent) options.concurrent = { ...options.concurrent, seed: (this.seed + 7_919 * this.index + 104_729 * this.starts) >>> 0 };
    this.starts++;
    const child = spawn(process.execPath, [memberScript, JSON.stringify(options)], { stdio: ['ignore', 'ignore', err] });
    closeSync(err);
    this.child = child;
    this.expectExit = false;
    this.exited = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        if (!this.expectExit) this.unexpectedExits.push(`member ${this.index} (pid ${child.pid}) exited by itself with ${signal ?? `code ${code}`}: ${this.stderrTail()}`);
        resolve();
      }),
    );
  }

  signal(sig: NodeJS.Signals): void {
    if (sig === 'SIGKILL' || sig === 'SIGTERM') this.expectExit = true;
    this.child?.kill(sig);
  }

  /**
   * Waits (up to `ms`) for the member's log to show a commit whose metadata carried finished
   * records; resolves with how many it carried, or 0 at the timeout. Reads only what was written
   * since the call.
   */
  async commitWithMetadata(ms: number): Promise<number> {
    const deadline = Date.now() + ms;
    let position = statSync(this.logFile).size;
    let rest = '';
    const fd = openSync(this.logFile, 'r');
    try {
      const chunk = Buffer.allocUnsafe(1 << 16);
      while (Date.now() < deadline) {
        for (let n: number; (n = readSync(fd, chunk, 0, chunk.length, position)) > 0; ) {
          position += n;
          const lines = (rest + chunk.toString('latin1', 0, n)).split('\n');
          rest = lines.pop()!;
          for (const l of lines) {
            const field = l.startsWith('C ') ? l.split(' ')[4] : undefined;
            const finished = parseFinishedField(field);
            if (finished?.size) return finished.size;
          }
        }
        await sleep(10);
      }
      return 0;
    } finally {
      closeSync(fd);
    }
  }

  stderrTail(): string {
    try {
      return readFileSync(this.errFile, 'utf8').slice(-1500);
    } catch {
      return '';
    }
  }
}

/**
 * ~150 records/s: 25 a second to each of the 6 partitions, each partition on its own, in batches
 * of 5 every 200 ms; a partition that fell behind (a slow acks=all round trip, a leader killed)
 * sends what it owes in one batch (at most 100), so the rate holds on a loaded machine.
 * Keys: partition p's records draw (seeded) among the keys k with k % 6 = p (83 or 84 of them),
 * values are `<partition>:<n>:<key>#<sequence of that key>`.
 */
function startProducer(bootstrap: string, topic: string, seed: number) {
  const producer = new TestProducer(bootstrap);
  let running = true;
  let produced = 0;
  let errors = 0;
  const start = Date.now();
  const loops = Array.from({ length: PARTITIONS }, async (_, p) => {
    const rnd = prng((seed * PARTITIONS + p) >>> 0);
    const keys = Array.from({ length: Math.ceil((KEYS - p) / PARTITIONS) }, (_, i) => p + i * PARTITIONS);
    const sequence = new Map<number, number>();
    let n = 0;
    // A batch that failed goes again as it was (same keys, same sequences), as a producer retries.
    let batch: RecordInput[] | undefined;
    while (running) {
      const owed = Math.floor(((Date.now() - start) / 1000) * 25) - n;
      if (!batch && owed < 5) {
        await sleep(Math.ceil(((n + 5) / 25) * 1000) - (Date.now() - start));
        continue;
      }
      batch ??= Array.from({ length: Math.min(owed, 100) }, (_, i) => {
        const k = keys[Math.floor(rnd() * keys.length)]!;
        const seq = sequence.get(k) ?? 0;
        sequence.set(k, seq + 1);
        return { key: `k${k}`, value: `${p}:${n + i}:k${k}#${seq}` };
      });
      try {
        await producer.send(topic, p, batch);
        n += batch.length;
        produced += batch.length;
        batch = undefined;
      } catch {
        // A leader killed, the ISR shrinking: retried (a retry may write the records twice; the
        // oracle counts offsets, not values).
        errors++;
        await sleep(300);
      }
    }
  });
  return {
    get produced() {
      return produced;
    },
    get errors() {
      return errors;
    },
    stop: async () => {
      running = false;
      await Promise.all(loops);
      await producer.close();
    },
  };
}

/** Cluster questions asked outside the members: leaders, the coordinator, high watermarks. */
class Admin {
  readonly pool: BrokerPool;
  constructor(bootstrap: string) {
    this.pool = new BrokerPool({ bootstrapServers: bootstrap, clientId: 'kwire-chaos-admin' });
  }

  private async retry<T>(what: string, f: () => Promise<T>, ms = 60_000): Promise<T> {
    const deadline = Date.now() + ms;
    for (;;) {
      try {
        return await f();
      } catch (err) {
        if (Date.now() > deadline) throw new Error(`${what}: ${(err as Error).message}`);
        await sleep(500);
      }
    }
  }

  metadata(topic: string) {
    return this.retry('Metadata', async () => {
      const conn = await this.pool.bootstrap();
      const md = await conn.request(Metadata, { topics: [{ topicId: ZERO_UUID, name: topic }], allowAutoTopicCreation: false });
      const t = md.topics.find((x) => x.name === topic);
      if (!t || t.errorCode !== 0) throw new Error(`topic ${topic}: error ${t?.errorCode}`);
      return { brokers: md.brokers, partitions: t.partitions };
    });
  }

  async leaderOf(topic: string, partition: number): Promise<number> {
    const md = await this.metadata(topic);
    return md.partitions.find((p) => p.partitionIndex === partition)?.leaderId ?? -1;
  }

  coordinatorOf(groupId: string): Promise<number> {
    return this.retry('FindCoordinator', async () => {
      const conn = await this.pool.bootstrap();
      const res = await conn.request(FindCoordinator, { key: groupId, keyType: 0, coordinatorKeys: [groupId] });
      const c = res.coordinators[0];
      if (!c || c.errorCode !== 0) throw new Error(`FindCoordinator ${groupId}: error ${c?.errorCode}`);
      return c.nodeId;
    });
  }

  /** The high watermark of each partition: ListOffsets (latest, read uncommitted) at its leader. */
  highWatermarks(topic: string): Promise<number[]> {
    return this.retry('ListOffsets', async () => {
      const md = await this.metadata(topic);
      const out = new Array<number>(PARTITIONS).fill(-1);
      for (const p of md.partitions) {
        const b = md.brokers.find((x) => x.nodeId === p.leaderId);
        if (!b) throw new Error(`partition ${p.partitionIndex} has no leader`);
        const conn = await this.pool.get({ host: b.host, port: b.port, nodeId: b.nodeId });
        const res = await conn.request(ListOffsets, {
          replicaId: -1,
          isolationLevel: 0,
          timeoutMs: 10_000,
          topics: [{ name: topic, partitions: [{ partitionIndex: p.partitionIndex, currentLeaderEpoch: -1, timestamp: -1n }] }],
        });
        const r = res.topics[0]!.partitions[0]!;
        if (r.errorCode !== 0) throw new Error(`ListOffsets ${topic}-${p.partitionIndex}: error ${r.errorCode}`);
        out[p.partitionIndex] = Number(r.offset);
      }
      return out;
    });
  }

  close() {
    return this.pool.close();
  }
}

/** The latest commit per partition in the members' logs (C lines), for the drain. */
function loggedCommits(slots: readonly Slot[]): number[] {
  const out = new Array<number>(PARTITIONS).fill(-1);
  for (const s of slots) {
    let text = '';
    try {
      text = readFileSync(s.logFile, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n')) {
      if (!line.startsWith('C ')) continue;
      const [, , p, o] = line.split(' ');
      out[Number(p)] = Math.max(out[Number(p)]!, Number(o));
    }
  }
  return out;
}

export async function runChaos(o: ChaosOptions): Promise<ChaosResult> {
  const started = Date.now();
  const log = o.log ?? (() => {});
  const { cluster, seed } = o;
  const mode = o.concurrent ? `${o.groupProtocol}-concurrent` : o.groupProtocol;
  const tag = `${mode}-${seed}-${Date.now().toString(36)}`;
  const topic = `chaos-${tag}`;
  const groupId = `chaos-${tag}`;
  const dir = join(o.dir, tag);
  mkdirSync(dir, { recursive: true });
  log(`chaos ${mode} seed ${seed}: topic ${topic}, logs in ${dir}`);
  await createTopic(cluster, { topic, partitions: PARTITIONS, replicationFactor: 3, config: { 'min.insync.replicas': 2, 'unclean.leader.election.enable': 'false' } });

  const admin = new Admin(cluster.bootstrap);
  const faults: FaultRecord[] = [];
  const kills: { slot: number; at: number }[] = [];
  const frozen: { slot: number; from: number; to: number }[] = [];
  const terms: { slot: number; at: number }[] = [];
  const slots: Slot[] = [];
  const brokerDown = { node: -1 as number, back: Promise.resolve() };
  const background: Promise<void>[] = [];
  let producer: ReturnType<typeof startProducer> | undefined;
  const proxies: FaultProxy[] = [];

  const nodeById = (id: number) => cluster.nodes.find((n) => n.nodeId === id);

  /** Applies one fault; what lifts it (restart, SIGCONT, end of black hole) runs in the background. */
  async function apply(f: PlannedFault): Promise<void> {
    const slot = slots[f.member]!;
    if (f.kind === 'member-sigkill' && o.concurrent) {
      // Aimed: the kill lands right after a commit whose metadata carried finished records (its
      // head record still running), so that rule (9) sees records the metadata must keep from
      // coming again, and records in flight that must. Within 10 s, else where it falls.
      const carried = await slot.commitWithMetadata(10_000);
      log(`    ${carried ? `aimed: right after a commit with ${carried} finished record(s) in its metadata` : 'not aimed: no commit with metadata within 10 s'}`);
    }
    const at = Date.now();
    const record = (target: string, end: number) => faults.push({ kind: f.kind, target, start: at, end });
    const lifted = (target: string, work: () => Promise<void>) => {
      const entry: FaultRecord = { kind: f.kind, target, start: at, end: Infinity };
      faults.push(entry);
      background.push(
        work().then(() => {
          entry.end = Date.now();
        }),
      );
    };
    switch (f.kind) {
      case 'member-sigkill': {
        slot.signal('SIGKILL');
        kills.push({ slot: f.member, at });
        lifted(`member ${f.member}`, async () => {
          await slot.exited;
          await sleep(f.durationMs);
          slot.start();
        });
        break;
      }
      case 'member-sigterm': {
        terms.push({ slot: f.member, at });
        slot.signal('SIGTERM');
        lifted(`member ${f.member}`, async () => {
          await Promise.race([slot.exited, sleep(CLOSE_BUDGET_MS + 20_000)]);
          if (slot.running) {
            // close() overran its budget by far (the oracle reports it): kill it to go on.
            kills.push({ slot: f.member, at: Date.now() });
            slot.signal('SIGKILL');
            await slot.exited;
          }
          slot.start();
        });
        break;
      }
      case 'member-sigstop': {
        slot.signal('SIGSTOP');
        slot.frozen = true;
        lifted(`member ${f.member}`, async () => {
          await sleep(f.durationMs);
          slot.signal('SIGCONT');
          slot.frozen = false;
          frozen.push({ slot: f.member, from: at, to: Date.now() });
        });
        break;
      }
      case 'proxy-rst':
        slot.proxy.resetAll();
        record(`member ${f.member}`, at);
        break;
      case 'proxy-cut-fetch':
        slot.proxy.armCut();
        record(`member ${f.member}`, at);
        break;
      case 'proxy-blackhole':
        slot.proxy.setBlackhole(true);
        lifted(`member ${f.member}`, async () => {
          await sleep(f.durationMs);
          slot.proxy.setBlackhole(false);
        });
        break;
      case 'proxy-latency':
        slot.proxy.latencyMs = 2_000;
        lifted(`member ${f.member}`, async () => {
          await sleep(f.durationMs);
          slot.proxy.latencyMs = 0;
        });
        break;
      case 'broker-kill-leader':
      case 'broker-kill-coordinator': {
        const id = f.kind === 'broker-kill-leader' ? await admin.leaderOf(topic, f.partition) : await admin.coordinatorOf(groupId);
        const node = nodeById(id);
        if (!node) {
          log(`  ${f.kind}: no node ${id} to kill; skipped`);
          return;
        }
        await node.kill('SIGKILL');
        brokerDown.node = id;
        const killedAt = Date.now();
        const entry: FaultRecord = { kind: f.kind, target: `node ${id}${f.kind === 'broker-kill-leader' ? ` (leader of ${f.partition})` : ''}`, start: killedAt, end: Infinity };
        faults.push(entry);
        brokerDown.back = (async () => {
          await sleep(f.durationMs);
          await node.start();
          entry.end = Date.now();
          brokerDown.node = -1;
        })();
        background.push(brokerDown.back);
        break;
      }
    }
  }

  let drainMs = 0;
  let report: OracleReport;
  let highWatermarks: number[] = [];
  let produced = 0;
  let produceRate = 0;
  try {
    producer = startProducer(cluster.bootstrap, topic, seed);
    const producing = Date.now();
    for (let i = 0; i < 3; i++) {
      const proxy = await FaultProxy.start(`member ${i}`, cluster.bootstrap);
      proxies.push(proxy);
      const slot = new Slot(
        i,
        proxy,
        {
          bootstrap: await proxy.bootstrap(),
          groupId,
          topic,
          groupProtocol: o.groupProtocol,
          sessionTimeoutMs: SESSION_TIMEOUT_MS,
          heartbeatIntervalMs: HEARTBEAT_INTERVAL_MS,
          closeTimeoutMs: CLOSE_BUDGET_MS,
          ...(o.concurrent ? { concurrent: { ...CONCURRENT, seed: 0 } } : {}),
        },
        seed,
        dir,
      );
      slots.push(slot);
      slot.start();
    }
    // Every partition being read before the first fault.
    const warm = Date.now();
    for (;;) {
      const seen = new Set<number>();
      for (const s of slots) {
        try {
          for (const m of readFileSync(s.logFile, 'utf8').matchAll(/^P \d+ (\d+) /gm)) seen.add(Number(m[1]));
        } catch {
          // not written yet
        }
      }
      if (seen.size === PARTITIONS) break;
      if (Date.now() - warm > 120_000) throw new Error(`after 120 s only partitions ${[...seen].join(',')} were processed; ${slots.map((s) => s.stderrTail()).join(' | ')}`);
      await sleep(500);
    }
    log(`  every partition is read (${Date.now() - warm} ms after the members started)`);

    const plan = o.plan ?? planFaults(seed, o.faultMs, SESSION_TIMEOUT_MS);
    log(`  schedule: ${plan.map((f) => f.kind).join(', ')}`);
    for (const f of plan) {
      await sleep(f.gapMs);
      // At most one broker down; a member fault waits for its member to be back.
      if (f.kind.startsWith('broker-')) await brokerDown.back;
      const slot = slots[f.member]!;
      while (!f.kind.startsWith('broker-') && (!slot.running || slot.frozen)) await sleep(200);
      log(`  ${new Date().toISOString()} ${f.kind} member ${f.member} partition ${f.partition} for ${f.durationMs} ms`);
      await apply(f);
    }
    // The end: every fault lifted, a little more to read, then the producer stops.
    await Promise.all(background);
    await sleep(10_000);
    await producer.stop();
    produced = producer.produced;
    produceRate = Math.round(produced / ((Date.now() - producing) / 1000));
    producer = undefined;
    highWatermarks = await admin.highWatermarks(topic);
    log(`  producer stopped: ${produced} records acknowledged, high watermarks ${highWatermarks.join(' ')}`);
    const drainStart = Date.now();
    for (;;) {
      const c = loggedCommits(slots);
      if (c.every((x, p) => x === highWatermarks[p])) break;
      if (Date.now() - drainStart > 120_000) {
        log(`  drain: not at the high watermark after 120 s: committed ${c.join(' ')}`);
        break;
      }
      await sleep(500);
    }
    drainMs = Date.now() - drainStart;
    log(`  drained in ${drainMs} ms`);
    // Close every member with its budget, all at once.
    await Promise.all(
      slots.map(async (s) => {
        if (!s.running) return;
        terms.push({ slot: s.index, at: Date.now() });
        s.signal('SIGTERM');
        await Promise.race([s.exited, sleep(CLOSE_BUDGET_MS + 20_000)]);
        if (s.running) {
          s.signal('SIGKILL');
          await s.exited;
        }
      }),
    );
    const groupOffsets = (await describeGroupOffsets(cluster, groupId)).map((r) => ({
      partition: r.partition,
      committed: r.committed === null ? null : Number(r.committed),
      logEndOffset: r.logEndOffset === null ? null : Number(r.logEndOffset),
    }));
    const again = await admin.highWatermarks(topic);
    report = checkChaos({
      partitions: PARTITIONS,
      highWatermarks,
      groupOffsets,
      logs: slots.map((s) => readFileSync(s.logFile, 'utf8')),
      faults,
      kills,
      frozen,
      terms,
      sessionTimeoutMs: SESSION_TIMEOUT_MS,
      closeBudgetMs: CLOSE_BUDGET_MS,
      progressWithinMs: PROGRESS_WITHIN_MS,
      ordering: o.concurrent ? 'key' : 'partition',
    });
    if (again.some((x, p) => x !== highWatermarks[p])) report.violations.push(`the high watermarks moved after the producer stopped: ${highWatermarks.join(' ')} then ${again.join(' ')}`);
    for (const s of slots) report.violations.push(...s.unexpectedExits);
  } finally {
    await producer?.stop().catch(() => {});
    for (const s of slots) {
      if (s.running) {
        s.signal('SIGCONT');
        s.signal('SIGKILL');
        await s.exited;
      }
    }
    await Promise.allSettled(background);
    await Promise.all(proxies.map((p) => p.close()));
    await admin.close();
    // A node killed by the last fault is back before the next run (or the cluster's stop).
    for (const n of cluster.nodes) if (!n.running) await n.start();
  }

  const faultsByKind: Record<string, number> = {};
  for (const k of FAULT_KINDS) faultsByKind[k] = 0;
  for (const f of faults) faultsByKind[f.kind] = (faultsByKind[f.kind] ?? 0) + 1;
  const proxyEffects = { rst: proxies.reduce((n, p) => n + p.counts.rst, 0), cut: proxies.reduce((n, p) => n + p.counts.cut, 0) };
  const result: Omit<ChaosResult, 'summary'> = {
    seed,
    dir,
    produceRate,
    groupProtocol: o.groupProtocol,
    concurrent: o.concurrent ?? false,
    report,
    produced,
    highWatermarks,
    faultsByKind,
    proxyEffects,
    drainMs,
    durationMs: Date.now() - started,
  };
  return { ...result, summary: summarize(result) };
}

export function summarize(r: Omit<ChaosResult, 'summary'>): string {
  const rep = r.report;
  const hw = r.highWatermarks.reduce((a, b) => a + b, 0);
  const faults = Object.entries(r.faultsByKind)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  const dups = Object.entries(rep.duplicatesByCause)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  const closes = rep.closes
    .map((c) => `m${c.slot} ${c.durationMs} ms${c.timedOut ? ' (timed out)' : ''}${c.leftGroup ? '' : ' (did not leave)'}${c.uncommitted ? ` ${c.uncommitted} uncommitted` : ''}`)
    .join(', ');
  const handled = r.concurrent
    ? `${rep.processed} handler starts (${rep.unique} distinct, ${rep.processed - rep.unique} duplicates), ${rep.finished} ends`
    : `${rep.processed} processed (${rep.unique} distinct, ${rep.processed - rep.unique} duplicates)`;
  const k = rep.afterKills;
  return [
    `chaos ${r.groupProtocol}${r.concurrent ? ' concurrent' : ''} seed ${r.seed}: ${rep.violations.length === 0 ? 'PASS' : `FAIL (${rep.violations.length} violations; logs in ${r.dir})`} in ${(r.durationMs / 1000).toFixed(0)} s`,
    `  records: ${r.produced} acknowledged (${r.produceRate}/s), ${hw} below the high watermarks, ${handled}, ${rep.commits} commits (${rep.commitsWithMetadata} with finished records in the metadata)`,
    ...(k.kills
      ? [
          `  after ${k.kills} SIGKILL(s): ${k.unfinished + k.finishedAfterCommit} of the killed members' records handled again (${k.unfinished} in flight at the kill, ${k.finishedAfterCommit} finished after its last commit); ${k.carriedByMetadata} finished beyond the commit point carried by the metadata`,
        ]
      : []),
    `  faults: ${faults || 'none'} (proxy resets ${r.proxyEffects.rst}, fetch answers cut ${r.proxyEffects.cut})`,
    `  duplicates by cause: ${dups || 'none'}`,
    `  longest recovery: ${rep.longestRecovery ? `${rep.longestRecovery.ms} ms after ${rep.longestRecovery.fault}` : '-'}; longest ownership overlap ${rep.longestOverlapMs} ms; zombie deliveries ${rep.zombieDeliveries}; drain ${r.drainMs} ms`,
    `  close durations: ${closes}`,
    ...rep.violations.map((v) => `  VIOLATION ${v}`),
  ].join('\n');
}
