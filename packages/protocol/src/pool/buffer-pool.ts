/**
 * A pool of Buffers for decompression output.
 *
 * OWNERSHIP RULE (read before touching a pooled buffer)
 *
 *  1. acquire() hands a buffer to exactly one owner. For decompressed record batches the owner is
 *     the RecordBatch that holds the decompressed records.
 *  2. Every Record of that batch, and every key/value/header Buffer taken from those records, is a
 *     view into the owner's buffer: no bytes are copied. The views are valid until the owner is
 *     released, and not one moment longer.
 *  3. release() gives the buffer back. From then on the pool may hand it to the next acquire(),
 *     whose decompression overwrites it: a view kept past release() silently shows someone else's
 *     bytes. Copy what you keep (Buffer.from(record.value)) before releasing its batch.
 *  4. Only release what you acquired, and only once. The pool remembers which buffers it lent
 *     (a WeakSet, so a buffer that is never released is simply collected) and ignores a second
 *     release or a foreign buffer, so a double release cannot put one buffer in the free list
 *     twice and hand it to two owners. RecordBatch.release() is idempotent on top of that.
 *  5. Uncompressed batches own nothing from the pool: their records are views into the fetch
 *     response frame, which belongs to whoever read it from the socket. Releasing such a batch only
 *     tells the batch its records are dead (they then refuse to read), so the frame's owner knows
 *     when it may reuse the frame. The same holds for an lz4 batch whose frame is one stored block
 *     (Java stores what LZ4 cannot shrink): its records are the block's bytes in the fetch frame.
 *
 * Buffers are grouped in power-of-two size classes (minClassBytes .. maxClassBytes): acquire(n)
 * returns a buffer of the smallest class >= n, whose `length` is the class size, not n. Requests
 * above the largest class are served by a one-off allocation that release() does not keep. Free
 * buffers are kept while the total stays under maxRetainedBytes; beyond that a released buffer is
 * dropped for the garbage collector. Nothing is zero-filled (Buffer.allocUnsafeSlow): a pooled
 * buffer holds whatever its last user wrote, which is why rule 3 matters.
 */

export interface BufferPoolOptions {
  /** Upper bound on the bytes kept in free lists (default 64 MiB). 0 disables retention. */
  maxRetainedBytes?: number;
  /** Smallest size class (default 4 KiB); rounded up to a power of two. */
  minClassBytes?: number;
  /** Largest size class (default 64 MiB); bigger requests are not pooled. */
  maxClassBytes?: number;
}

export interface BufferPoolStats {
  /** acquire() calls served from a free list. */
  hits: number;
  /** acquire() calls that had to allocate. */
  misses: number;
  /** Buffers taken back into a free list. */
  released: number;
  /** Released buffers not kept (over the cap, or larger than the largest class). */
  dropped: number;
  /** release() calls ignored: a second release, or a buffer this pool did not lend. */
  ignored: number;
  /** Bytes currently held in free lists. */
  bytesRetained: number;
  /** Buffers currently held in free lists. */
  buffersRetained: number;
  /** Buffers lent and not released yet (a lost buffer stays counted here). */
  outstanding: number;
}

const MIN_SHIFT_FLOOR = 6; // 64 bytes: smaller classes are not worth a free list

function ceilLog2(n: number): number {
  return n <= 1 ? 0 : 32 - Math.clz32(n - 1);
}

export class BufferPool {
  private retainLimit: number;
  readonly minClassBytes: number;
  readonly maxClassBytes: number;
  private readonly minShift: number;
  private readonly maxShift: number;
  /** free[k] holds buffers of exactly 2^(minShift + k) bytes, most recently released last. */
  private readonly free: Buffer[][];
  /** Buffers currently lent out: what release() accepts. */
  private lent = new WeakSet<Buffer>();
  private readonly counters: BufferPoolStats = {
    hits: 0,
    misses: 0,
    released: 0,
    dropped: 0,
    ignored: 0,
    bytesRetained: 0,
    buffersRetained: 0,
    outstanding: 0,
  };

  constructor(options: BufferPoolOptions = {}) {
    const maxRetained = options.maxRetainedBytes ?? 64 * 1024 * 1024;
    if (!(maxRetained >= 0)) throw new RangeError(`maxRetainedBytes must be >= 0, got ${maxRetained}`);
    this.minShift = Math.max(MIN_SHIFT_FLOOR, ceilLog2(options.minClassBytes ?? 4096));
    // 2^30 keeps every class size a positive int32 and within what allocUnsafeSlow accepts.
    this.maxShift = Math.min(30, Math.max(this.minShift, ceilLog2(options.maxClassBytes ?? 64 * 1024 * 1024)));
    this.minClassBytes = 2 ** this.minShift;
    this.maxClassBytes = 2 ** this.maxShift;
    this.retainLimit = maxRetained;
    this.free = [];
    for (let s = this.minShift; s <= this.maxShift; s++) this.free.push([]);
  }

  /** Upper bound on the bytes kept in free lists. */
  get maxRetainedBytes(): number {
    return this.retainLimit;
  }

  /**
   * Changes the bound on the bytes kept in free lists. Lowering it drops free buffers, the
   * largest first, until what is kept fits; lent buffers are not affected (they are dropped on
   * release if they do not fit then).
   */
  setMaxRetainedBytes(bytes: number): void {
    if (!(bytes >= 0)) throw new RangeError(`maxRetainedBytes must be >= 0, got ${bytes}`);
    this.retainLimit = bytes;
    const c = this.counters;
    for (let k = this.free.length - 1; k >= 0 && c.bytesRetained > bytes; k--) {
      const list = this.free[k]!;
      while (list.length > 0 && c.bytesRetained > bytes) {
        // The oldest release first: the most recent ones are the likeliest to be warm in cache.
        const buf = list.shift()!;
        c.bytesRetained -= buf.length;
        c.buffersRetained--;
        c.dropped++;
      }
    }
  }

  /** A snapshot of the counters. */
  get stats(): BufferPoolStats {
    return { ...this.counters };
  }

  /** The capacity acquire(size) would return. */
  classSize(size: number): number {
    if (size <= this.minClassBytes) return this.minClassBytes;
    if (size > this.maxClassBytes) return size;
    return 2 ** ceilLog2(size);
  }

  /**
   * A buffer of at least `size` bytes (its length is the class size), with arbitrary contents.
   * The caller owns it until it passes it to release().
   */
  acquire(size: number): Buffer {
    if (!(size >= 0) || !Number.isSafeInteger(size)) throw new RangeError(`cannot acquire ${size} bytes`);
    const c = this.counters;
    let buf: Buffer | undefined;
    if (size > this.maxClassBytes) {
      c.misses++;
      buf = Buffer.allocUnsafeSlow(size);
    } else {
      const shift = size <= this.minClassBytes ? this.minShift : ceilLog2(size);
      const list = this.free[shift - this.minShift]!;
      buf = list.pop();
      if (buf !== undefined) {
        c.hits++;
        c.bytesRetained -= buf.length;
        c.buffersRetained--;
      } else {
        c.misses++;
        // allocUnsafeSlow: never carved from Node's shared 8 KiB slab, so the buffer owns its
        // whole ArrayBuffer and reusing it cannot touch anyone else's bytes.
        buf = Buffer.allocUnsafeSlow(2 ** shift);
      }
    }
    this.lent.add(buf);
    c.outstanding++;
    return buf;
  }

  /** Gives a buffer from acquire() back. A second release, or a foreign buffer, is ignored. */
  release(buf: Buffer): void {
    const c = this.counters;
    if (!this.lent.delete(buf)) {
      c.ignored++;
      return;
    }
    c.outstanding--;
    const size = buf.length;
    if (size > this.maxClassBytes || c.bytesRetained + size > this.retainLimit) {
      c.dropped++;
      return;
    }
    this.free[ceilLog2(size) - this.minShift]!.push(buf);
    c.released++;
    c.bytesRetained += size;
    c.buffersRetained++;
  }

  /** Drops every free buffer (lent buffers stay lent). */
  clear(): void {
    for (const list of this.free) list.length = 0;
    this.counters.bytesRetained = 0;
    this.counters.buffersRetained = 0;
  }

  /** Zeroes the hit/miss/release counters (not the retained or outstanding figures). */
  resetCounters(): void {
    const c = this.counters;
    c.hits = c.misses = c.released = c.dropped = c.ignored = 0;
  }
}

/**
 * The pool record batches use unless told otherwise. 32 MiB of free buffers is enough to keep a
 * consumer with a few partitions in flight from allocating in steady state.
 */
export const defaultBufferPool = new BufferPool({ maxRetainedBytes: 32 * 1024 * 1024 });
