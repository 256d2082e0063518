import type { Logger } from './logger.js';
import { tpKey } from './tp-key.js';
import type { ConsumedRecord, ConsumerBatch } from './records/index.js';
import type { MessageStream } from './streams.js';

export interface EachBatchPayload<K = unknown, V = unknown> {
  batch: ConsumerBatch<K, V>;
}

export interface EachMessagePayload<K = unknown, V = unknown> {
  topic: string;
  partition: number;
  message: ConsumedRecord<K, V>;
}

/** Where processing failed: the partition, its first unfinished record, and how often it failed there in a row. */
export interface ProcessingFailure {
  topic: string;
  partition: number;
  offset: bigint;
  attempts: number;
}

/**
 * What run() does when a callback throws. Either way nothing is committed past the first record
 * the callback did not finish:
 *  - 'retry' (the default, kafkajs's restartOnFailure): the partition is delivered again from that
 *    record after a growing wait (retry.backoff.ms doubling up to retry.backoff.max.ms), for ever;
 *    other partitions go on meanwhile;
 *  - 'stop': run() rejects with the error and every loop of it stops at its next batch, which it
 *    gives back (delivered again to whoever reads the stream next);
 *  - a function deciding per failure (throwing from it is a 'stop' with that error).
 */
export type FailurePolicy = 'retry' | 'stop' | ((error: unknown, failure: ProcessingFailure) => 'retry' | 'stop' | Promise<'retry' | 'stop'>);

export interface RunOptions<K = unknown, V = unknown> {
  /** Called with each batch; the batch is released when the returned promise settles. */
  eachBatch?: (payload: EachBatchPayload<K, V>) => Promise<void> | void;
  /**
   * Called with each record, in order per partition. A record is finished when its callback
   * resolves: a commit made at any moment (auto-commit, commitSync() inside the callback) covers it.
   */
  eachMessage?: (payload: EachMessagePayload<K, V>) => Promise<void> | void;
  /**
   * eachBatch only: a callback that resolves without marking anything (batch.markProcessed) has
   * finished its whole batch (default true). With false, only what it marked is finished and the
   * rest is delivered again. Either way, a batch marked in part has its unmarked rest delivered again.
   */
  eachBatchAutoResolve?: boolean;
  /** What a callback that throws leads to (default 'retry'). */
  onFailure?: FailurePolicy;
}

/** What run() reads of a partition between two records: whether the rest of its batch may still go. */
export interface RunPartition {
  readonly paused: boolean;
  readonly revoking: boolean;
  /** Bumped by a seek or a reset: records fetched before it are no longer the partition's next. */
  readonly generation: number;
}

export interface RunContext {
  logger: Logger;
  retryBackoffMs: number;
  retryBackoffMaxMs: number;
  /** The partition is not fetched (so not delivered again) for `ms`. */
  backOff(topic: string, partition: number, ms: number): void;
  /** The partition's state while it is assigned (undefined once it is not). */
  partition(topic: string, partition: number): RunPartition | undefined;
}

/** A record (or a batch, with eachBatch) whose callback had not settled when the run was stopped. */
export interface InFlightRecord {
  topic: string;
  partition: number;
  /** The record's offset (eachBatch: the batch's first unfinished one). */
  offset: bigint;
}

/** A run of callbacks: `done` settles when the run ends; stop() ends it now (close()). */
export interface RunHandle {
  readonly done: Promise<void>;
  /**
   * Ends the run: every loop stops before its next record (the rest of its batch is given back).
   * Waits up to `graceMs` for callbacks under way to settle, then `done` resolves, even while a
   * callback hangs. Resolves with the records whose callbacks were still running: they stay
   * unfinished, so no commit covers them.
   */
  stop(graceMs: number): Promise<InFlightRecord[]>;
}

/**
 * kafkajs-style callbacks over message streams, one loop per stream: partitions of different
 * streams are processed concurrently, each partition in order. eachMessage finishes each record
 * when its callback resolves; a batch is finished when its callback resolved (eachBatch). What a
 * callback that throws had not finished is given back and delivered again, or ends the run, as
 * `onFailure` says. Between two records of a batch the loop looks at the partition: paused, sought,
 * revoked or the run stopped, the rest of the batch is given back (delivered again after resume(),
 * from the new position, or to the partition's next owner) instead of handed to the callback.
 */
export function startRun<K, V>(streams: readonly MessageStream[], options: RunOptions<K, V>, context: RunContext): RunHandle {
  const { eachBatch, eachMessage } = options;
  const autoResolve = options.eachBatchAutoResolve ?? true;
  const policy = options.onFailure ?? 'retry';
  // Consecutive failures at the same record, per partition: the backoff grows with them.
  const failures = new Map<string, { offset: bigint; attempts: number }>();
  // What each loop's callback is working on (index = the loop's), for stop()'s report.
  const current: ({ batch: ConsumerBatch<K, V>; index: number } | undefined)[] = streams.map(() => undefined);
  let stopped = false;
  /** stop() waiting for the loops to put down what they hold. */
  let idle: (() => void) | undefined;
  let settle: { resolve: () => void; reject: (err: unknown) => void } | undefined;

  const done = new Promise<void>((resolve, reject) => {
    settle = { resolve, reject };
  });
  const end = (err?: unknown) => {
    stopped = true;
    const s = settle;
    settle = undefined;
    if (err === undefined) s?.resolve();
    else s?.reject(err);
  };

  /** Whether the record after records[i - 1] may still go to the callback. */
  const mayGoOn = (partition: RunPartition | undefined, generation: number): boolean =>
    !stopped && partition !== undefined && !partition.paused && !partition.revoking && partition.generation === generation;

  const loop = async (stream: MessageStream, n: number): Promise<void> => {
    for (;;) {
      const batch = (await stream.take()) as ConsumerBatch<K, V> | null;
      if (batch === null) return;
      if (stopped) {
        batch.giveBack();
        return;
      }
      const key = tpKey(batch.topic, batch.partition);
      let i = 0;
      const here = { batch, index: 0 };
      current[n] = here;
      try {
        if (eachBatch) {
          await eachBatch({ batch });
          if (batch.partlyProcessed || (!autoResolve && !batch.fullyProcessed)) batch.giveBack();
          else batch.release();
        } else {
          const records = batch.records;
          const partition = context.partition(batch.topic, batch.partition);
          const generation = partition?.generation ?? -1;
          for (; i < records.length; i++) {
            if (i > 0 && !mayGoOn(partition, generation)) break;
            here.index = i;
            const record = records[i]!;
            await eachMessage!({ topic: batch.topic, partition: batch.partition, message: record });
            // Finished now, not when the batch is released: a commit made meanwhile covers it.
            batch.countFinished(i + 1);
          }
          if (i < records.length) batch.giveBack();
          else batch.release();
        }
        failures.delete(key);
      } catch (err) {
        // (The records were made objects unless making them is what failed: corrupt records.)
        const made = eachMessage && batch.hasRecordObjects;
        const offset = made ? batch.records[i]!.offset : batch.unprocessedFrom;
        batch.giveBack();
        if (stopped) return;
        const last = failures.get(key);
        const attempts = last !== undefined && last.offset === offset ? last.attempts + 1 : 1;
        failures.set(key, { offset, attempts });
        const failure: ProcessingFailure = { topic: batch.topic, partition: batch.partition, offset, attempts };
        let decision: 'retry' | 'stop';
        try {
          decision = typeof policy === 'function' ? await policy(err, failure) : policy;
        } catch (policyErr) {
          end(policyErr);
          return;
        }
        if (decision === 'stop' || stopped) {
          end(err);
          return;
        }
        const waitMs = Math.min(context.retryBackoffMs * 2 ** Math.min(attempts - 1, 30), Math.max(context.retryBackoffMs, context.retryBackoffMaxMs));
        context.logger.warn('processing failed: the partition is delivered again from the first unfinished record', {
          topic: batch.topic,
          partition: batch.partition,
          offset: offset.toString(),
          attempts,
          retryInMs: waitMs,
          error: (err as Error)?.message ?? String(err),
        });
        context.backOff(batch.topic, batch.partition, waitMs);
      } finally {
        if (current[n] === here) current[n] = undefined;
        if (idle !== undefined && current.every((c) => c === undefined)) idle();
      }
    }
  };

  Promise.all(streams.map(loop)).then(
    () => end(),
    (err: unknown) => end(err ?? new Error('a run() loop failed')),
  );

  return {
    done,
    async stop(graceMs: number): Promise<InFlightRecord[]> {
      stopped = true;
      if (current.some((c) => c !== undefined) && graceMs > 0) {
        let timer: NodeJS.Timeout | undefined;
        await new Promise<void>((resolve) => {
          idle = resolve;
          timer = setTimeout(resolve, graceMs);
        });
        clearTimeout(timer);
        idle = undefined;
      }
      const running: InFlightRecord[] = [];
      for (const c of current) {
        if (c === undefined || c.batch.isReleased) continue;
        const offset = eachMessage && c.batch.hasRecordObjects ? c.batch.records[c.index]!.offset : c.batch.unprocessedFrom;
        running.push({ topic: c.batch.topic, partition: c.batch.partition, offset });
      }
      end();
      return running;
    },
  };
}
