// `perf report --stdio` of a `perf record` of a client process, as a top-N of where the time went
// (shared object and symbol; JS functions named by node --perf-basic-prof). Pure (unit-tested).
import type { PerfSummary } from './types.js';

/** Parses `perf report --stdio --sort dso,sym` output: "  12.34%  node  [.] Builtins_..." lines. */
export function parsePerfReport(text: string, top = 15): Pick<PerfSummary, 'samples' | 'top'> {
  let samples: number | undefined;
  const rows: PerfSummary['top'] = [];
  for (const line of text.split('\n')) {
    const s = /^# Samples: (\d+)([KM]?)/.exec(line);
    if (s) {
      samples = Number(s[1]) * (s[2] === 'K' ? 1000 : s[2] === 'M' ? 1e6 : 1);
      continue;
    }
    if (line.startsWith('#')) continue;
    const m = /^\s*([\d.]+)%\s+(.+?)\s+\[[.k]\]\s+(.+?)\s*$/.exec(line);
    if (!m) continue;
    // JS frames (--perf-basic-prof) carry the script's URL: keep the path from packages/ or node_modules/ on.
    const symbol = m[3]!.replace(/\s+-\s+-\s*$/, '').replace(/file:\/\/\S*?\/((?:packages|node_modules)\/)/, '$1');
    rows.push({ percent: Number(m[1]), dso: m[2]!.replace(/^\[JIT\] tid \d+$/, '[JIT]'), symbol });
    if (rows.length >= top) break;
  }
  return { ...(samples !== undefined ? { samples } : {}), top: rows };
}
