// The `cooperative-sticky` assignor (KIP-429), with the results and user data of Java's
// CooperativeStickyAssignor.
//
// Cooperative members keep their partitions while they rejoin and report them in OwnedPartitions
// (subscription v1+) with their generation in GenerationId (v2+). The assignment is the sticky
// one (sticky-core.ts) computed from that ownership, with one change: a partition that would go
// straight from its current owner to another member is left out this time. The owner sees it
// missing from its new assignment, revokes it (committing first) and rejoins at once; in that
// follow-up rebalance nobody owns it any more and it goes to its new member. So no partition is
// ever owned by two members, and partitions that stay put keep being consumed throughout.
//
// User data, for leaders that read subscriptions older than v2 (no GenerationId field):
//   CooperativeStickyAssignorUserData v0 => generation: int32
// A v2+ subscription's GenerationId wins when it is set (>= 0); otherwise the user data's
// generation is used, and unreadable user data means generation -1.
import { decodeCooperativeStickyUserData, encodeCooperativeStickyUserData } from '@kwire/protocol';
import { sortedResult } from './common.js';
import { DEFAULT_GENERATION, stickyAssign, type StickyMemberData } from './sticky-core.js';
import type { AssignmentContext, Assignor, MemberAssignment, MemberSubscription, SubscriptionContext, TopicPartition } from './types.js';
import { tpKey } from '../../tp-key.js';

// The user data codec is part of the consumer protocol, in @kwire/protocol.
export { decodeCooperativeStickyUserData, encodeCooperativeStickyUserData };

/** Where cooperative-sticky reads a member's ownership from. */
export function cooperativeMemberData(m: MemberSubscription): StickyMemberData {
  if (m.generationId >= 0) return { partitions: m.ownedPartitions, generation: m.generationId };
  return { partitions: m.ownedPartitions, generation: decodeCooperativeStickyUserData(m.userData) };
}

const key = (tp: TopicPartition) => tpKey(tp.topic, tp.partition);

export class CooperativeStickyAssignor implements Assignor {
  readonly name = 'cooperative-sticky';
  readonly rebalanceProtocol = 'cooperative' as const;
  /** Like Java, it can also run in an eager group (when another configured assignor is eager). */
  readonly supportedProtocols = ['cooperative', 'eager'] as const;
  readonly version = 0;

  /** The generation of the last assignment, -1 before the first (Java's onAssignment value). */
  subscriptionUserData(ctx: SubscriptionContext): Buffer | null {
    return encodeCooperativeStickyUserData(ctx.lastAssignment?.generationId ?? DEFAULT_GENERATION);
  }

  assign(ctx: AssignmentContext): Map<string, MemberAssignment> {
    const outcome = stickyAssign(ctx, cooperativeMemberData);
    const assignment = outcome.assignment;

    // Partitions changing hands: known from the quota pass, or worked out here for the general
    // case: given to a member that does not own it, while some member owned it and loses it.
    let transferring: Map<TopicPartition, string>;
    if (outcome.transferring !== null) {
      transferring = outcome.transferring;
    } else {
      transferring = new Map();
      const added = new Map<string, { tp: TopicPartition; member: string }>();
      const revoked = new Set<string>();
      for (const m of ctx.members) {
        const assigned = assignment.get(m.memberId) ?? [];
        const owned = new Set(m.ownedPartitions.map(key));
        const assignedKeys = new Set(assigned.map(key));
        for (const tp of assigned) if (!owned.has(key(tp))) added.set(key(tp), { tp, member: m.memberId });
        for (const tp of m.ownedPartitions) if (!assignedKeys.has(key(tp))) revoked.add(key(tp));
      }
      for (const [k, { tp, member }] of added) if (revoked.has(k)) transferring.set(tp, member);
    }

    for (const [tp, member] of transferring) {
      const list = assignment.get(member);
      if (list === undefined) continue;
      const i = list.findIndex((x) => x.topic === tp.topic && x.partition === tp.partition);
      if (i >= 0) list.splice(i, 1);
    }
    return sortedResult(ctx.members, assignment);
  }
}
