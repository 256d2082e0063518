// How records print: the JSON shape (toJSON(), and `kwire consume --format json`) and what
// util.inspect / console.log show. One rule for both: bytes are UTF-8 text when they are valid
// UTF-8, else base64 (JSON) or hex (inspect); a deserialized key or value is shown as itself.
import { isUtf8 } from 'node:buffer';
import { inspect, type InspectOptionsStylized } from 'node:util';
import type { RecordHeader } from '@kwire/protocol';

/** Bytes in JSON: the text when they are valid UTF-8, else `{ base64 }`; null stays null. */
export type JsonBytes = string | { base64: string } | null;

/** The JSON of a record (ConsumerRecord, KeptRecord, ShareRecord): what JSON.stringify(record) writes. */
export interface RecordJson {
  topic: string;
  partition: number;
  /** Decimal: JSON has no 64-bit integers. */
  offset: string;
  /** Milliseconds since the epoch; absent once the record's batch is released. */
  timestamp?: number;
  /** Bytes by the JsonBytes rule; a deserialized key or value as itself. Absent when released (and not deserialized). */
  key?: unknown;
  value?: unknown;
  headers?: { key: string; value: JsonBytes }[];
  leaderEpoch: number;
  /** Share records: how many times the broker has handed the record out. */
  deliveryCount?: number;
  /** The record's batch was released: its bytes are gone (keep() what must outlive it). */
  released?: true;
}

export function bytesToJson(b: Uint8Array | null): JsonBytes {
  if (b === null) return null;
  const buf = Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  return isUtf8(buf) ? buf.toString('utf8') : { base64: buf.toString('base64') };
}

/** A key or value in JSON: bytes by bytesToJson, anything a deserializer made as itself. */
export function valueToJson(v: unknown): unknown {
  return v instanceof Uint8Array ? bytesToJson(v) : v;
}

export function headersToJson(headers: readonly RecordHeader[]): { key: string; value: JsonBytes }[] {
  return headers.map((h) => ({ key: h.key, value: bytesToJson(h.value) }));
}

/** Text longer than this (in characters) is cut when inspected; bytes that are not text show this many. */
const TEXT_SHOWN = 100;
const HEX_SHOWN = 32;

/** Something inspect shows as the given text (unquoted): a value cut short, a marker. */
function shown(render: (options: InspectOptionsStylized) => string): object {
  return { [inspect.custom]: (_depth: number, options: InspectOptionsStylized) => render(options) };
}

/** A marker in inspect's output: `[released]`, `[cannot deserialize: ...]`. */
export function marker(text: string): object {
  return shown((o) => o.stylize(`[${text}]`, 'special'));
}

/**
 * A key, value or header value as inspect shows it: bytes as `<Buffer 'text'>` when they are valid
 * UTF-8 (else hex, as Node shows a Buffer), long ones cut with their size in bytes; a deserialized
 * value as itself (a long string cut too).
 */
export function displayValue(v: unknown): unknown {
  if (v instanceof Uint8Array) {
    const buf = Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength);
    const type = Buffer.isBuffer(v) ? 'Buffer' : v.constructor.name;
    if (isUtf8(buf)) {
      const { head, cut } = cutText(buf.toString('utf8'));
      return shown((o) => `${o.stylize(`<${type}`, 'special')} ${inspect(head, o)}${o.stylize(`${cut ? `… (${buf.length} bytes)` : ''}>`, 'special')}`);
    }
    return shown((o) => {
      const hex = [...buf.subarray(0, HEX_SHOWN)].map((x) => x.toString(16).padStart(2, '0')).join(' ');
      return o.stylize(`<${type} ${hex}${buf.length > HEX_SHOWN ? ` … (${buf.length} bytes)` : ''}>`, 'special');
    });
  }
  if (typeof v === 'string') {
    const { head, cut } = cutText(v);
    if (!cut) return v;
    return shown((o) => `${inspect(head, o)}${o.stylize(`… (${Buffer.byteLength(v)} bytes)`, 'special')}`);
  }
  return v;
}

/** The first TEXT_SHOWN characters of a text (not through a surrogate pair), and whether that cut it. */
function cutText(text: string): { head: string; cut: boolean } {
  if (text.length <= TEXT_SHOWN) return { head: text, cut: false };
  const end = /[\ud800-\udbff]/.test(text[TEXT_SHOWN - 1]!) ? TEXT_SHOWN - 1 : TEXT_SHOWN;
  return { head: text.slice(0, end), cut: true };
}

/**
 * Headers as inspect shows them: each `{ key, value }` on its own, whatever the depth (a record's
 * headers are part of what it is, not a nested object to elide).
 */
export function displayHeaders(headers: readonly RecordHeader[]): unknown[] {
  return headers.map((h) => {
    const value = displayValue(h.value);
    return shown((o) => `{ key: ${inspect(h.key, o)}, value: ${inspect(value, o)} }`);
  });
}

/** A timestamp as inspect shows it: the number, and the time it is when it is one. */
export function displayTimestamp(t: number): unknown {
  if (!(Number.isFinite(t) && t >= 0 && t <= 8.64e15)) return t;
  return shown((o) => `${o.stylize(String(t), 'number')} ${o.stylize(`(${new Date(t).toISOString()})`, 'special')}`);
}

/**
 * What util.inspect shows for an object printed as `fields` under its class name: at the depth
 * the object itself is at (the fields take its place), `[Name summary]` when below the depth.
 */
export function inspectAs(name: string, summary: string, fields: Record<string, unknown>, depth: number | null, options: InspectOptionsStylized): string {
  if (depth !== null && depth < 0) return options.stylize(`[${name} ${summary}]`, 'special');
  return `${name} ${inspect(fields, { ...options, depth })}`;
}

/** The fields of a kept record (records.ts's KeptRecord), as printable() needs them. */
interface KeptFields {
  readonly topic: string;
  readonly partition: number;
  readonly offset: bigint;
  readonly timestamp: number;
  readonly key: unknown;
  readonly value: unknown;
  readonly headers: readonly RecordHeader[];
  readonly leaderEpoch: number;
}

/**
 * A kept record (ConsumerRecord.keep()) made to print as a record does: toJSON() and util.inspect,
 * as properties that are not enumerable, so that the object stays a plain one to spread, compare
 * and iterate.
 */
export function printable<T extends KeptFields>(record: T): T {
  return Object.defineProperties(record, {
    toJSON: { value: keptToJson, configurable: true, writable: true },
    [inspect.custom]: { value: inspectKept, configurable: true, writable: true },
  });
}

function keptToJson(this: KeptFields): RecordJson {
  return {
    topic: this.topic,
    partition: this.partition,
    offset: this.offset.toString(),
    timestamp: this.timestamp,
    key: valueToJson(this.key),
    value: valueToJson(this.value),
    headers: headersToJson(this.headers),
    leaderEpoch: this.leaderEpoch,
  };
}

function inspectKept(this: KeptFields, depth: number | null, options: InspectOptionsStylized): string {
  const fields = {
    topic: this.topic,
    partition: this.partition,
    offset: this.offset,
    timestamp: displayTimestamp(this.timestamp),
    key: displayValue(this.key),
    value: displayValue(this.value),
    headers: displayHeaders(this.headers),
    leaderEpoch: this.leaderEpoch,
  };
  return inspectAs('KeptRecord', `${this.topic}-${this.partition}@${this.offset}`, fields, depth, options);
}
