import { tpKey } from '../tp-key.js';
import type { ConsumerBatch } from '../records/index.js';
import type { MessageStream } from '../streams.js';
import type { FailureDecision, InFlightRecord, ProcessingFailure, RunContext, RunHandle, RunOptions } from './types.js';
import type { PartitionState } from '../state/partition-state.js';
import { IdleWaiter } from './idle-waiter.js';
import { retryWait } from './types.js';

const DEFAULT_MAX_CONCURRENCY = 64;

/**
 * run() with eachBatch: up to `maxConcurrency` callbacks at once, each on a batch of a different
 * partition (a partition's batches one after another, in order). A batch is finished when its
 * callback resolved (or as far as it marked, eachBatchAutoResolve false). A callback that throws
 * gives its batch back from the first unfinished record: delivered again after a backoff
 * ('retry'), or run() rejects ('stop'; 'skip' is for eachMessage and stops here too).
 *
 * Each loop takes its next batch from its stream among the partitions no other loop is on; a batch
 * of a partition that another loop took meanwhile (a race between two takes) is queued for it.
 */
export class BatchRunner<K, V> implements RunHandle {
  readonly done: Promise<void>;
  private settle: { resolve: () => void; reject: (err: unknown) => void } | undefined;
  private stopped = false;
  /** Partitions a loop is on, with batches of them taken by other loops meanwhile. */
  private readonly busy = new Map<string, ConsumerBatch[]>();
  /** Consecutive failures at the same batch start, per partition: the backoff grows with them. */
  private readonly failures = new Map<string, { offset: bigint; attempts: number }>();
  /** What each loop's callback is working on, for stop()'s report. */
  private readonly current = new Set<ConsumerBatch>();
  private readonly idle = new IdleWaiter();

  constructor(
    private readonly streams: readonly MessageStream[],
    private readonly options: RunOptions<K, V>,
    private readonly context: RunContext,
  ) {
    this.done = new Promise<void>((resolve, reject) => {
      this.settle = { resolve, reject };
    });
    const loops = Math.max(1, options.maxConcurrency ?? DEFAULT_MAX_CONCURRENCY);
    const all: Promise<void>[] = [];
    for (const stream of streams) for (let i = 0; i < loops; i++) all.push(this.loop(stream));
    Promise.all(all).then(
      () => this.end(),
      (err: unknown) => this.end(err ?? new Error('a run() loop failed')),
    );
  }

  private end(err?: unknown): void {
    this.stopped = true;
    for (const s of this.streams) s.wake();
    const s = this.settle;
    this.settle = undefined;
    if (err === undefined) s?.resolve();
    else s?.reject(err);
  }

  private readonly accept = (state: PartitionState): boolean => !this.busy.has(state.key);

  private async loop(stream: MessageStream): Promise<void> {
    for (;;) {
      if (this.stopped) return;
      const batch = (await stream.takeWhere(this.accept)) as ConsumerBatch<K, V> | null;
      if (batch === null) return;
      const key = tpKey(batch.topic, batch.partition);
      const queued = this.busy.get(key);
      if (queued !== undefined) {
        queued.push(batch);
        continue;
      }
      const mine: ConsumerBatch[] = [];
      this.busy.set(key, mine);
      try {
        let next: ConsumerBatch | undefined = batch;
        while (next !== undefined) {
          if (this.stopped) {
            next.giveBack();
            for (const b of mine.splice(0)) b.giveBack();
            return;
          }
          // A batch queued for this loop before a lapse of the group session (a frozen process
          // waking) does not start: it goes back, with what is queued behind it.
          if (next !== batch && !this.context.mayStart()) {
            next.giveBack();
            for (const b of mine.splice(0)) b.giveBack();
            break;
          }
          const ok = await this.handle(next as ConsumerBatch<K, V>, key);
          if (!ok) {
            // Given back: the queued batches come after it and are stale now.
            for (const b of mine.splice(0)) b.giveBack();
            break;
          }
          next = mine.shift();
        }
      } finally {
        this.busy.delete(key);
        // Its partition may be taken again by a loop waiting in take().
        stream.wake();
      }
    }
  }

  /** Runs the callback on one batch; false when the batch was given back unfinished. */
  private async handle(batch: ConsumerBatch<K, V>, key: string): Promise<boolean> {
    const autoResolve = this.options.eachBatchAutoResolve ?? true;
    this.current.add(batch);
    try {
      await this.options.eachBatch!({ batch });
      if (batch.partlyProcessed || (!autoResolve && !batch.fullyProcessed)) {
        batch.giveBack();
        return false;
      }
      batch.release();
      this.failures.delete(key);
      return true;
    } catch (err) {
      const offset = batch.unprocessedFrom;
      batch.giveBack();
      if (!this.stopped) await this.failed(batch, key, offset, err);
      return false;
    } finally {
      this.current.delete(batch);
      if (this.current.size === 0) this.idle.idle();
    }
  }

  private async failed(batch: ConsumerBatch, key: string, offset: bigint, err: unknown): Promise<void> {
    const last = this.failures.get(key);
    const attempts = last !== undefined && last.offset === offset ? last.attempts + 1 : 1;
    this.failures.set(key, { offset, attempts });
    const failure: ProcessingFailure = { topic: batch.topic, partition: batch.partition, offset, attempts };
    const policy = this.options.onFailure ?? 'retry';
    let decision: FailureDecision;
    try {
      decision = typeof policy === 'function' ? await policy(err, failure) : policy;
    } catch (policyErr) {
      this.end(policyErr);
      return;
    }
    if (decision !== 'retry' || this.stopped) {
      this.end(err);
      return;
    }
    const waitMs = retryWait(this.context, attempts);
    this.context.logger.warn('processing failed: the partition is delivered again from the first unfinished record', {
      topic: batch.topic,
      partition: batch.partition,
      offset: offset.toString(),
      attempts,
      retryInMs: waitMs,
      error: (err as Error)?.message ?? String(err),
    });
    this.context.backOff(batch.topic, batch.partition, waitMs);
  }

  async stop(graceMs: number): Promise<InFlightRecord[]> {
    this.stopped = true;
    for (const s of this.streams) s.wake();
    if (this.current.size > 0 && graceMs > 0) {
      await this.idle.upTo(graceMs);
    }
    const running: InFlightRecord[] = [];
    for (const b of this.current) if (!b.isReleased) running.push({ topic: b.topic, partition: b.partition, offset: b.unprocessedFrom });
    this.end();
    return running;
  }
}
