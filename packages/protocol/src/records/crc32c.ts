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
 *   Node's headers are at hand): the CRC32 instruction on three interleaved lanes, and where the CPU
 *   has AVX-512 with VPCLMULQDQ, carry-less folding for buffers of 256 bytes and more (that CPU's
 *   CRC32-instruction path alone is 'kwire-scalar', listed for tests and comparisons).
 * - 'native': @node-rs/crc32 (prebuilt binaries from the npm registry, no build step): one chain
 *   of CRC32 instructions, 5-6 GB/s, 140-180 ns per call on 100 B.
 * - 'js': crc-32's slice-by-16 JavaScript, 0.9-1.4 GB/s, where neither loads.
 * All give identical results (test/unit/records-crc.test.ts). KWIRE_CRC32C=kwire-scalar, =native
 * or =js forces one of the slower ones (for comparisons and tests).
 */
type Crc = (data: Uint8Array) => number;

const require = createRequire(import.meta.url);
const CHECK = Buffer.from('123456789');
const CHECK_VALUE = 0xe3069283;

function jsCrc(data: Uint8Array): number {
  return CRC32C.buf(data, 0) >>> 0;
}

type Addon = { hardware: boolean; vector?: boolean; crc32c?: Crc; crc32cScalar?: Crc };

/** The addon's two paths: `scalar` only where `crc` folds long buffers (otherwise they are one). */
function kwireCrc(): { crc: Crc; scalar: Crc | undefined } | undefined {
  const mod = loadAddon<Addon>('kwire_crc32c');
  const f = mod?.crc32c;
  // Refuse a binary that does not compute CRC-32C (or a CPU without the instruction).
  if (!mod?.hardware || f === undefined || f(CHECK) !== CHECK_VALUE) return undefined;
  const scalar = mod.vector === true && mod.crc32cScalar?.(CHECK) === CHECK_VALUE ? mod.crc32cScalar : undefined;
  return { crc: f, scalar };
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

const addon = kwireCrc();
const kwire = addon?.crc;
const kwireScalar = addon?.scalar;
const nodeRs = nodeRsCrc();
const forced = process.env.KWIRE_CRC32C;
const implementation: 'kwire' | 'kwire-scalar' | 'native' | 'js' =
  forced === 'js' ? 'js' : forced === 'kwire-scalar' && kwireScalar ? 'kwire-scalar' : kwire && forced !== 'native' ? 'kwire' : nodeRs ? 'native' : 'js';
const impl: Crc = implementation === 'kwire' ? kwire! : implementation === 'kwire-scalar' ? kwireScalar! : implementation === 'native' ? nodeRs! : jsCrc;

/**
 * Which implementation is in use: 'kwire' (our addon), 'kwire-scalar' (its CRC32-instruction path,
 * only when forced), 'native' (@node-rs/crc32) or 'js' (crc-32).
 */
export const crc32cImplementation = implementation;

export function crc32c(data: Uint8Array, start = 0, end = data.length): number {
  return impl(start === 0 && end === data.length ? data : data.subarray(start, end));
}

/** The JavaScript implementation, always (for tests and comparisons). */
export function crc32cJs(data: Uint8Array, start = 0, end = data.length): number {
  return jsCrc(start === 0 && end === data.length ? data : data.subarray(start, end));
}

/** Every implementation that loads here, whichever is in use (for tests and the benchmark). */
export const crc32cImplementations: Readonly<Partial<Record<'kwire' | 'kwire-scalar' | 'native' | 'js', Crc>>> = Object.freeze({
  ...(kwire ? { kwire } : {}),
  ...(kwireScalar ? { 'kwire-scalar': kwireScalar } : {}),
  ...(nodeRs ? { native: nodeRs } : {}),
  js: jsCrc,
});
