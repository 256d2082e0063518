// Finished offsets beyond the commit point, kept in a partition's OffsetCommit metadata (issue 31).
//
// With records handled concurrently, a partition's commit point is the first unfinished offset;
// records after it may already be finished. Writing those into the commit's metadata lets the
// next owner (after a restart or a rebalance) skip them instead of handling them again.
//
// The string, all ASCII so that its length in chars is its length in bytes, which is what the
// broker compares with offset.metadata.max.bytes:
//
//   kw1 <form> ':' <base> ':' <payload> ':' <check>
//
//   form     'b' bitmap, 'r' run lengths; upper case ('B', 'R') when the payload is deflate-raw
//            compressed (kept only when that is smaller)
//   base     the commit point in decimal, canonical (no sign, no leading zero): the first
//            unfinished offset, so by definition not finished; offsets are relative to it
//   payload  base64url without padding, over offsets base+1 .. highest finished:
//            bitmap: bit i (least significant bit first in each byte) is offset base+1+i; the
//            last byte is non-zero (the highest finished offset is in it)
//            run lengths: unsigned LEB128 varints alternating unfinished, finished run lengths,
//            starting at base+1 and ending with a finished run; the first unfinished run may be
//            empty and is written as is, every other run is at least 1 long and written minus 1
//   check    CRC-32C of every char before it, 4 bytes big-endian in base64url (6 chars), so that
//            truncated or garbled metadata reads as corrupt rather than as other offsets
//
// Decoding trusts nothing: its work and memory are bounded by the largest span any encoding of
// ours can carry (maxSpan of 64 KiB), whatever the string claims.
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { crc32c } from '@kwire/protocol';

/** The encoding's version prefix: metadata that does not start with it is not ours. */
export const FINISHED_METADATA_PREFIX = 'kw1';
/** The broker's offset.metadata.max.bytes default. */
export const DEFAULT_METADATA_MAX_BYTES = 4096;

const MAX_OFFSET = (1n << 63n) - 1n;
/** Prefix, form, ':', a 19-digit base, ':', ':', the 6-char check: everything but the payload. */
const HEADER_MAX_CHARS = FINISHED_METADATA_PREFIX.length + 1 + 1 + 19 + 1 + 1 + 6;
/**
 * The largest metadata decoding accepts. Decoding does not know the broker's
 * offset.metadata.max.bytes, so it bounds its work by one generous limit; encoding refuses spans
 * beyond what this limit can carry, so everything we write is also readable.
 */
const MAX_METADATA_CHARS = 64 * 1024;
/** Bitmap bytes that fit in `chars` chars of base64url (4 chars carry 3 bytes). */
const bytesIn = (chars: number): number => Math.floor((3 * chars) / 4);
/** The longest payload (before base64url, after inflating) of anything we write. */
const MAX_PAYLOAD_BYTES = bytesIn(MAX_METADATA_CHARS - HEADER_MAX_CHARS);
/** The largest span anything we write covers: 393,024 offsets. */
const MAX_DECODED_SPAN = 8 * MAX_PAYLOAD_BYTES;
/** A run is at most MAX_DECODED_SPAN (< 2^21) long, so a longer varint is corrupt. */
const MAX_VARINT_BYTES = 3;
const BASE64URL = /^[A-Za-z0-9_-]*$/;
const CANONICAL_BASE = /^(?:0|[1-9][0-9]{0,18})$/;

/**
 * The largest span (offsets after the base, i.e. highest finished offset - base) for which ANY set
 * of finished offsets is guaranteed to encode within maxBytes.
 *
 * Why it holds: the encoder writes the smallest of the bitmap, the run lengths and their deflated
 * forms, so a payload is never longer than the bitmap, ceil(span / 8) bytes. With 8 * floor(3 P /
 * 4) bits, P = maxBytes - 32, the bitmap's base64url takes at most P chars, and 32 chars is the
 * header with the longest base (19 digits). Capped at the span decoding accepts (393,024).
 */
export function maxSpan(maxBytes = DEFAULT_METADATA_MAX_BYTES): number {
  const payloadChars = Math.floor(maxBytes) - HEADER_MAX_CHARS;
  if (!(payloadChars > 0)) return 0;
  return Math.min(8 * bytesIn(payloadChars), MAX_DECODED_SPAN);
}

/**
 * Encodes `finished` (offsets > base, strictly increasing, bigint) relative to `base` (the commit
 * point: the first unfinished offset).
 * Returns null when `finished` is empty. Throws RangeError if the result would exceed maxBytes
 * (callers keep the span within maxSpan(maxBytes) so this never happens).
 */
export function encodeFinished(base: bigint, finished: readonly bigint[], maxBytes = DEFAULT_METADATA_MAX_BYTES): string | null {
  const n = finished.length;
  if (base < 0n || base > MAX_OFFSET) throw new RangeError(`base ${base} is not an offset`);
  if (n === 0) return null;
  const highest = finished[n - 1]!;
  if (highest > MAX_OFFSET) throw new RangeError(`finished offset ${highest} is beyond 2^63-1`);
  const spanBig = highest - base;
  if (spanBig > BigInt(MAX_DECODED_SPAN)) throw new RangeError(`span ${spanBig} is beyond ${MAX_DECODED_SPAN}, the most an encoding is read back with`);
  const span = Number(spanBig);

  // Positions relative to the base, 1..span; a Number each from here on (bigint arithmetic is the
  // slow part of encoding).
  const rel = new Int32Array(n);
  let previous = 0;
  let runs = 0;
  let rlBytes = 0;
  let runStart = 0; // first position of the current finished run (0 before the first)
  for (let i = 0; i < n; i++) {
    const d = finished[i]! - base;
    // Outside (base, highest] means out of order: refused, so Number(d) below is always exact.
    const r = d > 0n && d <= spanBig ? Number(d) : -1;
    if (r <= previous) throw new RangeError(`finished offsets must be > base ${base} and strictly increasing; ${finished[i]} at index ${i} is not`);
    if (r !== previous + 1 || i === 0) {
      if (i > 0) rlBytes += varintSize(previous - runStart); // the finished run just ended, minus 1
      rlBytes += varintSize(i === 0 ? r - 1 : r - previous - 2); // the unfinished run before r
      runStart = r;
      runs++;
    }
    rel[i] = previous = r;
  }
  rlBytes += varintSize(previous - runStart);

  const bitmapBytes = Math.ceil(span / 8);
  let form: 'b' | 'r' | 'B' | 'R';
  let payload: Buffer;
  if (rlBytes < bitmapBytes) {
    form = 'r';
    payload = runLengths(rel, runs, rlBytes);
  } else {
    form = 'b';
    payload = Buffer.alloc(bitmapBytes);
    for (let i = 0; i < n; i++) {
      const bit = rel[i]! - 1;
      payload[bit >>> 3] |= 1 << (bit & 7);
    }
  }
  // Below a few dozen bytes deflate saves a few chars at best, for the price of a zlib stream.
  if (payload.length > 32) {
    const deflated = deflateRawSync(payload);
    if (deflated.length < payload.length) {
      payload = deflated;
      form = form === 'b' ? 'B' : 'R';
    }
  }

  const head = `${FINISHED_METADATA_PREFIX}${form}:${base}:${payload.toString('base64url')}:`;
  const out = head + checkOf(head);
  if (out.length > maxBytes) throw new RangeError(`finished offsets over a span of ${span} encode in ${out.length} bytes, beyond ${maxBytes} (maxSpan is ${maxSpan(maxBytes)})`);
  return out;
}

function varintSize(v: number): number {
  return v < 0x80 ? 1 : v < 0x4000 ? 2 : 3;
}

function runLengths(rel: Int32Array, runs: number, size: number): Buffer {
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  const put = (v: number): void => {
    while (v >= 0x80) {
      out[at++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    out[at++] = v;
  };
  let previous = 0;
  let runStart = 0;
  for (let i = 0; i < rel.length; i++) {
    const r = rel[i]!;
    if (i === 0 || r !== previous + 1) {
      if (i > 0) put(previous - runStart);
      put(i === 0 ? r - 1 : r - previous - 2);
      runStart = r;
    }
    previous = r;
  }
  put(previous - runStart);
  if (at !== size || runs === 0) throw new Error(`run-length size ${at} differs from the ${size} computed`); // a bug of ours
  return out;
}

function checkOf(head: string): string {
  const crc = Buffer.allocUnsafe(4);
  crc.writeUInt32BE(crc32c(Buffer.from(head, 'latin1')));
  return crc.toString('base64url');
}

/** Result of reading metadata. 'foreign': not ours (null/empty is 'none'); 'corrupt': our prefix but it does not parse or its checks fail. */
export type DecodedFinished = { kind: 'none' } | { kind: 'foreign' } | { kind: 'corrupt'; reason: string } | { kind: 'finished'; base: bigint; offsets: bigint[] };

const corrupt = (reason: string): DecodedFinished => ({ kind: 'corrupt', reason });

export function decodeFinished(metadata: string | null | undefined): DecodedFinished {
  // Java's OffsetAndMetadata writes '' when it has nothing to say.
  if (metadata === null || metadata === undefined || metadata === '') return { kind: 'none' };
  if (!metadata.startsWith(FINISHED_METADATA_PREFIX)) return { kind: 'foreign' };
  if (metadata.length > MAX_METADATA_CHARS) return corrupt(`${metadata.length} chars, more than the ${MAX_METADATA_CHARS} we ever write`);

  const parts = metadata.slice(FINISHED_METADATA_PREFIX.length).split(':');
  if (parts.length !== 4) return corrupt(`${parts.length - 1} ':' separators, not 3`);
  const [form, baseText, payloadText, check] = parts as [string, string, string, string];
  if (form !== 'b' && form !== 'r' && form !== 'B' && form !== 'R') return corrupt(`unknown form ${JSON.stringify(form.slice(0, 8))}`);
  if (!CANONICAL_BASE.test(baseText)) return corrupt('base is not a canonical decimal');
  if (payloadText === '' || !BASE64URL.test(payloadText)) return corrupt('payload is not base64url');
  if (!BASE64URL.test(check)) return corrupt('check is not base64url');
  // Every part is ASCII by now, so latin1 gives the same bytes the encoder checked.
  const head = metadata.slice(0, metadata.length - check.length);
  if (check !== checkOf(head)) return corrupt('checksum mismatch');

  const base = BigInt(baseText);
  if (base > MAX_OFFSET) return corrupt('base is beyond 2^63-1');
  let payload = Buffer.from(payloadText, 'base64url');
  // Node's decoder forgives a length no encoder writes and stray bits in the last char.
  if (payload.toString('base64url') !== payloadText) return corrupt('payload is not canonical base64url');
  if (form === 'B' || form === 'R') {
    try {
      payload = inflateRawSync(payload, { maxOutputLength: MAX_PAYLOAD_BYTES });
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      return corrupt(code === 'ERR_BUFFER_TOO_LARGE' ? `inflates beyond ${MAX_PAYLOAD_BYTES} bytes` : `does not inflate (${String(code ?? error)})`);
    }
  }
  if (payload.length > MAX_PAYLOAD_BYTES) return corrupt(`payload of ${payload.length} bytes, beyond ${MAX_PAYLOAD_BYTES}`);
  if (payload.length === 0) return corrupt('empty payload');
  const rel = form === 'b' || form === 'B' ? readBitmap(payload) : readRunLengths(payload);
  if (typeof rel === 'string') return corrupt(rel);
  // rel is increasing and non-empty; its last is the span.
  if (base + BigInt(rel[rel.length - 1]!) > MAX_OFFSET) return corrupt('finished offsets beyond 2^63-1');
  const offsets = new Array<bigint>(rel.length);
  for (let i = 0; i < rel.length; i++) offsets[i] = base + BigInt(rel[i]!);
  return { kind: 'finished', base, offsets };
}

/** Positions 1..span of the set bits, or why not. */
function readBitmap(bytes: Buffer): number[] | string {
  if (bytes[bytes.length - 1] === 0) return 'bitmap ends in a zero byte';
  const rel: number[] = [];
  for (let i = 0; i < bytes.length; i++) {
    let b = bytes[i]!;
    while (b !== 0) {
      const low = b & -b;
      rel.push(i * 8 + 31 - Math.clz32(low) + 1);
      b ^= low;
    }
  }
  return rel;
}

/** Positions 1..span of the finished runs, or why not. */
function readRunLengths(bytes: Buffer): number[] | string {
  const rel: number[] = [];
  let at = 0;
  let position = 1; // the next position a run starts at
  let first = true;
  while (at < bytes.length) {
    const values: number[] = [];
    for (let k = 0; k < 2; k++) {
      if (at >= bytes.length) return 'run lengths end inside a pair';
      let v = 0;
      let shift = 0;
      for (;;) {
        if (shift === 7 * MAX_VARINT_BYTES) return 'run length overflows';
        if (at >= bytes.length) return 'run length is cut short';
        const b = bytes[at++]!;
        v |= (b & 0x7f) << shift;
        shift += 7;
        if (b < 0x80) {
          if (b === 0 && shift > 7) return 'run length is not minimally encoded';
          break;
        }
      }
      values.push(v);
    }
    const unfinished = values[0]! + (first ? 0 : 1);
    const done = values[1]! + 1;
    first = false;
    position += unfinished;
    // Checked before the run is materialized, so a lying run cannot allocate.
    if (position + done - 1 > MAX_DECODED_SPAN) return `span beyond ${MAX_DECODED_SPAN}`;
    for (let i = 0; i < done; i++) rel.push(position++);
  }
  return rel;
}
