// The version is a parameter: the 3.9 and 4.1 lines start too (3.9 logs through reload4j, 4.x
// through Log4j2 with the binding the POMs leave out), and each answers with its own API ranges.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { BrokerError, cacheDir, createTopic, ensureKafka, probeApiVersions, producerPerformance, startKafka } from '../../src/index.js';

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

test('a release Maven Central does not have: tried three times, then a BrokerError naming it, nothing left half-written', async () => {
  const version = '4.99.0';
  const root = join(cacheDir(), 'kafka', version);
  const lines: string[] = [];
  try {
    await ensureKafka(version, { log: (l) => lines.push(l) }).then(
      () => assert.unreachable('Kafka 4.99.0 resolved'),
      (err: unknown) => {
        assert.instance(err, BrokerError);
        assert.match((err as Error).message, /mvn could not resolve Apache Kafka 4\.99\.0/);
      },
    );
    assert.is(lines.filter((l) => /attempt \d of 3/.test(l)).length, 2, lines.join('\n'));
    assert.not.ok(existsSync(join(root, 'complete')));
    assert.equal(existsSync(root) ? readdirSync(root) : [], [], 'no partial download left');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test.run();
