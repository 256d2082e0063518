// kafkajs's partition assigners on kwire's classic group protocol.
//
// kafkajs's default, PartitionAssigners.roundRobin, is offered under kafkajs's protocol name
// ('RoundRobinAssigner', version 0) and computes what kafkajs's computes: members sorted by id,
// every partition of every subscribed topic dealt to them in turn. So kafkajs members and
// @kwire/kafkajs members can share a group during a rolling migration, whichever leads.
import type { Assignor, AssignmentContext, MemberAssignment } from '@kwire/consumer';
import type { Assigner, Cluster, Logger, PartitionAssigner } from 'kafkajs-upstream';
import { KafkaJSNonRetriableError } from './error-classes.js';
import { upstream } from './upstream.js';

export const ROUND_ROBIN_NAME = 'RoundRobinAssigner';

/** kafkajs's round-robin assigner as a kwire Assignor. */
export function roundRobinAssignor(): Assignor {
  return {
    name: ROUND_ROBIN_NAME,
    rebalanceProtocol: 'eager',
    version: 0,
    subscriptionUserData: () => null,
    assign(ctx: AssignmentContext): Map<string, MemberAssignment> {
      const members = ctx.members.map((m) => m.memberId).sort();
      const topics: string[] = [];
      for (const m of ctx.members) for (const t of m.topics) if (!topics.includes(t)) topics.push(t);
      const out = new Map<string, MemberAssignment>(members.map((id) => [id, { partitions: [] }]));
      let i = 0;
      for (const topic of topics) {
        const n = ctx.partitionsPerTopic.get(topic) ?? 0;
        for (let p = 0; p < n; p++) {
          out.get(members[i % members.length]!)!.partitions.push({ topic, partition: p });
          i++;
        }
      }
      return out;
    },
  };
}

/** What a kafkajs assigner factory is given: a cluster view for its `assign`, the group id, a logger. */
export interface AssignerContext {
  groupId: string;
  logger: Logger;
}

interface PartitionMetadataEntry {
  partitionErrorCode: number;
  partitionId: number;
  leader: number;
  replicas: number[];
  isr: number[];
}

/**
 * The part of kafkajs's Cluster an assigner uses while it assigns: findTopicPartitionMetadata
 * (from the partition counts the group leader has). The rest of kafkajs's Cluster (connections,
 * brokers) is not kwire's to hand out: those methods throw a KafkaJSNonRetriableError naming them.
 */
function clusterFor(current: () => AssignmentContext | undefined): Cluster {
  const findTopicPartitionMetadata = (topic: string): PartitionMetadataEntry[] => {
    const n = current()?.partitionsPerTopic.get(topic) ?? 0;
    return Array.from({ length: n }, (_, partitionId) => ({ partitionErrorCode: 0, partitionId, leader: -1, replicas: [], isr: [] }));
  };
  return new Proxy({ findTopicPartitionMetadata } as unknown as Cluster, {
    get(target, property) {
      if (property in target) return (target as unknown as Record<PropertyKey, unknown>)[property];
      if (typeof property !== 'string' || property === 'then') return undefined;
      return () => {
        throw new KafkaJSNonRetriableError(`cluster.${property}() is not available to partition assigners in @kwire/kafkajs (findTopicPartitionMetadata is)`);
      };
    },
  });
}

/**
 * A kafkajs assigner (`({ cluster, groupId, logger }) => ({ name, version, protocol, assign })`)
 * as a kwire Assignor: its protocol's user data goes into this member's subscription, and on the
 * leader its `assign` gets kafkajs's `{ members: [{ memberId, memberMetadata }], topics }` and its
 * answer (MemberAssignment buffers) is decoded into kwire's assignment. Its `assign` is
 * asynchronous: so is the Assignor's, which kwire's leader awaits.
 */
export function kafkajsAssignor(factory: PartitionAssigner, context: AssignerContext): Assignor {
  let current: AssignmentContext | undefined;
  const assigner = factory({ cluster: clusterFor(() => current), groupId: context.groupId, logger: context.logger }) as Partial<Assigner> | undefined;
  if (!assigner || typeof assigner.name !== 'string' || assigner.name.length === 0 || typeof assigner.assign !== 'function' || typeof assigner.protocol !== 'function') {
    throw new KafkaJSNonRetriableError('Invalid partition assigner: the factory must return { name, version, assign(group), protocol({ topics }) }');
  }
  const { MemberMetadata, MemberAssignment } = upstream.AssignerProtocol;
  const version = typeof assigner.version === 'number' ? assigner.version : 0;
  const a = assigner as Assigner;
  return {
    name: a.name,
    rebalanceProtocol: 'eager',
    version,
    subscriptionUserData(ctx) {
      const { metadata } = a.protocol({ topics: [...ctx.topics] });
      if (!Buffer.isBuffer(metadata) || metadata.length === 0) return null;
      const decoded = MemberMetadata.decode(metadata);
      return decoded?.userData && decoded.userData.length > 0 ? decoded.userData : null;
    },
    assign(ctx: AssignmentContext): Promise<Map<string, MemberAssignment>> {
      const members = ctx.members.map((m) => ({
        memberId: m.memberId,
        memberMetadata: MemberMetadata.encode({ version, topics: m.topics, userData: m.userData ?? Buffer.alloc(0) }),
      }));
      const topics: string[] = [];
      for (const m of ctx.members) for (const t of m.topics) if (!topics.includes(t)) topics.push(t);
      current = ctx;
      return Promise.resolve()
        .then(() => a.assign({ members, topics }))
        .then((answer) => {
          const out = new Map<string, MemberAssignment>(ctx.members.map((m) => [m.memberId, { partitions: [] }]));
          for (const { memberId, memberAssignment } of answer ?? []) {
            const decoded = memberAssignment ? MemberAssignment.decode(memberAssignment) : null;
            const partitions = Object.entries(decoded?.assignment ?? {}).flatMap(([topic, list]) => list.map((partition) => ({ topic, partition })));
            const userData = decoded?.userData && decoded.userData.length > 0 ? decoded.userData : null;
            out.set(memberId, { partitions, userData });
          }
          return out;
        })
        .finally(() => {
          if (current === ctx) current = undefined;
        });
    },
  };
}

/**
 * The kwire assignors for kafkajs's `partitionAssigners`: kafkajs's own roundRobin maps onto
 * roundRobinAssignor() (pure, kafkajs's protocol name); any other assigner factory is run as
 * kafkajs runs it (kafkajsAssignor).
 */
export function assignorsFor(assigners: readonly PartitionAssigner[] | undefined, context: AssignerContext): (string | Assignor)[] {
  if (assigners === undefined) return [roundRobinAssignor()];
  if (!Array.isArray(assigners) || assigners.length === 0) {
    throw new KafkaJSNonRetriableError('Invalid partitionAssigners: expected a non-empty array of assigner factories');
  }
  return assigners.map((a) => {
    if (a === upstream.PartitionAssigners.roundRobin) return roundRobinAssignor();
    if (typeof a !== 'function') throw new KafkaJSNonRetriableError(`Invalid partition assigner: expected a function, received ${typeof a}`);
    return kafkajsAssignor(a, context);
  });
}

/** kafkajs's PartitionAssigners: roundRobin, the same factory kafkajs exports. */
export const PartitionAssigners: { roundRobin: PartitionAssigner } = { roundRobin: upstream.PartitionAssigners.roundRobin };
