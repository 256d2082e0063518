// One way for tests and probes to make a FetchedPartition as the fetcher does, over wire batches in
// memory, with the collector that turns it into batches (no broker, no fetcher).
import { BufferPool } from '@kwire/protocol';
import { SharedFrame } from '../../src/connection/shared-frame.js';
import { BufferBudget } from '../../src/fetch/buffer-budget.js';
import { FetchCollector } from '../../src/fetch/fetch-collector.js';
import { FetchedPartition } from '../../src/fetch/fetched-partition.js';
import { recordContext, type ConsumerBatch, type RecordContext } from '../../src/records/index.js';
import type { PartitionState } from '../../src/state/partition-state.js';
import { SubscriptionState } from '../../src/state/subscription-state.js';

/** A FetchedPartition with the collector's next() on it, as a stream reads it. */
export type TestFetched = FetchedPartition & { next(max: number): ConsumerBatch | null };

export interface FetchedOptions {
  topic?: string;
  partition?: number;
  /** The partition's position (default 0n). */
  position?: bigint;
  /** An existing partition to fetch for (its subscription state with it). */
  at?: { state: PartitionState; subscriptions: SubscriptionState };
  highWatermark?: bigint;
  lastStableOffset?: bigint;
  abortedTransactions?: { producerId: bigint; firstOffset: bigint }[] | null;
  readCommitted?: boolean;
  checkCrcs?: boolean;
  pool?: BufferPool;
  maxDecompressedBytes?: number;
  context?: RecordContext;
  /** Called when the frame goes back to its pool. */
  onFrameRelease?: () => void;
}

/** An assigned partition at `position`, owned by a subscription state of its own. */
export function partitionAt(position = 0n, topic = 't', partition = 0): { state: PartitionState; subscriptions: SubscriptionState } {
  const subscriptions = new SubscriptionState(() => {});
  const state = subscriptions.create(topic, partition);
  subscriptions.seek(state, position);
  subscriptions.add(state);
  return { state, subscriptions };
}

/**
 * A FetchedPartition over `bytes` as the fetcher makes one, after the fetcher has let go of its own
 * reference to the frame; with the budget its bytes are counted in.
 */
export function fetchedFrom(bytes: Buffer, options: FetchedOptions = {}) {
  const topic = options.at?.state.topic ?? options.topic ?? 't';
  const p = options.at?.state.partition ?? options.partition ?? 0;
  const { state, subscriptions } = options.at ?? partitionAt(options.position ?? 0n, topic, p);
  if (options.at && options.position !== undefined) subscriptions.seek(state, options.position);
  const frame = new SharedFrame(() => options.onFrameRelease?.());
  const budget = new BufferBudget(() => {});
  const highWatermark = options.highWatermark ?? 1_000_000n;
  const data = new FetchedPartition(state, state.generation, frame, bytes, highWatermark, options.lastStableOffset ?? highWatermark, options.abortedTransactions ?? null, {
    readCommitted: options.readCommitted ?? false,
    checkCrcs: options.checkCrcs ?? true,
    pool: options.pool ?? new BufferPool(),
    maxDecompressedBytes: options.maxDecompressedBytes,
    context: options.context ?? recordContext(topic, p, 'buffer', 'buffer', true),
    account: budget.of(state.key),
  });
  frame.release();
  const collector = new FetchCollector(subscriptions);
  const fetched = Object.assign(data, { next: (max: number) => collector.next(data, max) }) as TestFetched;
  return { data: fetched, state, subscriptions, budget };
}
