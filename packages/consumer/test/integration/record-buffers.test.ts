// recordBuffers on a real broker. 'owned': Buffers taken from records (the views record.value
// hands out) keep their bytes after their batch is released, for Fetch frames and for
// decompression output alike. 'pooled' (the default), the control that shows
// the check can fail: the same kept views, read after later answers reused the memory, no longer
// hold their records (the lifetime rule: copy to keep).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { useKafka, type TestKafka } from '@kwire/broker';
import { TestProducer } from '@kwire/testkit';
import { createConsumer } from '../../src/index.js';

let kafka: TestKafka;
const run = Date.now().toString(36);
const plain = `record-buffers-none-${run}`;
const lz4 = `record-buffers-lz4-${run}`;
const COUNT = 600;
const SIZE = 4096;

/** Record i's value: SIZE bytes that differ from every other record's. */
function recordValue(i: number): Buffer {
  const b = Buffer.alloc(SIZE, i % 251);
  b.writeUInt32BE(i, 0);
  b.writeUInt32BE(i, SIZE - 4);
  return b;
}

test.before(async () => {
  kafka = await useKafka();
  const producer = new TestProducer(kafka.bootstrap);
  try {
    await producer.createTopics([plain, lz4]);
    // Lz4 values that compress (runs of one byte): each batch decompresses into a buffer of its own.
    for (let i = 0; i < COUNT; i += 100) {
      const records = Array.from({ length: 100 }, (_, k) => ({ value: recordValue(i + k) }));
      await producer.send(plain, 0, records);
      await producer.send(lz4, 0, records, { compression: 'lz4' });
    }
  } finally {
    await producer.close();
  }
});
test.after(async () => {
  await kafka?.release();
});

/** Reads the topic once, keeping every value view; then counts the views that no longer hold their record. */
async function keptViews(topic: string, recordBuffers: 'owned' | 'pooled'): Promise<{ read: number; wrong: number }> {
  // 96 KiB a partition: many answers, each larger than the socket's read buffer (so in memory from
  // the pool, or fresh), and each answer's memory released before the next ones arrive.
  const c = createConsumer({ bootstrapServers: kafka.bootstrap, autoOffsetReset: 'earliest', maxPartitionFetchBytes: 96 * 1024, fetchMaxWaitMs: 100, recordBuffers });
  const kept: Buffer[] = [];
  try {
    await c.assign([{ topic, partition: 0 }]);
    for await (const batch of c) {
      for (const r of batch.records) kept.push(r.value as Buffer);
      if (kept.length >= COUNT) break;
    }
    let wrong = 0;
    kept.forEach((v, i) => {
      if (!v.equals(recordValue(i))) wrong++;
    });
    return { read: kept.length, wrong };
  } finally {
    await c.close({ timeoutMs: 5_000 });
  }
}

test("recordBuffers 'owned': kept value views hold their records after release (plain and lz4 answers)", async () => {
  for (const topic of [plain, lz4]) {
    const owned = await keptViews(topic, 'owned');
    assert.is(owned.read, COUNT, topic);
    assert.is(owned.wrong, 0, `${topic}: ${owned.wrong} kept views changed under 'owned'`);
  }
});

test("recordBuffers 'pooled' (the default): the same kept views are overwritten once memory is reused", async () => {
  const pooled = await keptViews(plain, 'pooled');
  assert.is(pooled.read, COUNT);
  assert.ok(pooled.wrong > 0, 'reused memory shows in views kept past their batch');
});

test('recordBuffers: anything else is a ConfigError naming the choices', () => {
  assert.throws(
    () => createConsumer({ bootstrapServers: '127.0.0.1:9', recordBuffers: 'copied' as 'owned' }),
    (e: Error) => e.name === 'ConfigError' && /recordBuffers/.test(e.message) && /owned/.test(e.message),
  );
});

test.run();
