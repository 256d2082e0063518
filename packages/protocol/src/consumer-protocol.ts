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
import { KafkaProtocolError } from './errors.js';
import { ConsumerProtocolAssignmentData, decodeConsumerProtocolAssignment, encodeConsumerProtocolAssignment } from './messages/consumer-protocol-assignment.js';
import { ConsumerProtocolSubscriptionData, decodeConsumerProtocolSubscription, encodeConsumerProtocolSubscription } from './messages/consumer-protocol-subscription.js';
import { Reader } from './primitives/reader.js';
import { Writer } from './primitives/writer.js';

/** One partition of one topic. */
export interface TopicPartition {
  topic: string;
  partition: number;
}

export const CONSUMER_PROTOCOL_TYPE = 'consumer';
/** The newest subscription version we know (and write by default). */
export const SUBSCRIPTION_VERSION = ConsumerProtocolSubscriptionData.maxVersion;
/** The newest assignment version we know (and write by default). */
export const ASSIGNMENT_VERSION = ConsumerProtocolAssignmentData.maxVersion;

/** A decoded (or to-be-encoded) subscription, with partitions flattened. */
export interface ConsumerSubscription {
  topics: string[];
  userData: Buffer | null;
  ownedPartitions: TopicPartition[];
  /** -1 when unknown (and always for versions below 2). */
  generationId: number;
  /** null when absent (versions below 3) or empty. */
  rackId: string | null;
}

export interface ConsumerAssignment {
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
export function encodeSubscription(s: Partial<ConsumerSubscription> & { topics: readonly string[] }, version: number = SUBSCRIPTION_VERSION): Buffer {
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
export function decodeSubscription(bytes: Buffer): Versioned<ConsumerSubscription> {
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
export function decodeAssignment(bytes: Buffer): Versioned<ConsumerAssignment> {
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

// ---------------------------------------------------------------- assignor user data

/** What the sticky assignors read from a member: its previous partitions and generation. */
export interface StickyUserData {
  partitions: TopicPartition[];
  /** undefined when the user data carries none (v0, or no user data); -1 when unreadable. */
  generation: number | undefined;
}

/** The generation Java uses when it has none. */
const DEFAULT_GENERATION = -1;

// StickyAssignor user data, in Java's layout.
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

/** Encodes StickyAssignor user data v1 (topics in first-seen order, partitions as given). */
export function encodeStickyUserData(partitions: readonly TopicPartition[], generation: number): Buffer {
  const byTopic = new Map<string, number[]>();
  for (const tp of partitions) {
    let list = byTopic.get(tp.topic);
    if (list === undefined) byTopic.set(tp.topic, (list = []));
    list.push(tp.partition);
  }
  let size = 4 + 4;
  for (const [topic, list] of byTopic) size += 2 + Buffer.byteLength(topic, 'utf8') + 4 + 4 * list.length;
  const out = Buffer.alloc(size);
  let o = out.writeInt32BE(byTopic.size, 0);
  for (const [topic, list] of byTopic) {
    const len = Buffer.byteLength(topic, 'utf8');
    if (len > 0x7fff) throw new RangeError(`topic name of ${len} bytes is too long`);
    o = out.writeInt16BE(len, o);
    o += out.write(topic, o, 'utf8');
    o = out.writeInt32BE(list.length, o);
    for (const p of list) o = out.writeInt32BE(p, o);
  }
  out.writeInt32BE(generation | 0, o);
  return out;
}

/** A bounds-checked read of the previous_assignment array, with Java's Schema checks; throws on bad input. */
function readPreviousAssignment(buf: Buffer, withGeneration: boolean): StickyUserData {
  let o = 0;
  const need = (n: number) => {
    if (buf.length - o < n) throw new RangeError('truncated');
  };
  const int32 = () => {
    need(4);
    const v = buf.readInt32BE(o);
    o += 4;
    return v;
  };
  const count = int32();
  if (count < 0 || count > buf.length - o) throw new RangeError('bad array size');
  const partitions: TopicPartition[] = [];
  for (let i = 0; i < count; i++) {
    need(2);
    const len = buf.readInt16BE(o);
    o += 2;
    if (len < 0) throw new RangeError('negative string length');
    need(len);
    const topic = buf.toString('utf8', o, o + len);
    o += len;
    const n = int32();
    if (n < 0 || n > buf.length - o) throw new RangeError('bad array size');
    for (let j = 0; j < n; j++) partitions.push({ topic, partition: int32() });
  }
  return { partitions, generation: withGeneration ? int32() : undefined };
}

/**
 * Decodes StickyAssignor user data as Java does: v1, else v0 (no generation); empty or missing
 * user data means no previous assignment; anything unreadable means none, at generation -1.
 * Trailing bytes are ignored.
 */
export function decodeStickyUserData(userData: Buffer | null): StickyUserData {
  if (userData === null || userData.length === 0) return { partitions: [], generation: undefined };
  try {
    return readPreviousAssignment(userData, true);
  } catch {
    try {
      return readPreviousAssignment(userData, false);
    } catch {
      return { partitions: [], generation: DEFAULT_GENERATION };
    }
  }
}

// CooperativeStickyAssignorUserData v0 => generation: int32 (read by leaders from subscriptions
// older than v2, which have no GenerationId field).
/** CooperativeStickyAssignor user data: the generation as an int32. */
export function encodeCooperativeStickyUserData(generation: number): Buffer {
  const out = Buffer.alloc(4);
  out.writeInt32BE(generation | 0, 0);
  return out;
}

/** The generation in CooperativeStickyAssignor user data: undefined when absent, -1 when unreadable. */
export function decodeCooperativeStickyUserData(userData: Buffer | null): number | undefined {
  if (userData === null) return undefined;
  return userData.length >= 4 ? userData.readInt32BE(0) : DEFAULT_GENERATION;
}
