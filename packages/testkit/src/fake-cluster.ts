// A one-node Kafka cluster for consumer-level unit tests, on the scriptable FakeBroker: topics with
// logs whose batches carry leader epochs (so that truncation can be staged: truncateTo() then
// append() under a new epoch), Fetch that long-polls and reports diverging epochs as a 4.x leader
// does, ListOffsets, OffsetForLeaderEpoch, and a single-member classic group (FindCoordinator,
// JoinGroup, SyncGroup, Heartbeat, OffsetFetch, OffsetCommit, LeaveGroup). `inject()` makes the
// next answers of an API carry an error code, for the error paths real brokers rarely show on cue.
import { ApiKey, encodeRecordBatch, ErrorCode, randomUuid } from '@kwire/protocol';
import { allApiVersions, FakeBroker, type FakeRequest, type Reply } from './fake-broker.js';

interface LogRecord {
  offset: bigint;
  epoch: number;
  value: string;
  key: string | null;
}

export interface FakePartition {
  leaderEpoch: number;
  log: LogRecord[];
}

interface FakeTopic {
  id: string;
  partitions: FakePartition[];
}

type Any = Record<string, any>;

export class FakeCluster {
  readonly topics = new Map<string, FakeTopic>();
  /** Offsets committed by the group, `topic\0partition` → offset. */
  readonly committed = new Map<string, { offset: bigint; leaderEpoch: number; metadata: string | null }>();
  private readonly injected = new Map<number, number[]>();
  /** Answer FENCED_LEADER_EPOCH to requests naming an older leader epoch (as brokers do). */
  fenceStaleEpochs = true;
  private generation = 0;
  private memberSeq = 0;
  /** KIP-848: the member epoch the fake last gave (0 until a member joins). */
  memberEpoch = 0;

  private constructor(readonly broker: FakeBroker) {}

  static async start(): Promise<FakeCluster> {
    // Fetch up to v12: topics by name, diverging epochs (v12+) in the answers.
    const versions = allApiVersions().map((v) => (v.apiKey === ApiKey.Fetch ? { ...v, maxVersion: Math.min(v.maxVersion, 12) } : v));
    const broker = await FakeBroker.start({ apiVersions: versions, ordered: false });
    const c = new FakeCluster(broker);
    const h = broker.handlers;
    h[ApiKey.Metadata] = (req) => c.metadata(req);
    h[ApiKey.Fetch] = (req) => c.fetch(req);
    h[ApiKey.ListOffsets] = (req) => c.listOffsets(req);
    h[ApiKey.OffsetForLeaderEpoch] = (req) => c.offsetForLeaderEpoch(req);
    h[ApiKey.FindCoordinator] = (req) => c.findCoordinator(req);
    h[ApiKey.JoinGroup] = (req) => c.joinGroup(req);
    h[ApiKey.SyncGroup] = (req) => c.syncGroup(req);
    h[ApiKey.Heartbeat] = (req) => ({ body: { throttleTimeMs: 0, errorCode: c.takeError(ApiKey.Heartbeat, req) } });
    h[ApiKey.OffsetFetch] = (req) => c.offsetFetch(req);
    h[ApiKey.OffsetCommit] = (req) => c.offsetCommit(req);
    h[ApiKey.ConsumerGroupHeartbeat] = (req) => c.consumerGroupHeartbeat(req);
    h[ApiKey.LeaveGroup] = (req) => ({
      body: { throttleTimeMs: 0, errorCode: 0, members: ((req.body as Any).members as Any[]).map((m) => ({ memberId: m.memberId, groupInstanceId: null, errorCode: 0 })) },
    });
    return c;
  }

  get bootstrap(): string {
    return `${this.broker.host}:${this.broker.port}`;
  }

  stop(): Promise<void> {
    return this.broker.stop();
  }

  /** A topic whose partitions each hold `records` records written under leader epoch `epoch`. */
  createTopic(name: string, partitions: number, records = 0, epoch = 0): void {
    const t: FakeTopic = { id: randomUuid(), partitions: [] };
    for (let p = 0; p < partitions; p++) t.partitions.push({ leaderEpoch: epoch, log: [] });
    this.topics.set(name, t);
    for (let p = 0; p < partitions; p++) this.append(name, p, records);
  }

  /** A request's topic: by name, or by id (the v10+ forms of OffsetFetch and OffsetCommit). */
  private nameOf(t: Any): string {
    if (t.name) return t.name as string;
    for (const [name, topic] of this.topics) if (topic.id === t.topicId) return name;
    return '';
  }

  partition(topic: string, partition: number): FakePartition {
    return this.topics.get(topic)!.partitions[partition]!;
  }

  /** Appends `n` records under the partition's current leader epoch; `key` gives each record's key (default none). */
  append(topic: string, partition: number, n: number, key?: (offset: bigint) => string | null): void {
    const p = this.partition(topic, partition);
    for (let i = 0; i < n; i++) {
      const offset = BigInt(p.log.length);
      p.log.push({ offset, epoch: p.leaderEpoch, value: `${topic}-${partition}-${offset}-e${p.leaderEpoch}`, key: key?.(offset) ?? null });
    }
  }

  /**
   * An unclean election: a new leader (epoch + 1) whose log ends at `offset`; what the old leader
   * had past it is gone, and new records written now take those offsets.
   */
  electUnclean(topic: string, partition: number, offset: number): void {
    const p = this.partition(topic, partition);
    p.log.length = offset;
    p.leaderEpoch++;
  }

  /** The next `count` answers of `apiKey` carry `errorCode` (where the answer has one to carry). */
  inject(apiKey: number, errorCode: number, count = 1): void {
    const list = this.injected.get(apiKey) ?? [];
    for (let i = 0; i < count; i++) list.push(errorCode);
    this.injected.set(apiKey, list);
  }

  private takeError(apiKey: number, _req: FakeRequest): number {
    return this.injected.get(apiKey)?.shift() ?? 0;
  }

  /** The end of epoch `epoch` in a log: where the first larger epoch starts, or the log end. */
  private endOfEpoch(p: FakePartition, epoch: number): { epoch: number; endOffset: bigint } {
    let largest = -1;
    for (const r of p.log) if (r.epoch <= epoch && r.epoch > largest) largest = r.epoch;
    if (largest < 0 && p.leaderEpoch <= epoch) largest = p.leaderEpoch;
    if (largest < 0) return { epoch: -1, endOffset: -1n };
    const next = p.log.find((r) => r.epoch > largest);
    return { epoch: largest, endOffset: next ? next.offset : BigInt(p.log.length) };
  }

  private metadata(req: FakeRequest): Reply {
    const asked = (req.body as Any).topics as Any[] | null;
    const names = asked ? asked.map((t) => t.name as string) : [...this.topics.keys()];
    return {
      body: {
        throttleTimeMs: 0,
        brokers: [{ nodeId: 1, host: this.broker.host, port: this.broker.port, rack: null }],
        clusterId: 'fake',
        controllerId: 1,
        topics: names.map((name) => {
          const t = this.topics.get(name);
          if (!t) return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, name, topicId: '00000000-0000-0000-0000-000000000000', isInternal: false, partitions: [] };
          return {
            errorCode: 0,
            name,
            topicId: t.id,
            isInternal: false,
            partitions: t.partitions.map((p, i) => ({ errorCode: 0, partitionIndex: i, leaderId: 1, leaderEpoch: p.leaderEpoch, replicaNodes: [1], isrNodes: [1], offlineReplicas: [] })),
          };
        }),
      },
    };
  }

  private async fetch(req: FakeRequest): Promise<Reply> {
    const body = req.body as Any;
    const injected = this.takeError(ApiKey.Fetch, req);
    const build = () => {
      let any = false;
      const responses = (body.topics as Any[]).map((t) => ({
        topic: t.topic,
        topicId: t.topicId,
        partitions: (t.partitions as Any[]).map((fp) => {
          const p = this.partition(t.topic, fp.partition);
          const base = {
            partitionIndex: fp.partition,
            highWatermark: BigInt(p.log.length),
            lastStableOffset: BigInt(p.log.length),
            logStartOffset: 0n,
            abortedTransactions: null,
            preferredReadReplica: -1,
          };
          if (injected) return { ...base, errorCode: injected, records: null };
          if (this.fenceStaleEpochs && fp.currentLeaderEpoch >= 0 && fp.currentLeaderEpoch < p.leaderEpoch) return { ...base, errorCode: ErrorCode.FENCED_LEADER_EPOCH, records: null };
          if (fp.lastFetchedEpoch >= 0) {
            // As a 4.x leader: our log diverges from the fetcher's where its last epoch ends earlier.
            const end = this.endOfEpoch(p, fp.lastFetchedEpoch);
            if (end.endOffset < fp.fetchOffset || end.epoch < fp.lastFetchedEpoch) return { ...base, errorCode: 0, divergingEpoch: end, records: null };
          }
          if (fp.fetchOffset > BigInt(p.log.length)) return { ...base, errorCode: ErrorCode.OFFSET_OUT_OF_RANGE, records: null };
          const records = p.log.slice(Number(fp.fetchOffset), Number(fp.fetchOffset) + 100);
          if (records.length) any = true;
          return { ...base, errorCode: 0, records: encodeByEpoch(records) };
        }),
      }));
      return { any, responses };
    };
    let out = build();
    if (!out.any && !injected) {
      // Long poll: wait for data up to maxWaitMs, as a broker does.
      const until = Date.now() + Math.min(body.maxWaitMs as number, 2_000);
      while (!out.any && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 20));
        out = build();
      }
    }
    return { body: { throttleTimeMs: 0, errorCode: 0, sessionId: 0, responses: out.responses, nodeEndpoints: [] } };
  }

  private listOffsets(req: FakeRequest): Reply {
    const body = req.body as Any;
    return {
      body: {
        throttleTimeMs: 0,
        topics: (body.topics as Any[]).map((t) => ({
          name: t.name,
          partitions: (t.partitions as Any[]).map((lp) => {
            const p = this.partition(t.name, lp.partitionIndex);
            const offset = lp.timestamp === -2n ? 0n : BigInt(p.log.length);
            return { partitionIndex: lp.partitionIndex, errorCode: 0, timestamp: -1n, offset, leaderEpoch: p.leaderEpoch };
          }),
        })),
      },
    };
  }

  private offsetForLeaderEpoch(req: FakeRequest): Reply {
    const body = req.body as Any;
    const injected = this.takeError(ApiKey.OffsetForLeaderEpoch, req);
    return {
      body: {
        throttleTimeMs: 0,
        topics: (body.topics as Any[]).map((t) => ({
          topic: t.topic,
          partitions: (t.partitions as Any[]).map((op) => {
            const p = this.partition(t.topic, op.partition);
            if (injected) return { errorCode: injected, partition: op.partition, leaderEpoch: -1, endOffset: -1n };
            if (op.currentLeaderEpoch >= 0 && op.currentLeaderEpoch < p.leaderEpoch) return { errorCode: ErrorCode.FENCED_LEADER_EPOCH, partition: op.partition, leaderEpoch: -1, endOffset: -1n };
            const end = this.endOfEpoch(p, op.leaderEpoch);
            return { errorCode: 0, partition: op.partition, leaderEpoch: end.epoch, endOffset: end.endOffset };
          }),
        })),
      },
    };
  }

  private findCoordinator(req: FakeRequest): Reply {
    const body = req.body as Any;
    const code = this.takeError(ApiKey.FindCoordinator, req);
    const keys = (body.coordinatorKeys as string[] | undefined) ?? [body.key as string];
    const node = { nodeId: 1, host: this.broker.host, port: this.broker.port };
    return { body: { throttleTimeMs: 0, errorCode: code, errorMessage: null, ...node, coordinators: keys.map((key) => ({ key, ...node, errorCode: code, errorMessage: null })) } };
  }

  private joinGroup(req: FakeRequest): Reply {
    const body = req.body as Any;
    const code = this.takeError(ApiKey.JoinGroup, req);
    if (code)
      return { body: { throttleTimeMs: 0, errorCode: code, generationId: -1, protocolType: null, protocolName: null, leader: '', skipAssignment: false, memberId: body.memberId, members: [] } };
    const memberId = body.memberId || `member-${++this.memberSeq}`;
    const protocol = (body.protocols as Any[])[0]!;
    this.generation++;
    return {
      body: {
        throttleTimeMs: 0,
        errorCode: 0,
        generationId: this.generation,
        protocolType: 'consumer',
        protocolName: protocol.name,
        leader: memberId,
        skipAssignment: false,
        memberId,
        members: [{ memberId, groupInstanceId: null, metadata: protocol.metadata }],
      },
    };
  }

  private syncGroup(req: FakeRequest): Reply {
    const body = req.body as Any;
    const code = this.takeError(ApiKey.SyncGroup, req);
    const mine = (body.assignments as Any[]).find((a) => a.memberId === body.memberId);
    return { body: { throttleTimeMs: 0, errorCode: code, protocolType: 'consumer', protocolName: body.protocolName, assignment: code ? Buffer.alloc(0) : (mine?.assignment ?? Buffer.alloc(0)) } };
  }

  /**
   * KIP-848 for one member: epoch 0 joins (the epoch goes up and the member gets every partition of
   * its topics), a leave (epoch -1/-2) is acknowledged, anything else is a plain heartbeat.
   */
  private consumerGroupHeartbeat(req: FakeRequest): Reply {
    const body = req.body as Any;
    const code = this.takeError(ApiKey.ConsumerGroupHeartbeat, req);
    const memberId = body.memberId || `member-${++this.memberSeq}`;
    const answer = (fields: Any) => ({ body: { throttleTimeMs: 0, errorCode: 0, errorMessage: null, memberId, memberEpoch: this.memberEpoch, heartbeatIntervalMs: 100, assignment: null, ...fields } });
    if (code) return answer({ errorCode: code, memberEpoch: -1 });
    if (body.memberEpoch < 0) return answer({ memberEpoch: body.memberEpoch });
    if (body.memberEpoch === 0) {
      this.memberEpoch++;
      const topics = (body.subscribedTopicNames as string[] | null) ?? [...this.topics.keys()];
      return answer({
        memberEpoch: this.memberEpoch,
        assignment: { topicPartitions: topics.filter((t) => this.topics.has(t)).map((t) => ({ topicId: this.topics.get(t)!.id, partitions: this.topics.get(t)!.partitions.map((_, i) => i) })) },
      });
    }
    return answer({});
  }

  private offsetFetch(req: FakeRequest): Reply {
    const body = req.body as Any;
    return {
      body: {
        throttleTimeMs: 0,
        groups: (body.groups as Any[]).map((g) => ({
          groupId: g.groupId,
          errorCode: 0,
          topics: (g.topics as Any[]).map((t) => ({
            name: t.name,
            topicId: t.topicId,
            partitions: (t.partitionIndexes as number[]).map((p) => {
              const c = this.committed.get(`${this.nameOf(t)}\u0000${p}`);
              return { partitionIndex: p, committedOffset: c?.offset ?? -1n, committedLeaderEpoch: c?.leaderEpoch ?? -1, metadata: c?.metadata ?? null, errorCode: 0 };
            }),
          })),
        })),
      },
    };
  }

  private offsetCommit(req: FakeRequest): Reply {
    const body = req.body as Any;
    const code = this.takeError(ApiKey.OffsetCommit, req);
    return {
      body: {
        throttleTimeMs: 0,
        topics: (body.topics as Any[]).map((t) => ({
          name: t.name,
          topicId: t.topicId,
          partitions: (t.partitions as Any[]).map((p) => {
            if (!code) this.committed.set(`${this.nameOf(t)}\u0000${p.partitionIndex}`, { offset: p.committedOffset, leaderEpoch: p.committedLeaderEpoch, metadata: p.committedMetadata ?? null });
            return { partitionIndex: p.partitionIndex, errorCode: code };
          }),
        })),
      },
    };
  }
}

/** Records as wire batches, one per run of records of the same leader epoch. */
function encodeByEpoch(records: readonly LogRecord[]): Buffer | null {
  if (records.length === 0) return null;
  const batches: Buffer[] = [];
  let start = 0;
  for (let i = 1; i <= records.length; i++) {
    if (i === records.length || records[i]!.epoch !== records[start]!.epoch) {
      const run = records.slice(start, i);
      batches.push(
        encodeRecordBatch(
          run.map((r) => ({ value: r.value, key: r.key })),
          { baseOffset: run[0]!.offset, partitionLeaderEpoch: run[0]!.epoch },
        ),
      );
      start = i;
    }
  }
  return Buffer.concat(batches);
}
