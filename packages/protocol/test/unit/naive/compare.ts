// Deep comparison for decoded bodies: bigints, Buffers by content, arrays, plain objects by their
// own string keys plus the unknown-tagged-fields symbol (which generic deep-equal helpers skip).
// Returns the path and description of the first difference, or null.
import { UNKNOWN_TAGS } from './encoder.js';

export function hex(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength)
    .toString('hex')
    .replace(/(..)(?!$)/g, '$1 ');
}

export function fromHex(text: string): Buffer {
  return Buffer.from(text.replace(/[^0-9a-fA-F]/g, ''), 'hex');
}

function show(v: unknown): string {
  if (typeof v === 'bigint') return `${v}n`;
  if (v instanceof Uint8Array) return `<${hex(v)}>`;
  if (typeof v === 'string') return JSON.stringify(v);
  if (Array.isArray(v)) return `array(${v.length})`;
  if (v !== null && typeof v === 'object') return `{${Object.keys(v).join(',')}}`;
  return String(v);
}

export function diff(actual: unknown, expected: unknown, path = ''): string | null {
  if (actual === expected) return null;
  const at = path || '/';
  if (typeof actual !== typeof expected) return `${at}: ${show(actual)} (${typeof actual}) vs expected ${show(expected)} (${typeof expected})`;
  if (typeof actual === 'number' && Number.isNaN(actual) && Number.isNaN(expected)) return null;
  if (actual === null || expected === null || typeof actual !== 'object') return `${at}: ${show(actual)} vs expected ${show(expected)}`;
  if (actual instanceof Uint8Array || expected instanceof Uint8Array) {
    if (!(actual instanceof Uint8Array) || !(expected instanceof Uint8Array)) return `${at}: ${show(actual)} vs expected ${show(expected)}`;
    return Buffer.compare(actual, expected) === 0 ? null : `${at}: ${show(actual)} vs expected ${show(expected)}`;
  }
  if (Array.isArray(actual) !== Array.isArray(expected)) return `${at}: ${show(actual)} vs expected ${show(expected)}`;
  if (Array.isArray(actual)) {
    const e = expected as unknown[];
    if (actual.length !== e.length) return `${at}: length ${actual.length} vs expected ${e.length}`;
    for (let i = 0; i < actual.length; i++) {
      const d = diff(actual[i], e[i], `${path}/${i}`);
      if (d) return d;
    }
    return null;
  }
  const a = actual as Record<string | symbol, unknown>;
  const e = expected as Record<string | symbol, unknown>;
  const ka = Object.keys(a)
    .filter((k) => a[k] !== undefined)
    .sort();
  const ke = Object.keys(e)
    .filter((k) => e[k] !== undefined)
    .sort();
  if (ka.join(',') !== ke.join(',')) {
    const missing = ke.filter((k) => !ka.includes(k));
    const extra = ka.filter((k) => !ke.includes(k));
    return `${at}: keys differ; missing [${missing.join(',')}], unexpected [${extra.join(',')}]`;
  }
  for (const k of ka) {
    const d = diff(a[k], e[k], `${path}/${k}`);
    if (d) return d;
  }
  return diff(a[UNKNOWN_TAGS] ?? null, e[UNKNOWN_TAGS] ?? null, `${path}/[unknownTaggedFields]`);
}
