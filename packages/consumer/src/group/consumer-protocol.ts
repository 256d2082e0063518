// The consumer's embedded protocol of classic groups (protocol type "consumer"): the
// subscription each member puts in JoinGroup `Protocols[].Metadata`, and the assignment the
// leader puts in SyncGroup `Assignments[].Assignment`.
//
// Both are an int16 version followed by the struct of that version, non-flexible encoding
// (int16 string lengths, int32 array counts, int32 bytes lengths):
//
//   ConsumerProtocolSubscription v0-3 =>
//     Topics: []string                                    v0+
//     UserData: nullable bytes                            v0+
//     OwnedPartitions: [] { Topic: string, Partitions: []int32 }   v1+
//     GenerationId: int32 (-1 when unknown)               v2+
//     RackId: nullable string                             v3+
//   ConsumerProtocolAssignment v0-3 (one layout; bumped in step with the subscription) =>
//     AssignedPartitions: [] { Topic: string, Partitions: []int32 }
//     UserData: nullable bytes
//
// Compatibility rules, as Java's ConsumerProtocol applies them: fields are only ever appended,
// so a version newer than ours is read as our newest one and the bytes after the fields we know
// are ignored; a negative version is an error. We write version 3, as Java 3.5+ does.
import {
  decodeConsumerProtocolAssignment,
  decodeConsumerProtocolSubscription,
  encodeConsumerProtocolAssignment,
  encodeConsumerProtocolSubscription,
  ConsumerProtocolAssignmentData,
  ConsumerProtocolSubscriptionData,
  KafkaProtocolError,
  Reader,
  Writer,
} from '@kwire/protocol';
import type { MemberSubscription, TopicPartition } from './assignors/types.js';

export const CONSUMER_PROTOCOL_TYPE = 'consumer';
/** The newest subscription version we know (and write by default). */
export const SUBSCRIPTION_VERSION = ConsumerProtocolSubscriptionData.maxVersion;
/** The newest assignment version we know (and write by default). */
export const ASSIGNMENT_VERSION = ConsumerProtocolAssignmentData.maxVersion;

/** A decoded (or to-be-encoded) subscription, with partitions flattened. */
export interface Subscription {
  topics: string[];
  userData: Buffer | null;
  ownedPartitions: TopicPartition[];
  /** -1 when unknown (and always for versions below 2). */
  generationId: number;
  /** null when absent (versions below 3) or empty. */
  rackId: string | null;
}

export interface Assignment {
  partitions: TopicPartition[];
  userData: Buffer | null;
}

/** What a decoder returns: the struct plus the version written in the header. */
export type Versioned<T> = T & {
  /** The version in the header (possibly newer than we know); -1 for an empty assignment. */
  version: number;
};

/** Groups partitions by topic, keeping each topic where it first appears. */
function groupByTopic(partitions: readonly TopicPartition[]): { topic: string; partitions: number[] }[] {
  const out: { topic: string; partitions: number[] }[] = [];
  const index = new Map<string, number[]>();
  for (const tp of partitions) {
    let list = index.get(tp.topic);
    if (list === undefined) {
      list = [];
      index.set(tp.topic, list);
      out.push({ topic: tp.topic, partitions: list });
    }
    list.push(tp.partition);
  }
  return out;
}

function flatten(groups: readonly { topic: string; partitions: readonly number[] }[]): TopicPartition[] {
  const out: TopicPartition[] = [];
  for (const g of groups) for (const p of g.partitions) out.push({ topic: g.topic, partition: p });
  return out;
}

function checkWriteVersion(version: number, max: number, what: string): void {
  if (!Number.isInteger(version) || version < 0 || version > max) {
    throw new KafkaProtocolError(`${what} v${version} cannot be written (kwire: v0-${max})`, { reason: 'unsupported-version' });
  }
}

/** Reads the int16 header; returns the version to parse as (ours when newer). */
function readVersion(r: Reader, max: number, what: string): { written: number; parseAs: number } {
  const written = r.readInt16();
  if (written < 0) throw new KafkaProtocolError(`${what} version ${written} is not valid`, { reason: 'unsupported-version', offset: 0 });
  return { written, parseAs: Math.min(written, max) };
}

/**
 * Encodes a subscription as Java does: topics sorted, owned partitions sorted by topic and
 * partition and grouped by topic. Fields the version lacks are left out.
 */
export function encodeSubscription(s: Partial<Subscription> & { topics: readonly string[] }, version: number = SUBSCRIPTION_VERSION): Buffer {
  checkWriteVersion(version, SUBSCRIPTION_VERSION, 'ConsumerProtocolSubscription');
  const topics = [...s.topics].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const owned = [...(s.ownedPartitions ?? [])].sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition));
  const w = new Writer(256);
  w.writeInt16(version);
  encodeConsumerProtocolSubscription(
    w,
    {
      topics,
      userData: s.userData ?? null,
      ownedPartitions: groupByTopic(owned),
      generationId: s.generationId ?? -1,
      rackId: s.rackId ?? null,
    },
    version,
  );
  return w.finish();
}

/** Decodes JoinGroup member metadata; newer versions are read as v3, trailing bytes ignored. */
export function decodeSubscription(bytes: Buffer): Versioned<Subscription> {
  const r = new Reader(bytes);
  const { written, parseAs } = readVersion(r, SUBSCRIPTION_VERSION, 'ConsumerProtocolSubscription');
  const d = decodeConsumerProtocolSubscription(r, parseAs);
  return {
    version: written,
    topics: d.topics,
    // A copy: the frame it came from may be reused by the connection.
    userData: d.userData === null ? null : Buffer.from(d.userData),
    ownedPartitions: flatten(d.ownedPartitions),
    generationId: d.generationId,
    rackId: d.rackId === null || d.rackId === '' ? null : d.rackId,
  };
}

/** Encodes an assignment; partitions are grouped by topic in order of first appearance (as Java does). */
export function encodeAssignment(a: { partitions: readonly TopicPartition[]; userData?: Buffer | null }, version: number = ASSIGNMENT_VERSION): Buffer {
  checkWriteVersion(version, ASSIGNMENT_VERSION, 'ConsumerProtocolAssignment');
  const w = new Writer(256);
  w.writeInt16(version);
  encodeConsumerProtocolAssignment(w, { assignedPartitions: groupByTopic(a.partitions), userData: a.userData ?? null }, version);
  return w.finish();
}

/**
 * Decodes a SyncGroup assignment. Empty bytes mean no partitions (a coordinator returns them to a
 * member the leader left out, e.g. when it skipped the assignment); newer versions are read as
 * v3 with trailing bytes ignored.
 */
export function decodeAssignment(bytes: Buffer): Versioned<Assignment> {
  if (bytes.length === 0) return { version: -1, partitions: [], userData: null };
  const r = new Reader(bytes);
  const { written, parseAs } = readVersion(r, ASSIGNMENT_VERSION, 'ConsumerProtocolAssignment');
  const d = decodeConsumerProtocolAssignment(r, parseAs);
  return {
    version: written,
    partitions: flatten(d.assignedPartitions),
    userData: d.userData === null ? null : Buffer.from(d.userData),
  };
}

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
