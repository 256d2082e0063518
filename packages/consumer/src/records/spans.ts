// Where a delivered batch's records are in their wire batches: what the fetcher hands a batch
// instead of an object per record.
import type { RecordBatch } from '@kwire/protocol';
import type { RecordContext } from './deserializers.js';

/** One wire batch's part of a delivered batch: `count` records from the one at `position`. */
export interface RecordSpan {
  readonly batch: RecordBatch;
  /**
   * Where the first of them starts in the wire batch's decoded bytes; -1 when the part was placed
   * by its index alone (a batch with consecutive offsets, cut by max.poll.records): startOf() finds
   * it, and each record's offsetDelta must then be its index.
   */
  readonly position: number;
  /** Its index among the wire batch's records. */
  readonly index: number;
  readonly count: number;
}

/**
 * @internal Where a delivered batch's records are: what the fetcher hands a ConsumerBatch instead
 * of an object per record (records are made objects only when the application reads `records`).
 */
export class RecordSpans {
  constructor(
    readonly context: RecordContext,
    readonly spans: readonly RecordSpan[],
    readonly count: number,
    /** The partition's position when the batch was taken (its first record is at or after it). */
    readonly start: bigint,
  ) {}
}

export const NO_SPANS: readonly RecordSpan[] = [];

/** Where a span's first record starts (RecordBatch.recordStart for a part placed by its index). */
export function startOf(span: RecordSpan): number {
  return span.position >= 0 ? span.position : span.batch.recordStart(span.index);
}

/** A record of a part placed by its index whose offsetDelta is not that index. */
export function notConsecutive(batch: RecordBatch, index: number, offsetDelta: number): Error {
  return new Error(`record ${index} has offsetDelta ${offsetDelta}, but the batch's lastOffsetDelta ${batch.lastOffsetDelta} and ${batch.recordCount} records say its offsets are consecutive`);
}
