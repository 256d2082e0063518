// How a delivered batch reports back to where it came from: the partition it was fetched from, or
// the batch it was made from (DerivedSettlement, in batch.ts).
import type { LazyProgress } from '../state/delivery-ledger.js';

/**
 * How a delivered batch reports back to the partition it came from. One object per batch (the
 * fetched partition's), so that settling costs no closure per batch.
 */
export interface BatchSettlement {
  /** The application finished every record before `offset`. */
  progressed(offset: bigint): void;
  /** The application's progress is counted by `progress` and reported when a commit asks for it. */
  progressLater(progress: LazyProgress): void;
  /** The batch is given back with what was not marked processed unfinished: deliver it again. */
  giveBack(): void;
  /** The batch ends at `offset` after all: what follows is delivered again (later). */
  cut(offset: bigint): void;
  /** The batch's memory is let go; `finished`: all of it counts as processed. */
  released(finished: boolean): void;
}
