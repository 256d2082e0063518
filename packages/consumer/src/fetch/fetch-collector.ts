import type { ConsumerBatch } from '../records/index.js';
import type { SubscriptionState } from '../state/subscription-state.js';
import type { FetchedPartition } from './fetched-partition.js';

/**
 * Turns fetched data into batches for the application (Java's FetchCollector): takes the next
 * records of a partition's FetchedPartition from the partition's position, and advances the
 * position and records the delivery through the subscription state, the one owner of both.
 * A FetchedPartition itself never writes consumer state (Java's CompletedFetch).
 */
export class FetchCollector {
  constructor(private readonly subscriptions: SubscriptionState) {}

  /**
   * The next batch of at most `max` records of `data`'s partition, or null when it has no more
   * (control records and aborted batches passed on the way are finished at once: nothing for the
   * application to do). Throws on corrupt data, the position unmoved.
   */
  next(data: FetchedPartition, max: number): ConsumerBatch | null {
    const state = data.state;
    const start = state.position!;
    const taken = data.take(max, start);
    const subscriptions = this.subscriptions;
    subscriptions.advance(state, data.passedTo);
    if (taken === null) {
      subscriptions.skipped(state, start, data.passedTo);
      return null;
    }
    const delivery = subscriptions.delivered(state, start, taken.nextOffset, taken.leaderEpoch, taken.count);
    return data.batchOf(taken, subscriptions, delivery);
  }
}
