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
import { sortedResult } from './common.js';
import { DEFAULT_GENERATION, stickyAssign, type StickyMemberData } from './sticky-core.js';
import type { AssignmentContext, Assignor, MemberAssignment, MemberSubscription, SubscriptionContext, TopicPartition } from './types.js';

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
function readPreviousAssignment(buf: Buffer, withGeneration: boolean): StickyMemberData {
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
export function decodeStickyUserData(userData: Buffer | null): StickyMemberData {
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
