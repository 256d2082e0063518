// A small producer for tests, on kwire's own codec: Produce requests carrying batches built by
// encodeRecordBatch, sent to each partition's leader. No Java, so tests can write exactly the
// records they need (keys, nulls, headers, timestamps) and know every byte of them.
import { encodeRecordBatch, Metadata, Produce, ZERO_UUID, type CompressionType, type RecordInput } from '@kwire/protocol';
import { BrokerPool } from '../../src/index.js';

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

  /** Appends records to one partition; resolves with the base offset of the first batch. */
  async send(topic: string, partition: number, records: readonly RecordInput[], options: ProduceOptions = {}): Promise<bigint> {
    const any = await this.pool.bootstrap();
    const md = await any.request(Metadata, { topics: [{ topicId: ZERO_UUID, name: topic }], allowAutoTopicCreation: false });
    const t = md.topics.find((x) => x.name === topic);
    const p = t?.partitions.find((x) => x.partitionIndex === partition);
    if (!t || t.errorCode !== 0 || !p) throw new Error(`no metadata for ${topic}-${partition} (error ${t?.errorCode})`);
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
      if (r.errorCode !== 0) throw new Error(`Produce to ${topic}-${partition}: error ${r.errorCode} ${r.errorMessage ?? ''}`);
      if (first < 0n) first = r.baseOffset;
    }
    return first;
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
