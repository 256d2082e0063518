// The connection layer against a real broker over PLAINTEXT (KWIRE_BOOTSTRAP's, or one of its own):
// ApiVersions, Metadata, pipelining, and a Fetch whose multi-megabyte frame takes the large-frame
// path (pool buffer, direct reads) on real socket reads.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTopic, producerPerformance, useKafka, type TestKafka } from '@kwire/broker';
import { ApiVersions, Fetch, Metadata } from '@kwire/protocol';
import { BrokerPool, Connection, decodeResponseBody, SimpleFramePool } from '../../src/connection/index.js';

let kafka: TestKafka;
const topic = `kwire-conn-${process.pid}-${Date.now()}`;

test.before(async () => {
  kafka = await useKafka({ heapMb: 512 });
  await createTopic(kafka, { topic, partitions: 1 });
  // ~3 MB of records: one Fetch answer far larger than the 64 KiB read buffer.
  await producerPerformance(kafka, { topic, numRecords: 3000, recordSize: 1000, props: { 'batch.size': 262144, 'linger.ms': 20 } });
});
test.after(async () => {
  await kafka?.release();
});

function firstBootstrap(): { host: string; port: number } {
  const [host, port] = kafka.bootstrap.split(',')[0]!.split(':');
  return { host: host!, port: Number(port) };
}

test('ApiVersions and Metadata over PLAINTEXT', async () => {
  const c = await Connection.connect({ ...firstBootstrap(), clientId: 'kwire-it' });
  try {
    // A 4.x broker knows ApiVersions v4 at least; v5 with Kafka 4.4.
    assert.ok(c.apiVersionsVersion >= 3, `ApiVersions v${c.apiVersionsVersion}`);
    const range = c.apiVersions.get(Metadata.apiKey)!;
    assert.ok(range.maxVersion >= 12);
    assert.is(c.version(Metadata), Math.min(Metadata.maxVersion, range.maxVersion));
    assert.ok(c.apiVersions.has(ApiVersions.apiKey));
    const md = await c.request(Metadata, { topics: [{ name: topic }] as never, allowAutoTopicCreation: false });
    assert.ok(md.brokers.length >= 1);
    assert.is(md.topics.length, 1);
    assert.is(md.topics[0]!.name, topic);
    assert.is(md.topics[0]!.errorCode, 0);
    assert.is(md.topics[0]!.partitions.length, 1);
    assert.ok(typeof md.clusterId === 'string' && md.clusterId.length > 0);
  } finally {
    await c.close();
  }
});

test('pipelined requests against the real broker all come back matched', async () => {
  const c = await Connection.connect(firstBootstrap());
  try {
    const names = Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? topic : `missing-${i}-${process.pid}`));
    const results = await Promise.all(names.map((name) => c.request(Metadata, { topics: [{ name }] as never, allowAutoTopicCreation: false })));
    results.forEach((r, i) => {
      assert.is(r.topics[0]!.name, names[i]);
      // The broker says which ones exist: 0 for ours, UNKNOWN_TOPIC_OR_PARTITION (3) for the rest.
      assert.is(r.topics[0]!.errorCode, i % 2 === 0 ? 0 : 3);
    });
  } finally {
    await c.close();
  }
});

test('a multi-megabyte Fetch answer: one pool buffer, read into directly, decoded after the fact', async () => {
  const pool = new SimpleFramePool();
  const c = await Connection.connect({ ...firstBootstrap(), framePool: pool });
  try {
    const md = await c.request(Metadata, { topics: [{ name: topic }] as never });
    const topicId = md.topics[0]!.topicId;
    const maxBytes = 32 * 1024 * 1024;
    const lease = await c.requestFrame(
      Fetch,
      {
        replicaId: -1,
        maxWaitMs: 500,
        minBytes: 1,
        maxBytes,
        isolationLevel: 0,
        sessionId: 0,
        sessionEpoch: -1,
        topics: [{ topic, topicId, partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0n, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: maxBytes }] }],
        forgottenTopicsData: [],
        rackId: '',
      },
      { timeoutMs: 30_000 },
    );
    assert.ok(lease.frame.length > 1_000_000, `frame of ${lease.frame.length} bytes`);
    assert.is(lease.frame.readInt32BE(0), lease.frame.length - 4);
    const stats = c.stats;
    assert.is(stats.largeFrames, 1);
    assert.ok(stats.directReads > 0);
    assert.is(pool.stats.outstanding, 1);
    const body = decodeResponseBody(Fetch, lease);
    assert.is(body.errorCode, 0);
    const partition = body.responses[0]!.partitions[0]!;
    assert.is(partition.errorCode, 0);
    assert.is(partition.highWatermark, 3000n);
    assert.ok(partition.records!.length > 1_000_000);
    // The first record batch starts at offset 0 (baseOffset int64, then the batch length).
    assert.is(partition.records!.readBigInt64BE(0), 0n);
    lease.release();
    assert.is(pool.stats.outstanding, 0);
  } finally {
    await c.close();
  }
});

test('BrokerPool: bootstrap, then the node from Metadata, data and coordinator connections apart', async () => {
  const pool = new BrokerPool({ bootstrapServers: kafka.bootstrap });
  try {
    const boot = await pool.bootstrap();
    const md = await boot.request(Metadata, { topics: [] });
    const node = md.brokers[0]!;
    const data = await pool.get({ nodeId: node.nodeId, host: node.host, port: node.port });
    const coordinator = await pool.get({ nodeId: node.nodeId, host: node.host, port: node.port }, 'coordinator');
    assert.is.not(data, coordinator);
    assert.is(await pool.get({ nodeId: node.nodeId, host: node.host, port: node.port }), data);
    assert.is((await data.request(Metadata, { topics: [] })).clusterId, md.clusterId);
    assert.is(pool.connections().length, 3);
  } finally {
    await pool.close();
  }
  assert.is(pool.connections().length, 0);
});

test.run();
