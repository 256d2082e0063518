import { KafkaProtocolError, type ProtocolErrorReason } from '../errors.js';

/*
 * One v2 record's bytes, decoded into numbers that locate its parts (see record-batch.ts for the
 * batch around it):
 *
 *   length varint · attributes int8 · timestampDelta varlong · offsetDelta varint ·
 *   keyLength varint (-1 null) · key · valueLength varint (-1 null) · value ·
 *   headerCount varint · [headerKeyLength varint · headerKey · headerValueLength varint (-1 null) · headerValue]
 *
 * Apart from record-batch.ts because it needs nothing of a batch: it reads a Buffer and writes
 * RecordFields, which RecordPlace (a record and its batch) extends.
 */

/** The fewest bytes one record can take: length, attributes, timestampDelta, offsetDelta, key, value, headerCount. */
export const MIN_RECORD_SIZE = 7;

/** What readRecord writes about one record: where its parts are in the decoded bytes (RecordPlace without its batch). */
export interface RecordFields {
  position: number;
  attributes: number;
  timestampDelta: number;
  offsetDelta: number;
  keyOffset: number;
  keyLength: number;
  valueOffset: number;
  valueLength: number;
  headersOffset: number;
  headerCount: number;
}

/* ---------------------------------------------------------------------------------------------
 * Record decoding: the hot loop. Varints are read with plain byte arithmetic; one- and two-byte
 * values take the inline fast path (a 100 B record's length and value length, and offset and
 * timestamp deltas past 63, are two bytes: in a call each, they were 6.6% of the 100 B profile).
 * The read position lives in a module variable so the readers return plain numbers without
 * allocating; everything here is synchronous, so nothing else can move it in between.
 * ------------------------------------------------------------------------------------------- */

let at = 0;

function recordError(reason: ProtocolErrorReason, detail: string, offset: number, index: number, field: string, header: number): KafkaProtocolError {
  const path = header < 0 ? `records/${index}/${field}` : `records/${index}/headers/${header}/${field}`;
  return new KafkaProtocolError(detail, { reason, offset, path });
}

/** What shortVarint() returns for a varint of more than two bytes (or none before `end`). */
const NOT_SHORT = 0x7fffffff;

/**
 * A zig-zag varint of one or two bytes at `at`, not past `end` (the same for int32 and int64: two
 * bytes hold 14 bits), or NOT_SHORT for the slow path to read (and check) instead.
 */
function shortVarint(buf: Buffer, end: number): number {
  const p = at;
  if (p < end) {
    const b = buf[p]!;
    if (b < 0x80) {
      at = p + 1;
      return (b >>> 1) ^ -(b & 1);
    }
    if (p + 1 < end) {
      const c = buf[p + 1]!;
      if (c < 0x80) {
        at = p + 2;
        const u = (b & 0x7f) | (c << 7);
        return (u >>> 1) ^ -(u & 1);
      }
    }
  }
  return NOT_SHORT;
}

/** Zig-zag varint (int32) at `at`, not past `end`. */
function varint(buf: Buffer, end: number, index: number, field: string, header: number): number {
  const v = shortVarint(buf, end);
  return v !== NOT_SHORT ? v : varintSlow(buf, end, index, field, header);
}

function varintSlow(buf: Buffer, end: number, index: number, field: string, header: number): number {
  const start = at;
  let p = start;
  let u = 0;
  for (let shift = 0; ; shift += 7) {
    if (p >= end) throw recordError('truncated', `${field} varint runs past the end of the record`, start, index, field, header);
    const b = buf[p++]!;
    if (shift === 28) {
      // The 5th byte may only carry the top 4 bits: anything more is a 6th byte or bits past 32.
      if (b > 0x0f) throw recordError('varint-too-long', `${field} varint longer than 5 bytes`, start, index, field, header);
      u |= b << 28;
      break;
    }
    u |= (b & 0x7f) << shift;
    if (b < 0x80) break;
  }
  at = p;
  return (u >>> 1) ^ -(u & 1);
}

/**
 * Zig-zag varlong (int64) at `at` as a number: exact when the value is a safe integer, NaN when it
 * is not (the caller then keeps the bytes' position and reads a bigint on demand).
 */
function varlong(buf: Buffer, end: number, index: number, field: string): number {
  const v = shortVarint(buf, end);
  return v !== NOT_SHORT ? v : varlongSlow(buf, end, index, field);
}

function varlongSlow(buf: Buffer, end: number, index: number, field: string): number {
  const start = at;
  let p = start;
  // Up to 4 bytes (28 bits) in int32 arithmetic: the usual case (deltas under ~1.5 days) then
  // returns a small integer, which V8 keeps unboxed, rather than a double it would allocate.
  let u = 0;
  for (let shift = 0; shift < 28; shift += 7) {
    if (p >= end) throw recordError('truncated', `${field} varlong runs past the end of the record`, start, index, field, -1);
    const b = buf[p++]!;
    u |= (b & 0x7f) << shift;
    if (b < 0x80) {
      at = p;
      return (u >>> 1) ^ -(u & 1);
    }
  }
  // 5 to 7 bytes: at most 49 bits, still exact in a double, and so is the zig-zag step.
  let scale = 0x10000000;
  for (let i = 4; i < 10; i++) {
    if (p >= end) throw recordError('truncated', `${field} varlong runs past the end of the record`, start, index, field, -1);
    const b = buf[p++]!;
    if (i === 9 && b > 1) throw recordError('varint-too-long', `${field} varlong longer than 64 bits`, start, index, field, -1);
    if (b < 0x80) {
      at = p;
      if (i < 7) {
        u += b * scale;
        return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
      }
      return exactVarlong(buf, start, p);
    }
    if (i < 7) u += (b & 0x7f) * scale;
    scale *= 128;
  }
  throw recordError('varint-too-long', `${field} varlong longer than 10 bytes`, start, index, field, -1);
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** A varlong of 8-10 bytes (rare: non-minimal or huge), via bigint; NaN outside the safe range. */
function exactVarlong(buf: Buffer, from: number, to: number): number {
  let u = 0n;
  for (let p = to - 1; p >= from; p--) u = (u << 7n) | BigInt(buf[p]! & 0x7f);
  const v = BigInt.asIntN(64, (u >> 1n) ^ -(u & 1n));
  return v > MAX_SAFE || v < -MAX_SAFE ? Number.NaN : Number(v);
}

/** Where the record at p ends (`at` is left just after its length): its length read and checked, for readRecord and for skipping. */
export function recordEnd(buf: Buffer, p: number, end: number, index: number): number {
  at = p;
  const length = varint(buf, end, index, 'length', -1);
  if (length < MIN_RECORD_SIZE - 1 || length > end - at) {
    throw recordError('invalid-length', `record length ${length} (${end - at} bytes left, at least ${MIN_RECORD_SIZE - 1} needed)`, p, index, 'length', -1);
  }
  return at + length;
}

/**
 * The offsetDelta of the record whose body recordEnd() has just found (it starts at `at` and ends
 * at bodyEnd): the length is read once, for the skip and for this.
 */
export function offsetDeltaOf(buf: Buffer, bodyEnd: number, index: number): number {
  at++; // attributes
  varlong(buf, bodyEnd, index, 'timestampDelta');
  return varint(buf, bodyEnd, index, 'offsetDelta', -1);
}

/**
 * Decodes the record at p (records end at `end`) into rec; returns where the next record starts.
 * Every length is checked against the bytes the record declares before it is used, and the fields
 * must use up exactly the declared length (as the Java client checks).
 */
export function readRecord(rec: RecordFields, buf: Buffer, p: number, end: number, index: number): number {
  const bodyEnd = recordEnd(buf, p, end, index);
  const bodyStart = at;
  const attributes = (buf[bodyStart]! << 24) >> 24;
  at = bodyStart + 1;
  const timestampDelta = varlong(buf, bodyEnd, index, 'timestampDelta');
  const offsetDelta = varint(buf, bodyEnd, index, 'offsetDelta', -1);

  let start = at;
  const keyLength = varint(buf, bodyEnd, index, 'key', -1);
  let keyOffset = -1;
  if (keyLength !== -1) {
    if (keyLength < 0 || keyLength > bodyEnd - at) {
      throw recordError('invalid-length', `key length ${keyLength}, ${bodyEnd - at} bytes left in the record`, start, index, 'key', -1);
    }
    keyOffset = at;
    at += keyLength;
  }

  start = at;
  const valueLength = varint(buf, bodyEnd, index, 'value', -1);
  let valueOffset = -1;
  if (valueLength !== -1) {
    if (valueLength < 0 || valueLength > bodyEnd - at) {
      throw recordError('invalid-length', `value length ${valueLength}, ${bodyEnd - at} bytes left in the record`, start, index, 'value', -1);
    }
    valueOffset = at;
    at += valueLength;
  }

  start = at;
  const headerCount = varint(buf, bodyEnd, index, 'headers', -1);
  // A header takes at least 2 bytes (two one-byte lengths): check before walking them.
  if (headerCount < 0 || headerCount * 2 > bodyEnd - at) {
    throw recordError('invalid-length', `header count ${headerCount}, ${bodyEnd - at} bytes left in the record`, start, index, 'headers', -1);
  }
  const headersOffset = at;
  for (let h = 0; h < headerCount; h++) {
    start = at;
    const hk = varint(buf, bodyEnd, index, 'key', h);
    if (hk < 0 || hk > bodyEnd - at) {
      throw recordError('invalid-length', `header key length ${hk}, ${bodyEnd - at} bytes left in the record`, start, index, 'key', h);
    }
    at += hk;
    start = at;
    const hv = varint(buf, bodyEnd, index, 'value', h);
    if (hv < -1 || hv > bodyEnd - at) {
      throw recordError('invalid-length', `header value length ${hv}, ${bodyEnd - at} bytes left in the record`, start, index, 'value', h);
    }
    if (hv > 0) at += hv;
  }
  if (at !== bodyEnd) {
    throw recordError('invalid-length', `record length ${bodyEnd - bodyStart}, but its fields take ${at - bodyStart} bytes`, p, index, 'length', -1);
  }

  rec.position = p;
  rec.attributes = attributes;
  rec.timestampDelta = timestampDelta;
  rec.offsetDelta = offsetDelta;
  rec.keyOffset = keyOffset;
  rec.keyLength = keyLength;
  rec.valueOffset = valueOffset;
  rec.valueLength = valueLength;
  rec.headersOffset = headersOffset;
  rec.headerCount = headerCount;
  return bodyEnd;
}
