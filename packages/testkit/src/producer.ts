// A small producer for tests, on kwire's own codec: Produce requests carrying batches built by
// encodeRecordBatch, sent to each partition's leader. No Java, so tests can write exactly the
// records they need (keys, nulls, headers, timestamps) and know every byte of them.
import { CreateTopics, encodeRecordBatch, Metadata, Produce, ZERO_UUID, type CompressionType, type RecordInput } from '@kwire/protocol';
import { BrokerPool } from '@kwire/consumer/internals';

export interface ProduceOptions {
  compression?: CompressionType;
  /** Records per batch (default: all in one). */
  batchSize?: number;
}

export class TestProducer {
  private readonly pool: BrokerPool;
  constructor(bootstrap: string) {
    this.pool = new BrokerPool({ bootstrapServers: bootstrap, clientId: 'kwire-test-producer' });
  }

  /**
   * Appends records to one partition; resolves with the base offset of the first batch. A topic
   * created a moment ago may answer NOT_LEADER_OR_FOLLOWER, LEADER_NOT_AVAILABLE or
   * UNKNOWN_TOPIC_OR_PARTITION while its leader settles: retried for up to 15 s, as a producer would.
   */
  async send(topic: string, partition: number, records: readonly RecordInput[], options: ProduceOptions = {}): Promise<bigint> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.sendOnce(topic, partition, records, options);
      } catch (err) {
        const code = (err as { errorCode?: number }).errorCode;
        if (attempt >= 75 || ![3, 5, 6].includes(code ?? -1)) throw err;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }

  private async sendOnce(topic: string, partition: number, records: readonly RecordInput[], options: ProduceOptions): Promise<bigint> {
    const any = await this.pool.bootstrap();
    const md = await any.request(Metadata, { topics: [{ topicId: ZERO_UUID, name: topic }], allowAutoTopicCreation: false });
    const t = md.topics.find((x) => x.name === topic);
    const p = t?.partitions.find((x) => x.partitionIndex === partition);
    if (!t || t.errorCode !== 0 || !p || p.leaderId < 0) throw Object.assign(new Error(`no leader for ${topic}-${partition} (error ${t?.errorCode})`), { errorCode: t?.errorCode || 5 });
    const leader = md.brokers.find((b) => b.nodeId === p.leaderId)!;
    const conn = await this.pool.get({ host: leader.host, port: leader.port, nodeId: leader.nodeId });
    const size = options.batchSize ?? records.length;
    let first = -1n;
    for (let i = 0; i < records.length; i += size) {
      const batch = encodeRecordBatch(records.slice(i, i + size), { compression: options.compression ?? 'none' });
      const res = await conn.request(Produce, {
        transactionalId: null,
        acks: -1,
        timeoutMs: 30_000,
        topicData: [{ name: topic, topicId: t.topicId, partitionData: [{ index: partition, records: batch }] }],
      });
      const r = res.responses[0]!.partitionResponses[0]!;
      if (r.errorCode !== 0) throw Object.assign(new Error(`Produce to ${topic}-${partition}: error ${r.errorCode} ${r.errorMessage ?? ''}`), { errorCode: r.errorCode });
      if (first < 0n) first = r.baseOffset;
    }
    return first;
  }

  /**
   * Creates topics with a CreateTopics request of kwire's codec (a JVM per TopicCommand costs
   * seconds; this costs milliseconds), replication factor 1, and waits until each partition has a
   * leader.
   */
  async createTopics(names: readonly string[], partitions = 1): Promise<void> {
    const conn = await this.pool.bootstrap();
    const res = await conn.request(CreateTopics, {
      topics: names.map((name) => ({ name, numPartitions: partitions, replicationFactor: 1, assignments: [], configs: [] })),
      timeoutMs: 30_000,
      validateOnly: false,
    });
    for (const t of res.topics) if (t.errorCode !== 0) throw new Error(`CreateTopics ${t.name}: error ${t.errorCode} ${t.errorMessage ?? ''}`);
    for (let attempt = 0; ; attempt++) {
      const md = await conn.request(Metadata, { topics: names.map((name) => ({ topicId: ZERO_UUID, name })), allowAutoTopicCreation: false });
      const ready = md.topics.every((t) => t.errorCode === 0 && t.partitions.length === partitions && t.partitions.every((p) => p.leaderId >= 0));
      if (ready) return;
      if (attempt > 150) throw new Error(`topics ${names.join(', ')} have no leaders after 30 s`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/**
 * Produces `perPartition` records ("p:n", n counting up per partition) to each of `partitions`
 * partitions every `everyMs`, until stop(); `produced` counts what each partition received. A
 * produce error ends the loop and is thrown by stop(), never left as an unhandled rejection.
 */
export function produceContinuously(producer: TestProducer, topic: string, partitions: number, perPartition: number, everyMs: number) {
  const produced = new Array<number>(partitions).fill(0);
  let running = true;
  const done = (async () => {
    while (running) {
      await Promise.all(
        produced.map(async (_, p) => {
          const records = Array.from({ length: perPartition }, (_, i) => ({ value: Buffer.from(`${p}:${produced[p]! + i}`) }));
          await producer.send(topic, p, records);
          produced[p]! += perPartition;
        }),
      );
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  done.catch(() => {});
  return {
    produced,
    stop: async () => {
      running = false;
      await done;
    },
  };
}
