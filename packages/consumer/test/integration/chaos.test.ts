// Issue 10's chaos test in its short form (about 6-7 minutes): a 3-node cluster of its own, and
// three runs of chaos/harness.ts on it, classic cooperative-sticky then KIP-848, then (issue 31)
// classic cooperative-sticky in the concurrent mode: run({ maxConcurrency: 64, ordering: 'key' }),
// a handler of 0-20 ms, rules (8)-(10) of the oracle, a shorter fault window of its own schedule
// (planConcurrentFaults: 3-5 faults, a member SIGKILL among them). Each npm test draws
// a fresh seed (printed, with how to replay it), and the two runs share its schedule
// (planFaultPair): the KIP-848 run continues the classic run's deck of the nine kinds of fault
// (member SIGKILL, SIGTERM, SIGSTOP; proxy RST, black hole, latency, cut Fetch answer; SIGKILL of a
// partition leader and of the group coordinator), so a test meets nearly all of them.
// KWIRE_CHAOS_SEED=S replays one seed; KWIRE_CHAOS_KEEP=1 keeps the members' logs. Long runs: `npm run chaos -- --minutes N --seed S`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startKafka, type KafkaCluster } from '@kwire/broker';
import { randomInt } from 'node:crypto';
import { CHAOS_BROKER_CONFIG, SESSION_TIMEOUT_MS, runChaos } from './chaos/harness.js';
import { planConcurrentFaults, planFaultPair } from './chaos/schedule.js';

const FAULT_MS = 65_000;
const CONCURRENT_FAULT_MS = 45_000;
let cluster: KafkaCluster;
const dir = mkdtempSync(join(tmpdir(), 'kwire-chaos-'));
let failed = false;

test.before(async () => {
  cluster = await startKafka({ nodes: 3, heapMb: 512, config: CHAOS_BROKER_CONFIG });
});
test.after(async () => {
  await cluster?.stop();
  // The members' logs stay for a failed run (their path is in the summary), or with KWIRE_CHAOS_KEEP=1.
  if (!failed && !process.env.KWIRE_CHAOS_KEEP) rmSync(dir, { recursive: true, force: true });
});

const seed = process.env.KWIRE_CHAOS_SEED ? Number(process.env.KWIRE_CHAOS_SEED) : randomInt(1, 1_000_000);
const plans = planFaultPair(seed, FAULT_MS, SESSION_TIMEOUT_MS);
const concurrentPlan = planConcurrentFaults(seed, CONCURRENT_FAULT_MS, SESSION_TIMEOUT_MS);
process.stdout.write(
  `chaos seed ${seed} (replay: KWIRE_CHAOS_SEED=${seed}): classic ${plans[0].map((f) => f.kind).join(', ')}; KIP-848 ${plans[1].map((f) => f.kind).join(', ')}; classic concurrent ${concurrentPlan.map((f) => f.kind).join(', ')}\n`,
);

for (const [i, groupProtocol] of (['classic', 'consumer'] as const).entries()) {
  test(`chaos, ${groupProtocol} group, seed ${seed}: nothing lost, nothing committed unfinished, no zombie, every close() within 10 s`, async () => {
    const r = await runChaos({ cluster, seed, plan: plans[i], groupProtocol, faultMs: FAULT_MS, dir, log: (l) => process.stdout.write(`${l}\n`) });
    process.stdout.write(`${r.summary}\n`);
    if (r.report.violations.length) failed = true;
    assert.equal(r.report.violations, [], `chaos ${groupProtocol} seed ${r.seed} (replay: KWIRE_CHAOS_SEED=${r.seed}):\n${r.summary}`);
    // The run did what it claims: records were read and faults happened.
    assert.ok(r.report.unique > 5_000, `only ${r.report.unique} records`);
    assert.ok(Object.values(r.faultsByKind).reduce((a, b) => a + b, 0) >= 3, 'at least three faults');
  });
}

test(`chaos, classic group, concurrent (maxConcurrency 64, ordering 'key'), seed ${seed}: also per-key order, nothing finished and committed comes again after a SIGKILL, nothing starts after a revocation`, async () => {
  const r = await runChaos({ cluster, seed, plan: concurrentPlan, groupProtocol: 'classic', concurrent: true, faultMs: CONCURRENT_FAULT_MS, dir, log: (l) => process.stdout.write(`${l}\n`) });
  process.stdout.write(`${r.summary}\n`);
  if (r.report.violations.length) failed = true;
  assert.equal(r.report.violations, [], `chaos classic concurrent seed ${r.seed} (replay: KWIRE_CHAOS_SEED=${r.seed}):\n${r.summary}`);
  assert.ok(r.report.unique > 3_000, `only ${r.report.unique} records`);
  assert.ok(Object.values(r.faultsByKind).reduce((a, b) => a + b, 0) >= 3, 'at least three faults');
  assert.ok(r.faultsByKind['member-sigkill']! >= 1, 'a member SIGKILL');
  // The mode did what it claims: records finished out of order, and commits carried them.
  assert.ok(r.report.commitsWithMetadata > 0, 'no commit carried finished records in its metadata');
});

test.run();
