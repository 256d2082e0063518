// Seeded random consumer groups for the assignor tests: a simulation of successive rebalances
// (members joining and leaving, partitions added, subscriptions changed, stale claims), with
// every member's JoinGroup metadata encoded as a real client would send it, so that the same
// bytes can go to kwire's assignors and to Java's.
import { builtInAssignor, encodeStickyUserData, type Assignor, type MemberAssignment, type MemberSubscription, type TopicPartition } from '../../src/group/assignors/index.js';
import { encodeSubscription, memberSubscription } from '../../src/group/consumer-protocol.js';
import { prng } from '@kwire/testkit';

export const tpKey = (tp: TopicPartition) => `${tp.topic}-${tp.partition}`;

/** One rebalance as the leader sees it. */
export interface GroupCase {
  assignor: string;
  /** In JoinGroup response order. */
  members: { memberId: string; groupInstanceId: string | null; metadata: Buffer }[];
  partitionsPerTopic: Map<string, number>;
  racksPerPartition?: Map<string, string[][]>;
  /** What happened since the previous round (for messages). */
  event: string;
  /** Whether all members subscribe to the same topics. */
  sameSubscriptions: boolean;
  /** Partitions each member owned (cooperative) or last had (eager) going into this round. */
  previous: Map<string, TopicPartition[]>;
}

export function decodeCase(c: GroupCase): { members: MemberSubscription[]; partitionsPerTopic: Map<string, number>; racksPerPartition?: Map<string, string[][]> } {
  return {
    members: c.members.map((m) => memberSubscription(m)),
    partitionsPerTopic: c.partitionsPerTopic,
    ...(c.racksPerPartition ? { racksPerPartition: c.racksPerPartition } : {}),
  };
}

interface SimMember {
  id: string;
  instanceId: string | null;
  topics: string[];
  rack: string | null;
  /** Subscription version this client writes. */
  version: number;
  /** How its sticky user data is written: as Java does (v1), as Kafka < 2.3 did (v0), or corrupt. */
  userDataStyle: 'v1' | 'v0' | 'garbage';
  owned: TopicPartition[];
  generation: number;
  last: { partitions: TopicPartition[]; generationId: number } | null;
}

export interface ScenarioOptions {
  rounds?: number;
  maxMembers?: number;
  maxTopics?: number;
  maxPartitions?: number;
  /** Probability that members and replicas have racks. */
  rackProbability?: number;
  /** Probability that all members subscribe to every topic. */
  sameProbability?: number;
  /** Allow old clients (subscription v0/v1, sticky user data v0, corrupt user data). */
  oldClients?: boolean;
  /** Allow stale and conflicting ownership claims. */
  staleClaims?: boolean;
  /**
   * Before each round, replace every member's claimed partitions by a random set (overlapping,
   * beyond its subscription) at a random recent generation: inputs no real group produces in one
   * step, but which drive the sticky balancing through all its branches.
   */
  randomOwnership?: boolean;
}

const uuidish = (r: () => number) => Array.from({ length: 8 }, () => '0123456789abcdef'[Math.floor(r() * 16)]).join('');

/**
 * Runs a sequence of rebalances of one random group under `assignorName`, computing each round's
 * assignment with `assign` (kwire's assignor by default) and feeding it into the next round as
 * a client would (cooperative members keep partitions and rejoin at once when they lost some;
 * eager ones report their last assignment in user data). Returns every round's input and output.
 */
export function simulate(
  seed: number,
  assignorName: string,
  options: ScenarioOptions = {},
  assign?: (c: GroupCase) => Map<string, MemberAssignment>,
): { cases: GroupCase[]; results: Map<string, MemberAssignment>[] } {
  const r = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const int = (lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));
  const assignor: Assignor = builtInAssignor(assignorName as never);
  const cooperative = assignor.rebalanceProtocol === 'cooperative';
  const rounds = options.rounds ?? 5;
  const maxMembers = options.maxMembers ?? 7;
  const rackAware = r() < (options.rackProbability ?? 0.2);
  const racks = ['rack-a', 'rack-b', 'rack-c'];

  // Topics: names chosen to make sorting matter (upper before lower case, prefixes).
  const topicPool = ['orders', 'Orders', 'events', 'events-v2', 'a', 'zeta', 't0', 't1', 't10', 't2'];
  const topicCount = int(1, options.maxTopics ?? 4);
  const topics: string[] = [];
  while (topics.length < topicCount) {
    const t = pick(topicPool);
    if (!topics.includes(t)) topics.push(t);
  }
  const partitionsPerTopic = new Map(topics.map((t) => [t, int(1, options.maxPartitions ?? 12)] as const));
  const replicaRacks = new Map<string, string[][]>();
  const growRacks = () => {
    for (const [t, n] of partitionsPerTopic) {
      const list = replicaRacks.get(t) ?? [];
      while (list.length < n) {
        const k = int(0, 3);
        const set = new Set<string>();
        for (let i = 0; i < k; i++) set.add(pick(racks));
        list.push([...set]);
      }
      replicaRacks.set(t, list);
    }
  };
  growRacks();

  const same = r() < (options.sameProbability ?? 0.5);
  let serial = 0;
  const newMember = (): SimMember => {
    const n = serial++;
    const style = r();
    const id = style < 0.4 ? `consumer-g-${n + 1}-${uuidish(r)}` : style < 0.7 ? `${pick(['m', 'M', 'x', 'member'])}${int(0, 99)}` : uuidish(r);
    const subset = () => {
      const s = topics.filter(() => r() < 0.6);
      return s.length > 0 ? s : [pick(topics)];
    };
    const old = options.oldClients === true && r() < 0.25;
    return {
      id,
      instanceId: r() < 0.3 ? `instance-${pick(['a', 'b', 'c', 'd', 'e', 'f', 'g'])}${n}` : null,
      topics: same ? [...topics] : subset(),
      rack: rackAware && r() < 0.85 ? pick(racks) : null,
      version: old ? pick([0, 1]) : pick([2, 3, 3, 3]),
      userDataStyle: old ? pick(['v0', 'garbage'] as const) : 'v1',
      owned: [],
      generation: -1,
      last: null,
    };
  };
  let members: SimMember[] = Array.from({ length: int(1, maxMembers) }, newMember);
  // Member ids must be unique in a group.
  const dedupe = () => {
    const seen = new Set<string>();
    members = members.filter((m) => !seen.has(m.id) && (seen.add(m.id), true));
  };
  dedupe();

  let generation = int(0, 5);
  const cases: GroupCase[] = [];
  const results: Map<string, MemberAssignment>[] = [];
  let pendingRevocation = false;
  let event = 'initial join';

  for (let round = 0; round < rounds; round++) {
    if (round > 0) {
      if (cooperative && pendingRevocation) {
        event = 'follow-up rejoin after revocation';
      } else {
        const choice = r();
        if (choice < 0.25 && members.length < maxMembers + 2) {
          members.splice(int(0, members.length), 0, newMember());
          dedupe();
          event = 'member joined';
        } else if (choice < 0.45 && members.length > 1) {
          members.splice(int(0, members.length - 1), 1);
          event = 'member left';
        } else if (choice < 0.6) {
          const t = pick(topics);
          partitionsPerTopic.set(t, partitionsPerTopic.get(t)! + int(1, 4));
          growRacks();
          event = `partitions added to ${t}`;
        } else if (choice < 0.72 && !same) {
          const m = pick(members);
          const s = topics.filter(() => r() < 0.5);
          m.topics = s.length > 0 ? s : [pick(topics)];
          event = `member ${m.id} changed subscription`;
        } else if (choice < 0.87 && options.staleClaims === true && members.length > 1) {
          // A member that missed a generation still claims partitions another member now owns.
          const x = pick(members);
          const y = pick(members.filter((m) => m !== x));
          const claimed = y.owned.filter(() => r() < 0.5);
          const equal = r() < 0.3;
          x.owned = [...x.owned, ...claimed];
          if (x.last !== null) x.last = { partitions: [...x.last.partitions, ...claimed], generationId: x.last.generationId };
          if (equal) {
            x.generation = y.generation;
            if (x.last !== null && y.last !== null) x.last.generationId = y.last.generationId;
          } else {
            x.generation = Math.max(-1, y.generation - int(1, 2));
            if (x.last !== null) x.last.generationId = x.generation;
          }
          event = `stale claim by ${x.id} of ${claimed.length} partitions of ${y.id}${equal ? ' (same generation)' : ''}`;
        } else {
          // Shuffle the join order: the leader sees the members in a new order.
          members = members
            .map((m) => [r(), m] as const)
            .sort((a, b) => a[0] - b[0])
            .map(([, m]) => m);
          event = 'rejoin in another order';
        }
      }
    }

    if (options.randomOwnership === true) {
      const all = [...partitionsPerTopic].flatMap(([topic, n]) => Array.from({ length: n }, (_, partition) => ({ topic, partition })));
      const bias = r();
      for (const m of members) {
        const share = r() < bias ? r() * 0.9 : r() * 0.2;
        m.owned = all.filter(() => r() < share);
        m.generation = r() < 0.1 ? -1 : Math.max(-1, generation - int(0, 3));
        m.last = { partitions: [...m.owned], generationId: m.generation };
      }
      event = `random ownership (${event})`;
    }

    const c: GroupCase = {
      assignor: assignorName,
      members: members.map((m) => {
        let userData = assignor.subscriptionUserData({ topics: m.topics, ownedPartitions: m.owned, generationId: m.generation, lastAssignment: m.last });
        if (assignorName === 'sticky' && userData !== null && m.userDataStyle === 'v0') userData = userData.subarray(0, userData.length - 4);
        if (assignorName === 'sticky' && userData !== null && m.userDataStyle === 'garbage') userData = Buffer.from([0, 0, 0, 9, 1]);
        if (assignorName === 'cooperative-sticky' && m.userDataStyle === 'garbage') userData = Buffer.from([7]);
        const metadata = encodeSubscription(
          {
            topics: m.topics,
            userData,
            ownedPartitions: cooperative ? m.owned : [],
            generationId: m.generation,
            rackId: m.rack,
          },
          m.version,
        );
        return { memberId: m.id, groupInstanceId: m.instanceId, metadata };
      }),
      partitionsPerTopic: new Map(partitionsPerTopic),
      ...(rackAware ? { racksPerPartition: new Map([...replicaRacks].map(([t, l]) => [t, l.slice(0, partitionsPerTopic.get(t))] as const)) } : {}),
      event,
      sameSubscriptions: members.every((m) => m.topics.length === topics.length),
      previous: new Map(members.map((m) => [m.id, cooperative ? [...m.owned] : [...(m.last?.partitions ?? [])]] as const)),
    };
    cases.push(c);
    const result = assign ? assign(c) : assignNow(assignor, decodeCase(c));
    results.push(result);

    generation++;
    pendingRevocation = false;
    for (const m of members) {
      const a = result.get(m.id)?.partitions ?? [];
      const now = new Set(a.map(tpKey));
      if (m.owned.some((tp) => !now.has(tpKey(tp)))) pendingRevocation = true;
      m.owned = [...a];
      m.generation = generation;
      m.last = { partitions: [...a], generationId: generation };
    }
  }
  return { cases, results };
}

/** A built-in assignor's result: they compute synchronously (only a user's may return a Promise). */
export function assignNow(assignor: Assignor, ctx: Parameters<Assignor['assign']>[0]): Map<string, MemberAssignment> {
  const result = assignor.assign(ctx);
  if (result instanceof Promise) throw new Error(`${assignor.name} returned a Promise: the built-in assignors are synchronous`);
  return result;
}
