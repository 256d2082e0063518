// Issue 13, offsets by time, on a real broker: offsetsForTimes, beginningOffsets, endOffsets
// (ListOffsets with the consumer's isolation level) and a partition started at a time.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Consumer, ConsumerBatch } from '../../src/index.js';
import { kafkaSuite, until, within } from '@kwire/testkit';

const run = Date.now().toString(36);
const topic = `times-${run}`;
const t0 = 1_750_000_000_000;

const env = kafkaSuite(test, { consumer: { fetchMaxWaitMs: 100, valueDeserializer: 'string' } });
test.before(async () => {
  await env.producer.createTopics([topic], 2);
  // Ten records a second apart (CreateTime), and an empty partition 1.
  await env.producer.send(
    topic,
    0,
    Array.from({ length: 10 }, (_, i) => ({ value: `r${i}`, timestamp: t0 + i * 1_000 })),
  );
});

function consumer(extra: Record<string, unknown> = {}): Consumer {
  return env.consumer(extra);
}

test('offsetsForTimes: the first record at or after each time, null past the last; keys are the objects given', async () => {
  const c = consumer();
  const p0 = { topic, partition: 0 };
  const empty = { topic, partition: 1 };
  const found = await c.offsetsForTimes(
    new Map([
      [p0, t0 + 2_500],
      [empty, t0],
    ]),
  );
  assert.equal(found.get(p0), { offset: 3n, timestamp: BigInt(t0 + 3_000), leaderEpoch: found.get(p0)!.leaderEpoch });
  assert.is(found.get(empty), null, 'an empty partition');
  assert.is((await c.offsetsForTimes(new Map([[p0, t0 + 4_000]]))).get(p0)?.offset, 4n, 'a record at exactly that time');
  assert.is((await c.offsetsForTimes(new Map([[p0, t0 + 60_000]]))).get(p0), null, 'no record that late');
});

test('beginningOffsets and endOffsets', async () => {
  const c = consumer();
  const tps = [
    { topic, partition: 0 },
    { topic, partition: 1 },
  ];
  const begin = await c.beginningOffsets(tps);
  const end = await c.endOffsets(tps);
  assert.equal([begin.get(tps[0]!), begin.get(tps[1]!)], [0n, 0n]);
  assert.equal([end.get(tps[0]!), end.get(tps[1]!)], [10n, 0n]);
  const committedReader = consumer({ isolationLevel: 'read_committed' });
  assert.is((await committedReader.endOffsets([tps[0]!])).get(tps[0]!), 10n, 'no open transaction: the last stable offset is the end');
});

test('assign and seek to a time: the partition starts at the first record at or after it', async () => {
  const c = consumer();
  await c.assign([{ topic, partition: 0, offset: { timestamp: t0 + 4_500 } }]);
  const first = (await within(c, 30_000, 'records from the time').next()).value as ConsumerBatch;
  assert.is(first.firstOffset, 5n);
  c.seek({ topic, partition: 0 }, { timestamp: t0 + 1_000 });
  for await (const batch of within(c, 30_000, 'records after the seek')) {
    assert.is(batch.firstOffset, 1n);
    break;
  }
  c.seek({ topic, partition: 0 }, { timestamp: t0 + 3_600_000 });
  // Past every record: the end of the log; a record written now is the next one read.
  // Written once the seek has found the end (two ListOffsets: by time, then the latest offset).
  await until('the seek to resolve to the end', () => c.position({ topic, partition: 0 }) === 10n, 30_000, 20);
  await env.producer.send(topic, 0, [{ value: 'new' }]);
  for await (const batch of within(c, 30_000, 'the record written after the seek')) {
    assert.is(batch.firstOffset, 10n);
    break;
  }
});

test('bad input: a negative time is a UsageError', async () => {
  const c = consumer();
  let err: unknown;
  try {
    await c.offsetsForTimes(new Map([[{ topic, partition: 0 }, -5]]));
  } catch (e) {
    err = e;
  }
  assert.match(String(err), /UsageError: offsetsForTimes\(\): .*timestamp -5 is not a non-negative integer/);
});

test.run();
