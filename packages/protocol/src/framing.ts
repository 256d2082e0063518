import { KafkaProtocolError } from './errors.js';

/**
 * The one Kafka frame splitter (int32 size prefix, then that many bytes). Pure: no sockets. Every
 * piece of kwire that cuts a byte stream into frames uses it: the consumer's connection (through
 * its socket reader), the recording proxy (which keeps only each frame's head), fake brokers,
 * raw clients and tests.
 *
 * Two ways to give it bytes, one state machine behind them:
 *
 *  - push(chunk): the bytes are the caller's (a 'data' event chunk). A frame lying whole inside the
 *    chunk is a VIEW of it (no copy), valid as long as the chunk is. A frame spread over chunks is
 *    assembled once in memory from `allocate(size)` (default: Buffer.allocUnsafe of exactly its
 *    size, not zero-filled), allocated when its size prefix is known; never concatenated.
 *  - nextBuffer() / onRead(n): the splitter owns the memory the bytes are read into (a socket's
 *    `onread` with a buffer function, see the consumer's socket-reader.ts). It hands out its
 *    reusable read buffer, or, while a large frame is being received, the missing part of that
 *    frame's own memory, so that the producer of the bytes writes straight into the frame.
 *
 * OWNERSHIP RULE: which bytes are valid when
 *
 *  1. A frame lying whole in the input memory is handed to `frame(view, undefined, ...)` as a VIEW
 *     of it. For push(), the input is the caller's chunk. For onRead(), it is the read buffer
 *     (`readBufferBytes`, 64 KiB by default), which belongs to the splitter: the view is valid only
 *     during that synchronous call, because the next read overwrites it; the sink decodes it at once
 *     or copies it. (In that mode a frame that fits the read buffer but arrives in several reads is
 *     moved to the front of the read buffer and completed there: still one view, nothing assembled.)
 *  2. Any other frame gets its own memory from `sink.allocate(size)` as soon as its size prefix is
 *     read (at least `size` bytes long, e.g. a pool buffer of the next power-of-two class), and is
 *     handed over with `frame(backing.subarray(0, size), backing, ...)`: from then on the sink owns
 *     `backing` (and returns it to its pool, if it came from one).
 *  3. A frame still being received when its stream dies is given up through `abandon()`, which
 *     returns its backing buffer, to be released by the owner once nothing can write into it.
 *  4. Re-entrancy is an error: the read buffer and the frame in progress are shared state, and
 *     bytes delivered while the previous ones' frames are being handled would overwrite them.
 *
 * Every size prefix goes to `sink.admit()` first, exactly once, while it is still only four bytes
 * (plus whatever else the same input brought): memory follows what the owner agreed to receive,
 * never what a peer announces. admit() may throw to refuse the frame, and may return how many of
 * the frame's leading bytes it wants (a proxy indexing a stream needs only each frame's header;
 * `admitBytes` makes admit() wait for more than the size prefix):
 * the rest is counted and skipped, never copied, and `frame()` then gets only that head. Each
 * admit() is followed by its frame's frame() before the next admit(), so a sink that needs the
 * frame's length or stream offset at frame() keeps them from admit(). A negative size, or one above `maxFrameBytes`, is a
 * KafkaProtocolError: the stream is out of step. After any error the splitter takes no more input.
 */
export interface FrameSink {
  /**
   * Called with each size prefix before anything is allocated or waited for: `size` as announced,
   * `streamOffset` where the prefix starts in the stream (0: the peer's very first bytes), and the
   * bytes received from there on as `bytes[start, end)` (at least 4; valid during the call: no view
   * is made per frame). Throws to refuse the frame. Returns how many leading bytes of the frame
   * (size prefix included) to keep; undefined (or anything >= the frame's length): all of it.
   */
  admit?(size: number, streamOffset: number, bytes: Buffer, start: number, end: number): number | undefined | void;
  /** Memory for `size` bytes of a frame that is not whole in the input (rule 2). Default Buffer.allocUnsafe. */
  allocate?(size: number): Buffer;
  /**
   * One complete frame, size prefix included (or the head admit() asked for). `backing` undefined: a
   * view of the input (rule 1). Otherwise the sink now owns `backing` (rule 2).
   */
  frame(frame: Buffer, backing: Buffer | undefined): void;
}

export interface FrameSplitterOptions {
  /** Where frames go; push(chunk, onFrame) may pass a callback instead. */
  sink?: FrameSink;
  /** Frames announcing more than this many bytes are a protocol error. Default 1 GiB. */
  maxFrameBytes?: number;
  /**
   * admit() waits until this many bytes of a frame (or the whole frame, if shorter) are at hand,
   * for a sink that decides from the header what to keep (the capture redactor reads the api key
   * and correlation id). Default 4: the size prefix alone.
   */
  admitBytes?: number;
  /** Size of the reusable read buffer of nextBuffer()/onRead(); frames up to it never allocate. Default 64 KiB. */
  readBufferBytes?: number;
  /**
   * While at least this many bytes of a large frame are missing, nextBuffer() offers the frame's
   * own memory; below it the tail is read into the read buffer (so the same read can also bring
   * the next frames) and copied. Default: a quarter of the read buffer.
   */
  directReadMinBytes?: number;
}

/** How bytes arrived, for tests and benchmarks. */
export interface FrameSplitterStats {
  /** push() calls and onRead() calls. */
  reads: number;
  /** onRead() calls that landed straight in a frame's own memory. */
  directReads: number;
  bytes: number;
  frames: number;
  /** Frames delivered in memory from allocate() (rule 2). */
  largeFrames: number;
}

const EMPTY = Buffer.alloc(0);

export class FrameSplitter {
  private readonly sink: FrameSink | undefined;
  private readonly maxFrameBytes: number;
  private readonly admitBytes: number;
  private readonly readBufferBytes: number;
  private readonly directReadMinBytes: number;
  /** The read buffer, created on the first nextBuffer() (push() never needs it). */
  private scratch: Buffer | undefined;
  private mode: 'push' | 'read' | undefined;
  /** Stream offset of the input's first byte (of scratch[0] in read mode). */
  private position = 0;
  /** Read mode: bytes of an incomplete small frame (or size prefix) kept at the front of scratch. */
  private kept = 0;
  /** Read mode: the frame at scratch[0] has been admitted already (admit() runs once per frame). */
  private keptAdmitted = false;
  /** Push mode: the first bytes of a frame cut by a chunk's end before it could be admitted. */
  private readonly prefix: Buffer;
  private prefixFilled = 0;
  /** A frame in progress that is not whole in the input: its length, bytes consumed, bytes kept, memory, start. */
  private total = 0;
  private seen = 0;
  private keep = 0;
  private target: Buffer | undefined;
  private frameAt = 0;
  /** The next read goes into target.subarray(seen, total). */
  private direct = false;
  private busy = false;
  private failure: Error | undefined;
  /** push()'s per-call callback, when given. */
  private onFrame: ((frame: Buffer) => void) | undefined;
  readonly stats: FrameSplitterStats = { reads: 0, directReads: 0, bytes: 0, frames: 0, largeFrames: 0 };

  constructor(options: FrameSplitterOptions = {}) {
    this.sink = options.sink;
    // Brokers refuse requests above socket.request.max.bytes (100 MiB); a response above 1 GiB
    // means the stream is out of step.
    this.maxFrameBytes = options.maxFrameBytes ?? 1024 * 1024 * 1024;
    const admitBytes = options.admitBytes ?? 4;
    if (!(Number.isInteger(admitBytes) && admitBytes >= 4 && admitBytes <= 64)) throw new RangeError(`admitBytes must be an integer from 4 to 64, got ${admitBytes}`);
    this.admitBytes = admitBytes;
    this.prefix = Buffer.allocUnsafe(admitBytes);
    const size = options.readBufferBytes ?? 64 * 1024;
    if (!(Number.isInteger(size) && size >= 16)) throw new RangeError(`readBufferBytes must be an integer >= 16, got ${size}`);
    this.readBufferBytes = size;
    this.directReadMinBytes = options.directReadMinBytes ?? Math.max(1, size >>> 2);
  }

  /** The failure that stopped the splitter, if any. */
  get error(): Error | undefined {
    return this.failure;
  }

  /** Bytes received of a frame (or size prefix) not yet complete. */
  get pending(): number {
    return this.total > 0 ? this.seen : this.kept + this.prefixFilled;
  }

  /**
   * Splits the caller's `chunk`: complete frames go to `onFrame` (or the sink), a view of `chunk`
   * when whole in it (rule 1), else their own memory (rule 2). Throws the failure (a protocol error
   * or whatever the sink threw); every later call throws it again.
   */
  push(chunk: Buffer, onFrame?: (frame: Buffer) => void): void {
    if (this.failure !== undefined) throw this.failure;
    if (this.busy || this.mode !== 'push') this.enter('push');
    this.busy = true;
    this.onFrame = onFrame;
    this.stats.reads++;
    this.stats.bytes += chunk.length;
    try {
      let o = 0;
      const end = chunk.length;
      if (this.total > 0) {
        o = this.fill(chunk, 0, end);
        if (this.total > 0) {
          this.position += end;
          return;
        }
      } else if (this.prefixFilled > 0) {
        // The size prefix first, then (admitBytes > 4) as much of the frame as admit() waits for.
        let take = Math.max(0, Math.min(4 - this.prefixFilled, end));
        chunk.copy(this.prefix, this.prefixFilled, 0, take);
        this.prefixFilled += take;
        o = take;
        if (this.prefixFilled < 4) {
          this.position += end;
          return;
        }
        const size = this.prefix.readInt32BE(0);
        const need = size < 0 ? 4 : Math.min(this.admitBytes, size + 4);
        take = Math.max(0, Math.min(need - this.prefixFilled, end - o));
        chunk.copy(this.prefix, this.prefixFilled, o, o + take);
        this.prefixFilled += take;
        o += take;
        if (this.prefixFilled < need) {
          this.position += end;
          return;
        }
        const held = this.prefixFilled;
        this.prefixFilled = 0;
        const at = this.position + o - held;
        this.begin(size, this.admit(size, at, this.prefix, 0, held), at);
        this.fill(this.prefix, 0, held);
        if (this.total > 0) o = this.fill(chunk, o, end);
        if (this.total > 0) {
          this.position += end;
          return;
        }
      }
      o = this.split(chunk, o, end, false);
      // What is left is a frame's first bytes, fewer than admit() needs.
      chunk.copy(this.prefix, 0, o, end);
      this.prefixFilled = end - o;
      this.position += end;
    } catch (err) {
      this.failure = err as Error;
      throw err;
    } finally {
      this.onFrame = undefined;
      this.busy = false;
    }
  }

  /** Where the next read must go (read mode). Called after each read, and once before the first. */
  nextBuffer(): Buffer {
    if (this.direct) return this.target!.subarray(this.seen, this.total);
    const s = (this.scratch ??= this.createReadBuffer());
    return this.kept === 0 ? s : s.subarray(this.kept);
  }

  /**
   * `nread` bytes have been written at the start of the buffer nextBuffer() returned last. Returns
   * false once the splitter has failed (a socket then stops reading). Throws the failure the first
   * time (a protocol error, or whatever the sink threw), so the owner can drop the stream.
   */
  onRead(nread: number): boolean {
    if (this.failure !== undefined) return false;
    if (this.busy || this.mode !== 'read') this.enter('read');
    this.busy = true;
    this.stats.reads++;
    this.stats.bytes += nread;
    try {
      if (this.direct) {
        this.stats.directReads++;
        this.seen += nread;
        this.position += nread;
        if (this.seen === this.total) this.finishFrame();
        else this.direct = this.total - this.seen >= this.directReadMinBytes;
        return true;
      }
      const s = this.scratch!;
      const end = this.kept + nread;
      let o = 0;
      if (this.total > 0) {
        // The tail of a large frame, read into scratch because little of it was missing.
        o = this.fill(s, 0, end);
        if (this.total > 0) {
          this.position += end;
          this.kept = 0;
          this.direct = this.keep === this.total && this.total - this.seen >= this.directReadMinBytes;
          return true;
        }
      }
      o = this.split(s, o, end, true);
      if (this.total > 0) return true;
      // An incomplete small frame or size prefix: move it to the front; the next read completes it.
      const rest = end - o;
      if (rest > 0 && o > 0) s.copyWithin(0, o, end);
      this.position += o;
      this.kept = rest;
      return true;
    } catch (err) {
      this.failure = err as Error;
      throw err;
    } finally {
      this.busy = false;
    }
  }

  /**
   * Gives up a frame in progress (its stream is going away) and returns its backing buffer, so that
   * the owner can release it once nothing can write into it (rule 3). The splitter fails from then on.
   */
  abandon(): Buffer | undefined {
    const t = this.target;
    this.target = undefined;
    this.total = this.seen = this.keep = 0;
    this.direct = false;
    this.failure ??= new KafkaProtocolError('the frame splitter was abandoned', { reason: 'truncated' });
    return t;
  }

  /** The first input, a re-entrant one, or one of the other mode (the hot path checks both at once). */
  private enter(mode: 'push' | 'read'): void {
    if (this.busy) {
      this.failure = new KafkaProtocolError('bytes were delivered while the previous ones were still being handled', { reason: 'invalid-value' });
      throw this.failure;
    }
    if (this.mode !== mode) {
      if (this.mode !== undefined) throw new Error(`a FrameSplitter fed by ${this.mode === 'push' ? 'push()' : 'onRead()'} cannot also be fed by the other`);
      this.mode = mode;
    }
  }

  private createReadBuffer(): Buffer {
    // allocUnsafeSlow: the read buffer owns its ArrayBuffer (no neighbours in Node's 8 KiB slab).
    return Buffer.allocUnsafeSlow(this.readBufferBytes);
  }

  /**
   * Frames of src[o, end), no frame in progress. Returns where the unconsumed tail starts: fewer
   * bytes than admit() needs, or (read mode) an incomplete frame that fits the read buffer. A frame that needs memory
   * of its own is begun and takes the rest of the input (this.total > 0 on return).
   */
  private split(src: Buffer, o: number, end: number, ownInput: boolean): number {
    // The hot loop (one pass per frame of a read): everything it reads of `this` is loaded once.
    const sink = this.sink;
    const hasAdmit = sink?.admit !== undefined;
    const cb = this.onFrame;
    const admitBytes = this.admitBytes;
    const maxFrameBytes = this.maxFrameBytes;
    const base = this.position;
    const stats = this.stats;
    // Read mode: a frame that waited at the front of the read buffer was admitted when it arrived.
    let admitted = o === 0 && this.keptAdmitted;
    this.keptAdmitted = false;
    while (end - o >= 4) {
      const size = src.readInt32BE(o);
      const total = size + 4;
      // Fewer bytes than admit() waits for, of a frame longer than that: wait for more.
      if (end - o < admitBytes && end - o < total) return o;
      let keep = total;
      if (admitted) admitted = false;
      else {
        const want = hasAdmit ? sink!.admit!(size, base + o, src, o, end) : undefined;
        if (size < 0 || size > maxFrameBytes) throw this.sizeError(size, base + o);
        if (typeof want === 'number' && want < total) keep = Math.max(0, Math.floor(want));
      }
      if (end - o >= total) {
        stats.frames++;
        const frame = src.subarray(o, o + keep);
        if (cb !== undefined) cb(frame);
        else sink!.frame(frame, undefined);
        o += total;
        continue;
      }
      if (ownInput && keep === total && total <= src.length) {
        this.keptAdmitted = true;
        return o;
      }
      // Rule 2: this frame gets its own memory now; the rest of it is read (or copied) into it.
      this.begin(size, keep, base + o);
      const filled = this.fill(src, o, end);
      if (ownInput) {
        this.position += end;
        this.kept = 0;
        this.direct = this.keep === this.total && this.total - this.seen >= this.directReadMinBytes;
      }
      return filled;
    }
    return o;
  }

  private sizeError(size: number, at: number): KafkaProtocolError {
    return new KafkaProtocolError(size < 0 ? `negative frame size ${size}` : `frame of ${size} bytes exceeds the limit of ${this.maxFrameBytes}`, {
      reason: 'invalid-length',
      offset: at,
    });
  }

  /** Checks a size prefix (the sink's verdict first) and returns how many bytes of the frame to keep. */
  private admit(size: number, at: number, bytes: Buffer, start: number, end: number): number {
    const want = this.sink?.admit?.(size, at, bytes, start, end);
    if (size < 0 || size > this.maxFrameBytes) throw this.sizeError(size, at);
    const total = size + 4;
    return typeof want === 'number' && want < total ? Math.max(0, Math.floor(want)) : total;
  }

  private begin(size: number, keep: number, at: number): void {
    this.total = size + 4;
    this.keep = keep;
    this.seen = 0;
    this.frameAt = at;
    if (keep > 0) {
      const backing = this.sink?.allocate !== undefined ? this.sink.allocate(keep) : Buffer.allocUnsafe(keep);
      if (backing.length < keep) throw new RangeError(`allocate(${keep}) returned ${backing.length} bytes`);
      this.target = backing;
    }
  }

  /** Takes bytes of the frame in progress from src[o, end): the kept ones copied, the rest skipped. */
  private fill(src: Buffer, o: number, end: number): number {
    if (this.seen < this.keep) {
      const take = Math.min(this.keep - this.seen, end - o);
      src.copy(this.target!, this.seen, o, o + take);
      this.seen += take;
      o += take;
    }
    if (this.seen >= this.keep) {
      const take = Math.min(this.total - this.seen, end - o);
      this.seen += take;
      o += take;
    }
    if (this.seen === this.total) this.finishFrame();
    return o;
  }

  private finishFrame(): void {
    const backing = this.target;
    const keep = this.keep;
    const total = this.total;
    this.target = undefined;
    this.total = this.seen = this.keep = 0;
    this.direct = false;
    this.stats.frames++;
    this.stats.largeFrames++;
    const frame = backing !== undefined ? backing.subarray(0, keep) : EMPTY;
    const cb = this.onFrame;
    if (cb !== undefined) cb(frame);
    else this.sink!.frame(frame, backing);
  }
}
