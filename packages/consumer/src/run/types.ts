// run()'s options, and what its runners (record-scheduler, batch-runner, worker-run) share.
import { backoffDelay } from '../connection/backoff.js';
import type { Logger } from '../logger.js';
import type { ConsumedRecord, ConsumerBatch, ConsumerRecord } from '../records/index.js';
import type { RunStats } from './run-stats.js';
import type { WorkerOptions } from './worker-pool.js';

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

/** What becomes of a record (eachBatch: a batch) whose callback threw. */
export type FailureDecision = 'retry' | 'stop' | 'skip';

/**
 * What run() does when a callback throws. Nothing is committed past a record that was not finished:
 *  - 'retry' (the default, kafkajs's restartOnFailure): eachMessage: that record is handled again
 *    after a growing wait (retry.backoff.ms doubling up to retry.backoff.max.ms), for ever; its key
 *    (ordering 'key') or partition ('partition') waits, everything else goes on. eachBatch: the
 *    partition is delivered again from the batch's first unfinished record after that wait;
 *  - 'stop': run() rejects with the error; nothing more starts, and what was not finished is
 *    delivered again to whoever reads next;
 *  - 'skip' (eachMessage): the record is set aside: `onSkip(record, error)` is called (write it to a
 *    dead-letter topic there) and once it resolves the record counts as finished;
 *  - a function deciding per failure (throwing from it is a 'stop' with that error).
 */
export type FailurePolicy = FailureDecision | ((error: unknown, failure: ProcessingFailure) => FailureDecision | Promise<FailureDecision>);

/**
 * Which records of a partition may be handled at the same time (run() with eachMessage):
 *  - 'key': records with the same key (compared by bytes; null keys together) one at a time, in
 *    offset order; different keys concurrently;
 *  - 'partition': one record of a partition at a time, in offset order; partitions concurrently
 *    (kafkajs's partitionsConsumedConcurrently);
 *  - 'unordered': any record at any time.
 */
export type Ordering = 'key' | 'partition' | 'unordered';

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
  /**
   * Records (eachBatch: batches) whose callbacks run at the same time, over every partition of the
   * consumer (default 64). With ordering 'partition', at most one per partition.
   */
  maxConcurrency?: number;
  /** Which records may be handled at the same time (default 'partition'; see Ordering). */
  ordering?: Ordering;
  /** Called with a record that onFailure set aside ('skip'); the record is finished once it resolves. If it throws, run() stops with that error and the record stays unfinished. */
  onSkip?: (record: ConsumerRecord<K, V>, error: unknown) => Promise<void> | void;
  /**
   * Runs eachMessage's work on worker threads instead (CPU-bound handlers): `module` exports the
   * handler (default export, or `eachMessage`), called with a WorkerRecord; ordering, commits and
   * failures as for eachMessage. Fetching and heartbeats stay on the main thread.
   */
  worker?: WorkerOptions;
}

/** What run() reads of a partition between two records: whether the rest of its batch may still go. */
export interface RunPartition {
  readonly paused: boolean;
  readonly revoking: boolean;
  /** Bumped by a seek or a reset: records fetched before it are no longer the partition's next. */
  readonly generation: number;
  /** Records beyond the commit point are known to be finished (see isFinishedAhead). */
  readonly hasFinishedAhead: boolean;
  isFinishedAhead(offset: bigint): boolean;
}

export interface RunContext {
  logger: Logger;
  retryBackoffMs: number;
  retryBackoffMaxMs: number;
  /** The partition is not fetched (so not delivered again) for `ms`. */
  backOff(topic: string, partition: number, ms: number): void;
  /** The partition's state while it is assigned (undefined once it is not). */
  partition(topic: string, partition: number): RunPartition | undefined;
  /** A record beyond the partition's commit point was finished (committed as metadata, never handled again). */
  finishedAhead(partition: RunPartition, offset: bigint): void;
  /** Longest run of callbacks between two turns of the event loop's timers (ms). */
  yieldIntervalMs: number;
  /** Most offsets from a partition's first unfinished record to its last one dispatched (what commit metadata can hold). */
  maxSpan: number;
  /** Where the run's counters go (kept across runs). */
  stats?: RunStats;
  /**
   * False while the group session may have lapsed (no heartbeat succeeded for session.timeout.ms:
   * a process frozen longer than that wakes with records in hand): nothing more starts until the
   * membership has processed it. Records not started go back to their partitions.
   */
  mayStart(): boolean;
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

/** How long a failed record (eachBatch: partition) waits before it is tried again: retry.backoff.ms doubling per attempt, up to retry.backoff.max.ms. */
export function retryWait(context: Pick<RunContext, 'retryBackoffMs' | 'retryBackoffMaxMs'>, attempts: number): number {
  const { retryBackoffMs, retryBackoffMaxMs } = context;
  return backoffDelay(attempts, { baseMs: retryBackoffMs, maxMs: Math.max(retryBackoffMs, retryBackoffMaxMs), jitter: 0 });
}
