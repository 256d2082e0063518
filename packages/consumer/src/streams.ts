import { CorruptRecordError, type DeserializationError } from './errors.js';
import { decodeBatch } from './deserialize.js';
import { loopClock, yieldToLoop } from './loop-clock.js';
import type { FetchedPartition } from './fetch/fetched-partition.js';
import type { ConsumedRecord, ConsumerBatch } from './records/index.js';
import type { PartitionState } from './state/partition-state.js';

/** What a stream needs from the consumer that feeds it. */
export interface StreamOwner {
  readonly maxPollRecords: number;
  /** Longest delivery between two runs of the event loop's timers, before stepping out (ms; see loop-clock.ts). */
  readonly yieldIntervalMs: number;
  /** A batch is about to be handed to the application (positions, interceptors, poll timer). */
  delivered(batch: ConsumerBatch): ConsumerBatch;
  /** The stream drained data: partitions may be fetchable again. */
  drained(): void;
  /** False while nothing may be delivered (a group member whose session lapsed). */
  mayDeliver(): boolean;
  readonly deserializationErrorPolicy: 'stop' | 'skip';
  /** A record failed to deserialize: 'stop' pauses its partition, 'skip' reports it. */
  deserializationFailed(err: DeserializationError, policy: 'stop' | 'skip'): void;
  /** The next batch of a partition's fetched data, its position advanced (the fetch collector). */
  collect(data: FetchedPartition, max: number): ConsumerBatch | null;
  /** Corrupt data at the partition's position: fetched again from there (and fails again until a seek). */
  corrupt(state: PartitionState): void;
}

/** How often a stream held back by mayDeliver() looks again. */
const HELD_RECHECK_MS = 50;

/**
 * A message stream, in the old high-level consumer's sense: an async iterable of batches with its
 * own queue, fed by the fetcher. A partition feeds exactly one stream at a time, so a stream's
 * batches of one partition are in offset order and nothing is shared between streams; several
 * partitions may share one stream.
 *
 * The queue is bounded in bytes by the fetcher: a partition whose buffered bytes reach the limit is
 * left out of fetches until the application drains it.
 *
 * Data that reached its partition's high watermark (a partition caught up with its log, a few new
 * records) goes to the application ahead of data queued before it for lagging partitions, each
 * partition's data still in offset order: a live partition's records would otherwise wait behind
 * every megabyte of backlog fetched before them. Lagging partitions cannot starve anything this
 * way: a caught-up partition's data is only what its producers wrote since its last Fetch, and a
 * partition that falls behind is no longer caught up.
 *
 * Iterating: `for await (const batch of stream)` releases each batch when the loop asks for the
 * next one; `for await (const record of stream.records())` when it moves past the batch's last
 * record. Released means finished (see ConsumerBatch): a loop left early (break, throw, return)
 * finishes only what it had moved past, the batches before the current one or the records before
 * the current one, and gives the rest back to be delivered again.
 */
export class MessageStream<K = unknown, V = unknown> implements AsyncIterable<ConsumerBatch<K, V>> {
  private readonly queue: FetchedPartition[] = [];
  /** Queued data that reached its partition's high watermark when it was fetched (see above). */
  private readonly caughtUp = new Set<FetchedPartition>();
  /** Readers waiting for data (run() with eachBatch has several per stream). */
  private waiters: (() => void)[] = [];
  /** The partition of the batch poll() last returned. */
  private polled: PartitionState | undefined;
  private failure: Error | undefined;
  private closed = false;
  /** When control last went back to the event loop (see take()). */

  /** @internal Streams are made by the consumer (its default stream, streams()). */
  constructor(
    private readonly owner: StreamOwner,
    /** The topic this stream serves, or undefined for the consumer's default stream. */
    readonly topic: string | undefined,
    readonly index: number,
  ) {}

  /** @internal The fetcher hands over one partition's data; `caughtUp`: it ends at the partition's high watermark. */
  push(data: FetchedPartition, caughtUp = false): void {
    if (this.closed) {
      data.drop();
      return;
    }
    this.queue.push(data);
    if (caughtUp) this.caughtUp.add(data);
    this.wake();
  }

  private removeAt(i: number): void {
    const [data] = this.queue.splice(i, 1);
    this.caughtUp.delete(data!);
  }

  /** An error for the application (e.g. auto.offset.reset=none); thrown by the next pull. */
  fail(err: Error): void {
    this.failure ??= err;
    this.wake();
  }

  /** Something the waiting reader should look at again (a partition resumed, data arrived). */
  wake(): void {
    if (this.waiters.length === 0) return;
    const waiting = this.waiters;
    this.waiters = [];
    for (const w of waiting) w();
  }

  /** Undelivered data of these partitions is dropped (they move, are revoked, or seek). */
  dropPartition(key: string): void {
    for (let i = this.queue.length - 1; i >= 0; i--) {
      const d = this.queue[i]!;
      if (d.state.key === key) {
        d.drop();
        this.removeAt(i);
      }
    }
  }

  /** Bytes waiting in this stream (for tests and metrics). */
  get queuedPartitions(): number {
    return this.queue.length;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const d of this.queue.splice(0)) d.drop();
    this.caughtUp.clear();
    this.wake();
  }

  /**
   * The next batch, waiting for data if there is none; null once the stream is closed.
   *
   * A reader that never awaits anything but this stream would, with data always buffered, run
   * from resolved promise to resolved promise without ever letting timers and sockets run (the
   * microtask queue is drained before the event loop moves on). So once the event loop has not run
   * its timers for yieldIntervalMs (1 ms by default; loop-clock.ts), take() steps out to it:
   * heartbeats, fetch responses and timers keep flowing however fast the application consumes.
   */
  take(): Promise<ConsumerBatch | null> {
    return this.takeWhere(undefined);
  }

  /** @internal take() of the partitions `accept` takes now (run()'s scheduler; see pollFrom). */
  async takeWhere(accept: ((state: PartitionState) => boolean) | undefined): Promise<ConsumerBatch | null> {
    for (;;) {
      if (this.failure) {
        const err = this.failure;
        this.failure = undefined;
        throw err;
      }
      if (this.closed) return null;
      let batch = this.poll(accept);
      if (batch !== null) {
        const state = this.polled!;
        const generation = state.generation;
        if (loopClock.due(this.owner.yieldIntervalMs)) {
          await yieldToLoop();
          if (state.generation !== generation) {
            // Given back, sought or moved while this take() stepped out (another reader of the
            // stream gave back an earlier batch of the partition): stale, its records come again.
            batch.giveBack();
            continue;
          }
        }
        if (batch.decodesEarly) {
          const owner = this.owner;
          const decoded = await decodeBatch(batch, owner.deserializationErrorPolicy, (err) => owner.deserializationFailed(err, 'skip'));
          if (decoded.failure) {
            owner.deserializationFailed(decoded.failure, 'stop');
            if (decoded.batch === null) throw decoded.failure;
            // The records before the failure first; the failure with the next pull.
            this.fail(decoded.failure);
          }
          if (decoded.batch === null) continue;
          batch = decoded.batch;
        }
        return this.owner.delivered(batch);
      }
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
      });
    }
  }

  /**
   * A batch from the first partition with data that is not paused, or null: partitions with
   * caught-up data queued first (their data in queue order, which is offset order), then the rest.
   */
  private poll(accept: ((state: PartitionState) => boolean) | undefined): ConsumerBatch | null {
    if (this.queue.length > 0 && !this.owner.mayDeliver()) {
      setTimeout(() => this.wake(), HELD_RECHECK_MS).unref();
      return null;
    }
    if (this.caughtUp.size > 0) {
      const keys = new Set<string>();
      for (const d of this.caughtUp) keys.add(d.state.key);
      const batch = this.pollFrom(keys, accept);
      if (batch !== null) return batch;
    }
    return this.pollFrom(undefined, accept);
  }

  /**
   * The first batch from the queue's data, of these partitions only when `only` is given, and of
   * partitions the reader takes now (run()'s scheduler takes a partition's next batch only once it
   * has dispatched most of the one before) when `accept` is given.
   */
  private pollFrom(only: ReadonlySet<string> | undefined, accept: ((state: PartitionState) => boolean) | undefined): ConsumerBatch | null {
    let drained = false;
    try {
      for (let i = 0; i < this.queue.length; ) {
        const data = this.queue[i]!;
        const state = data.state;
        if (only !== undefined && !only.has(state.key)) {
          i++;
          continue;
        }
        if (data.generation !== state.generation) {
          // Stale: the partition was sought, reset or moved since this was fetched.
          data.drop();
          this.removeAt(i);
          drained = true;
          continue;
        }
        if (state.paused || state.revoking || (accept !== undefined && !accept(state))) {
          i++;
          continue;
        }
        let batch: ConsumerBatch | null;
        try {
          batch = this.owner.collect(data, this.owner.maxPollRecords);
        } catch (err) {
          // Corrupt data (bad CRC, malformed record): never skip it silently. The undelivered rest
          // is dropped, the partition will be fetched again from the same position, and the
          // application gets the error each time until it seeks past the offset (as Java does).
          data.drop();
          this.removeAt(i);
          drained = true;
          this.owner.corrupt(state);
          throw new CorruptRecordError(state.topic, state.partition, state.position ?? -1n, err);
        }
        if (data.done) {
          this.removeAt(i);
          drained = true;
        }
        if (batch !== null) {
          this.polled = state;
          return batch;
        }
        if (!data.done) i++;
      }
      return null;
    } finally {
      if (drained) this.owner.drained();
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<ConsumerBatch<K, V>> {
    let previous: ConsumerBatch<K, V> | undefined;
    return {
      next: async () => {
        previous?.release();
        previous = undefined;
        const batch = (await this.take()) as ConsumerBatch<K, V> | null;
        if (batch === null) return { value: undefined, done: true };
        previous = batch;
        return { value: batch, done: false };
      },
      return: async () => {
        // Left early: the body may not have finished the batch it was on.
        previous?.giveBack();
        previous = undefined;
        return { value: undefined, done: true };
      },
    };
  }

  /** The stream's records one by one; each batch is released once its last record is passed. */
  records<RK = K, RV = V>(): AsyncIterable<ConsumedRecord<RK, RV>> {
    const stream = this;
    return {
      [Symbol.asyncIterator](): AsyncIterator<ConsumedRecord<RK, RV>> {
        let batch: ConsumerBatch | undefined;
        let i = 0;
        return {
          next: async () => {
            for (;;) {
              if (batch !== undefined && i < batch.count) {
                let records: readonly ConsumedRecord[];
                try {
                  records = batch.records;
                } catch (err) {
                  // Corrupt records (found when the batch's records are made): the batch goes back
                  // undelivered, to be fetched again (and fail again) until the application seeks.
                  batch.giveBack();
                  batch = undefined;
                  throw err;
                }
                return { value: records[i++] as ConsumedRecord<RK, RV>, done: false };
              }
              batch?.release();
              batch = (await stream.take()) ?? undefined;
              i = 0;
              if (batch === undefined) return { value: undefined, done: true };
            }
          },
          return: async () => {
            // Left early on records[i - 1]: the records before it are finished, it and the rest not.
            if (batch !== undefined) {
              if (i >= 2) batch.markProcessed(batch.records[i - 2]!);
              batch.giveBack();
            }
            batch = undefined;
            return { value: undefined, done: true };
          },
        };
      },
    };
  }
}
