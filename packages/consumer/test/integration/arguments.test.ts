// Issue 29, item 3, on a real broker: the public API called with the arguments a newcomer from
// kafkajs or Java writes. Wrong ones are a UsageError (ConfigError for the configuration) naming
// what was met and the kwire way, before anything is done; the kafkajs shapes kwire takes work.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { useKafka, type TestKafka } from '@kwire/broker';
import { ConfigError, createConsumer, UsageError, type Consumer, type TopicPartition } from '../../src/index.js';
import { TestProducer, within } from '@kwire/testkit';

let kafka: TestKafka;
let producer: TestProducer;
const run = Date.now().toString(36);
const open: Consumer[] = [];
const topic = `args-${run}`;
const t0 = 1_750_000_000_000;
const p0: TopicPartition = { topic, partition: 0 };
const p1: TopicPartition = { topic, partition: 1 };

test.before(async () => {
  kafka = await useKafka();
  producer = new TestProducer(kafka.bootstrap);
  await producer.createTopics([topic], 2);
  // Ten records a second apart in partition 0, two in partition 1.
  await producer.send(
    topic,
    0,
    Array.from({ length: 10 }, (_, i) => ({ value: `r${i}`, timestamp: t0 + i * 1_000 })),
  );
  await producer.send(topic, 1, [{ value: 'x0' }, { value: 'x1' }]);
});
test.after(async () => {
  await Promise.allSettled(open.map((c) => c.close({ timeoutMs: 5_000 })));
  await producer?.close();
  await kafka?.release();
});

function consumer(extra: Record<string, unknown> = {}): Consumer<string | null, string | null> {
  const c = createConsumer<string | null, string | null>({ bootstrapServers: kafka.bootstrap, fetchMaxWaitMs: 100, valueDeserializer: 'string', autoOffsetReset: 'earliest', ...extra });
  open.push(c);
  return c;
}

/** What `call` throws or rejects with within 10 s (undefined when it succeeds, or is still running: run()). */
async function failure(call: () => unknown): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([call(), new Promise((resolve) => (timer = setTimeout(resolve, 10_000)))]);
  } catch (err) {
    return err;
  } finally {
    clearTimeout(timer);
  }
  return undefined;
}

async function usageError(call: () => unknown, ...patterns: RegExp[]): Promise<void> {
  const err = await failure(call);
  assert.ok(err instanceof UsageError, `a UsageError, not ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`);
  for (const p of patterns) assert.match((err as Error).message, p);
}

test('subscribe({ topics, fromBeginning: true }), the kafkajs spelling, is refused with the kwire way', async () => {
  const c = consumer({ groupId: `g-from-${run}` });
  await usageError(
    () => c.subscribe({ topics: [topic], fromBeginning: true } as never),
    /fromBeginning is kafkajs's subscribe\(\) option: set autoOffsetReset: 'earliest' in createConsumer\(\)'s configuration/,
  );
});

test("subscribe({ topic }) and kafkajs's RegExps in topics name the kwire shape (not a TypeError)", async () => {
  const c = consumer({ groupId: `g-topic-${run}` });
  await usageError(() => c.subscribe({ topic } as never), new RegExp(`subscribe\\(\\) takes \\{ topics: \\["${topic}"\\] \\}, not kafkajs's \\{ topic \\}`));
  await usageError(() => c.subscribe({ topics: [/args-.*/] } as never), /in topics is a pattern: give \{ pattern: \/args-\.\*\/ \}/);
  await usageError(() => c.subscribe({ topics: [topic] }, { onPartitionAssigned() {} } as never), /did you mean onPartitionsAssigned\?/);
});

test("kafkajs's pause([{ topic, partitions: [0] }]) pauses that partition; { topic } alone every assigned one", async () => {
  const c = consumer();
  await c.assign([p0, p1]);
  c.pause([{ topic, partitions: [0] }]);
  assert.equal(c.paused(), [p0]);
  c.pause([{ topic }]);
  assert.equal(c.paused(), [p0, p1]);
  c.resume([{ topic, partitions: [1] }]);
  assert.equal(c.paused(), [p0]);
  c.resume(new Set([p0]));
  assert.equal(c.paused(), []);
  // Resumed: every record comes.
  let n = 0;
  for await (const batch of within(c, 30_000, 'the twelve records')) {
    n += batch.records.length;
    if (n >= 12) break;
  }
  assert.is(n, 12);
});

test('pause() of a partition not assigned names it and what is assigned, and pauses nothing', async () => {
  const c = consumer();
  await c.assign([p0]);
  await usageError(() => c.pause([p0, { topic, partition: 9 }]), new RegExp(`pause\\(\\): ${topic}-9 is not assigned to this consumer \\(assigned now: ${topic}-0\\)`));
  assert.equal(c.paused(), [], 'the assigned partition before it was not paused either');
  await usageError(() => c.pause(p0 as never), /pause\(\) takes a list of \{ topic, partition \}, not one/);
  await usageError(() => c.position({ topic, partition: 9 }), new RegExp(`${topic}-9 is not assigned to this consumer`));
  await usageError(() => c.highWatermark({ topic, partitions: [0] } as never), /not kafkajs's \{ topic, partitions \}/);
  await usageError(() => c.currentLag(undefined as never), /currentLag\(\): undefined is not a partition/);
});

test('offsetsForTimes() with an array: answered, keyed by the items given (not "object is not iterable")', async () => {
  const c = consumer();
  const q0 = { topic, partition: 0, timestamp: t0 + 2_500 };
  const q1 = { topic, partition: 1, timestamp: Date.now() + 3_600_000 };
  const found = await c.offsetsForTimes([q0, q1]);
  assert.is(found.get(q0)?.offset, 3n);
  assert.is(found.get(q0)?.timestamp, BigInt(t0 + 3_000));
  assert.is(found.get(q1), null);
  await usageError(() => c.offsetsForTimes(q0 as never), /offsetsForTimes\(\) takes a Map from \{ topic, partition \} to a time, or a list of \{ topic, partition, timestamp \}/);
  await usageError(() => c.offsetsForTimes([{ topic, partition: 0 }] as never), /has no timestamp/);
  await usageError(() => c.endOffsets([p0], 5_000 as never), /endOffsets\(\): give the timeout as \{ timeoutMs: 5000 \}/);
  const ends = await c.endOffsets(new Set([p0, p1]));
  assert.is(ends.get(p0), 10n);
  assert.is(ends.get(p1), 2n);
});

test("seek(): kafkajs's one-object form and string offsets are refused; a number or a bigint seeks", async () => {
  const c = consumer();
  await c.assign([p0]);
  await usageError(() => c.seek({ topic, partition: 0, offset: '5' } as never, undefined as never), /seek\(\) takes \(partition, offset\): seek\(\{ topic, partition \}, 5n\)/);
  await usageError(() => c.seek(p0, '5' as never), /the offset "5" is a string \(kafkajs's offsets are\): give 5n/);
  await usageError(() => c.seek(p0, -2), /offset -2 is the protocol's "earliest": give 'earliest'/);
  await usageError(() => c.seek(p0, 'beginning' as never), /did you mean 'earliest'\?/);
  c.seek(p0, 7);
  for await (const batch of within(c, 30_000, 'the record at offset 7')) {
    assert.is(batch.firstOffset, 7n);
    break;
  }
});

test("assign(): kafkajs's { topic, partitions }, a misspelt offset, a partition twice; nothing assigned", async () => {
  const c = consumer();
  await usageError(() => c.assign([{ topic, partitions: [0, 1] }] as never), /assign\(\) takes one entry per partition/);
  await usageError(() => c.assign([{ topic, partition: 0, ofset: 5n }] as never), /unknown option "ofset": did you mean offset\?/);
  await usageError(() => c.assign([p0, { topic, partition: 0 }]), new RegExp(`${topic}-0 is given twice`));
  await usageError(() => c.assign([{ topic, partition: 0, offset: '3' }] as never), /give 3n/);
  assert.equal(c.assignment(), []);
  const none = consumer({ autoOffsetReset: 'none' });
  await usageError(() => none.assign([p0]), /has no offset and autoOffsetReset \(auto\.offset\.reset\) is none/);
});

test('run() with kafkajs options names the kwire way, and runs nothing', async () => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ partitionsConsumedConcurrently: 3, autoCommit: false }, /partitionsConsumedConcurrently is kafkajs's run\(\) option: give run\(\{ maxConcurrency: N, ordering: 'partition' \}\)/],
    [{ autoCommit: false }, /autoCommit is kafkajs's run\(\) option: set enableAutoCommit: false/],
    [{ autoCommitInterval: 1_000 }, /autoCommitIntervalMs \(auto\.commit\.interval\.ms\)/],
    [{ onFailure: 'restart' }, /did you mean 'retry'\?/],
  ];
  for (const [extra, message] of cases) {
    // A consumer each: an accepted run() runs until close().
    const c = consumer();
    await c.assign([p0]);
    let handled = 0;
    await usageError(() => c.run({ eachMessage: async () => void handled++, ...extra } as never), message);
    assert.is(handled, 0, `${JSON.stringify(extra)}: no record handled`);
  }
  const c = consumer();
  await usageError(() => c.run({ eachMesage: async () => {} } as never), /did you mean eachMessage\?/);
});

test("commitSync(): kafkajs's string offsets are refused; Java's Map<TopicPartition, offset> commits", async () => {
  const groupId = `g-commit-${run}`;
  const c = consumer({ groupId, enableAutoCommit: false });
  await c.subscribe({ topics: [topic] });
  await c.assigned();
  await usageError(() => c.commitSync([{ topic, partition: 0, offset: '4' }] as never), /commitSync\(\): .*the offset "4" is a string \(kafkajs's offsets are\): give 4n/);
  await usageError(() => c.commitSync([{ topic, partition: 0 }] as never), /has no offset: give the next offset to read/);
  assert.throws(
    () => c.commitAsync(undefined, 'callback' as never),
    (e: unknown) => e instanceof UsageError && /the callback must be a function/.test((e as Error).message),
  );
  const key = { topic, partition: 0 };
  await c.commitSync(new Map([[key, { offset: 4n, metadata: 'java-style' }]]));
  await c.commitSync([{ topic, partition: 1, offset: 1 }]);
  const committed = await c.committed([key, p1]);
  assert.is(committed.get(key)?.offset, 4n);
  assert.is(committed.get(key)?.metadata, 'java-style');
  assert.is(committed.get(p1)?.offset, 1n, 'a number offset is committed as the bigint');
});

test('streams() and partitionsFor() say what they take', async () => {
  const c = consumer();
  await usageError(() => c.streams({ [topic]: 0 }), new RegExp(`streams\\(\\): ${topic} wants 0 streams: give an integer from 1 to 1024`));
  await usageError(() => c.streams(topic as never), /streams\(\) takes \{ topic: N \}, not a topic name/);
  await usageError(() => c.partitionsFor({ topic } as never), new RegExp(`partitionsFor\\(\\) takes the topic's name, partitionsFor\\("${topic}"\\)`));
  assert.equal(await c.partitionsFor(topic), [0, 1]);
});

test('the configuration: kafkajs names and near misses (ConfigError)', () => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ grupId: 'g' }, /unknown configuration option "grupId": did you mean groupId \(group\.id\)\?/],
    [{ brokers: ['a:1'] }, /"brokers": it is kafkajs's client option: set bootstrapServers \(bootstrap\.servers\)/],
    [{ fromBeginning: true }, /autoOffsetReset: 'earliest'/],
    [{ maxWaitTimeInMs: 100 }, /fetchMaxWaitMs \(fetch\.max\.wait\.ms\)/],
  ];
  for (const [extra, message] of cases) {
    assert.throws(
      () => createConsumer({ bootstrapServers: kafka.bootstrap, ...extra } as never),
      (e: unknown) => e instanceof ConfigError && message.test((e as Error).message),
      JSON.stringify(extra),
    );
  }
});

test.run();
