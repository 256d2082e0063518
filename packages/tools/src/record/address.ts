import type { Address } from './rewrite.js';

/** "host:port", "[v6]:port" or ":port" (127.0.0.1). */
export function parseAddress(text: string): Address {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(text.trim());
  if (!m) throw new Error(`"${text}" is not HOST:PORT`);
  const port = Number(m[3]);
  if (!(port >= 0 && port <= 65535)) throw new Error(`port ${m[3]} out of range in "${text}"`);
  return { host: m[1] ?? (m[2] || '127.0.0.1'), port };
}
