// Three combined KRaft nodes on loopback: a replicated topic survives the loss of its leader.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { consumerPerformance, createTopic, describeTopic, probeApiVersions, producerPerformance, startKafka, type KafkaCluster } from '../../src/index.js';

let cluster: KafkaCluster;

test.before(async () => {
  cluster = await startKafka({ nodes: 3, heapMb: 384 });
});
test.after(async () => {
  await cluster?.stop();
});

test('three nodes on distinct ports, each answering', async () => {
  assert.is(cluster.nodes.length, 3);
  const ports = cluster.nodes.flatMap((n) => [n.port, n.controllerPort]);
  assert.is(new Set(ports).size, 6);
  assert.is(new Set(cluster.nodes.map((n) => n.dataDir)).size, 3);
  for (const n of cluster.nodes) {
    const ranges = await probeApiVersions(n.host, n.port);
    assert.ok(ranges.some((r) => r.apiKey === 1));
  }
  assert.is(cluster.bootstrap.split(',').length, 3);
});

test('a topic replicated three times keeps serving after its leader is killed', async () => {
  await createTopic(cluster, { topic: 'replicated', partitions: 3, replicationFactor: 3, config: { 'min.insync.replicas': 2 } });
  const before = await describeTopic(cluster, 'replicated');
  assert.is(before.length, 3);
  for (const p of before) assert.is(p.replicas.length, 3);
  await producerPerformance(cluster, { topic: 'replicated', numRecords: 3_000, recordSize: 100, props: { acks: 'all' } });
  // A first group read while all three run: it also creates __consumer_offsets, on every node.
  assert.is((await consumerPerformance(cluster, { topic: 'replicated', messages: 3_000 })).records, 3_000);
  const offsets = await describeTopic(cluster, '__consumer_offsets');
  assert.ok(offsets.length > 0 && offsets.every((p) => p.replicas.length === 3), 'group coordinators survive the loss of a node');

  const victim = cluster.nodes.find((n) => n.nodeId === before[0]!.leader)!;
  await victim.kill();
  assert.not.ok(victim.running);
  const survivors = {
    bootstrap: cluster.nodes
      .filter((n) => n !== victim)
      .map((n) => `${n.host}:${n.port}`)
      .join(','),
    dist: cluster.dist,
  };
  const consumed = await consumerPerformance(survivors, { topic: 'replicated', messages: 3_000, timeoutMs: 60_000 });
  assert.is(consumed.records, 3_000);
  // The controller moves leadership once the killed node's session expires: ask until it has.
  let after = await describeTopic(survivors, 'replicated');
  for (let i = 0; i < 30 && !after.every((p) => p.leader !== victim.nodeId && p.leader > 0); i++) {
    await new Promise((r) => setTimeout(r, 1_000));
    after = await describeTopic(survivors, 'replicated');
  }
  assert.ok(
    after.every((p) => p.leader !== victim.nodeId && p.leader > 0),
    `leadership moved off the killed node: ${JSON.stringify(after)}`,
  );

  await victim.start();
  assert.ok(victim.running);
});

test.run();
