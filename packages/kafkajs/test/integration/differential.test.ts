// Issue 33's differential suite: every scenario script in scenarios/ runs twice on a real broker,
// once with kafkajs 2.2.4 itself and once with @kwire/kafkajs, and the two traces must agree
// except for what allowed-differences.md lists. Committed offsets are read back afterwards with
// Kafka's own ConsumerGroupCommand (two JVM runs per cluster for the whole suite, not one per
// scenario: a JVM start costs 1-2 s on 2 cores, 80 of them would be minutes).
//
// KJD_ONLY=text runs the scenarios whose name contains it; KJD_REFERENCE_ONLY=1 runs kafkajs
// against itself (a check that the scenarios are deterministic); KJD_CONCURRENCY (default 2)
// is how many scenarios run at once (each runs its two modules side by side); KJD_DUMP=dir writes
// each run's trace there as text (dir/<index>-<module>.txt), committed offsets included.
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { type KafkaCluster, parseGroupOffsets, runTool, startKafka, type TestKafka, useKafka } from '@kwire/broker';
import type { Kafka, Producer } from 'kafkajs';
import { compareTraces, type Env, traceLines, type KafkaModule, type Label, runScenario, type Scenario, type Trace } from './scenarios/harness.js';
import { scenarios as all } from './scenarios/index.js';

const require = createRequire(import.meta.url);
const upstream = require('kafkajs') as KafkaModule;
const runId = Date.now().toString(36);
const only = process.env.KJD_ONLY;
const referenceOnly = process.env.KJD_REFERENCE_ONLY === '1';
const concurrency = Math.max(1, Number(process.env.KJD_CONCURRENCY ?? 2));
const scenarios = only ? all.filter((s) => s.name.includes(only)) : all;
const needsSecure = scenarios.some((s) => s.security);
const dump = process.env.KJD_DUMP;

function dumpTraces(index: number, a: RunResult, b: RunResult): void {
  if (!dump) return;
  mkdirSync(dump, { recursive: true });
  for (const [label, r] of [
    ['kafkajs', a],
    ['kwire', b],
  ] as const) {
    writeFileSync(join(dump, `${String(index).padStart(2, '0')}-${label}.txt`), `${scenarios[index].name}\n${traceLines(r.trace).join('\n')}\n`);
  }
}

interface RunResult {
  trace: Trace;
  topics: string[];
  groupId: string;
  plain: string;
}
type Outcome = { ok: true; result: RunResult; ms: number } | { ok: false; error: unknown; ms: number };

let kafka: TestKafka;
let secure: Promise<KafkaCluster> | undefined;
let facade: KafkaModule;
const setupClients = new Map<string, Kafka>();
const producers = new Map<string, Promise<Producer>>();
/** Per scenario: both runs, started by the pool in before() and awaited by the scenario's test. */
const runs: Promise<[Outcome, Outcome]>[] = [];

function setupKafka(plain: string): Kafka {
  let k = setupClients.get(plain);
  if (!k) {
    k = new upstream.Kafka({ clientId: 'kjd-setup', brokers: plain.split(','), logLevel: upstream.logLevel.NOTHING });
    setupClients.set(plain, k);
  }
  return k;
}

function producer(plain: string): Promise<Producer> {
  let p = producers.get(plain);
  if (!p) {
    const made = setupKafka(plain).producer();
    p = made.connect().then(() => made);
    producers.set(plain, p);
  }
  return p;
}

async function envFor(scenario: Scenario): Promise<Env> {
  const env: Env = { plaintext: { plain: kafka.bootstrap, brokers: kafka.bootstrap }, setupKafka, producer };
  if (scenario.security) {
    if (!secure) throw new Error('no SASL/TLS cluster was started');
    const c = await secure;
    if (!c.sasl || !c.ssl) throw new Error('the SASL/TLS cluster lacks a listener');
    env.secure = { plain: c.bootstrap, sasl: c.sasl.bootstrap, ssl: c.ssl.bootstrap, saslSsl: c.saslSsl?.bootstrap, caPem: c.ssl.caPem, users: c.sasl.users };
  }
  return env;
}

async function timed(f: () => Promise<RunResult>): Promise<Outcome> {
  const t = Date.now();
  try {
    return { ok: true, result: await f(), ms: Date.now() - t };
  } catch (error) {
    return { ok: false, error, ms: Date.now() - t };
  }
}

async function runBoth(scenario: Scenario, index: number): Promise<[Outcome, Outcome]> {
  let env: Env;
  try {
    env = await envFor(scenario);
  } catch (error) {
    return [
      { ok: false, error, ms: 0 },
      { ok: false, error, ms: 0 },
    ];
  }
  const other: [KafkaModule, Label] = referenceOnly ? [upstream, 'kwire'] : [facade, 'kwire'];
  return Promise.all([timed(() => runScenario(scenario, upstream, 'kafkajs', env, runId, index)), timed(() => runScenario(scenario, other[0], other[1], env, runId, index))]);
}

/** Starts every scenario, `concurrency` at a time, in order; each test awaits its own. */
function startPool(): void {
  let next = 0;
  const settle: ((v: [Outcome, Outcome]) => void)[] = [];
  for (let i = 0; i < scenarios.length; i++) runs.push(new Promise((r) => settle.push(r)));
  const worker = async () => {
    while (next < scenarios.length) {
      const i = next++;
      settle[i](await runBoth(scenarios[i], i));
    }
  };
  for (let w = 0; w < concurrency; w++) void worker();
}

test.before(async () => {
  kafka = await useKafka();
  if (needsSecure) {
    // Started alongside the plaintext scenarios; the SASL/TLS ones come last and wait for it.
    secure = startKafka({ sasl: true, ssl: true });
    secure.catch(() => undefined);
  }
  if (!referenceOnly) {
    const mod = (await import('../../src/index.js')) as unknown as Partial<KafkaModule>;
    if (typeof mod.Kafka !== 'function') throw new Error('@kwire/kafkajs exports no Kafka class yet');
    facade = mod as KafkaModule;
  }
  startPool();
});

test.after(async () => {
  const outcomes = await Promise.all(runs);
  // Where the minutes go: each module's total and the slowest runs (for the suite's time budget).
  const total = (k: 0 | 1) => outcomes.reduce((sum, o) => sum + o[k].ms, 0);
  const slowest = outcomes
    .flatMap((o, i) => [`${o[0].ms} ms kafkajs`, `${o[1].ms} ms kwire`].map((t, k) => ({ ms: o[k].ms, text: `${t}: ${scenarios[i].name}` })))
    .sort((x, y) => y.ms - x.ms)
    .slice(0, 3);
  console.log(`differential: ${scenarios.length} scenarios; run time kafkajs ${total(0)} ms, kwire ${total(1)} ms; slowest: ${slowest.map((s) => s.text).join(' | ')}`);
  await Promise.allSettled([...producers.values()].map(async (p) => (await p).disconnect()));
  if (secure) await secure.then((c) => c.stop()).catch(() => undefined);
  await kafka?.release();
});

function failure(o: Outcome): string {
  if (o.ok) return '';
  const e = o.error as Error;
  return `${e?.stack ?? String(e)}`;
}

const finished: { scenario: Scenario; index: number; a: RunResult; b: RunResult }[] = [];

test('the comparator: a changed record fails, commit-less tolerates a lower commit only', () => {
  const base = (): Trace => ({ records: { 'T0/0': ['string0 k=null v=s"a"'] }, events: {}, notes: ['n'], committed: { 'T0/0': '5' } });
  const plain: Scenario = { name: 'x', topics: [1], run: async () => {} };
  const lenient: Scenario = { ...plain, allow: ['commit-less'] };
  assert.equal(compareTraces(plain, base(), base()), []);
  const changed = base();
  changed.records['T0/0'] = ['string0 k=null v=s"b"'];
  assert.equal(compareTraces(plain, base(), changed), ['- kafkajs record T0/0 #0: string0 k=null v=s"a"', '+ kwire   record T0/0 #0: string0 k=null v=s"b"']);
  const lower = base();
  lower.committed['T0/0'] = '3';
  assert.is(compareTraces(plain, base(), lower).length, 2, 'a lower commit differs without the tolerance');
  assert.equal(compareTraces(lenient, base(), lower), [], 'commit-less accepts a lower commit');
  const higher = base();
  higher.committed['T0/0'] = '7';
  assert.is(compareTraces(lenient, base(), higher).length, 2, 'commit-less never accepts a higher commit');
});

scenarios.forEach((scenario, i) => {
  test(scenario.name, async () => {
    const [a, b] = await runs[i];
    if (!a.ok) assert.unreachable(`the kafkajs run failed (a broken scenario, not a facade difference): ${failure(a)}`);
    if (!b.ok) assert.unreachable(`the @kwire/kafkajs run failed: ${failure(b)}`);
    if (a.ok && b.ok) {
      if (scenario.committed !== false) finished.push({ scenario, index: i, a: a.result, b: b.result });
      else dumpTraces(i, a.result, b.result);
      const diff = compareTraces(scenario, a.result.trace, b.result.trace);
      if (diff.length > 0) {
        assert.unreachable(`traces differ (kafkajs ${a.ms} ms, kwire ${b.ms} ms):\n${diff.slice(0, 80).join('\n')}${diff.length > 80 ? `\n... ${diff.length - 80} more` : ''}`);
      }
    }
  });
});

/**
 * Committed offsets of every group the scenarios used, by ConsumerGroupCommand: `--list` to learn
 * which of ours exist (a group that never committed may be gone, and describing a missing group
 * fails the whole command), then one `--describe --offsets` for all of them.
 */
async function committedOffsets(bootstrap: string, groupIds: string[]): Promise<Map<string, { topic: string; partition: number; committed: bigint | null }[]>> {
  const out = new Map<string, { topic: string; partition: number; committed: bigint | null }[]>();
  const cgc = 'org.apache.kafka.tools.consumer.group.ConsumerGroupCommand';
  const listed = await runTool(kafka.dist, cgc, ['--bootstrap-server', bootstrap, '--list'], { heapMb: 256, timeoutMs: 120_000, label: 'list groups' });
  if (listed.code !== 0) throw new Error(`ConsumerGroupCommand --list failed: ${listed.stderr}`);
  const existing = new Set(listed.stdout.split('\n').map((l) => l.trim()));
  const ours = groupIds.filter((g) => existing.has(g));
  for (const g of groupIds) out.set(g, []);
  if (ours.length === 0) return out;
  const described = await runTool(kafka.dist, cgc, ['--bootstrap-server', bootstrap, '--describe', '--offsets', ...ours.flatMap((g) => ['--group', g])], {
    heapMb: 256,
    timeoutMs: 120_000,
    label: 'describe groups',
  });
  if (described.code !== 0) throw new Error(`ConsumerGroupCommand --describe failed: ${described.stderr}`);
  for (const g of ours) out.set(g, parseGroupOffsets(described.stdout, g));
  return out;
}

// Registered only when some selected scenario reads its commits back (KJD_ONLY may select none).
const committedTest = scenarios.some((s) => s.committed !== false) ? test : test.skip;
committedTest('committed offsets read back with ConsumerGroupCommand agree', async () => {
  await Promise.allSettled(runs);
  const byCluster = new Map<string, string[]>();
  for (const f of finished) for (const r of [f.a, f.b]) byCluster.set(r.plain, [...(byCluster.get(r.plain) ?? []), r.groupId]);
  const offsets = new Map<string, { topic: string; partition: number; committed: bigint | null }[]>();
  for (const [bootstrap, groupIds] of byCluster) for (const [g, rows] of await committedOffsets(bootstrap, groupIds)) offsets.set(g, rows);
  const problems: string[] = [];
  for (const { scenario, index, a, b } of finished) {
    for (const r of [a, b]) {
      for (const row of offsets.get(r.groupId) ?? []) {
        const t = r.topics.indexOf(row.topic);
        r.trace.committed[`${t >= 0 ? `T${t}` : row.topic}/${row.partition}`] = row.committed === null ? '-' : String(row.committed);
      }
    }
    dumpTraces(index, a, b);
    const diff = compareTraces(scenario, { ...a.trace, records: {}, events: {}, notes: [] }, { ...b.trace, records: {}, events: {}, notes: [] });
    if (diff.length > 0) problems.push(`${scenario.name}:\n  ${diff.join('\n  ')}`);
  }
  assert.ok(finished.length > 0, 'no scenario finished on both modules: nothing to compare');
  if (problems.length > 0) assert.unreachable(`committed offsets differ in ${problems.length} scenario(s):\n${problems.join('\n')}`);
});

test.run();
