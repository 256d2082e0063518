// The consumer's data plane against a real broker, with manual assignment: every codec, keys,
// headers and tombstones, streams, seek, pause/resume, offset resets, callbacks, and the lifetime
// rule of zero-copy records.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTopic, producerPerformance } from '@kwire/broker';
import { isKafkaError, OffsetOutOfRangeError, type Consumer, type ConsumerBatch, type KeptRecord } from '../../src/index.js';
import { kafkaSuite, until } from '@kwire/testkit';

const run = Date.now().toString(36);

const env = kafkaSuite(test, { consumer: { autoOffsetReset: 'earliest', fetchMaxWaitMs: 100 } });

function consumer(extra: Record<string, unknown> = {}): Consumer {
  return env.consumer(extra);
}

/** Reads `n` records from the consumer's default stream (or fails after `ms`). */
async function take<T = KeptRecord>(c: AsyncIterable<ConsumerBatch>, n: number, ms = 30_000, keep: (b: ConsumerBatch) => T[] = (b) => b.records.map((r) => r.keep()) as T[]): Promise<T[]> {
  const out: T[] = [];
  const it = c[Symbol.asyncIterator]();
  // The deadline also ends a wait for a batch that never comes (lost records fail, not hang).
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'expired'>((resolve) => (timer = setTimeout(() => resolve('expired'), ms)));
  try {
    while (out.length < n) {
      const next = await Promise.race([it.next(), expired]);
      if (next === 'expired' || next.done) break;
      out.push(...keep(next.value));
      // Kept (copied) and counted: finished. Left unreleased, the loop's end would give it back.
      if (out.length >= n) next.value.release();
    }
  } finally {
    clearTimeout(timer);
    await it.return?.();
  }
  return out;
}

for (const compression of ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const) {
  test(`${compression}: every record the Java producer wrote, once, in order per partition`, async () => {
    const topic = `codec-${compression}-${run}`;
    await createTopic(env.kafka, { topic, partitions: 3 });
    await producerPerformance(env.kafka, { topic, numRecords: 3_000, recordSize: 120, compression });
    const c = consumer();
    await c.assign([0, 1, 2].map((partition) => ({ topic, partition })));
    const records = await take(c, 3_000);
    assert.is(records.length, 3_000);
    const next = new Map<number, bigint>();
    for (const r of records) {
      assert.ok(/^[A-Z]{120}$/.test((r.value as Buffer).toString()), 'a ProducerPerformance value');
      assert.is(r.offset, next.get(r.partition) ?? 0n, `contiguous offsets in partition ${r.partition}`);
      next.set(r.partition, r.offset + 1n);
    }
    await c.close();
  });
}

test('keys, headers, tombstones and timestamps come through as written', async () => {
  const topic = `shapes-${run}`;
  await createTopic(env.kafka, { topic, partitions: 1 });
  const ts = 1_700_000_000_000;
  await env.producer.send(
    topic,
    0,
    [
      {
        key: Buffer.from('k1'),
        value: Buffer.from('v1'),
        timestamp: ts,
        headers: [
          { key: 'trace', value: Buffer.from('abc') },
          { key: 'empty', value: null },
        ],
      },
      { key: Buffer.from('k1'), value: null, timestamp: ts + 1 },
      { key: null, value: Buffer.from('ü€ utf-8'), timestamp: ts + 2 },
    ],
    { compression: 'zstd' },
  );
  const c = consumer({ keyDeserializer: 'string', valueDeserializer: 'string' });
  await c.assign([{ topic, partition: 0 }]);
  const [a, b, d] = await take(c, 3);
  assert.is(a!.key, 'k1');
  assert.is(a!.value, 'v1');
  assert.is(a!.timestamp, ts);
  assert.equal(
    a!.headers.map((h) => [h.key, h.value?.toString() ?? null]),
    [
      ['trace', 'abc'],
      ['empty', null],
    ],
  );
  assert.is(b!.key, 'k1');
  assert.is(b!.value, null, 'a tombstone');
  assert.is(d!.key, null);
  assert.is(d!.value, 'ü€ utf-8');
  assert.equal([a!.offset, b!.offset, d!.offset], [0n, 1n, 2n]);
});

test("streams: a topic's partitions spread over N streams, each partition in exactly one", async () => {
  const topic = `streams-${run}`;
  await createTopic(env.kafka, { topic, partitions: 6 });
  for (let p = 0; p < 6; p++)
    await env.producer.send(
      topic,
      p,
      Array.from({ length: 50 }, (_, i) => ({ value: Buffer.from(`${p}:${i}`) })),
    );
  const c = consumer();
  await c.assign(Array.from({ length: 6 }, (_, partition) => ({ topic, partition })));
  const { [topic]: streams } = c.streams({ [topic]: 3 });
  assert.is(streams!.length, 3);
  const seen = await Promise.all(streams!.map((s) => take(s, 100, 20_000)));
  for (let i = 0; i < 3; i++) {
    const partitions = new Set(seen[i]!.map((r) => r.partition));
    assert.equal([...partitions].sort(), [i, i + 3], `stream ${i} gets partitions ${i} and ${i + 3}`);
    assert.is(seen[i]!.length, 100);
    for (const r of seen[i]!) assert.is((r.value as Buffer).toString(), `${r.partition}:${r.offset}`);
  }
});

test('seek, pause and resume', async () => {
  const topic = `seek-${run}`;
  await createTopic(env.kafka, { topic, partitions: 2 });
  await env.producer.send(
    topic,
    0,
    Array.from({ length: 100 }, (_, i) => ({ value: Buffer.from(`a${i}`) })),
  );
  await env.producer.send(
    topic,
    1,
    Array.from({ length: 100 }, (_, i) => ({ value: Buffer.from(`b${i}`) })),
  );
  const c = consumer({ maxPollRecords: 10 });
  await c.assign([
    { topic, partition: 0, offset: 90 },
    { topic, partition: 1, offset: 'latest' },
  ]);
  const first = await take(c, 10);
  assert.equal(
    first.map((r) => `${r.partition}:${r.offset}`),
    Array.from({ length: 10 }, (_, i) => `0:${90 + i}`),
    'partition 0 from 90; partition 1 from its end',
  );
  c.seek({ topic, partition: 1 }, 95n);
  c.pause([{ topic, partition: 0 }]);
  c.seek({ topic, partition: 0 }, 0n);
  const second = await take(c, 5);
  assert.ok(
    second.every((r) => r.partition === 1),
    'a paused partition delivers nothing',
  );
  assert.equal(
    second.map((r) => r.offset),
    [95n, 96n, 97n, 98n, 99n],
  );
  c.resume([{ topic, partition: 0 }]);
  const third = await take(c, 10);
  assert.equal(
    third.map((r) => `${r.partition}:${r.offset}`),
    Array.from({ length: 10 }, (_, i) => `0:${i}`),
    'resumed from the sought offset',
  );
  assert.is(c.position({ topic, partition: 0 }), 10n);
});

test('OFFSET_OUT_OF_RANGE: reset to earliest, or an OffsetOutOfRangeError with auto.offset.reset=none', async () => {
  const topic = `range-${run}`;
  await createTopic(env.kafka, { topic, partitions: 1 });
  await env.producer.send(
    topic,
    0,
    Array.from({ length: 20 }, (_, i) => ({ value: Buffer.from(`r${i}`) })),
  );
  const c = consumer();
  await c.assign([{ topic, partition: 0, offset: 1_000 }]);
  const records = await take(c, 20);
  assert.is(records[0]!.offset, 0n, 'reset to the earliest offset');
  assert.is(records.length, 20);
  const strict = consumer({ autoOffsetReset: 'none' });
  await strict.assign([{ topic, partition: 0, offset: 1_000 }]);
  try {
    await take(strict, 1, 10_000);
    assert.unreachable('expected an error');
  } catch (err) {
    assert.ok(err instanceof OffsetOutOfRangeError, String(err));
    assert.ok(isKafkaError(err));
    assert.is((err as OffsetOutOfRangeError).offset, 1_000n);
  }
  // Seeking to a valid offset clears it.
  strict.seek({ topic, partition: 0 }, 18n);
  const after = await take(strict, 2);
  assert.equal(
    after.map((r) => r.offset),
    [18n, 19n],
  );
});

test('eachMessage and eachBatch: batches are released when the callback settles', async () => {
  const topic = `callbacks-${run}`;
  await createTopic(env.kafka, { topic, partitions: 2 });
  for (const p of [0, 1])
    await env.producer.send(
      topic,
      p,
      Array.from({ length: 30 }, (_, i) => ({ value: Buffer.from(`${p}-${i}`) })),
    );
  const c = consumer({ valueDeserializer: 'string' });
  await c.assign([0, 1].map((partition) => ({ topic, partition })));
  const seen: string[] = [];
  let held: ConsumerBatch | undefined;
  const done = c.run({
    eachBatch: async ({ batch }) => {
      held ??= batch;
      for (const r of batch) seen.push(r.value as string);
      if (seen.length >= 60) void c.close();
    },
  });
  await done;
  assert.is(seen.length, 60);
  assert.is(new Set(seen).size, 60);
  assert.ok(held!.isReleased, 'released after the callback');
  assert.throws(() => (held!.records[0]!.wire.value as Buffer).length, /released/);
});

test('a kept record outlives its batch; a released record refuses to be read', async () => {
  const topic = `lifetime-${run}`;
  await createTopic(env.kafka, { topic, partitions: 1 });
  await env.producer.send(topic, 0, [{ value: Buffer.from('keep me') }, { value: Buffer.from('let me go') }], { compression: 'lz4' });
  const c = consumer();
  await c.assign([{ topic, partition: 0 }]);
  const it = c[Symbol.asyncIterator]();
  const { value: batch } = await it.next();
  const kept = batch!.records[0]!.keep();
  const live = batch!.records[1]!;
  assert.is((live.value as Buffer).toString(), 'let me go');
  await it.return!();
  assert.ok(batch!.isReleased);
  assert.is((kept.value as Buffer).toString(), 'keep me', 'the copy survives');
  assert.throws(() => live.wire.value, /released/);
});

test('pooled memory is reused: large fetch frames and decompression buffers come back from the pool', async () => {
  const topic = `pool-${run}`;
  await createTopic(env.kafka, { topic, partitions: 1 });
  await producerPerformance(env.kafka, { topic, numRecords: 20_000, recordSize: 1_000, compression: 'lz4' });
  const c = consumer({ maxPartitionFetchBytes: 256 * 1024 });
  await c.assign([{ topic, partition: 0 }]);
  const records = await take(c, 20_000, 60_000, (b) => b.records.map(() => 1));
  assert.is(records.length, 20_000);
  const { pool, fetches } = c.metrics();
  assert.ok(fetches > 10, `${fetches} fetches`);
  assert.ok(pool.hits > pool.misses, `pool hits ${pool.hits} vs misses ${pool.misses}: buffers are reused`);
  await c.close();
  assert.is(c.metrics().bufferedBytes, 0, 'nothing left buffered after close');
});

test('fetch latency: every answered Fetch is measured, and an idle partition shows the long poll', async () => {
  const topic = `latency-${run}`;
  const empty = `latency-idle-${run}`;
  await createTopic(env.kafka, { topic, partitions: 1 });
  await createTopic(env.kafka, { topic: empty, partitions: 1 });
  await producerPerformance(env.kafka, { topic, numRecords: 5_000, recordSize: 1_000 });
  // With data waiting, each answer comes back at once.
  const busy = consumer({ maxPartitionFetchBytes: 64 * 1024 });
  await busy.assign([{ topic, partition: 0 }]);
  const got = await take(busy, 2_500, 60_000, (b) => b.records.map(() => 1));
  assert.ok(got.length >= 2_500, `${got.length} records`);
  const fast = busy.metrics().fetchLatency;
  assert.ok(fast.count >= 10 && fast.count <= busy.metrics().fetches, `${fast.count} answers measured of ${busy.metrics().fetches} sent`);
  assert.ok(fast.p50Ms > 0 && fast.p50Ms <= fast.p90Ms && fast.p90Ms <= fast.p99Ms && fast.p99Ms <= fast.maxMs, JSON.stringify(fast));
  // Well under the 500 ms long poll an empty answer would take (the bound leaves room for a slow machine).
  assert.ok(fast.p50Ms < 250, `answers with data waiting come back at once: p50 ${fast.p50Ms} ms`);
  // At its end, each Fetch waits fetch.max.wait.ms on the broker before an empty answer.
  const idle = consumer({ fetchMaxWaitMs: 200 });
  await idle.assign([{ topic: empty, partition: 0 }]);
  await until('three long polls to be answered', () => idle.metrics().fetchLatency.count >= 3, 20_000);
  const slow = idle.metrics().fetchLatency;
  assert.ok(slow.count >= 3, `${slow.count} long polls answered in 20 s`);
  assert.ok(slow.p50Ms >= 180 && slow.p50Ms < 1_000, `long poll of 200 ms measured as ${slow.p50Ms} ms`);
});

test('with a small fetchMaxBytes the pool still keeps its frames: no fresh allocation per Fetch', async () => {
  // maxBufferedBytes defaults to 2 x fetchMaxBytes (1 MiB here), a frame just over 512 KiB takes
  // a 1 MiB buffer, and each partition holds a 256 KiB decompression buffer: a pool that kept only
  // maxBufferedBytes dropped most of what came back (43 allocations for 50 fetches; now 7).
  const topic = `small-fetch-${run}`;
  await createTopic(env.kafka, { topic, partitions: 4 });
  await producerPerformance(env.kafka, { topic, numRecords: 20_000, recordSize: 1_000, compression: 'lz4', props: { 'batch.size': 262_144, 'linger.ms': 20 } });
  const c = consumer({ fetchMaxBytes: 512 * 1024, maxPartitionFetchBytes: 256 * 1024 });
  // The pool is the process's (shared by the consumers of this file): count this consumer's part.
  const before = c.metrics().pool;
  await c.assign([0, 1, 2, 3].map((partition) => ({ topic, partition })));
  const records = await take(c, 20_000, 60_000, (b) => b.records.map(() => 1));
  assert.is(records.length, 20_000);
  const { pool, fetches } = c.metrics();
  const misses = pool.misses - before.misses;
  const dropped = pool.dropped - before.dropped;
  assert.ok(fetches > 30, `${fetches} fetches`);
  assert.ok(misses * 4 < fetches, `${misses} allocations for ${fetches} fetches (${dropped} released buffers dropped)`);
  await c.close();
});

test('a partition held back by its buffer is not kept out by a long wait on partitions at their end', async () => {
  // Partition 0 is read to its end at once; partition 1's buffer (one fetch's worth) fills on every
  // Fetch. The next Fetch can only carry partition 0, which has nothing new: with the full
  // fetch.max.wait.ms (30 s here) partition 1 would wait that long after draining, each time.
  const topic = `held-back-${run}`;
  await createTopic(env.kafka, { topic, partitions: 2 });
  await env.producer.send(
    topic,
    0,
    Array.from({ length: 10 }, (_, i) => ({ value: Buffer.from(`end ${i}`) })),
  );
  const value = Buffer.alloc(1_000, 0x61);
  for (let chunk = 0; chunk < 4; chunk++)
    await env.producer.send(
      topic,
      1,
      Array.from({ length: 400 }, () => ({ value })),
    );
  const c = consumer({ fetchMaxWaitMs: 30_000, maxPartitionFetchBytes: 128 * 1024, maxBufferedBytesPerPartition: 128 * 1024 });
  await c.assign([0, 1].map((partition) => ({ topic, partition })));
  const started = Date.now();
  const records = await take(c, 1_610, 120_000, (b) => b.records.map(() => 1));
  const seconds = (Date.now() - started) / 1000;
  assert.is(records.length, 1_610);
  assert.ok(seconds < 15, `read in ${seconds} s: a wait of fetch.max.wait.ms (30 s) held partition 1 back`);
  await c.close();
});

test('fetching overlaps the application, and a batch held across awaits keeps its bytes', async () => {
  const topic = `overlap-${run}`;
  await createTopic(env.kafka, { topic, partitions: 1 });
  await producerPerformance(env.kafka, { topic, numRecords: 400, recordSize: 10_240 });
  // The reference: values copied out as soon as each batch arrives.
  const first = consumer({ maxPartitionFetchBytes: 256 * 1024 });
  await first.assign([{ topic, partition: 0 }]);
  const expected = (await take(first, 400, 60_000, (b) => b.records.map((r) => Buffer.from(r.value as Buffer)))).map((v) => v.toString('latin1'));
  assert.is(expected.length, 400);
  await first.close();

  const c = consumer({ maxPartitionFetchBytes: 256 * 1024 });
  await c.assign([{ topic, partition: 0 }]);
  let seen = 0;
  let fetchesAtFirstBatch = -1;
  for await (const batch of c) {
    if (fetchesAtFirstBatch < 0) fetchesAtFirstBatch = c.metrics().fetches;
    // An application that awaits with the batch in hand: the event loop runs, the next responses
    // arrive meanwhile (the fetcher sent the next Fetch before this batch was handed over).
    await new Promise((resolve) => setTimeout(resolve, 2));
    for (const r of batch.records) {
      assert.is((r.value as Buffer).toString('latin1'), expected[Number(r.offset)], `offset ${r.offset} unchanged after the await`);
      seen++;
    }
    if (seen >= 400) break;
  }
  assert.is(seen, 400);
  assert.ok(fetchesAtFirstBatch >= 2, `the next Fetch was sent before the first batch reached the application (${fetchesAtFirstBatch} fetches by then)`);
  await c.close();
});

test('interceptors see each batch before the application and may filter it; onCommit is not called without a group', async () => {
  const topic = `intercept-${run}`;
  await createTopic(env.kafka, { topic, partitions: 1 });
  await env.producer.send(
    topic,
    0,
    Array.from({ length: 10 }, (_, i) => ({ value: Buffer.from(`v${i}`) })),
  );
  const seenByInterceptor: number[] = [];
  let closed = false;
  const c = consumer({
    valueDeserializer: 'string',
    interceptors: [
      {
        onConsume: (records: readonly unknown[]) => {
          const rs = records as { offset: bigint; value: string }[];
          seenByInterceptor.push(...rs.map((r) => Number(r.offset)));
          return rs.filter((r) => Number(r.offset) % 2 === 0);
        },
        close: () => (closed = true),
      },
    ],
  });
  await c.assign([{ topic, partition: 0 }]);
  const got = await take(c, 5);
  assert.equal(
    got.map((r) => Number(r.offset)),
    [0, 2, 4, 6, 8],
    "the interceptor's filtered list is what the application gets",
  );
  assert.ok(seenByInterceptor.length >= 9);
  await c.close();
  assert.ok(closed, 'interceptors are closed with the consumer');
});

test.run();
