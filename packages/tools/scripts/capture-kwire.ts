// kwire's own requests for the fixture captures: every API and version of the codec's scope,
// including the versions no real peer sends any more (old ApiVersions, Metadata v9-11, Fetch
// v12-15, ...), sent through the recording proxy to a real broker. The requests are ours; the
// responses are the broker's. The facts returned are what these requests created and wrote.
import { ApiKey, encodeConsumerProtocolAssignment, encodeConsumerProtocolSubscription, encodeRecordBatch, ErrorCode, randomUuid, Writer, ZERO_UUID, type CompressionType } from '@kwire/protocol';
import type { RecordFact, ScenarioFacts } from '../src/index.js';
import { RawClient } from './raw-client.js';

export interface KwireCaptureOptions {
  /** The proxy's bootstrap address. */
  bootstrap: string;
  /** A proxy address for the broker's SASL_PLAINTEXT listener, with a PLAIN user. */
  sasl?: { bootstrap: string; user: string; password: string };
  software: { name: string; version: string };
  log: (line: string) => void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** Coordinator errors that mean "not ready yet, try again" right after a group's first use. */
const MOVING: number[] = [ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR];

async function retry<T>(what: string, call: () => Promise<T>, errorOf: (res: T) => number): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const res = await call();
    if (!MOVING.includes(errorOf(res)) || attempt >= 150) return res;
    await sleep(200);
  }
}

/** The coordinator of a group, connected (through the proxy: FindCoordinator answers are rewritten). */
async function coordinator(client: RawClient, key: string, keyType = 0): Promise<RawClient> {
  const res = await retry(
    'FindCoordinator',
    () => client.call(ApiKey.FindCoordinator, 6, { keyType, coordinatorKeys: [key] }),
    (r) => r.coordinators[0].errorCode,
  );
  const c = res.coordinators[0];
  if (c.errorCode !== 0) throw new Error(`FindCoordinator ${key}: error ${c.errorCode}`);
  return RawClient.connect(`${c.host}:${c.port}`, client.clientId);
}

function subscription(version: number, topic: string): Buffer {
  const w = new Writer();
  w.writeInt16(version);
  encodeConsumerProtocolSubscription(
    w,
    {
      topics: [topic],
      userData: version === 1 ? Buffer.from('kwire') : null,
      ownedPartitions: version >= 1 ? [{ topic, partitions: [] }] : [],
      generationId: version >= 2 ? -1 : undefined,
      rackId: version >= 3 ? 'rack-a' : null,
    },
    version,
  );
  return Buffer.from(w.finish());
}

function assignment(version: number, topic: string, partitions: number[]): Buffer {
  const w = new Writer();
  w.writeInt16(version);
  encodeConsumerProtocolAssignment(w, { assignedPartitions: [{ topic, partitions }], userData: version === 2 ? Buffer.from([1, 2, 3]) : null }, version);
  return Buffer.from(w.finish());
}

/** Every API/version in scope, once or more, with the broker's answers. */
export async function captureKwireRequests(o: KwireCaptureOptions): Promise<ScenarioFacts> {
  const topic = 'kw-t';
  const missing = 'kw-missing';
  const client = await RawClient.connect(o.bootstrap);
  const errors: { api: string; error: string }[] = [];
  try {
    // ApiVersions v0-5, then a version no broker knows: answered with UNSUPPORTED_VERSION in the v0 format.
    for (const v of range(0, 5)) {
      const res = await client.call(ApiKey.ApiVersions, v, v >= 3 ? { clientSoftwareName: o.software.name, clientSoftwareVersion: o.software.version } : {});
      if (res.errorCode !== 0) throw new Error(`ApiVersions v${v}: error ${res.errorCode}`);
    }
    {
      const { frame, correlationId } = client.encode(ApiKey.ApiVersions, 3, { clientSoftwareName: o.software.name, clientSoftwareVersion: o.software.version });
      frame.writeInt16BE(99, 6); // api_version := 99, the v3 body kept (a broker reads none of it)
      await client.sendRaw(frame, correlationId);
      errors.push({ api: 'ApiVersions', error: 'UNSUPPORTED_VERSION' });
    }

    // CreateTopics v5-7 (and TOPIC_ALREADY_EXISTS), CreatePartitions v2-3, DeleteTopics v4-6.
    const created: Record<number, string> = { 5: 'kw-c5', 6: 'kw-c6', 7: 'kw-c7' };
    for (const v of range(5, 7)) {
      const names = v === 7 ? [topic, created[v]!] : [created[v]!];
      const res = await client.call(ApiKey.CreateTopics, v, {
        topics: names.map((name) => ({ name, numPartitions: name === topic ? 3 : 2, replicationFactor: 1, assignments: [], configs: [{ name: 'retention.ms', value: '3600000' }] })),
        timeoutMs: 30_000,
        validateOnly: false,
      });
      for (const t of res.topics) if (t.errorCode !== 0) throw new Error(`CreateTopics v${v} ${t.name}: ${t.errorCode} ${t.errorMessage}`);
      const again = await client.call(ApiKey.CreateTopics, v, { topics: [{ name: created[v]!, numPartitions: 1, replicationFactor: 1 }], timeoutMs: 30_000 });
      if (again.topics[0].errorCode !== ErrorCode.TOPIC_ALREADY_EXISTS) throw new Error('CreateTopics again: no TOPIC_ALREADY_EXISTS');
    }
    errors.push({ api: 'CreateTopics', error: 'TOPIC_ALREADY_EXISTS' });
    for (const v of range(2, 3)) {
      const res = await client.call(ApiKey.CreatePartitions, v, { topics: [{ name: 'kw-c7', count: 1 + v, assignments: null }], timeoutMs: 30_000, validateOnly: false });
      if (res.results[0].errorCode !== 0) throw new Error(`CreatePartitions v${v}: ${res.results[0].errorMessage}`);
    }
    // Metadata v9-13: the topics and one that does not exist. Topic ids for the later requests.
    let topicId = ZERO_UUID;
    for (const v of range(9, 13)) {
      for (let attempt = 0; ; attempt++) {
        const res = await client.call(ApiKey.Metadata, v, {
          topics: [
            { topicId: ZERO_UUID, name: topic },
            { topicId: ZERO_UUID, name: missing },
          ],
          allowAutoTopicCreation: false,
          includeTopicAuthorizedOperations: v % 2 === 0,
        });
        const t = res.topics.find((x: { name: string }) => x.name === topic);
        const ready = t && t.errorCode === 0 && t.partitions.every((p: { leaderId: number }) => p.leaderId >= 0);
        if (ready || attempt > 50) {
          if (v >= 10) topicId = t.topicId;
          break;
        }
        await sleep(200);
      }
    }
    errors.push({ api: 'Metadata', error: 'UNKNOWN_TOPIC_OR_PARTITION' });
    for (const [v, name] of [
      [4, 'kw-c5'],
      [5, 'kw-c6'],
      [6, 'kw-c7'],
    ] as const) {
      const res = await client.call(ApiKey.DeleteTopics, v, { topics: [{ name, topicId: ZERO_UUID }], topicNames: [name], timeoutMs: 30_000 });
      if (res.responses[0].errorCode !== 0) throw new Error(`DeleteTopics v${v}: ${res.responses[0].errorCode}`);
    }

    // Produce v9-13, one codec each, to partition v % 3; then acks=0 (no response).
    const records: RecordFact[] = [];
    const codecs: CompressionType[] = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];
    for (const v of range(9, 13)) {
      const compression = codecs[v - 9]!;
      const batchRecords = range(0, 3).map((i) => ({
        key: `key-${v}-${i}`,
        value: i === 3 ? null : `value ${v}-${i} ${compression} `.repeat(4),
        headers: [
          { key: 'produce-version', value: String(v) },
          { key: 'n', value: String(i) },
        ],
      }));
      for (const r of batchRecords) records.push({ key: r.key, value: r.value, headers: r.headers.map((h) => [h.key, h.value] as [string, string]) });
      const res = await client.call(ApiKey.Produce, v, {
        transactionalId: null,
        acks: -1,
        timeoutMs: 30_000,
        topicData: [{ name: topic, topicId, partitionData: [{ index: v % 3, records: encodeRecordBatch(batchRecords, { compression }) }] }],
      });
      const p = res.responses[0].partitionResponses[0];
      if (p.errorCode !== 0) throw new Error(`Produce v${v}: error ${p.errorCode} ${p.errorMessage}`);
    }
    {
      const batch = [
        { key: 'acks0-0', value: 'no response for this one' },
        { key: 'acks0-1', value: 'nor for this one' },
      ];
      for (const r of batch) records.push({ key: r.key, value: r.value, headers: [] });
      const { frame } = client.encode(ApiKey.Produce, 9, {
        transactionalId: null,
        acks: 0,
        timeoutMs: 30_000,
        topicData: [{ name: topic, partitionData: [{ index: 0, records: encodeRecordBatch(batch) }] }],
      });
      client.sendOnly(frame);
    }

    // ListOffsets v6-11: earliest and latest; and a partition that does not exist.
    for (const v of range(6, 11)) {
      for (const timestamp of [-2n, -1n]) {
        await client.call(ApiKey.ListOffsets, v, {
          replicaId: -1,
          isolationLevel: 0,
          topics: [{ name: topic, partitions: range(0, 2).map((p) => ({ partitionIndex: p, currentLeaderEpoch: -1, timestamp })) }],
          timeoutMs: 10_000,
        });
      }
    }
    const unknownPartition = await client.call(ApiKey.ListOffsets, 11, {
      replicaId: -1,
      topics: [{ name: topic, partitions: [{ partitionIndex: 99, currentLeaderEpoch: -1, timestamp: -1n }] }],
      timeoutMs: 10_000,
    });
    if (unknownPartition.topics[0].partitions[0].errorCode !== ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) throw new Error('ListOffsets partition 99: no UNKNOWN_TOPIC_OR_PARTITION');
    errors.push({ api: 'ListOffsets', error: 'UNKNOWN_TOPIC_OR_PARTITION' });

    // Fetch v12-18 of every partition from 0 (read_committed from v16 on), then past the end.
    for (const v of range(12, 18)) {
      const res = await client.call(ApiKey.Fetch, v, {
        replicaId: -1,
        maxWaitMs: 100,
        minBytes: 1,
        maxBytes: 1 << 20,
        isolationLevel: v >= 16 ? 1 : 0,
        sessionId: 0,
        sessionEpoch: -1,
        topics: [
          { topic, topicId, partitions: range(0, 2).map((p) => ({ partition: p, currentLeaderEpoch: -1, fetchOffset: 0n, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20 })) },
        ],
        forgottenTopicsData: [],
        rackId: '',
      });
      if (res.errorCode !== 0) throw new Error(`Fetch v${v}: error ${res.errorCode}`);
    }
    const oor = await client.call(ApiKey.Fetch, 18, {
      maxWaitMs: 0,
      minBytes: 1,
      maxBytes: 1 << 20,
      sessionId: 0,
      sessionEpoch: -1,
      topics: [{ topicId, partitions: [{ partition: 0, fetchOffset: 1_000_000n, partitionMaxBytes: 1 << 20 }] }],
    });
    if (oor.responses[0].partitions[0].errorCode !== ErrorCode.OFFSET_OUT_OF_RANGE) throw new Error('Fetch past the end: no OFFSET_OUT_OF_RANGE');
    errors.push({ api: 'Fetch', error: 'OFFSET_OUT_OF_RANGE' });

    // FindCoordinator v3-6.
    await coordinator(client, 'kw-g-6').then((c) => c.close());
    for (const v of range(3, 6)) {
      await client.call(ApiKey.FindCoordinator, v, { key: 'kw-g-6', keyType: 0, coordinatorKeys: ['kw-g-6', 'kw-g-7'] });
    }

    // Classic groups: JoinGroup v6-9 (MEMBER_ID_REQUIRED first) with subscription v0-3, SyncGroup
    // v4-5 with assignment v0-3, Heartbeat v4 (and ILLEGAL_GENERATION), LeaveGroup v4-5.
    for (const jv of range(6, 9)) {
      const groupId = `kw-g-${jv}`;
      const embedded = jv - 6;
      const c = await coordinator(client, groupId);
      const join = {
        groupId,
        sessionTimeoutMs: 30_000,
        rebalanceTimeoutMs: 30_000,
        memberId: '',
        groupInstanceId: null,
        protocolType: 'consumer',
        protocols: [{ name: 'range', metadata: subscription(embedded, topic) }],
        reason: 'kwire conformance capture',
      };
      const first = await retry(
        'JoinGroup',
        () => c.call(ApiKey.JoinGroup, jv, join),
        (r) => r.errorCode,
      );
      if (first.errorCode !== ErrorCode.MEMBER_ID_REQUIRED) throw new Error(`JoinGroup v${jv}: ${first.errorCode}, not MEMBER_ID_REQUIRED`);
      const joined = await c.call(ApiKey.JoinGroup, jv, { ...join, memberId: first.memberId });
      if (joined.errorCode !== 0) throw new Error(`JoinGroup v${jv}: ${joined.errorCode}`);
      const sv = jv <= 7 ? 4 : 5;
      const synced = await c.call(ApiKey.SyncGroup, sv, {
        groupId,
        generationId: joined.generationId,
        memberId: first.memberId,
        groupInstanceId: null,
        protocolType: 'consumer',
        protocolName: 'range',
        assignments: [{ memberId: first.memberId, assignment: assignment(embedded, topic, [0, 1, 2]) }],
      });
      if (synced.errorCode !== 0) throw new Error(`SyncGroup v${sv}: ${synced.errorCode}`);
      await c.call(ApiKey.Heartbeat, 4, { groupId, generationId: joined.generationId, memberId: first.memberId, groupInstanceId: null });
      const stale = await c.call(ApiKey.Heartbeat, 4, { groupId, generationId: joined.generationId + 7, memberId: first.memberId });
      if (stale.errorCode !== ErrorCode.ILLEGAL_GENERATION) throw new Error('Heartbeat with a wrong generation: no ILLEGAL_GENERATION');
      await c.call(ApiKey.LeaveGroup, jv % 2 === 0 ? 4 : 5, { groupId, members: [{ memberId: first.memberId, groupInstanceId: null, reason: 'done' }] });
      await c.close();
    }
    errors.push({ api: 'JoinGroup', error: 'MEMBER_ID_REQUIRED' }, { api: 'Heartbeat', error: 'ILLEGAL_GENERATION' });

    // OffsetCommit v8-10 and OffsetFetch v8-10 (by name; by topic id in v10).
    for (const v of range(8, 10)) {
      const groupId = `kw-commits-${v}`;
      const c = await coordinator(client, groupId);
      await retry(
        'OffsetCommit',
        () =>
          c.call(ApiKey.OffsetCommit, v, {
            groupId,
            generationIdOrMemberEpoch: -1,
            memberId: '',
            groupInstanceId: null,
            topics: [{ name: topic, topicId, partitions: [{ partitionIndex: 1, committedOffset: BigInt(100 + v), committedLeaderEpoch: -1, committedMetadata: `m${v}` }] }],
          }),
        (r) => r.topics[0].partitions[0].errorCode,
      );
      await c.call(ApiKey.OffsetFetch, v, { groups: [{ groupId, memberId: null, memberEpoch: -1, topics: [{ name: topic, topicId, partitionIndexes: [1, 2] }] }], requireStable: true });
      await c.close();
    }

    // ConsumerGroupHeartbeat v0-1 (KIP-848): join, wait for the assignment, leave.
    for (const v of range(0, 1)) {
      const groupId = `kw-848-${v}`;
      const c = await coordinator(client, groupId);
      const memberId = v >= 1 ? randomUuid() : '';
      let res = await retry(
        'ConsumerGroupHeartbeat',
        () =>
          c.call(ApiKey.ConsumerGroupHeartbeat, v, { groupId, memberId, memberEpoch: 0, rebalanceTimeoutMs: 30_000, subscribedTopicNames: [topic], serverAssignor: 'uniform', topicPartitions: [] }),
        (r) => r.errorCode,
      );
      if (res.errorCode !== 0) throw new Error(`ConsumerGroupHeartbeat v${v}: ${res.errorCode} ${res.errorMessage}`);
      const id = res.memberId;
      for (let i = 0; i < 20 && !res.assignment; i++) {
        await sleep(100);
        res = await c.call(ApiKey.ConsumerGroupHeartbeat, v, { groupId, memberId: id, memberEpoch: res.memberEpoch, topicPartitions: null, subscribedTopicNames: null });
      }
      await c.call(ApiKey.ConsumerGroupHeartbeat, v, { groupId, memberId: id, memberEpoch: -1 });
      await c.close();
    }

    // SaslHandshake v1 and SaslAuthenticate v2: PLAIN with a wrong password, and an unknown mechanism.
    if (o.sasl) {
      const s = await RawClient.connect(o.sasl.bootstrap);
      await s.call(ApiKey.SaslHandshake, 1, { mechanism: 'PLAIN' });
      const auth = await s.call(ApiKey.SaslAuthenticate, 2, { authBytes: Buffer.from(`\0${o.sasl.user}\0not-the-password`) });
      if (auth.errorCode !== ErrorCode.SASL_AUTHENTICATION_FAILED) throw new Error(`SaslAuthenticate with a wrong password: ${auth.errorCode}`);
      await s.close();
      const u = await RawClient.connect(o.sasl.bootstrap);
      const hs = await u.call(ApiKey.SaslHandshake, 1, { mechanism: 'GSSAPI' });
      if (hs.errorCode !== ErrorCode.UNSUPPORTED_SASL_MECHANISM) throw new Error(`SaslHandshake GSSAPI: ${hs.errorCode}`);
      await u.close();
      errors.push({ api: 'SaslAuthenticate', error: 'SASL_AUTHENTICATION_FAILED' }, { api: 'SaslHandshake', error: 'UNSUPPORTED_SASL_MECHANISM' });
    }

    return {
      clientSoftware: [o.software],
      topics: [{ name: topic, partitions: 3 }],
      records: [{ topic, count: records.length, records, produced: true, fetched: 'all' }],
      groups: [
        { groupId: 'kw-g-9', protocol: 'classic', members: 1, topics: [topic] },
        { groupId: 'kw-848-1', protocol: 'consumer', members: 1, topics: [topic] },
      ],
      errors,
    };
  } finally {
    await client.close();
  }
}

/**
 * NOT_COORDINATOR: on a cluster of three, group requests sent to a broker that is not the group's
 * coordinator. Returns the facts.
 */
export async function captureNotCoordinator(o: { bootstrap: string; software: { name: string; version: string }; log: (line: string) => void }): Promise<ScenarioFacts> {
  const client = await RawClient.connect(o.bootstrap);
  const groupId = 'kw-wrong-coordinator';
  try {
    await client.call(ApiKey.ApiVersions, 4, { clientSoftwareName: o.software.name, clientSoftwareVersion: o.software.version });
    const md = await client.call(ApiKey.Metadata, 12, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
    const fc = await retry(
      'FindCoordinator',
      () => client.call(ApiKey.FindCoordinator, 6, { keyType: 0, coordinatorKeys: [groupId] }),
      (r) => r.coordinators[0].errorCode,
    );
    const coord = fc.coordinators[0];
    if (coord.errorCode !== 0) throw new Error(`FindCoordinator: ${coord.errorCode}`);
    const others = (md.brokers as { nodeId: number; host: string; port: number }[]).filter((b) => b.nodeId !== coord.nodeId);
    if (others.length === 0) throw new Error('a single broker: no wrong coordinator to ask');
    for (const b of others) {
      const c = await RawClient.connect(`${b.host}:${b.port}`);
      const join = await c.call(ApiKey.JoinGroup, 9, {
        groupId,
        sessionTimeoutMs: 30_000,
        rebalanceTimeoutMs: 30_000,
        memberId: '',
        groupInstanceId: null,
        protocolType: 'consumer',
        protocols: [{ name: 'range', metadata: subscription(3, 'kw-any') }],
        reason: 'asking the wrong broker',
      });
      if (join.errorCode !== ErrorCode.NOT_COORDINATOR) throw new Error(`JoinGroup at node ${b.nodeId}: ${join.errorCode}, not NOT_COORDINATOR`);
      await c.call(ApiKey.OffsetFetch, 10, { groups: [{ groupId, memberId: null, memberEpoch: -1, topics: null }], requireStable: true });
      await c.close();
    }
    return {
      clientSoftware: [o.software],
      errors: [
        { api: 'JoinGroup', error: 'NOT_COORDINATOR' },
        { api: 'OffsetFetch', error: 'NOT_COORDINATOR' },
      ],
    };
  } finally {
    await client.close();
  }
}
