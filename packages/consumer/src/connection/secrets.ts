/**
 * Configuration objects that hold secrets (SASL passwords, TLS private keys and passphrases) keep
 * them usable by the code that needs them, but show `[redacted]` wherever the object is printed:
 * JSON.stringify (and so every logger that serialises its fields), util.inspect (console.log, the
 * REPL, error dumps). Both hooks are non-enumerable, so a spread copy ({ ...ssl } for tls.connect)
 * carries the real values and no hook.
 */
import { inspect } from 'node:util';

export const REDACTED = '[redacted]';

/** SASL and node:tls fields whose values are secrets. */
const SECRET_KEYS = new Set(['password', 'passphrase', 'key', 'pfx']);

function redactedCopy(value: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined) continue;
    out[k] = SECRET_KEYS.has(k) ? REDACTED : typeof v === 'function' ? `[function ${v.name || 'anonymous'}]` : v;
  }
  return out;
}

/** Adds the printing hooks to `value` (in place) and returns it. Idempotent; non-objects pass through. */
export function withRedaction<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.hasOwn(value, 'toJSON')) return value;
  Object.defineProperty(value, 'toJSON', { value: () => redactedCopy(value), enumerable: false });
  Object.defineProperty(value, inspect.custom, {
    value: (depth: number, options: object, insp: typeof inspect) => insp(redactedCopy(value), options),
    enumerable: false,
  });
  return value;
}
