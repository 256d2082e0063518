import { compressFrameSync } from 'lz4-napi';
import { loadAddon } from '../native.js';
import type { BufferPool } from '../pool/buffer-pool.js';
import { compressionError, overLimit } from './errors.js';
import { allocOutput, freeOutput, type Decompressed } from './output.js';
import { xxhash32 } from './xxhash32.js';

/**
 * lz4 (codec 3): the LZ4 frame format (magic 04 22 4D 18), as Kafka's KafkaLZ4BlockOutputStream
 * writes it for magic v2 batches: FLG 0x60 (version 1, independent blocks, no checksums), BD 0x40
 * (64 KiB blocks), a correct header checksum (the broken pre-KIP-57 one only concerns magic v0
 * messages, which kwire refuses), and blocks stored uncompressed when LZ4 cannot shrink them.
 *
 * Compression goes through lz4-napi. Decompression does not: measured on this machine, lz4-napi's
 * decompressFrameSync runs at about 300 MB/s whatever the data (1 MB frames, ProducerPerformance
 * values or JSON), allocates a fresh output per call and has no output limit; the decoder below
 * runs at memory-copy speed on stored blocks (what Java writes for incompressible values) and
 * faster than lz4-napi on compressible ones, writes into a pooled buffer, and checks every length.
 * Compressed blocks go to kwire's own addon (native/lz4.c: one memcpy per literal run) where it was
 * built, else to decodeBlock below; the addon hands malformed blocks back to decodeBlock, so errors
 * read the same either way (`lz4Implementation` says which runs; KWIRE_LZ4=js forces JavaScript).
 *
 * Decoding first walks the frame (block header to block header) to check its structure and bound
 * its output: a stored block yields its own size, a compressed one at most min(block maximum,
 * 255 x its size), since one LZ4 input byte stands for at most 255 output bytes. A declared content
 * size, when present, is the bound instead. The output buffer is sized min(bound, limit), so the
 * limit is exact: a frame fails only if it really produces more than the limit.
 *
 * Checked like the Java reader: the header checksum always, block checksums when flagged; the
 * content checksum too when flagged (Java skips it; a stricter check costs nothing on Kafka's own
 * frames, which carry none). Dependent (linked) blocks are accepted: matches may reach back into
 * earlier blocks of the same frame, never before its start.
 */

const MAGIC = 0x184d2204;

function u32le(b: Uint8Array, o: number): number {
  return (b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16) | (b[o + 3]! << 24)) >>> 0;
}

interface FrameInfo {
  /** Most bytes the frame can produce (the content size when declared). */
  bound: number;
  /** Declared content size, -1 when absent. */
  contentSize: number;
}

/** Walks the single LZ4 frame in `src`; throws on a malformed frame. */
export function lz4FrameBound(src: Uint8Array): FrameInfo {
  const len = src.length;
  if (len < 7) throw compressionError(`lz4 frame of ${len} bytes is shorter than a frame header`, 0);
  const magic = u32le(src, 0);
  if (magic !== MAGIC) throw compressionError(`not an LZ4 frame (magic 0x${magic.toString(16)})`, 0);
  const flg = src[4]!;
  const bd = src[5]!;
  if (flg >>> 6 !== 1) throw compressionError(`unsupported LZ4 frame version ${flg >>> 6}`, 4);
  if ((flg & 0x02) !== 0 || (bd & 0x8f) !== 0) throw compressionError('reserved bits set in the LZ4 frame descriptor', 4);
  if ((flg & 0x01) !== 0) throw compressionError('LZ4 frame needs a dictionary (Kafka uses none)', 4);
  const blockId = (bd >>> 4) & 7;
  if (blockId < 4) throw compressionError(`invalid LZ4 block maximum size id ${blockId}`, 5);
  const blockMax = 2 ** (2 * blockId + 8);
  const blockChecksums = (flg & 0x10) !== 0;
  let p = 6;
  let contentSize = -1;
  if ((flg & 0x08) !== 0) {
    if (len - p < 8) throw compressionError('LZ4 frame header cut short', p);
    const lo = u32le(src, p);
    const hi = u32le(src, p + 4);
    // 2^53 and more is over every limit; Infinity says so without losing precision.
    contentSize = hi >= 0x200000 ? Infinity : hi * 0x100000000 + lo;
    p += 8;
  }
  if (p >= len) throw compressionError('LZ4 frame header cut short', p);
  const hc = (xxhash32(src, 4, p) >>> 8) & 0xff;
  if (src[p] !== hc) throw compressionError(`LZ4 frame header checksum 0x${src[p]!.toString(16)}, expected 0x${hc.toString(16)}`, p);
  p += 1;
  let bound = 0;
  for (;;) {
    if (len - p < 4) throw compressionError('LZ4 frame cut short before its end mark', p);
    const word = u32le(src, p);
    p += 4;
    if (word === 0) break;
    const stored = word >>> 31 === 1;
    const size = word & 0x7fffffff;
    if (size > blockMax) throw compressionError(`LZ4 block of ${size} bytes over the frame's ${blockMax}-byte maximum`, p - 4);
    const next = p + size + (blockChecksums ? 4 : 0);
    if (next > len) throw compressionError(`LZ4 block of ${size} bytes, ${len - p} left`, p - 4);
    bound += stored ? size : Math.min(blockMax, size * 255);
    p = next;
  }
  if ((flg & 0x04) !== 0) p += 4;
  if (p > len) throw compressionError('LZ4 content checksum cut short', len);
  if (p !== len) throw compressionError(`${len - p} bytes after the LZ4 frame`, p);
  return { bound: contentSize >= 0 ? contentSize : bound, contentSize };
}

/** Thrown inside decodeBlock when the output would pass `dEnd`; the caller words the error. */
const OVERFLOW = -1;

/**
 * Decodes one compressed block, src[s, end), to dst from d, never past dEnd and never reading
 * before frameStart. Returns the new output position, or OVERFLOW.
 */
function decodeBlock(src: Buffer, s: number, end: number, dst: Buffer, d: number, dEnd: number, frameStart: number): number {
  for (;;) {
    const token = src[s++]!;
    let literals = token >>> 4;
    if (literals === 15) {
      let b: number;
      do {
        if (s >= end) throw compressionError('LZ4 literal length runs past the block', s);
        b = src[s++]!;
        literals += b;
      } while (b === 255);
    }
    if (literals > end - s) throw compressionError(`LZ4 literals of ${literals} bytes, ${end - s} left in the block`, s);
    if (literals > dEnd - d) return OVERFLOW;
    if (literals < 32) {
      for (let i = 0; i < literals; i++) dst[d + i] = src[s + i]!;
    } else {
      src.copy(dst, d, s, s + literals);
    }
    s += literals;
    d += literals;
    // The last sequence of a block is literals only.
    if (s === end) return d;
    if (end - s < 2) throw compressionError('LZ4 match offset runs past the block', s);
    const offset = src[s]! | (src[s + 1]! << 8);
    s += 2;
    if (offset === 0 || offset > d - frameStart) throw compressionError(`LZ4 match from ${offset} bytes back, ${d - frameStart} written`, s - 2);
    let length = (token & 15) + 4;
    if (length === 19) {
      let b: number;
      do {
        if (s >= end) throw compressionError('LZ4 match length runs past the block', s);
        b = src[s++]!;
        length += b;
      } while (b === 255);
    }
    if (length > dEnd - d) return OVERFLOW;
    const from = d - offset;
    if (offset >= length && length >= 32) {
      dst.copyWithin(d, from, from + length);
    } else {
      // Overlapping matches repeat the last `offset` bytes: copy forward, byte by byte.
      for (let i = 0; i < length; i++) dst[d + i] = dst[from + i]!;
    }
    d += length;
    if (s >= end) throw compressionError('LZ4 block ends with a match (the last sequence must be literals)', s);
  }
}

type BlockDecoder = (src: Buffer, s: number, end: number, dst: Buffer, d: number, dEnd: number, frameStart: number) => number;

/** The addon's decoder, checked on a known block; malformed blocks are decoded again in JavaScript for the error. */
function nativeBlockDecoder(): BlockDecoder | undefined {
  const f = loadAddon<{ decodeBlock?: BlockDecoder }>('kwire_lz4')?.decodeBlock;
  if (f === undefined) return undefined;
  // "abc", then 6 bytes from 3 back, then "d": abcabcabcd.
  const block = Buffer.from([0x32, 0x61, 0x62, 0x63, 0x03, 0x00, 0x10, 0x64]);
  const out = Buffer.alloc(32);
  try {
    if (f(block, 0, block.length, out, 0, out.length, 0) !== 10 || out.toString('latin1', 0, 10) !== 'abcabcabcd') return undefined;
  } catch {
    return undefined;
  }
  return (src, s, end, dst, d, dEnd, frameStart) => {
    const r = f(src, s, end, dst, d, dEnd, frameStart);
    return r >= 0 ? r : decodeBlock(src, s, end, dst, d, dEnd, frameStart);
  };
}

/**
 * Words a block's overflow. The output was sized min(bound, limit) and bound is a true upper bound
 * unless the frame declares a content size, so running out of room there means: past the declared
 * size (corrupt), else past the limit. Running past one block's maximum is corrupt either way.
 */
function overflow(cappedByTotal: boolean, contentSize: number, maxBytes: number, blockMax: number, at: number): Error {
  if (!cappedByTotal) return compressionError(`LZ4 block decodes to more than the frame's ${blockMax}-byte block maximum`, at);
  if (contentSize >= 0) return compressionError(`LZ4 frame decodes to more than its declared ${contentSize} bytes`, at);
  return overLimit('lz4', `more than ${maxBytes}`, maxBytes);
}

/**
 * A frame that is one stored block (what Java writes when LZ4 cannot shrink a batch of random or
 * already-compressed values that fits one 64 KiB block, as with the default batch.size of 16 KiB):
 * its content is the block's own bytes, handed out as a view of `src` instead of copied (copying
 * stored blocks was 11% of kwire's CPU on the bench's 10 KB lz4 records, whose frames hold four
 * blocks and still copy). The view lives as long as `src` does, like an uncompressed batch's records;
 * the result's pool is null, so nothing is given back. Frames with checksums, a declared size
 * that differs, or more bytes than the limit take the general path, which words their errors.
 */
function singleStoredBlock(src: Buffer, p: number, flg: number, contentSize: number, maxBytes: number): Decompressed | null {
  if ((flg & 0x14) !== 0) return null;
  const word = u32le(src, p);
  if (word >>> 31 !== 1) return null;
  const size = word & 0x7fffffff;
  const start = p + 4;
  // lz4FrameBound walked the frame: the word after the block exists; 0 is the end mark.
  if (u32le(src, start + size) !== 0 || size > maxBytes || (contentSize >= 0 && contentSize !== size)) return null;
  return { buffer: src.subarray(start, start + size), length: size, pool: null };
}

function decompress(src: Buffer, maxBytes: number, pool: BufferPool | null, block: BlockDecoder): Decompressed {
  const { bound, contentSize } = lz4FrameBound(src);
  if (contentSize > maxBytes) throw overLimit('lz4', contentSize, maxBytes);
  const flg = src[4]!;
  let p = 7 + ((flg & 0x08) !== 0 ? 8 : 0);
  const only = singleStoredBlock(src, p, flg, contentSize, maxBytes);
  if (only !== null) return only;
  const cap = Math.min(bound, maxBytes);
  const out = allocOutput(pool, Math.max(1, cap));
  const blockMax = 2 ** (2 * ((src[5]! >>> 4) & 7) + 8);
  const blockChecksums = (flg & 0x10) !== 0;
  let d = 0;
  try {
    // The walk above vouched for the framing; only block contents are checked from here on.
    for (;;) {
      const word = u32le(src, p);
      p += 4;
      if (word === 0) break;
      const size = word & 0x7fffffff;
      const blockEnd = p + size;
      if (blockChecksums && xxhash32(src, p, blockEnd) !== u32le(src, blockEnd)) {
        throw compressionError('LZ4 block checksum mismatch', blockEnd);
      }
      const room = Math.min(cap, d + blockMax);
      if (word >>> 31 === 1) {
        if (size > room - d) throw overflow(room < d + blockMax, contentSize, maxBytes, blockMax, p);
        src.copy(out, d, p, blockEnd);
        d += size;
      } else if (size > 0) {
        const next = block(src, p, blockEnd, out, d, room, 0);
        if (next === OVERFLOW) throw overflow(room < d + blockMax, contentSize, maxBytes, blockMax, p);
        d = next;
      }
      p = blockEnd + (blockChecksums ? 4 : 0);
    }
    if (contentSize >= 0 && d !== contentSize) throw compressionError(`LZ4 frame declares ${contentSize} bytes of content, decoded ${d}`, p);
    if ((flg & 0x04) !== 0 && xxhash32(out, 0, d) !== u32le(src, p)) throw compressionError('LZ4 content checksum mismatch', p);
  } catch (err) {
    freeOutput(pool, out);
    throw err;
  }
  return { buffer: out, length: d, pool };
}

const nativeBlocks = nativeBlockDecoder();
const useNative = nativeBlocks !== undefined && process.env.KWIRE_LZ4 !== 'js';
const chosen: BlockDecoder = useNative ? nativeBlocks : decodeBlock;

/** Which block decoder runs: 'kwire' (the addon, native/lz4.c) or 'js'. */
export const lz4Implementation: 'kwire' | 'js' = useNative ? 'kwire' : 'js';

/** Decompresses one LZ4 frame into at most maxBytes, in a buffer from `pool` when given. */
export function lz4Decompress(src: Buffer, maxBytes: number, pool: BufferPool | null): Decompressed {
  return decompress(src, maxBytes, pool, chosen);
}

type Lz4Decompress = typeof lz4Decompress;

/** Every decoder that loads here, whichever is in use (for tests and the benchmark). */
export const lz4Implementations: Readonly<Partial<Record<'kwire' | 'js', Lz4Decompress>>> = Object.freeze({
  ...(nativeBlocks ? { kwire: (src: Buffer, maxBytes: number, pool: BufferPool | null) => decompress(src, maxBytes, pool, nativeBlocks) } : {}),
  js: (src: Buffer, maxBytes: number, pool: BufferPool | null) => decompress(src, maxBytes, pool, decodeBlock),
});

export function lz4Compress(data: Buffer): Buffer {
  return compressFrameSync(data);
}
