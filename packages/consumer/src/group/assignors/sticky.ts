// The `sticky` assignor (eager), with the results and user data of Java's StickyAssignor.
//
// Eager members give up all their partitions before joining, so their OwnedPartitions are empty;
// what they had travels in the user data instead, in Java's layout (non-flexible Kafka struct,
// big-endian):
//
//   StickyAssignorUserData v1 =>
//     previous_assignment: int32 count, then per topic:
//       topic: int16 length + UTF-8 bytes
//       partitions: int32 count + int32 each
//     generation: int32
//   (v0, from Kafka < 2.3, is the same without `generation`.)
//
// Readers try v1, then v0; unreadable user data counts as "no previous partitions, generation -1".
// There is no version marker: v0 is recognised by the bytes running out before `generation`.
import { decodeStickyUserData, encodeStickyUserData } from '@kwire/protocol';
import { sortedResult } from './common.js';
import { stickyAssign } from './sticky-core.js';
import type { AssignmentContext, Assignor, MemberAssignment, MemberSubscription, SubscriptionContext } from './types.js';

// The user data codec is part of the consumer protocol, in @kwire/protocol.
export { decodeStickyUserData, encodeStickyUserData };

export class StickyAssignor implements Assignor {
  readonly name = 'sticky';
  readonly rebalanceProtocol = 'eager' as const;
  readonly supportedProtocols = ['eager'] as const;
  readonly version = 0;

  /** The last assignment and its generation (Java sends nothing before the first assignment). */
  subscriptionUserData(ctx: SubscriptionContext): Buffer | null {
    const last = ctx.lastAssignment;
    if (last === undefined || last === null) return null;
    return encodeStickyUserData(last.partitions, last.generationId);
  }

  assign(ctx: AssignmentContext): Map<string, MemberAssignment> {
    // Eager: the previous partitions and generation come from the user data only.
    const outcome = stickyAssign(ctx, (m: MemberSubscription) => decodeStickyUserData(m.userData));
    return sortedResult(ctx.members, outcome.assignment);
  }
}
