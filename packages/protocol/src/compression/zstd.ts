import binding from 'zstd-napi/binding.js';
import { compress as zstdCompressOnce } from 'zstd-napi';
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
 * One decompression context is kept for the process and reset before each use: all calls here are
 * synchronous, so it is never shared by two decodes at once.
 */

let dctx: InstanceType<typeof binding.DCtx> | undefined;
const scratch = Buffer.allocUnsafeSlow(1);
const MIN_GUESS = 64 * 1024;

function context(): InstanceType<typeof binding.DCtx> {
  dctx ??= new binding.DCtx();
  dctx.reset(binding.ResetDirective.sessionOnly);
  return dctx;
}

export function zstdDecompress(src: Buffer, maxBytes: number, pool: BufferPool | null): Decompressed {
  let declared: number | null;
  try {
    declared = binding.getFrameContentSize(src);
  } catch (err) {
    throw compressionError(`corrupt zstd frame header: ${(err as Error).message}`, 0, err);
  }
  if (declared !== null && declared > maxBytes) throw overLimit('zstd', declared, maxBytes);
  const ctx = context();
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
    throw compressionError(`corrupt zstd data: ${(err as Error).message}`, inPos, err);
  }
  return { buffer: out, length: outLen, pool };
}

export function zstdCompress(data: Buffer, level = 3): Buffer {
  return zstdCompressOnce(data, { compressionLevel: level });
}
