import { KafkaProtocolError } from '../errors.js';
import { uuidToBytes } from './uuid.js';

/**
 * An append-only encoder over a slab of memory.
 *
 * Ownership rule: `finish()` hands out a view of the bytes written since the last finish() and
 * never writes to those bytes again: the next message continues after them in the same slab, and
 * a full slab is replaced by a new one, not reused. So a frame given to socket.write() can stay
 * queued there for as long as the socket needs it, with no copy and no risk of being overwritten.
 *
 * The slab grows geometrically (x2) while one message is written; positions handed out by
 * `reserve*` are relative to the start of the current message, so they survive a regrow.
 */
export class Writer {
  private buf: Buffer;
  /** Start of the current message in buf. */
  private start = 0;
  /** Next byte to write in buf. */
  private pos = 0;
  private readonly slabSize: number;

  constructor(slabSize = 16 * 1024) {
    this.slabSize = slabSize;
    this.buf = Buffer.allocUnsafe(slabSize);
  }

  /** Bytes written to the current message so far. */
  get length(): number {
    return this.pos - this.start;
  }

  /** Makes room for n more bytes. */
  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const used = this.pos - this.start;
    const size = Math.max(this.slabSize, (used + n) * 2);
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, this.start, this.pos);
    this.buf = next;
    this.start = 0;
    this.pos = used;
  }

  /** The bytes of the current message, which the writer will never touch again. */
  finish(): Buffer {
    const out = this.buf.subarray(this.start, this.pos);
    this.start = this.pos;
    // Leave small tails behind rather than splitting the next message across a regrow.
    if (this.buf.length - this.pos < 256) {
      this.buf = Buffer.allocUnsafe(this.slabSize);
      this.start = this.pos = 0;
    }
    return out;
  }

  /** Drops the current message (e.g. after an encode error). */
  abandon(): void {
    this.pos = this.start;
  }

  writeInt8(v: number): void {
    if ((v << 24) >> 24 !== v) badInteger('int8', v);
    this.ensure(1);
    this.buf[this.pos++] = v & 0xff;
  }

  writeBool(v: boolean): void {
    this.ensure(1);
    this.buf[this.pos++] = v ? 1 : 0;
  }

  writeInt16(v: number): void {
    if ((v << 16) >> 16 !== v) badInteger('int16', v);
    this.ensure(2);
    const b = this.buf;
    const p = this.pos;
    b[p] = (v >>> 8) & 0xff;
    b[p + 1] = v & 0xff;
    this.pos = p + 2;
  }

  writeUInt16(v: number): void {
    if ((v & 0xffff) !== v) badInteger('uint16', v);
    this.writeInt16((v << 16) >> 16);
  }

  writeInt32(v: number): void {
    if ((v | 0) !== v) badInteger('int32', v);
    this.ensure(4);
    const b = this.buf;
    const p = this.pos;
    b[p] = (v >>> 24) & 0xff;
    b[p + 1] = (v >>> 16) & 0xff;
    b[p + 2] = (v >>> 8) & 0xff;
    b[p + 3] = v & 0xff;
    this.pos = p + 4;
  }

  writeUInt32(v: number): void {
    if (v >>> 0 !== v) badInteger('uint32', v);
    this.writeInt32(v | 0);
  }

  /** Accepts bigint, or a number that is a safe integer. */
  writeInt64(v: bigint | number): void {
    this.ensure(8);
    this.buf.writeBigInt64BE(toInt64(v), this.pos);
    this.pos += 8;
  }

  writeFloat64(v: number): void {
    this.ensure(8);
    this.buf.writeDoubleBE(v, this.pos);
    this.pos += 8;
  }

  writeUuid(text: string): void {
    this.ensure(16);
    try {
      uuidToBytes(text, this.buf, this.pos);
    } catch (err) {
      throw new KafkaProtocolError((err as Error).message, { reason: 'invalid-value' });
    }
    this.pos += 16;
  }

  /** Unsigned LEB128, 0 .. 2^32-1. */
  writeUVarint(v: number): void {
    if (v >>> 0 !== v) badInteger('unsigned varint', v);
    this.ensure(5);
    const b = this.buf;
    let p = this.pos;
    // >>> keeps it unsigned; values up to 2^32-1 take at most 5 bytes.
    let u = v >>> 0;
    while (u >= 0x80) {
      b[p++] = (u & 0x7f) | 0x80;
      u >>>= 7;
    }
    b[p++] = u;
    this.pos = p;
  }

  /** Zig-zag varint (int32). */
  writeVarint(v: number): void {
    if ((v | 0) !== v) badInteger('varint', v);
    this.writeUVarint(((v << 1) ^ (v >> 31)) >>> 0);
  }

  /** Zig-zag varlong, exact over the whole int64 range. */
  writeVarlong(v: bigint | number): void {
    const n = toInt64(v);
    let u = BigInt.asUintN(64, (n << 1n) ^ (n >> 63n));
    this.ensure(10);
    const b = this.buf;
    let p = this.pos;
    while (u >= 0x80n) {
      b[p++] = Number(u & 0x7fn) | 0x80;
      u >>= 7n;
    }
    b[p++] = Number(u);
    this.pos = p;
  }

  writeRaw(bytes: Uint8Array): void {
    this.ensure(bytes.length);
    this.buf.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  /** The UTF-8 bytes of s (byteLength of them), without a length. */
  private utf8(s: string, byteLength: number): void {
    this.ensure(byteLength);
    if (byteLength === s.length) {
      // ASCII: a plain loop beats the generic encoder for the short names Kafka is full of.
      const b = this.buf;
      let p = this.pos;
      for (let i = 0; i < s.length; i++) b[p++] = s.charCodeAt(i);
      this.pos = p;
    } else {
      this.pos += this.buf.write(s, this.pos, byteLength, 'utf8');
    }
  }

  /** int16 length + UTF-8. */
  writeString(s: string): void {
    const n = Buffer.byteLength(s, 'utf8');
    if (n > 0x7fff) throw new KafkaProtocolError(`string of ${n} bytes exceeds the int16 length limit`, { reason: 'invalid-length' });
    this.writeInt16(n);
    this.utf8(s, n);
  }

  writeNullableString(s: string | null): void {
    if (s === null) this.writeInt16(-1);
    else this.writeString(s);
  }

  /** uvarint (length + 1) + UTF-8; at most 32767 bytes, as Java's generated code enforces for every string. */
  writeCompactString(s: string): void {
    const n = Buffer.byteLength(s, 'utf8');
    if (n > 0x7fff) throw new KafkaProtocolError(`string of ${n} bytes exceeds Kafka's 32767-byte string limit`, { reason: 'invalid-length' });
    this.writeUVarint(n + 1);
    this.utf8(s, n);
  }

  writeCompactNullableString(s: string | null): void {
    if (s === null) this.writeUVarint(0);
    else this.writeCompactString(s);
  }

  /** int32 length + bytes. */
  writeBytes(bytes: Uint8Array): void {
    this.writeInt32(bytes.length);
    this.writeRaw(bytes);
  }

  writeNullableBytes(bytes: Uint8Array | null): void {
    if (bytes === null) this.writeInt32(-1);
    else this.writeBytes(bytes);
  }

  writeCompactBytes(bytes: Uint8Array): void {
    this.writeUVarint(bytes.length + 1);
    this.writeRaw(bytes);
  }

  writeCompactNullableBytes(bytes: Uint8Array | null): void {
    if (bytes === null) this.writeUVarint(0);
    else this.writeCompactBytes(bytes);
  }

  writeArrayLength(n: number): void {
    this.writeInt32(n);
  }

  /** uvarint (count + 1); -1 writes the null marker 0. */
  writeCompactArrayLength(n: number): void {
    this.writeUVarint(n + 1);
  }

  /** Reserves n bytes to fill in later; returns their position relative to the message start. */
  reserve(n: number): number {
    this.ensure(n);
    const at = this.pos - this.start;
    this.pos += n;
    return at;
  }

  /** Fills an int32 reserved by reserve(4). */
  backfillInt32(at: number, v: number): void {
    this.buf.writeInt32BE(v | 0, this.start + at);
  }

  /** Fills a uint32 reserved by reserve(4). */
  backfillUInt32(at: number, v: number): void {
    this.buf.writeUInt32BE(v >>> 0, this.start + at);
  }

  /** A view of bytes already written in the current message: [from, to) relative to its start. */
  written(from: number, to: number = this.pos - this.start): Buffer {
    return this.buf.subarray(this.start + from, this.start + to);
  }
}

/** Out-of-range, fractional, NaN or non-number input: a typed error rather than silent truncation. */
function badInteger(kind: string, v: unknown): never {
  throw new KafkaProtocolError(`${typeof v === 'number' ? v : typeof v} is not a valid ${kind}`, { reason: 'invalid-value' });
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

export function toInt64(v: bigint | number): bigint {
  if (typeof v === 'bigint') {
    if (v < INT64_MIN || v > INT64_MAX) throw new KafkaProtocolError(`${v} is outside the int64 range`, { reason: 'invalid-value' });
    return v;
  }
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw new KafkaProtocolError(`${v} is not a safe integer for an int64 field (pass a bigint)`, { reason: 'invalid-value' });
  return BigInt(v);
}

/** Bytes the unsigned varint encoding of v (0 .. 2^32-1) takes. */
export function sizeOfUVarint(v: number): number {
  const u = v >>> 0;
  if (u < 0x80) return 1;
  if (u < 0x4000) return 2;
  if (u < 0x200000) return 3;
  if (u < 0x10000000) return 4;
  return 5;
}

/** Bytes the zig-zag varint encoding of v (int32) takes. */
export function sizeOfVarint(v: number): number {
  return sizeOfUVarint(((v << 1) ^ (v >> 31)) >>> 0);
}
