// Issue 29, item 5, on a real broker: a fetched record prints its place, key, value and headers
// (util.inspect, console.log) without the batch's memory, and JSON.stringify writes them as the
// consumer README's table says; after its batch is released it prints without throwing.
import { inspect } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { useKafka, type TestKafka } from '@kwire/broker';
import { createConsumer, type ConsumerRecord, type ConsumerBatch } from '../../src/index.js';
import { settlesWithin, TestProducer } from '@kwire/testkit';

let kafka: TestKafka;
let producer: TestProducer;

test.before(async () => {
  kafka = await useKafka();
  producer = new TestProducer(kafka.bootstrap);
});
test.after(async () => {
  await producer?.close();
  await kafka?.release();
});

test('a fetched record: inspect shows key, value (cut) and headers, JSON has them, released it still prints', async () => {
  const topic = `print-${Date.now().toString(36)}`;
  await producer.createTopics([topic]);
  const timestamp = Date.UTC(2026, 0, 2, 3, 4, 5);
  const neighbour = 'N'.repeat(2_000);
  await producer.send(topic, 0, [
    {
      key: 'customer-7',
      value: `{"note":"${'x'.repeat(300)}"}`,
      headers: [
        { key: 'trace-id', value: 'abc123' },
        { key: 'raw', value: Buffer.from([0xff, 0xfe]) },
      ],
      timestamp,
    },
    { value: neighbour },
  ]);
  const consumer = createConsumer({ bootstrapServers: kafka.bootstrap, autoOffsetReset: 'earliest', fetchMaxWaitMs: 100 });
  try {
    await consumer.assign([{ topic, partition: 0 }]);
    const it = consumer[Symbol.asyncIterator]();
    const batch = (await settlesWithin(it.next(), 30_000, 'the batch')).value as ConsumerBatch;
    const record = batch.records[0] as ConsumerRecord;
    const shown = inspect(record, { colors: false });
    assert.match(shown, new RegExp(`^ConsumerRecord \\{\\n  topic: '${topic}',\\n  partition: 0,\\n  offset: 0n,\\n  timestamp: ${timestamp} \\(2026-01-02T03:04:05.000Z\\)`));
    assert.match(shown, /key: <Buffer 'customer-7'>/);
    assert.match(shown, /value: <Buffer '\{"note":"x{91}'… \(311 bytes\)>/);
    assert.match(shown, /\{ key: 'trace-id', value: <Buffer 'abc123'> \}/);
    assert.match(shown, /\{ key: 'raw', value: <Buffer ff fe> \}/);
    assert.not.ok(/wireBatch|ArrayBuffer|NNNN/.test(shown), shown);

    const json = JSON.parse(JSON.stringify(record));
    assert.equal(json, {
      topic,
      partition: 0,
      offset: '0',
      timestamp,
      key: 'customer-7',
      value: `{"note":"${'x'.repeat(300)}"}`,
      headers: [
        { key: 'trace-id', value: 'abc123' },
        { key: 'raw', value: { base64: '//4=' } },
      ],
      leaderEpoch: json.leaderEpoch,
    });
    assert.ok(Number.isInteger(json.leaderEpoch) && json.leaderEpoch >= 0, `leaderEpoch ${json.leaderEpoch}`);
    assert.match(inspect(batch, { colors: false }), new RegExp(`ConsumerBatch \\{\\n  topic: '${topic}',\\n  partition: 0,\\n  count: 2,\\n  firstOffset: 0n,\\n  lastOffset: 1n`));

    batch.release();
    assert.match(inspect(record), /value: \[released with its batch\]/);
    assert.is(JSON.parse(JSON.stringify(record)).released, true);
  } finally {
    await consumer.close();
  }
});

test.run();
