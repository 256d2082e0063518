// Decoded Kafka values as readable JSON: int64 as a number when it is a safe integer (a string
// otherwise, so nothing is rounded), bytes as text when they are printable UTF-8 and as
// {"hex": ...} when not, tagged fields a decoder did not know under "_unknownTaggedFields".
import { unknownTaggedFields } from '@kwire/protocol';

/** Printable UTF-8: no control characters other than tab and newlines, and no replacement characters. */
function isText(b: Buffer): boolean {
  if (b.length === 0) return true;
  const s = b.toString('utf8');
  if (s.includes('\uFFFD')) return false;
  return !/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/.test(s);
}

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

export function bytesJson(b: Uint8Array | null): Json {
  if (b === null) return null;
  const buf = Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  return isText(buf) ? buf.toString('utf8') : { hex: buf.toString('hex') };
}

export function int64Json(v: bigint): Json {
  return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString();
}

/**
 * Converts a decoded body to JSON values. `bytesField(path, key, buffer)` may replace a bytes
 * field by something decoded (record batches, the consumer protocol); undefined keeps the bytes.
 */
export function toJson(v: unknown, bytesField?: (key: string, b: Buffer, parent: Record<string, unknown>) => Json | undefined, key = '', parent?: Record<string, unknown>): Json {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint') return int64Json(v);
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'string') return v;
  if (Buffer.isBuffer(v) || v instanceof Uint8Array) {
    const buf = Buffer.isBuffer(v) ? v : Buffer.from(v);
    const replaced = bytesField && parent ? bytesField(key, buf, parent) : undefined;
    return replaced === undefined ? bytesJson(buf) : replaced;
  }
  if (Array.isArray(v)) return v.map((e) => toJson(e, bytesField, key, parent));
  if (typeof v === 'object') {
    const o = v as Record<string | symbol, unknown>;
    const out: { [k: string]: Json } = {};
    for (const k of Object.keys(o)) out[k] = toJson(o[k], bytesField, k, o as Record<string, unknown>);
    const unknown = o[unknownTaggedFields] as { tag: number; data: Buffer }[] | undefined;
    if (unknown) out._unknownTaggedFields = unknown.map((t) => ({ tag: t.tag, hex: t.data.toString('hex') }));
    return out;
  }
  return String(v);
}
