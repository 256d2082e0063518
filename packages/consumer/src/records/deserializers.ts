// How a partition's records are read: the deserializers of keys and values, and the context every
// record of one partition shares (who the records belong to and when their deserializers run).
import type { RecordHeader } from '@kwire/protocol';
import type { Deserializer } from '../config.js';

type Deserialize = (data: Buffer | null, topic: string, partition: number, part: 'key' | 'value', headers: readonly RecordHeader[]) => unknown;

export function deserializerFor(d: Deserializer): Deserialize {
  if (d === 'buffer') return (data) => data;
  if (d === 'string') return (data) => (data === null ? null : data.toString('utf8'));
  if (d === 'json') return (data) => (data === null ? null : JSON.parse(data.toString('utf8')));
  return (data, topic, partition, part, headers) => d(data, { topic, partition, part, headers });
}

/** Whether a deserializer runs before delivery (it can fail, or be async) rather than when read. */
export function deserializesEarly(d: Deserializer): boolean {
  return d !== 'buffer' && d !== 'string';
}

/** Shared by every record of one partition's batches: who they belong to and how to read them. */
export interface RecordContext {
  readonly topic: string;
  readonly partition: number;
  readonly key: Deserialize;
  readonly value: Deserialize;
  readonly keyIsBuffer: boolean;
  readonly valueIsBuffer: boolean;
  readonly valueIsString: boolean;
  /** Keys, values (or both) are deserialized before delivery: see decode(). */
  readonly decodeKey: boolean;
  readonly decodeValue: boolean;
}

/**
 * The context of one topic's (or partition's) records read with these deserializers. `early`:
 * whether a deserializer that can fail or be async runs before delivery (the fetcher's batches,
 * so that a failure stops delivery at its record) or when the value is read (the share consumer).
 */
export function recordContext(topic: string, partition: number, key: Deserializer, value: Deserializer, early: boolean): RecordContext {
  return {
    topic,
    partition,
    key: deserializerFor(key),
    value: deserializerFor(value),
    keyIsBuffer: key === 'buffer',
    valueIsBuffer: value === 'buffer',
    valueIsString: value === 'string',
    decodeKey: early && deserializesEarly(key),
    decodeValue: early && deserializesEarly(value),
  };
}
