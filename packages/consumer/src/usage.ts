/**
 * The consumer's arguments, checked as strictly as its configuration: each method's input is
 * taken apart here before anything happens, and what does not fit is a UsageError that says what
 * was met and what to give (with the kwire way for a kafkajs or Java spelling, and "did you mean"
 * for a near miss). JavaScript callers are not held by the types, so nothing here trusts them.
 *
 * Shapes accepted besides the declared ones, because their meaning is plain:
 *  - where a list of partitions is expected, any iterable (an array, a Set), and kafkajs's
 *    `{ topic, partitions: [0, 1] }` entries; `{ topic }` alone means every partition of the topic
 *    assigned now (kafkajs pauses a whole topic, partitions assigned later included; kwire pauses
 *    partitions, so a partition of the topic assigned later is not paused);
 *  - where offsets or times are given per partition (commitSync, offsetsForTimes), a Map keyed by
 *    partition (Java's shape) or a list of `{ topic, partition, offset | timestamp }` (kafkajs's).
 */
import type { TopicPartition } from '@kwire/protocol';
import { JAVA_NAMES, KWIRE_OPTIONS } from './config.js';
import { UsageError } from './errors.js';
import { tpKey } from './tp-key.js';
import type { RebalanceListener, Subscription } from './group/group-manager.js';
import type { OffsetToCommit } from './group/offsets.js';
import type { RunOptions } from './run.js';
import { foreignName, nearest } from './spelling.js';
import type { ResetTarget } from './state/partition-state.js';

/**
 * Where a partition starts: an offset, the start or end of the log, the first record at or after a
 * time (ms since the epoch; the end of the log when none is that late), or auto.offset.reset when
 * left out.
 */
export type StartOffset = bigint | number | 'earliest' | 'latest' | { timestamp: number | bigint };

/** What assign() takes: a partition, and where it starts. */
export interface PartitionAssignment extends TopicPartition {
  offset?: StartOffset;
}

/** A partition, or kafkajs's form: a topic's partitions (every assigned one when `partitions` is left out). */
export type PartitionsOfTopic = { topic: string; partitions?: readonly number[] };

/** What pause(), resume() and the like take: partitions, as an array, a Set or any iterable. */
export type PartitionList = Iterable<TopicPartition | PartitionsOfTopic>;

/** An offset to commit as Java's OffsetAndMetadata has it. */
export interface OffsetAndMetadata {
  offset: bigint | number;
  leaderEpoch?: number;
  metadata?: string | null;
}

/** What commitSync() takes: a list of { topic, partition, offset }, or a Map from partition to offset (Java's shape). */
export type OffsetsToCommit = Iterable<TopicPartition & OffsetAndMetadata> | ReadonlyMap<TopicPartition, bigint | number | OffsetAndMetadata>;

/** What offsetsForTimes() takes: a Map from partition to time, or a list of { topic, partition, timestamp }. */
export type TimesToLookUp = ReadonlyMap<TopicPartition, number | bigint> | Iterable<TopicPartition & { timestamp: number | bigint }>;

/** A value as a message shows it: short, bigints with their n, nothing of a function but that it is one. */
export function shown(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'symbol') return value.toString();
  if (value instanceof RegExp) return String(value);
  if (value instanceof Map) return `a Map of ${value.size}`;
  if (value instanceof Set) return `a Set of ${value.size}`;
  if (value instanceof Date) return `a Date (${Number.isNaN(value.getTime()) ? 'invalid' : value.toISOString()})`;
  let text: string;
  try {
    text = JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : typeof v === 'function' ? '[function]' : v instanceof RegExp ? String(v) : v)) ?? String(value);
  } catch {
    text = Array.isArray(value) ? 'an array' : 'an object';
  }
  return text.length > 100 ? `${text.slice(0, 97)}...` : text;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** An object made with {} (its own keys are all it has), not a class instance such as a record. */
function isPlain(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function isIterable(value: unknown): value is Iterable<unknown> {
  return isObject(value) && typeof (value as { [Symbol.iterator]?: unknown })[Symbol.iterator] === 'function';
}

/** Configuration keys (both spellings), to tell one given to a method where it goes. */
function isConfigKey(key: string): boolean {
  return Object.hasOwn(JAVA_NAMES, key) || Object.values(JAVA_NAMES).includes(key) || KWIRE_OPTIONS.includes(key);
}

/**
 * Refuses keys of a plain object that `known` does not list, naming the kwire way (a kafkajs or
 * Java spelling, a configuration option given to a method) or the near miss.
 */
function onlyKnownKeys(value: object, known: readonly string[], where: string): void {
  if (!isPlain(value)) return;
  for (const key of Object.keys(value)) {
    if (known.includes(key)) continue;
    const foreign = foreignName(key);
    if (foreign) throw new UsageError(`${where}: ${key} is ${foreign.of}: ${foreign.use}`);
    if (isConfigKey(key)) throw new UsageError(`${where}: ${key} is a configuration option: give it to createConsumer()`);
    const near = nearest(key, known);
    throw new UsageError(`${where}: unknown option ${JSON.stringify(key)}${near ? `: did you mean ${near}?` : ` (it takes ${known.join(', ')})`}`);
  }
}

function topicName(value: unknown, where: string): string {
  if (typeof value === 'string' && value.length > 0) return value;
  throw new UsageError(`${where}: topic must be a non-empty string, not ${shown(value)}`);
}

function partitionNumber(value: unknown, where: string): number {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 0x7fffffff) return value;
  throw new UsageError(`${where}: partition must be an integer from 0, not ${shown(value)}`);
}

/**
 * One partition, { topic, partition }: the object itself is returned (results are keyed by the
 * objects given). Other keys are let through (a record or a batch names its partition too).
 */
export function topicPartition(value: unknown, method: string): TopicPartition {
  // (A batch is iterable and names its partition: only lists are refused.)
  if (!isObject(value) || Array.isArray(value) || value instanceof Set || value instanceof Map) {
    const list = Array.isArray(value) || value instanceof Set ? `; ${method} takes one partition, not a list` : '';
    throw new UsageError(`${method}: ${shown(value)} is not a partition: give { topic, partition }${list}`);
  }
  if (!('partition' in value)) {
    if ('partitions' in value) throw new UsageError(`${method} takes one partition { topic, partition }, not kafkajs's { topic, partitions }: ${shown(value)}`);
    const near = nearest('partition', Object.keys(value));
    throw new UsageError(`${method}: ${shown(value)} has no partition: give { topic, partition }${near ? ` (${JSON.stringify(near)} is not "partition")` : ''}`);
  }
  if (!('topic' in value)) {
    const near = nearest('topic', Object.keys(value));
    throw new UsageError(`${method}: ${shown(value)} has no topic: give { topic, partition }${near ? ` (${JSON.stringify(near)} is not "topic")` : ''}`);
  }
  topicName(value.topic, `${method}: ${shown(value)}`);
  partitionNumber(value.partition, `${method}: ${shown(value)}`);
  return value as unknown as TopicPartition;
}

/** A list argument's items: an array, a Set or another iterable (not a Map, whose items are pairs). */
function items(value: unknown, method: string, what: string, example: string): unknown[] {
  if (value instanceof Map) throw new UsageError(`${method} takes a list of ${what}, not a Map: ${example}`);
  if (typeof value === 'string' || !isIterable(value)) {
    if (isObject(value) && 'topic' in value) throw new UsageError(`${method} takes a list of ${what}, not one: ${method.replace('()', '')}([${shown(value)}])`);
    throw new UsageError(`${method} takes a list of ${what}, not ${shown(value)}: ${example}`);
  }
  return [...value];
}

function key(tp: TopicPartition): string {
  return tpKey(tp.topic, tp.partition);
}

/**
 * A list of partitions: an array, a Set or any iterable of { topic, partition } (the objects
 * given are kept, so results can be keyed by them), or kafkajs's { topic, partitions: [0, 1] }
 * (new objects, one per partition). `{ topic }` alone, and a check that every partition is
 * assigned, need `assigned`: the consumer's assignment now.
 */
export function partitionList(value: unknown, method: string, assigned?: readonly TopicPartition[]): TopicPartition[] {
  const out: TopicPartition[] = [];
  const example = `${method.replace('()', '')}([{ topic: 'events', partition: 0 }])`;
  for (const item of items(value, method, '{ topic, partition }', example)) {
    // kafkajs's form, unless a key near "partition" shows a misspelt partition.
    if (isObject(item) && !('partition' in item) && 'topic' in item && ('partitions' in item || !nearest('partition', Object.keys(item)))) {
      const topic = topicName(item.topic, `${method}: ${shown(item)}`);
      if (item.partitions === undefined) {
        if (!assigned) throw new UsageError(`${method}: ${shown(item)} names no partition: give { topic, partition } or { topic, partitions: [0, 1] }`);
        const ofTopic = assigned.filter((tp) => tp.topic === topic);
        if (ofTopic.length === 0) throw new UsageError(`${method}: no partition of ${topic} is assigned to this consumer${assignedNow(assigned)}`);
        for (const tp of ofTopic) out.push({ topic, partition: tp.partition });
        continue;
      }
      if (!Array.isArray(item.partitions)) throw new UsageError(`${method}: ${shown(item)}: partitions must be a list of partition numbers`);
      for (const p of item.partitions) out.push({ topic, partition: partitionNumber(p, `${method}: ${shown(item)}`) });
      continue;
    }
    if (isObject(item) && 'partitions' in item) throw new UsageError(`${method}: ${shown(item)} gives both partition and partitions: give one`);
    out.push(topicPartition(item, method));
  }
  if (assigned) {
    const owned = new Set(assigned.map(key));
    const missing = out.find((tp) => !owned.has(key(tp)));
    if (missing) throw new UsageError(`${method}: ${missing.topic}-${missing.partition} is not assigned to this consumer${assignedNow(assigned)}`);
  }
  return out;
}

function assignedNow(assigned: readonly TopicPartition[]): string {
  if (assigned.length === 0) return ' (nothing is assigned now)';
  const names = assigned.slice(0, 8).map((tp) => `${tp.topic}-${tp.partition}`);
  return ` (assigned now: ${names.join(', ')}${assigned.length > 8 ? `, ... ${assigned.length} in all` : ''})`;
}

/** -1 and -2 are the protocol's "latest" and "earliest" (kafkajs and the Java tools write them). */
function sentinel(value: number | bigint, what: string): string {
  const n = Number(value);
  if (n === -1) return `${what} -1 is the protocol's "latest": give 'latest'`;
  if (n === -2) return `${what} -2 is the protocol's "earliest": give 'earliest'`;
  return `${what} ${shown(value)} is negative`;
}

const START_WORDS = ['earliest', 'latest'];

/**
 * Where a partition starts (StartOffset): an offset (a bigint, or a safe integer), 'earliest',
 * 'latest' or { timestamp }; the fetch state's form of it.
 */
export function startOffset(value: unknown, method: string): bigint | ResetTarget {
  if (value === 'earliest' || value === 'latest') return value;
  if (typeof value === 'bigint' || typeof value === 'number') return offset(value, method);
  if (typeof value === 'string') {
    if (/^\d+$/.test(value.trim())) throw new UsageError(`${method}: the offset ${JSON.stringify(value)} is a string (kafkajs's offsets are): give ${value.trim()}n`);
    const synonyms: Record<string, string> = { beginning: 'earliest', smallest: 'earliest', start: 'earliest', oldest: 'earliest', end: 'latest', largest: 'latest', newest: 'latest' };
    const word = Object.hasOwn(synonyms, value.toLowerCase()) ? synonyms[value.toLowerCase()] : nearest(value, START_WORDS);
    throw new UsageError(`${method}: ${shown(value)} is not a start offset${word ? `: did you mean '${word}'?` : ": give an offset, 'earliest', 'latest' or { timestamp }"}`);
  }
  if (isObject(value) && !Array.isArray(value) && !(value instanceof Date)) {
    if ('timestamp' in value) {
      onlyKnownKeys(value, ['timestamp'], `${method}: ${shown(value)}`);
      return { timestamp: timestamp(value.timestamp, method) };
    }
    if ('offset' in value) throw new UsageError(`${method}: give the offset itself (${shown(value.offset)}), not ${shown(value)}`);
  }
  throw new UsageError(`${method}: ${shown(value)} is not a start offset: give an offset (a bigint), 'earliest', 'latest' or { timestamp: ms }`);
}

/** A record offset: a bigint, or a number that is a safe integer, from 0. */
export function offset(value: unknown, method: string): bigint {
  if (typeof value === 'bigint') {
    if (value < 0n) throw new UsageError(`${method}: ${sentinel(value, 'offset')}`);
    return value;
  }
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new UsageError(`${method}: offset ${value} is not a safe integer: give a bigint`);
    if (value < 0) throw new UsageError(`${method}: ${sentinel(value, 'offset')}`);
    return BigInt(value);
  }
  if (typeof value === 'string' && /^\d+$/.test(value.trim())) throw new UsageError(`${method}: the offset ${JSON.stringify(value)} is a string (kafkajs's offsets are): give ${value.trim()}n`);
  throw new UsageError(`${method}: offset must be a bigint (or a safe integer) from 0, not ${shown(value)}`);
}

/** A time in milliseconds since the epoch (a bigint or a safe integer, from 0). */
export function timestamp(value: unknown, method: string): bigint {
  if (typeof value === 'bigint' && value >= 0n) return value;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return BigInt(value);
  const hint =
    value instanceof Date
      ? ': give date.getTime()'
      : (typeof value === 'number' || typeof value === 'bigint') && (Number(value) === -1 || Number(value) === -2)
        ? ` (the protocol's ${Number(value) === -1 ? 'latest' : 'earliest'}): use ${Number(value) === -1 ? 'endOffsets()' : 'beginningOffsets()'}`
        : typeof value === 'string'
          ? `: give a number (Date.parse(${JSON.stringify(value)}))`
          : '';
  throw new UsageError(`${method}: timestamp ${shown(value)} is not a non-negative integer of milliseconds since the epoch${hint}`);
}

/** subscribe()'s subscription, from what group-manager.ts's Subscription allows. */
export function subscription(value: unknown): Subscription {
  const method = 'subscribe()';
  const shapes = "{ topics: ['a', 'b'] } or { pattern: /^events-.*/ }";
  if (Array.isArray(value) || value instanceof Set) {
    throw new UsageError(`subscribe() takes ${shapes}, not a list: subscribe({ topics: ${shown([...value])} })`);
  }
  if (typeof value === 'string') throw new UsageError(`subscribe() takes ${shapes}, not a string: subscribe({ topics: [${JSON.stringify(value)}] })`);
  if (value instanceof RegExp) throw new UsageError(`subscribe() takes ${shapes}, not a RegExp: subscribe({ pattern: ${String(value)} })`);
  if (!isObject(value)) throw new UsageError(`subscribe() takes ${shapes}, not ${shown(value)}`);
  // kafkajs's { topic }: one topic, or a RegExp.
  if ('topic' in value && !('topics' in value) && !('pattern' in value)) {
    const t = value.topic;
    const instead = t instanceof RegExp ? `{ pattern: ${String(t)} }` : `{ topics: [${shown(t)}] }`;
    throw new UsageError(`subscribe() takes ${instead}, not kafkajs's { topic }`);
  }
  onlyKnownKeys(value, ['topics', 'pattern'], method);
  if ('topics' in value && 'pattern' in value) throw new UsageError(`subscribe() takes topics or a pattern, not both: ${shapes}`);
  if ('pattern' in value) {
    const p = value.pattern;
    if (p instanceof RegExp) return { pattern: p };
    if (typeof p !== 'string' || p === '') throw new UsageError(`subscribe(): pattern must be a RegExp or its source as a non-empty string, not ${shown(p)}`);
    try {
      new RegExp(p);
    } catch (err) {
      throw new UsageError(`subscribe(): pattern ${JSON.stringify(p)} is not a valid regular expression: ${(err as Error).message}`);
    }
    return { pattern: p };
  }
  if (!('topics' in value)) throw new UsageError(`subscribe() needs ${shapes}, not ${shown(value)}`);
  const topics = value.topics;
  if (typeof topics === 'string') throw new UsageError(`subscribe(): topics must be a list: { topics: [${JSON.stringify(topics)}] }`);
  if (topics instanceof RegExp) throw new UsageError(`subscribe(): a pattern goes in { pattern: ${String(topics)} }, not in topics`);
  if (!Array.isArray(topics) && !(topics instanceof Set)) throw new UsageError(`subscribe(): topics must be a list of topic names, not ${shown(topics)}`);
  const names = [...topics] as unknown[];
  if (names.length === 0) throw new UsageError('subscribe(): topics is empty: name at least one topic (unsubscribe() gives every partition up)');
  for (const t of names) {
    // kafkajs mixes names and RegExps in topics; kwire takes one pattern (join alternatives with |).
    if (t instanceof RegExp) throw new UsageError(`subscribe(): ${String(t)} in topics is a pattern: give { pattern: ${String(t)} } (one pattern; join alternatives with |)`);
    topicName(t, 'subscribe(): topics');
  }
  return { topics: [...new Set(names as string[])] };
}

const LISTENER_METHODS = ['onPartitionsRevoked', 'onPartitionsAssigned', 'onPartitionsLost'] as const satisfies readonly (keyof RebalanceListener)[];

/** subscribe()'s rebalance listener: an object whose listener methods, when present, are functions. */
export function rebalanceListener(value: unknown): RebalanceListener | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'function') throw new UsageError(`subscribe(): the listener is an object with ${LISTENER_METHODS.join(', ')} (each optional), not a function`);
  if (!isObject(value)) throw new UsageError(`subscribe(): the listener must be an object with ${LISTENER_METHODS.join(', ')}, not ${shown(value)}`);
  let hasOne = false;
  // Methods of a class instance are on its prototypes: look along the chain.
  for (let o: object | null = value; o !== null && o !== Object.prototype; o = Object.getPrototypeOf(o)) {
    for (const k of Object.getOwnPropertyNames(o)) {
      if ((LISTENER_METHODS as readonly string[]).includes(k)) {
        if (typeof (value as Record<string, unknown>)[k] !== 'function')
          throw new UsageError(`subscribe(): the listener's ${k} must be a function, not ${shown((value as Record<string, unknown>)[k])}`);
        hasOne = true;
        continue;
      }
      const near = k.startsWith('on') ? nearest(k, LISTENER_METHODS) : undefined;
      if (near) throw new UsageError(`subscribe(): the listener's ${k} is not a listener method: did you mean ${near}?`);
    }
  }
  if (!hasOne) throw new UsageError(`subscribe(): the listener has none of ${LISTENER_METHODS.join(', ')}`);
  return value as RebalanceListener;
}

/**
 * assign()'s list: { topic, partition, offset? } each (an array, a Set or any iterable), every
 * partition once, the offsets checked. The objects given are returned. `offsetRequired`: the
 * consumer has nowhere else to start a partition from (auto.offset.reset none, no groupId).
 */
export function assignments(value: unknown, offsetRequired = false): PartitionAssignment[] {
  const method = 'assign()';
  const list = items(value, method, '{ topic, partition, offset? }', "assign([{ topic: 'events', partition: 0, offset: 'earliest' }])");
  const seen = new Set<string>();
  for (const a of list) {
    if (isObject(a) && 'partitions' in a && !('partition' in a)) {
      const each = (Array.isArray(a.partitions) ? a.partitions : [0]).map((p: unknown) => ({ topic: a.topic, partition: p }));
      throw new UsageError(`assign() takes one entry per partition, { topic, partition, offset? }, not ${shown(a)}: write ${shown(each)}`);
    }
    const tp = topicPartition(a, method);
    onlyKnownKeys(tp, ['topic', 'partition', 'offset'], `assign(): ${shown(a)}`);
    if (seen.has(key(tp))) throw new UsageError(`assign(): ${tp.topic}-${tp.partition} is given twice`);
    seen.add(key(tp));
    const given = (tp as { offset?: unknown }).offset;
    if (given !== undefined) startOffset(given, `assign(): ${tp.topic}-${tp.partition}`);
    else if (offsetRequired) throw new UsageError(`assign(): ${tp.topic}-${tp.partition} has no offset and autoOffsetReset (auto.offset.reset) is none: give { topic, partition, offset }`);
  }
  return list as PartitionAssignment[];
}

/**
 * commitSync()'s offsets: undefined (what the application finished), a list of { topic,
 * partition, offset, leaderEpoch?, metadata? }, or a Map from { topic, partition } to an offset or
 * { offset, leaderEpoch?, metadata? } (Java's Map<TopicPartition, OffsetAndMetadata>). The offset
 * is the next one to read (the last processed + 1). Numbers become bigints.
 */
export function offsetsToCommit(value: unknown, method = 'commitSync()'): OffsetToCommit[] | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'function') throw new UsageError(`${method}: the offsets are ${shown(value)}: the callback is commitAsync()'s second argument, commitAsync(undefined, callback)`);
  const out: OffsetToCommit[] = [];
  const seen = new Set<string>();
  const add = (tp: TopicPartition, o: unknown, where: string) => {
    if (seen.has(key(tp))) throw new UsageError(`${method}: ${tp.topic}-${tp.partition} is given twice`);
    seen.add(key(tp));
    let entry: OffsetToCommit;
    if (isObject(o) && !Array.isArray(o)) {
      onlyKnownKeys(o, ['topic', 'partition', 'offset', 'leaderEpoch', 'metadata'], where);
      if (!('offset' in o)) throw new UsageError(`${where} has no offset: give the next offset to read (the last processed + 1)`);
      entry = { topic: tp.topic, partition: tp.partition, offset: offset(o.offset, where) };
      if (o.leaderEpoch !== undefined) {
        if (typeof o.leaderEpoch !== 'number' || !Number.isInteger(o.leaderEpoch) || o.leaderEpoch < -1)
          throw new UsageError(`${where}: leaderEpoch must be an integer from -1, not ${shown(o.leaderEpoch)}`);
        entry.leaderEpoch = o.leaderEpoch;
      }
      if (o.metadata !== undefined) {
        if (o.metadata !== null && typeof o.metadata !== 'string') throw new UsageError(`${where}: metadata must be a string or null, not ${shown(o.metadata)}`);
        entry.metadata = o.metadata;
      }
    } else {
      entry = { topic: tp.topic, partition: tp.partition, offset: offset(o, where) };
    }
    out.push(entry);
  };
  if (value instanceof Map) {
    for (const [tp, o] of value) add(topicPartition(tp, `${method} (a Map's key)`), o, `${method}: ${shown(tp)}`);
    return out;
  }
  for (const o of items(value, method, '{ topic, partition, offset }', "commitSync([{ topic: 'events', partition: 0, offset: 43n }])")) {
    add(topicPartition(o, method), o, `${method}: ${shown(o)}`);
  }
  return out;
}

/**
 * offsetsForTimes()'s input: a Map from { topic, partition } to a time, or a list of { topic,
 * partition, timestamp }. `tp` is the object given (the Map's key, or the list's item), to key the
 * result by.
 */
export function timesToLookUp(value: unknown, method = 'offsetsForTimes()'): { tp: TopicPartition; timestamp: bigint }[] {
  const out: { tp: TopicPartition; timestamp: bigint }[] = [];
  if (value instanceof Map) {
    for (const [tp, t] of value) out.push({ tp: topicPartition(tp, `${method} (a Map's key)`), timestamp: timestamp(t, `${method}: ${shown(tp)}`) });
    return out;
  }
  const example = "offsetsForTimes([{ topic: 'events', partition: 0, timestamp: Date.now() - 3_600_000 }]) or a Map from { topic, partition } to the time";
  if (typeof value === 'string' || !isIterable(value))
    throw new UsageError(`${method} takes a Map from { topic, partition } to a time, or a list of { topic, partition, timestamp }, not ${shown(value)}: ${example}`);
  for (const item of value) {
    const tp = topicPartition(item, method);
    onlyKnownKeys(tp, ['topic', 'partition', 'timestamp'], `${method}: ${shown(item)}`);
    if (!('timestamp' in tp)) throw new UsageError(`${method}: ${shown(item)} has no timestamp: give { topic, partition, timestamp }`);
    out.push({ tp, timestamp: timestamp((tp as { timestamp?: unknown }).timestamp, `${method}: ${shown(item)}`) });
  }
  return out;
}

/** The `{ timeoutMs }` options of the look-ups (offsetsForTimes, beginningOffsets, endOffsets). */
export function timeoutOption(value: unknown, method: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'number') throw new UsageError(`${method}: give the timeout as { timeoutMs: ${value} }`);
  if (!isObject(value) || Array.isArray(value)) throw new UsageError(`${method}: the options must be { timeoutMs }, not ${shown(value)}`);
  onlyKnownKeys(value, ['timeoutMs'], method);
  const t = value.timeoutMs;
  if (t === undefined) return undefined;
  if (typeof t !== 'number' || !Number.isSafeInteger(t) || t < 0) throw new UsageError(`${method}: timeoutMs must be an integer number of milliseconds from 0, not ${shown(t)}`);
  return t;
}

/** streams()'s spec: { topic: N } (or a Map), N an integer from 1 to 1024. */
export function streamCounts(value: unknown): [topic: string, count: number][] {
  const method = 'streams()';
  let entries: [unknown, unknown][];
  if (value instanceof Map) entries = [...value];
  else if (isObject(value) && !Array.isArray(value) && !isIterable(value)) entries = Object.entries(value);
  else if (typeof value === 'string') throw new UsageError(`streams() takes { topic: N }, not a topic name: streams({ ${JSON.stringify(value)}: 3 })`);
  else throw new UsageError(`streams() takes { topic: N } (N streams for the topic's partitions), not ${shown(value)}: const { events: [a, b] } = consumer.streams({ events: 2 })`);
  if (entries.length === 0) throw new UsageError('streams() names no topic: give { topic: N }');
  return entries.map(([topic, n]) => {
    const name = topicName(topic, method);
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 1024) throw new UsageError(`streams(): ${name} wants ${shown(n)} streams: give an integer from 1 to 1024`);
    return [name, n];
  });
}

// Every key of RunOptions, and only those: the build fails here when one is added to RunOptions
// without its check below.
const RUN_OPTIONS = { eachBatch: true, eachMessage: true, eachBatchAutoResolve: true, onFailure: true, maxConcurrency: true, ordering: true, onSkip: true, worker: true } as const satisfies Record<
  keyof RunOptions,
  true
>;
const RUN_KEYS = Object.keys(RUN_OPTIONS);

/**
 * run()'s options: exactly one of eachBatch and eachMessage, as a function; eachBatchAutoResolve a
 * boolean (with eachBatch); onFailure 'retry', 'stop' or a function. kafkajs's options that kwire
 * has elsewhere (autoCommit, partitionsConsumedConcurrently, ...) name the kwire way.
 */
export function checkRunOptions(options: unknown): void {
  const example = 'run({ eachMessage: async ({ topic, partition, message }) => { ... } })';
  if (typeof options === 'function') throw new UsageError(`run() takes { eachMessage } or { eachBatch }, not a function: run({ eachMessage: yourFunction })`);
  if (!isObject(options) || Array.isArray(options)) throw new UsageError(`run() takes { eachMessage } or { eachBatch }, not ${shown(options)}: ${example}`);
  onlyKnownKeys(options, RUN_KEYS, 'run()');
  const { eachBatch, eachMessage, eachBatchAutoResolve, onFailure, maxConcurrency, ordering, onSkip, worker } = options as Record<string, unknown>;
  if (eachBatch === undefined && eachMessage === undefined && worker === undefined) throw new UsageError(`run() needs exactly one of eachBatch and eachMessage: ${example}`);
  if (eachBatch !== undefined && eachMessage !== undefined) throw new UsageError('run() needs exactly one of eachBatch and eachMessage, not both');
  if (worker !== undefined) {
    if (eachBatch !== undefined) throw new UsageError("run(): worker is for eachMessage's work: give run({ worker: { module, threads } }) without eachBatch");
    if (eachMessage !== undefined) throw new UsageError("run(): worker replaces eachMessage (the worker module's export is the handler): give one of them");
    if (!isObject(worker) || (typeof worker.module !== 'string' && !(worker.module instanceof URL)))
      throw new UsageError(`run(): worker must be { module: a path or file: URL of a module exporting the handler, threads?: N }, not ${shown(worker)}`);
    if (worker.threads !== undefined && (typeof worker.threads !== 'number' || !Number.isInteger(worker.threads) || worker.threads < 1 || worker.threads > 256))
      throw new UsageError(`run(): worker.threads must be an integer from 1 to 256, not ${shown(worker.threads)}`);
    onlyKnownKeys(worker, ['module', 'threads'], 'run({ worker })');
  }
  if (eachBatch !== undefined && typeof eachBatch !== 'function') throw new UsageError(`run(): eachBatch must be a function, not ${shown(eachBatch)}`);
  if (eachMessage !== undefined && typeof eachMessage !== 'function') throw new UsageError(`run(): eachMessage must be a function, not ${shown(eachMessage)}`);
  if (eachBatchAutoResolve !== undefined) {
    if (typeof eachBatchAutoResolve !== 'boolean') throw new UsageError(`run(): eachBatchAutoResolve must be true or false, not ${shown(eachBatchAutoResolve)}`);
    if (eachBatch === undefined) throw new UsageError('run(): eachBatchAutoResolve is for eachBatch (each record of eachMessage is finished when its callback resolves)');
  }
  if (onFailure !== undefined && onFailure !== 'retry' && onFailure !== 'stop' && onFailure !== 'skip' && typeof onFailure !== 'function') {
    const kafkajs: Record<string, string> = { restart: 'retry', fail: 'stop', throw: 'stop', ignore: 'skip', deadLetter: 'skip' };
    const near = typeof onFailure !== 'string' ? undefined : Object.hasOwn(kafkajs, onFailure) ? kafkajs[onFailure] : nearest(onFailure, ['retry', 'stop', 'skip']);
    throw new UsageError(
      `run(): onFailure must be 'retry', 'stop', 'skip' or a function (error, failure) => 'retry' | 'stop' | 'skip', not ${shown(onFailure)}${near ? `: did you mean '${near}'?` : ''}`,
    );
  }
  if (onFailure === 'skip' && eachBatch !== undefined)
    throw new UsageError("run(): onFailure 'skip' is for eachMessage (a record is set aside); with eachBatch, mark what the batch finished and throw, or use 'retry' or 'stop'");
  if (onSkip !== undefined && typeof onSkip !== 'function') throw new UsageError(`run(): onSkip must be a function (record, error) => ..., not ${shown(onSkip)}`);
  if (onSkip !== undefined && eachBatch !== undefined) throw new UsageError('run(): onSkip is for eachMessage');
  if (maxConcurrency !== undefined && (typeof maxConcurrency !== 'number' || !Number.isInteger(maxConcurrency) || maxConcurrency < 1 || maxConcurrency > 1_000_000))
    throw new UsageError(`run(): maxConcurrency must be an integer from 1 to 1000000 (records in flight at once), not ${shown(maxConcurrency)}`);
  if (ordering !== undefined) {
    if (ordering !== 'key' && ordering !== 'partition' && ordering !== 'unordered') {
      const near = typeof ordering === 'string' ? nearest(ordering, ['key', 'partition', 'unordered']) : undefined;
      throw new UsageError(`run(): ordering must be 'key', 'partition' or 'unordered', not ${shown(ordering)}${near ? `: did you mean '${near}'?` : ''}`);
    }
    if (eachBatch !== undefined) throw new UsageError("run(): ordering is for eachMessage (eachBatch handles a partition's batches one at a time, in order)");
  }
}

/** partitionsFor()'s topic: its name. */
export function topicArgument(value: unknown, method: string): string {
  if (isObject(value) && typeof value.topic === 'string') throw new UsageError(`${method} takes the topic's name, ${method.replace('()', '')}(${JSON.stringify(value.topic)}), not ${shown(value)}`);
  return topicName(value, method);
}

/** seek()'s arguments: the partition and where it goes next. */
export function seekArguments(tp: unknown, to: unknown): { tp: TopicPartition; target: bigint | ResetTarget } {
  if (to === undefined && isObject(tp) && 'offset' in tp) {
    const o = typeof tp.offset === 'string' && /^\d+$/.test(tp.offset) ? `${tp.offset}n` : shown(tp.offset);
    throw new UsageError(`seek() takes (partition, offset): seek({ topic, partition }, ${o}), not kafkajs's seek({ topic, partition, offset })`);
  }
  const checked = topicPartition(tp, 'seek()');
  if (to === undefined) throw new UsageError("seek() needs where to go: seek({ topic, partition }, offset | 'earliest' | 'latest' | { timestamp })");
  return { tp: checked, target: startOffset(to, `seek(): ${checked.topic}-${checked.partition}`) };
}
