// From runs to rows: checksum verification against the scenario's agreed reference, then medians
// over repetitions and ratios to the ceiling. Pure functions (unit-tested on fixed inputs).
import { handlerVariantById, THROUGHPUT_VARIANTS, variantById } from '../plan.js';
import type { AllocRecord, LatencyFigures, ResultRow, RunRecord, ScenarioInfo } from './types.js';

export const CLIENT_LABELS: Record<string, string> = {
  kwire: 'kwire',
  'kwire-nocrc': 'kwire, checkCrcs: false',
  'kwire-kafkajs': '@kwire/kafkajs (kafkajs API on kwire)',
  'kwire-cursor': 'kwire, batch.cursor()',
  'kwire-4mib': 'kwire, maxPartitionFetchBytes 4 MiB',
  'kwire-1mib': 'kwire, maxPartitionFetchBytes 1 MiB (fixed)',
  'kwire-owned': "kwire, recordBuffers 'owned'",
  kafkajs: 'kafkajs',
  platformatic: '@platformatic/kafka',
  rdkafka: 'node-rdkafka (librdkafka)',
  java: 'Java consumer',
  kcat: 'kcat (librdkafka)',
  'java-parallel': "Confluent's parallel-consumer (Java)",
  ceiling: 'transport ceiling',
  'ceiling-decompress': 'transport ceiling, decompressing',
  'ceiling-burn': 'transport ceiling, burning CPU',
  'split-main': 'experiment: transport and decode on the main thread',
  'split-worker': 'experiment: transport on a worker thread',
  'split-worker-crc': 'experiment: transport and CRC on a worker thread',
};

/** A client family or variant ("family@setting") in words. */
export function clientLabel(id: string): string {
  const at = id.indexOf('@');
  if (at < 0) return CLIENT_LABELS[id] ?? id;
  return `${CLIENT_LABELS[id.slice(0, at)] ?? id.slice(0, at)} @${id.slice(at + 1)}`;
}

/** The family of a client id ("platformatic@4MiB" -> "platformatic"). */
export function familyOf(id: string): string {
  const at = id.indexOf('@');
  return at < 0 ? id : id.slice(0, at);
}

/** What verification can cover for each client. */
export function verificationOf(client: string, kind: ScenarioInfo['kind']): string {
  if (kind === 'group') return 'every offset consumed, count and checksum of the union of members';
  if (kind === 'rebalance') return 'first record delivered';
  if (kind === 'share') return client === 'java' ? "count and bytes, from ShareConsumerPerformance's result line" : 'every offset once across the members, count and checksum of every value';
  if (familyOf(client) === 'java') return kind === 'throughput' ? 'count and checksum of every value (BenchJava computes the same digest)' : 'count';
  if (client.startsWith('ceiling')) return 'count, from the fetch offsets (values not decoded)';
  if (client.startsWith('kcat')) return 'count and value bytes, from its output (-f "%S\\n": each value\'s size)';
  if (kind === 'handler-io' || kind === 'handler-cpu') return 'every record handled once (by partition and offset), its key against its value, per-key order where the setting promises it';
  return 'count and checksum of every value';
}

export function median(values: readonly (number | null | undefined)[]): number | null {
  const v = values.filter((x): x is number => typeof x === 'number' && Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return null;
  const mid = v.length >> 1;
  return v.length % 2 ? v[mid]! : (v[mid - 1]! + v[mid]!) / 2;
}

/**
 * The reference checksum of each scenario: the one most runs agree on (clients are independent
 * implementations, so a decoding bug shows as a minority). Group scenarios are checked against
 * the reference of the scenario whose topic they read.
 */
export function referenceChecksums(runs: readonly RunRecord[], scenarios: readonly ScenarioInfo[]): Map<string, string> {
  const out = majorities(runs, scenarios, (s) => (s.kind === 'throughput' ? s.id : undefined));
  for (const s of scenarios) if (s.topicOf && out.has(s.topicOf)) out.set(s.id, out.get(s.topicOf)!);
  // A topic with no throughput runs (kind 'topic', plan.ts): the clients that read it in full vote
  // (the group and share runs: kwire, kafkajs, @platformatic/kafka, node-rdkafka).
  const byTopic = majorities(runs, scenarios, (s) => ((s.kind === 'group' || s.kind === 'share') && s.topicOf && !out.has(s.topicOf) ? s.topicOf : undefined));
  for (const [topic, checksum] of byTopic) for (const s of scenarios) if (s.topicOf === topic && !out.has(s.id)) out.set(s.id, checksum);
  return out;
}

/** The checksum most verified runs agree on, per key (`keyOf` a run's scenario; undefined: the run does not vote). */
function majorities(runs: readonly RunRecord[], scenarios: readonly ScenarioInfo[], keyOf: (s: ScenarioInfo) => string | undefined): Map<string, string> {
  const votes = new Map<string, Map<string, number>>();
  for (const r of runs) {
    if (r.checksum === null || r.status !== 'ok') continue;
    const s = scenarios.find((x) => x.id === r.scenario);
    const key = s && keyOf(s);
    if (!key) continue;
    let m = votes.get(key);
    if (!m) votes.set(key, (m = new Map()));
    m.set(r.checksum, (m.get(r.checksum) ?? 0) + 1);
  }
  const out = new Map<string, string>();
  for (const [key, m] of votes) {
    const best = [...m].sort((a, b) => b[1] - a[1])[0];
    if (best) out.set(key, best[0]);
  }
  return out;
}

/** Marks runs whose checksum differs from the reference as failed (in place); returns them. */
export function verifyChecksums(runs: RunRecord[], scenarios: readonly ScenarioInfo[]): RunRecord[] {
  const refs = referenceChecksums(runs, scenarios);
  for (const r of runs) {
    if (r.status !== 'ok' || r.checksum === null) continue;
    const s = scenarios.find((x) => x.id === r.scenario);
    if (!s || (s.kind !== 'throughput' && s.kind !== 'group' && s.kind !== 'share')) continue;
    const ref = refs.get(r.scenario);
    if (ref !== undefined && r.checksum !== ref) {
      r.status = 'failed';
      r.reason = `checksum ${r.checksum} differs from the reference ${ref} most clients agree on`;
    }
  }
  return runs;
}

function round(n: number | null, digits = 2): number | null {
  if (n === null) return null;
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

/** One row per (scenario, client), in scenario order then client order of first appearance. */
export function summarize(runs: readonly RunRecord[], allocs: readonly AllocRecord[], scenarios: readonly ScenarioInfo[]): ResultRow[] {
  const rows: ResultRow[] = [];
  for (const s of scenarios) {
    // Throughput rows in the plan's client order (kwire first, each family's variants together).
    const order = (c: string) => {
      const i = THROUGHPUT_VARIANTS.findIndex((v) => v.id === c);
      return i < 0 ? THROUGHPUT_VARIANTS.length : i;
    };
    const seen = [...new Set(runs.filter((r) => r.scenario === s.id).map((r) => r.client))];
    const clients = s.kind === 'throughput' ? seen.sort((a, b) => order(a) - order(b)) : seen;
    for (const client of clients) {
      const mine = runs.filter((r) => r.scenario === s.id && r.client === client);
      const ok = mine.filter((r) => r.status === 'ok');
      const failed = mine.filter((r) => r.status === 'failed');
      const status = mine.every((r) => r.status === 'skipped') ? 'skipped' : failed.length > 0 ? 'failed' : 'ok';
      const use = ok.length > 0 ? ok : mine;
      const alloc = allocs.find((a) => a.scenario === s.id && a.client === client);
      const pick = <K extends keyof RunRecord>(k: K) => median(use.map((r) => r[k] as number | null));
      const row: ResultRow = {
        scenario: s.id,
        kind: s.kind,
        client,
        label: clientLabel(client),
        status,
        verified: status === 'ok',
        verification: verificationOf(client, s.kind),
        repetitions: mine.length,
        recordsPerSec: round(pick('recordsPerSec'), 0),
        mbPerSec: round(pick('mbPerSec')),
        totalRecordsPerSec: round(pick('totalRecordsPerSec'), 0),
        firstToLastRecordsPerSec: round(median(use.map((r) => r.firstToLastRecordsPerSec)), 0),
        fetchSeconds: round(pick('fetchSeconds'), 3),
        totalSeconds: round(pick('totalSeconds'), 3),
        cpuSeconds: round(pick('cpuSeconds')),
        peakRssMb: round(pick('peakRssMb'), 1),
        gcMs: round(pick('gcMs'), 1),
        allocBytesPerRecord: alloc?.allocBytesPerRecord ?? null,
        maxEventLoopStallMs: round(pick('maxEventLoopStallMs')),
        maxGcPauseMs: round(median(use.map((r) => r.maxGcPauseMs ?? null))),
        p99EventLoopDelayMs: round(median(use.map((r) => r.p99EventLoopDelayMs ?? null))),
        cpuUserSeconds: round(median(use.map((r) => r.cpuUserSeconds ?? null))),
        cpuSystemSeconds: round(median(use.map((r) => r.cpuSystemSeconds ?? null))),
        ratioToCeiling: null,
        runsRecordsPerSec: mine.map((r) => (r.status === 'ok' ? r.recordsPerSec : null)),
        spread: spreadOf(ok.map((r) => r.recordsPerSec)),
      };
      if (s.kind === 'throughput' && ok.length) {
        const secs = ok.map((r) => r.fetchSeconds).filter((n): n is number => n !== null);
        const bytes = ok.map((r) => r.bytes).filter((n): n is number => n !== null);
        if (secs.length) row.passSeconds = [round(Math.min(...secs), 3)!, round(Math.max(...secs), 3)!];
        if (bytes.length) row.passBytes = [Math.min(...bytes), Math.max(...bytes)];
        row.cappedPasses = ok.filter((r) => r.capped).length;
        if (s.passSeconds) row.shortPasses = ok.filter((r) => (r.fetchSeconds ?? 0) < s.passSeconds! && (r.bytes ?? 0) < 1e9).length;
      }
      const variant = s.kind === 'throughput' ? variantById(client) : handlerVariantById(s.kind, client);
      if (variant) {
        row.family = variant.family;
        row.setting = variant.setting;
      }
      const reasons = [...new Set(mine.filter((r) => r.status !== 'ok' && r.reason).map((r) => r.reason!))];
      if (reasons.length) row.reason = reasons.join('; ');
      if (alloc?.reason) row.notes = [...(row.notes ?? []), `alloc: ${alloc.reason}`];
      const notes = [...new Set(mine.flatMap((r) => r.notes ?? []))];
      if (notes.length) row.notes = [...(row.notes ?? []), ...notes];
      if (s.kind === 'latency') {
        const l = use.map((r) => r.latency).filter((x) => x !== undefined);
        if (l.length) {
          row.latency = {
            p50: round(median(l.map((x) => x.p50)), 3)!,
            p99: round(median(l.map((x) => x.p99)), 3)!,
            p999: round(median(l.map((x) => x.p999)), 3)!,
            max: round(median(l.map((x) => x.max)), 3)!,
            p99All: round(median(l.map((x) => x.p99All)), 3)!,
            count: median(l.map((x) => x.count))!,
            warmupExcluded: median(l.map((x) => x.warmupExcluded))!,
          };
        }
      }
      if (s.kind === 'rebalance') {
        row.joinToFirstRecordMs = round(median(use.map((r) => r.joinToFirstRecordMs)), 1);
        row.runsValues = mine.map((r) => (r.status === 'ok' ? (r.joinToFirstRecordMs ?? null) : null));
      }
      if (s.kind === 'latency') row.runsValues = mine.map((r) => (r.status === 'ok' ? (r.latency?.p99 ?? null) : null));
      if (s.kind === 'fairness') {
        const f = use.map((r) => r.fairness).filter((x) => x !== undefined);
        if (f.length) {
          const figures = (all: LatencyFigures[]): LatencyFigures => ({
            count: Math.round(median(all.map((x) => x.count))!),
            p50: round(median(all.map((x) => x.p50)), 3)!,
            p99: round(median(all.map((x) => x.p99)), 3)!,
            p999: round(median(all.map((x) => x.p999)), 3)!,
            max: round(median(all.map((x) => x.max)), 3)!,
          });
          const lat = (k: 'before' | 'during') => figures(f.map((x) => x[k]));
          const split = f.map((x) => x.split).filter((x) => x !== undefined);
          row.fairness = {
            before: lat('before'),
            during: lat('during'),
            backlogRecords: Math.round(median(f.map((x) => x.backlogRecords))!),
            drainSeconds: round(median(f.map((x) => x.drainSeconds)), 3)!,
            drainRecordsPerSec: round(median(f.map((x) => x.drainRecordsPerSec)), 0)!,
          };
          // Medians of each part apart: they need not add up to the median of the whole.
          if (split.length === f.length)
            row.fairness.split = {
              toAnswer: figures(split.map((x) => x.toAnswer)),
              inConsumer: figures(split.map((x) => x.inConsumer)),
              maxLoopStallMs: round(median(split.map((x) => x.maxLoopStallMs)), 2)!,
            };
          const cpu = split.map((x) => x.cpu).filter((x) => x !== undefined);
          if (row.fairness.split && cpu.length === split.length && cpu.length > 0) {
            const m = (k: 'before' | 'during', f: 'runMsPerSec' | 'waitMsPerSec') => round(median(cpu.map((x) => x[k][f])), 0)!;
            row.fairness.split.cpu = {
              before: { runMsPerSec: m('before', 'runMsPerSec'), waitMsPerSec: m('before', 'waitMsPerSec') },
              during: { runMsPerSec: m('during', 'runMsPerSec'), waitMsPerSec: m('during', 'waitMsPerSec') },
            };
          }
        }
        row.runsValues = mine.map((r) => (r.status === 'ok' ? (r.fairness?.during.p99 ?? null) : null));
      }
      if (s.kind === 'soak') row.rssByPassMb = use[0]?.rssByPassMb;
      if (s.kind === 'group') row.duplicates = median(use.map((r) => r.duplicates ?? 0)) ?? 0;
      if (s.kind === 'share') row.members = s.members ?? 1;
      // One run per row: its figures as they are.
      if (s.kind === 'handler-io' || s.kind === 'handler-cpu') row.handler = use.find((r) => r.handler)?.handler;
      rows.push(row);
    }
    const ceiling = rows.find((r) => r.scenario === s.id && r.client === 'ceiling' && r.verified);
    if (ceiling?.recordsPerSec) {
      for (const r of rows) {
        if (r.scenario === s.id && r.recordsPerSec !== null && r.verified) r.ratioToCeiling = round(r.recordsPerSec / ceiling.recordsPerSec, 3);
      }
    }
  }
  return rows;
}

/** (max - min) / median of the figures, or null with fewer than two. */
export function spreadOf(values: readonly (number | null)[]): number | null {
  const v = values.filter((x): x is number => typeof x === 'number' && Number.isFinite(x));
  const m = median(v);
  if (v.length < 2 || !m) return null;
  return Math.round(((Math.max(...v) - Math.min(...v)) / m) * 1000) / 1000;
}

/** A family's verified row with the highest median records/s in a scenario (its best setting), or undefined. */
export function bestOf(rows: readonly ResultRow[], scenario: string, family: string): ResultRow | undefined {
  let best: ResultRow | undefined;
  for (const r of rows) {
    if (r.scenario !== scenario || familyOf(r.client) !== family || !r.verified || !r.recordsPerSec) continue;
    if (!best || r.recordsPerSec > best.recordsPerSec!) best = r;
  }
  return best;
}

/** The peer families kwire is ranked against (the goals and the report's ratio tables). */
export const PEER_FAMILIES = ['kafkajs', 'platformatic', 'rdkafka', 'java', 'kcat'] as const;
/** Issue 32: a scenario ranks the clients when no compared row spreads more than this. */
export const RANKING_SPREAD = 0.15;

/**
 * Whether a throughput scenario ranks the clients: the rows it compares (kwire at its defaults and
 * each peer family's best) each spread at most RANKING_SPREAD; `over` names the rows that do not.
 */
export function ranking(rows: readonly ResultRow[], scenario: string): { ranks: boolean; over: { label: string; spread: number }[] } {
  const compared: ResultRow[] = [];
  const kwire = rows.find((r) => r.scenario === scenario && r.client === 'kwire' && r.verified);
  if (kwire) compared.push(kwire);
  for (const f of PEER_FAMILIES) {
    const b = bestOf(rows, scenario, f);
    if (b) compared.push(b);
  }
  const over = compared.filter((r) => r.spread !== null && r.spread > RANKING_SPREAD).map((r) => ({ label: r.label, spread: r.spread! }));
  return { ranks: over.length === 0, over };
}

/** Client a's median records/s over the best variant of family b in the same scenario, or null. */
export function ratioToBest(rows: readonly ResultRow[], scenario: string, a: string, family: string): number | null {
  const x = rows.find((r) => r.scenario === scenario && r.client === a);
  const y = bestOf(rows, scenario, family);
  if (!x?.verified || !x.recordsPerSec || !y?.recordsPerSec) return null;
  return x.recordsPerSec / y.recordsPerSec;
}

/** kwire's median records/s over another client's in the same scenario (both verified), or null. */
export function ratio(rows: readonly ResultRow[], scenario: string, a: string, b: string): number | null {
  const x = rows.find((r) => r.scenario === scenario && r.client === a);
  const y = rows.find((r) => r.scenario === scenario && r.client === b);
  if (!x?.verified || !y?.verified || !x.recordsPerSec || !y.recordsPerSec) return null;
  return x.recordsPerSec / y.recordsPerSec;
}
