// Issue 13, subscriptions, on a real broker: a pattern sees the cluster's topics before its first
// join and matches whole names (Java's subscribe(Pattern)); a topic list waits for a topic that
// does not exist yet; unsubscribe() commits what was finished and leaves; enforceRebalance().
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { describeGroupOffsets } from '@kwire/broker';
import type { Consumer } from '../../src/index.js';
import { kafkaSuite, until, within } from '@kwire/testkit';

const run = Date.now().toString(36);

const env = kafkaSuite(test, { consumer: { autoOffsetReset: 'earliest', fetchMaxWaitMs: 100, valueDeserializer: 'string' } });

function member(groupId: string, extra: Record<string, unknown> = {}): Consumer {
  return env.consumer({ groupId, ...extra });
}

async function topicWith(topic: string, n: number): Promise<void> {
  await env.producer.createTopics([topic]);
  await env.producer.send(
    topic,
    0,
    Array.from({ length: n }, (_, i) => ({ value: `${topic}:${i}` })),
  );
}

/**
 * Records read per topic (from the consumer's default stream): until `expected` records came, then
 * `extraMs` more for any that should not, or `ms` in all.
 */
async function topicsRead(c: Consumer, ms: number, expected: number, extraMs = 1_500): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  const it = c[Symbol.asyncIterator]();
  let end = Date.now() + ms;
  let total = 0;
  while (Date.now() < end) {
    const next = await Promise.race([it.next(), sleep(Math.max(1, end - Date.now())).then(() => null)]);
    if (next === null || next.done) break;
    counts.set(next.value.topic, (counts.get(next.value.topic) ?? 0) + next.value.records.length);
    total += next.value.records.length;
    if (total >= expected) end = Math.min(end, Date.now() + extraMs);
  }
  await it.return?.();
  return counts;
}

const p = `pat${run}`;
// t.*c matches tc and txyc; txycz and atc contain a match but are not one.
const patternTopics = [`${p}tc`, `${p}txyc`, `${p}txycz`, `a${p}tc`];
let created: Promise<unknown> | undefined;

for (const flags of ['', 'g']) {
  test(`a pattern${flags ? ` with the ${flags} flag` : ''} reads the topics whose whole names match, within seconds of subscribing`, async () => {
    await (created ??= Promise.all(patternTopics.map((t) => topicWith(t, 20))));
    const c = member(`g-${p}-${flags}`);
    const started = Date.now();
    await c.subscribe({ pattern: new RegExp(`${p}t.*c`, flags) });
    const counts = await topicsRead(c, 10_000, 40);
    assert.equal(
      [...counts].sort(),
      [
        [`${p}tc`, 20],
        [`${p}txyc`, 20],
      ],
      'whole-name matches only, every record',
    );
    assert.ok(Date.now() - started < 15_000);
  });
}

test('a topic list naming a topic that does not exist yet waits for it, then reads it', async () => {
  const topic = `later-${run}`;
  const c = member(`g-${topic}`, { metadataMaxAgeMs: 300_000 });
  await c.subscribe({ topics: [topic] });
  await sleep(1_500);
  await topicWith(topic, 30);
  let n = 0;
  for await (const batch of within(c, 30_000, 'records of the topic created after subscribe()')) {
    n += batch.records.length;
    if (n >= 30) break;
  }
  assert.is(n, 30, 'read without waiting for metadata.max.age.ms (5 minutes)');
});

test('unsubscribe() commits what was finished and leaves the group; subscribe() again goes on from there', async () => {
  const topic = `unsub-${run}`;
  await topicWith(topic, 40);
  const groupId = `g-${topic}`;
  const c = member(groupId, { maxPollRecords: 10, autoCommitIntervalMs: 600_000 });
  await c.subscribe({ topics: [topic] });
  const it = within(c, 30_000, 'the first batches')[Symbol.asyncIterator]();
  await it.next();
  await it.next(); // the first batch of 10 is finished
  const left = once(c, 'left');
  await c.unsubscribe();
  await left;
  assert.equal(c.assignment(), []);
  const rows = await describeGroupOffsets(env.kafka, groupId);
  assert.is(rows.find((r) => r.topic === topic)?.committed, 10n, 'the finished batch, not the one in hand (ConsumerGroupCommand)');
  await c.subscribe({ topics: [topic] });
  for await (const batch of within(c, 30_000, 'a batch after subscribing again')) {
    assert.is(batch.firstOffset, 10n);
    break;
  }
});

test('enforceRebalance(reason): a rebalance with that reason', async () => {
  const topic = `enforce-${run}`;
  await topicWith(topic, 5);
  const c = member(`g-${topic}`);
  await c.subscribe({ topics: [topic] });
  await c.assigned();
  const rebalance = new Promise<string>((resolve) => c.on('rebalance', (d) => String(d.why).includes('nightly') && resolve(String(d.why))));
  c.enforceRebalance('nightly re-spread');
  const why = await Promise.race([rebalance, sleep(15_000).then(() => 'none')]);
  assert.match(why, /enforced by the application: nightly re-spread/);
  await until('the partition back after the rebalance', () => c.assignment().length === 1, 15_000);
});

test.run();
