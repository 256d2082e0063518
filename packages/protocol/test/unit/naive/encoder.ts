// A deliberately naive second encoder, for tests only. It interprets test/schemas.json at run time
// and builds bytes by concatenating small Buffers, one per primitive, the slow and obvious way. It
// shares no code with src/ (no Writer, no generated module): where the two agree byte for byte,
// they agree because both follow the protocol, not because they share a bug.
//
// Semantics, as Apache Kafka's generated Java code has them (MessageDataGenerator):
// - a field the version does not have is not written; a missing value takes the schema default;
// - flexible versions use compact strings/bytes/arrays (uvarint length + 1, 0 = null) and end
//   every struct with a tagged-fields section;
// - tagged fields are written only when they differ from their default, in increasing tag order,
//   each as uvarint tag, uvarint size, value; unknown tags kept on a struct are merged in;
// - a nullable struct is preceded by an int8 marker: -1 null, 1 present.
import { type NField, type NMessage, baseType, inRange, isArray, isFlexible, isStructType, isTaggedAt, prop } from './schema.js';

/** The key under which decoded structs keep unknown tagged fields (the codec's is Symbol.for of the same name). */
export const UNKNOWN_TAGS: unique symbol = Symbol.for('kwire.unknownTaggedFields') as never;

export interface RawTag {
  tag: number;
  data: Uint8Array;
}

/** A length or count field the encoder wrote, for the fuzzer to inflate. */
export interface LengthMark {
  /** Offset of the field's first byte in the output. */
  at: number;
  enc: 'int16' | 'int32' | 'uvarint';
  /** Bytes the field takes. */
  width: number;
  /** What the field counts. */
  role: 'string' | 'bytes' | 'array' | 'tag-count' | 'tag-size';
}

/** Output as a list of small chunks, concatenated once at the end. */
export class Out {
  readonly chunks: Buffer[] = [];
  readonly marks: LengthMark[] = [];
  length = 0;

  push(b: Buffer): void {
    this.chunks.push(b);
    this.length += b.length;
  }

  append(other: Out): void {
    for (const m of other.marks) this.marks.push({ ...m, at: m.at + this.length });
    for (const c of other.chunks) this.push(c);
  }

  bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }

  mark(enc: LengthMark['enc'], width: number, role: LengthMark['role']): void {
    this.marks.push({ at: this.length, enc, width, role });
  }

  int8(v: number): void {
    const b = Buffer.alloc(1);
    b.writeInt8(v);
    this.push(b);
  }

  bool(v: boolean): void {
    this.push(Buffer.from([v ? 1 : 0]));
  }

  int16(v: number): void {
    const b = Buffer.alloc(2);
    b.writeInt16BE(v);
    this.push(b);
  }

  uint16(v: number): void {
    const b = Buffer.alloc(2);
    b.writeUInt16BE(v);
    this.push(b);
  }

  int32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeInt32BE(v);
    this.push(b);
  }

  uint32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(v);
    this.push(b);
  }

  int64(v: bigint | number): void {
    const b = Buffer.alloc(8);
    b.writeBigInt64BE(BigInt(v));
    this.push(b);
  }

  float64(v: number): void {
    const b = Buffer.alloc(8);
    b.writeDoubleBE(v);
    this.push(b);
  }

  /** The textbook LEB128 loop, on plain numbers (0 .. 2^32-1). */
  uvarint(v: number): void {
    if (!Number.isInteger(v) || v < 0 || v > 0xffffffff) throw new Error(`naive: bad uvarint ${v}`);
    const bytes: number[] = [];
    while (v >= 128) {
      bytes.push((v % 128) + 128);
      v = Math.floor(v / 128);
    }
    bytes.push(v);
    this.push(Buffer.from(bytes));
  }

  raw(b: Uint8Array): void {
    this.push(Buffer.from(b));
  }
}

export function uvarintBytes(v: number): Buffer {
  const o = new Out();
  o.uvarint(v);
  return o.bytes();
}

// ------------------------------------------------------------------ defaults

export const ZERO_UUID_TEXT = 'AAAAAAAAAAAAAAAAAAAAAA';

/**
 * The schema default of a field, as a value of a body object. Structs: an empty object (all
 * defaults). Records default to null, or to no bytes at a version where they cannot be null
 * (ShareFetch's records are nullable in v0 only).
 */
export function defaultOf(f: NField, version?: number): unknown {
  if (f.default === 'null') return null;
  if (isArray(f)) return [];
  if (isStructType(f)) return {};
  const d = f.default;
  switch (baseType(f)) {
    case 'bool':
      return d === 'true';
    case 'int8':
    case 'int16':
    case 'uint16':
    case 'int32':
    case 'uint32':
    case 'float64':
      // Number() reads "0x7fffffff" and "-2147483648" alike.
      return d === undefined || d === '' ? 0 : Number(d);
    case 'int64':
      return d === undefined || d === '' ? 0n : BigInt(d);
    case 'uuid':
      return ZERO_UUID_TEXT;
    case 'string':
      return d ?? '';
    case 'bytes':
      return Buffer.alloc(0);
    case 'records':
      return version !== undefined && !inRange(f.nullableVersions ?? 'none', version) ? Buffer.alloc(0) : null;
  }
  throw new Error(`naive: no default for ${f.type}`);
}

function fieldValue(obj: Record<string, unknown>, f: NField, version: number): unknown {
  const v = obj[prop(f)];
  return v === undefined ? defaultOf(f, version) : v;
}

/** Is v (already defaulted) different from the field's default, as Java decides whether to write a tagged field? */
function differsFromDefault(f: NField, v: unknown, version: number): boolean {
  if (f.default === 'null') return v !== null;
  if (v === null) return true;
  if (isArray(f)) return (v as unknown[]).length > 0;
  if (isStructType(f)) return structDiffers(f.fields!, v as Record<string, unknown>, version);
  const d = defaultOf(f);
  switch (baseType(f)) {
    case 'int64':
      return BigInt(v as bigint) !== d;
    case 'bytes':
      return (v as Uint8Array).length > 0;
    case 'records':
      return v !== null;
    default:
      return v !== d;
  }
}

function structDiffers(fields: NField[], s: Record<string, unknown>, version: number): boolean {
  const unknown = (s as { [UNKNOWN_TAGS]?: RawTag[] })[UNKNOWN_TAGS];
  if (unknown !== undefined && unknown.length > 0) return true;
  return fields.some((f) => inRange(f.versions, version) && differsFromDefault(f, fieldValue(s, f, version), version));
}

// ------------------------------------------------------------------ encoding

function uuidBytes(text: string): Buffer {
  if (text === ZERO_UUID_TEXT) return Buffer.alloc(16);
  const b = Buffer.from(text, 'base64url');
  if (b.length !== 16) throw new Error(`naive: bad uuid ${text}`);
  return b;
}

function writePrimitive(o: Out, type: string, v: unknown, flexible: boolean, nullable: boolean, path: string): void {
  if (v === null && !['string', 'bytes', 'records'].includes(type)) throw new Error(`naive: null ${type} at ${path}`);
  switch (type) {
    case 'bool':
      return o.bool(v as boolean);
    case 'int8':
      return o.int8(v as number);
    case 'int16':
      return o.int16(v as number);
    case 'uint16':
      return o.uint16(v as number);
    case 'int32':
      return o.int32(v as number);
    case 'uint32':
      return o.uint32(v as number);
    case 'int64':
      return o.int64(v as bigint);
    case 'float64':
      return o.float64(v as number);
    case 'uuid':
      return o.raw(uuidBytes(v as string));
    case 'string': {
      if (v === null && !nullable) throw new Error(`naive: null string at ${path}`);
      if (flexible) {
        o.mark('uvarint', v === null ? 1 : uvarintBytes(Buffer.byteLength(v as string) + 1).length, 'string');
        if (v === null) return o.uvarint(0);
        const b = Buffer.from(v as string, 'utf8');
        o.uvarint(b.length + 1);
        return o.raw(b);
      }
      o.mark('int16', 2, 'string');
      if (v === null) return o.int16(-1);
      const b = Buffer.from(v as string, 'utf8');
      o.int16(b.length);
      return o.raw(b);
    }
    case 'bytes':
    case 'records': {
      if (v === null && !nullable) throw new Error(`naive: null bytes at ${path}`);
      if (flexible) {
        o.mark('uvarint', v === null ? 1 : uvarintBytes((v as Uint8Array).length + 1).length, 'bytes');
        if (v === null) return o.uvarint(0);
        o.uvarint((v as Uint8Array).length + 1);
        return o.raw(v as Uint8Array);
      }
      o.mark('int32', 4, 'bytes');
      if (v === null) return o.int32(-1);
      o.int32((v as Uint8Array).length);
      return o.raw(v as Uint8Array);
    }
  }
  throw new Error(`naive: unknown type ${type} at ${path}`);
}

function writeValue(o: Out, f: NField, v: unknown, version: number, flexible: boolean, path: string): void {
  const nullable = inRange(f.nullableVersions, version);
  if (v === null && !nullable) throw new Error(`naive: null at ${path}, not nullable in v${version}`);
  if (isArray(f)) {
    if (flexible) {
      const n = v === null ? 0 : (v as unknown[]).length + 1;
      o.mark('uvarint', uvarintBytes(n).length, 'array');
      o.uvarint(n);
    } else {
      o.mark('int32', 4, 'array');
      o.int32(v === null ? -1 : (v as unknown[]).length);
    }
    if (v === null) return;
    const elements = v as unknown[];
    for (let i = 0; i < elements.length; i++) {
      if (isStructType(f)) writeStruct(o, f.fields!, elements[i] as Record<string, unknown>, version, flexible, `${path}/${i}`);
      else writePrimitive(o, baseType(f), elements[i], flexible, false, `${path}/${i}`);
    }
    return;
  }
  if (isStructType(f)) {
    if (nullable) {
      o.int8(v === null ? -1 : 1);
      if (v === null) return;
    }
    writeStruct(o, f.fields!, v as Record<string, unknown>, version, flexible, path);
    return;
  }
  writePrimitive(o, baseType(f), v, flexible, nullable, path);
}

function writeStruct(o: Out, fields: NField[], s: Record<string, unknown>, version: number, flexible: boolean, path: string): void {
  const tagged: NField[] = [];
  for (const f of fields) {
    if (!inRange(f.versions, version)) continue;
    if (flexible && isTaggedAt(f, version)) {
      tagged.push(f);
      continue;
    }
    writeValue(o, f, fieldValue(s, f, version), version, flexible, `${path}/${prop(f)}`);
  }
  if (!flexible) return;
  const entries: { tag: number; body: Out }[] = [];
  for (const f of tagged) {
    const v = fieldValue(s, f, version);
    if (!differsFromDefault(f, v, version)) continue;
    const body = new Out();
    writeValue(body, f, v, version, true, `${path}/${prop(f)}`);
    entries.push({ tag: f.tag!, body });
  }
  for (const u of (s as { [UNKNOWN_TAGS]?: RawTag[] })[UNKNOWN_TAGS] ?? []) {
    const body = new Out();
    body.raw(u.data);
    entries.push({ tag: u.tag, body });
  }
  entries.sort((a, b) => a.tag - b.tag);
  o.mark('uvarint', uvarintBytes(entries.length).length, 'tag-count');
  o.uvarint(entries.length);
  for (const e of entries) {
    o.uvarint(e.tag);
    o.mark('uvarint', uvarintBytes(e.body.length).length, 'tag-size');
    o.uvarint(e.body.length);
    o.append(e.body);
  }
}

/** The body of `m` at `version` (no header, no size), with the length fields it wrote. */
export function naiveEncodeWithMarks(m: NMessage, version: number, body: object): Out {
  const o = new Out();
  writeStruct(o, m.fields, body as Record<string, unknown>, version, isFlexible(m, version), '');
  return o;
}

export function naiveEncode(m: NMessage, version: number, body: object): Buffer {
  return naiveEncodeWithMarks(m, version, body).bytes();
}

// ------------------------------------------------------------------ headers and frames

export interface NaiveFrame {
  bytes: Buffer;
  /** Where the body starts in `bytes`. */
  bodyOffset: number;
  /** The body's length fields, with offsets in `bytes`. */
  marks: LengthMark[];
}

function writeTagSection(o: Out, tags: RawTag[] | undefined): void {
  const sorted = [...(tags ?? [])].sort((a, b) => a.tag - b.tag);
  o.uvarint(sorted.length);
  for (const t of sorted) {
    o.uvarint(t.tag);
    o.uvarint(t.data.length);
    o.raw(t.data);
  }
}

function frame(header: Out, body: Out): NaiveFrame {
  const size = new Out();
  size.int32(header.length + body.length);
  const bodyOffset = 4 + header.length;
  return {
    bytes: Buffer.concat([size.bytes(), header.bytes(), body.bytes()]),
    bodyOffset,
    marks: body.marks.map((m) => ({ ...m, at: m.at + bodyOffset })),
  };
}

/**
 * Request header v1 (int16 api key, int16 version, int32 correlation id, int16-length nullable
 * client id) or v2 (the same + tagged fields), chosen by whether the request version is flexible.
 */
export function naiveRequestFrame(req: NMessage, r: { apiVersion: number; correlationId: number; clientId: string | null; body: object; headerTaggedFields?: RawTag[] }): NaiveFrame {
  const h = new Out();
  h.int16(req.apiKey!);
  h.int16(r.apiVersion);
  h.int32(r.correlationId);
  // Never compact, even in header v2.
  if (r.clientId === null) h.int16(-1);
  else {
    const b = Buffer.from(r.clientId, 'utf8');
    h.int16(b.length);
    h.raw(b);
  }
  if (isFlexible(req, r.apiVersion)) writeTagSection(h, r.headerTaggedFields);
  return frame(h, naiveEncodeWithMarks(req, r.apiVersion, r.body));
}

/**
 * Response header v0 (int32 correlation id) or v1 (+ tagged fields): v1 when the version is
 * flexible, except ApiVersions (18), always v0. `bodyVersion` is the version the body is written
 * in (v0 for an ApiVersions UNSUPPORTED_VERSION answer).
 */
export function naiveResponseFrame(res: NMessage, r: { apiVersion: number; bodyVersion?: number; correlationId: number; body: object; headerTaggedFields?: RawTag[] }): NaiveFrame {
  const h = new Out();
  h.int32(r.correlationId);
  if (res.apiKey !== 18 && isFlexible(res, r.apiVersion)) writeTagSection(h, r.headerTaggedFields);
  return frame(h, naiveEncodeWithMarks(res, r.bodyVersion ?? r.apiVersion, r.body));
}
