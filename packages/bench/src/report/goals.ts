// The goals of issue 7, evaluated against the measured rows. Pure (unit-tested).
//
// A throughput goal is evaluated on every scenario of its record size and is met only if it is met
// on all of them: the weakest scenario is the figure reported. A scenario where kwire or the peer
// did not verify cannot count for the goal (and is named).
import { bestOf, ratioToBest } from './summarize.js';
import type { GoalResult, ResultRow, ScenarioInfo } from './types.js';

/** The flat-RSS criterion of the memory test: later passes within 10% + 32 MiB of the second. */
export function rssFlat(rssByPassMb: readonly number[]): { settled: number; worst: number; allowance: number; flat: boolean } | null {
  if (rssByPassMb.length < 3) return null;
  const settled = rssByPassMb[1]!;
  const worst = Math.max(...rssByPassMb.slice(1));
  const allowance = settled * 0.1 + 32;
  return { settled, worst, allowance: Math.round(allowance * 10) / 10, flat: worst <= settled + allowance };
}

function x(n: number): string {
  return `${n.toFixed(2)}x`;
}

function ratioGoal(
  rows: readonly ResultRow[],
  scenarios: readonly ScenarioInfo[],
  id: string,
  text: string,
  recordSize: number,
  peer: string,
  target: number,
  describe: (v: number) => string,
): GoalResult {
  // The value-only workload (the goals' own); full-touch scenarios are reported beside them.
  const ids = scenarios.filter((s) => s.kind === 'throughput' && s.recordSize === recordSize && s.touch !== 'full').map((s) => s.id);
  const measured: string[] = [];
  const missing: string[] = [];
  let worst: number | null = null;
  for (const sid of ids) {
    // Against the peer's best setting in this scenario (the ceiling has one).
    const r = ratioToBest(rows, sid, 'kwire', peer);
    if (r === null) {
      missing.push(sid);
      continue;
    }
    const best = bestOf(rows, sid, peer);
    measured.push(`${sid}: ${describe(r)}${best && best.client !== peer ? ` (against ${best.label})` : ''}`);
    if (worst === null || r < worst) worst = r;
  }
  const goal: GoalResult = {
    id,
    text,
    measured: measured.join('; ') || 'not measured',
    value: worst === null ? null : Math.round(worst * 1000) / 1000,
    target,
    direction: 'min',
    met: null,
    scenarios: ids,
  };
  if (worst === null) {
    goal.miss = ids.length ? `not evaluable: kwire or ${peer} not verified on ${missing.join(', ')}` : `no ${recordSize} B scenario in this run`;
    return goal;
  }
  goal.met = worst >= target && missing.length === 0;
  if (worst < target) goal.miss = `missed by ${((1 - worst / target) * 100).toFixed(1)}%: kwire would need to be ${((target / worst - 1) * 100).toFixed(1)}% faster on its weakest scenario`;
  else if (missing.length) goal.miss = `not evaluable on ${missing.join(', ')} (a client did not verify)`;
  return goal;
}

export function evaluateGoals(rows: readonly ResultRow[], scenarios: readonly ScenarioInfo[]): GoalResult[] {
  const goals: GoalResult[] = [
    ratioGoal(rows, scenarios, 'kafkajs-3x', 'kwire >= 3x kafkajs in records/s on 100 B records', 100, 'kafkajs', 3, x),
    ratioGoal(rows, scenarios, 'platformatic-1.5x', 'kwire >= 1.5x @platformatic/kafka in records/s on 100 B records', 100, 'platformatic', 1.5, x),
    ratioGoal(rows, scenarios, 'java-1kb', 'kwire >= the Java consumer (its fetch.* figures) in records/s on 1 KB records', 1024, 'java', 1, x),
    ratioGoal(rows, scenarios, 'ceiling-10kb', 'kwire >= 80% of the transport ceiling on 10 KB records', 10240, 'ceiling', 0.8, (v) => `${(v * 100).toFixed(1)}%`),
  ];

  const lat = scenarios.find((s) => s.kind === 'latency');
  const latRow = lat && rows.find((r) => r.scenario === lat.id && r.client === 'kwire');
  const latency: GoalResult = {
    id: 'latency-p99',
    text: 'end-to-end p99 <= 5 ms at 10,000 records/s with default fetch settings (kwire)',
    measured: 'not measured',
    value: null,
    target: 5,
    direction: 'max',
    met: null,
    scenarios: lat ? [lat.id] : [],
  };
  if (latRow?.verified && latRow.latency) {
    const l = latRow.latency;
    latency.value = l.p99;
    latency.measured = `${lat!.id}: p50 ${l.p50} ms, p99 ${l.p99} ms, p999 ${l.p999} ms (${l.count} records after warm-up; p99 with warm-up ${l.p99All} ms)`;
    const floor = rows.find((r) => r.scenario === lat!.id && r.client === 'ceiling' && r.verified)?.latency;
    if (floor) latency.measured += `; the transport's bare fetch loop on the same broker and producer: p50 ${floor.p50} ms, p99 ${floor.p99} ms, p999 ${floor.p999} ms`;
    latency.met = l.p99 <= 5;
    if (!latency.met) latency.miss = `missed by ${(l.p99 - 5).toFixed(2)} ms (${((l.p99 / 5 - 1) * 100).toFixed(0)}% over)`;
  } else latency.miss = latRow ? `kwire's latency run did not verify: ${latRow.reason ?? ''}` : 'no latency run';
  goals.push(latency);

  const soak = scenarios.find((s) => s.kind === 'soak');
  const soakRow = soak && rows.find((r) => r.scenario === soak.id && r.client === 'kwire');
  const rss: GoalResult = {
    id: 'flat-rss',
    text: "flat RSS over a long run (kwire's RSS at the end of each pass over the same topic)",
    measured: 'not measured',
    value: null,
    target: 0,
    direction: 'max',
    met: null,
    scenarios: soak ? [soak.id] : [],
  };
  const flat = soakRow?.verified && soakRow.rssByPassMb ? rssFlat(soakRow.rssByPassMb) : null;
  if (flat && soakRow?.rssByPassMb) {
    // The figure is the growth beyond the allowance (<= 0 when flat).
    rss.value = Math.round((flat.worst - flat.settled - flat.allowance) * 10) / 10;
    rss.measured = `${soak!.id}: RSS by pass ${soakRow.rssByPassMb.join(', ')} MiB; after the first pass at most ${flat.worst} MiB against ${flat.settled} MiB (allowance ${flat.allowance} MiB)`;
    rss.met = flat.flat;
    if (!flat.flat) rss.miss = `RSS grew ${(flat.worst - flat.settled).toFixed(1)} MiB after the first pass, ${(flat.worst - flat.settled - flat.allowance).toFixed(1)} MiB beyond the allowance`;
  } else rss.miss = soakRow ? `the soak run did not verify or has fewer than 3 passes: ${soakRow.reason ?? ''}` : 'no soak run';
  goals.push(rss);
  return goals;
}
