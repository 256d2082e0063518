// The share-group (KIP-932) scenarios of the fixture captures.
//
// captureJavaShare: Java's share tools through the recording proxy (the console producer, two
// console share consumers of one group, ShareGroupCommand), for any client release against any
// broker that has share groups on (4.4.0; 4.2.x, where a freshly formatted cluster finalizes
// share.version=1 by itself).
//
// captureKwireShare: kwire's own share-group requests, the versions the Java 4.4.0 share consumer
// does not send (ShareFetch v1, ShareAcknowledge v1; it sends v2), next to v2, with the broker's
// answers. One member joins with ShareGroupHeartbeat, opens a share session, accepts what it
// acquires (on ShareAcknowledge v1, then piggybacked on the next ShareFetch), releases one range
// once (it comes back with delivery count 2), closes the session and leaves.
import type { KafkaDistribution, KafkaTarget } from '@kwire/broker';
import { ApiKey, ErrorCode, randomUuid, ZERO_UUID } from '@kwire/protocol';
import type { RecordFact, ScenarioFacts } from '../src/index.js';
import { createShareConsumer } from '@kwire/consumer';
import { RawClient } from './raw-client.js';

interface Acquired {
  firstOffset: bigint;
  lastOffset: bigint;
  deliveryCount: number;
}
interface SharePartition {
  partitionIndex: number;
  errorCode: number;
  acquiredRecords: Acquired[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const MOVING: number[] = [ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR];

export interface ShareCaptureOptions {
  bootstrap: string;
  software: { name: string; version: string };
  topic: string;
  /** Records in the topic (the member reads until it has accepted them all). */
  records: number;
  /** A share group whose share.auto.offset.reset is earliest. */
  groupId: string;
  log: (line: string) => void;
}

export async function captureKwireShare(o: ShareCaptureOptions): Promise<ScenarioFacts> {
  const client = await RawClient.connect(o.bootstrap);
  try {
    await client.call(ApiKey.ApiVersions, 4, { clientSoftwareName: o.software.name, clientSoftwareVersion: o.software.version });
    const md = await client.call(ApiKey.Metadata, 13, { topics: [{ topicId: ZERO_UUID, name: o.topic }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
    const t = md.topics[0];
    if (t.errorCode !== 0) throw new Error(`Metadata ${o.topic}: error ${t.errorCode}`);
    const topicId: string = t.topicId;
    const partitions: number[] = t.partitions.map((p: { partitionIndex: number }) => p.partitionIndex);
    const memberId = randomUuid();
    let hb;
    for (let i = 0; ; i++) {
      hb = await client.call(ApiKey.ShareGroupHeartbeat, 1, { groupId: o.groupId, memberId, memberEpoch: 0, rackId: null, subscribedTopicNames: [o.topic] });
      if (!MOVING.includes(hb.errorCode) || i > 100) break;
      await sleep(200);
    }
    if (hb.errorCode !== 0) throw new Error(`ShareGroupHeartbeat: error ${hb.errorCode} ${hb.errorMessage ?? ''}`);
    for (let i = 0; i < 50 && !hb.assignment?.topicPartitions.length; i++) {
      await sleep(200);
      hb = await client.call(ApiKey.ShareGroupHeartbeat, 1, { groupId: o.groupId, memberId, memberEpoch: hb.memberEpoch, subscribedTopicNames: null });
    }
    await client.call(ApiKey.ShareGroupDescribe, 1, { groupIds: [o.groupId], includeAuthorizedOperations: true });

    const acks = (m: Map<number, Acquired[]>, type: number) =>
      m.size === 0
        ? []
        : [
            {
              topicId,
              partitions: [...m].map(([partitionIndex, ranges]) => ({
                partitionIndex,
                acknowledgementBatches: ranges.map((a) => ({ firstOffset: a.firstOffset, lastOffset: a.lastOffset, acknowledgeTypes: [type] })),
              })),
            },
          ];
    const acquired = (res: { responses: { partitions: SharePartition[] }[] }) => {
      const out = new Map<number, Acquired[]>();
      for (const tr of res.responses) for (const p of tr.partitions) if (p.acquiredRecords.length) out.set(p.partitionIndex, p.acquiredRecords);
      return out;
    };
    const count = (m: Map<number, Acquired[]>) => [...m.values()].flat().reduce((n, a) => n + Number(a.lastOffset - a.firstOffset + 1n), 0);
    const body = (v: number, epoch: number, topics: unknown[]) => ({
      groupId: o.groupId,
      memberId,
      shareSessionEpoch: epoch,
      maxWaitMs: 300,
      minBytes: 1,
      maxBytes: 1 << 20,
      maxRecords: 4,
      batchSize: 4,
      ...(v >= 2 ? { shareAcquireMode: 1, isRenewAck: false } : {}),
      topics,
      forgottenTopicsData: [],
    });
    let epoch = 0;
    let accepted = 0;
    // Open the session with every partition (v1), accept with ShareAcknowledge v1.
    let got = acquired(await client.call(ApiKey.ShareFetch, 1, body(1, epoch++, [{ topicId, partitions: partitions.map((partitionIndex) => ({ partitionIndex, acknowledgementBatches: [] })) }])));
    await client.call(ApiKey.ShareAcknowledge, 1, { groupId: o.groupId, memberId, shareSessionEpoch: epoch++, topics: acks(got, 1) });
    accepted += count(got);
    // v2 in record-limit mode; release what it acquired once (ShareAcknowledge v2): it comes back.
    got = acquired(await client.call(ApiKey.ShareFetch, 2, body(2, epoch++, [])));
    await client.call(ApiKey.ShareAcknowledge, 2, { groupId: o.groupId, memberId, shareSessionEpoch: epoch++, isRenewAck: false, topics: acks(got, 2) });
    // Then the rest, each answer accepted on the next ShareFetch, alternating v1 and v2.
    let pending = new Map<number, Acquired[]>();
    for (let i = 0; i < 100 && accepted < o.records; i++) {
      const v = 1 + (i % 2);
      pending = acquired(await client.call(ApiKey.ShareFetch, v, body(v, epoch++, acks(pending, 1))));
      accepted += count(pending);
    }
    await client.call(ApiKey.ShareAcknowledge, 1, { groupId: o.groupId, memberId, shareSessionEpoch: -1, topics: acks(pending, 1) });
    await client.call(ApiKey.ShareGroupHeartbeat, 1, { groupId: o.groupId, memberId, memberEpoch: -1, subscribedTopicNames: null });
    o.log(`  ${o.groupId}: accepted ${accepted} of ${o.records} records`);
    if (accepted !== o.records) throw new Error(`accepted ${accepted} records, expected ${o.records}`);
    return { clientSoftware: [o.software], topics: [{ name: o.topic, partitions: partitions.length }] };
  } finally {
    await client.close();
  }
}

export interface JavaShareCaptureOptions {
  broker: typeof import('@kwire/broker');
  /** The Java tools' distribution: its release is the client software recorded. */
  dist: KafkaDistribution;
  /** The proxy's bootstrap address (what is recorded). */
  bootstrap: string;
  /** The cluster directly: the topic and the group config, not recorded. */
  direct: KafkaTarget;
  topic: string;
  group: string;
  /** "key<TAB>value" lines for the console producer, and the records they are. */
  lines: string[];
  records: RecordFact[];
  log: (line: string) => void;
}

/**
 * Two console share consumers of one share group read a 2-partition topic the console producer
 * wrote: between them every record exactly once (each stops at its idle timeout); then
 * ShareGroupCommand describes the group.
 */
export async function captureJavaShare(o: JavaShareCaptureOptions): Promise<ScenarioFacts> {
  const via: KafkaTarget = { bootstrap: o.bootstrap, dist: o.dist };
  const software = { name: 'apache-kafka-java', version: o.dist.version.text };
  await o.broker.createTopic(o.direct, { topic: o.topic, partitions: 2 });
  // A new share group starts at the latest offset: this one must read what is produced before it joins.
  await o.broker.alterGroupConfig(o.direct, o.group, { 'share.auto.offset.reset': 'earliest' });
  await o.broker.consoleProducer(via, { topic: o.topic, lines: o.lines, parseKey: true });
  const n = o.records.length;
  const read = await Promise.all([0, 1].map(() => o.broker.consoleShareConsumer(via, { topic: o.topic, group: o.group, maxMessages: n, idleTimeoutMs: 8_000 })));
  o.log(`  ${o.group}: the share consumers printed ${read[0]!.length} and ${read[1]!.length} records`);
  if (read[0]!.length + read[1]!.length !== n) throw new Error(`the share consumers printed ${read[0]!.length + read[1]!.length} records, expected ${n}`);
  await o.broker.describeShareGroup(via, o.group);
  return {
    clientSoftware: [software],
    topics: [{ name: o.topic, partitions: 2 }],
    records: [{ topic: o.topic, count: n, records: o.records, produced: true, fetched: 'all' }],
  };
}

/**
 * On a freshly started broker the first share group waits for __consumer_offsets (NOT_COORDINATOR
 * meanwhile) and then for the share coordinator's __share_group_state (its member assigned nothing
 * while the state cannot be initialized): more than 20 s on a 4.2.2 node, longer than a console
 * share consumer's idle timeout. A member of a throwaway group, not recorded, waits that out:
 * assigned a partition of `topic` and two ShareFetch rounds answered.
 */
export async function warmShareGroups(bootstrap: string, topic: string, log: (line: string) => void): Promise<void> {
  const started = Date.now();
  const consumer = createShareConsumer({ bootstrapServers: bootstrap, groupId: `warm-${randomUuid().slice(0, 8)}`, clientId: 'kwire-capture-warm-up' });
  try {
    await consumer.subscribe([topic]);
    await consumer.assigned(120_000);
    while (consumer.metrics().fetches < 2) {
      if (Date.now() - started > 120_000) throw new Error('the share group warm-up fetched nothing in 120 s');
      await sleep(100);
    }
  } finally {
    await consumer.close();
  }
  log(`share groups ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
