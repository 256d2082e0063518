// kwire's assignors against the Java client's own, on the same bytes: random groups are
// simulated over several rebalances (members joining and leaving, partitions added, changed
// subscriptions, stale claims, racks, old clients), every member's JoinGroup metadata is encoded
// by kwire, and Java's RangeAssignor, RoundRobinAssignor, StickyAssignor and
// CooperativeStickyAssignor (from the Kafka jars the broker runs on) compute the assignment
// from those bytes as a Java leader would. Every case must match kwire's result exactly, and
// Java's encoded assignments must decode and re-encode byte for byte.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { cacheDir, compileJava, defaultKafkaVersion, ensureKafka, repoRoot, runTool } from '@kwire/broker';
import { checkAssignment, type MemberAssignment } from '../../src/group/assignors/index.js';
import { decodeAssignment, encodeAssignment } from '../../src/group/consumer-protocol.js';
import { decodeCase, simulate, tpKey, type GroupCase, type ScenarioOptions } from '../unit/assignor-fixtures.js';

const ORACLE = join(repoRoot, 'packages/consumer/test/integration/java/KwireAssignorOracle.java');
const ASSIGNORS = ['range', 'roundrobin', 'sticky', 'cooperative-sticky'] as const;

/** Scenario families: seeds and options. */
const FAMILIES: { name: string; seeds: number[]; options: ScenarioOptions }[] = [
  { name: 'mixed', seeds: range(1, 25), options: {} },
  { name: 'racks', seeds: range(100, 16), options: { rackProbability: 1 } },
  { name: 'old clients, stale claims', seeds: range(200, 16), options: { oldClients: true, staleClaims: true } },
  { name: 'large', seeds: range(300, 6), options: { maxMembers: 14, maxTopics: 5, maxPartitions: 40, rounds: 6 } },
  { name: 'identical subscriptions', seeds: range(400, 10), options: { sameProbability: 1, staleClaims: true } },
  // Arbitrary overlapping claims at mixed generations: drives the sticky balancing through its
  // rarer branches (moving a partition back to its previous owner, undoing opposite moves).
  { name: 'random ownership', seeds: range(500, 20), options: { sameProbability: 0, maxMembers: 8, maxTopics: 3, maxPartitions: 16, rounds: 4, randomOwnership: true } },
  {
    name: 'random ownership, racks',
    seeds: range(600, 12),
    options: { sameProbability: 0.3, maxMembers: 12, maxTopics: 4, maxPartitions: 30, rounds: 3, randomOwnership: true, rackProbability: 1, oldClients: true },
  },
];

function range(from: number, n: number): number[] {
  return Array.from({ length: n }, (_, i) => from + i);
}

function oracleInput(cases: readonly GroupCase[]): string {
  const lines: string[] = [];
  cases.forEach((c, i) => {
    lines.push(`case ${i} ${c.assignor}`);
    for (const [topic, n] of c.partitionsPerTopic) {
      const racks = c.racksPerPartition?.get(topic);
      const spec = racks ? ` ${Array.from({ length: n }, (_, p) => (racks[p]?.length ? racks[p]!.join(',') : '-')).join('|')}` : '';
      lines.push(`topic ${topic} ${n}${spec}`);
    }
    for (const m of c.members) lines.push(`member ${m.memberId} ${m.groupInstanceId ?? '-'} ${m.metadata.toString('base64')}`);
    lines.push('run');
  });
  return `${lines.join('\n')}\n`;
}

/** Parses the oracle's output: case index -> member id -> assignment bytes (or an error). */
function parseOutput(stdout: string): Map<number, Map<string, Buffer> | string> {
  const out = new Map<number, Map<string, Buffer> | string>();
  let current: Map<string, Buffer> | undefined;
  for (const line of stdout.split('\n')) {
    const f = line.split(' ');
    if (f[0] === 'result') out.set(Number(f[1]), (current = new Map()));
    else if (f[0] === 'assign' && current) current.set(f[1]!, Buffer.from(f[2]!, 'base64'));
    else if (f[0] === 'end') current = undefined;
    else if (f[0] === 'error') out.set(Number(f[1]), f.slice(2).join(' '));
  }
  return out;
}

const show = (a: MemberAssignment | undefined) => (a?.partitions ?? []).map(tpKey).sort().join(',');

async function compareWith(version: string): Promise<void> {
  const dist = await ensureKafka(version);
  const dir = await compileJava(ORACLE, { classpath: dist.classpath });

  const cases: GroupCase[] = [];
  const ours: Map<string, MemberAssignment>[] = [];
  const family: string[] = [];
  for (const assignor of ASSIGNORS) {
    for (const f of FAMILIES) {
      for (const seed of f.seeds) {
        const { cases: c, results } = simulate(seed * 7919 + ASSIGNORS.indexOf(assignor), assignor, f.options);
        cases.push(...c);
        ours.push(...results);
        for (let i = 0; i < c.length; i++) family.push(`${assignor} / ${f.name} / seed ${seed} / round ${i}`);
      }
    }
  }

  const run = await runTool(dist, 'KwireAssignorOracle', [], { extraClasspath: [dir], input: oracleInput(cases), timeoutMs: 300_000, heapMb: 1024 });
  assert.is(run.code, 0, `the oracle failed: ${run.stderr.slice(-2000)}`);
  const java = parseOutput(run.stdout);

  const perAssignor = new Map<string, { same: number; total: number }>();
  const mismatches: string[] = [];
  const javaFailures: string[] = [];
  let bytesChecked = 0;
  cases.forEach((c, i) => {
    const tally = perAssignor.get(c.assignor) ?? { same: 0, total: 0 };
    perAssignor.set(c.assignor, tally);
    const j = java.get(i);
    if (typeof j === 'string' && j.startsWith('java.lang.NullPointerException')) {
      // AbstractStickyAssignor's balancing dereferences a partition's previous owner after it
      // set that member aside as unable to change (a stale claim by a member whose topics nobody
      // else subscribes to): the Java leader fails the rebalance. kwire skips that move instead;
      // its answer must still be a valid assignment.
      const d = decodeCase(c);
      const problems = checkAssignment(d.members, d.partitionsPerTopic, ours[i]!);
      assert.equal(problems, [], `${family[i]}: kwire's answer where Java throws`);
      javaFailures.push(`${family[i]}: ${j}`);
      return;
    }
    tally.total++;
    if (j === undefined || typeof j === 'string') {
      mismatches.push(`${family[i]} (${c.event}): Java ${j === undefined ? 'gave no answer' : `threw ${j}`}`);
      return;
    }
    let same = j.size === c.members.length;
    const diffs: string[] = [];
    for (const m of c.members) {
      const bytes = j.get(m.memberId);
      const theirs = bytes ? decodeAssignment(bytes) : undefined;
      if (bytes && theirs) {
        // Java's encoding of its own result, decoded and re-encoded by kwire: the same bytes.
        assert.ok(encodeAssignment(theirs, theirs.version).equals(bytes), `${family[i]}: assignment bytes of ${m.memberId} re-encode differently`);
        bytesChecked++;
      }
      const a = show(theirs);
      const b = show(ours[i]!.get(m.memberId));
      if (a !== b) {
        same = false;
        diffs.push(`  ${m.memberId}: java [${a}] kwire [${b}]`);
      }
    }
    if (same) tally.same++;
    else mismatches.push(`${family[i]} (${c.event}):\n${diffs.join('\n')}`);
  });

  const summary = [...perAssignor].map(([name, t]) => `${name} ${t.same}/${t.total}`).join(', ');
  const total = [...perAssignor.values()].reduce((s, t) => s + t.total, 0);
  const same = [...perAssignor.values()].reduce((s, t) => s + t.same, 0);
  console.log(`  Java ${version} assignors vs kwire: ${same}/${total} rebalances identical (${summary}); ${bytesChecked} Java assignments re-encoded byte for byte`);
  if (javaFailures.length > 0) console.log(`  Java threw a NullPointerException on ${javaFailures.length} more (kwire gave a valid assignment): ${javaFailures.join('; ')}`);
  if (mismatches.length > 0) {
    assert.unreachable(`${mismatches.length} of ${total} rebalances differ from Java ${version}:\n${mismatches.slice(0, 8).join('\n')}`);
  }
}

test(`identical to Java's assignors (Kafka ${defaultKafkaVersion()})`, async () => {
  await compareWith(defaultKafkaVersion());
});

// Also against 3.9 (the last 3.x) when its jars are already in the cache; no download for it.
const older = '3.9.1';
if (older !== defaultKafkaVersion() && existsSync(join(cacheDir(), 'kafka', older, 'complete'))) {
  test(`identical to Java's assignors (Kafka ${older})`, async () => {
    await compareWith(older);
  });
}

test.run();
