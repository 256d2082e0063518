import type { BufferPool } from '../pool/buffer-pool.js';
import { compressionError } from './errors.js';
import { gzipCompress, gzipDecompress } from './gzip.js';
import { lz4Compress, lz4Decompress } from './lz4.js';
import type { Decompressed } from './output.js';
import { snappyCompress, snappyDecompress } from './snappy.js';
import { zstdCompress, zstdDecompress } from './zstd.js';

export type { Decompressed } from './output.js';
export { gzipCompress, gzipDecompress } from './gzip.js';
export { isXerialSnappy, snappyCompress, snappyCompressRaw, snappyDecompress } from './snappy.js';
export { lz4Compress, lz4Decompress, lz4FrameBound, lz4Implementation, lz4Implementations } from './lz4.js';
export { xxhash32 } from './xxhash32.js';
export { zstdBackend, zstdCompress, zstdDecompress } from './zstd.js';

/** Codec ids, bits 0-2 of the batch attributes. 5-7 are unassigned. */
export const CompressionCodec = { none: 0, gzip: 1, snappy: 2, lz4: 3, zstd: 4 } as const;
/** The codec names, as in the producer's compression.type. */
export type CompressionType = keyof typeof CompressionCodec;
/** Index = codec id. */
export const COMPRESSION_TYPES: readonly CompressionType[] = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];

/** Default limit on one batch's decompressed records: 64 MiB. */
export const DEFAULT_MAX_DECOMPRESSED_BYTES = 64 * 1024 * 1024;

export function compressionCodecId(type: CompressionType | number): number {
  if (typeof type === 'number') {
    if (type >= 0 && type <= 4 && Number.isInteger(type)) return type;
  } else {
    const id = CompressionCodec[type];
    if (id !== undefined) return id;
  }
  throw compressionError(`unknown compression codec ${String(type)}`);
}

/**
 * Decompresses `src` with codec `codec` (1-4). The output is at most maxBytes long, else this
 * throws KafkaProtocolError reason 'compression', as it does for corrupt input or an unknown codec.
 * snappy, lz4 and zstd write into a buffer from `pool` (null: a fresh one), which the caller then
 * owns; gzip returns zlib's own buffer (pool null in the result).
 */
export function decompress(codec: number, src: Buffer, maxBytes: number, pool: BufferPool | null): Decompressed {
  switch (codec) {
    case 1: {
      const out = gzipDecompress(src, maxBytes);
      return { buffer: out, length: out.length, pool: null };
    }
    case 2:
      return snappyDecompress(src, maxBytes, pool);
    case 3:
      return lz4Decompress(src, maxBytes, pool);
    case 4:
      return zstdDecompress(src, maxBytes, pool);
    default:
      throw compressionError(`unknown compression codec ${codec}`);
  }
}

/** Compresses `data` as a record batch's records section with codec `codec` (0 returns data). */
export function compress(codec: CompressionType | number, data: Buffer, level?: number): Buffer {
  switch (compressionCodecId(codec)) {
    case 0:
      return data;
    case 1:
      return gzipCompress(data, level);
    case 2:
      return snappyCompress(data);
    case 3:
      return lz4Compress(data);
    default:
      return zstdCompress(data, level);
  }
}
