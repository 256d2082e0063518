import { gunzipSync, gzipSync } from 'node:zlib';
import { compressionError, overLimit } from './errors.js';

/**
 * gzip (codec 1). Java writes standard RFC 1952 members through GZIPOutputStream; node:zlib reads
 * them, including several members back to back.
 *
 * zlib has no synchronous "inflate into this buffer" call, so the output is zlib's own Buffer, not
 * a pooled one. maxOutputLength makes zlib stop as soon as the output would pass the limit, so a
 * gzip bomb costs at most `maxBytes` of memory before it is refused.
 */
export function gzipCompress(data: Uint8Array, level?: number): Buffer {
  return gzipSync(data, level === undefined ? undefined : { level });
}

export function gzipDecompress(src: Uint8Array, maxBytes: number): Buffer {
  try {
    // maxOutputLength must be >= 1; a limit of 0 still refuses any non-empty output below.
    const out = gunzipSync(src, { maxOutputLength: Math.max(1, maxBytes) });
    if (out.length > maxBytes) throw overLimit('gzip', out.length, maxBytes);
    return out;
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE') throw overLimit('gzip', `more than ${maxBytes}`, maxBytes);
    if ((err as { reason?: unknown }).reason === 'compression') throw err;
    throw compressionError(`corrupt gzip data: ${(err as Error).message}`, undefined, err);
  }
}
