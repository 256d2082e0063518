/**
 * Zig-zag varint helpers for the record encoder and for code that wants them standalone. The
 * decoder's hot loop has its own inlined readers (record-batch.ts) that report errors with the
 * record path; these are the plain forms.
 */

/** Zig-zag encoding of an int32, as an unsigned 32-bit number. */
export function zigzag32(v: number): number {
  return ((v << 1) ^ (v >> 31)) >>> 0;
}

/** Inverse of zigzag32. */
export function unzigzag32(u: number): number {
  return (u >>> 1) ^ -(u & 1);
}

/** Zig-zag encoding of an int64, as an unsigned 64-bit bigint. */
export function zigzag64(v: bigint): bigint {
  return BigInt.asUintN(64, (v << 1n) ^ (v >> 63n));
}

/** Inverse of zigzag64. */
export function unzigzag64(u: bigint): bigint {
  return BigInt.asIntN(64, (u >> 1n) ^ -(u & 1n));
}

/** Bytes the zig-zag varlong encoding of v (int64) takes: 1..10. */
export function sizeOfVarlong(v: bigint | number): number {
  let u = zigzag64(BigInt(v));
  let n = 1;
  while (u >= 0x80n) {
    u >>= 7n;
    n++;
  }
  return n;
}

export { sizeOfUVarint, sizeOfVarint } from '../primitives/writer.js';
