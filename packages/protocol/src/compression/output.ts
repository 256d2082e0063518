import type { BufferPool } from '../pool/buffer-pool.js';

/**
 * The result of a decompression: `buffer[0, length)` holds the bytes. When `pool` is set, the
 * buffer came from that pool and whoever holds this result owns it and must give it back with
 * pool.release(buffer) (see the ownership rule in pool/buffer-pool.ts). When `pool` is null the
 * buffer was allocated by the codec (gzip, or any codec called without a pool) and is simply
 * dropped, or it is a view of the input (an LZ4 frame of one stored block), valid while the input is.
 */
export interface Decompressed {
  buffer: Buffer;
  length: number;
  pool: BufferPool | null;
}

/** A buffer of at least n bytes: from the pool if there is one, else a fresh unzeroed one. */
export function allocOutput(pool: BufferPool | null, n: number): Buffer {
  return pool !== null ? pool.acquire(n) : Buffer.allocUnsafeSlow(n);
}

export function freeOutput(pool: BufferPool | null, buf: Buffer): void {
  if (pool !== null) pool.release(buf);
}
