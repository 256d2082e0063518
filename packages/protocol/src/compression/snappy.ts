import snappyjs from 'snappyjs';
import type { BufferPool } from '../pool/buffer-pool.js';
import { compressionError, overLimit } from './errors.js';
import { allocOutput, freeOutput, type Decompressed } from './output.js';

/**
 * snappy (codec 2), in the two shapes Kafka meets:
 *
 *  - xerial snappy-java stream framing, what the Java client writes (SnappyOutputStream):
 *      82 'S' 'N' 'A' 'P' 'P' 'Y' 00 · int32 version · int32 min compatible version
 *      then blocks: int32 BE compressed length · one raw snappy block
 *    A concatenated stream may repeat the 16-byte header between blocks.
 *  - one raw snappy block with no framing, which Java's SnappyInputStream also accepts (its
 *    fallback when the first 16 bytes are not the header) and some non-Java producers write.
 *
 * Compression goes through snappyjs. Decompression does not: snappyjs's decoder cannot write into a
 * caller's buffer at an offset and report how much it wrote, and on a truncated copy tag it reads
 * past its input and emits zeros instead of failing. So decoding uses the small block decoder
 * below, which checks every tag against both ends and insists that each block produces exactly
 * the length it declares. Every block's declared length is read first, so the total is checked
 * against the limit and the output taken from the pool once, at its final size.
 */

const MAGIC = [0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00] as const;
const HEADER_SIZE = 16;
/** snappy-java's default block: 32 KiB of uncompressed input per block. */
const XERIAL_BLOCK_SIZE = 32 * 1024;

function hasHeaderAt(src: Uint8Array, at: number): boolean {
  if (src.length - at < HEADER_SIZE) return false;
  for (let i = 0; i < 8; i++) if (src[at + i] !== MAGIC[i]) return false;
  return true;
}

/** Is `src` xerial-framed (as opposed to one raw block)? */
export function isXerialSnappy(src: Uint8Array): boolean {
  return hasHeaderAt(src, 0);
}

/**
 * The most output one byte of a raw block can stand for: a 3-byte copy tag yields at most 64 bytes
 * (the densest element), so a block declaring more than 22 x its own size is corrupt, and is
 * refused before its output is allocated (else 10 hostile bytes could claim the whole limit).
 */
const MAX_EXPANSION = 22;

function checkExpansion(declared: number, blockBytes: number, at: number): void {
  if (declared > blockBytes * MAX_EXPANSION) {
    throw compressionError(`snappy block of ${blockBytes} bytes declares ${declared} bytes, more than any snappy block that size can produce`, at);
  }
}

// Position after the last varint read by blockLength (synchronous use only).
let varintEnd = 0;

/** The uncompressed length a raw block declares (varint of at most 32 bits) at src[at]. */
function blockLength(src: Uint8Array, at: number, end: number): number {
  let value = 0;
  for (let i = 0; i < 5; i++) {
    if (at + i >= end) throw compressionError('snappy block length runs past the end of the block', at);
    const b = src[at + i]!;
    if (i === 4 && b > 0x0f) throw compressionError('snappy block length longer than 32 bits', at);
    value += (b & 0x7f) * 2 ** (7 * i);
    if (b < 0x80) {
      varintEnd = at + i + 1;
      return value;
    }
  }
  /* c8 ignore next */
  throw compressionError('snappy block length longer than 32 bits', at);
}

/**
 * Decodes the tags of one raw block, src[s, end), into dst[d, dEnd); throws unless the tags fill
 * exactly that range. Literal and copy lengths are checked against both buffers before any byte
 * moves, so a hostile block can neither read nor write out of bounds nor leave stale bytes behind.
 */
function decodeTags(src: Buffer, s: number, end: number, dst: Buffer, d: number, dEnd: number): void {
  const dStart = d;
  while (s < end) {
    const tag = src[s++]!;
    const kind = tag & 3;
    let len: number;
    if (kind === 0) {
      // Literal: length-1 in the tag's top 6 bits, or in the next 1-4 bytes (little-endian).
      len = tag >>> 2;
      if (len >= 60) {
        const extra = len - 59;
        if (end - s < extra) throw compressionError('snappy literal length runs past the block', s - 1);
        len = src[s]!;
        if (extra > 1) len |= src[s + 1]! << 8;
        if (extra > 2) len |= src[s + 2]! << 16;
        if (extra > 3) len += src[s + 3]! * 0x1000000;
        s += extra;
      }
      len += 1;
      if (len > end - s) throw compressionError(`snappy literal of ${len} bytes, ${end - s} left in the block`, s);
      if (len > dEnd - d) throw compressionError('snappy block produces more than its declared length', s);
      if (len <= 16) {
        for (let i = 0; i < len; i++) dst[d + i] = src[s + i]!;
      } else {
        src.copy(dst, d, s, s + len);
      }
      s += len;
      d += len;
      continue;
    }
    let offset: number;
    if (kind === 1) {
      if (s >= end) throw compressionError('snappy copy tag runs past the block', s - 1);
      len = ((tag >>> 2) & 7) + 4;
      offset = ((tag >>> 5) << 8) | src[s++]!;
    } else if (kind === 2) {
      if (end - s < 2) throw compressionError('snappy copy tag runs past the block', s - 1);
      len = (tag >>> 2) + 1;
      offset = src[s]! | (src[s + 1]! << 8);
      s += 2;
    } else {
      if (end - s < 4) throw compressionError('snappy copy tag runs past the block', s - 1);
      len = (tag >>> 2) + 1;
      offset = (src[s]! | (src[s + 1]! << 8) | (src[s + 2]! << 16)) + src[s + 3]! * 0x1000000;
      s += 4;
    }
    if (offset === 0 || offset > d - dStart) throw compressionError(`snappy copy from ${offset} bytes back, ${d - dStart} written`, s);
    if (len > dEnd - d) throw compressionError('snappy block produces more than its declared length', s);
    const from = d - offset;
    if (offset >= len && len > 16) {
      dst.copyWithin(d, from, from + len);
    } else {
      // Overlapping copies repeat the last `offset` bytes: byte order matters, so copy forward.
      for (let i = 0; i < len; i++) dst[d + i] = dst[from + i]!;
    }
    d += len;
  }
  if (d !== dEnd) throw compressionError(`snappy block produced ${d - dStart} bytes but declares ${dEnd - dStart}`, end);
}

export function snappyDecompress(src: Buffer, maxBytes: number, pool: BufferPool | null): Decompressed {
  const len = src.length;
  if (!hasHeaderAt(src, 0)) {
    const total = blockLength(src, 0, len);
    if (total > maxBytes) throw overLimit('snappy', total, maxBytes);
    checkExpansion(total, len, 0);
    const out = allocOutput(pool, total);
    try {
      decodeTags(src, varintEnd, len, out, 0, total);
    } catch (err) {
      freeOutput(pool, out);
      throw err;
    }
    return { buffer: out, length: total, pool };
  }

  // First pass: walk the blocks, checking their framing and adding up what they declare.
  let total = 0;
  let p = HEADER_SIZE;
  while (p < len) {
    if (len - p < 4) throw compressionError(`xerial snappy block length cut short (${len - p} bytes)`, p);
    if (src[p] === 0x82 && hasHeaderAt(src, p)) {
      p += HEADER_SIZE;
      continue;
    }
    const blockSize = src.readInt32BE(p);
    if (blockSize <= 0 || blockSize > len - p - 4) {
      throw compressionError(`xerial snappy block of ${blockSize} bytes, ${len - p - 4} left`, p);
    }
    const declared = blockLength(src, p + 4, p + 4 + blockSize);
    checkExpansion(declared, blockSize, p + 4);
    total += declared;
    if (total > maxBytes) throw overLimit('snappy', `more than ${maxBytes}`, maxBytes);
    p += 4 + blockSize;
  }

  const out = allocOutput(pool, total);
  try {
    let d = 0;
    p = HEADER_SIZE;
    while (p < len) {
      if (src[p] === 0x82 && hasHeaderAt(src, p)) {
        p += HEADER_SIZE;
        continue;
      }
      const blockEnd = p + 4 + src.readInt32BE(p);
      const n = blockLength(src, p + 4, blockEnd);
      decodeTags(src, varintEnd, blockEnd, out, d, d + n);
      d += n;
      p = blockEnd;
    }
  } catch (err) {
    freeOutput(pool, out);
    throw err;
  }
  return { buffer: out, length: total, pool };
}

/** xerial-framed snappy, as the Java client writes it (32 KiB blocks). */
export function snappyCompress(data: Buffer): Buffer {
  const parts: Buffer[] = [];
  const header = Buffer.allocUnsafe(HEADER_SIZE);
  for (let i = 0; i < 8; i++) header[i] = MAGIC[i]!;
  header.writeInt32BE(1, 8);
  header.writeInt32BE(1, 12);
  parts.push(header);
  for (let at = 0; at < data.length; at += XERIAL_BLOCK_SIZE) {
    const block = snappyjs.compress(data.subarray(at, Math.min(data.length, at + XERIAL_BLOCK_SIZE)));
    const size = Buffer.allocUnsafe(4);
    size.writeInt32BE(block.length, 0);
    parts.push(size, block);
  }
  return Buffer.concat(parts);
}

/** One raw snappy block, no framing (what some non-Java producers send). */
export function snappyCompressRaw(data: Buffer): Buffer {
  return snappyjs.compress(data);
}
