/**
 * Where the connection gets the memory for response frames too large for its read buffer.
 *
 * `FramePool` is the two-method shape of @kwire/protocol's BufferPool (acquire/release, power-of-two
 * classes), so the consumer can hand the connection the same pool its record batches use, and one
 * Fetch frame's memory goes from socket to decoder to the next socket read without a copy or a
 * fresh allocation. `SimpleFramePool` is the default when none is given.
 *
 * Ownership (the same rule as BufferPool's): acquire() hands a buffer to exactly one owner; the
 * owner gives it back with release() once, and must not touch it afterwards (the next acquire()
 * overwrites it). acquire(n) may return a buffer longer than n: callers use subarray(0, n).
 */
export interface FramePool {
  acquire(size: number): Buffer;
  release(buf: Buffer): void;
}

export interface SimpleFramePoolStats {
  hits: number;
  misses: number;
  released: number;
  /** release() of a buffer that is not lent (a double release, or a foreign buffer): ignored. */
  ignored: number;
  outstanding: number;
  bytesRetained: number;
}

/**
 * A small power-of-two pool: one free list per class from 64 KiB up, at most `maxRetainedBytes`
 * kept. Buffers come from Buffer.allocUnsafeSlow, so each owns its whole ArrayBuffer and reuse can
 * never touch bytes of a neighbour carved from Node's shared slab.
 */
export class SimpleFramePool implements FramePool {
  private readonly free = new Map<number, Buffer[]>();
  private readonly lent = new WeakSet<Buffer>();
  private readonly maxRetainedBytes: number;
  readonly stats: SimpleFramePoolStats = { hits: 0, misses: 0, released: 0, ignored: 0, outstanding: 0, bytesRetained: 0 };

  constructor(options: { maxRetainedBytes?: number } = {}) {
    this.maxRetainedBytes = options.maxRetainedBytes ?? 64 * 1024 * 1024;
  }

  private static classOf(size: number): number {
    // 64 KiB floor: smaller frames fit the read buffer and never come here in steady state.
    return size <= 65536 ? 65536 : 2 ** Math.ceil(Math.log2(size));
  }

  acquire(size: number): Buffer {
    const cls = SimpleFramePool.classOf(size);
    const list = this.free.get(cls);
    let buf = list?.pop();
    if (buf !== undefined) {
      this.stats.hits++;
      this.stats.bytesRetained -= buf.length;
    } else {
      this.stats.misses++;
      buf = Buffer.allocUnsafeSlow(cls);
    }
    this.lent.add(buf);
    this.stats.outstanding++;
    return buf;
  }

  release(buf: Buffer): void {
    if (!this.lent.delete(buf)) {
      this.stats.ignored++;
      return;
    }
    this.stats.outstanding--;
    if (this.stats.bytesRetained + buf.length > this.maxRetainedBytes) return;
    let list = this.free.get(buf.length);
    if (list === undefined) this.free.set(buf.length, (list = []));
    list.push(buf);
    this.stats.released++;
    this.stats.bytesRetained += buf.length;
  }
}

/**
 * Fresh memory for every frame, never reused (recordBuffers 'owned'): a frame's bytes stay valid
 * for as long as anything holds a view of them, and the garbage collector frees them after.
 */
export const freshFrames: FramePool = {
  acquire: (size) => Buffer.allocUnsafeSlow(size),
  release: () => {},
};

/** The pool connections share when their options name none. */
export const defaultFramePool: FramePool = new SimpleFramePool();
