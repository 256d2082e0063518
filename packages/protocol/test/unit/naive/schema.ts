// The normalized message schemas (test/schemas.json, written by the codegen from Apache Kafka's
// JSON schemas), read at run time with fs. The naive encoder and the random body generator walk
// these; nothing here comes from src/ (which is what they check).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface NField {
  readonly name: string;
  readonly type: string;
  readonly versions: string;
  readonly nullableVersions?: string;
  readonly taggedVersions?: string;
  readonly tag?: number;
  readonly default?: string;
  readonly fields?: NField[];
}

export interface NMessage {
  readonly name: string;
  readonly type: 'request' | 'response' | 'data';
  readonly apiKey?: number;
  readonly validVersions: string;
  readonly flexibleVersions: string;
  readonly fields: NField[];
}

export interface NScope {
  readonly name: string;
  readonly min: number;
  readonly max: number;
  readonly file: string;
}

export interface NSchemas {
  readonly kafkaVersion: string;
  readonly scope: { readonly apis: NScope[]; readonly data: NScope[] };
  readonly messages: Record<string, NMessage>;
}

/** packages/protocol/test/schemas.json, found from the compiled file (dist/test/unit/naive/). */
function schemasPath(file = 'schemas.json'): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 8; i++) {
    const candidate = join(dir, 'test', file);
    if (existsSync(candidate) && existsSync(join(dir, 'package.json'))) return candidate;
    dir = dirname(dir);
  }
  throw new Error(`cannot find packages/protocol/test/${file}`);
}

let cached: NSchemas | undefined;

export function loadSchemas(): NSchemas {
  cached ??= JSON.parse(readFileSync(schemasPath(), 'utf8')) as NSchemas;
  return cached;
}

let cachedAll: NSchemas | undefined;

/** test/schemas-all.json: every API of the protocol at every valid version (src/all-apis). */
export function loadAllSchemas(): NSchemas {
  cachedAll ??= JSON.parse(readFileSync(schemasPath('schemas-all.json'), 'utf8')) as NSchemas;
  return cachedAll;
}

/** Every API's request and response over its whole valid range (the scope of src/all-apis). */
export function allScopedMessages(): ScopedMessage[] {
  const s = loadAllSchemas();
  const out: ScopedMessage[] = [];
  for (const a of s.scope.apis) {
    for (const kind of ['request', 'response'] as const) {
      const m = s.messages[`${a.name}${kind === 'request' ? 'Request' : 'Response'}`];
      if (!m) throw new Error(`no schema for ${a.name} ${kind}`);
      out.push({ message: m, api: a.name, apiKey: m.apiKey, kind, min: a.min, max: a.max });
    }
  }
  return out;
}

export function message(name: string): NMessage {
  const m = loadSchemas().messages[name];
  if (!m) throw new Error(`no schema ${name}`);
  return m;
}

// ------------------------------------------------------------------ version ranges

/** [lo, hi] inclusive, or null for "none". */
export type VRange = readonly [number, number] | null;

export function parseRange(text: string | undefined): VRange {
  if (text === undefined || text === 'none' || text === '') return null;
  let m = /^(\d+)\+$/.exec(text);
  if (m) return [Number(m[1]), Number.POSITIVE_INFINITY];
  m = /^(\d+)-(\d+)$/.exec(text);
  if (m) return [Number(m[1]), Number(m[2])];
  m = /^(\d+)$/.exec(text);
  if (m) return [Number(m[1]), Number(m[1])];
  throw new Error(`bad range ${text}`);
}

export function inRange(text: string | undefined, v: number): boolean {
  const r = parseRange(text);
  return r !== null && v >= r[0] && v <= r[1];
}

export function intersect(a: VRange, b: VRange): VRange {
  if (a === null || b === null) return null;
  const lo = Math.max(a[0], b[0]);
  const hi = Math.min(a[1], b[1]);
  return lo > hi ? null : [lo, hi];
}

export function within(r: VRange, v: number): boolean {
  return r !== null && v >= r[0] && v <= r[1];
}

/** "ClientSoftwareName" -> "clientSoftwareName", the property name of a field on a body object. */
export function prop(f: NField): string {
  return f.name.charAt(0).toLowerCase() + f.name.slice(1);
}

export function isArray(f: NField): boolean {
  return f.type.startsWith('[]');
}

export function baseType(f: NField): string {
  return isArray(f) ? f.type.slice(2) : f.type;
}

export const PRIMITIVE_TYPES = new Set(['bool', 'int8', 'int16', 'uint16', 'int32', 'uint32', 'int64', 'float64', 'uuid', 'string', 'bytes', 'records']);

export function isStructType(f: NField): boolean {
  return !PRIMITIVE_TYPES.has(baseType(f));
}

/** Is the field tagged (rather than positional) in version v of a flexible message? */
export function isTaggedAt(f: NField, v: number): boolean {
  return f.tag !== undefined && inRange(f.taggedVersions, v);
}

/** The messages kwire implements, with their versions in scope. */
export interface ScopedMessage {
  readonly message: NMessage;
  /** The API name (for request/response) or the data structure name. */
  readonly api: string;
  readonly apiKey: number | undefined;
  readonly kind: 'request' | 'response' | 'data';
  readonly min: number;
  readonly max: number;
}

export function scopedMessages(): ScopedMessage[] {
  const s = loadSchemas();
  const out: ScopedMessage[] = [];
  for (const a of s.scope.apis) {
    for (const kind of ['request', 'response'] as const) {
      const m = message(`${a.name}${kind === 'request' ? 'Request' : 'Response'}`);
      out.push({ message: m, api: a.name, apiKey: m.apiKey, kind, min: a.min, max: a.max });
    }
  }
  for (const d of s.scope.data) out.push({ message: message(d.name), api: d.name, apiKey: undefined, kind: 'data', min: d.min, max: d.max });
  return out;
}

export function isFlexible(m: NMessage, v: number): boolean {
  return inRange(m.flexibleVersions, v);
}
