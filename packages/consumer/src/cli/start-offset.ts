// kwire consume --from: where reading starts, in the forms kcat and the console consumer take, and
// the range check that says what happens to a start outside a partition's log.
import type { Consumer, StartOffset, TopicPartition } from '../index.js';

/** What --from asked for. */
export type From =
  | { kind: 'earliest' }
  | { kind: 'latest' }
  | { kind: 'offset'; offset: bigint }
  /** -N: the last N records of each partition. */
  | { kind: 'last'; count: bigint }
  | { kind: 'timestamp'; ms: bigint };

export const FROM_FORMS = 'beginning, end, an offset, -N (the last N records), an ISO-8601 date or time, or @MS (ms since the epoch)';

// 2026-12-04, 2026-12-04T10:30, 2026-12-04 10:30:00.250+01:00, ...Z
const ISO = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?)(Z|[+-]\d{2}:?\d{2})?)?$/;

/** --from's text as a From, or the one-line reason it is not one. */
export function parseFrom(text: string): From | string {
  if (text === 'beginning' || text === 'earliest') return { kind: 'earliest' };
  if (text === 'end' || text === 'latest') return { kind: 'latest' };
  if (/^\d+$/.test(text)) return { kind: 'offset', offset: BigInt(text) };
  if (/^-\d+$/.test(text)) {
    const count = -BigInt(text);
    return count > 0n ? { kind: 'last', count } : '--from -N needs N of at least 1 (-1: the last record)';
  }
  if (/^@\d+$/.test(text)) return { kind: 'timestamp', ms: BigInt(text.slice(1)) };
  const iso = ISO.exec(text);
  if (iso) {
    // Without a zone, local time, date alone included (JavaScript would read a date alone as UTC),
    // as kafka-consumer-groups' --to-datetime does.
    const ms = Date.parse(`${iso[1]}T${iso[2] ?? '00:00'}${iso[3] ?? ''}`);
    if (Number.isNaN(ms)) return `--from ${text} is not a valid date or time`;
    if (ms < 0) return `--from ${text} is before 1970: Kafka timestamps start there`;
    return { kind: 'timestamp', ms: BigInt(ms) };
  }
  return `--from must be ${FROM_FORMS}; not ${JSON.stringify(text)}`;
}

/** Where a reading without a group starts in each partition, and what the CLI has to say about it. */
export interface StartPlan {
  offsets: Map<TopicPartition, StartOffset>;
  /** The end of each partition when the plan was made (under read_committed, the last stable offset); undefined unless looked up. */
  ends: Map<TopicPartition, bigint> | undefined;
  /** One line per partition whose start was outside its log. */
  notices: string[];
}

type Reset = 'earliest' | 'latest' | 'none';

/**
 * The start of each partition. An offset and -N need the partitions' log ranges, and so does
 * `needEnds` (-e): they are looked up here, with the public lookups, so that an offset outside a
 * log is said with the range, not found out later by a Fetch (whose error answer does not carry it).
 * An offset outside the log goes where auto.offset.reset says, as the consumer would have.
 */
export async function planStart(consumer: Consumer, tps: TopicPartition[], from: From, reset: Reset, needEnds: boolean): Promise<StartPlan> {
  const offsets = new Map<TopicPartition, StartOffset>();
  const notices: string[] = [];
  const needRange = from.kind === 'offset' || from.kind === 'last';
  const [starts, ends] = needRange || needEnds ? await Promise.all([consumer.beginningOffsets(tps), consumer.endOffsets(tps)]) : [undefined, undefined];
  for (const tp of tps) {
    const name = `${tp.topic}-${tp.partition}`;
    if (from.kind === 'earliest' || from.kind === 'latest') {
      offsets.set(tp, from.kind);
      continue;
    }
    if (from.kind === 'timestamp') {
      offsets.set(tp, { timestamp: from.ms });
      continue;
    }
    const logStart = starts!.get(tp) ?? -1n;
    const end = ends!.get(tp) ?? -1n;
    if (logStart < 0n || end < 0n) throw new Error(`${name}: the range of its log could not be found (ListOffsets answered no offset)`);
    if (from.kind === 'last') {
      const start = end - from.count;
      offsets.set(tp, start > logStart ? start : logStart);
      continue;
    }
    const offset = from.offset;
    if (offset >= logStart && offset <= end) {
      offsets.set(tp, offset);
      continue;
    }
    const where = `${name}: offset ${offset} is ${offset > end ? 'past the end of the log' : 'before the start of the log'} (log start ${logStart}, end ${end})`;
    if (reset === 'none') throw new Error(`${where}, and auto.offset.reset is none`);
    const target = reset === 'earliest' ? logStart : end;
    const instead = offset < logStart && reset === 'latest' ? '; -X auto.offset.reset=earliest starts at the log start instead' : '';
    notices.push(`${where}: starting at ${reset} (auto.offset.reset), offset ${target}${instead}`);
    offsets.set(tp, target);
  }
  return { offsets, ends, notices };
}
