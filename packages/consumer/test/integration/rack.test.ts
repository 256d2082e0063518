// client.rack and the preferred read replica (KIP-392): on a 3-node cluster whose brokers have
// racks and a rack-aware replica selector, a consumer in the rack of a follower is told by the
// leader to fetch from that follower, and does, reading every record.
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTopic, describeTopic, producerPerformance, startKafka, type KafkaCluster } from '@kwire/broker';
import { createConsumer } from '../../src/index.js';
import { within } from '@kwire/testkit';

let cluster: KafkaCluster;

test.before(async () => {
  cluster = await startKafka({
    nodes: 3,
    heapMb: 384,
    config: { 'replica.selector.class': 'org.apache.kafka.common.replica.RackAwareReplicaSelector' },
    nodeConfig: (nodeId) => ({ 'broker.rack': `rack-${nodeId}` }),
  });
});
test.after(async () => {
  await cluster?.stop();
});

test("a consumer in a follower's rack fetches from that follower", async () => {
  await createTopic(cluster, { topic: 'racked', partitions: 1, replicationFactor: 3 });
  await producerPerformance(cluster, { topic: 'racked', numRecords: 20_000, recordSize: 100, props: { acks: 'all' } });
  const [p] = await describeTopic(cluster, 'racked');
  const follower = p!.replicas.find((id) => id !== p!.leader)!;
  // Let the follower catch up with the high watermark before reading from it.
  await sleep(2_000);
  const consumer = createConsumer({ bootstrapServers: cluster.bootstrap, clientRack: `rack-${follower}`, autoOffsetReset: 'earliest', maxPartitionFetchBytes: 64 * 1024, fetchMaxWaitMs: 100 });
  await consumer.assign([{ topic: 'racked', partition: 0 }]);
  let n = 0;
  let next = 0n;
  for await (const batch of within(consumer, 60_000, 'every record from the follower')) {
    for (const r of batch) {
      assert.is(r.offset, next);
      next++;
    }
    n += batch.records.length;
    if (n >= 20_000) break;
  }
  const byNode = consumer.metrics().fetchesByNode;
  await consumer.close();
  console.log(`  leader ${p!.leader}, client rack rack-${follower}: fetches by node ${JSON.stringify(byNode)}`);
  assert.is(n, 20_000);
  assert.ok((byNode[follower] ?? 0) > (byNode[p!.leader] ?? 0), `most fetches went to the follower in the client's rack: ${JSON.stringify(byNode)}`);
});

test.run();
