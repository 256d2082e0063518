// The goals of issue 7 and of issue 16, evaluated against the measured rows. Pure (unit-tested).
//
// A throughput goal is evaluated on every scenario of its record size and is met only if it is met
// on all of them: the weakest scenario is the figure reported. A scenario where kwire or the peer
// did not verify cannot count for the goal (and is named).
import { bestOf, PEER_FAMILIES, RANKING_SPREAD, ranking, ratioToBest } from './summarize.js';
import type { CpuShare, GoalResult, ResultRow, ScenarioInfo } from './types.js';

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

/** Which throughput scenarios a ratio goal is evaluated on. */
interface Where {
  /** One record size, or several (the goal's worst scenario over all of them counts). */
  recordSize: number | readonly number[];
  /** Default 'value': the value-only workload (the goals' own); full-touch scenarios are reported beside them. */
  touch?: 'value' | 'full';
  partitions?: number;
  compression?: ScenarioInfo['compression'];
}

function scenariosWhere(scenarios: readonly ScenarioInfo[], w: Where): ScenarioInfo[] {
  const touch = w.touch ?? 'value';
  return scenarios.filter(
    (s) =>
      s.kind === 'throughput' &&
      (typeof w.recordSize === 'number' ? s.recordSize === w.recordSize : w.recordSize.includes(s.recordSize)) &&
      (s.touch ?? 'value') === touch &&
      (w.partitions === undefined || s.partitions === w.partitions) &&
      (w.compression === undefined || s.compression === w.compression),
  );
}

/**
 * The symmetric ceiling of a scenario: on a compressed topic the one that decompresses every batch
 * too (ceiling-decompress: what any client reading those batches must at least spend), where it
 * ran; the scanning ceiling otherwise.
 */
export function symmetricCeiling(rows: readonly ResultRow[], s: ScenarioInfo): string {
  if (s.compression !== 'none' && rows.some((r) => r.scenario === s.id && r.client === 'ceiling-decompress' && r.verified)) return 'ceiling-decompress';
  return 'ceiling';
}

function ratioGoal(
  rows: readonly ResultRow[],
  scenarios: readonly ScenarioInfo[],
  id: string,
  text: string,
  where: Where | number,
  peer: string | ((s: ScenarioInfo) => string),
  target: number,
  describe: (v: number) => string,
  issue = 7,
  /** The client whose ratio to the peer's best the goal is about. */
  subject = 'kwire',
): GoalResult {
  const w = typeof where === 'number' ? { recordSize: where } : where;
  const list = scenariosWhere(scenarios, w);
  const ids = list.map((s) => s.id);
  const measured: string[] = [];
  const missing: string[] = [];
  let worst: number | null = null;
  for (const s of list) {
    const sid = s.id;
    const p = typeof peer === 'string' ? peer : peer(s);
    // Against the peer's best setting in this scenario (the ceiling has one).
    const r = ratioToBest(rows, sid, subject, p);
    if (r === null) {
      missing.push(sid);
      continue;
    }
    const best = bestOf(rows, sid, p);
    measured.push(`${sid}: ${describe(r)}${best && best.client !== (typeof peer === 'string' ? peer : '') ? ` (against ${best.label})` : ''}`);
    if (worst === null || r < worst) worst = r;
  }
  const peerName = typeof peer === 'string' ? peer : 'the ceiling';
  const goal: GoalResult = {
    id,
    issue,
    text,
    measured: measured.join('; ') || 'not measured',
    value: worst === null ? null : Math.round(worst * 1000) / 1000,
    target,
    direction: 'min',
    met: null,
    scenarios: ids,
  };
  if (worst === null) {
    goal.miss = ids.length ? `not evaluable: ${subject} or ${peerName} not verified on ${missing.join(', ')}` : `no such scenario (${describeWhere(w)}) in this run`;
    return goal;
  }
  goal.met = worst >= target && missing.length === 0;
  if (worst < target) goal.miss = `missed by ${((1 - worst / target) * 100).toFixed(1)}%: ${subject} would need to be ${((target / worst - 1) * 100).toFixed(1)}% faster on its weakest scenario`;
  else if (missing.length) goal.miss = `not evaluable on ${missing.join(', ')} (a client did not verify)`;
  return goal;
}

function describeWhere(w: Where): string {
  return [
    `${typeof w.recordSize === 'number' ? w.recordSize : w.recordSize.join(' or ')} B`,
    w.partitions ? `${w.partitions} partitions` : '',
    w.compression ?? '',
    w.touch === 'full' ? 'full touch' : 'value only',
  ]
    .filter(Boolean)
    .join(', ');
}

/** A 'max' goal over figures taken from rows: the worst figure counts; `null` figures are named as not measured. */
function maxGoal(id: string, issue: number, text: string, target: number, figures: { scenario: string; value: number | null; words: string }[], unit: string, none: string): GoalResult {
  const measured = figures.filter((f) => f.value !== null);
  const missing = figures.filter((f) => f.value === null).map((f) => f.scenario);
  const worst = measured.length ? Math.max(...measured.map((f) => f.value!)) : null;
  const goal: GoalResult = {
    id,
    issue,
    text,
    measured: measured.map((f) => `${f.scenario}: ${f.words}`).join('; ') || 'not measured',
    value: worst === null ? null : Math.round(worst * 1000) / 1000,
    target,
    direction: 'max',
    met: null,
    scenarios: figures.map((f) => f.scenario),
  };
  if (worst === null) {
    goal.miss = figures.length ? `not measured on ${missing.join(', ')}` : none;
    return goal;
  }
  goal.met = worst <= target && missing.length === 0;
  // What --cpu-prof profiles when the goal is missed: the scenarios over the target only.
  if (worst > target) goal.scenarios = measured.filter((f) => f.value! > target).map((f) => f.scenario);
  if (worst > target) {
    const over = target > 0 ? ` (${((worst / target - 1) * 100).toFixed(0)}% over)` : '';
    goal.miss = `missed by ${fmt(worst - target)} ${unit}${over} on its worst scenario (${measured.find((f) => f.value === worst)!.scenario})${missing.length ? `; not measured on ${missing.join(', ')}` : ''}`;
  } else if (missing.length) goal.miss = `not measured on ${missing.join(', ')}`;
  return goal;
}

function fmt(n: number): string {
  return Math.abs(n) >= 100 ? n.toFixed(0) : Math.abs(n) >= 10 ? n.toFixed(1) : n.toFixed(2);
}

/** kwire's default maxBufferedBytes: 2 x fetchMaxBytes (50 MiB), @kwire/consumer's config.ts. */
export const DEFAULT_MAX_BUFFERED_BYTES = 2 * 52_428_800;
/** The soak's volume goal (issue 16): RSS flat over 10 GB consumed. */
export const SOAK_GOAL_BYTES = 10e9;

/**
 * The client that measures the zero-allocation path (`ConsumerBatch.cursor()`, issue 16): the
 * 'kwire-cursor' variant of plan.ts (full runs only), in ALLOC_CLIENTS. The bench's figure is heap
 * per record over a long window, so it includes what each Fetch answer and each delivered batch
 * allocate, spread over their records; the per-record part alone is tested in the consumer
 * (test/unit/batch-cursor.test.ts).
 */
export const CURSOR_CLIENT = 'kwire-cursor';

/** The goals of issue 16 (twice Java on small records, zero allocation, no stall an embedding service can feel). */
export function issue16Goals(rows: readonly ResultRow[], scenarios: readonly ScenarioInfo[]): GoalResult[] {
  const pct = (v: number) => `${(v * 100).toFixed(1)}%`;
  const goals: GoalResult[] = [
    ratioGoal(
      rows,
      scenarios,
      'java-2x-100b',
      'kwire >= 2x the Java consumer in records/s, 100 B records, 12 partitions, value only (steady state, Java at its best)',
      { recordSize: 100, partitions: 12, compression: 'none' },
      'java',
      2,
      x,
      16,
    ),
    ratioGoal(
      rows,
      scenarios,
      'java-1.5x-100b-full',
      'kwire >= 1.5x the Java consumer in records/s, 100 B records, full touch (key, every value byte, headers, offset, timestamp)',
      { recordSize: 100, touch: 'full' },
      'java',
      1.5,
      x,
      16,
    ),
    ratioGoal(rows, scenarios, 'java-2.5x-1kb', 'kwire >= 2.5x the Java consumer in records/s on 1 KB records', { recordSize: 1024 }, 'java', 2.5, x, 16),
    ratioGoal(
      rows,
      scenarios,
      'ceiling-90-10kb',
      'kwire >= 90% of the symmetric ceiling on 10 KB records, lz4 included (compressed topics: the ceiling that decompresses too)',
      { recordSize: 10240 },
      (s) => symmetricCeiling(rows, s),
      0.9,
      pct,
      16,
    ),
  ];

  // CPU per GB consumed, against the symmetric ceiling's, on every value-only throughput scenario.
  const cpu = scenarios
    .filter((s) => s.kind === 'throughput' && (s.touch ?? 'value') === 'value')
    .map((s) => {
      const c = symmetricCeiling(rows, s);
      const k = rows.find((r) => r.scenario === s.id && r.client === 'kwire' && r.verified);
      const ce = rows.find((r) => r.scenario === s.id && r.client === c && r.verified);
      const gb = (s.records * s.recordSize) / 1e9;
      if (!k?.cpuSeconds || !ce?.cpuSeconds) return { scenario: s.id, value: null, words: '' };
      const v = k.cpuSeconds / ce.cpuSeconds;
      return { scenario: s.id, value: v, words: `${(k.cpuSeconds / gb).toFixed(2)} CPU s/GB against ${c}'s ${(ce.cpuSeconds / gb).toFixed(2)} (${x(v)})` };
    });
  goals.push(maxGoal('cpu-per-gb-1.3x', 16, "kwire's CPU per GB consumed <= 1.3x the symmetric ceiling's, every record size (fetch phase, user + system)", 1.3, cpu, 'x', 'no throughput scenario'));

  // Heap per record on the default path: the value-only scenarios (full-touch figures shown beside).
  const allocOf = (client: string, touch: 'value' | 'full') =>
    scenarios
      .filter((s) => s.kind === 'throughput' && (s.touch ?? 'value') === touch)
      .map((s) => rows.find((r) => r.scenario === s.id && r.client === client))
      .filter((r): r is ResultRow => r !== undefined)
      .map((r) => ({ scenario: r.scenario, value: r.allocBytesPerRecord, words: r.allocBytesPerRecord === null ? '' : `${r.allocBytesPerRecord} B/record` }));
  const def = maxGoal('alloc-100b', 16, 'the default path allocates <= 100 B of JS heap per record (kwire, value only)', 100, allocOf('kwire', 'value'), 'B/record', 'no allocation pass of kwire');
  const fullAlloc = allocOf('kwire', 'full').filter((f) => f.value !== null);
  if (fullAlloc.length) def.measured += ` (full touch, not counted: ${fullAlloc.map((f) => `${f.scenario} ${f.words}`).join('; ')})`;
  goals.push(def);
  const cursor = maxGoal(
    'alloc-cursor-0b',
    16,
    `the zero-allocation path (ConsumerBatch.cursor(), client '${CURSOR_CLIENT}') allocates 0 B of JS heap per record`,
    0,
    [...allocOf(CURSOR_CLIENT, 'value'), ...allocOf(CURSOR_CLIENT, 'full')],
    'B/record',
    `not measured: no '${CURSOR_CLIENT}' allocation pass in this run (full runs only)`,
  );
  goals.push(cursor);

  // Event-loop stalls at full throughput, kwire at its defaults.
  const tp = scenarios.filter((s) => s.kind === 'throughput' && (s.touch ?? 'value') === 'value');
  const kw = (s: ScenarioInfo) => rows.find((r) => r.scenario === s.id && r.client === 'kwire' && r.verified);
  const stallGoals = [
    {
      id: 'stall-max-5ms',
      field: 'maxEventLoopStallMs',
      target: 5,
      text: "largest event-loop stall at full throughput with default settings <= 5 ms (kwire, median over passes of each pass's longest)",
    },
    { id: 'stall-p99-2ms', field: 'p99EventLoopDelayMs', target: 2, text: "p99 of the event loop's 1 ms samples at full throughput with default settings <= 2 ms (kwire)" },
  ] as const;
  for (const g of stallGoals) {
    const figures = tp.map((s) => {
      const v = kw(s)?.[g.field] ?? null;
      // The transport ceiling's figure on the same scenario: what the machine itself (the broker on
      // the same two cores, the scheduler, the socket reads) costs a Node process that decodes nothing.
      const c = rows.find((r) => r.scenario === s.id && r.client === 'ceiling' && r.verified)?.[g.field];
      // kwire's longest single collection beside its largest stall: whether that stall can be a GC pause.
      const gc = g.field === 'maxEventLoopStallMs' ? kw(s)?.maxGcPauseMs : undefined;
      const notes = [c === null || c === undefined ? '' : `ceiling ${c} ms`, gc === null || gc === undefined ? '' : `kwire's longest GC pause ${gc} ms`].filter(Boolean);
      return { scenario: s.id, value: v, words: `${v} ms${notes.length ? ` (${notes.join('; ')})` : ''}` };
    });
    goals.push(maxGoal(g.id, 16, g.text, g.target, figures, 'ms', 'no throughput scenario'));
  }

  // Latency under load (fairness): p99 during the drain <= p99 before + 5 ms.
  const fair = scenarios.find((s) => s.kind === 'fairness');
  const fk = fair && rows.find((r) => r.scenario === fair.id && r.client === 'kwire');
  const lat: GoalResult = {
    id: 'latency-under-load',
    issue: 16,
    text: `latency under load: end-to-end p99 of a 10,000 records/s partition while the same consumer drains a backlog of another topic <= its p99 before the drain + 5 ms (kwire${fair ? `; ${fair.title}` : ''})`,
    measured: 'not measured',
    value: null,
    target: 5,
    direction: 'max',
    met: null,
    scenarios: fair ? [fair.id] : [],
  };
  if (fk?.verified && fk.fairness) {
    const f = fk.fairness;
    lat.value = Math.round((f.during.p99 - f.before.p99) * 1000) / 1000;
    lat.measured = `${fair!.id}: p99 ${f.before.p99} ms before the drain (p50 ${f.before.p50}, ${f.before.count} records), ${f.during.p99} ms during it (p50 ${f.during.p50}, max ${f.during.max}, ${f.during.count} records; the drain: ${f.backlogRecords} records in ${f.drainSeconds} s)`;
    if (f.split)
      lat.measured += `; where the time went during the drain (p99 of each part): ${f.split.toAnswer.p99} ms from CreateTime until the Fetch answer was read, ${f.split.inConsumer.p99} ms from there to the application (max ${f.split.inConsumer.max}), the consumer's largest event-loop stall during the drain ${f.split.maxLoopStallMs} ms${cpuText(f.split.cpu)}`;
    const java = rows.find((r) => r.scenario === fair!.id && r.client === 'java' && r.verified)?.fairness;
    if (java) lat.measured += `; the Java consumer in the same probe: p99 ${java.before.p99} ms before, ${java.during.p99} ms during (drain ${java.drainSeconds} s)`;
    lat.met = lat.value <= 5;
    if (!lat.met) lat.miss = `missed by ${(lat.value - 5).toFixed(2)} ms: p99 rose ${lat.value.toFixed(2)} ms during the drain`;
  } else lat.miss = fk ? `kwire's fairness run did not verify: ${fk.reason ?? ''}` : 'no fairness run';
  goals.push(lat);

  // RSS flat over 10 GB consumed, and peak RSS within 2 x maxBufferedBytes + 64 MiB.
  const soak = scenarios.find((s) => s.kind === 'soak');
  const soakRow = soak && rows.find((r) => r.scenario === soak.id && r.client === 'kwire');
  const volume = soak ? soak.records * soak.recordSize * (soak.passes ?? 1) : 0;
  const gbText = `${(volume / 1e9).toFixed(1)} GB`;
  const flatGoal: GoalResult = {
    id: 'flat-rss-10gb',
    issue: 16,
    text: `RSS flat over 10 GB consumed (kwire; this run's soak: ${soak ? `${soak.passes} passes over ${soak.id}, ${gbText}` : 'none'})`,
    measured: 'not measured',
    value: null,
    target: 0,
    direction: 'max',
    met: null,
    scenarios: soak ? [soak.id] : [],
  };
  const flat = soakRow?.verified && soakRow.rssByPassMb ? rssFlat(soakRow.rssByPassMb) : null;
  if (flat && soakRow?.rssByPassMb) {
    flatGoal.value = Math.round((flat.worst - flat.settled - flat.allowance) * 10) / 10;
    flatGoal.measured = `${soak!.id}: ${gbText} consumed; after the first pass RSS at most ${flat.worst} MiB against ${flat.settled} MiB (allowance ${flat.allowance} MiB)`;
    // Growth is a miss whatever the volume; flat over less than 10 GB (--quick's soak) shows nothing about 10 GB.
    flatGoal.met = !flat.flat ? false : volume >= SOAK_GOAL_BYTES ? true : null;
    if (!flat.flat) flatGoal.miss = `RSS grew ${(flat.worst - flat.settled).toFixed(1)} MiB after the first pass, ${(flat.worst - flat.settled - flat.allowance).toFixed(1)} MiB beyond the allowance`;
    else if (volume < SOAK_GOAL_BYTES) flatGoal.miss = `not evaluable: flat, but over ${gbText} only (the goal asks for 10 GB)`;
  } else flatGoal.miss = soakRow ? `the soak run did not verify or has fewer than 3 passes: ${soakRow.reason ?? ''}` : 'no soak run';
  goals.push(flatGoal);
  const capMb = (2 * DEFAULT_MAX_BUFFERED_BYTES) / 1048576 + 64;
  goals.push(
    maxGoal(
      'peak-rss',
      16,
      `peak RSS <= 2 x maxBufferedBytes + 64 MiB (${capMb} MiB at the defaults; kwire over the soak)`,
      capMb,
      soak ? [{ scenario: soak.id, value: soakRow?.verified ? soakRow.peakRssMb : null, words: `peak RSS ${soakRow?.peakRssMb} MiB` }] : [],
      'MiB',
      'no soak run',
    ),
  );
  return goals;
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
    issue: 7,
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
    issue: 7,
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
  return [...goals, ...issue16Goals(rows, scenarios), ...issue31Goals(rows, scenarios), ...issue32Goals(rows, scenarios), ...issue33Goals(rows, scenarios)];
}

/** The kwire row of the I/O-bound goals (issue 31) and the Java row it is held against. */
export const HANDLER_KEY_ROW = 'kwire@key-1024';
export const HANDLER_JAVA_ROW = 'java-parallel@key-1024';
export const HANDLER_WORKER_ROW = 'kwire@worker-2';

/** Issue 31's goals: key-ordered concurrency for I/O-bound handlers, and CPU-bound ones off the main loop. */
export function issue31Goals(rows: readonly ResultRow[], scenarios: readonly ScenarioInfo[]): GoalResult[] {
  const io = scenarios.find((s) => s.kind === 'handler-io');
  const cpu = scenarios.find((s) => s.kind === 'handler-cpu');
  if (!io && !cpu) return [];
  const goals: GoalResult[] = [];
  const row = (s: ScenarioInfo | undefined, client: string) => (s ? rows.find((r) => r.scenario === s.id && r.client === client) : undefined);
  const base = (id: string, text: string, target: number, direction: 'min' | 'max', s: ScenarioInfo | undefined): GoalResult => ({
    id,
    issue: 31,
    text,
    measured: 'not measured',
    value: null,
    target,
    direction,
    met: null,
    scenarios: s ? [s.id] : [],
  });
  const why = (r: ResultRow | undefined, s: ScenarioInfo | undefined, client: string) =>
    !s ? 'no handler-io scenario in this run' : !r ? `no ${client} row in this run` : r.status === 'skipped' ? `${client} skipped: ${r.reason ?? ''}` : `${client} did not verify: ${r.reason ?? ''}`;

  const k = row(io, HANDLER_KEY_ROW);
  const kOk = k?.verified && k.recordsPerSec && k.handler ? k : undefined;
  const rate = base('handler-io-50k', `I/O-bound handler (awaits 5 ms), ordering 'key', maxConcurrency 1,024: >= 50,000 records/s (kwire, ${HANDLER_KEY_ROW})`, 50_000, 'min', io);
  if (kOk) {
    rate.value = kOk.recordsPerSec;
    rate.measured = `${io!.id}: ${int(kOk.recordsPerSec)} records/s (${int(kOk.handler!.records)} records in ${kOk.handler!.seconds} s; handler p99 ${kOk.handler!.handlerP99Ms} ms)`;
    rate.met = kOk.recordsPerSec! >= 50_000;
    if (!rate.met) rate.miss = `missed by ${((1 - kOk.recordsPerSec! / 50_000) * 100).toFixed(1)}%: ${int(50_000 - kOk.recordsPerSec!)} records/s short`;
  } else rate.miss = why(k, io, HANDLER_KEY_ROW);
  goals.push(rate);

  // Every kwire row that promises key order (ordering 'key' and 'partition'), not only 1,024.
  const keyRows = io ? rows.filter((r) => r.scenario === io.id && r.family === 'kwire' && r.handler) : [];
  const order = base('handler-io-order', "I/O-bound handler: 0 per-key order violations and 0 duplicates (kwire, every ordering 'key' and 'partition' row)", 0, 'max', io);
  if (keyRows.length) {
    const bad = (r: ResultRow) => r.handler!.outOfOrder + r.handler!.overlaps + r.handler!.duplicates;
    order.value = Math.max(...keyRows.map(bad));
    order.measured = keyRows
      .map((r) => `${r.client}: ${r.handler!.outOfOrder} out of order, ${r.handler!.overlaps} overlapping, ${r.handler!.duplicates} duplicates over ${int(r.handler!.records)} records`)
      .join('; ');
    order.met = order.value === 0 && keyRows.every((r) => r.status !== 'skipped');
    if (order.value > 0) order.miss = `${order.value} on ${keyRows.find((r) => bad(r) === order.value)!.client}`;
  } else order.miss = io ? 'no kwire row with handler figures in this run (skipped or failed)' : 'no handler-io scenario in this run';
  goals.push(order);

  const j = row(io, HANDLER_JAVA_ROW);
  const vsJava = base('handler-io-java', `I/O-bound handler, key order, maxConcurrency 1,024: kwire >= Confluent's parallel-consumer (${HANDLER_JAVA_ROW}) in records/s`, 1, 'min', io);
  if (kOk && j?.verified && j.recordsPerSec) {
    const r = kOk.recordsPerSec! / j.recordsPerSec;
    vsJava.value = Math.round(r * 1000) / 1000;
    vsJava.measured = `${io!.id}: kwire ${int(kOk.recordsPerSec)} against ${int(j.recordsPerSec)} records/s (${x(r)})`;
    vsJava.met = r >= 1;
    if (!vsJava.met) vsJava.miss = `missed by ${((1 - r) * 100).toFixed(1)}%`;
  } else vsJava.miss = !kOk ? why(k, io, HANDLER_KEY_ROW) : why(j, io, HANDLER_JAVA_ROW);
  goals.push(vsJava);

  const w = row(cpu, HANDLER_WORKER_ROW);
  const loop = base('handler-cpu-loop-5ms', `CPU-bound handler (burns 1 ms) on 2 worker threads: the main loop's p99 delay < 5 ms (kwire, ${HANDLER_WORKER_ROW}; 1 ms samples)`, 5, 'max', cpu);
  if (w?.verified && w.handler?.loopDelayP99Ms != null) {
    const h = w.handler;
    const inline = row(cpu, 'kwire@inline');
    loop.value = h.loopDelayP99Ms ?? null;
    loop.measured = `${cpu!.id}: p99 ${h.loopDelayP99Ms} ms (max ${h.loopDelayMaxMs} ms) at ${int(w.recordsPerSec)} records/s${h.heartbeat ? `, heartbeats ${h.heartbeat.rebalances + h.heartbeat.lost + h.heartbeat.pollIntervalExceeded === 0 ? 'kept' : 'NOT kept'} (longest age ${h.heartbeat.maxAgeMs} ms, interval ${h.heartbeat.intervalMs} ms)` : ''}${inline?.handler ? `; inline: p99 ${inline.handler.loopDelayP99Ms} ms at ${int(inline.recordsPerSec)} records/s` : ''}`;
    loop.met = loop.value! < 5;
    if (!loop.met) loop.miss = `missed by ${(loop.value! - 5).toFixed(2)} ms`;
  } else loop.miss = !cpu ? 'no handler-cpu scenario in this run' : why(w, cpu, HANDLER_WORKER_ROW);
  goals.push(loop);
  return goals;
}

function int(n: number | null | undefined): string {
  return n === null || n === undefined ? '-' : Math.round(n).toLocaleString('en-US');
}

/** The consumer's main thread on a CPU and waiting for one, before the drain and during it. */
function cpuText(cpu: { before: CpuShare; during: CpuShare } | undefined): string {
  if (!cpu) return '';
  return `; its main thread ran ${cpu.during.runMsPerSec} ms and waited ${cpu.during.waitMsPerSec} ms for a CPU per second during the drain (before it: ${cpu.before.runMsPerSec} and ${cpu.before.waitMsPerSec})`;
}

/**
 * The goals of issue 32: passes long enough to rank (2 s or 1 GB each), spreads that rank (at most
 * 15%, or the scenario flagged), and kwire at its defaults at least 1.1x every peer's best setting in
 * every throughput scenario.
 */
export function issue32Goals(rows: readonly ResultRow[], scenarios: readonly ScenarioInfo[]): GoalResult[] {
  const tp = scenarios.filter((s) => s.kind === 'throughput');
  const goals: GoalResult[] = [];

  // Every measured pass of every client: at least passSeconds long, or the whole 1 GB topic read.
  const short: string[] = [];
  const shortIds = new Set<string>();
  let checked = 0;
  for (const s of tp) {
    if (!s.passSeconds) continue;
    for (const r of rows.filter((x) => x.scenario === s.id && x.verified && x.shortPasses !== undefined)) {
      checked++;
      if (r.shortPasses! > 0) {
        short.push(
          `${s.id} ${r.label}: ${r.shortPasses} of its passes (${r.passSeconds![0].toFixed(2)}-${r.passSeconds![1].toFixed(2)} s, ${(r.passBytes![0] / 1e9).toFixed(2)}-${(r.passBytes![1] / 1e9).toFixed(2)} GB)`,
        );
        shortIds.add(s.id);
      }
    }
  }
  goals.push({
    id: 'passes-2s-or-1gb',
    issue: 32,
    text: 'every measured throughput pass of every client lasts at least 2 s or reads at least 1 GB',
    measured: checked ? (short.length ? short.join('; ') : `${checked} rows, every pass 2 s or 1 GB`) : 'not measured',
    value: checked ? short.length : null,
    target: 0,
    direction: 'max',
    met: checked ? short.length === 0 : null,
    scenarios: [...shortIds],
    ...(checked ? (short.length ? { miss: `${short.length} rows had a shorter pass` } : {}) : { miss: 'no throughput scenario with a pass limit in this run' }),
  });

  // Spreads: kwire's and each peer's best row per scenario.
  const flagged: string[] = [];
  const flaggedIds: string[] = [];
  let worstSpread: number | null = null;
  for (const s of tp) {
    const k = ranking(rows, s.id);
    for (const o of k.over) if (worstSpread === null || o.spread > worstSpread) worstSpread = o.spread;
    if (!k.ranks) flaggedIds.push(s.id);
    if (!k.ranks) flagged.push(`${s.id} (${k.over.map((o) => `${o.label} ${(o.spread * 100).toFixed(0)}%`).join(', ')})`);
  }
  goals.push({
    id: 'spread-15',
    issue: 32,
    text: `every throughput scenario's compared rows (kwire, each peer's best) spread at most ${RANKING_SPREAD * 100}%; a scenario over it is flagged as not ranking`,
    measured: tp.length ? (flagged.length ? `not ranking: ${flagged.join('; ')}` : `all ${tp.length} scenarios rank`) : 'not measured',
    value: worstSpread === null ? 0 : Math.round(worstSpread * 1000) / 1000,
    target: RANKING_SPREAD,
    direction: 'max',
    met: tp.length ? flagged.length === 0 : null,
    scenarios: flaggedIds,
    ...(flagged.length ? { miss: `${flagged.length} of ${tp.length} scenarios flagged as not ranking` } : {}),
  });

  // kwire at its defaults against every peer's best setting, every throughput scenario.
  const figures: string[] = [];
  const missing: string[] = [];
  const below: string[] = [];
  let worst: { r: number; where: string } | null = null;
  for (const s of tp) {
    let weakest: { r: number; peer: string } | null = null;
    for (const f of PEER_FAMILIES) {
      const r = ratioToBest(rows, s.id, 'kwire', f);
      if (r === null) continue;
      if (!weakest || r < weakest.r) weakest = { r, peer: bestOf(rows, s.id, f)!.label };
    }
    if (!weakest) {
      missing.push(s.id);
      continue;
    }
    const note = ranking(rows, s.id).ranks ? '' : ' (not ranking)';
    figures.push(`${s.id}: ${x(weakest.r)} against ${weakest.peer}${note}`);
    if (weakest.r < 1.1) below.push(s.id);
    if (!worst || weakest.r < worst.r) worst = { r: weakest.r, where: `${s.id} against ${weakest.peer}` };
  }
  const peers: GoalResult = {
    id: 'peers-1.1x',
    issue: 32,
    text: 'kwire at its defaults >= 1.1x the best setting of every peer (Java, node-rdkafka, @platformatic/kafka, kafkajs, kcat) in every throughput scenario (the weakest ratio per scenario)',
    measured: figures.join('; ') || 'not measured',
    value: worst === null ? null : Math.round(worst.r * 1000) / 1000,
    target: 1.1,
    direction: 'min',
    met: worst === null ? null : worst.r >= 1.1 && missing.length === 0,
    scenarios: below,
  };
  if (worst === null) peers.miss = 'not evaluable: no scenario with kwire and a peer verified';
  else if (worst.r < 1.1) peers.miss = `missed by ${((1 - worst.r / 1.1) * 100).toFixed(1)}% on ${worst.where}: kwire would need to be ${((1.1 / worst.r - 1) * 100).toFixed(1)}% faster there`;
  else if (missing.length) peers.miss = `not evaluable on ${missing.join(', ')}`;
  goals.push(peers);
  return goals;
}

/** Issue 33: @kwire/kafkajs through kafkajs's own programs, against kwire's API and against kafkajs. */
export function issue33Goals(rows: readonly ResultRow[], scenarios: readonly ScenarioInfo[]): GoalResult[] {
  // Where the facade's rows run (plan.ts: facadeOnly).
  const where: Where = { recordSize: [100, 1024], partitions: 12, compression: 'none' };
  return [
    ratioGoal(
      rows,
      scenarios,
      'facade-cost-15',
      "@kwire/kafkajs (kafkajs's eachBatch program) >= 0.85x kwire's own API in records/s on 100 B and 1 KB records",
      where,
      'kwire',
      0.85,
      x,
      33,
      'kwire-kafkajs',
    ),
    ratioGoal(
      rows,
      scenarios,
      'facade-3x-kafkajs',
      '@kwire/kafkajs >= 3x kafkajs (its best setting) in records/s on 100 B and 1 KB records, the same program',
      where,
      'kafkajs',
      3,
      x,
      33,
      'kwire-kafkajs',
    ),
  ];
}
