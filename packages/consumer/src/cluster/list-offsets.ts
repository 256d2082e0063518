import { ListOffsets } from '@kwire/protocol';
import type { Connection } from '../connection/index.js';
import { groupBy } from '../group-by.js';
import type { MetadataCache } from './metadata.js';

/** ListOffsets' special timestamps. */
export const EARLIEST_TIMESTAMP = -2n;
export const LATEST_TIMESTAMP = -1n;

/**
 * Items grouped by the leader of their partition (each request goes to a leader), and those whose
 * leader is not known (metadata is refreshed for them by the caller, or they wait).
 */
export function byLeader<T extends { readonly topic: string; readonly partition: number }>(items: Iterable<T>, metadata: MetadataCache): { byNode: Map<number, T[]>; noLeader: T[] } {
  const byNode = new Map<number, T[]>();
  const noLeader: T[] = [];
  for (const item of items) {
    const leader = metadata.leaderOf(item.topic, item.partition);
    if (!leader) {
      noLeader.push(item);
      continue;
    }
    let list = byNode.get(leader.leaderId);
    if (!list) byNode.set(leader.leaderId, (list = []));
    list.push(item);
  }
  return { byNode, noLeader };
}

/**
 * One ListOffsets to a leader for these partitions, each at its timestamp (EARLIEST_TIMESTAMP,
 * LATEST_TIMESTAMP, or a time), with the current leader epoch from metadata (KIP-320 fencing).
 * Under read_committed the end of a partition is its last stable offset.
 */
export function listOffsets(
  conn: Connection,
  items: readonly { readonly topic: string; readonly partition: number; readonly timestamp: bigint }[],
  options: { metadata: MetadataCache; isolationLevel: 'read_uncommitted' | 'read_committed'; timeoutMs: number },
) {
  const { metadata } = options;
  return conn.request(ListOffsets, {
    replicaId: -1,
    isolationLevel: options.isolationLevel === 'read_committed' ? 1 : 0,
    topics: [...groupBy(items, (i) => i.topic)].map(([name, list]) => ({
      name,
      partitions: list.map((i) => ({ partitionIndex: i.partition, currentLeaderEpoch: metadata.topics.get(name)?.partitions[i.partition]?.leaderEpoch ?? -1, timestamp: i.timestamp })),
    })),
    timeoutMs: options.timeoutMs,
  });
}
