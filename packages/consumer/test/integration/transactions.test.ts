// read_committed over a partition holding committed and aborted transactions written by the real
// Java producer (KwireTransactions): only committed records, no control records, in order; and
// read_uncommitted sees everything (still without control records).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTopic, useKafka, writeTransactions, type TestKafka, type TransactionsResult } from '@kwire/broker';
import { createConsumer } from '../../src/index.js';
import { within } from '@kwire/testkit';

let kafka: TestKafka;
let written: TransactionsResult;
const topic = `tx-${Date.now().toString(36)}`;

test.before(async () => {
  kafka = await useKafka();
  await createTopic(kafka, { topic, partitions: 1 });
  written = await writeTransactions(kafka, {
    topic,
    partition: 0,
    transactions: ['commit', 'abort', 'commit', 'abort', 'abort', 'commit'],
    recordsPerTransaction: 4,
    compression: 'lz4',
    tombstone: true,
  });
});
test.after(async () => {
  await kafka?.release();
});

async function read(isolationLevel: 'read_committed' | 'read_uncommitted') {
  const consumer = createConsumer({ bootstrapServers: kafka.bootstrap, isolationLevel, keyDeserializer: 'string', valueDeserializer: 'string', fetchMaxWaitMs: 100 });
  await consumer.assign([{ topic, partition: 0, offset: 'earliest' }]);
  const expected = isolationLevel === 'read_committed' ? written.committed.length : written.records.length;
  const got: { offset: bigint; key: string; value: string | null; headers: [string, string][] }[] = [];
  for await (const batch of within(consumer, 60_000, `${expected} records`)) {
    for (const r of batch) got.push({ offset: r.offset, key: r.key as string, value: r.value as string | null, headers: r.headers.map((h) => [h.key, h.value?.toString() ?? '']) });
    if (got.length >= expected) break;
  }
  // Nothing more is delivered after the expected records (control batches at the end are hidden).
  const end = consumer.highWatermark({ topic, partition: 0 });
  await consumer.close();
  return { got, end };
}

test('read_committed: exactly the committed records, in order, tombstones and headers included', async () => {
  assert.is(written.committed.length, 12);
  assert.is(written.aborted.length, 12);
  const { got } = await read('read_committed');
  assert.equal(
    got.map((r) => [Number(r.offset), r.key, r.value]),
    written.committed.map((r) => [r.offset, r.key, r.value]),
  );
  assert.ok(
    got.some((r) => r.value === null),
    'a committed tombstone is delivered',
  );
  assert.ok(got.every((r) => r.headers.some(([k, v]) => k === 'outcome' && v === 'commit')));
});

test('read_uncommitted: every data record of both outcomes, never a control record', async () => {
  const { got } = await read('read_uncommitted');
  assert.equal(
    got.map((r) => Number(r.offset)),
    written.records.map((r) => r.offset),
    'all 24 data records; the 6 markers in between are skipped',
  );
});

test.run();
