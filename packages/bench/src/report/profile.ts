// Top functions by self time from a V8 .cpuprofile (what `node --cpu-prof` writes): each sample is
// charged to the node it landed in, with the time delta that follows it; nodes are grouped by
// function, file and line. "(idle)" is left out: it is the loop waiting, not work.
import { basename } from 'node:path';
import type { ProfileSummary } from './types.js';

interface CpuProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
interface CpuProfile {
  startTime?: number;
  nodes: CpuProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/**
 * `window` (microseconds on the profile's clock, the monotonic one process.hrtime uses) keeps only
 * the samples taken in it: the fetch phase, without Node's start-up and module loading.
 */
export function summarizeProfile(profile: CpuProfile, scenario: string, file: string, top = 15, window?: { fromUs: number; toUs: number }): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, { name: string; where: string; us: number }>();
  let total = 0;
  let t = profile.startTime ?? 0;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i] ?? 0;
    if (window && (t < window.fromUs || t > window.toUs)) continue;
    const node = byId.get(profile.samples[i]!);
    // timeDeltas[i] is the time before sample i; the time a sample stands for is the next delta.
    const us = profile.timeDeltas[i + 1] ?? 0;
    if (!node || us <= 0) continue;
    const f = node.callFrame;
    if (f.functionName === '(idle)') continue;
    total += us;
    const where = f.url ? `${shortUrl(f.url)}:${f.lineNumber + 1}` : '';
    const key = `${f.functionName}|${where}`;
    const e = self.get(key);
    if (e) e.us += us;
    else self.set(key, { name: f.functionName || '(anonymous)', where, us });
  }
  const list = [...self.values()].sort((a, b) => b.us - a.us).slice(0, top);
  return {
    scenario,
    file,
    totalMs: Math.round(total / 1000),
    top: list.map((e) => ({ name: e.name, where: e.where, selfMs: Math.round(e.us / 100) / 10, percent: total ? Math.round((e.us / total) * 1000) / 10 : 0 })),
  };
}

/** node_modules/<pkg>/... or packages/<pkg>/..., else the file name. */
function shortUrl(url: string): string {
  const path = url.replace(/^file:\/\//, '');
  const nm = path.lastIndexOf('node_modules/');
  if (nm >= 0) return path.slice(nm + 'node_modules/'.length);
  const pk = path.indexOf('packages/');
  if (pk >= 0) return path.slice(pk + 'packages/'.length).replace('/dist/src/', '/');
  return path.startsWith('node:') ? path : basename(path);
}
