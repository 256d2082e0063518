// Properties of the four assignors over seeded random groups, each through several simulated
// rebalances (assignor-fixtures.ts): validity, completeness, balance, stickiness, and the
// cooperative protocol's rule that a partition never goes straight from one owner to another.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { checkAssignment, encodeStickyUserData, StickyAssignor, type MemberAssignment, type MemberSubscription } from '../../src/group/assignors/index.js';
import { cooperativeMemberData } from '../../src/group/assignors/cooperative-sticky.js';
import { decodeCase, simulate, tpKey, type GroupCase, type ScenarioOptions } from './assignor-fixtures.js';

const SEEDS = Array.from({ length: 60 }, (_, i) => 1000 + i);

interface Round {
  c: GroupCase;
  members: MemberSubscription[];
  counts: Map<string, number>;
  result: Map<string, MemberAssignment>;
  where: string;
}

function rounds(assignor: string, options: ScenarioOptions, seeds = SEEDS): Round[] {
  const out: Round[] = [];
  for (const seed of seeds) {
    const { cases, results } = simulate(seed, assignor, options);
    cases.forEach((c, i) => {
      const d = decodeCase(c);
      out.push({ c, members: d.members, counts: d.partitionsPerTopic, result: results[i]!, where: `${assignor} seed ${seed} round ${i} (${c.event})` });
    });
  }
  return out;
}

/** Every partition of a topic somebody subscribes to. */
function subscribedPartitions(r: Round): string[] {
  const topics = new Set(r.members.flatMap((m) => m.topics));
  return [...r.counts].filter(([t]) => topics.has(t)).flatMap(([t, n]) => Array.from({ length: n }, (_, p) => `${t}-${p}`));
}

const sizes = (r: Round) => r.members.map((m) => r.result.get(m.memberId)!.partitions.length);
const spread = (xs: number[]) => Math.max(...xs) - Math.min(...xs);

for (const assignor of ['range', 'roundrobin', 'sticky', 'cooperative-sticky']) {
  for (const [family, options] of [
    ['mixed', {}],
    ['racks', { rackProbability: 1 }],
    ['stale claims, old clients', { staleClaims: true, oldClients: true }],
  ] as [string, ScenarioOptions][]) {
    test(`${assignor}, ${family}: each subscribed partition goes to exactly one subscribed member`, () => {
      for (const r of rounds(assignor, options)) {
        assert.equal(checkAssignment(r.members, r.counts, r.result), [], r.where);
        const given = new Set([...r.result.values()].flatMap((a) => a.partitions.map(tpKey)));
        const missing = subscribedPartitions(r).filter((k) => !given.has(k));
        if (assignor !== 'cooperative-sticky') {
          assert.equal(missing, [], `${r.where}: unassigned partitions`);
        } else {
          // Only partitions held back because they change owner: some member still owns them.
          const owned = new Set(r.members.flatMap((m) => m.ownedPartitions.map(tpKey)));
          for (const k of missing) assert.ok(owned.has(k), `${r.where}: ${k} unassigned but owned by nobody`);
        }
      }
    });
  }
}

test('balance where subscriptions are identical: roundrobin and sticky within 1, range within 1 per topic', () => {
  const options: ScenarioOptions = { sameProbability: 1, staleClaims: true, rounds: 6 };
  let checked = 0;
  for (const assignor of ['roundrobin', 'sticky']) {
    for (const r of rounds(assignor, options)) {
      assert.ok(spread(sizes(r)) <= 1, `${r.where}: sizes ${sizes(r).join(',')}`);
      checked++;
    }
  }
  for (const r of rounds('range', options)) {
    for (const [topic] of r.counts) {
      const perMember = r.members.map((m) => r.result.get(m.memberId)!.partitions.filter((tp) => tp.topic === topic).length);
      assert.ok(spread(perMember) <= 1, `${r.where}: ${topic} split ${perMember.join(',')}`);
    }
    checked++;
  }
  // Cooperative: balanced once the follow-up rebalance placed what was held back.
  for (const r of rounds('cooperative-sticky', options)) {
    const given = [...r.result.values()].reduce((n, a) => n + a.partitions.length, 0);
    if (given === subscribedPartitions(r).length) {
      assert.ok(spread(sizes(r)) <= 1, `${r.where}: sizes ${sizes(r).join(',')}`);
      checked++;
    }
  }
  assert.ok(checked > 900, `${checked} rounds checked`);
});

test('balance also holds for sticky from arbitrary overlapping claims', () => {
  for (const r of rounds('sticky', { sameProbability: 1, randomOwnership: true, rounds: 3 })) {
    assert.ok(spread(sizes(r)) <= 1, `${r.where}: sizes ${sizes(r).join(',')}`);
  }
});

test('cooperative-sticky = eager sticky on the same claims, minus exactly the partitions another member owns', () => {
  // The same claims as eager user data (partitions + generation): the eager result is the
  // target; the cooperative one may only leave out partitions that change owner.
  let withheld = 0;
  for (const r of rounds('cooperative-sticky', { sameProbability: 0.5, randomOwnership: true, rounds: 3 })) {
    const eagerMembers = r.members.map((m) => {
      const d = cooperativeMemberData(m);
      return { ...m, userData: encodeStickyUserData(d.partitions, d.generation ?? -1), ownedPartitions: [] };
    });
    const eager = new StickyAssignor().assign({ members: eagerMembers, partitionsPerTopic: r.counts, ...(r.c.racksPerPartition ? { racksPerPartition: r.c.racksPerPartition } : {}) });
    for (const m of r.members) {
      const coop = r.result.get(m.memberId)!.partitions.map(tpKey);
      const target = eager.get(m.memberId)!.partitions.map(tpKey);
      assert.ok(
        coop.every((k) => target.includes(k)),
        `${r.where}: ${m.memberId} got ${coop} outside ${target}`,
      );
      for (const k of target.filter((x) => !coop.includes(x))) {
        const others = r.members.filter((x) => x !== m && x.ownedPartitions.some((tp) => tpKey(tp) === k));
        assert.ok(others.length > 0, `${r.where}: ${k} held back from ${m.memberId} though nobody else owns it`);
        withheld++;
      }
    }
  }
  assert.ok(withheld > 100, `${withheld} held back`);
});

test('stickiness: after a member joins or leaves, every member keeps min(what it had, the quota)', () => {
  // With identical subscriptions and no racks, the sticky assignors keep at least
  // min(previous, floor(total / members)) for each member; round-robin and range make no such
  // promise (and do move more).
  const options: ScenarioOptions = { sameProbability: 1, rackProbability: 0, rounds: 7, maxPartitions: 16 };
  const moved: Record<string, number> = {};
  let rebalances = 0;
  for (const assignor of ['sticky', 'cooperative-sticky', 'roundrobin', 'range']) {
    let kept = 0;
    let total = 0;
    for (const r of rounds(assignor, options)) {
      if (!/^member (joined|left)/.test(r.c.event)) continue;
      const partitions = subscribedPartitions(r).length;
      const quota = Math.floor(partitions / r.members.length);
      let bound = 0;
      let keptHere = 0;
      for (const m of r.members) {
        const before = new Set((r.c.previous.get(m.memberId) ?? []).map(tpKey));
        const now = r.result.get(m.memberId)!.partitions.map(tpKey);
        keptHere += now.filter((k) => before.has(k)).length;
        bound += Math.min(before.size, quota);
      }
      if (assignor === 'sticky' || assignor === 'cooperative-sticky') {
        assert.ok(keptHere >= bound, `${r.where}: kept ${keptHere} < ${bound}`);
        rebalances++;
      }
      kept += keptHere;
      total += [...r.c.previous.values()].reduce((n, l) => n + l.length, 0);
    }
    moved[assignor] = total - kept;
  }
  assert.ok(rebalances > 100, `${rebalances} join/leave rebalances`);
  // The sticky ones move far fewer partitions than the stateless ones over the same histories.
  assert.ok(moved.sticky! * 2 < moved.roundrobin!, JSON.stringify(moved));
  assert.ok(moved['cooperative-sticky']! * 2 < moved.roundrobin!, JSON.stringify(moved));
});

test('cooperative-sticky: no partition moves directly between owners; held-back ones land in the follow-up', () => {
  let heldBack = 0;
  let followUps = 0;
  for (const options of [{}, { staleClaims: true }, { rackProbability: 1 }, { sameProbability: 0, rounds: 8 }] as ScenarioOptions[]) {
    const seeds = SEEDS.map((s) => s + 500);
    for (const seed of seeds) {
      const { cases, results } = simulate(seed, 'cooperative-sticky', options);
      let pending = new Set<string>();
      cases.forEach((c, i) => {
        const members = decodeCase(c).members;
        const owner = new Map<string, string[]>();
        for (const m of members) for (const tp of m.ownedPartitions) owner.set(tpKey(tp), [...(owner.get(tpKey(tp)) ?? []), m.memberId]);
        const given = new Set<string>();
        for (const m of members) {
          const mine = new Set(m.ownedPartitions.map(tpKey));
          for (const tp of results[i]!.get(m.memberId)!.partitions) {
            const k = tpKey(tp);
            given.add(k);
            if (mine.has(k)) continue;
            // Newly given: nobody else may still own it.
            assert.equal(owner.get(k) ?? [], [], `seed ${seed} round ${i}: ${k} given to ${m.memberId} while owned`);
          }
        }
        // Two-step rule: what was held back in the previous round is given in this follow-up.
        if (c.event.startsWith('follow-up')) {
          followUps++;
          for (const k of pending) assert.ok(given.has(k), `seed ${seed} round ${i}: ${k} still unassigned after the follow-up`);
        }
        const topics = new Set(members.flatMap((m) => m.topics));
        pending = new Set(
          [...c.partitionsPerTopic]
            .filter(([t]) => topics.has(t))
            .flatMap(([t, n]) => Array.from({ length: n }, (_, p) => `${t}-${p}`))
            .filter((k) => !given.has(k)),
        );
        heldBack += pending.size;
      });
    }
  }
  assert.ok(heldBack > 200 && followUps > 100, `${heldBack} partitions held back, ${followUps} follow-up rounds`);
});

test('eager sticky, same histories: moves partitions in one round where cooperative takes two', () => {
  // Same seed, same events: the eager assignor never leaves a partition unassigned.
  for (const seed of SEEDS.slice(0, 20)) {
    const { cases, results } = simulate(seed, 'sticky', { sameProbability: 1 });
    cases.forEach((c, i) => {
      const given = [...results[i]!.values()].reduce((n, a) => n + a.partitions.length, 0);
      const total = [...c.partitionsPerTopic.values()].reduce((a, b) => a + b, 0);
      assert.is(given, total, `seed ${seed} round ${i}`);
    });
  }
});

test('results do not depend on anything but the input (same input, same output; input untouched)', () => {
  for (const assignor of ['range', 'roundrobin', 'sticky', 'cooperative-sticky']) {
    for (const seed of SEEDS.slice(0, 10)) {
      const a = simulate(seed, assignor, { staleClaims: true, rackProbability: 0.5 });
      const b = simulate(seed, assignor, { staleClaims: true, rackProbability: 0.5 });
      assert.equal(a.results, b.results);
      assert.equal(
        a.cases.map((c) => c.members.map((m) => m.metadata.toString('hex'))),
        b.cases.map((c) => c.members.map((m) => m.metadata.toString('hex'))),
      );
    }
  }
});

test.run();
