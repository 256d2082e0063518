/**
 * Splits the bytes a socket reads into Kafka response frames (int32 size, then that many bytes),
 * reading into memory we own: Node's `onread` option (net.Socket and tls.connect, Node >= 20)
 * with a FUNCTION as `buffer`. Node calls that function after every read to learn where the next
 * read goes (lib/internal/stream_base_commons.js onStreamRead; lib/net.js initSocketHandle for the
 * first buffer; the C++ CustomBufferJSListener points libuv, or TLSWrap's cleartext copy, at the
 * returned memory). Checked on Node 20.20 and 24.21: both have the same code path.
 *
 * So the reader hands out either its reusable read buffer or, while a large frame is being
 * received, `frameBuffer.subarray(filled)`: the kernel (or TLS) writes straight into the frame,
 * which is never assembled from chunks and never concatenated.
 *
 * OWNERSHIP RULE: which bytes are valid when
 *
 *  1. The read buffer (`readBufferBytes`, 64 KiB by default) belongs to the reader. A frame that
 *     fits in it is handed to `sink.frame(frame, undefined)` as a VIEW of the read buffer, valid
 *     only during that synchronous call: the next read overwrites it. The sink decodes it at once
 *     or copies it. (A small frame split across two reads is moved to the front of the read
 *     buffer and completed there, so it is still one view; nothing is concatenated.)
 *  2. A frame larger than the read buffer gets its own memory from `sink.allocate(size)` as soon
 *     as its size prefix is read (at least `size` bytes long, e.g. a pool buffer of the next
 *     power-of-two class). The reader fills it, by direct reads while much of it is missing, and
 *     hands it over with `sink.frame(backing.subarray(0, size), backing)`: from then on the sink
 *     owns `backing` and is responsible for returning it to its pool (the connection passes that
 *     responsibility on to the caller of requestFrame(), who calls release()).
 *  3. A frame still being received when the connection dies is given up through `abandon()`,
 *     which returns its backing buffer (to be released by the caller once the socket is closed,
 *     i.e. once no read can land in it any more).
 *  4. Re-entrancy is an error: the read buffer is shared state, and a second read delivered while
 *     the first one's frames are being handled would overwrite them.
 *
 * Every size prefix goes to `sink.admit()` first, while it is still only four bytes (plus what
 * else the same read brought): memory follows what the owner agreed to receive for the request at
 * the head of its queue, never what a peer announces. A negative size, or one above
 * `maxFrameBytes`, is a KafkaProtocolError: the stream is out of step and the connection must be
 * dropped. After any error the reader ignores further input.
 */
import { KafkaProtocolError } from '@kwire/protocol';

export interface FrameSink {
  /** Memory for a frame of `size` bytes (size prefix included) that does not fit the read buffer. */
  allocate(size: number): Buffer;
  /**
   * One complete frame, size prefix included. `backing` undefined: a view of the read buffer, valid
   * until this call returns (rule 1). Otherwise the sink now owns `backing` (rule 2).
   */
  frame(frame: Buffer, backing: Buffer | undefined): void;
  /**
   * Called with each size prefix before anything is allocated or waited for: `size` as announced,
   * `streamOffset` where the prefix starts in the stream (0: the peer's very first bytes), and
   * the bytes received from there on as `bytes[start, end)` (at least 4; the read buffer itself,
   * valid during the call: no view is made per frame). Throws to refuse the frame; the reader
   * then fails with that error. May be called more than once for the same prefix (while a small
   * frame is incomplete), so it must only look.
   */
  admit?(size: number, streamOffset: number, bytes: Buffer, start: number, end: number): void;
}

export interface FrameReaderOptions {
  /** Size of the reusable read buffer; frames up to this size never allocate. Default 64 KiB. */
  readBufferBytes?: number;
  /** Frames announcing more than this many bytes are a protocol error. Default 1 GiB. */
  maxFrameBytes?: number;
  /**
   * While at least this many bytes of a large frame are missing, reads go straight into the
   * frame; below it the tail is read into the read buffer (so the same read can also bring the
   * next frames) and copied. Default: a quarter of the read buffer.
   */
  directReadMinBytes?: number;
}

export class FrameReader {
  private readonly sink: FrameSink;
  private readonly scratch: Buffer;
  private readonly maxFrameBytes: number;
  private readonly directReadMinBytes: number;
  /** Bytes of an incomplete small frame (or size prefix) kept at the front of `scratch`. */
  private kept = 0;
  /** A large frame being received: its backing buffer, total size, bytes filled. */
  private target: Buffer | undefined;
  private total = 0;
  private filled = 0;
  /** The next read goes into target.subarray(filled, total). */
  private direct = false;
  private busy = false;
  /** Stream offset of scratch[0], for error offsets. */
  private position = 0;
  private failure: Error | undefined;
  /** Counters for tests and the benchmark: how bytes arrived. */
  readonly stats = { reads: 0, directReads: 0, bytes: 0, frames: 0, largeFrames: 0 };

  /** What net.connect / tls.connect take as `onread`. */
  readonly onread: { buffer: () => Buffer; callback: (nread: number, buf: Uint8Array) => boolean };

  constructor(sink: FrameSink, options: FrameReaderOptions = {}) {
    this.sink = sink;
    const size = options.readBufferBytes ?? 64 * 1024;
    if (!(Number.isInteger(size) && size >= 16)) throw new RangeError(`readBufferBytes must be an integer >= 16, got ${size}`);
    // allocUnsafeSlow: the read buffer owns its ArrayBuffer (no neighbours in Node's 8 KiB slab).
    this.scratch = Buffer.allocUnsafeSlow(size);
    this.maxFrameBytes = options.maxFrameBytes ?? 1024 * 1024 * 1024;
    this.directReadMinBytes = options.directReadMinBytes ?? Math.max(1, size >>> 2);
    this.onread = {
      buffer: () => this.nextBuffer(),
      callback: (nread: number) => this.onRead(nread),
    };
  }

  /** The failure that stopped the reader, if any. */
  get error(): Error | undefined {
    return this.failure;
  }

  /** Bytes received of a frame not yet complete. */
  get pendingBytes(): number {
    return this.target !== undefined ? this.filled : this.kept;
  }

  /** Where the next read must go. Node calls this after each read (and once at socket creation). */
  nextBuffer(): Buffer {
    if (this.direct) return this.target!.subarray(this.filled, this.total);
    return this.kept === 0 ? this.scratch : this.scratch.subarray(this.kept);
  }

  /**
   * `nread` bytes have been written at the start of the buffer nextBuffer() returned last. Returns
   * false once the reader has failed (which makes Node stop reading). Throws the failure the first
   * time (a protocol error, or whatever the sink threw), so the owner can destroy the connection.
   */
  onRead(nread: number): boolean {
    if (this.failure !== undefined) return false;
    if (this.busy) {
      this.failure = new KafkaProtocolError('a socket read was delivered while the previous one was still being handled', { reason: 'invalid-value' });
      throw this.failure;
    }
    this.busy = true;
    this.stats.reads++;
    this.stats.bytes += nread;
    try {
      if (this.direct) {
        this.stats.directReads++;
        this.filled += nread;
        this.position += nread;
        if (this.filled === this.total) this.completeTarget();
        else this.direct = this.total - this.filled >= this.directReadMinBytes;
      } else {
        this.parse(this.kept + nread);
      }
      return true;
    } catch (err) {
      this.failure = err as Error;
      throw err;
    } finally {
      this.busy = false;
    }
  }

  /**
   * Gives up a frame in progress (the connection is going away) and returns its backing buffer so
   * that the owner can release it once the socket is closed. The reader fails from then on.
   */
  abandon(): Buffer | undefined {
    const t = this.target;
    this.target = undefined;
    this.direct = false;
    this.failure ??= new KafkaProtocolError('the frame reader was abandoned', { reason: 'truncated' });
    return t;
  }

  /** Frames in scratch[0, end). */
  private parse(end: number): void {
    const s = this.scratch;
    let o = 0;
    if (this.target !== undefined) {
      // The tail of a large frame, read into scratch because little of it was missing.
      const take = Math.min(this.total - this.filled, end);
      s.copy(this.target, this.filled, 0, take);
      this.filled += take;
      o = take;
      if (this.filled < this.total) {
        // end === take: all of this read belonged to the frame.
        this.position += end;
        this.kept = 0;
        this.direct = this.total - this.filled >= this.directReadMinBytes;
        return;
      }
      this.completeTarget();
    }
    while (end - o >= 4) {
      const size = s.readInt32BE(o);
      this.sink.admit?.(size, this.position + o, s, o, end);
      if (size < 0 || size > this.maxFrameBytes) {
        throw new KafkaProtocolError(size < 0 ? `negative frame size ${size}` : `frame of ${size} bytes exceeds the limit of ${this.maxFrameBytes}`, {
          reason: 'invalid-length',
          offset: this.position + o,
        });
      }
      const total = size + 4;
      if (end - o >= total) {
        this.stats.frames++;
        this.sink.frame(s.subarray(o, o + total), undefined);
        o += total;
        continue;
      }
      if (total > s.length) {
        // Rule 2: a large frame gets its own memory now; the rest of it is read straight into it.
        const backing = this.sink.allocate(total);
        if (backing.length < total) throw new RangeError(`allocate(${total}) returned ${backing.length} bytes`);
        s.copy(backing, 0, o, end);
        this.target = backing;
        this.total = total;
        this.filled = end - o;
        this.position += end;
        this.kept = 0;
        this.direct = total - this.filled >= this.directReadMinBytes;
        return;
      }
      break;
    }
    // An incomplete small frame or size prefix: move it to the front; the next read completes it.
    const rest = end - o;
    if (rest > 0 && o > 0) s.copyWithin(0, o, end);
    this.position += o;
    this.kept = rest;
  }

  private completeTarget(): void {
    const backing = this.target!;
    const total = this.total;
    this.target = undefined;
    this.direct = false;
    this.total = this.filled = 0;
    this.stats.frames++;
    this.stats.largeFrames++;
    this.sink.frame(backing.subarray(0, total), backing);
  }
}
