import { createRequire } from 'node:module';
import * as zlib from 'node:zlib';
import type * as ZstdBinding from 'zstd-napi/binding.js';
import type { BufferPool } from '../pool/buffer-pool.js';
import { compressionError, overLimit } from './errors.js';
import { allocOutput, freeOutput, type Decompressed } from './output.js';

/**
 * zstd (codec 4): standard zstd frames. Java writes them with zstd-jni's streaming API, so the
 * frame header need not carry the content size: decoding streams into a pooled buffer (sized from
 * the content size when the header has it, else guessed from the input) and, when that fills up,
 * moves to a buffer twice as large, never past the limit. Once the output reaches the limit, one
 * more decode step into a 1-byte scratch tells whether the stream really has more to give (over
 * the limit) or only its epilogue (checksum, end of frame) is left. Several frames back to back
 * are decoded one after another, as zstd-jni's reader does.
 *
 * Memory is bounded before the decoder runs: the declared content size against the limit, and the
 * window the decoder would allocate (Window_Descriptor, RFC 8878 §3.1.1.1.2) against
 * max(limit, 8 MiB): a window larger than what the batch may decompress to is memory no honest
 * batch needs, except below 8 MiB, the window every zstd decoder is expected to support (zstd-jni
 * at level 3 writes 2 MiB windows whatever the batch size). The first frame's header is read here,
 * for a message that names the limit; later frames are held to the same bound by the decoder's
 * windowLogMax.
 *
 * One decompression context is kept for the process and reset before each use: all calls here are
 * synchronous, so it is never shared by two decodes at once.
 */

type Binding = typeof ZstdBinding.default;

/**
 * The zstd decoder, loaded on first use so that the package loads (and reads uncompressed, gzip,
 * snappy and lz4 data) where the zstd-napi addon did not build: zstd-napi when it loads, else
 * Node's own zstd (node:zlib, Node 22.15+), else none (a zstd batch is then an error naming the
 * codec and what to install).
 */
type ZstdBackend = { kind: 'addon'; binding: Binding; compress: (data: Buffer, options: { compressionLevel: number }) => Buffer } | { kind: 'node' } | { kind: 'none'; why: string };
let backend: ZstdBackend | undefined;

interface NodeZstd {
  zstdDecompressSync?: (buf: Uint8Array, options?: { maxOutputLength?: number }) => Buffer;
  zstdCompressSync?: (buf: Uint8Array, options?: { params?: Record<number, number> }) => Buffer;
  constants: Record<string, number>;
}

export function zstdBackend(): ZstdBackend {
  if (backend) return backend;
  const require = createRequire(import.meta.url);
  try {
    backend = { kind: 'addon', binding: require('zstd-napi/binding.js') as Binding, compress: (require('zstd-napi') as { compress: (d: Buffer, o: { compressionLevel: number }) => Buffer }).compress };
  } catch (err) {
    const z = zlib as unknown as NodeZstd;
    backend = typeof z.zstdDecompressSync === 'function' ? { kind: 'node' } : { kind: 'none', why: (err as Error).message.split('\n')[0]! };
  }
  return backend;
}

function noZstd(why: string, offset: number): Error {
  return compressionError(`zstd: no decoder here (the zstd-napi addon did not load: ${why}; and this Node has no zstd in node:zlib): reinstall so that zstd-napi builds, or run Node 22.15+`, offset);
}

let dctx: InstanceType<Binding['DCtx']> | undefined;
const scratch = Buffer.allocUnsafeSlow(1);
const MIN_GUESS = 64 * 1024;
const FRAME_MAGIC = 0xfd2fb528;
/** RFC 8878 §3.1.1.1.2: decoders should support windows up to 8 MiB. */
const ALWAYS_ALLOWED_WINDOW = 8 * 1024 * 1024;

/** The largest window a frame may ask for under `maxBytes`. */
export function zstdWindowLimit(maxBytes: number): number {
  return Math.max(maxBytes, ALWAYS_ALLOWED_WINDOW);
}

/**
 * The window size the zstd frame at src[0] asks for, from its header: the content size for a
 * single-segment frame, else what the Window_Descriptor says; null when src does not start with a
 * zstd frame header (a skippable frame, or too few bytes: the decoder words those).
 */
export function zstdFrameWindow(src: Uint8Array): number | null {
  if (src.length < 6 || (src[0]! | (src[1]! << 8) | (src[2]! << 16) | (src[3]! << 24)) >>> 0 !== FRAME_MAGIC) return null;
  const descriptor = src[4]!;
  if ((descriptor & 0x20) !== 0) return null; // single segment: the window is the content size, checked as such
  const wd = src[5]!;
  const windowLog = 10 + (wd >>> 3);
  const base = 2 ** windowLog;
  return base + (base / 8) * (wd & 7);
}

function context(binding: Binding, maxBytes: number): InstanceType<Binding['DCtx']> {
  dctx ??= new binding.DCtx();
  dctx.reset(binding.ResetDirective.sessionOnly);
  // Later frames of the same input: the decoder itself refuses windows over the bound.
  dctx.setParameter(binding.DParameter.windowLogMax, Math.min(31, Math.max(10, Math.floor(Math.log2(zstdWindowLimit(maxBytes))))));
  return dctx;
}

/** `window` undefined: a later frame, refused by the decoder itself (windowLogMax). */
function windowOverLimit(window: number | undefined, maxBytes: number, offset: number): Error {
  return compressionError(
    `zstd frame asks for ${window === undefined ? 'a window' : `a ${window}-byte window`}, more than the ${zstdWindowLimit(maxBytes)} bytes allowed under the limit of ${maxBytes} bytes (maxDecompressedBytes)`,
    offset,
  );
}

export function zstdDecompress(src: Buffer, maxBytes: number, pool: BufferPool | null): Decompressed {
  const b = zstdBackend();
  if (b.kind === 'none') throw noZstd(b.why, 0);
  const window = zstdFrameWindow(src);
  if (window !== null && window > zstdWindowLimit(maxBytes)) throw windowOverLimit(window, maxBytes, 5);
  if (b.kind === 'node') return nodeDecompress(src, maxBytes);
  const binding = b.binding;
  let declared: number | null;
  try {
    declared = binding.getFrameContentSize(src);
  } catch (err) {
    throw compressionError(`corrupt zstd frame header: ${(err as Error).message}`, 0, err);
  }
  if (declared !== null && declared > maxBytes) throw overLimit('zstd', declared, maxBytes);
  const ctx = context(binding, maxBytes);
  let want = declared !== null ? declared : Math.min(maxBytes, Math.max(MIN_GUESS, src.length * 4));
  let out = allocOutput(pool, Math.max(1, want));
  let cap = Math.min(out.length, maxBytes);
  let outLen = 0;
  let inPos = 0;
  try {
    for (;;) {
      if (outLen === cap) {
        if (cap >= maxBytes) {
          const [ret, produced, consumed] = ctx.decompressStream(scratch, src.subarray(inPos));
          if (produced > 0) throw overLimit('zstd', `more than ${maxBytes}`, maxBytes);
          inPos += consumed;
          if (ret === 0 && inPos === src.length) break;
          if (consumed === 0) throw compressionError('zstd stream ends in the middle of a frame', inPos);
          continue;
        }
        want = Math.min(maxBytes, cap * 2);
        const bigger = allocOutput(pool, want);
        out.copy(bigger, 0, 0, outLen);
        freeOutput(pool, out);
        out = bigger;
        cap = Math.min(out.length, maxBytes);
      }
      const [ret, produced, consumed] = ctx.decompressStream(out.subarray(outLen, cap), src.subarray(inPos));
      outLen += produced;
      inPos += consumed;
      if (ret === 0) {
        // End of a frame, fully flushed: done, or another frame follows.
        if (inPos === src.length) break;
        continue;
      }
      // Room left and no input left, yet the frame is not finished: the input is cut short.
      if (outLen < cap && inPos === src.length) throw compressionError('zstd stream ends in the middle of a frame', inPos);
      if (produced === 0 && consumed === 0 && outLen < cap) throw compressionError('zstd decoder made no progress', inPos);
    }
  } catch (err) {
    freeOutput(pool, out);
    if ((err as { reason?: unknown }).reason === 'compression') throw err;
    if (/too much memory/i.test((err as Error).message)) throw windowOverLimit(undefined, maxBytes, inPos);
    throw compressionError(`corrupt zstd data: ${(err as Error).message}`, inPos, err);
  }
  return { buffer: out, length: outLen, pool };
}

/**
 * Node's own zstd (node:zlib): bounded by maxOutputLength (Node stops and throws past it), a fresh
 * buffer per batch (no pool: the fallback is for loading everywhere, the addon for speed).
 */
function nodeDecompress(src: Buffer, maxBytes: number): Decompressed {
  const z = zlib as unknown as NodeZstd;
  let out: Buffer;
  try {
    out = z.zstdDecompressSync!(src, { maxOutputLength: Math.max(1, maxBytes) });
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE' || /maxOutputLength|buffer.*(too large|size)/i.test((err as Error).message)) {
      throw overLimit('zstd', `more than ${maxBytes}`, maxBytes);
    }
    throw compressionError(`corrupt zstd data: ${(err as Error).message}`, 0, err);
  }
  return { buffer: out, length: out.length, pool: null };
}

export function zstdCompress(data: Buffer, level = 3): Buffer {
  const b = zstdBackend();
  if (b.kind === 'addon') return b.compress(data, { compressionLevel: level });
  if (b.kind === 'node') {
    const z = zlib as unknown as NodeZstd;
    return z.zstdCompressSync!(data, { params: { [z.constants.ZSTD_c_compressionLevel!]: level } });
  }
  throw noZstd(b.why, 0);
}
