// The partition-assignor interface of the classic consumer-group protocol.
//
// In a classic group the coordinator only relays bytes: every member sends, for each assignor it
// supports, a ConsumerProtocolSubscription (its topics plus assignor-specific user data); the
// coordinator picks one assignor name that every member offered and elects a leader; the leader
// decodes everybody's subscription, runs that assignor, and hands each member its partitions in
// SyncGroup. So an assignor is a pure function of the group's subscriptions and the topic
// metadata, and two clients can share a group only if the assignor with a given name produces
// an assignment every member accepts. The four built-in ones reproduce the Java client's results
// exactly (see each file), so either a kwire or a Java member can be the leader.
import type { TopicPartition } from '@kwire/protocol';

/** One partition of one topic: the one type for it, from @kwire/protocol. */
export type { TopicPartition } from '@kwire/protocol';

/** How members give partitions up during a rebalance (KIP-429). */
export type RebalanceProtocol = 'eager' | 'cooperative';

/**
 * One member's subscription as the leader sees it: the decoded ConsumerProtocolSubscription (v0-3)
 * plus the member id and group.instance.id from the JoinGroup response.
 */
export interface MemberSubscription {
  memberId: string;
  /** group.instance.id of a static member, null for a dynamic one. */
  groupInstanceId: string | null;
  /** The topics the member subscribes to. */
  topics: string[];
  /** The assignor's user data (null when the member sent none). */
  userData: Buffer | null;
  /** Partitions the member still owns (subscription v1+; empty for eager members, which revoke first). */
  ownedPartitions: TopicPartition[];
  /** The member's generation (subscription v2+), -1 when unknown or absent. */
  generationId: number;
  /** client.rack (subscription v3+), null when absent or empty. */
  rackId: string | null;
}

/** What a member is given. */
export interface MemberAssignment {
  partitions: TopicPartition[];
  /** Assignor-specific bytes carried in the ConsumerProtocolAssignment; none of the built-ins use it. */
  userData?: Buffer | null;
}

/** What the leader knows when it runs the assignor. */
export interface AssignmentContext {
  /**
   * Every member, in the order of the JoinGroup response. The order matters for exact agreement
   * with Java: the Java leader collects the members into a HashMap in this order, and the sticky
   * assignors' tie-breaks follow that map's iteration order (which kwire reproduces).
   */
  members: readonly MemberSubscription[];
  /**
   * Partition counts from metadata. Topics nobody subscribes to, and topics with no partitions
   * (unknown to metadata), are ignored, as Java does.
   */
  partitionsPerTopic: ReadonlyMap<string, number>;
  /**
   * Optional rack-aware input (KIP-881): for each topic, indexed by partition number, the racks of
   * that partition's replicas (all replicas, online or not, as Java counts them). Only used when
   * members send a rackId too; see each assignor for when it changes the result.
   */
  racksPerPartition?: ReadonlyMap<string, ReadonlyArray<readonly string[] | null | undefined>>;
}

/** What a member knows when it builds its JoinGroup metadata for one assignor. */
export interface SubscriptionContext {
  /** The topics it will subscribe to. */
  topics: readonly string[];
  /** Partitions it owns now (cooperative members keep them across the join; eager members have none). */
  ownedPartitions: readonly TopicPartition[];
  /** Its current generation, -1 before the first join or after a reset. */
  generationId: number;
  /**
   * The last assignment it received in SyncGroup and the generation it came with, null before the
   * first one. Kept even after an eager member revoked those partitions: that is what Java's
   * StickyAssignor reports as its previous assignment (and the generation the cooperative
   * assignor writes into v0/v1 user data). Java calls onAssignment only on the assignor the group
   * chose, so to send the same bytes as Java pass it only to the assignor named in the last
   * JoinGroup's ProtocolName and null to the others (a Java 3.9 consumer offering range and
   * cooperative-sticky, grouped under range, keeps sending cooperative-sticky user data -1).
   * Passing it to every assignor is valid too; it only makes a later switch stickier.
   */
  lastAssignment?: { partitions: readonly TopicPartition[]; generationId: number } | null;
}

/**
 * A partition assignor (Java's ConsumerPartitionAssignor). To plug your own, implement this and
 * pass it among the consumer's assignors; every member of the group must offer an assignor with
 * the same `name` for the coordinator to pick it, and the leader's copy computes everybody's
 * assignment, so members running different implementations of one name must agree (which is why
 * the built-ins follow Java to the tie).
 *
 * Rules an implementation must keep:
 * - `assign` returns an entry for every member (an empty list for idle ones), gives each
 *   partition to at most one member, and only to a member subscribed to its topic.
 * - It is pure: no I/O and no clock; it may throw, which fails the leader's SyncGroup.
 * - A cooperative assignor must never hand a partition directly from its current owner (per
 *   `ownedPartitions`) to another member in one rebalance: it leaves it unassigned, the owner
 *   revokes it and rejoins, and the next rebalance assigns it.
 */
export interface Assignor {
  /** The protocol name sent in JoinGroup (`range`, `roundrobin`, `sticky`, `cooperative-sticky`...). */
  readonly name: string;
  /** The protocol this assignor is designed for. */
  readonly rebalanceProtocol: RebalanceProtocol;
  /**
   * Every protocol it can work under (default: just `rebalanceProtocol`). A consumer configured
   * with several assignors uses the newest protocol all of them support (see
   * commonRebalanceProtocol), so cooperative-sticky also lists 'eager'.
   */
  readonly supportedProtocols?: readonly RebalanceProtocol[];
  /** Java's ConsumerPartitionAssignor.version(); informational, 0 by default. */
  readonly version?: number;
  /** The user data this member puts in its subscription for this assignor (null for none). */
  subscriptionUserData(ctx: SubscriptionContext): Buffer | null;
  /**
   * The leader's computation: member id -> assignment. May be asynchronous (an assignor that
   * looks something up first, as kafkajs's custom assigners do): the leader awaits it before its
   * SyncGroup, within the rebalance timeout like the rest of the join.
   */
  assign(ctx: AssignmentContext): Map<string, MemberAssignment> | Promise<Map<string, MemberAssignment>>;
}

/**
 * The rebalance protocol of a consumer configured with these assignors, as Java's
 * ConsumerCoordinator decides it: the newest protocol that every one of them supports.
 */
export function commonRebalanceProtocol(assignors: readonly Assignor[]): RebalanceProtocol {
  if (assignors.length === 0) throw new Error('no assignors configured');
  const supported = (a: Assignor) => a.supportedProtocols ?? [a.rebalanceProtocol];
  const common = (['cooperative', 'eager'] as const).filter((p) => assignors.every((a) => supported(a).includes(p)));
  if (common.length === 0) {
    throw new Error(`the assignors ${assignors.map((a) => a.name).join(', ')} support no common rebalance protocol`);
  }
  return common[0]!;
}
