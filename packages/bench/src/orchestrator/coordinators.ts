// Group coordinators ready before any client is timed. A fresh broker creates __consumer_offsets
// at the first FindCoordinator and then loads each of its partitions: a client that happens to be
// the first group member of the broker's life pays for that in its figures, and one that gives up
// on COORDINATOR_LOAD_IN_PROGRESS too soon (kafkajs crashed on it in a CI run) fails outright. So
// the bench asks first, once, for every coordinator partition: one group id per partition of
// __consumer_offsets, found with a batched FindCoordinator and asked for its offsets (OffsetFetch
// with all of its groups) until every group answers without an error.
import { BrokerPool, coordinatorPartition } from '@kwire/consumer/internals';
import { FindCoordinator, Metadata, OffsetFetch, ZERO_UUID } from '@kwire/protocol';

const OFFSETS_TOPIC = '__consumer_offsets';

export interface CoordinatorsReady {
  partitions: number;
  milliseconds: number;
  /** Rounds of requests until every group answered (1 when all were ready at once). */
  rounds: number;
}

/** Resolves once every group coordinator partition of the cluster answers; throws after `timeoutMs`. */
export async function groupCoordinatorsReady(bootstrap: string, timeoutMs = 120_000): Promise<CoordinatorsReady> {
  const started = Date.now();
  const deadline = started + timeoutMs;
  const pool = new BrokerPool({ bootstrapServers: bootstrap, clientId: 'kwire-bench-coordinators' });
  let rounds = 0;
  const pause = async (what: string) => {
    if (Date.now() > deadline) throw new Error(`group coordinators not ready after ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  };
  try {
    const boot = await pool.bootstrap();
    // 1. The offsets topic exists (the first FindCoordinator creates it) and has leaders.
    let partitions = 0;
    for (;;) {
      await boot.request(FindCoordinator, { key: 'kwire-bench-warm-up', keyType: 0, coordinatorKeys: ['kwire-bench-warm-up'] });
      const md = await boot.request(Metadata, { topics: [{ topicId: ZERO_UUID, name: OFFSETS_TOPIC }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
      const t = md.topics.find((x) => x.name === OFFSETS_TOPIC);
      if (t && t.errorCode === 0 && t.partitions.length > 0 && t.partitions.every((p) => p.leaderId >= 0)) {
        partitions = t.partitions.length;
        break;
      }
      await pause(`${OFFSETS_TOPIC} has no leaders yet`);
    }
    // 2. One group id per partition, as the broker maps them (Java's String.hashCode).
    const groups: string[] = [];
    for (let p = 0; p < partitions; p++) {
      let i = 0;
      while (coordinatorPartition(`kwire-bench-warm-up-${i}`, partitions) !== p) i++;
      groups.push(`kwire-bench-warm-up-${i}`);
    }
    // 3. Until each group's coordinator answers OffsetFetch without an error.
    let pending = groups;
    while (pending.length) {
      rounds++;
      const found = await boot.request(FindCoordinator, { key: pending[0]!, keyType: 0, coordinatorKeys: pending });
      const byNode = new Map<number, { host: string; port: number; groups: string[] }>();
      const notYet: string[] = [];
      for (const c of found.coordinators) {
        if (c.errorCode !== 0) {
          notYet.push(c.key);
          continue;
        }
        let entry = byNode.get(c.nodeId);
        if (!entry) byNode.set(c.nodeId, (entry = { host: c.host, port: c.port, groups: [] }));
        entry.groups.push(c.key);
      }
      for (const [nodeId, { host, port, groups: mine }] of byNode) {
        const conn = await pool.get({ host, port, nodeId }, 'coordinator');
        const res = await conn.request(OffsetFetch, { groups: mine.map((groupId) => ({ groupId, memberId: null, memberEpoch: -1, topics: null })), requireStable: false });
        for (const g of res.groups) if (g.errorCode !== 0) notYet.push(g.groupId);
      }
      pending = notYet;
      if (pending.length) await pause(`${pending.length} of ${partitions} coordinator partitions still loading`);
    }
    return { partitions, milliseconds: Date.now() - started, rounds };
  } finally {
    await pool.close();
  }
}
