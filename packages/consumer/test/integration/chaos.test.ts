// Issue 10's chaos test in its short form (about 4-5 minutes): a 3-node cluster of its own, and
// two runs of chaos/harness.ts on it, classic cooperative-sticky then KIP-848, each with a fixed
// seed whose 65 s schedule holds, between the two, every kind of fault (member SIGKILL, SIGTERM,
// SIGSTOP; proxy RST, black hole, latency, cut Fetch answer; SIGKILL of a partition leader and of
// the group coordinator). KWIRE_CHAOS_SEED replays one seed in both runs. Long runs:
// `npm run chaos -- --minutes N --seed S`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startKafka, type KafkaCluster } from '@kwire/broker';
import { CHAOS_BROKER_CONFIG, runChaos } from './chaos/harness.js';

const FAULT_MS = 65_000;
const replay = process.env.KWIRE_CHAOS_SEED ? Number(process.env.KWIRE_CHAOS_SEED) : undefined;
let cluster: KafkaCluster;
const dir = mkdtempSync(join(tmpdir(), 'kwire-chaos-'));
let failed = false;

test.before(async () => {
  cluster = await startKafka({ nodes: 3, heapMb: 512, config: CHAOS_BROKER_CONFIG });
});
test.after(async () => {
  await cluster?.stop();
  // The members' logs stay for a failed run (their path is in the summary).
  if (!failed) rmSync(dir, { recursive: true, force: true });
});

for (const [groupProtocol, seed] of [
  ['classic', 13],
  ['consumer', 18],
] as const) {
  test(`chaos, ${groupProtocol} group, seed ${replay ?? seed}: nothing lost, nothing committed unfinished, no zombie, every close() within 10 s`, async () => {
    const r = await runChaos({ cluster, seed: replay ?? seed, groupProtocol, faultMs: FAULT_MS, dir, log: (l) => process.stdout.write(`${l}\n`) });
    process.stdout.write(`${r.summary}\n`);
    if (r.report.violations.length) failed = true;
    assert.equal(r.report.violations, [], `chaos ${groupProtocol} seed ${r.seed} (replay: KWIRE_CHAOS_SEED=${r.seed}):\n${r.summary}`);
    // The run did what it claims: records were read and faults happened.
    assert.ok(r.report.unique > 5_000, `only ${r.report.unique} records`);
    assert.ok(Object.values(r.faultsByKind).reduce((a, b) => a + b, 0) >= 3, 'at least three faults');
  });
}

test.run();
