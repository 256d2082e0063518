import { errorFor, ListOffsets } from '@kwire/protocol';
import type { BrokerPool } from '../connection/index.js';
import { BrokerResponseError, RequestTimeoutError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { TopicPartition } from '../state/subscription-state.js';
import type { MetadataCache } from './metadata.js';
import { groupBy } from '../group-by.js';

/** ListOffsets' special timestamps. */
export const EARLIEST_TIMESTAMP = -2n;
export const LATEST_TIMESTAMP = -1n;

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
    const byLeader = new Map<number, { key: string; tp: TopicPartition; timestamp: bigint }[]>();
    const retry = new Map<string, { tp: TopicPartition; timestamp: bigint }>();
    let lastError: Error | undefined;
    for (const [key, w] of left) {
      const info = metadata.topics.get(w.tp.topic);
      if (info && info.errorCode !== 0 && !errorFor(info.errorCode).retriable) throw new BrokerResponseError(info.errorCode, `ListOffsets ${w.tp.topic}`);
      const leader = metadata.leaderOf(w.tp.topic, w.tp.partition);
      if (!leader) {
        retry.set(key, w);
        continue;
      }
      let list = byLeader.get(leader.leaderId);
      if (!list) byLeader.set(leader.leaderId, (list = []));
      list.push({ key, ...w });
    }
    await Promise.all(
      [...byLeader].map(async ([nodeId, list]) => {
        const broker = metadata.brokers.get(nodeId);
        try {
          if (!broker) throw new Error(`broker ${nodeId} unknown`);
          const conn = await pool.get({ host: broker.host, port: broker.port, nodeId }, 'data');
          const byTopic = groupBy(list, (item) => item.tp.topic);
          const res = await conn.request(ListOffsets, {
            replicaId: -1,
            isolationLevel: options.isolationLevel === 'read_committed' ? 1 : 0,
            topics: [...byTopic].map(([name, items]) => ({
              name,
              partitions: items.map((i) => ({ partitionIndex: i.tp.partition, currentLeaderEpoch: metadata.topics.get(name)?.partitions[i.tp.partition]?.leaderEpoch ?? -1, timestamp: i.timestamp })),
            })),
            timeoutMs: Math.max(1, Math.min(30_000, deadline - Date.now())),
          });
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
