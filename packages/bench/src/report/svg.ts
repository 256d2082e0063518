// The chart: for each throughput scenario, one horizontal bar per client family (a swept peer at
// its best setting), its median records/s as a ratio to the transport ceiling measured in the same
// scenario (1.0 = what the broker delivers to one connection sending the same Fetch requests).
// Hand-written SVG, no dependency; small enough to commit.
import { bestOf, familyOf } from './summarize.js';
import { int } from './table.js';
import type { BenchResults } from './types.js';

const COLORS: Record<string, string> = {
  kwire: '#1f6feb',
  'kwire-nocrc': '#79a8f5',
  kafkajs: '#d29922',
  platformatic: '#8957e5',
  rdkafka: '#1a7f37',
  java: '#cf222e',
  kcat: '#2da44e',
  ceiling: '#6e7781',
  'ceiling-decompress': '#afb8c1',
};

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

export function chartSvg(results: BenchResults): string {
  const scenarios = results.scenarios.filter((s) => s.kind === 'throughput');
  const W = 960;
  const labelW = 250;
  const plotX = labelW + 10;
  const plotW = 560;
  const bar = 14;
  const gap = 5;
  const head = 24;
  let maxRatio = 1;
  for (const r of results.results) if (r.kind === 'throughput' && r.ratioToCeiling !== null) maxRatio = Math.max(maxRatio, r.ratioToCeiling);
  const scaleMax = Math.ceil(maxRatio * 4) / 4;
  const sx = (v: number) => plotX + (v / scaleMax) * plotW;
  const parts: string[] = [];
  let y = 56;
  const body: string[] = [];
  for (const s of scenarios) {
    // One bar per family: its best verified variant, else its first row (to show FAILED/skipped).
    const all = results.results.filter((r) => r.scenario === s.id);
    const families = [...new Set(all.map((r) => familyOf(r.client)))];
    const rows = families.map((f) => bestOf(all, s.id, f) ?? all.find((r) => familyOf(r.client) === f)!);
    if (rows.length === 0) continue;
    body.push(`<text x="10" y="${y + 16}" class="h">${esc(s.title)}</text>`);
    y += head;
    for (const r of rows) {
      const cy = y + bar / 2 + 4;
      body.push(`<text x="${labelW}" y="${cy}" class="l" text-anchor="end">${esc(r.label)}</text>`);
      if (r.status === 'failed') {
        body.push(`<text x="${plotX + 4}" y="${cy}" class="f">FAILED${r.reason ? `: ${esc(r.reason.slice(0, 80))}` : ''}</text>`);
      } else if (r.status === 'skipped' || r.ratioToCeiling === null) {
        body.push(`<text x="${plotX + 4}" y="${cy}" class="s">${r.status === 'skipped' ? 'skipped' : 'no ratio (ceiling not measured)'}</text>`);
      } else {
        const w = Math.max(1, sx(r.ratioToCeiling) - plotX);
        body.push(`<rect x="${plotX}" y="${y}" width="${w.toFixed(1)}" height="${bar}" fill="${COLORS[familyOf(r.client)] ?? '#999'}"/>`);
        body.push(`<text x="${(plotX + w + 4).toFixed(1)}" y="${cy}" class="v">${r.ratioToCeiling.toFixed(2)}  ${esc(int(r.recordsPerSec))} rec/s</text>`);
      }
      y += bar + gap;
    }
    y += 8;
  }
  const H = y + 30;
  // Grid lines every 0.25 of the ceiling, the ceiling itself dashed.
  for (let v = 0; v <= scaleMax + 1e-9; v += 0.25) {
    const gx = sx(v).toFixed(1);
    parts.push(`<line x1="${gx}" y1="48" x2="${gx}" y2="${H - 26}" class="${Math.abs(v - 1) < 1e-9 ? 'c' : 'g'}"/>`);
    parts.push(`<text x="${gx}" y="${H - 10}" class="t" text-anchor="middle">${v.toFixed(2)}</text>`);
  }
  const title = `records/s as a ratio to the transport ceiling, each peer at its best setting (median of ${scenarios[0]?.repetitions ?? 1}; Kafka ${esc(results.broker.version)}, Node ${esc(results.node.clients)}, ${results.machine.cpus} cores)`;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="Helvetica, Arial, sans-serif">`,
    '<style>.h{font-size:13px;font-weight:bold}.l{font-size:11px}.v{font-size:10px;fill:#333}.f{font-size:11px;fill:#cf222e;font-weight:bold}.s{font-size:11px;fill:#888}.t{font-size:10px;fill:#555}.g{stroke:#ddd;stroke-width:1}.c{stroke:#444;stroke-width:1;stroke-dasharray:4 3}</style>',
    `<rect width="${W}" height="${H}" fill="#fff"/>`,
    `<text x="10" y="22" font-size="15" font-weight="bold">kwire benchmark: ${esc(results.mode)} run</text>`,
    `<text x="10" y="40" font-size="11" fill="#555">${title}</text>`,
    ...parts,
    ...body,
    '</svg>',
    '',
  ].join('\n');
}
