// Partition assignors of the classic consumer-group protocol: the pluggable interface and the
// four built-ins, which give the Java client's results for the same input so that kwire and Java
// members can share a group whichever of them is the leader.
import { ConfigError } from '../../errors.js';
import { CooperativeStickyAssignor } from './cooperative-sticky.js';
import { RangeAssignor } from './range.js';
import { RoundRobinAssignor } from './round-robin.js';
import { StickyAssignor } from './sticky.js';
import type { Assignor } from './types.js';

export {
  commonRebalanceProtocol,
  type Assignor,
  type AssignmentContext,
  type MemberAssignment,
  type MemberSubscription,
  type RebalanceProtocol,
  type SubscriptionContext,
  type TopicPartition,
} from './types.js';
export { AbstractPartitionAssignor } from './common.js';
export { RangeAssignor } from './range.js';
export { RoundRobinAssignor } from './round-robin.js';
export { StickyAssignor, encodeStickyUserData, decodeStickyUserData } from './sticky.js';
export { CooperativeStickyAssignor, encodeCooperativeStickyUserData, decodeCooperativeStickyUserData } from './cooperative-sticky.js';
export type { StickyMemberData } from './sticky-core.js';

/** Names of the built-in assignors (Java's `partition.assignment.strategy` short names). */
export type BuiltInAssignorName = 'range' | 'roundrobin' | 'sticky' | 'cooperative-sticky';

export const BUILT_IN_ASSIGNORS: readonly BuiltInAssignorName[] = ['range', 'roundrobin', 'sticky', 'cooperative-sticky'];

/** A new instance of a built-in assignor, by its protocol name. */
export function builtInAssignor(name: BuiltInAssignorName): Assignor {
  switch (name) {
    case 'range':
      return new RangeAssignor();
    case 'roundrobin':
      return new RoundRobinAssignor();
    case 'sticky':
      return new StickyAssignor();
    case 'cooperative-sticky':
      return new CooperativeStickyAssignor();
    default:
      throw new Error(`unknown assignor ${String(name)}: expected one of ${BUILT_IN_ASSIGNORS.join(', ')}`);
  }
}

/** The Java class names accepted for the built-ins (a Java properties file may carry them). */
const JAVA_CLASS_NAMES: Readonly<Record<string, BuiltInAssignorName>> = {
  'org.apache.kafka.clients.consumer.RangeAssignor': 'range',
  'org.apache.kafka.clients.consumer.RoundRobinAssignor': 'roundrobin',
  'org.apache.kafka.clients.consumer.StickyAssignor': 'sticky',
  'org.apache.kafka.clients.consumer.CooperativeStickyAssignor': 'cooperative-sticky',
};

/**
 * The consumer's assignors from its `partitionAssignmentStrategy` (partition.assignment.strategy):
 * built-in names (or their Java class names) and Assignor objects, in order of preference.
 * Duplicate names are an error, as the coordinator could not tell them apart.
 */
export function resolveAssignors(strategies: readonly (string | Assignor)[]): Assignor[] {
  const out: Assignor[] = [];
  for (const s of strategies) {
    let a: Assignor;
    if (typeof s === 'string') {
      const name = (BUILT_IN_ASSIGNORS as readonly string[]).includes(s) ? (s as BuiltInAssignorName) : JAVA_CLASS_NAMES[s];
      if (name === undefined) throw new ConfigError(`unknown partition assignor ${JSON.stringify(s)}: expected one of ${BUILT_IN_ASSIGNORS.join(', ')} or an Assignor object`);
      a = builtInAssignor(name);
    } else {
      a = s;
    }
    if (out.some((x) => x.name === a.name)) throw new ConfigError(`partition assignor ${a.name} is configured twice`);
    out.push(a);
  }
  if (out.length === 0) throw new ConfigError('no partition assignor configured');
  return out;
}

/**
 * Validates a leader's result against the rules every assignor must keep (one entry per member,
 * each partition at most once, only to a member subscribed to its topic, only existing
 * partitions); returns the problems found, empty when none. The group state machine can run it
 * on custom assignors' output before sending SyncGroup.
 */
export function checkAssignment(
  members: readonly { memberId: string; topics: readonly string[] }[],
  partitionsPerTopic: ReadonlyMap<string, number>,
  assignment: ReadonlyMap<string, { partitions: readonly { topic: string; partition: number }[] }>,
): string[] {
  const problems: string[] = [];
  const seen = new Map<string, string>();
  for (const m of members) {
    const a = assignment.get(m.memberId);
    if (a === undefined) {
      problems.push(`no assignment for member ${m.memberId}`);
      continue;
    }
    for (const tp of a.partitions) {
      const k = `${tp.topic}-${tp.partition}`;
      const n = partitionsPerTopic.get(tp.topic);
      if (n === undefined || !Number.isInteger(tp.partition) || tp.partition < 0 || tp.partition >= n) problems.push(`${k} does not exist`);
      if (!m.topics.includes(tp.topic)) problems.push(`${k} given to ${m.memberId}, which is not subscribed to ${tp.topic}`);
      const other = seen.get(k);
      if (other !== undefined) problems.push(`${k} given to both ${other} and ${m.memberId}`);
      seen.set(k, m.memberId);
    }
  }
  for (const id of assignment.keys()) if (!members.some((m) => m.memberId === id)) problems.push(`assignment for unknown member ${id}`);
  return problems;
}
