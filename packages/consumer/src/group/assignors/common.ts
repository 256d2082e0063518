// Helpers shared by the assignors: Java's orderings (string comparison, member order, and the
// iteration order of java.util.HashMap/HashSet, which the sticky assignors' tie-breaks depend
// on), and the normalisation of the leader's input.
import type { AssignmentContext, Assignor, MemberAssignment, MemberSubscription, TopicPartition } from './types.js';

/** Java's String.compareTo sign: UTF-16 code units, which is what JS relational operators compare. */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Sorts partitions by topic, then partition number (Java's TopicPartitionComparator). */
export function compareTopicPartitions(a: TopicPartition, b: TopicPartition): number {
  return a.topic === b.topic ? a.partition - b.partition : compareStrings(a.topic, b.topic);
}

/**
 * Java's member order (AbstractPartitionAssignor.MemberInfo): static members first, by
 * group.instance.id, then dynamic members by member id. Range and round-robin deal partitions
 * out in this order, which is what keeps a static group's assignment stable across restarts
 * (a restarted static member gets a new member id but keeps its instance id).
 */
export function compareMembers(a: MemberSubscription, b: MemberSubscription): number {
  if (a.groupInstanceId !== null && b.groupInstanceId !== null) return compareStrings(a.groupInstanceId, b.groupInstanceId);
  if (a.groupInstanceId !== null) return -1;
  if (b.groupInstanceId !== null) return 1;
  return compareStrings(a.memberId, b.memberId);
}

/** Java's String.hashCode. */
export function javaStringHash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
  return h;
}

/** Java's TopicPartition.hashCode: 31 * (31 + partition) + topic.hashCode(). */
export function javaTopicPartitionHash(topic: string, partition: number): number {
  return (Math.imul(31, (31 + partition) | 0) + javaStringHash(topic)) | 0;
}

/**
 * The iteration order of a java.util.HashMap (or HashSet) made with the default constructor,
 * reproduced from the hashes of its keys and the order they were added and removed.
 *
 * A HashMap iterates bucket by bucket (bucket = (h ^ h >>> 16) & (capacity - 1)) and, within a
 * bucket, in insertion order; resizing splits chains without reordering them. So the order is a
 * function of the capacity, which starts at 16 on the first insert and doubles when the size
 * passes 3/4 of it, or when a chain reaches 9 entries while the table has fewer than 64 buckets
 * (instead of turning the chain into a tree). Not reproduced: the order inside tree bins (9+
 * colliding keys in one bucket of a table of 64+), a case of hash collisions that random member
 * ids and partition numbers do not produce in groups of realistic size.
 */
export class JavaHashOrder<K> {
  private capacity = 0;
  private seq = 0;
  private readonly entries = new Map<K, { hash: number; seq: number }>();

  constructor(private readonly hashOf: (key: K) => number) {}

  get size(): number {
    return this.entries.size;
  }

  has(key: K): boolean {
    return this.entries.has(key);
  }

  /** Adds a key (no effect when present, as HashMap.put of an existing key keeps its place). */
  add(key: K): void {
    if (this.entries.has(key)) return;
    const h = this.hashOf(key);
    const hash = h ^ (h >>> 16);
    if (this.capacity === 0) this.capacity = 16;
    // The chain this key joins: 8 or more entries already, on a small table, means a resize.
    let chain = 0;
    const mask = this.capacity - 1;
    for (const e of this.entries.values()) if ((e.hash & mask) === (hash & mask)) chain++;
    this.entries.set(key, { hash, seq: this.seq++ });
    if (chain >= 8 && this.capacity < 64) this.capacity *= 2;
    if (this.entries.size > this.capacity * 0.75) this.capacity *= 2;
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  private compare(a: { hash: number; seq: number }, b: { hash: number; seq: number }): number {
    const mask = this.capacity - 1;
    return (a.hash & mask) - (b.hash & mask) || a.seq - b.seq;
  }

  /** The keys in the order Java would iterate them. */
  keys(): K[] {
    return [...this.entries.entries()].sort((a, b) => this.compare(a[1], b[1])).map(([k]) => k);
  }

  /** The first key Java's iterator would return (undefined when empty). */
  first(): K | undefined {
    let best: K | undefined;
    let bestEntry: { hash: number; seq: number } | undefined;
    for (const [k, e] of this.entries) {
      if (bestEntry === undefined || this.compare(e, bestEntry) < 0) {
        best = k;
        bestEntry = e;
      }
    }
    return best;
  }
}

/**
 * The members in the order Java's leader iterates them: ConsumerCoordinator puts the decoded
 * subscriptions into a `new HashMap<>()` keyed by member id, in JoinGroup response order.
 */
export function javaMemberOrder(members: readonly MemberSubscription[]): MemberSubscription[] {
  const order = new JavaHashOrder<string>(javaStringHash);
  const byId = new Map<string, MemberSubscription>();
  for (const m of members) {
    order.add(m.memberId);
    byId.set(m.memberId, m);
  }
  return order.keys().map((id) => byId.get(id)!);
}

/**
 * The topics that take part: subscribed by some member and known with at least one partition
 * (Java's AbstractPartitionAssignor drops the others before the assignor sees them).
 */
export function subscribedPartitionCounts(ctx: AssignmentContext): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of ctx.members) {
    for (const t of m.topics) {
      const n = ctx.partitionsPerTopic.get(t);
      if (n !== undefined && n > 0) out.set(t, n);
    }
  }
  return out;
}

/** Racks of one partition's replicas (empty when unknown). */
export function replicaRacks(ctx: AssignmentContext, topic: string, partition: number): Set<string> {
  const racks = ctx.racksPerPartition?.get(topic)?.[partition];
  return new Set(racks ?? []);
}

/** A member's rack as the assignors use it: absent when null or empty. */
export function memberRack(m: MemberSubscription): string | null {
  return m.rackId === null || m.rackId === '' ? null : m.rackId;
}

/**
 * Java's AbstractPartitionAssignor.useRackAwareAssignment: only when some member has a rack that
 * some replica has, and the partitions do not all have replicas on the same set of racks (if
 * they do, any assignment is equally rack-aligned and the plain algorithm is kept).
 */
export function useRackAwareAssignment(memberRacks: ReadonlySet<string>, allPartitionRacks: ReadonlySet<string>, racksByPartition: Iterable<ReadonlySet<string>>): boolean {
  if (memberRacks.size === 0) return false;
  let intersects = false;
  for (const r of memberRacks) if (allPartitionRacks.has(r)) intersects = true;
  if (!intersects) return false;
  for (const racks of racksByPartition) {
    if (racks.size !== allPartitionRacks.size) return true;
    for (const r of racks) if (!allPartitionRacks.has(r)) return true;
  }
  return false;
}

/** Interned TopicPartition objects, so that identity can stand for equality in Sets and Maps. */
export class PartitionTable {
  private readonly byTopic = new Map<string, TopicPartition[]>();

  get(topic: string, partition: number): TopicPartition {
    let list = this.byTopic.get(topic);
    if (list === undefined) this.byTopic.set(topic, (list = []));
    let tp = list[partition];
    if (tp === undefined) list[partition] = tp = { topic, partition };
    return tp;
  }

  intern(tp: TopicPartition): TopicPartition {
    return this.get(tp.topic, tp.partition);
  }
}

/** Builds the result map with copies sorted by topic and partition (the order carries no meaning). */
export function sortedResult(members: readonly MemberSubscription[], lists: ReadonlyMap<string, readonly TopicPartition[]>): Map<string, MemberAssignment> {
  const out = new Map<string, MemberAssignment>();
  for (const m of members) {
    const list = lists.get(m.memberId) ?? [];
    out.set(m.memberId, { partitions: list.map((tp) => ({ topic: tp.topic, partition: tp.partition })).sort(compareTopicPartitions), userData: null });
  }
  return out;
}

/**
 * The base of the eager assignors that send no user data and deal partitions from the members'
 * topics and the partition counts alone (range, roundrobin): Java's AbstractPartitionAssignor.
 * It collects the counts of the topics that take part (subscribedPartitionCounts) and an empty
 * list for every member, and returns the lists sorted.
 */
export abstract class AbstractPartitionAssignor implements Assignor {
  abstract readonly name: string;
  readonly rebalanceProtocol = 'eager' as const;
  readonly version = 0;

  subscriptionUserData(): Buffer | null {
    return null;
  }

  assign(ctx: AssignmentContext): Map<string, MemberAssignment> {
    const lists = new Map<string, TopicPartition[]>();
    for (const m of ctx.members) lists.set(m.memberId, []);
    this.assignPartitions(subscribedPartitionCounts(ctx), ctx, lists);
    return sortedResult(ctx.members, lists);
  }

  /** Deals the partitions: appends to `lists` (member id to partitions, one per member). */
  protected abstract assignPartitions(partitionsPerTopic: ReadonlyMap<string, number>, ctx: AssignmentContext, lists: Map<string, TopicPartition[]>): void;
}
