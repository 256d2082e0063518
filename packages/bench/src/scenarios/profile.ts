// kwire's CPU profile (node --cpu-prof) on a throughput scenario's topic, summarized for the
// fetch phase: where a goal is missed, what kwire's time goes to.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { ClientOptions } from '../clients/common.js';
import { spawnNodeClient } from '../orchestrator/node-client.js';
import { parsePerfReport } from '../report/perf.js';
import { summarizeProfile } from '../report/profile.js';
import type { PerfSummary, ProfileSummary, ScenarioInfo } from '../report/types.js';
import { step, type Ctx } from './context.js';

export async function profileKwire(ctx: Ctx, s: ScenarioInfo): Promise<ProfileSummary | null> {
  const loaded = ctx.topics.get(s.id);
  if (!loaded) return null;
  const dir = join(ctx.o.outDir, 'profiles');
  mkdirSync(dir, { recursive: true });
  const name = `kwire-${s.id}.cpuprofile`;
  step(ctx, `${s.id}: CPU profile of kwire (node --cpu-prof) into ${join(dir, name)}`);
  try {
    const options: ClientOptions = {
      bootstrap: ctx.target.bootstrap,
      topic: loaded.topic,
      partitions: s.partitions,
      records: s.records,
      mode: 'throughput',
      touch: s.touch ?? 'value',
      idleTimeoutMs: 30_000,
    };
    const r = await spawnNodeClient({
      node: ctx.node.path,
      client: 'kwire',
      options,
      nodeFlags: ['--cpu-prof', '--cpu-prof-interval', '100', '--cpu-prof-dir', dir, '--cpu-prof-name', name],
      timeoutMs: 600_000,
    }).done;
    if (r.records !== s.records) throw new Error(`profiled run consumed ${r.records} records`);
    const profile = JSON.parse(readFileSync(join(dir, name), 'utf8')) as Parameters<typeof summarizeProfile>[0];
    // Only the fetch phase: Node's start-up and module loading are a large share of a short run.
    const window = r.hrReadyUs !== null && r.hrLastUs !== null ? { fromUs: r.hrReadyUs, toUs: r.hrLastUs } : undefined;
    let summary = summarizeProfile(profile, s.id, `results/profiles/${name}`, 15, window);
    if (window && summary.totalMs === 0) summary = summarizeProfile(profile, s.id, `results/profiles/${name}`, 15);
    else if (window) summary.fetchPhaseOnly = true;
    // Where the CPU goes, the kernel's part apart (syscalls, copies out of the socket).
    summary.cpuUserSeconds = r.fetchCpuUserSeconds ?? null;
    summary.cpuSystemSeconds = r.fetchCpuSystemSeconds ?? null;
    ctx.progress.log(`  fetch phase CPU: user ${summary.cpuUserSeconds} s, system ${summary.cpuSystemSeconds} s`);
    summary.perf = await perfRecord(ctx, s, options, dir);
    if (summary.perf.top.length)
      ctx.progress.log(
        `  perf: ${summary.perf.top
          .slice(0, 5)
          .map((t) => `${t.symbol} ${t.percent}%`)
          .join(', ')}`,
      );
    else ctx.progress.log(`  perf: ${summary.perf.reason ?? 'no samples'}`);
    ctx.progress.log(
      `  top: ${summary.top
        .slice(0, 5)
        .map((t) => `${t.name} ${t.percent}%`)
        .join(', ')}`,
    );
    return summary;
  } catch (err) {
    ctx.progress.log(`  profile failed: ${(err as Error).message}`);
    ctx.notes.push(`CPU profile of ${s.id} failed: ${(err as Error).message}`);
    return null;
  }
}

const PERF = '/usr/bin/perf';
const PERF_PASSES = 5;

/**
 * A second run of the same client under `perf record` (cpu-clock samples at 499 Hz, the whole
 * process, reading the topic PERF_PASSES times), Node with --perf-basic-prof so that JS functions have names; the top 15 of
 * `perf report --sort dso,sym`. Needs perf and a perf_event_paranoid that lets a user profile its
 * own processes (<= 2); otherwise the reason is reported.
 */
async function perfRecord(ctx: Ctx, s: ScenarioInfo, options: ClientOptions, dir: string): Promise<PerfSummary> {
  if (!existsSync(PERF)) return { top: [], reason: `${PERF} not found` };
  let paranoid = 2;
  try {
    paranoid = Number(readFileSync('/proc/sys/kernel/perf_event_paranoid', 'utf8').trim());
  } catch {}
  if (paranoid > 2 && process.getuid?.() !== 0) return { top: [], reason: `perf_event_paranoid is ${paranoid}: perf record is not allowed for this user` };
  const file = join(dir, `kwire-${s.id}.perf.data`);
  const v8log = join(dir, `kwire-${s.id}.v8.log`);
  let report = '';
  try {
    // Five passes in the process, so that consuming outweighs Node's start-up in the samples.
    const out = (await spawnNodeClient({
      node: PERF,
      client: 'kwire',
      options: { ...options, warmupPasses: 0, measuredPasses: PERF_PASSES },
      // --perf-basic-prof also turns on V8's logger: its file goes beside the profiles, not into the cwd.
      nodeFlags: ['record', '-q', '-e', 'cpu-clock', '-F', '499', '-o', file, '--', ctx.node.path, '--perf-basic-prof', '--no-logfile-per-isolate', `--logfile=${v8log}`],
      timeoutMs: 600_000,
    }).done) as unknown as { passes?: { records: number }[] };
    const short = (out.passes ?? []).find((p) => p.records !== s.records);
    if (!out.passes || out.passes.length !== PERF_PASSES || short) return { top: [], reason: `the perf run did not read the topic ${PERF_PASSES} times` };
    const rep = spawnSync(PERF, ['report', '-i', file, '--stdio', '--sort', 'dso,sym', '--percent-limit', '0.5'], { encoding: 'utf8', maxBuffer: 64 << 20 });
    report = rep.stdout ?? '';
    if (rep.status !== 0) return { top: [], reason: `perf report exited with ${rep.status}: ${rep.stderr.trim().split('\n').slice(-1)[0]}` };
    return { file: `results/profiles/kwire-${s.id}.perf.data`, ...parsePerfReport(rep.stdout) };
  } catch (err) {
    return { top: [], reason: (err as Error).message.split('\n')[0]! };
  } finally {
    // The symbol map --perf-basic-prof wrote for the profiled Node (/tmp/perf-PID.map, PID as perf
    // names its JIT frames), read by perf report by now, and V8's log.
    for (const m of report.matchAll(/\[JIT\] tid (\d+)/g)) rmSync(`/tmp/perf-${m[1]}.map`, { force: true });
    rmSync(v8log, { force: true });
  }
}
