// Seeded random message bodies generated from the schemas, and the body a decoder must give back
// for them. For tests only; no code from src/.
import { defaultOf, type RawTag, UNKNOWN_TAGS, ZERO_UUID_TEXT } from './encoder.js';
import { type NField, type NMessage, type VRange, baseType, inRange, intersect, isArray, isFlexible, isStructType, isTaggedAt, parseRange, prop } from './schema.js';

/** mulberry32: a tiny seeded PRNG, good enough to pick test inputs reproducibly. */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  /** Uniform in [0, 1). */
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** Integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
  u32(): number {
    return Math.floor(this.next() * 4294967296);
  }
  bytes(n: number): Buffer {
    const b = Buffer.alloc(n);
    for (let i = 0; i < n; i++) b[i] = this.int(0, 255);
    return b;
  }
  /** A uniformly random int64. */
  int64(): bigint {
    return BigInt.asIntN(64, (BigInt(this.u32()) << 32n) | BigInt(this.u32()));
  }
}

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;

const STRING_PIECES = ['a', 'Z', '0', '-', '.', '_', ' ', 'topic', 'é', 'ß', '日本', '€', '😀', '\u0000', '"', '\\', 'ü', 'kafka', 'Ω', '𝄞'];

export function randomString(rng: Rng): string {
  const roll = rng.next();
  if (roll < 0.1) return '';
  if (roll < 0.14) return 'x'.repeat(rng.int(120, 300)); // a length that needs 2 uvarint bytes
  if (roll < 0.18) return '€'.repeat(rng.int(40, 60)); // 3 UTF-8 bytes per JS char
  let s = '';
  const n = rng.int(1, 8);
  for (let i = 0; i < n; i++) s += rng.pick(STRING_PIECES);
  return s;
}

export function randomUuid(rng: Rng): string {
  if (rng.chance(0.15)) return ZERO_UUID_TEXT;
  return rng.bytes(16).toString('base64url');
}

function randomInt(rng: Rng, bits: 8 | 16 | 32): number {
  const max = 2 ** (bits - 1) - 1;
  const min = -(2 ** (bits - 1));
  const roll = rng.next();
  if (roll < 0.3) return rng.pick([0, -1, 1, max, min, 63, 64, -64, -65, 127, -128, 128, 16383, 16384].filter((x) => x >= min && x <= max));
  if (roll < 0.6) return rng.int(-1, Math.min(max, 200));
  return rng.int(min, max);
}

function randomInt64(rng: Rng): bigint | number {
  const roll = rng.next();
  if (roll < 0.3) return rng.pick([0n, -1n, 1n, INT64_MIN, INT64_MAX, INT64_MIN + 1n, INT64_MAX - 1n, 2n ** 31n, -(2n ** 32n)]);
  // Encoders also take safe-integer numbers for int64 fields.
  if (roll < 0.4) return rng.pick([0, -1, 42, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, rng.int(-1e9, 1e9)]);
  return rng.int64();
}

function randomPrimitive(rng: Rng, type: string): unknown {
  switch (type) {
    case 'bool':
      return rng.chance(0.5);
    case 'int8':
      return randomInt(rng, 8);
    case 'int16':
      return randomInt(rng, 16);
    case 'uint16':
      return rng.int(0, 65535);
    case 'int32':
      return randomInt(rng, 32);
    case 'uint32':
      return rng.u32();
    case 'int64':
      return randomInt64(rng);
    case 'float64':
      return rng.pick([0, -0.5, 1e300, Math.PI, -1]);
    case 'uuid':
      return randomUuid(rng);
    case 'string':
      return randomString(rng);
    case 'bytes':
    case 'records':
      return rng.chance(0.05) ? rng.bytes(rng.int(128, 300)) : rng.bytes(rng.int(0, 12));
  }
  throw new Error(`random: unknown type ${type}`);
}

export interface GenOptions {
  /** Chance that a field is left out of the body (so the encoder uses the default). */
  omit: number;
  /** Chance that a struct of a flexible version carries unknown tagged fields. */
  unknownTags: number;
  /** Largest array length (nesting shrinks it). */
  maxArray: number;
}

export const DEFAULT_GEN: GenOptions = { omit: 0.08, unknownTags: 0.12, maxArray: 3 };

/** Tags the struct knows at version v (an unknown tag must avoid them). */
function knownTags(fields: NField[], v: number): Set<number> {
  return new Set(fields.filter((f) => isTaggedAt(f, v)).map((f) => f.tag!));
}

function randomUnknownTags(rng: Rng, fields: NField[], v: number): RawTag[] {
  const known = knownTags(fields, v);
  const tags = new Set<number>();
  const n = rng.int(1, 3);
  while (tags.size < n) {
    const t = rng.pick([0, 1, 2, 3, 4, 5, 9, 17, 63, 127, 128, 300, 16383, 16384, 2 ** 31 - 1, rng.int(0, 1000)]);
    if (!known.has(t)) tags.add(t);
  }
  return [...tags].map((tag) => ({ tag, data: rng.chance(0.05) ? rng.bytes(rng.int(128, 200)) : rng.bytes(rng.int(0, 6)) }));
}

interface GenContext {
  readonly opts: GenOptions;
  /** Whether the version is flexible (unknown tags only exist there). */
  readonly flexible: boolean;
}

function randomValue(rng: Rng, f: NField, v: number, range: VRange, depth: number, ctx: GenContext): unknown {
  // Null only where this version allows it (for a field this version lacks, where any does).
  const present = inRange(f.versions, v);
  const nullable = present ? inRange(f.nullableVersions, v) : parseRange(f.nullableVersions) !== null;
  if (nullable && rng.chance(0.2)) return null;
  const sub = intersect(range, parseRange(f.versions));
  if (isArray(f)) {
    const big = !isStructType(f) && rng.chance(0.03);
    const n = big ? rng.int(128, 200) : rng.int(0, Math.max(0, ctx.opts.maxArray - depth));
    const out: unknown[] = [];
    for (let i = 0; i < n; i++) {
      out.push(isStructType(f) ? randomStruct(rng, f.fields!, v, sub, depth + 1, ctx) : randomPrimitive(rng, baseType(f)));
    }
    return out;
  }
  if (isStructType(f)) return randomStruct(rng, f.fields!, v, sub, depth + 1, ctx);
  return randomPrimitive(rng, baseType(f));
}

/**
 * A random struct for version v. `range` is the versions the struct exists in within the scope:
 * fields outside it are not part of the codec's model and are left out.
 */
function randomStruct(rng: Rng, fields: NField[], v: number, range: VRange, depth: number, ctx: GenContext): Record<string, unknown> {
  const s: Record<string, unknown> = {};
  for (const f of fields) {
    if (intersect(range, parseRange(f.versions)) === null) continue;
    if (rng.chance(ctx.opts.omit)) continue;
    // Tagged fields: half the time exactly their default, so that "not written" is exercised.
    if (isTaggedAt(f, v) && rng.chance(0.35)) {
      s[prop(f)] = defaultOf(f);
      continue;
    }
    s[prop(f)] = randomValue(rng, f, v, range, depth, ctx);
  }
  if (ctx.flexible && rng.chance(ctx.opts.unknownTags)) {
    (s as { [UNKNOWN_TAGS]?: RawTag[] })[UNKNOWN_TAGS] = randomUnknownTags(rng, fields, v);
  }
  return s;
}

/** A random body of message m at version v, for a codec whose scope is [min, max]. */
export function randomBody(rng: Rng, m: NMessage, v: number, min: number, max: number, opts: GenOptions = DEFAULT_GEN): Record<string, unknown> {
  return randomStruct(rng, m.fields, v, [min, max], 0, { opts, flexible: isFlexible(m, v) });
}

// ------------------------------------------------------------------ what a decoder gives back

function normalize(f: NField, val: unknown, v: number, range: VRange, flexible: boolean): unknown {
  if (val === null) return null;
  const sub = intersect(range, parseRange(f.versions));
  if (isArray(f)) {
    return (val as unknown[]).map((e) => (isStructType(f) ? expectedStruct(f.fields!, e as Record<string, unknown>, v, sub, flexible) : normalizePrimitive(baseType(f), e)));
  }
  if (isStructType(f)) return expectedStruct(f.fields!, val as Record<string, unknown>, v, sub, flexible);
  return normalizePrimitive(baseType(f), val);
}

function normalizePrimitive(type: string, val: unknown): unknown {
  if (type === 'int64') return BigInt(val as bigint | number);
  if ((type === 'bytes' || type === 'records') && val !== null) return Buffer.from(val as Uint8Array);
  return val;
}

/** The default of a field as a decoder fills it in (structs with every field). */
function fullDefault(f: NField, v: number, range: VRange): unknown {
  const d = defaultOf(f, v);
  if (d === null || isArray(f)) return d;
  if (isStructType(f)) return expectedStruct(f.fields!, {}, v, intersect(range, parseRange(f.versions)), false);
  return d;
}

function expectedStruct(fields: NField[], s: Record<string, unknown>, v: number, range: VRange, flexible: boolean): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const f of fields) {
    if (intersect(range, parseRange(f.versions)) === null) continue;
    const val = s[prop(f)];
    o[prop(f)] = inRange(f.versions, v) && val !== undefined ? normalize(f, val, v, range, flexible) : fullDefault(f, v, range);
  }
  const unknown = (s as { [UNKNOWN_TAGS]?: RawTag[] })[UNKNOWN_TAGS];
  if (flexible && unknown !== undefined && unknown.length > 0) {
    (o as { [UNKNOWN_TAGS]?: RawTag[] })[UNKNOWN_TAGS] = [...unknown].sort((a, b) => a.tag - b.tag).map((t) => ({ tag: t.tag, data: Buffer.from(t.data) }));
  }
  return o;
}

/**
 * The body a decoder must return for bytes the naive encoder made from `body`: every field the
 * codec models, with the value given where the version has the field, else the default; int64 as
 * bigint; unknown tagged fields in tag order (the order they are written in).
 */
export function expectedDecoded(m: NMessage, v: number, min: number, max: number, body: object): Record<string, unknown> {
  return expectedStruct(m.fields, body as Record<string, unknown>, v, [min, max], isFlexible(m, v));
}
