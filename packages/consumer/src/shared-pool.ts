import { BufferPool } from '@kwire/protocol';

/**
 * The buffer pool every consumer and share consumer of the process draws its Fetch frames and
 * decompression output from (the ownership rule of @kwire/protocol's BufferPool holds as it is:
 * each buffer has one owner at a time, whichever client that is).
 *
 * Why one for the process rather than one per client: a new client with a pool of its own
 * allocated every frame afresh (16 MiB buffers for 12 MiB answers), and that much new external
 * memory made V8 run major collections while it read. The stall probe (a new consumer per pass,
 * 500k x 100 B over 12 partitions, five passes after a warm-up): major GCs of 5-16 ms in most
 * passes and the 1 ms timer's p99 3-7 ms with a pool per consumer; none and 1.9-3.1 ms shared.
 *
 * What it keeps: the sum of what its live clients ask for, each the bound a pool of its own had
 * (2 x its buffered bytes + 16 MiB, at most 256 MiB), so that memory is bounded as before. A client
 * that closes leaves its part for LINGER_MS (5 s) more, for the client that replaces it (a restart, the
 * bench's passes); then free buffers beyond what the live clients ask for are let go.
 */
export class SharedBufferPool {
  readonly pool = new BufferPool({ maxRetainedBytes: 0 });
  private readonly wants = new Map<object, number>();
  private linger: NodeJS.Timeout | undefined;

  /** `lingerMs`: how long a closed client's part is kept (tests shorten it). */
  constructor(private readonly lingerMs = LINGER_MS) {}

  /** A client starts: the pool, now keeping `retainBytes` more for it. */
  join(client: object, retainBytes: number): BufferPool {
    this.wants.set(client, retainBytes);
    const sum = this.sum();
    // Never lowered here: a part that lingers stays until its timer.
    if (sum > this.pool.maxRetainedBytes) this.pool.setMaxRetainedBytes(sum);
    return this.pool;
  }

  /** A client closed: its part goes after lingerMs (a second call does nothing). */
  leave(client: object): void {
    if (!this.wants.delete(client)) return;
    clearTimeout(this.linger);
    this.linger = setTimeout(() => {
      this.linger = undefined;
      this.pool.setMaxRetainedBytes(this.sum());
    }, this.lingerMs);
    this.linger.unref();
  }

  private sum(): number {
    let sum = 0;
    for (const b of this.wants.values()) sum += b;
    return sum;
  }
}

/** How long a closed client's part of the pool is kept for the next one. */
export const LINGER_MS = 5_000;

/** What one client keeps in the shared pool: 2 x `bufferedBytes` + 16 MiB, at most 256 MiB. */
export function retainedFor(bufferedBytes: number): number {
  return Math.min(2 * bufferedBytes + 16 * 1024 * 1024, 256 * 1024 * 1024);
}

export const sharedBufferPool = new SharedBufferPool();
