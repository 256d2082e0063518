// Assignments of small groups worked out by hand from the Java assignors' rules (the reasoning
// is in the comments), plus the Java orderings they depend on, checked against values printed
// by a JVM.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  builtInAssignor,
  checkAssignment,
  commonRebalanceProtocol,
  CooperativeStickyAssignor,
  encodeCooperativeStickyUserData,
  encodeStickyUserData,
  RangeAssignor,
  resolveAssignors,
  RoundRobinAssignor,
  StickyAssignor,
  type Assignor,
  type MemberSubscription,
  type TopicPartition,
} from '../../src/group/assignors/index.js';
import { JavaHashOrder, javaStringHash, javaTopicPartitionHash } from '../../src/group/assignors/common.js';
import { ConfigError } from '../../src/errors.js';
import { assignNow } from './assignor-fixtures.js';

function member(memberId: string, topics: string[], extra: Partial<MemberSubscription> = {}): MemberSubscription {
  return { memberId, groupInstanceId: null, topics, userData: null, ownedPartitions: [], generationId: -1, rackId: null, ...extra };
}

/** "t-0 t-1 u-3" -> partitions. */
function tps(s: string): TopicPartition[] {
  return s
    .split(' ')
    .filter(Boolean)
    .map((x) => {
      const i = x.lastIndexOf('-');
      return { topic: x.slice(0, i), partition: Number(x.slice(i + 1)) };
    });
}

/** Runs an assignor; returns member id -> "t-0 t-1" (sorted by topic, then partition). */
function run(assignor: Assignor, members: MemberSubscription[], counts: Record<string, number>, racks?: Record<string, string[][]>): Record<string, string> {
  const partitionsPerTopic = new Map(Object.entries(counts));
  const result = assignNow(assignor, {
    members,
    partitionsPerTopic,
    ...(racks ? { racksPerPartition: new Map(Object.entries(racks)) } : {}),
  });
  assert.equal(checkAssignment(members, partitionsPerTopic, result), [], 'a valid assignment');
  const out: Record<string, string> = {};
  for (const [id, a] of result) out[id] = a.partitions.map((tp) => `${tp.topic}-${tp.partition}`).join(' ');
  return out;
}

// ---- Java orderings ------------------------------------------------------------------------

test('String.hashCode and TopicPartition.hashCode as Java computes them', () => {
  assert.is(javaStringHash('hello'), 99162322);
  assert.is(javaStringHash(''), 0);
  // The coordinator partition of "test-group" in 50 partitions is 12 (issue 6).
  assert.is(Math.abs(javaStringHash('test-group')) % 50, 12);
  assert.is(javaStringHash('test-group'), 627841412);
  assert.is(javaTopicPartitionHash('t', 3), 1170);
});

test('HashMap iteration order as a JVM printed it', () => {
  const order = new JavaHashOrder<string>(javaStringHash);
  for (let i = 1; i <= 20; i++) order.add(`consumer-${i}`);
  // Printed by `new HashMap<>()` filled with consumer-1..consumer-20 in order (OpenJDK 17).
  assert.is(
    order.keys().join(' '),
    'consumer-20 consumer-11 consumer-10 consumer-6 consumer-17 consumer-5 consumer-16 consumer-4 consumer-19 consumer-3 consumer-18 consumer-2 consumer-13 consumer-1 consumer-12 consumer-15 consumer-14 consumer-9 consumer-8 consumer-7',
  );
  // Nine keys with one hash code ("Aa" and "BB" hash alike) make a chain of 9 in a table of 16,
  // which Java resizes to 32 instead of treeifying: "p" then sits in bucket 16, not 0.
  const collide = new JavaHashOrder<string>(javaStringHash);
  for (let i = 0; i < 9; i++) collide.add([3, 2, 1, 0].map((b) => ((i >> b) & 1 ? 'BB' : 'Aa')).join(''));
  for (const k of ['p', 'AaAaAa', 'a']) collide.add(k);
  assert.is(collide.keys().join(' '), 'AaAaAa a AaAaAaAa AaAaAaBB AaAaBBAa AaAaBBBB AaBBAaAa AaBBAaBB AaBBBBAa AaBBBBBB BBAaAaAa p');
  assert.is(collide.first(), 'AaAaAa');
  collide.delete('AaAaAa');
  assert.is(collide.first(), 'a');
});

// ---- range ---------------------------------------------------------------------------------

test('range: the example of the Java documentation', () => {
  // Two members, two topics of 3: per topic, 3/2 = 1 each and the first member one more.
  assert.equal(run(new RangeAssignor(), [member('C1', ['t0', 't1']), member('C0', ['t0', 't1'])], { t0: 3, t1: 3 }), {
    C1: 't0-2 t1-2',
    C0: 't0-0 t0-1 t1-0 t1-1',
  });
});

test('range: different subscriptions and partition counts, topic by topic', () => {
  // t0 (5) to A, B: 2 each, A one more -> A 0-2, B 3-4.
  // t1 (4) to A, C: 2 each -> A 0-1, C 2-3.   t2 (2) to C alone.   gone: not in metadata.
  const got = run(new RangeAssignor(), [member('C', ['t1', 't2']), member('A', ['t0', 't1', 'gone']), member('B', ['t0'])], { t0: 5, t1: 4, t2: 2 });
  assert.equal(got, { C: 't1-2 t1-3 t2-0 t2-1', A: 't0-0 t0-1 t0-2 t1-0 t1-1', B: 't0-3 t0-4' });
});

test('range: more members than partitions leaves the last ones idle', () => {
  const got = run(
    new RangeAssignor(),
    ['m1', 'm2', 'm3', 'm4'].map((id) => member(id, ['t'])),
    { t: 2 },
  );
  assert.equal(got, { m1: 't-0', m2: 't-1', m3: '', m4: '' });
});

test('range: static members first, by group.instance.id, then dynamic ones by member id', () => {
  // Order: c (instance y), b (instance z), then a, d. 6 partitions / 4 = 1, first two get 2.
  const members = [member('a', ['t']), member('b', ['t'], { groupInstanceId: 'z' }), member('c', ['t'], { groupInstanceId: 'y' }), member('d', ['t'])];
  assert.equal(run(new RangeAssignor(), members, { t: 6 }), { a: 't-4', b: 't-2 t-3', c: 't-0 t-1', d: 't-5' });
  // A restarted static member gets a new member id but keeps its place.
  members[2] = member('zzz-new-id', ['t'], { groupInstanceId: 'y' });
  assert.equal(run(new RangeAssignor(), members, { t: 6 }), { a: 't-4', b: 't-2 t-3', 'zzz-new-id': 't-0 t-1', d: 't-5' });
});

test('range: member ids compare by UTF-16 code unit, as Java Strings do (upper case first)', () => {
  assert.equal(run(new RangeAssignor(), [member('a', ['t']), member('B', ['t'])], { t: 3 }), { a: 't-2', B: 't-0 t-1' });
});

test('range, rack-aware: partitions go to members on a replica rack, within the same quotas', () => {
  const racks = { t: [['a'], ['b'], ['a'], ['b']] };
  const members = [member('c0', ['t'], { rackId: 'a' }), member('c1', ['t'], { rackId: 'b' })];
  assert.equal(run(new RangeAssignor(), members, { t: 4 }, racks), { c0: 't-0 t-2', c1: 't-1 t-3' });
  // Without member racks: plain ranges.
  assert.equal(run(new RangeAssignor(), [member('c0', ['t']), member('c1', ['t'])], { t: 4 }, racks), { c0: 't-0 t-1', c1: 't-2 t-3' });
  // Every partition on every rack: rack-awareness cannot help, plain ranges.
  const everywhere = {
    t: [
      ['a', 'b'],
      ['a', 'b'],
      ['a', 'b'],
      ['a', 'b'],
    ],
  };
  assert.equal(run(new RangeAssignor(), members, { t: 4 }, everywhere), { c0: 't-0 t-1', c1: 't-2 t-3' });
});

test('range, rack-aware: co-partitioned topics stay co-partitioned', () => {
  const members = [member('c0', ['t', 'u'], { rackId: 'a' }), member('c1', ['t', 'u'], { rackId: 'b' })];
  // Same rack layout for t and u: partition numbers are matched together.
  const aligned = { t: [['a'], ['b'], ['a'], ['b']], u: [['a'], ['b'], ['a'], ['b']] };
  assert.equal(run(new RangeAssignor(), members, { t: 4, u: 4 }, aligned), { c0: 't-0 t-2 u-0 u-2', c1: 't-1 t-3 u-1 u-3' });
  // Opposite layouts: no partition number matches both topics, so co-partitioning wins over racks.
  const opposite = { t: [['a'], ['b'], ['a'], ['b']], u: [['b'], ['a'], ['b'], ['a']] };
  assert.equal(run(new RangeAssignor(), members, { t: 4, u: 4 }, opposite), { c0: 't-0 t-1 u-0 u-1', c1: 't-2 t-3 u-2 u-3' });
});

// ---- roundrobin ----------------------------------------------------------------------------

test('roundrobin: the examples of the Java documentation', () => {
  assert.equal(run(new RoundRobinAssignor(), [member('C0', ['t0', 't1']), member('C1', ['t0', 't1'])], { t0: 3, t1: 3 }), {
    C0: 't0-0 t0-2 t1-1',
    C1: 't0-1 t1-0 t1-2',
  });
  // t0, t1, t2 with 1, 2, 3 partitions; C0 takes t0; C1 t0, t1; C2 all three. Dealt in order
  // t0-0 t1-0 t1-1 t2-0 t2-1 t2-2 around C0, C1, C2, skipping members not subscribed.
  const members = [member('C2', ['t0', 't1', 't2']), member('C0', ['t0']), member('C1', ['t0', 't1'])];
  assert.equal(run(new RoundRobinAssignor(), members, { t0: 1, t1: 2, t2: 3 }), { C2: 't1-1 t2-0 t2-1 t2-2', C0: 't0-0', C1: 't1-0' });
});

test('roundrobin: topics sorted by name (upper case first), static members first', () => {
  // Partitions in order B-0 B-1 a-0 b-0 b-1; members: s (instance i1), then m1, m2.
  const members = [member('m2', ['a', 'b', 'B']), member('m1', ['a', 'b', 'B']), member('s', ['a', 'b', 'B'], { groupInstanceId: 'i1' })];
  assert.equal(run(new RoundRobinAssignor(), members, { a: 1, b: 2, B: 2 }), { m2: 'a-0', m1: 'B-1 b-1', s: 'B-0 b-0' });
});

test('roundrobin: idle members when there are more members than partitions', () => {
  assert.equal(
    run(
      new RoundRobinAssignor(),
      ['x', 'y', 'z'].map((id) => member(id, ['t'])),
      { t: 1 },
    ),
    { x: 't-0', y: '', z: '' },
  );
});

// ---- sticky --------------------------------------------------------------------------------

test('sticky: a fresh group is dealt round-robin in member-id order within the quotas', () => {
  // 7 partitions over 3: quota 2, one member 3. All start short: t0-0 c0, t0-1 c1, t0-2 c2,
  // t0-3 c0 (reaches 2), t1-0 c1, t1-1 c2, then t1-2 to the first member at the quota, c0.
  const members = [member('c2', ['t0', 't1']), member('c0', ['t0', 't1']), member('c1', ['t0', 't1'])];
  assert.equal(run(new StickyAssignor(), members, { t0: 4, t1: 3 }), { c2: 't0-2 t1-1', c0: 't0-0 t0-3 t1-2', c1: 't0-1 t1-0' });
});

test('sticky: when a member leaves, the others keep everything and split its partitions', () => {
  // After c1 (t0-1 t1-0) leaves: quota 3, one member 4. c0 keeps its 3 and may take one more,
  // c2 keeps its 2 and is short: t0-1 goes to c2, then t1-0 to c0.
  const members = [member('c0', ['t0', 't1'], { userData: encodeStickyUserData(tps('t0-0 t0-3 t1-2'), 7) }), member('c2', ['t0', 't1'], { userData: encodeStickyUserData(tps('t0-2 t1-1'), 7) })];
  assert.equal(run(new StickyAssignor(), members, { t0: 4, t1: 3 }), { c0: 't0-0 t0-3 t1-0 t1-2', c2: 't0-1 t0-2 t1-1' });
});

test('sticky: a joining member takes partitions straight away (eager), the others keep the rest', () => {
  // A and B own t-0 t-1 and t-2 t-3; C joins. Quota 1, one member 2: A (first in Java's
  // HashMap order) keeps 2, B keeps 1 (t-2), C gets t-3 in the same rebalance.
  const members = [member('A', ['t'], { userData: encodeStickyUserData(tps('t-0 t-1'), 5) }), member('B', ['t'], { userData: encodeStickyUserData(tps('t-2 t-3'), 5) }), member('C', ['t'])];
  assert.equal(run(new StickyAssignor(), members, { t: 4 }), { A: 't-0 t-1', B: 't-2', C: 't-3' });
});

test('sticky: static membership does not change the order (member ids decide)', () => {
  const plain = [member('c2', ['t']), member('c0', ['t']), member('c1', ['t'])];
  const statics = plain.map((m, i) => ({ ...m, groupInstanceId: `i${9 - i}` }));
  assert.equal(run(new StickyAssignor(), statics, { t: 5 }), run(new StickyAssignor(), plain, { t: 5 }));
  assert.equal(run(new StickyAssignor(), plain, { t: 5 }), { c2: 't-2', c0: 't-0 t-3', c1: 't-1 t-4' });
});

test('sticky, rack-aware: short members are filled from partitions on their rack first', () => {
  // Racks a a b b: t-0 and t-1 go to c0 (rack a), t-2 and t-3 to c1 (rack b); plain
  // round-robin would give c0 t-0 t-2.
  const members = [member('c0', ['t'], { rackId: 'a' }), member('c1', ['t'], { rackId: 'b' })];
  const racks = { t: [['a'], ['a'], ['b'], ['b']] };
  assert.equal(run(new StickyAssignor(), members, { t: 4 }, racks), { c0: 't-0 t-1', c1: 't-2 t-3' });
  assert.equal(run(new StickyAssignor(), [member('c0', ['t']), member('c1', ['t'])], { t: 4 }, racks), { c0: 't-0 t-2', c1: 't-1 t-3' });
});

test('sticky: different subscriptions keep ownership and balance what can move', () => {
  // a has t (4 partitions), b has t and u (2). Previously a had nothing, b had everything:
  // b keeps u (only b can have it) and, of t, gives a enough to balance 3 / 3.
  const members = [member('a', ['t'], { userData: encodeStickyUserData([], 3) }), member('b', ['t', 'u'], { userData: encodeStickyUserData(tps('t-0 t-1 t-2 t-3 u-0 u-1'), 3) })];
  const got = run(new StickyAssignor(), members, { t: 4, u: 2 });
  assert.equal(got.b!.split(' ').filter((x) => x.startsWith('u-')).length, 2);
  assert.is(got.a!.split(' ').length, 3);
  assert.is(got.b!.split(' ').length, 3);
});

// ---- cooperative-sticky --------------------------------------------------------------------

test('cooperative-sticky: a joining member gets a moved partition only in the follow-up rebalance', () => {
  // Same group as the eager case: t-3 moves from B to C, so this time it is left out.
  const round1 = [member('A', ['t'], { ownedPartitions: tps('t-0 t-1'), generationId: 5 }), member('B', ['t'], { ownedPartitions: tps('t-2 t-3'), generationId: 5 }), member('C', ['t'])];
  assert.equal(run(new CooperativeStickyAssignor(), round1, { t: 4 }), { A: 't-0 t-1', B: 't-2', C: '' });
  // B revokes t-3 and rejoins; now nobody owns it and C gets it.
  const round2 = [
    member('A', ['t'], { ownedPartitions: tps('t-0 t-1'), generationId: 6 }),
    member('B', ['t'], { ownedPartitions: tps('t-2'), generationId: 6 }),
    member('C', ['t'], { generationId: 6 }),
  ];
  assert.equal(run(new CooperativeStickyAssignor(), round2, { t: 4 }), { A: 't-0 t-1', B: 't-2', C: 't-3' });
});

test('cooperative-sticky: a stale claim loses to the member of the newer generation, whatever the order', () => {
  // B (generation 3) still claims t-1, which A (generation 5) owns.
  for (const ids of [
    ['A', 'B'],
    ['zz', 'aa'],
  ]) {
    const [a, b] = ids as [string, string];
    const members = [member(b, ['t'], { ownedPartitions: tps('t-1 t-2 t-3'), generationId: 3 }), member(a, ['t'], { ownedPartitions: tps('t-0 t-1'), generationId: 5 })];
    assert.equal(run(new CooperativeStickyAssignor(), members, { t: 4 }), { [b]: 't-2 t-3', [a]: 't-0 t-1' }, `ids ${ids.join(', ')}`);
  }
});

test('cooperative-sticky: a partition claimed by two members of one generation is voided and held back', () => {
  // A and B both claim t-1 at generation 5: neither keeps it; it is assigned afresh (to A,
  // which is short), which counts as a transfer, so it stays unassigned this round.
  const members = [member('A', ['t'], { ownedPartitions: tps('t-0 t-1'), generationId: 5 }), member('B', ['t'], { ownedPartitions: tps('t-1 t-2 t-3'), generationId: 5 })];
  assert.equal(run(new CooperativeStickyAssignor(), members, { t: 4 }), { A: 't-0', B: 't-2 t-3' });
  // The eager sticky assignor, given the same claims through user data, assigns it at once.
  const eager = [
    member('A', ['t'], { userData: encodeStickyUserData(tps('t-0 t-1'), 5), generationId: 5 }),
    member('B', ['t'], { userData: encodeStickyUserData(tps('t-1 t-2 t-3'), 5), generationId: 5 }),
  ];
  assert.equal(run(new StickyAssignor(), eager, { t: 4 }), { A: 't-0 t-1', B: 't-2 t-3' });
});

test('cooperative-sticky: the generation comes from user data for subscriptions older than v2', () => {
  // Both claim t-1 and send no GenerationId (subscription v1): A's user data says generation 5,
  // B's 2. Java compares the later claimant's user-data generation with the earlier one's
  // *subscription* generation (-1 here), so B, second in Java's order, takes t-1 from A.
  // Quota 2 each: A keeps t-0 and is short; B keeps t-1 t-2 and t-3 must move to A, which a
  // cooperative assignment leaves for the next round.
  const members = [
    member('A', ['t'], { ownedPartitions: tps('t-0 t-1'), userData: encodeCooperativeStickyUserData(5) }),
    member('B', ['t'], { ownedPartitions: tps('t-1 t-2 t-3'), userData: encodeCooperativeStickyUserData(2) }),
  ];
  assert.equal(run(new CooperativeStickyAssignor(), members, { t: 4 }), { A: 't-0', B: 't-1 t-2' });
  // With GenerationId in the subscription (v2+), the newer generation wins as it should.
  members[0]!.generationId = 5;
  members[1]!.generationId = 2;
  assert.equal(run(new CooperativeStickyAssignor(), members, { t: 4 }), { A: 't-0 t-1', B: 't-2 t-3' });
});

// ---- configuration helpers -----------------------------------------------------------------

test('protocol names, rebalance protocols and resolution of configured assignors', () => {
  assert.equal(
    ['range', 'roundrobin', 'sticky', 'cooperative-sticky'].map((n) => builtInAssignor(n as never).name),
    ['range', 'roundrobin', 'sticky', 'cooperative-sticky'],
  );
  // Java's default [range, cooperative-sticky] runs eager until range is removed.
  assert.is(commonRebalanceProtocol(resolveAssignors(['range', 'cooperative-sticky'])), 'eager');
  assert.is(commonRebalanceProtocol(resolveAssignors(['cooperative-sticky'])), 'cooperative');
  assert.equal(
    resolveAssignors(['org.apache.kafka.clients.consumer.StickyAssignor', 'roundrobin']).map((a) => a.name),
    ['sticky', 'roundrobin'],
  );
  const custom: Assignor = { name: 'mine', rebalanceProtocol: 'cooperative', subscriptionUserData: () => null, assign: () => new Map() };
  assert.is(resolveAssignors([custom, 'cooperative-sticky'])[0], custom);
  assert.is(commonRebalanceProtocol([custom, new CooperativeStickyAssignor()]), 'cooperative');
  assert.throws(
    () => resolveAssignors(['nope']),
    (e: unknown) => e instanceof ConfigError && /unknown partition assignor "nope"/.test(e.message),
  );
  assert.throws(
    () => resolveAssignors(['range', 'range']),
    (e: unknown) => e instanceof ConfigError,
  );
  assert.throws(() => commonRebalanceProtocol([custom, new RangeAssignor()]), /no common rebalance protocol/);
});

test('subscription user data of the sticky assignors, before and after a first assignment', () => {
  const sticky = new StickyAssignor();
  assert.is(sticky.subscriptionUserData({ topics: ['t'], ownedPartitions: [], generationId: -1, lastAssignment: null }), null);
  const last = { partitions: tps('t-1'), generationId: 4 };
  assert.equal(sticky.subscriptionUserData({ topics: ['t'], ownedPartitions: [], generationId: 4, lastAssignment: last }), encodeStickyUserData(tps('t-1'), 4));
  const coop = new CooperativeStickyAssignor();
  assert.equal(coop.subscriptionUserData({ topics: ['t'], ownedPartitions: [], generationId: -1 }), Buffer.from([0xff, 0xff, 0xff, 0xff]));
  assert.equal(coop.subscriptionUserData({ topics: ['t'], ownedPartitions: [], generationId: 9, lastAssignment: last }), Buffer.from([0, 0, 0, 4]));
  assert.is(new RangeAssignor().subscriptionUserData(), null);
});

test('edge cases: no members, no known topics, topics nobody subscribes to', () => {
  for (const name of ['range', 'roundrobin', 'sticky', 'cooperative-sticky']) {
    const a = builtInAssignor(name as never);
    assert.equal(assignNow(a, { members: [], partitionsPerTopic: new Map([['t', 3]]) }).size, 0, name);
    assert.equal(run(a, [member('m', ['unknown'])], { other: 4, empty: 0 }), { m: '' }, name);
    assert.equal(run(a, [member('m', ['t', 'empty'])], { t: 2, other: 4, empty: 0 }), { m: 't-0 t-1' }, name);
  }
});

test('checkAssignment reports what a broken custom assignor does', () => {
  const members = [member('a', ['t']), member('b', ['u'])];
  const bad = new Map([
    ['a', { partitions: tps('t-0 u-0 t-9') }],
    ['b', { partitions: tps('t-0') }],
    ['ghost', { partitions: [] }],
  ]);
  const problems = checkAssignment(
    members,
    new Map([
      ['t', 2],
      ['u', 1],
    ]),
    bad,
  );
  assert.equal(problems, [
    'u-0 given to a, which is not subscribed to u',
    't-9 does not exist',
    't-0 given to b, which is not subscribed to t',
    't-0 given to both a and b',
    'assignment for unknown member ghost',
  ]);
});

test.run();
