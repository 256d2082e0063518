// The `roundrobin` assignor, with the results of Java's RoundRobinAssignor.
//
// Every partition of every subscribed topic, sorted by topic name then partition number, is dealt
// in turn around the circle of members (Java's member order: static members by group.instance.id,
// then dynamic members by member id); a member not subscribed to a partition's topic is skipped
// and the deal continues from the next one. With identical subscriptions the counts differ by at
// most one; with different subscriptions they can be uneven (no rebalancing pass). No racks.
import { compareMembers, compareStrings, sortedResult, subscribedPartitionCounts } from './common.js';
import type { AssignmentContext, Assignor, MemberAssignment, TopicPartition } from './types.js';

export class RoundRobinAssignor implements Assignor {
  readonly name = 'roundrobin';
  readonly rebalanceProtocol = 'eager' as const;
  readonly version = 0;

  subscriptionUserData(): Buffer | null {
    return null;
  }

  assign(ctx: AssignmentContext): Map<string, MemberAssignment> {
    const counts = subscribedPartitionCounts(ctx);
    const circle = [...ctx.members].sort(compareMembers);
    const lists = new Map<string, TopicPartition[]>();
    for (const m of ctx.members) lists.set(m.memberId, []);
    if (circle.length === 0) return new Map();

    let next = 0;
    for (const topic of [...counts.keys()].sort(compareStrings)) {
      const n = counts.get(topic)!;
      for (let p = 0; p < n; p++) {
        // Some member is subscribed (the topic came from a subscription), so this ends.
        while (!circle[next]!.topics.includes(topic)) next = (next + 1) % circle.length;
        lists.get(circle[next]!.memberId)!.push({ topic, partition: p });
        next = (next + 1) % circle.length;
      }
    }
    return sortedResult(ctx.members, lists);
  }
}
