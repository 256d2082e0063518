// The `roundrobin` assignor, with the results of Java's RoundRobinAssignor.
//
// Every partition of every subscribed topic, sorted by topic name then partition number, is dealt
// in turn around the circle of members (Java's member order: static members by group.instance.id,
// then dynamic members by member id); a member not subscribed to a partition's topic is skipped
// and the deal continues from the next one. With identical subscriptions the counts differ by at
// most one; with different subscriptions they can be uneven (no rebalancing pass). No racks.
import { AbstractPartitionAssignor, compareMembers, compareStrings } from './common.js';
import type { AssignmentContext, TopicPartition } from './types.js';

export class RoundRobinAssignor extends AbstractPartitionAssignor {
  readonly name = 'roundrobin';

  protected assignPartitions(partitionsPerTopic: ReadonlyMap<string, number>, ctx: AssignmentContext, lists: Map<string, TopicPartition[]>): void {
    const circle = [...ctx.members].sort(compareMembers);
    if (circle.length === 0) return;

    let next = 0;
    for (const topic of [...partitionsPerTopic.keys()].sort(compareStrings)) {
      const n = partitionsPerTopic.get(topic)!;
      for (let p = 0; p < n; p++) {
        // Some member is subscribed (the topic came from a subscription), so this ends.
        while (!circle[next]!.topics.includes(topic)) next = (next + 1) % circle.length;
        lists.get(circle[next]!.memberId)!.push({ topic, partition: p });
        next = (next + 1) % circle.length;
      }
    }
  }
}
