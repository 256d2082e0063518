import type { Logger } from './logger.js';
import type { ConsumedRecord, ConsumerBatch } from './records.js';
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
  /** Called with each record, in order per partition; its batch is released after its last record. */
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

export interface RunContext {
  logger: Logger;
  retryBackoffMs: number;
  retryBackoffMaxMs: number;
  /** The partition is not fetched (so not delivered again) for `ms`. */
  backOff(topic: string, partition: number, ms: number): void;
}

/**
 * kafkajs-style callbacks over message streams, one loop per stream: partitions of different
 * streams are processed concurrently, each partition in order. A batch is finished when its
 * callback resolved (eachMessage: record by record); what a callback that throws had not finished
 * is given back and delivered again, or ends the run, as `onFailure` says.
 */
export function runStreams<K, V>(streams: readonly MessageStream[], options: RunOptions<K, V>, context: RunContext): Promise<void> {
  const { eachBatch, eachMessage } = options;
  const autoResolve = options.eachBatchAutoResolve ?? true;
  const policy = options.onFailure ?? 'retry';
  // Consecutive failures at the same record, per partition: the backoff grows with them.
  const failures = new Map<string, { offset: bigint; attempts: number }>();
  let stopped = false;

  return new Promise<void>((resolve, reject) => {
    const stop = (err: unknown) => {
      stopped = true;
      reject(err);
    };

    const loop = async (stream: MessageStream): Promise<void> => {
      for (;;) {
        const batch = (await stream.take()) as ConsumerBatch<K, V> | null;
        if (batch === null) return;
        if (stopped) {
          batch.giveBack();
          return;
        }
        const key = `${batch.topic}\u0000${batch.partition}`;
        let i = 0;
        try {
          if (eachBatch) {
            await eachBatch({ batch });
            if (batch.partlyProcessed || (!autoResolve && !batch.fullyProcessed)) batch.giveBack();
            else batch.release();
          } else {
            const records = batch.records;
            for (; i < records.length; i++) await eachMessage!({ topic: batch.topic, partition: batch.partition, message: records[i]! });
            batch.release();
          }
          failures.delete(key);
        } catch (err) {
          // (The records were made objects unless making them is what failed: corrupt records.)
          const made = eachMessage && batch.hasRecordObjects;
          if (made && i > 0) batch.markProcessed(batch.records[i - 1]!);
          const offset = made ? batch.records[i]!.offset : batch.unprocessedFrom;
          batch.giveBack();
          const last = failures.get(key);
          const attempts = last !== undefined && last.offset === offset ? last.attempts + 1 : 1;
          failures.set(key, { offset, attempts });
          const failure: ProcessingFailure = { topic: batch.topic, partition: batch.partition, offset, attempts };
          let decision: 'retry' | 'stop';
          try {
            decision = typeof policy === 'function' ? await policy(err, failure) : policy;
          } catch (policyErr) {
            stop(policyErr);
            return;
          }
          if (decision === 'stop' || stopped) {
            stop(err);
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
        }
      }
    };

    Promise.all(streams.map(loop)).then(() => resolve(), reject);
  });
}
