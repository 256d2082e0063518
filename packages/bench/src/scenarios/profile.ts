// kwire's CPU profile (node --cpu-prof) on a throughput scenario's topic, summarized for the
// fetch phase: where a goal is missed, what kwire's time goes to.
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ClientOptions } from '../clients/common.js';
import { spawnNodeClient } from '../orchestrator/node-client.js';
import { summarizeProfile } from '../report/profile.js';
import type { ProfileSummary, ScenarioInfo } from '../report/types.js';
import { step, type Ctx } from './context.js';

export async function profileKwire(ctx: Ctx, s: ScenarioInfo): Promise<ProfileSummary | null> {
  const loaded = ctx.topics.get(s.id);
  if (!loaded) return null;
  const dir = join(ctx.o.outDir, 'profiles');
  mkdirSync(dir, { recursive: true });
  const name = `kwire-${s.id}.cpuprofile`;
  step(ctx, `${s.id}: CPU profile of kwire (node --cpu-prof) into ${join(dir, name)}`);
  try {
    const options: ClientOptions = { bootstrap: ctx.target.bootstrap, topic: loaded.topic, partitions: s.partitions, records: s.records, mode: 'throughput', idleTimeoutMs: 30_000 };
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
