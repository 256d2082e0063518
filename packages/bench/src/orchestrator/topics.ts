// Topics for the scenarios: created with TopicCommand, loaded once with ProducerPerformance
// (batch.size 256 KiB, linger.ms 20 so that batches are as a busy producer makes them, null keys,
// random A-Z values) or, for the full-touch scenarios, with BenchJava's producer (the same batching,
// a 16-byte key and two headers per record), then checked: the end offsets, read with kwire's protocol layer, must add up
// to the records loaded. The group runs need those end offsets per partition too.
import { BrokerPool } from '@kwire/consumer/internals';
import { createTopic, producerPerformance, type KafkaTarget } from '@kwire/broker';
import { ListOffsets, Metadata, ZERO_UUID } from '@kwire/protocol';
import type { Codec } from '../report/types.js';
import { produceKeyed } from './java.js';

export async function endOffsets(bootstrap: string, topic: string): Promise<number[]> {
  const pool = new BrokerPool({ bootstrapServers: bootstrap, clientId: 'kwire-bench' });
  try {
    const boot = await pool.bootstrap();
    const md = await boot.request(Metadata, { topics: [{ topicId: ZERO_UUID, name: topic }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
    const t = md.topics.find((x) => x.name === topic);
    if (!t || t.errorCode !== 0) throw new Error(`topic ${topic}: metadata error ${t?.errorCode}`);
    const ends: number[] = new Array(t.partitions.length).fill(-1);
    const byLeader = new Map<number, number[]>();
    for (const p of t.partitions) {
      let l = byLeader.get(p.leaderId);
      if (!l) byLeader.set(p.leaderId, (l = []));
      l.push(p.partitionIndex);
    }
    for (const [node, partitions] of byLeader) {
      const b = md.brokers.find((x) => x.nodeId === node)!;
      const conn = await pool.get({ host: b.host, port: b.port, nodeId: node });
      const res = await conn.request(ListOffsets, {
        replicaId: -1,
        isolationLevel: 0,
        topics: [{ name: topic, partitions: partitions.map((p) => ({ partitionIndex: p, currentLeaderEpoch: -1, timestamp: -1n })) }],
        timeoutMs: 10_000,
      });
      for (const rt of res.topics) {
        for (const rp of rt.partitions) {
          if (rp.errorCode !== 0) throw new Error(`ListOffsets ${topic}-${rp.partitionIndex}: error ${rp.errorCode}`);
          ends[rp.partitionIndex] = Number(rp.offset);
        }
      }
    }
    return ends;
  } finally {
    await pool.close();
  }
}

export interface LoadedTopic {
  topic: string;
  ends: number[];
  producedRecordsPerSec: number;
  seconds: number;
}

export async function loadTopic(target: KafkaTarget, o: { topic: string; partitions: number; records: number; recordSize: number; compression: Codec; keyed?: boolean }): Promise<LoadedTopic> {
  const started = Date.now();
  await createTopic(target, { topic: o.topic, partitions: o.partitions });
  if (o.keyed) {
    const p = await produceKeyed(target, o);
    const ends = await endOffsets(target.bootstrap, o.topic);
    const total = ends.reduce((a, b) => a + b, 0);
    if (total !== o.records) throw new Error(`${o.topic} holds ${total} records after loading ${o.records}`);
    return { topic: o.topic, ends, producedRecordsPerSec: o.records / p.seconds, seconds: (Date.now() - started) / 1000 };
  }
  const produced = await producerPerformance(target, {
    topic: o.topic,
    numRecords: o.records,
    recordSize: o.recordSize,
    compression: o.compression,
    props: { 'batch.size': 262_144, 'linger.ms': 20, acks: 1 },
    timeoutMs: 900_000,
  });
  const ends = await endOffsets(target.bootstrap, o.topic);
  const total = ends.reduce((a, b) => a + b, 0);
  if (total !== o.records) throw new Error(`${o.topic} holds ${total} records after loading ${o.records}`);
  return { topic: o.topic, ends, producedRecordsPerSec: produced.recordsPerSec, seconds: (Date.now() - started) / 1000 };
}
