// kafkajs's data shapes made from kwire's batches: messages with string offsets and timestamps,
// headers as an object of Buffers (an array for a repeated key), and kafkajs's Batch with its
// offset helpers.
//
// kafkajs's Buffers are the application's to keep. The facade's kwire consumer runs with
// recordBuffers 'owned' (config.ts): its answers are in memory that is never reused, so keys,
// values and header values are views of it, made with the batch's own view maker (cheaper than
// Buffer's subarray), and live as long as the application keeps them.
import type { BatchCursor, ConsumerBatch } from '@kwire/consumer';
import type { Batch as KafkaJSBatch, IHeaders, KafkaMessage } from 'kafkajs-upstream';

/** The fields of a record batch kafkajs hands with each of its messages (`message.batchContext`). */
export interface BatchContext {
  firstOffset: string;
  firstTimestamp: string;
  partitionLeaderEpoch: number;
  inTransaction: boolean;
  isControlBatch: boolean;
  lastOffsetDelta: number;
  producerId: string;
  producerEpoch: number;
  firstSequence: number;
  maxTimestamp: string;
  timestampType: number;
  magicByte: number;
}

/** A message as kafkajs 2.2.4 hands it (a record of a v2 record batch). */
export interface Message {
  magicByte: number;
  attributes: number;
  timestamp: string;
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  headers: IHeaders;
  isControlRecord: boolean;
  batchContext: BatchContext;
}

// The parts of kwire's wire batch read here (public fields of @kwire/protocol's RecordBatch).
interface WireBatch {
  readonly baseOffset: bigint;
  readonly baseTimestampBigInt: bigint;
  readonly maxTimestampBigInt: bigint;
  readonly producerId: bigint;
  readonly partitionLeaderEpoch: number;
  readonly magic: number;
  readonly attributes: number;
  readonly lastOffsetDelta: number;
  readonly producerEpoch: number;
  readonly baseSequence: number;
  readonly isTransactional: boolean;
  readonly isControl: boolean;
  readonly timestampType: string;
  viewOf(start: number, length: number): Buffer;
}

function contextOf(w: WireBatch): BatchContext {
  return {
    firstOffset: w.baseOffset.toString(),
    firstTimestamp: w.baseTimestampBigInt.toString(),
    partitionLeaderEpoch: w.partitionLeaderEpoch,
    inTransaction: w.isTransactional,
    isControlBatch: w.isControl,
    lastOffsetDelta: w.lastOffsetDelta,
    producerId: w.producerId.toString(),
    producerEpoch: w.producerEpoch,
    firstSequence: w.baseSequence,
    maxTimestamp: w.maxTimestampBigInt.toString(),
    timestampType: w.timestampType === 'LogAppendTime' ? 1 : 0,
    magicByte: w.magic,
  };
}

/**
 * Adds a header as kafkajs does: the first value as is, a repeated key's values as an array. Like
 * kafkajs (which builds the object with `{ ...obj, [key]: ... }`), the lookup sees Object.prototype's
 * members, so a first "toString" header is [that function, value] there and here; and a
 * "__proto__" header is an own property, never the object's prototype.
 */
export function addHeader(headers: IHeaders, key: string, value: Buffer | null): void {
  const known = headers[key];
  if (Array.isArray(known) && Object.hasOwn(headers, key)) known.push(value as Buffer);
  else {
    const next = known === undefined ? (value as Buffer) : [known as Buffer, value as Buffer];
    if (key === '__proto__') Object.defineProperty(headers, key, { value: next, writable: true, enumerable: true, configurable: true });
    else headers[key] = next;
  }
}

/** Headers in kwire's form (a list, in order) as kafkajs's object. */
export function headersObject(list: readonly { key: string; value: Buffer | null }[]): IHeaders {
  const headers: IHeaders = {};
  for (const h of list) addHeader(headers, h.key, h.value);
  return headers;
}

let sharedCursor: BatchCursor | undefined;

/** '000' to '999': the last three digits of an offset's decimal string. */
const LAST_DIGITS: readonly string[] = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));

/**
 * The batch's records as kafkajs's messages; with `withOffsets`, `offsets` too (the same records'
 * offsets as numbers, NaN past 2^53) for marking them processed one by one without parsing strings
 * (eachMessage; eachBatch needs none).
 */
export function toMessages(batch: ConsumerBatch, withOffsets: boolean): { messages: Message[]; offsets: number[] | null } {
  const messages: Message[] = new Array(batch.count);
  const offsets: number[] | null = withOffsets ? new Array(batch.count) : null;
  const cursor = batch.cursor(sharedCursor);
  sharedCursor = undefined; // taken: a callback reading another batch meanwhile gets a cursor of its own
  let wire: WireBatch | null = null;
  let context: BatchContext | undefined;
  // An offset's string is its thousands' string (made once per thousand offsets) and its last
  // three digits from a table: half of what String() costs per record.
  let thousandsFrom = 0;
  let thousandsTo = -1;
  let thousandsString = '';
  // Producers stamp many records with the same millisecond: its string is made once.
  let lastTimestamp = Number.NaN;
  let lastTimestampString = '';
  let n = 0;
  try {
    for (let r = cursor.next(); r !== null; r = cursor.next()) {
      const w = r.batch as unknown as WireBatch;
      if (w !== wire) {
        wire = w;
        context = contextOf(w);
      }
      const headers: IHeaders = {};
      for (let h = 0; h < r.headerCount; h++) {
        r.header(h);
        addHeader(headers, r.headerKeyString(), r.headerValueLength < 0 ? null : w.viewOf(r.headerValueOffset, r.headerValueLength));
      }
      const offsetNumber = r.offsetNumber;
      let offset: string;
      if (offsetNumber >= 1000) {
        if (offsetNumber >= thousandsTo || offsetNumber < thousandsFrom) {
          const t = Math.floor(offsetNumber / 1000);
          thousandsFrom = t * 1000;
          thousandsTo = thousandsFrom + 1000;
          thousandsString = String(t);
        }
        offset = thousandsString + LAST_DIGITS[offsetNumber - thousandsFrom];
      } else offset = Number.isNaN(offsetNumber) ? r.offset.toString() : String(offsetNumber);
      const ts = r.timestamp;
      if (ts !== lastTimestamp) {
        lastTimestamp = ts;
        lastTimestampString = Number.isNaN(ts) ? r.timestampBigInt.toString() : String(ts);
      }
      messages[n] = {
        magicByte: w.magic,
        attributes: r.attributes,
        timestamp: lastTimestampString,
        offset,
        key: r.keyLength < 0 ? null : w.viewOf(r.keyOffset, r.keyLength),
        value: r.valueLength < 0 ? null : w.viewOf(r.valueOffset, r.valueLength),
        headers,
        isControlRecord: false,
        batchContext: context!,
      };
      if (offsets !== null) offsets[n] = offsetNumber;
      n++;
    }
  } finally {
    sharedCursor = cursor;
  }
  messages.length = n;
  if (offsets !== null) offsets.length = n;
  return { messages, offsets };
}

/** kafkajs's Batch: one partition's messages from one fetch, with its offset helpers. */
export class Batch implements KafkaJSBatch {
  readonly topic: string;
  readonly partition: number;
  readonly highWatermark: string;
  readonly messages: KafkaMessage[];
  /** The offset the fetch asked for (kafkajs's fetchedOffset): the batch's first offset here. */
  readonly fetchedOffset: string;

  constructor(topic: string, partition: number, highWatermark: string, messages: Message[], fetchedOffset?: string) {
    this.topic = topic;
    this.partition = partition;
    this.highWatermark = highWatermark;
    this.messages = messages as unknown as KafkaMessage[];
    this.fetchedOffset = fetchedOffset ?? messages[0]?.offset ?? highWatermark;
  }

  isEmpty(): boolean {
    return this.messages.length === 0;
  }

  firstOffset(): string | null {
    return this.isEmpty() ? null : this.messages[0]!.offset;
  }

  /** The last message's offset; for an empty batch, the high watermark - 1. */
  lastOffset(): string {
    if (this.isEmpty()) return (BigInt(this.highWatermark) - 1n).toString();
    return this.messages[this.messages.length - 1]!.offset;
  }

  /** Messages after the batch's last one: highWatermark - 1 - lastOffset. */
  offsetLag(): string {
    return (BigInt(this.highWatermark) - 1n - BigInt(this.lastOffset())).toString();
  }

  /** Messages from the batch's first one: highWatermark - 1 - firstOffset ('0' when empty). */
  offsetLagLow(): string {
    if (this.isEmpty()) return '0';
    return (BigInt(this.highWatermark) - 1n - BigInt(this.firstOffset()!)).toString();
  }
}
