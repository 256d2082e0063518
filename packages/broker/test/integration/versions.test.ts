// The version is a parameter: the 3.9 and 4.1 lines start too (3.9 logs through reload4j, 4.x
// through Log4j2 with the binding the POMs leave out), and each answers with its own API ranges.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTopic, probeApiVersions, producerPerformance, startKafka } from '../../src/index.js';

for (const version of ['3.9.1', '4.1.2']) {
  test(`Kafka ${version} starts, logs, and takes a topic and records`, async () => {
    const cluster = await startKafka({ version, heapMb: 384 });
    try {
      assert.is(cluster.dist.version.text, version);
      const node = cluster.nodes[0]!;
      const ranges = await probeApiVersions(node.host, node.port);
      const fetch = ranges.find((r) => r.apiKey === 1)!;
      assert.ok(fetch.maxVersion >= 16, `Fetch up to v${fetch.maxVersion}`);
      await createTopic(cluster, { topic: 'v', partitions: 2 });
      const r = await producerPerformance(cluster, { topic: 'v', numRecords: 1_000, recordSize: 20 });
      assert.is(r.records, 1_000);
      // The log binding is there: the broker wrote its start-up banner to broker.log.
      assert.match(node.logTail(2_000), /Kafka Server started|KafkaRaftServer.*started/);
    } finally {
      await cluster.stop();
    }
  });
}

test.run();
