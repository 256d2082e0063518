import type { MessageStream } from './streams.js';
import { BatchRunner } from './run/batch-runner.js';
import { RecordScheduler } from './run/record-scheduler.js';
import type { RunContext, RunHandle, RunOptions } from './run/types.js';
import { WorkerRun } from './run/worker-run.js';

export type {
  EachBatchPayload,
  EachMessagePayload,
  ProcessingFailure,
  FailureDecision,
  FailurePolicy,
  Ordering,
  RunOptions,
  RunPartition,
  RunContext,
  InFlightRecord,
  RunHandle,
} from './run/types.js';

/**
 * kafkajs-style callbacks over every stream. eachMessage: records handled concurrently, up to
 * `maxConcurrency` at once, in the order `ordering` asks for (RecordScheduler); each is finished when
 * its callback resolves. eachBatch: batches of different partitions concurrently, one at a time per
 * partition (BatchRunner). What a callback that throws had not finished is handled again, set
 * aside, or ends the run, as `onFailure` says. A partition paused, sought or revoked stops at once:
 * nothing more of it starts, and what was not finished is delivered again (after resume(), from the
 * new position, or to the partition's next owner).
 */
export function startRun<K, V>(streams: readonly MessageStream[], options: RunOptions<K, V>, context: RunContext): RunHandle {
  if (options.eachBatch) return new BatchRunner(streams, options, context);
  if (options.worker) return new WorkerRun(streams, options, context);
  return new RecordScheduler(streams, options, context);
}
