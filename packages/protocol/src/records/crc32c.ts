import { createRequire } from 'node:module';
import CRC32C from 'crc-32/crc32c.js';

/**
 * CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the record batch checksum, as an unsigned
 * 32-bit number.
 *
 * Checking it is most of the cost of decoding an uncompressed batch, so kwire uses the native
 * @node-rs/crc32 (hardware CRC32C instructions; prebuilt binaries from the npm registry, no build
 * step) when it loads: 5.6-6 GB/s here, against 0.9-1.4 GB/s for crc-32's slice-by-16 JavaScript
 * (packages/bench/src/micro/crc-choice.ts). crc-32 stays as the fallback for platforms without a
 * prebuilt binary; both give identical results (test/unit/records-crc.test.ts).
 */
type Crc = (data: Uint8Array) => number;

function jsCrc(data: Uint8Array): number {
  return CRC32C.buf(data, 0) >>> 0;
}

function nativeCrc(): Crc | undefined {
  if (process.env.KWIRE_CRC32C === 'js') return undefined;
  try {
    const mod = createRequire(import.meta.url)('@node-rs/crc32') as { crc32c(input: Buffer | Uint8Array, initial?: number): number };
    const probe = Buffer.from('123456789');
    // The standard check value: refuse a binary that does not compute CRC-32C.
    if ((mod.crc32c(probe) >>> 0) !== 0xe3069283) return undefined;
    return (data) => mod.crc32c(data) >>> 0;
  } catch {
    return undefined;
  }
}

const native = nativeCrc();
const impl: Crc = native ?? jsCrc;

/** Which implementation is in use: 'native' (@node-rs/crc32) or 'js' (crc-32). */
export const crc32cImplementation: 'native' | 'js' = native ? 'native' : 'js';

export function crc32c(data: Uint8Array, start = 0, end = data.length): number {
  return impl(start === 0 && end === data.length ? data : data.subarray(start, end));
}

/** The JavaScript implementation, always (for tests and comparisons). */
export function crc32cJs(data: Uint8Array, start = 0, end = data.length): number {
  return jsCrc(start === 0 && end === data.length ? data : data.subarray(start, end));
}
