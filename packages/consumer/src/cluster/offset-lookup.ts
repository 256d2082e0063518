import { errorFor } from '@kwire/protocol';
import type { BrokerPool } from '../connection/index.js';
import { BrokerResponseError, RequestTimeoutError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { TopicPartition } from '@kwire/protocol';
import type { MetadataCache } from './metadata.js';
import { byLeader, listOffsets } from './list-offsets.js';

export { EARLIEST_TIMESTAMP, LATEST_TIMESTAMP } from './list-offsets.js';

export interface OffsetAndTimestamp {
  offset: bigint;
  /** The record's timestamp (for a lookup by time; -1 for earliest/latest). */
  timestamp: bigint;
  leaderEpoch: number;
}

export interface OffsetLookupOptions {
  metadata: MetadataCache;
  pool: BrokerPool;
  isolationLevel: 'read_uncommitted' | 'read_committed';
  retryBackoffMs: number;
  logger: Logger;
}

/**
 * ListOffsets for the application (Java's offsetsForTimes, beginningOffsets, endOffsets): one
 * request per partition leader, retried while leaders move (NOT_LEADER_OR_FOLLOWER, a leader not
 * yet known) until `deadline`. A time with no record at or after it gives null, as Java's.
 * Under read_committed, the end of a partition is its last stable offset.
 */
export async function lookUpOffsets(
  options: OffsetLookupOptions,
  wanted: ReadonlyMap<string, { tp: TopicPartition; timestamp: bigint }>,
  deadline: number,
): Promise<Map<string, OffsetAndTimestamp | null>> {
  const { metadata, pool, logger } = options;
  const out = new Map<string, OffsetAndTimestamp | null>();
  let left = new Map(wanted);
  const topics = new Set([...wanted.values()].map((w) => w.tp.topic));
  metadata.want(topics);
  if ([...topics].some((t) => !metadata.topics.get(t)?.partitions.length)) await metadata.refresh('offsets looked up');
  for (let attempt = 0; left.size > 0; attempt++) {
    const retry = new Map<string, { tp: TopicPartition; timestamp: bigint }>();
    let lastError: Error | undefined;
    for (const w of left.values()) {
      const info = metadata.topics.get(w.tp.topic);
      if (info && info.errorCode !== 0 && !errorFor(info.errorCode).retriable) throw new BrokerResponseError(info.errorCode, `ListOffsets ${w.tp.topic}`);
    }
    const { byNode, noLeader } = byLeader(
      [...left].map(([key, w]) => ({ key, topic: w.tp.topic, partition: w.tp.partition, tp: w.tp, timestamp: w.timestamp })),
      metadata,
    );
    for (const item of noLeader) retry.set(item.key, item);
    await Promise.all(
      [...byNode].map(async ([nodeId, list]) => {
        const broker = metadata.brokers.get(nodeId);
        try {
          if (!broker) throw new Error(`broker ${nodeId} unknown`);
          const conn = await pool.get({ host: broker.host, port: broker.port, nodeId }, 'data');
          const res = await listOffsets(conn, list, { metadata, isolationLevel: options.isolationLevel, timeoutMs: Math.max(1, Math.min(30_000, deadline - Date.now())) });
          for (const t of res.topics) {
            for (const r of t.partitions) {
              const item = list.find((i) => i.tp.topic === t.name && i.tp.partition === r.partitionIndex);
              if (!item) continue;
              if (r.errorCode !== 0) {
                const e = errorFor(r.errorCode);
                if (!e.retriable && !e.invalidMetadata) throw new BrokerResponseError(r.errorCode, `ListOffsets ${t.name}-${r.partitionIndex}`);
                lastError = new BrokerResponseError(r.errorCode, `ListOffsets ${t.name}-${r.partitionIndex}`);
                retry.set(item.key, item);
                continue;
              }
              out.set(item.key, r.offset < 0n ? null : { offset: r.offset, timestamp: r.timestamp, leaderEpoch: r.leaderEpoch });
            }
          }
        } catch (err) {
          if (err instanceof BrokerResponseError && !err.retriable && !err.invalidMetadata) throw err;
          lastError = err as Error;
          for (const item of list) retry.set(item.key, item);
        }
      }),
    );
    left = retry;
    if (left.size === 0) break;
    if (Date.now() >= deadline) {
      throw new RequestTimeoutError(
        `ListOffsets for ${[...left.values()].map((w) => `${w.tp.topic}-${w.tp.partition}`).join(', ')} not answered before the deadline${lastError ? `: ${lastError.message}` : ''}`,
      );
    }
    logger.debug('ListOffsets retried', { partitions: left.size, attempt, error: lastError?.message });
    metadata.requestUpdate('ListOffsets: leaders moved or unknown');
    await new Promise((r) => setTimeout(r, Math.min(options.retryBackoffMs * 2 ** Math.min(attempt, 4), 1_000)));
    await metadata.refresh('ListOffsets retry').catch(() => {});
  }
  return out;
}
