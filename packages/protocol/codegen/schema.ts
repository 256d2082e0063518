// Reading Apache Kafka's JSON message schemas (clients/src/main/resources/common/message/*.json,
// taken from the kafka-clients jar by DumpKafka.java) into a small model for the emitter.

export interface Range {
  readonly lo: number;
  /** Infinity for "N+". */
  readonly hi: number;
}

export const EMPTY: Range = { lo: 1, hi: 0 };

export function isEmpty(r: Range): boolean {
  return r.lo > r.hi;
}

export function intersect(a: Range, b: Range): Range {
  const lo = Math.max(a.lo, b.lo);
  const hi = Math.min(a.hi, b.hi);
  return lo > hi ? EMPTY : { lo, hi };
}

export function contains(r: Range, v: number): boolean {
  return v >= r.lo && v <= r.hi;
}

/** "none", "3", "3+", "3-7". */
export function parseRange(text: string | undefined): Range {
  if (text === undefined || text === 'none') return EMPTY;
  let m = /^(\d+)\+$/.exec(text);
  if (m) return { lo: Number(m[1]), hi: Infinity };
  m = /^(\d+)-(\d+)$/.exec(text);
  if (m) return { lo: Number(m[1]), hi: Number(m[2]) };
  m = /^(\d+)$/.exec(text);
  if (m) return { lo: Number(m[1]), hi: Number(m[1]) };
  throw new Error(`bad version range ${JSON.stringify(text)}`);
}

export function formatRange(r: Range): string {
  if (isEmpty(r)) return 'none';
  if (r.hi === Infinity) return `${r.lo}+`;
  return r.lo === r.hi ? `${r.lo}` : `${r.lo}-${r.hi}`;
}

export interface SchemaField {
  readonly name: string;
  readonly type: string;
  readonly versions: Range;
  readonly nullableVersions: Range;
  readonly taggedVersions: Range;
  readonly tag: number | undefined;
  readonly default: string | undefined;
  readonly about: string;
  readonly fields: SchemaField[] | undefined;
}

export interface SchemaMessage {
  readonly name: string;
  readonly type: 'request' | 'response' | 'data' | 'header' | string;
  readonly apiKey: number | undefined;
  readonly validVersions: Range;
  readonly flexibleVersions: Range;
  readonly fields: SchemaField[];
  readonly commonStructs: Map<string, SchemaField[]>;
}

/** The schema files carry // comments, which JSON does not allow; strings may contain "//". */
export function stripComments(text: string): string {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      out += c;
      if (c === '\\') out += text[++i] ?? '';
      else if (c === '"') inString = false;
    } else if (c === '"') {
      inString = true;
      out += c;
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      out += '\n';
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 1;
    } else {
      out += c;
    }
  }
  return out;
}

interface RawField {
  name: string;
  type: string;
  versions?: string;
  nullableVersions?: string;
  taggedVersions?: string;
  tag?: number;
  default?: string | number | boolean;
  about?: string;
  fields?: RawField[];
}

function field(raw: RawField): SchemaField {
  return {
    name: raw.name,
    type: raw.type,
    versions: parseRange(raw.versions),
    nullableVersions: parseRange(raw.nullableVersions),
    taggedVersions: parseRange(raw.taggedVersions),
    tag: raw.tag,
    default: raw.default === undefined ? undefined : String(raw.default),
    about: raw.about ?? '',
    fields: raw.fields?.map(field),
  };
}

export function parseSchema(text: string): SchemaMessage {
  const raw = JSON.parse(stripComments(text)) as {
    name: string;
    type: string;
    apiKey?: number;
    validVersions: string;
    flexibleVersions: string;
    fields?: RawField[];
    commonStructs?: { name: string; fields: RawField[] }[];
  };
  return {
    name: raw.name,
    type: raw.type,
    apiKey: raw.apiKey,
    validVersions: parseRange(raw.validVersions),
    flexibleVersions: parseRange(raw.flexibleVersions),
    fields: (raw.fields ?? []).map(field),
    commonStructs: new Map((raw.commonStructs ?? []).map((s) => [s.name, s.fields.map(field)])),
  };
}
