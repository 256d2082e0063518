// The `range` assignor, with the results of Java's RangeAssignor (including its KIP-881
// rack-aware mode, Kafka 3.5+).
//
// Topic by topic: the members subscribed to the topic, in Java's member order (static members by
// group.instance.id first, then dynamic members by member id), take consecutive runs of the
// partitions; with P partitions and M members each gets floor(P/M) and the first P % M get one
// more. Topics are independent, so with equal partition counts member k gets the same partition
// numbers of every topic (co-partitioning, what joins need).
//
// Rack-aware mode, when members send a rackId and replicas have racks, and not every partition
// has replicas on the same set of racks (see useRackAwareAssignment): before the plain pass, each
// member takes, up to its per-topic quota, partitions with a replica in its rack; topics with the
// same subscribers and partition count are matched together, partition number by partition
// number, so that co-partitioning survives. The plain pass then places the rest.
import { AbstractPartitionAssignor, compareMembers, memberRack, replicaRacks, useRackAwareAssignment } from './common.js';
import type { AssignmentContext, MemberSubscription, TopicPartition } from './types.js';

/** One topic's assignment in progress (Java's TopicAssignmentState). */
class TopicState {
  readonly members: MemberSubscription[];
  /** Key for grouping topics by subscriber list. */
  readonly membersKey: string;
  /** Racks of each partition's replicas; empty unless some subscriber has a rack. */
  readonly partitionRacks: Set<string>[];
  readonly needsRackAware: boolean;
  /** Unassigned partition numbers, ascending. */
  readonly unassigned: Set<number>;
  private readonly assignedCount = new Map<string, number>();
  private readonly perMember: number;
  private withExtraLeft: number;

  constructor(
    readonly topic: string,
    readonly partitionCount: number,
    subscribers: MemberSubscription[],
    ctx: AssignmentContext,
  ) {
    this.members = [...subscribers].sort(compareMembers);
    this.membersKey = this.members.map((m) => m.memberId).join('\u0000');
    this.unassigned = new Set(Array.from({ length: partitionCount }, (_, i) => i));
    for (const m of this.members) this.assignedCount.set(m.memberId, 0);
    this.perMember = this.members.length === 0 ? 0 : Math.floor(partitionCount / this.members.length);
    this.withExtraLeft = this.members.length === 0 ? 0 : partitionCount % this.members.length;

    const memberRacks = new Set<string>();
    for (const m of this.members) {
      const r = memberRack(m);
      if (r !== null) memberRacks.add(r);
    }
    const allPartitionRacks = new Set<string>();
    this.partitionRacks = [];
    if (memberRacks.size > 0) {
      for (let p = 0; p < partitionCount; p++) {
        const racks = replicaRacks(ctx, topic, p);
        this.partitionRacks.push(racks);
        for (const r of racks) allPartitionRacks.add(r);
      }
    }
    this.needsRackAware = useRackAwareAssignment(memberRacks, allPartitionRacks, this.partitionRacks);
  }

  /** A member without a rack matches anything; one with a rack needs a replica there. */
  racksMatch(m: MemberSubscription, partition: number): boolean {
    const rack = memberRack(m);
    if (rack === null) return true;
    const racks = this.partitionRacks[partition];
    return racks?.has(rack);
  }

  /** How many more partitions of this topic the member may take. */
  maxAssignable(m: MemberSubscription): number {
    const cap = this.perMember + (this.withExtraLeft > 0 ? 1 : 0) - this.assignedCount.get(m.memberId)!;
    return Math.max(0, cap);
  }

  onAssigned(m: MemberSubscription, partitions: number[]): void {
    const n = this.assignedCount.get(m.memberId)! + partitions.length;
    this.assignedCount.set(m.memberId, n);
    if (n > this.perMember) this.withExtraLeft--;
    for (const p of partitions) this.unassigned.delete(p);
  }
}

export class RangeAssignor extends AbstractPartitionAssignor {
  readonly name = 'range';

  protected assignPartitions(partitionsPerTopic: ReadonlyMap<string, number>, ctx: AssignmentContext, lists: Map<string, TopicPartition[]>): void {
    const states: TopicState[] = [];
    for (const [topic, n] of partitionsPerTopic) {
      const subscribers = ctx.members.filter((m) => m.topics.includes(topic));
      states.push(new TopicState(topic, n, subscribers, ctx));
    }

    const give = (state: TopicState, m: MemberSubscription, partitions: number[]) => {
      const list = lists.get(m.memberId)!;
      for (const p of partitions) list.push({ topic: state.topic, partition: p });
      state.onAssigned(m, partitions);
    };

    // Hand out runs of consecutive unassigned partitions in member order, filtered by mayTake.
    const assignRanges = (state: TopicState, mayTake: (m: MemberSubscription, p: number) => boolean) => {
      for (const m of state.members) {
        if (state.unassigned.size === 0) break;
        const quota = state.maxAssignable(m);
        const picked: number[] = [];
        for (const p of state.unassigned) {
          if (picked.length >= quota) break;
          if (mayTake(m, p)) picked.push(p);
        }
        if (picked.length > 0) give(state, m, picked);
      }
    };

    if (states.some((s) => s.needsRackAware)) {
      // Group the topics by subscriber list, then by partition count (0 when no subscriber has a
      // rack): each group with several topics is co-partitioned and matched as one.
      const groups = new Map<string, TopicState[]>();
      for (const s of states) {
        const key = `${s.membersKey}\u0001${s.partitionRacks.length}`;
        let g = groups.get(key);
        if (g === undefined) groups.set(key, (g = []));
        g.push(s);
      }
      for (const group of groups.values()) {
        if (group.length > 1) this.assignCoPartitioned(group, give);
        else if (group[0]!.needsRackAware) assignRanges(group[0]!, (m, p) => group[0]!.racksMatch(m, p));
      }
    }
    for (const s of states) assignRanges(s, () => true);
  }

  /**
   * Partition number by partition number, the first member (in member order) that can take that
   * partition of every topic of the group within its quotas, and whose rack matches all of them,
   * takes them all.
   */
  private assignCoPartitioned(group: TopicState[], give: (s: TopicState, m: MemberSubscription, p: number[]) => void): void {
    const remaining = [...group[0]!.members];
    const count = group[0]!.partitionRacks.length;
    for (let p = 0; p < count; p++) {
      const m = remaining.find((c) => group.every((t) => t.racksMatch(c, p) && t.maxAssignable(c) > 0));
      if (m === undefined) continue;
      for (const t of group) give(t, m, [p]);
      if (group.every((t) => t.maxAssignable(m) <= 0)) {
        remaining.splice(remaining.indexOf(m), 1);
        if (remaining.length === 0) break;
      }
    }
  }
}
