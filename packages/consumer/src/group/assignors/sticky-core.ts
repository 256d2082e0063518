// The algorithm shared by `sticky` and `cooperative-sticky`, giving the same results as Java's
// AbstractStickyAssignor (Kafka 3.5+, rack-aware per KIP-881). The two assignors differ only in
// where a member's previous partitions come from (user data vs. OwnedPartitions) and in what the
// cooperative one does afterwards.
//
// Goals, in order: balance (partition counts differ by at most one where subscriptions allow),
// then stickiness (members keep what they had), then rack alignment when racks are known.
//
// 1. Previous ownership. Each member reports partitions and a generation. A partition claimed by
//    two members goes to the higher generation; a tie in generation voids the claim for both.
//    Partitions of topics that are gone are dropped.
// 2. Identical subscriptions (the common case): a quota pass. With T partitions over N members,
//    everybody gets floor(T/N) and T % N members one more. Members keep their sorted previous
//    partitions up to that quota (the first ones to claim the larger quota, in Java's HashMap
//    iteration order, get it), the rest is dealt round-robin to the members still short, in
//    member-id order.
// 3. Otherwise, the general case: keep every previous partition still subscribed, give each
//    unassigned partition to the least-loaded subscribed member, then repeatedly move partitions
//    from members with 2+ more than a candidate until balanced, preferring to move a partition
//    back to its previous owner and undoing moves that would swap partitions of one topic back
//    and forth; the reassignment is dropped unless it improved the balance score.
//
// Exact agreement with Java needs Java's tie-breaks, which come from HashMap iteration orders
// (which member claims the larger quota first, which generation wins a tie among stale owners,
// which of several moved partitions goes back); JavaHashOrder reproduces them.
import {
  compareStrings,
  JavaHashOrder,
  javaMemberOrder,
  javaStringHash,
  javaTopicPartitionHash,
  memberRack,
  PartitionTable,
  replicaRacks,
  subscribedPartitionCounts,
  useRackAwareAssignment,
} from './common.js';
import type { AssignmentContext, MemberSubscription, TopicPartition } from './types.js';

export const DEFAULT_GENERATION = -1;

/** A member's previous partitions and generation, as the assignor reads them. */
export interface StickyMemberData {
  partitions: TopicPartition[];
  /** undefined when the member reported none (Java's Optional.empty()). */
  generation: number | undefined;
}

export interface StickyOutcome {
  /** member id -> partitions (interned objects from the run's table). */
  assignment: Map<string, TopicPartition[]>;
  /**
   * Identical-subscription path: partitions given to a member other than the one that had them
   * (the cooperative assignor must hold them back). null on the general path, where the
   * cooperative assignor works it out from OwnedPartitions itself.
   */
  transferring: Map<TopicPartition, string> | null;
  table: PartitionTable;
}

function removeFirst<T>(list: T[], x: T): boolean {
  const i = list.indexOf(x);
  if (i < 0) return false;
  list.splice(i, 1);
  return true;
}

/** The member generation Java compares stale claims against: the subscription's GenerationId field. */
function subscriptionGeneration(m: MemberSubscription): number {
  return m.generationId < 0 ? DEFAULT_GENERATION : m.generationId;
}

/** Rack information (Java's RackInfo); empty maps when rack-aware assignment does not apply. */
class RackInfo {
  readonly memberRacks = new Map<string, string>();
  readonly partitionRacks = new Map<TopicPartition, Set<string>>();
  /** Members on a rack of each partition's replicas, for ordering; filled whenever any member has a rack. */
  private readonly membersByPartition = new Map<TopicPartition, number>();

  constructor(ctx: AssignmentContext, members: readonly MemberSubscription[], counts: ReadonlyMap<string, number>, table: PartitionTable) {
    const membersByRack = new Map<string, number>();
    for (const m of members) {
      const r = memberRack(m);
      if (r !== null) membersByRack.set(r, (membersByRack.get(r) ?? 0) + 1);
    }
    if (membersByRack.size === 0) return;
    const racksOf = new Map<TopicPartition, Set<string>>();
    const allPartitionRacks = new Set<string>();
    for (const [topic, n] of counts) {
      for (let p = 0; p < n; p++) {
        const racks = replicaRacks(ctx, topic, p);
        racksOf.set(table.get(topic, p), racks);
        for (const r of racks) allPartitionRacks.add(r);
      }
    }
    if (useRackAwareAssignment(new Set(membersByRack.keys()), allPartitionRacks, racksOf.values())) {
      for (const m of members) {
        const r = memberRack(m);
        if (r !== null) this.memberRacks.set(m.memberId, r);
      }
      for (const [tp, racks] of racksOf) this.partitionRacks.set(tp, racks);
    }
    // As in Java, these counts exist as soon as any member has a rack, rack-aware or not (in the
    // non-rack-aware cases they are all equal, so the stable sort below changes nothing).
    for (const [tp, racks] of racksOf) {
      let n = 0;
      for (const r of racks) n += membersByRack.get(r) ?? 0;
      this.membersByPartition.set(tp, n);
    }
  }

  /** True when the member has a rack and the partition has no replica there. */
  racksMismatch(memberId: string, tp: TopicPartition): boolean {
    const rack = this.memberRacks.get(memberId);
    if (rack === undefined) return false;
    const racks = this.partitionRacks.get(tp);
    return racks === undefined || !racks.has(rack);
  }

  /** Partitions with the fewest same-rack members first (stable). */
  sortByRackMembers(partitions: TopicPartition[]): TopicPartition[] {
    if (this.membersByPartition.size === 0) return partitions;
    const count = (tp: TopicPartition) => this.membersByPartition.get(tp) ?? 0;
    return [...partitions].sort((a, b) => count(a) - count(b));
  }

  /** Index of the first member at or after `from` (circularly) on a rack of the partition, or -1. */
  nextRackMember(tp: TopicPartition, members: readonly string[], from: number): number {
    const racks = this.partitionRacks.get(tp);
    if (racks === undefined || racks.size === 0) return -1;
    for (let i = 0; i < members.length; i++) {
      const index = (from + i) % members.length;
      const rack = this.memberRacks.get(members[index]!);
      if (rack !== undefined && racks.has(rack)) return index;
    }
    return -1;
  }
}

/** Runs the sticky algorithm; `memberData` reads a member's previous partitions and generation. */
export function stickyAssign(ctx: AssignmentContext, memberData: (m: MemberSubscription) => StickyMemberData): StickyOutcome {
  const table = new PartitionTable();
  if (ctx.members.length === 0) return { assignment: new Map(), transferring: new Map(), table };
  const counts = subscribedPartitionCounts(ctx);
  const members = javaMemberOrder(ctx.members);
  const byId = new Map(members.map((m) => [m.memberId, m] as const));
  const read = (m: MemberSubscription): StickyMemberData => {
    const d = memberData(m);
    return { partitions: d.partitions.map((tp) => table.intern(tp)), generation: d.generation };
  };

  // Step 1: previous ownership, and whether all subscriptions are the same.
  let allEqual = true;
  const firstTopics = new Set<string>();
  const owned = new Map<string, TopicPartition[]>();
  const ownedOrder = new JavaHashOrder<string>(javaStringHash);
  const claimedBy = new Map<TopicPartition, string>();
  const multiClaimed = new Set<TopicPartition>();
  let maxGeneration = DEFAULT_GENERATION;
  for (const m of members) {
    // Java seeds the reference set from the first non-empty subscription it meets.
    if (firstTopics.size === 0) for (const t of m.topics) firstTopics.add(t);
    else if (allEqual && !(m.topics.length === firstTopics.size && m.topics.every((t) => firstTopics.has(t)))) allEqual = false;

    const data = read(m);
    const generation = data.generation ?? DEFAULT_GENERATION;
    maxGeneration = Math.max(maxGeneration, generation);
    const mine: TopicPartition[] = [];
    owned.set(m.memberId, mine);
    ownedOrder.add(m.memberId);
    for (const tp of data.partitions) {
      if (!counts.has(tp.topic)) continue;
      const other = claimedBy.get(tp);
      if (other === undefined) {
        mine.push(tp);
        claimedBy.set(tp, m.memberId);
        continue;
      }
      const otherGeneration = subscriptionGeneration(byId.get(other)!);
      if (generation === otherGeneration) {
        multiClaimed.add(tp);
        removeFirst(owned.get(other)!, tp);
        claimedBy.set(tp, m.memberId);
      } else if (generation > otherGeneration) {
        mine.push(tp);
        removeFirst(owned.get(other)!, tp);
        claimedBy.set(tp, m.memberId);
      }
    }
  }

  const rackInfo = new RackInfo(ctx, members, counts, table);
  if (allEqual) {
    const ownedInOrder = ownedOrder.keys().map((id) => [id, owned.get(id)!] as const);
    const { assignment, transferring } = constrainedAssign(counts, ownedInOrder, multiClaimed, rackInfo, table);
    return { assignment, transferring, table };
  }
  const assignment = generalAssign(counts, members, owned, rackInfo, table, maxGeneration, read);
  return { assignment, transferring: null, table };
}

/**
 * The identical-subscriptions case (Java's ConstrainedAssignmentBuilder): keep previous
 * partitions up to the quota, then fill members that are short, rack-aligned first if racks
 * apply, then round-robin.
 */
function constrainedAssign(
  counts: ReadonlyMap<string, number>,
  owned: ReadonlyArray<readonly [string, TopicPartition[]]>,
  multiClaimed: ReadonlySet<TopicPartition>,
  rackInfo: RackInfo,
  table: PartitionTable,
): { assignment: Map<string, TopicPartition[]>; transferring: Map<TopicPartition, string> } {
  let total = 0;
  for (const n of counts.values()) total += n;
  const memberCount = owned.length;
  const minQuota = Math.floor(total / memberCount);
  const maxQuota = Math.ceil(total / memberCount);
  // How many members end with maxQuota (0 when the division is exact).
  const expectedOverMin = total % memberCount;
  let currentOverMin = 0;

  const assignment = new Map<string, TopicPartition[]>();
  for (const [id] of owned) assignment.set(id, []);
  const transferring = new Map<TopicPartition, string>();
  // Partitions a member had but does not keep: moving them elsewhere is a transfer.
  const maybeRevoked = new Map<TopicPartition, string>();
  const kept: TopicPartition[] = [];
  const underMin: string[] = [];
  let atMin: string[] = [];

  for (const [member, list] of owned) {
    const mine = list
      .filter((tp) => {
        const mismatch = rackInfo.racksMismatch(member, tp);
        if (mismatch) maybeRevoked.set(tp, member);
        return !mismatch;
      })
      .sort((a, b) => a.partition - b.partition || compareStrings(a.topic, b.topic));
    for (const tp of multiClaimed) removeFirst(mine, tp);
    const target = assignment.get(member)!;
    if (mine.length < minQuota) {
      target.push(...mine);
      kept.push(...mine);
      underMin.push(member);
    } else if (mine.length >= maxQuota && currentOverMin < expectedOverMin) {
      currentOverMin++;
      if (currentOverMin === expectedOverMin) atMin = [];
      target.push(...mine.slice(0, maxQuota));
      kept.push(...mine.slice(0, maxQuota));
      for (const tp of mine.slice(maxQuota)) maybeRevoked.set(tp, member);
    } else {
      target.push(...mine.slice(0, minQuota));
      kept.push(...mine.slice(0, minQuota));
      for (const tp of mine.slice(minQuota)) maybeRevoked.set(tp, member);
      // Could still take one more, while members with maxQuota are missing.
      if (currentOverMin < expectedOverMin) atMin.push(member);
    }
  }

  const give = (tp: TopicPartition, member: string): number => {
    const list = assignment.get(member)!;
    list.push(tp);
    const from = maybeRevoked.get(tp);
    if ((from !== undefined && from !== member) || multiClaimed.has(tp)) transferring.set(tp, member);
    return list.length;
  };

  let unassigned = unassignedInTopicOrder(counts, kept, table);
  underMin.sort(compareStrings);
  atMin.sort(compareStrings);
  unassigned = rackInfo.sortByRackMembers(unassigned);

  // Rack-aligned filling: partitions go round-robin to short members on a matching rack.
  if (rackInfo.memberRacks.size > 0) {
    let nextIndex = 0;
    const left: TopicPartition[] = [];
    for (const tp of unassigned) {
      let member: string | undefined;
      let index = rackInfo.nextRackMember(tp, underMin, nextIndex);
      if (index >= 0) {
        member = underMin[index]!;
        const after = assignment.get(member)!.length + 1;
        if (after >= minQuota) {
          removeFirst(underMin, member);
          if (after < maxQuota && currentOverMin < expectedOverMin) atMin.push(member);
        } else {
          index++;
        }
        nextIndex = underMin.length === 0 ? 0 : index % underMin.length;
      } else if (atMin.length > 0) {
        const first = rackInfo.nextRackMember(tp, atMin, 0);
        if (first >= 0) {
          member = atMin[first]!;
          if (assignment.get(member)!.length + 1 === maxQuota) {
            atMin.splice(first, 1);
            currentOverMin++;
            if (currentOverMin === expectedOverMin) atMin = [];
          }
        }
      }
      if (member !== undefined) give(tp, member);
      else left.push(tp);
    }
    unassigned = left;
  }

  // Round-robin over the members under minQuota, then one more each for those at minQuota.
  let cursor = 0;
  let lastReturned = -1;
  for (const tp of unassigned) {
    let member: string;
    if (cursor < underMin.length) {
      lastReturned = cursor;
      member = underMin[cursor++]!;
    } else if (underMin.length === 0 && atMin.length === 0) {
      throw new Error('sticky assignor: no member left to take the remaining partitions');
    } else if (underMin.length === 0) {
      member = atMin.shift()!;
      lastReturned = -1;
    } else {
      cursor = 0;
      lastReturned = cursor;
      member = underMin[cursor++]!;
    }
    const n = give(tp, member);
    if (n === minQuota) {
      // Java removes the member through its iterator (the last one it returned from underMin).
      if (lastReturned < 0) throw new Error('sticky assignor: inconsistent round-robin state');
      underMin.splice(lastReturned, 1);
      cursor = lastReturned;
      lastReturned = -1;
      atMin.push(member);
    } else if (n === maxQuota) {
      currentOverMin++;
    }
  }

  if (underMin.length > 0) {
    if (currentOverMin !== expectedOverMin) {
      throw new Error('sticky assignor: fewer members reached maxQuota than expected and no partitions are left');
    }
    for (const member of underMin) {
      if (assignment.get(member)!.length !== minQuota) {
        throw new Error(`sticky assignor: member ${member} is below minQuota with no partitions left`);
      }
    }
  }
  return { assignment, transferring };
}

/** All partitions (topics by name, then number) except the kept ones, as Java's two-pointer walk computes it. */
function unassignedInTopicOrder(counts: ReadonlyMap<string, number>, kept: TopicPartition[], table: PartitionTable): TopicPartition[] {
  const topics = [...counts.keys()].sort(compareStrings);
  const out: TopicPartition[] = [];
  const sortedKept = [...kept].sort((a, b) => compareStrings(a.topic, b.topic) || a.partition - b.partition);
  let k = 0;
  let exhausted = sortedKept.length === 0;
  for (const topic of topics) {
    const n = counts.get(topic)!;
    for (let p = 0; p < n; p++) {
      const next = sortedKept[k];
      if (exhausted || !(next!.topic === topic && next!.partition === p)) out.push(table.get(topic, p));
      else if (++k >= sortedKept.length) exhausted = true;
    }
  }
  return out;
}

/** A TreeSet of member ids ordered by current assignment size, then id (Java's sortedCurrentSubscriptions). */
class MembersBySize {
  private ids: string[] = [];

  constructor(private readonly sizeOf: (id: string) => number) {}

  private compare(a: string, b: string): number {
    return this.sizeOf(a) - this.sizeOf(b) || compareStrings(a, b);
  }

  add(id: string): void {
    if (this.ids.includes(id)) return;
    let lo = 0;
    let hi = this.ids.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.compare(this.ids[mid]!, id) < 0) lo = mid + 1;
      else hi = mid;
    }
    this.ids.splice(lo, 0, id);
  }

  /** Removes before the member's size changes, as Java does. */
  remove(id: string): void {
    removeFirst(this.ids, id);
  }

  first(): string {
    return this.ids[0]!;
  }

  last(): string {
    return this.ids[this.ids.length - 1]!;
  }

  values(): readonly string[] {
    return this.ids;
  }
}

/** Where each partition moved during balancing, to keep moves of one topic from going in circles. */
class PartitionMovements {
  private readonly byTopic = new Map<string, Map<string, JavaHashOrder<TopicPartition>>>();
  private readonly moves = new Map<TopicPartition, { src: string; dst: string }>();

  private static pairKey(src: string, dst: string): string {
    return `${src}\u0000${dst}`;
  }

  private removeRecord(tp: TopicPartition): { src: string; dst: string } {
    const pair = this.moves.get(tp)!;
    this.moves.delete(tp);
    const topicMoves = this.byTopic.get(tp.topic)!;
    const key = PartitionMovements.pairKey(pair.src, pair.dst);
    const set = topicMoves.get(key)!;
    set.delete(tp);
    if (set.size === 0) topicMoves.delete(key);
    if (topicMoves.size === 0) this.byTopic.delete(tp.topic);
    return pair;
  }

  private addRecord(tp: TopicPartition, src: string, dst: string): void {
    this.moves.set(tp, { src, dst });
    let topicMoves = this.byTopic.get(tp.topic);
    if (topicMoves === undefined) this.byTopic.set(tp.topic, (topicMoves = new Map()));
    const key = PartitionMovements.pairKey(src, dst);
    let set = topicMoves.get(key);
    if (set === undefined) topicMoves.set(key, (set = new JavaHashOrder<TopicPartition>((x) => javaTopicPartitionHash(x.topic, x.partition))));
    set.add(tp);
  }

  record(tp: TopicPartition, from: string, to: string): void {
    const existing = this.moves.get(tp);
    if (existing !== undefined) {
      this.removeRecord(tp);
      // Moving back to where it started erases the movement.
      if (existing.src !== to) this.addRecord(tp, existing.src, to);
    } else {
      this.addRecord(tp, from, to);
    }
  }

  /**
   * If some partition of the same topic already moved the opposite way (to -> from), move that
   * one back instead of moving this one (Java picks the first in its HashSet's order).
   */
  partitionToMove(tp: TopicPartition, from: string, to: string): TopicPartition {
    const topicMoves = this.byTopic.get(tp.topic);
    if (topicMoves === undefined) return tp;
    const previous = this.moves.get(tp);
    const origin = previous !== undefined ? previous.src : from;
    const reverse = topicMoves.get(PartitionMovements.pairKey(to, origin));
    if (reverse === undefined) return tp;
    return reverse.first()!;
  }
}

/** The general case (Java's GeneralAssignmentBuilder): different subscriptions. */
function generalAssign(
  counts: ReadonlyMap<string, number>,
  members: readonly MemberSubscription[],
  current: Map<string, TopicPartition[]>,
  rackInfo: RackInfo,
  table: PartitionTable,
  maxGeneration: number,
  read: (m: MemberSubscription) => StickyMemberData,
): Map<string, TopicPartition[]> {
  const byId = new Map(members.map((m) => [m.memberId, m] as const));
  const topicMembers = new Map<string, string[]>();
  for (const t of counts.keys()) topicMembers.set(t, []);
  const memberTopics = new Map<string, string[]>();
  for (const m of members) {
    const topics: string[] = [];
    memberTopics.set(m.memberId, topics);
    for (const t of m.topics) {
      if (!counts.has(t)) continue;
      topics.push(t);
      topicMembers.get(t)!.push(m.memberId);
    }
    if (!current.has(m.memberId)) current.set(m.memberId, []);
  }
  const partitionOwner = new Map<TopicPartition, string>();
  for (const [id, list] of current) for (const tp of list) partitionOwner.set(tp, id);

  // Topics with the fewest candidates first: their partitions have the fewest places to go.
  const byCandidates = (a: string, b: string) => topicMembers.get(a)!.length - topicMembers.get(b)!.length || compareStrings(a, b);
  const sortedTopics = [...counts.keys()].sort(byCandidates);
  let sortedAll: TopicPartition[] = [];
  for (const t of sortedTopics) for (let p = 0; p < counts.get(t)!; p++) sortedAll.push(table.get(t, p));

  let total = 0;
  for (const n of counts.values()) total += n;
  const maxAssignmentSize = (topics: readonly string[]) => {
    if (topics.length === counts.size) return total;
    let n = 0;
    for (const t of topics) n += counts.get(t)!;
    return n;
  };

  // Where partitions were before, for members reporting an older generation than the newest:
  // balancing prefers to move a partition back there.
  const previous = new Map<TopicPartition, { member: string; generation: number }>();
  const notePrevious = (partitions: TopicPartition[], member: string, generation: number) => {
    for (const tp of partitions) {
      const p = previous.get(tp);
      if (p === undefined || generation > p.generation) previous.set(tp, { member, generation });
    }
  };
  for (const m of members) {
    const d = read(m);
    if (d.generation !== undefined && d.generation < maxGeneration) notePrevious(d.partitions, m.memberId, d.generation);
    else if (d.generation === undefined && maxGeneration > DEFAULT_GENERATION) notePrevious(d.partitions, m.memberId, DEFAULT_GENERATION);
  }

  // Keep what is still subscribed (and rack-aligned, when racks apply).
  let revocationRequired = false;
  const kept: TopicPartition[] = [];
  for (const [id, list] of current) {
    const m = byId.get(id)!;
    for (let i = 0; i < list.length; i++) {
      const tp = list[i]!;
      if (!topicMembers.has(tp.topic)) {
        list.splice(i--, 1);
        partitionOwner.delete(tp);
      } else if (!m.topics.includes(tp.topic) || rackInfo.racksMismatch(id, tp)) {
        list.splice(i--, 1);
        revocationRequired = true;
      } else {
        kept.push(tp);
      }
    }
  }

  // sortedAll minus kept, by a merge walk over both in the same order (as Java does it).
  let unassigned: TopicPartition[] = sortedAll;
  if (kept.length > 0) {
    kept.sort((a, b) => byCandidates(a.topic, b.topic) || a.partition - b.partition);
    unassigned = [];
    let k = 0;
    let exhausted = false;
    for (const tp of sortedAll) {
      if (exhausted || kept[k] !== tp) unassigned.push(tp);
      else if (++k >= kept.length) exhausted = true;
    }
  }

  const sizeOf = (id: string) => current.get(id)!.length;
  const bySize = new MembersBySize(sizeOf);
  for (const id of current.keys()) bySize.add(id);

  // Balance.
  const initializing = current.get(bySize.last())!.length === 0;
  const tryAssign = (tp: TopicPartition, rackAware: boolean): boolean => {
    for (const id of bySize.values()) {
      if (memberTopics.get(id)!.includes(tp.topic) && (!rackAware || !rackInfo.racksMismatch(id, tp))) {
        bySize.remove(id);
        current.get(id)!.push(tp);
        partitionOwner.set(tp, id);
        bySize.add(id);
        return true;
      }
    }
    return false;
  };
  let toAssign = unassigned;
  if (rackInfo.memberRacks.size > 0) {
    toAssign = unassigned.filter((tp) => topicMembers.get(tp.topic)!.length === 0 || !tryAssign(tp, true));
  }
  for (const tp of toAssign) if (topicMembers.get(tp.topic)!.length > 0) tryAssign(tp, false);

  // Only partitions of topics with two or more candidates, and members that could change, take part.
  const movableTopic = (t: string) => topicMembers.get(t)!.length >= 2;
  sortedAll = sortedAll.filter((tp) => movableTopic(tp.topic));
  unassigned = unassigned.filter((tp) => movableTopic(tp.topic));
  const fixed = new Map<string, TopicPartition[]>();
  for (const id of memberTopics.keys()) {
    const list = current.get(id)!;
    const canChange = list.length < maxAssignmentSize(memberTopics.get(id)!) || list.some((tp) => movableTopic(tp.topic));
    if (!canChange) {
      bySize.remove(id);
      fixed.set(id, list);
      current.delete(id);
    }
  }

  const snapshot = new Map<string, TopicPartition[]>();
  for (const [id, list] of current) snapshot.set(id, [...list]);
  const snapshotOwners = new Map(partitionOwner);

  const isBalanced = (): boolean => {
    const min = sizeOf(bySize.first());
    const max = sizeOf(bySize.last());
    if (min >= max - 1) return true;
    const ownerOf = new Map<TopicPartition, string>();
    for (const [id, list] of current) for (const tp of list) ownerOf.set(tp, id);
    for (const id of bySize.values()) {
      const list = current.get(id)!;
      const topics = memberTopics.get(id)!;
      if (list.length === maxAssignmentSize(topics)) continue;
      const mine = new Set(list);
      for (const t of topics) {
        for (let p = 0; p < counts.get(t)!; p++) {
          const tp = table.get(t, p);
          if (mine.has(tp)) continue;
          const other = ownerOf.get(tp);
          if (other !== undefined && list.length + 1 < sizeOf(other)) return false;
        }
      }
    }
    return true;
  };

  const movements = new PartitionMovements();
  const movePartition = (tp: TopicPartition, to: string) => {
    const from = partitionOwner.get(tp)!;
    const actual = movements.partitionToMove(tp, from, to);
    const oldOwner = partitionOwner.get(actual)!;
    bySize.remove(oldOwner);
    bySize.remove(to);
    movements.record(actual, oldOwner, to);
    removeFirst(current.get(oldOwner)!, actual);
    current.get(to)!.push(actual);
    partitionOwner.set(actual, to);
    bySize.add(to);
    bySize.add(oldOwner);
  };
  const moveToLeastLoaded = (tp: TopicPartition) => {
    const to = bySize.values().find((id) => memberTopics.get(id)!.includes(tp.topic));
    if (to === undefined) throw new Error(`sticky assignor: no candidate for ${tp.topic}-${tp.partition}`);
    movePartition(tp, to);
  };

  const reassign = (partitions: readonly TopicPartition[]): boolean => {
    let performed = false;
    let modified: boolean;
    do {
      modified = false;
      for (const tp of partitions) {
        if (isBalanced()) break;
        const owner = partitionOwner.get(tp)!;
        const ownerSize = current.get(owner)?.length;
        if (ownerSize === undefined) continue;
        const prev = previous.get(tp);
        // (Java would fail with a NullPointerException if the previous owner were a fixed member.)
        const prevSize = prev === undefined ? undefined : current.get(prev.member)?.length;
        if (prev !== undefined && prevSize !== undefined && ownerSize > prevSize + 1) {
          movePartition(tp, prev.member);
          performed = modified = true;
          continue;
        }
        const candidates = topicMembers.get(tp.topic)!;
        const ownerRack = rackInfo.memberRacks.get(owner);
        const racks = rackInfo.partitionRacks.get(tp);
        let moved = false;
        if (ownerRack !== undefined && racks !== undefined && racks.size > 0 && racks.has(ownerRack)) {
          for (const other of candidates) {
            const otherRack = rackInfo.memberRacks.get(other);
            if (otherRack === undefined || !racks.has(otherRack)) continue;
            if (ownerSize > sizeOf(other) + 1) {
              moveToLeastLoaded(tp);
              performed = modified = moved = true;
              break;
            }
          }
        }
        if (!moved) {
          for (const other of candidates) {
            if (ownerSize > sizeOf(other) + 1) {
              moveToLeastLoaded(tp);
              performed = modified = true;
              break;
            }
          }
        }
      }
    } while (modified);
    return performed;
  };

  // First try moving only newly assigned partitions, unless revocations are due anyway.
  if (!revocationRequired) reassign(unassigned);
  const performed = reassign(sortedAll);

  const balanceScore = (assignment: ReadonlyMap<string, readonly TopicPartition[]>) => {
    const sizes = [...assignment.values()].map((l) => l.length);
    let score = 0;
    for (let i = 0; i < sizes.length; i++) for (let j = i + 1; j < sizes.length; j++) score += Math.abs(sizes[i]! - sizes[j]!);
    return score;
  };
  if (!initializing && performed && balanceScore(current) >= balanceScore(snapshot)) {
    current.clear();
    for (const [id, list] of snapshot) current.set(id, list);
    partitionOwner.clear();
    for (const [tp, id] of snapshotOwners) partitionOwner.set(tp, id);
  }
  for (const [id, list] of fixed) current.set(id, list);
  return current;
}
