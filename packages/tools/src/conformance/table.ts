// The conformance report as text (for the terminal) or Markdown (for the README).
import { API_DEFINITIONS } from '@kwire/protocol';
import type { ConformanceReport, TableRow } from './runner.js';

function scopeOf(r: TableRow): string {
  if (r.kind === 'embedded') return r.inScope ? 'yes' : 'no (v0-3)';
  const api = API_DEFINITIONS.get(r.apiKey);
  // Outside the consumer's APIs: decoded when the run was given the whole protocol (all-apis).
  if (!api) return r.skipped === r.frames ? 'not modeled' : 'no (all-apis)';
  return r.inScope ? 'yes' : `no (v${api.minVersion}${api.maxVersion > api.minVersion ? `-${api.maxVersion}` : ''})`;
}

function label(r: TableRow): string {
  return r.kind === 'api' ? `${r.name} (${r.apiKey})` : r.name;
}

function cells(r: TableRow): string[] {
  return [label(r), String(r.version), String(r.frames), String(r.passed), String(r.failed), String(r.skipped), scopeOf(r), r.sources.join(', ')];
}

const HEAD = ['API', 'v', 'frames', 'passed', 'failed', 'skipped', 'in scope', 'requests from'];

function pad(rows: string[][], numeric: boolean[]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows
    .map((r) =>
      r
        .map((c, i) => (i === r.length - 1 ? c : numeric[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** The table and summary for a terminal. */
export function formatReport(report: ConformanceReport, options: { verbose?: boolean; maxFailures?: number } = {}): string {
  const out: string[] = [];
  const exchanges = report.captures.reduce((n, c) => n + c.exchanges, 0);
  out.push(`kwire conformance: ${report.root} (${report.captures.length} capture${report.captures.length === 1 ? '' : 's'}, ${exchanges} exchanges)`);
  out.push('');
  const numeric = [false, true, true, true, true, true, false, false];
  const api = report.rows.filter((r) => r.kind === 'api');
  const embedded = report.rows.filter((r) => r.kind === 'embedded');
  if (api.length) out.push(pad([HEAD, ...api.map(cells)], numeric));
  if (embedded.length) {
    out.push('');
    out.push('Embedded in JoinGroup/SyncGroup (protocol type "consumer"):');
    out.push(pad([['structure', 'v', 'count', 'passed', 'failed', 'skipped', 'in scope', 'requests from'], ...embedded.map(cells)], numeric));
  }
  const t = report.totals;
  out.push('');
  out.push(`frames: ${t.frames}, passed ${t.passed}, failed ${t.failed}, skipped ${t.skipped}`);
  const codecs = Object.entries(report.codecs);
  if (codecs.length) out.push(`record batches decoded and rebuilt: ${codecs.map(([c, n]) => `${c} ${n}`).join(', ')}`);

  out.push('');
  out.push('Captures:');
  for (const c of report.captures) {
    const who = c.manifest ? ` [${c.manifest.origin === 'kwire' ? "kwire's own requests" : `${c.manifest.client.name} ${c.manifest.client.version}`} -> Kafka ${c.manifest.broker.version}]` : '';
    const factsOk = c.facts.filter((f) => f.ok).length;
    const facts = c.facts.length ? `; facts ${factsOk}/${c.facts.length}` : '';
    out.push(`  ${c.name}${who}: ${c.frames} frames, ${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped${facts}`);
    for (const f of c.facts) if (options.verbose || !f.ok) out.push(`      ${f.ok ? 'ok  ' : 'FAIL'} ${f.fact}: ${f.detail}`);
    for (const e of c.errors) out.push(`      damaged: ${e}`);
    for (const n of c.notes) out.push(`      note: ${n}`);
  }

  const scope = report.coverage.filter((c) => c.kind === 'api');
  const scopeEmbedded = report.coverage.filter((c) => c.kind === 'embedded');
  const missing = report.coverage.filter((c) => !c.covered);
  out.push('');
  out.push(
    `Coverage of the codec's scope: ${scope.filter((c) => c.covered).length}/${scope.length} API versions passed as request and response, ` +
      `${scopeEmbedded.filter((c) => c.covered).length}/${scopeEmbedded.length} embedded structure versions${report.requireFullCoverage ? ' (full coverage required)' : ''}`,
  );
  if (missing.length && (report.requireFullCoverage || options.verbose)) out.push(`  not covered: ${missing.map((m) => `${m.name} v${m.version}`).join(', ')}`);
  else if (missing.length) out.push(`  ${missing.length} not covered by these captures (--verbose lists them)`);

  if (report.failures.length) {
    const max = options.maxFailures ?? 50;
    out.push('');
    out.push(`Failures (${report.failures.length}):`);
    for (const f of report.failures.slice(0, max)) {
      const where = [f.capture, f.conn !== undefined ? `conn ${f.conn}` : '', f.correlationId !== undefined ? `correlation id ${f.correlationId}` : ''].filter(Boolean).join(', ');
      const what = f.api ? `${f.api}${f.version !== undefined ? ` v${f.version}` : ''} ${f.part}` : f.part;
      out.push(`  ${where}: ${what}: ${f.message}`);
    }
    if (report.failures.length > max) out.push(`  ... and ${report.failures.length - max} more`);
  }
  out.push('');
  out.push(report.ok ? 'PASS' : `FAIL${report.captures.length === 0 ? ': no captures found' : missing.length && report.requireFullCoverage && report.failures.length === 0 ? ': coverage gaps' : ''}`);
  return `${out.join('\n')}\n`;
}

/** The table as Markdown (the protocol package's README shows it). */
export function formatMarkdownTable(report: ConformanceReport): string {
  const lines: string[] = [];
  const row = (c: string[]) => `| ${c.join(' | ')} |`;
  lines.push(row(HEAD));
  lines.push(row(HEAD.map((_, i) => (i >= 1 && i <= 5 ? '---:' : '---'))));
  for (const r of report.rows.filter((x) => x.kind === 'api')) lines.push(row(cells(r)));
  lines.push('');
  lines.push(row(['structure (in JoinGroup/SyncGroup)', 'v', 'count', 'passed', 'failed', 'skipped', 'in scope', 'requests from']));
  lines.push(row(['---', '---:', '---:', '---:', '---:', '---:', '---', '---']));
  for (const r of report.rows.filter((x) => x.kind === 'embedded')) lines.push(row(cells(r)));
  return `${lines.join('\n')}\n`;
}
