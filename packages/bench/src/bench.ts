// The benchmark's runner: resolve the clients' Node and what can run (node-rdkafka built once,
// kcat looked for), start or reach the broker, wait for the group coordinators, then run each
// scenario through the module of its kind (scenarios/*.ts), verify every run, take medians,
// evaluate the goals and, on request, profile kwire where a goal is missed.
import { cpus, loadavg, release, totalmem, type as osType } from 'node:os';
import { ensureKafka, startKafka, type KafkaCluster, type KafkaTarget } from '@kwire/broker';
import { groupCoordinatorsReady } from './orchestrator/coordinators.js';
import { kcatVersion } from './orchestrator/kcat.js';
import { platformaticSupports, resolveClientNode } from './orchestrator/node-runtime.js';
import { ensureRdkafka } from './orchestrator/rdkafka-build.js';
import { buildPlan, GROUP_CLIENTS, REBALANCE_CLIENTS, SHARE_CLIENTS, THROUGHPUT_CLIENTS, THROUGHPUT_VARIANTS, type Plan } from './plan.js';
import { Progress } from './progress.js';
import { evaluateGoals } from './report/goals.js';
import { clientLabel, summarize, verifyChecksums } from './report/summarize.js';
import type { BenchResults, ProfileSummary } from './report/types.js';
import { BrokerGone, type BenchOptions, type Ctx } from './scenarios/context.js';
import { fairnessClients, fairnessScenario } from './scenarios/fairness.js';
import { groupScenario } from './scenarios/group.js';
import { handlerScenario, handlerSteps } from './scenarios/handler.js';
import { latencyScenario } from './scenarios/latency.js';
import { profileKwire } from './scenarios/profile.js';
import { rebalanceScenario } from './scenarios/rebalance.js';
import { shareScenario } from './scenarios/share.js';
import { soakScenario } from './scenarios/soak.js';
import { throughputScenario, throughputSteps, topicScenario } from './scenarios/throughput.js';

export type { BenchOptions };

/**
 * --cpu-prof profiles at most this many scenarios (two kwire runs each, about 9 s: five took 45 s in the full run at 7f6def1): every
 * throughput scenario of the full plan (9), so that each missed goal's scenarios all have the
 * profile that shows where the time goes (issue 16's acceptance); 5 left four of them out.
 */
const MAX_PROFILES = 9;

export async function runBench(o: BenchOptions): Promise<BenchResults> {
  const started = Date.now();
  const plan = filterPlan(buildPlan(o.mode, o.reps), o.scenarios);
  const boot = new Progress(0);
  // Other work on the machine skews every figure: say how busy it was when the run started and ended.
  const loadAtStart = loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
  boot.log(`${o.mode} run: ${plan.scenarios.map((s) => s.id).join(', ')}`);
  const node = resolveClientNode(o.node);
  boot.log(`clients run under Node ${node.version} (${node.path})`);
  const notes: string[] = [];
  if (node.fallback) {
    boot.log(`WARNING: ${node.fallback}`);
    notes.push(node.fallback);
  }
  // null = available; a string = why not.
  const available = new Map<string, string | null>();
  for (const c of THROUGHPUT_CLIENTS) available.set(c, null);
  if (!platformaticSupports(node.version)) available.set('platformatic', `@platformatic/kafka 2.x needs Node >= 22.22 or >= 24.6; the clients run under ${node.version}`);
  const kcat = kcatVersion();
  if (kcat === null) available.set('kcat', "kcat is not on the PATH: install it with `apt-get install -y kcat` (Debian's kcat, librdkafka 2.0.2) and run again");
  else boot.log(`kcat: ${kcat}`);
  // --clients names families or variants; a family none of whose variants is named is not selected.
  const selected = (family: string) => !o.clients || THROUGHPUT_VARIANTS.some((v) => v.family === family && (o.clients!.includes(v.id) || o.clients!.includes(family)));
  for (const c of THROUGHPUT_CLIENTS) if (!selected(c)) available.set(c, 'not selected (--clients)');
  // The handler-bound family (issue 31) has no node-rdkafka row: a run of it alone builds nothing.
  if (plan.scenarios.every((s) => s.kind === 'handler-io' || s.kind === 'handler-cpu')) available.set('rdkafka', 'no scenario of this run measures it');
  const rd = available.get('rdkafka') === null ? ensureRdkafka(node, (l) => boot.log(l), { build: o.mode !== 'quick' }) : { ok: false, reason: available.get('rdkafka')! };
  if (!rd.ok) available.set('rdkafka', rd.reason ?? 'node-rdkafka could not be built');
  else {
    boot.log(`node-rdkafka ${rd.version} (librdkafka ${rd.librdkafka}, ${rd.features?.join(', ')}): ${rd.built ? 'built' : 'already built'} for Node ${node.version} in ${rd.dir}`);
    if (rd.noZstd) {
      boot.log(`WARNING: ${rd.noZstd}`);
      notes.push(`node-rdkafka: ${rd.noZstd}; it is skipped on zstd topics`);
    }
  }
  for (const [c, why] of available) if (why) boot.log(`skipping ${clientLabel(c)}: ${why}`);

  let cluster: KafkaCluster | undefined;
  let target: KafkaTarget;
  if (o.bootstrap) target = { bootstrap: o.bootstrap, dist: await ensureKafka(undefined, { log: (l: string) => boot.log(l) }) };
  else {
    cluster = await startKafka({ log: (l: string) => boot.log(l) });
    target = cluster;
  }
  let coordinators;
  try {
    coordinators = await groupCoordinatorsReady(target.bootstrap);
  } catch (err) {
    await cluster?.stop();
    throw err;
  }
  boot.log(`group coordinators ready: ${coordinators.partitions} partitions of __consumer_offsets answered in ${coordinators.milliseconds} ms (${coordinators.rounds} round(s))`);
  boot.end();
  const ctx: Ctx = { o, cluster, target, node, available, rdkafka: rd, progress: boot, runs: [], allocs: [], topics: new Map(), notes };
  const progress = new Progress(countSteps(ctx, plan));
  ctx.progress = progress;
  const profiles: ProfileSummary[] = [];
  let results: BenchResults;
  try {
    for (const s of plan.scenarios) {
      try {
        if (s.kind === 'throughput') await throughputScenario(ctx, s);
        else if (s.kind === 'topic') await topicScenario(ctx, s);
        else if (s.kind === 'group') await groupScenario(ctx, s);
        else if (s.kind === 'latency') await latencyScenario(ctx, s, plan.latencyClients);
        else if (s.kind === 'rebalance') await rebalanceScenario(ctx, s);
        else if (s.kind === 'share') await shareScenario(ctx, s);
        else if (s.kind === 'fairness') await fairnessScenario(ctx, s);
        else if (s.kind === 'handler-io' || s.kind === 'handler-cpu') await handlerScenario(ctx, s);
        else await soakScenario(ctx, s);
      } catch (err) {
        // A scenario that cannot run (its topic failed to load) is shown, not hidden.
        progress.log(`${s.id} FAILED: ${(err as Error).message}`);
        notes.push(`${s.id} could not run: ${(err as Error).message.split('\n')[0]}`);
        if (err instanceof BrokerGone) {
          notes.push('the run stopped there: every later scenario is missing');
          break;
        }
      }
    }
    verifyChecksums(ctx.runs, plan.scenarios);
    const rows = summarize(ctx.runs, ctx.allocs, plan.scenarios);
    const goals = evaluateGoals(rows, plan.scenarios);
    if (o.cpuProf) {
      const measuredSeconds = Math.round((Date.now() - started) / 1000);
      const profilesStarted = Date.now();
      // The scenarios of missed ratio goals first (where kwire is slower than asked), then those of
      // missed limits (CPU per GB, heap, stalls: nearly every scenario when missed); at most
      // MAX_PROFILES, two kwire runs each.
      const missedGoals = goals.filter((g) => g.met === false);
      const order = [...missedGoals.filter((g) => g.direction === 'min'), ...missedGoals.filter((g) => g.direction === 'max')].flatMap((g) => g.scenarios);
      const throughputIds = new Set(plan.scenarios.filter((s) => s.kind === 'throughput').map((s) => s.id));
      const wanted = [...new Set(order)].filter((id) => throughputIds.has(id));
      let ids = wanted.slice(0, MAX_PROFILES);
      if (wanted.length > ids.length) notes.push(`profiles: ${wanted.length} scenarios had a missed goal; the first ${ids.length} were profiled (not ${wanted.slice(ids.length).join(', ')})`);
      if (ids.length === 0)
        ids = plan.scenarios
          .filter((s) => s.kind === 'throughput')
          .slice(0, 1)
          .map((s) => s.id);
      progress.addSteps(ids.length);
      try {
        for (const id of ids) {
          const p = await profileKwire(ctx, plan.scenarios.find((s) => s.id === id)!);
          if (p) profiles.push(p);
        }
      } catch (err) {
        notes.push(`profiles: ${(err as Error).message.split('\n')[0]}`);
      }
      notes.push(`time: the measured run took ${measuredSeconds} s (what a run without --cpu-prof takes); the profiles after it ${Math.round((Date.now() - profilesStarted) / 1000)} s`);
    }
    notes.push(
      `load average (1, 5, 15 min) at the start: ${loadAtStart}; at the end: ${loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')} (${cpus().length} cores; the bench's own clients and broker count too)`,
    );
    const cpu = cpus();
    results = {
      machine: { cpus: cpu.length, model: cpu[0]?.model ?? '?', memoryGb: Math.round(totalmem() / 2 ** 30), os: osType(), kernel: release() },
      node: { orchestrator: process.versions.node, clients: node.version, path: node.path },
      broker: { version: target.dist.version.text, bootstrap: target.bootstrap, startedByBench: cluster !== undefined },
      mode: o.mode,
      ...(o.heapMiB ? { heapMiB: o.heapMiB } : {}),
      startedAt: new Date(started).toISOString(),
      durationSeconds: Math.round((Date.now() - started) / 1000),
      // Families that ran or could have: an opt-in experiment is listed only when asked for.
      clients: THROUGHPUT_CLIENTS.filter((id) => THROUGHPUT_VARIANTS.some((v) => v.family === id && (!v.optIn || o.clients?.includes(v.id)))).map((id) => ({
        id,
        label: id === 'kcat' && kcat ? kcat : id === 'rdkafka' && rd.ok ? `node-rdkafka ${rd.version} (librdkafka ${rd.librdkafka})` : clientLabel(id),
        available: available.get(id) === null,
        ...(available.get(id) ? { reason: available.get(id)! } : {}),
      })),
      scenarios: plan.scenarios,
      results: rows,
      goals,
      profiles,
      notes,
    };
  } finally {
    progress.end();
    await cluster?.stop();
  }
  return results;
}

function filterPlan(plan: Plan, only?: string[]): Plan {
  if (!only) return plan;
  const keep = new Set(only);
  // A dependent scenario brings the one whose topic it reads.
  for (const s of plan.scenarios) if (keep.has(s.id) && s.topicOf) keep.add(s.topicOf);
  return { ...plan, scenarios: plan.scenarios.filter((s) => keep.has(s.id)) };
}

function countSteps(ctx: Ctx, plan: Plan): number {
  const ok = (c: string) => ctx.available.get(c) === null;
  let n = 0;
  let handlerTopic = true;
  for (const s of plan.scenarios) {
    if (s.kind === 'throughput') n += throughputSteps(ctx, s);
    else if (s.kind === 'group') n += s.repetitions * GROUP_CLIENTS.filter(ok).length;
    else if (s.kind === 'latency') n += s.repetitions * plan.latencyClients.filter(ok).length;
    else if (s.kind === 'rebalance') n += s.repetitions * REBALANCE_CLIENTS.filter(ok).length;
    else if (s.kind === 'share') n += SHARE_CLIENTS.filter(ok).length;
    else if (s.kind === 'fairness') n += (s.topicOf ? 0 : 1) + s.repetitions * fairnessClients(plan.mode).filter(ok).length;
    else if (s.kind === 'handler-io' || s.kind === 'handler-cpu') {
      n += handlerSteps(ctx, s, handlerTopic);
      handlerTopic = false;
    } else n += 1;
  }
  return n;
}
