// Issue 13, deserialization, on a real broker: a value that does not deserialize is a
// DeserializationError with its topic, partition and offset; 'stop' (the default) pauses the
// partition with nothing committed past the record, 'skip' leaves it out with an event; async
// deserializers see the record's headers.
import { once } from 'node:events';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { describeGroupOffsets } from '@kwire/broker';
import { DeserializationError, type Consumer, type ConsumerBatch } from '../../src/index.js';
import { capturingLogger, kafkaSuite, within, settlesWithin } from '@kwire/testkit';

const run = Date.now().toString(36);

const env = kafkaSuite(test, { consumer: { autoOffsetReset: 'earliest', fetchMaxWaitMs: 100, valueDeserializer: 'json', autoCommitIntervalMs: 600_000 } });

function member(groupId: string, extra: Record<string, unknown> = {}): Consumer {
  return env.consumer({ groupId, ...extra });
}

/** Offsets 0-3: JSON, JSON, not JSON, JSON. */
async function poisoned(name: string): Promise<string> {
  const topic = `${name}-${run}`;
  await env.producer.createTopics([topic]);
  await env.producer.send(topic, 0, [{ value: '{"n":0}' }, { value: '{"n":1}' }, { value: '{"n": oops' }, { value: '{"n":3}' }]);
  return topic;
}

test("'stop' (default): the records before the bad one, then a DeserializationError with its place; paused, nothing committed past it; seek past and resume", async () => {
  const topic = await poisoned('deser-stop');
  const groupId = `g-${topic}`;
  const { logger, lines } = capturingLogger();
  const c = member(groupId, { logger });
  await c.subscribe({ topics: [topic] });
  const it = c[Symbol.asyncIterator]();
  const first = (await settlesWithin(it.next(), 30_000, 'the first batch')).value as ConsumerBatch;
  assert.equal(
    first.records.map((r) => r.value),
    [{ n: 0 }, { n: 1 }],
    'the good records before the bad one',
  );
  let err: unknown;
  try {
    await settlesWithin(it.next(), 30_000, 'the failure');
  } catch (e) {
    err = e;
  }
  assert.instance(err, DeserializationError);
  const e = err as DeserializationError;
  assert.equal([e.topic, e.partition, e.offset, e.part, e.code], [topic, 0, 2n, 'value', 'KWIRE_DESERIALIZATION']);
  assert.instance(e.cause, SyntaxError);
  assert.equal(c.paused(), [{ topic, partition: 0 }], 'the partition is stopped');
  // Said where a user sees it (the default logger writes warn to stderr), with the way out.
  const said = lines.filter((l) => l.startsWith('warn ') && l.includes('does not deserialize'));
  assert.is(said.length, 1, `one warning: ${lines.join('; ')}`);
  assert.match(said[0]!, /seek past it, then resume/);
  assert.match(said[0]!, /"offset":"2"/);
  await c.commitSync();
  const rows = await describeGroupOffsets(env.kafka, groupId);
  assert.is(rows[0]?.committed, 2n, 'committed up to the bad record, not past it (ConsumerGroupCommand)');
  // The application decides: past the record, and on.
  c.seek({ topic, partition: 0 }, 3n);
  c.resume([{ topic, partition: 0 }]);
  for await (const batch of within(c, 30_000, 'the record after the bad one')) {
    assert.equal(
      batch.records.map((r) => r.value),
      [{ n: 3 }],
    );
    break;
  }
});

test("'skip': the bad record is left out with a 'deserialization-error' event; everything is committed", async () => {
  const topic = await poisoned('deser-skip');
  const groupId = `g-${topic}`;
  const c = member(groupId, { deserializationErrorPolicy: 'skip' });
  const skipped = once(c, 'deserialization-error') as Promise<[DeserializationError]>;
  await c.subscribe({ topics: [topic] });
  const values: unknown[] = [];
  for await (const batch of within(c, 30_000, 'the records')) {
    values.push(...batch.records.map((r) => r.value));
    if (values.length >= 3) {
      batch.release();
      break;
    }
  }
  assert.equal(values, [{ n: 0 }, { n: 1 }, { n: 3 }]);
  const [err] = await skipped;
  assert.is(err.offset, 2n);
  await c.close();
  const rows = await describeGroupOffsets(env.kafka, groupId);
  assert.is(rows[0]?.committed, 4n, 'the skipped record counts as done');
});

test('an async deserializer sees topic, partition, part and headers; its value is awaited before delivery', async () => {
  const topic = `deser-async-${run}`;
  await env.producer.createTopics([topic]);
  await env.producer.send(topic, 0, [
    { value: 'abc', headers: [{ key: 'enc', value: Buffer.from('upper') }] },
    { value: 'def', headers: [] },
  ]);
  const seen: string[] = [];
  const c = member(`g-${topic}`, {
    valueDeserializer: async (data: Buffer | null, ctx: { topic: string; partition: number; part: string; headers: readonly { key: string; value: Buffer | null }[] }) => {
      seen.push(`${ctx.topic}/${ctx.partition}/${ctx.part}/${ctx.headers.map((h) => h.key).join(',')}`);
      await new Promise((r) => setTimeout(r, 5));
      const text = data!.toString();
      return ctx.headers.some((h) => h.key === 'enc' && h.value?.toString() === 'upper') ? text.toUpperCase() : text;
    },
  });
  await c.subscribe({ topics: [topic] });
  for await (const batch of within(c, 30_000, 'the records')) {
    assert.equal(
      batch.records.map((r) => r.value),
      ['ABC', 'def'],
    );
    break;
  }
  assert.equal(seen, [`${topic}/0/value/enc`, `${topic}/0/value/`]);
});

test.run();
