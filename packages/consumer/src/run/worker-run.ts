import type { ConsumerRecord } from '../records/index.js';
import type { MessageStream } from '../streams.js';
import type { InFlightRecord, RunContext, RunHandle, RunOptions } from './types.js';
import { RecordScheduler } from './record-scheduler.js';
import { startWorkerPool, type WorkerOptions, type WorkerPool } from './worker-pool.js';

/** How long the threads get to finish what they hold once the run is over, before they are ended. */
const POOL_CLOSE_MS = 1_000;

/**
 * run({ worker }): the record scheduler of eachMessage, whose handler hands each record to a pool
 * of worker threads and resolves when the worker's handler does. Ordering, commits and failures
 * are the scheduler's, unchanged; fetching and heartbeats stay on this thread. The pool starts
 * first: a module that cannot be loaded rejects run() before any record is taken.
 */
export class WorkerRun<K, V> implements RunHandle {
  readonly done: Promise<void>;
  private scheduler: RecordScheduler<K, V> | undefined;
  private stopped = false;

  constructor(streams: readonly MessageStream[], options: RunOptions<K, V>, context: RunContext) {
    const { worker, ...rest } = options;
    this.done = this.start(streams, rest, worker!, context);
  }

  private async start(streams: readonly MessageStream[], options: RunOptions<K, V>, worker: WorkerOptions, context: RunContext): Promise<void> {
    const pool: WorkerPool = await startWorkerPool(worker, context.logger);
    try {
      if (this.stopped) return;
      this.scheduler = new RecordScheduler(streams, { ...options, eachMessage: ({ message }) => pool.handle(message as ConsumerRecord) }, context);
      await this.scheduler.done;
    } finally {
      await pool.close(POOL_CLOSE_MS);
    }
  }

  async stop(graceMs: number): Promise<InFlightRecord[]> {
    this.stopped = true;
    return (await this.scheduler?.stop(graceMs)) ?? [];
  }
}
