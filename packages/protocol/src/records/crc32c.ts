import { createRequire } from 'node:module';
import CRC32C from 'crc-32/crc32c.js';
import { loadAddon } from '../native.js';

/**
 * CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the record batch checksum, as an unsigned
 * 32-bit number.
 *
 * Checking it is most of the cost of decoding an uncompressed batch, so three implementations are
 * tried in order (packages/bench/src/micro/crc-choice.ts measures them):
 * - 'kwire': our own addon (native/crc32c.c, built by `install` with node-gyp where a compiler and
 *   Node's headers are at hand): the CRC32 instruction on three interleaved lanes, 18-24 GB/s on
 *   10 KB-1 MiB buffers here, and about 60 ns per call on 100 B.
 * - 'native': @node-rs/crc32 (prebuilt binaries from the npm registry, no build step): one chain
 *   of CRC32 instructions, 5-6 GB/s, 140-180 ns per call on 100 B.
 * - 'js': crc-32's slice-by-16 JavaScript, 0.9-1.4 GB/s, where neither loads.
 * All give identical results (test/unit/records-crc.test.ts). KWIRE_CRC32C=native or =js forces
 * one of the slower two (for comparisons and tests).
 */
type Crc = (data: Uint8Array) => number;

const require = createRequire(import.meta.url);
const CHECK = Buffer.from('123456789');
const CHECK_VALUE = 0xe3069283;

function jsCrc(data: Uint8Array): number {
  return CRC32C.buf(data, 0) >>> 0;
}

function kwireCrc(): Crc | undefined {
  const mod = loadAddon<{ hardware: boolean; crc32c?: (input: Uint8Array) => number }>('kwire_crc32c');
  const f = mod?.crc32c;
  // Refuse a binary that does not compute CRC-32C (or a CPU without the instruction).
  if (!mod?.hardware || f === undefined || f(CHECK) !== CHECK_VALUE) return undefined;
  return f;
}

function nodeRsCrc(): Crc | undefined {
  try {
    const mod = require('@node-rs/crc32') as { crc32c(input: Buffer | Uint8Array, initial?: number): number };
    if (mod.crc32c(CHECK) >>> 0 !== CHECK_VALUE) return undefined;
    return (data) => mod.crc32c(data) >>> 0;
  } catch {
    return undefined;
  }
}

const kwire = kwireCrc();
const nodeRs = nodeRsCrc();
const forced = process.env.KWIRE_CRC32C;
const implementation: 'kwire' | 'native' | 'js' = forced === 'js' ? 'js' : kwire && forced !== 'native' ? 'kwire' : nodeRs ? 'native' : 'js';
const impl: Crc = implementation === 'kwire' ? kwire! : implementation === 'native' ? nodeRs! : jsCrc;

/** Which implementation is in use: 'kwire' (our addon), 'native' (@node-rs/crc32) or 'js' (crc-32). */
export const crc32cImplementation = implementation;

export function crc32c(data: Uint8Array, start = 0, end = data.length): number {
  return impl(start === 0 && end === data.length ? data : data.subarray(start, end));
}

/** The JavaScript implementation, always (for tests and comparisons). */
export function crc32cJs(data: Uint8Array, start = 0, end = data.length): number {
  return jsCrc(start === 0 && end === data.length ? data : data.subarray(start, end));
}

/** Every implementation that loads here, whichever is in use (for tests and the benchmark). */
export const crc32cImplementations: Readonly<Partial<Record<'kwire' | 'native' | 'js', Crc>>> = Object.freeze({
  ...(kwire ? { kwire } : {}),
  ...(nodeRs ? { native: nodeRs } : {}),
  js: jsCrc,
});
