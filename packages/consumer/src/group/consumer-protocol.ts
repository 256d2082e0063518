// The consumer's embedded protocol (subscription and assignment in JoinGroup/SyncGroup) lives in
// @kwire/protocol; this adds what the group code needs on top: a JoinGroup member as the
// assignors take it.
import { decodeSubscription } from '@kwire/protocol';
import type { MemberSubscription } from './assignors/types.js';

export {
  ASSIGNMENT_VERSION,
  CONSUMER_PROTOCOL_TYPE,
  SUBSCRIPTION_VERSION,
  decodeAssignment,
  decodeSubscription,
  encodeAssignment,
  encodeSubscription,
  type ConsumerAssignment as Assignment,
  type ConsumerSubscription as Subscription,
  type Versioned,
} from '@kwire/protocol';

/**
 * A JoinGroup response member as the assignors take it: the decoded metadata plus the member
 * id and group.instance.id from the response. A negative generation reads as -1 (unknown).
 */
export function memberSubscription(member: { memberId: string; groupInstanceId?: string | null; metadata: Buffer }): MemberSubscription {
  const s = decodeSubscription(member.metadata);
  return {
    memberId: member.memberId,
    groupInstanceId: member.groupInstanceId ?? null,
    topics: s.topics,
    userData: s.userData,
    ownedPartitions: s.ownedPartitions,
    generationId: s.generationId < 0 ? -1 : s.generationId,
    rackId: s.rackId,
  };
}
