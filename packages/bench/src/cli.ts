// `npm run bench` (scripts/bench.mjs builds, then runs this): the benchmark of issue 7.
//
//   npm run bench                         full run (about 40 minutes on 2 cores)
//   npm run bench -- --quick              smoke run (under 3 minutes)
//   npm run bench -- --bootstrap H:P      use a running broker instead of starting one
//   npm run bench -- --scenarios handler-io,handler-cpu
//                                         handlers that do I/O or burn CPU (issue 31) alone
//   npm run bench -- --json out.json      also write the results there
//   npm run bench -- --cpu-prof           profile kwire where a goal is missed
//   npm run bench -- --micro [--reps N] [--micro-only a,b] [--json F]
//                                         the hot-function micro-benchmarks (micro/suite.ts), no broker
//   npm run bench -- --render results.json [--analysis notes.md]
//                                         rewrite report.md and chart.svg from saved results
//
// Writes results.json, report.md and chart.svg to packages/bench/results/ (or --out DIR), prints
// the tables on stdout, and exits 1 when a client failed verification.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { runBench } from './bench.js';
import { resolveClientNode } from './orchestrator/node-runtime.js';
import { markdownReport } from './report/markdown.js';
import { chartSvg } from './report/svg.js';
import { consoleReport } from './report/table.js';
import type { BenchResults } from './report/types.js';

const HELP = `kwire benchmark: kwire against kafkajs, @platformatic/kafka, node-rdkafka, the Java consumer, kcat and the transport ceiling

  --quick               smoke run: two small scenarios, one repetition, under 3 minutes
  --bootstrap H:P       use this broker (the Java tools come from the launcher's jars)
  --out DIR             where results.json, report.md, chart.svg go (default packages/bench/results)
  --json FILE           also write the results JSON to FILE
  --reps N              measured passes per client and scenario, after the warm-up passes (one, and in full runs as many more as fill 4 s) (default 5, quick 1)
  --clients a,b         only these families or variants: kwire,kwire-nocrc,kwire-cursor,kwire-1mib,kwire-4mib,kwire-owned,kwire-kafkajs,kafkajs,platformatic,rdkafka,
                        java,kcat,ceiling,ceiling-decompress, or e.g. platformatic@1MiB,rdkafka@flowing,java@4MiB
  --scenarios a,b       only these scenario ids (e.g. 100B-12p-none,latency-100B-1p; handler-io,handler-cpu:
                        issue 31's handler-bound family alone, about 4-5 minutes)
  --heap-mib N          throughput scenarios: each Node client holds N MiB of live objects, as a
                        service's heap does (what a full collection must mark; Java and kcat hold none)
  --cpu-prof            profile kwire (node --cpu-prof) on the scenarios of missed goals; into OUT/profiles
  --node PATH           the Node for the clients (default: Node 24 through npx)
  --micro               no broker: the micro-benchmarks of the hot functions (frame split, batch scan,
                        record decode, varint, CRC, each decompressor), a summary table; --reps N
                        rounds (default 5), --micro-only a,b to pick, --json FILE for the figures
  --render FILE         no run: rewrite report.md and chart.svg from a results JSON
  --analysis FILE       Markdown included in the report as its Analysis section
`;

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    bootstrap: { type: 'string' },
    out: { type: 'string' },
    json: { type: 'string' },
    reps: { type: 'string' },
    clients: { type: 'string' },
    scenarios: { type: 'string' },
    'cpu-prof': { type: 'boolean', default: false },
    'heap-mib': { type: 'string' },
    node: { type: 'string' },
    render: { type: 'string' },
    micro: { type: 'boolean', default: false },
    'micro-only': { type: 'string' },
    analysis: { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});

if (values.help) {
  process.stdout.write(HELP);
  process.exit(0);
}

if (values.micro) {
  // Under the clients' Node (24 through npx unless --node), like every measured client.
  const node = resolveClientNode(values.node);
  const args = [join(dirname(fileURLToPath(import.meta.url)), 'micro', 'suite.js'), '--rounds', values.reps ?? '5'];
  if (values['micro-only']) args.push('--only', values['micro-only']);
  if (values.json) args.push('--json-file', values.json);
  const table = spawnSync(node.path, args, { stdio: ['ignore', 'inherit', 'inherit'] });
  if (table.status !== 0) process.exit(table.status ?? 1);
  if (values.json) process.stdout.write(`written: ${values.json}\n`);
  process.exit(0);
}

const heapMiB = values['heap-mib'] === undefined ? undefined : Number(values['heap-mib']);
if (heapMiB !== undefined && !(Number.isInteger(heapMiB) && heapMiB >= 1 && heapMiB <= 16_384)) {
  process.stderr.write(`--heap-mib takes a whole number of MiB from 1 to 16384, got '${values['heap-mib']}'\n`);
  process.exit(2);
}

const outDir = resolve(values.out ?? join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'results'));
const list = (s: string | undefined) =>
  s
    ? s
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean)
    : undefined;

let results: BenchResults;
if (values.render) {
  results = JSON.parse(readFileSync(values.render, 'utf8')) as BenchResults;
} else {
  results = await runBench({
    mode: values.quick ? 'quick' : 'full',
    bootstrap: values.bootstrap,
    outDir,
    reps: values.reps ? Number(values.reps) : undefined,
    clients: list(values.clients),
    scenarios: list(values.scenarios),
    cpuProf: values['cpu-prof'],
    node: values.node,
    ...(heapMiB ? { heapMiB } : {}),
  });
}

mkdirSync(outDir, { recursive: true });
const json = `${JSON.stringify(results, null, 1)}\n`;
if (!values.render) writeFileSync(join(outDir, 'results.json'), json);
if (values.json) writeFileSync(values.json, json);
const analysis = values.analysis ? readFileSync(values.analysis, 'utf8') : undefined;
writeFileSync(join(outDir, 'report.md'), markdownReport(results, analysis));
writeFileSync(join(outDir, 'chart.svg'), chartSvg(results));
process.stdout.write(`${consoleReport(results)}\n\nwritten: ${join(outDir, 'results.json')}, report.md, chart.svg${values.json ? `, ${values.json}` : ''}\n`);
process.exit(results.results.some((r) => r.status === 'failed') ? 1 : 0);
