// The console tables printed at the end of a run, and the number formats shared with the Markdown.
import type { BenchResults, ResultRow, ScenarioInfo } from './types.js';

export function int(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '-';
  return Math.round(n).toLocaleString('en-US');
}

export function num(n: number | null | undefined, digits = 1): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '-';
  return n.toFixed(digits);
}

export function pct(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '-';
  return `${(n * 100).toFixed(0)}%`;
}

export function status(r: ResultRow): string {
  return r.status === 'ok' ? 'yes' : r.status === 'skipped' ? 'skipped' : 'FAILED';
}

/** Columns padded to their widest cell; numbers right-aligned. */
export function textTable(headers: string[], rows: string[][], right: boolean[] = []): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const cell = (s: string, i: number) => (right[i] ? s.padStart(widths[i]!) : s.padEnd(widths[i]!));
  const line = (cells: string[]) => cells.map(cell).join('  ').trimEnd();
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function scenarioTitle(s: ScenarioInfo): string {
  return s.title;
}

export const THROUGHPUT_HEADERS = ['scenario', 'client', 'records/s', 'spread', 'MiB/s', 'x ceiling', 'with join rec/s', 'CPU s', 'peak RSS MiB', 'GC ms', 'alloc B/rec', 'max stall ms', 'verified'];

export function throughputCells(r: ResultRow): string[] {
  return [
    r.scenario,
    r.label,
    int(r.recordsPerSec),
    r.spread === null ? '-' : `${(r.spread * 100).toFixed(0)}%`,
    num(r.mbPerSec),
    r.ratioToCeiling === null ? '-' : r.ratioToCeiling.toFixed(2),
    int(r.totalRecordsPerSec),
    num(r.cpuSeconds, 2),
    num(r.peakRssMb, 0),
    num(r.gcMs, 0),
    r.allocBytesPerRecord === null ? '-' : int(r.allocBytesPerRecord),
    num(r.maxEventLoopStallMs, 1),
    status(r),
  ];
}

/** The handler-bound family's columns (issue 31), the console's and the Markdown's. */
export const HANDLER_HEADERS = ['client', 'records/s', 'records', 'seconds', 'order violations', 'duplicates', 'handler p99 ms', 'e2e p99 ms', 'main loop p99 ms', 'heartbeats', 'CPU s', 'verified'];
export const HANDLER_RIGHT = [false, true, true, true, true, true, true, true, true, false, true, false];

export function handlerCells(r: ResultRow): string[] {
  const h = r.handler;
  const hb = h?.heartbeat;
  const beats = hb
    ? `${hb.rebalances + hb.lost + hb.pollIntervalExceeded === 0 && (hb.maxAgeMs ?? 0) <= hb.intervalMs + 1000 ? 'on time' : 'LATE'}: max age ${int(hb.maxAgeMs)} ms / ${int(hb.intervalMs)}, ${hb.rebalances} rebalances${hb.lost ? `, ${hb.lost} lost` : ''}${hb.pollIntervalExceeded ? `, ${hb.pollIntervalExceeded} poll-interval` : ''}`
    : '-';
  return [
    r.label,
    int(r.recordsPerSec),
    h ? `${int(h.records)}${h.capped ? ' (time limit)' : ''}` : '-',
    num(h?.seconds, 2),
    h ? `${int(h.outOfOrder + h.overlaps)}${h.outOfOrder + h.overlaps > 0 ? ` (${int(h.outOfOrder)} + ${int(h.overlaps)})` : ''}` : '-',
    h ? int(h.duplicates) : '-',
    num(h?.handlerP99Ms, 2),
    int(h?.e2eP99Ms),
    num(h?.loopDelayP99Ms, 2),
    beats,
    num(r.cpuSeconds, 2),
    status(r),
  ];
}

export function consoleReport(results: BenchResults): string {
  const out: string[] = [];
  const rows = results.results;
  const tp = rows.filter((r) => r.kind === 'throughput');
  if (tp.length) {
    if (results.heapMiB) out.push(`Each Node client held ${results.heapMiB} MiB of live heap (--heap-mib), as a service does; Java and kcat none.`);
    out.push(
      'Throughput (records/s and MiB/s of values over the fetch phase: partitions assigned to last record, as Java counts; medians of the measured passes after the warm-up ones (at least one, and in full runs at least 4 s of them; each pass of a full run 2 s or 1 GB); spread = (max - min) / median)',
    );
    out.push(textTable(THROUGHPUT_HEADERS, tp.map(throughputCells), [false, false, true, true, true, true, true, true, true, true, true, true, false]));
  }
  const group = rows.filter((r) => r.kind === 'group');
  if (group.length) {
    out.push('', 'Groups (3 processes, one group id: start to every record consumed)');
    out.push(
      textTable(
        ['scenario', 'client', 'records/s', 'seconds', 'CPU s (all)', 'peak RSS MiB', 'duplicates', 'verified'],
        group.map((r) => [r.scenario, r.label, int(r.recordsPerSec), num(r.totalSeconds, 2), num(r.cpuSeconds, 2), num(r.peakRssMb, 0), int(r.duplicates ?? 0), status(r)]),
        [false, false, true, true, true, true, true, false],
      ),
    );
  }
  const share = rows.filter((r) => r.kind === 'share');
  if (share.length) {
    out.push('', "Share groups (KIP-932): kwire's share consumer against Java's ShareConsumerPerformance (consumers' creation to last record; medians of the measured passes)");
    const javaOf = (r: ResultRow) => rows.find((x) => x.scenario === r.scenario && x.client === 'java');
    out.push(
      textTable(
        ['scenario', 'members', 'client', 'records/s', 'spread', 'MiB/s', 'CPU s (all)', 'peak RSS MiB', 'kwire / Java', 'verified'],
        share.map((r) => {
          const j = javaOf(r);
          const ratio = r.client === 'kwire' && r.verified && j?.verified && r.recordsPerSec && j.recordsPerSec ? `${(r.recordsPerSec / j.recordsPerSec).toFixed(2)}x` : '';
          return [
            r.scenario,
            String(r.members ?? '-'),
            r.client === 'java' ? 'Java ShareConsumerPerformance' : r.label,
            int(r.recordsPerSec),
            r.spread === null ? '-' : `${(r.spread * 100).toFixed(0)}%`,
            num(r.mbPerSec),
            num(r.cpuSeconds, 2),
            num(r.peakRssMb, 0),
            ratio,
            status(r),
          ];
        }),
        [false, true, false, true, true, true, true, true, true, false],
      ),
    );
  }
  const lat = rows.filter((r) => r.kind === 'latency');
  if (lat.length) {
    out.push('', 'End-to-end latency (delivery - CreateTime, ms)');
    out.push(
      textTable(
        ['scenario', 'client', 'p50', 'p99', 'p999', 'max', 'p99 w/ warm-up', 'records', 'verified'],
        lat.map((r) => [
          r.scenario,
          r.label,
          num(r.latency?.p50, 2),
          num(r.latency?.p99, 2),
          num(r.latency?.p999, 2),
          num(r.latency?.max, 2),
          num(r.latency?.p99All, 2),
          int(r.latency?.count),
          status(r),
        ]),
        [false, false, true, true, true, true, true, true, false],
      ),
    );
  }
  const fair = rows.filter((r) => r.kind === 'fairness');
  if (fair.length) {
    out.push('', 'Latency under load: a live partition while the same consumer drains a backlog (delivery - CreateTime, ms)');
    out.push(
      textTable(
        ['scenario', 'client', 'p50 before', 'p99 before', 'p50 during', 'p99 during', 'max during', 'drain s', 'verified'],
        fair.map((r) => [
          r.scenario,
          r.label,
          num(r.fairness?.before.p50, 2),
          num(r.fairness?.before.p99, 2),
          num(r.fairness?.during.p50, 2),
          num(r.fairness?.during.p99, 2),
          num(r.fairness?.during.max, 2),
          num(r.fairness?.drainSeconds, 2),
          status(r),
        ]),
        [false, false, true, true, true, true, true, true, false],
      ),
    );
  }
  for (const kind of ['handler-io', 'handler-cpu'] as const) {
    const h = rows.filter((r) => r.kind === kind);
    if (!h.length) continue;
    out.push(
      '',
      kind === 'handler-io'
        ? 'I/O-bound handler (awaits 5 ms; records/s from the first handler start to the last end; violations = out of order + overlapping, per key; handler = start to end; e2e = CreateTime to end, mostly the backlog age)'
        : "CPU-bound handler (burns 1 ms; main loop p99 = the event loop's delay, 1 ms samples, over the run)",
    );
    out.push(textTable(HANDLER_HEADERS, h.map(handlerCells), HANDLER_RIGHT));
  }
  const reb = rows.filter((r) => r.kind === 'rebalance');
  if (reb.length) {
    out.push('', 'Rebalance (fresh group: subscribe to first record, ms; Java: its rebalance.time.ms)');
    out.push(
      textTable(
        ['scenario', 'client', 'median ms', 'runs', 'verified'],
        reb.map((r) => [r.scenario, r.label, num(r.joinToFirstRecordMs, 0), String(r.repetitions), status(r)]),
        [false, false, true, true, false],
      ),
    );
  }
  const soak = rows.filter((r) => r.kind === 'soak');
  if (soak.length) {
    out.push('', 'RSS soak (kwire, the same topic read pass after pass)');
    out.push(
      textTable(
        ['scenario', 'client', 'RSS by pass MiB', 'records/s', 'verified'],
        soak.map((r) => [r.scenario, r.label, (r.rssByPassMb ?? []).join(' '), int(r.recordsPerSec), status(r)]),
        [false, false, false, true, false],
      ),
    );
  }
  const failed = rows.filter((r) => r.status === 'failed');
  if (failed.length) {
    out.push('', 'FAILED');
    for (const r of failed) out.push(`  ${r.scenario} ${r.label}: ${r.reason ?? 'failed'}`);
  }
  const skipped = results.clients.filter((c) => !c.available);
  for (const c of skipped) out.push(`  skipped ${c.label}: ${c.reason ?? ''}`);
  if (results.goals.length) {
    out.push('', 'Goals');
    for (const g of results.goals)
      out.push(`  [${g.met === true ? 'met' : g.met === false ? 'MISSED' : 'n/a'}] ${g.text}: ${g.measured}${g.miss ? ` (${g.miss})` : ''}${g.issue ? ` [issue ${g.issue}]` : ''}`);
  }
  return out.join('\n');
}
