// run()'s record scheduler (maxConcurrency, ordering) on the fake cluster: per-key order, what a
// stuck record holds back (its key; its partition once its unfinished span reaches the bound),
// the finished records beyond the commit point in the commit's metadata and skipped after a
// restart, pause and seek in the middle of concurrent work, and close() with records in flight.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createConsumer, prometheusText, type Consumer, type ConsumerRecord } from '../../src/index.js';
import { decodeFinished, maxSpan } from '../../src/internals.js';
import { capturingLogger, FakeCluster, settlesWithin, until } from '@kwire/testkit';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function consumer(cluster: FakeCluster, extra: Record<string, unknown> = {}): Consumer<string, string> {
  return createConsumer<string, string>({
    bootstrapServers: cluster.bootstrap,
    groupId: 'g',
    autoOffsetReset: 'earliest',
    fetchMaxWaitMs: 50,
    heartbeatIntervalMs: 100,
    retryBackoffMs: 20,
    retryBackoffMaxMs: 50,
    enableAutoCommit: false,
    keyDeserializer: 'string',
    valueDeserializer: 'string',
    maxPollRecords: 50,
    ...extra,
  });
}

const offsetOf = (m: ConsumerRecord) => Number(m.offset);

test("ordering 'key': one record of a key at a time, in offset order; other keys go on", async () => {
  const cluster = await FakeCluster.start();
  cluster.createTopic('t', 2);
  for (const p of [0, 1]) cluster.append('t', p, 600, (o) => `k${Number(o) % 40}`);
  const c = consumer(cluster);
  try {
    await c.subscribe({ topics: ['t'] });
    const running = new Map<string, number>();
    const last = new Map<string, number>();
    let inFlight = 0;
    let maxInFlight = 0;
    let violations = 0;
    let n = 0;
    const run = c.run({
      maxConcurrency: 32,
      ordering: 'key',
      eachMessage: async ({ partition, message }) => {
        const key = `${partition}/${message.key}`;
        if (running.get(key)) violations++;
        if ((last.get(key) ?? -1) >= offsetOf(message)) violations++;
        last.set(key, offsetOf(message));
        running.set(key, 1);
        maxInFlight = Math.max(maxInFlight, ++inFlight);
        await sleep(Math.random() * 3);
        inFlight--;
        running.set(key, 0);
        n++;
      },
    });
    await until('every record', () => n === 1_200, 30_000, 10);
    assert.is(violations, 0, 'per key: one at a time, offsets increasing');
    assert.ok(maxInFlight > 16, `concurrent: ${maxInFlight} in flight at most`);
    const keyWait = c.metrics().processing.keyWait;
    assert.ok(keyWait.count > 20 && keyWait.p99Ms > 0, `records waited behind their key: ${JSON.stringify(keyWait)}`);
    assert.match(prometheusText(c.metrics()), /kwire_consumer_record_key_wait_ms_count [1-9]/);
    await c.commitSync();
    assert.is(cluster.committed.get('t\u00000')?.offset, 600n);
    assert.is(cluster.committed.get('t\u00000')?.metadata, null, 'nothing finished beyond the end');
    await c.close({ timeoutMs: 2_000 });
    await run;
  } finally {
    await c.close({ timeoutMs: 1_000 });
    await cluster.stop();
  }
});

test("ordering 'partition' (the default): never two records of a partition at once, partitions concurrently", async () => {
  const cluster = await FakeCluster.start();
  cluster.createTopic('t', 4, 100);
  const c = consumer(cluster);
  try {
    await c.subscribe({ topics: ['t'] });
    const busy = new Set<number>();
    let overlap = 0;
    let maxInFlight = 0;
    let n = 0;
    const next = [0, 0, 0, 0];
    let order = 0;
    const run = c.run({
      eachMessage: async ({ partition, message }) => {
        if (busy.has(partition)) overlap++;
        if (offsetOf(message) !== next[partition]) order++;
        next[partition] = offsetOf(message) + 1;
        busy.add(partition);
        maxInFlight = Math.max(maxInFlight, busy.size);
        await sleep(2);
        busy.delete(partition);
        n++;
      },
    });
    await until('every record', () => n === 400, 30_000, 10);
    assert.is(overlap, 0);
    assert.is(order, 0, 'in offset order per partition');
    assert.is(maxInFlight, 4, 'the four partitions at once');
    await c.close({ timeoutMs: 2_000 });
    await run;
  } finally {
    await c.close({ timeoutMs: 1_000 });
    await cluster.stop();
  }
});

test('a stuck record holds its key; its partition stops taking records at the span bound; the others go on', async () => {
  const cluster = await FakeCluster.start();
  cluster.createTopic('t', 2);
  for (const p of [0, 1]) cluster.append('t', p, 2_000, (o) => `k${Number(o) % 50}`);
  // The smallest metadata: a span of maxSpan(64) offsets.
  const c = consumer(cluster, { commitMetadataMaxBytes: 64 });
  const bound = maxSpan(64);
  try {
    await c.subscribe({ topics: ['t'] });
    let release!: () => void;
    const stuck = new Promise<void>((r) => (release = r));
    const seen = [new Set<number>(), new Set<number>()];
    let stuckKeyAfter = 0;
    const run = c.run({
      maxConcurrency: 64,
      ordering: 'key',
      eachMessage: async ({ partition, message }) => {
        seen[partition]!.add(offsetOf(message));
        if (partition === 0 && offsetOf(message) > 10 && message.key === 'k10' && seen[0]!.has(10) && !released) stuckKeyAfter++;
        if (partition === 0 && offsetOf(message) === 10) await stuck;
      },
    });
    let released = false;
    await until('partition 1 read to its end', () => seen[1]!.size === 2_000, 30_000, 10);
    await sleep(200);
    const max0 = Math.max(...seen[0]!);
    assert.ok(max0 - 10 < bound, `partition 0 stopped within the span bound: up to ${max0}, bound ${bound}`);
    assert.ok(max0 - 10 >= bound - 60, `and went on up to it: ${max0}`);
    assert.is(stuckKeyAfter, 0, 'no later record of the stuck key started');
    assert.is(c.metrics().processing.unfinishedSpan['t-0'], max0 - 10 + 1);
    await c.commitSync();
    const committed = cluster.committed.get('t\u00000')!;
    assert.is(committed.offset, 10n, 'the commit point stops at the stuck record');
    const decoded = decodeFinished(committed.metadata);
    assert.is(decoded.kind, 'finished');
    if (decoded.kind === 'finished') {
      assert.is(decoded.base, 10n);
      assert.equal(
        decoded.offsets.map(Number),
        [...seen[0]!].filter((o) => o > 10 && o % 50 !== 10).sort((a, b) => a - b),
        'the metadata lists every record finished beyond it (the stuck key waits)',
      );
    }
    assert.is(c.metrics().processing.commitMetadataBytes['t-0'], committed.metadata!.length);
    const text = prometheusText(c.metrics());
    assert.match(text, `kwire_consumer_unfinished_span{topic="t",partition="0"} ${max0 - 10 + 1}\n`);
    assert.match(text, `kwire_consumer_commit_metadata_bytes{topic="t",partition="0"} ${committed.metadata!.length}\n`);
    assert.match(text, /kwire_consumer_records_in_flight 1\n/);
    released = true;
    release();
    await until('partition 0 read to its end', () => seen[0]!.size === 2_000, 30_000, 10);
    await c.commitSync();
    assert.is(cluster.committed.get('t\u00000')?.offset, 2_000n);
    await c.close({ timeoutMs: 2_000 });
    await run;
  } finally {
    await c.close({ timeoutMs: 1_000 });
    await cluster.stop();
  }
});

test('restart: records the commit metadata marks finished are not handled again; foreign metadata is ignored and said once', async () => {
  const cluster = await FakeCluster.start();
  cluster.createTopic('t', 1);
  cluster.append('t', 0, 300, (o) => `k${Number(o) % 30}`);
  const a = consumer(cluster);
  const handledByA = new Set<number>();
  try {
    await a.subscribe({ topics: ['t'] });
    const runA = a.run({
      maxConcurrency: 16,
      ordering: 'key',
      eachMessage: async ({ message }) => {
        if (message.key === 'k5') await new Promise(() => {}); // never: k5 stays unfinished
        handledByA.add(offsetOf(message));
      },
    });
    await until('everything but k5', () => handledByA.size === 290, 30_000, 10);
    await a.commitSync();
    const committed = cluster.committed.get('t\u00000')!;
    assert.is(committed.offset, 5n);
    const result = await a.close({ timeoutMs: 1_000 });
    assert.equal(
      result.inFlight.map((r) => r.offset),
      [5n],
      'the hung record is reported',
    );
    await runA;
  } finally {
    await a.close({ timeoutMs: 500 });
  }
  const b = consumer(cluster);
  const handledByB: number[] = [];
  try {
    await b.subscribe({ topics: ['t'] });
    const runB = b.run({ maxConcurrency: 16, ordering: 'key', eachMessage: async ({ message }) => void handledByB.push(offsetOf(message)) });
    await until('the k5 records', () => handledByB.length >= 10, 30_000, 10);
    await sleep(200);
    assert.equal(
      handledByB.sort((x, y) => x - y),
      Array.from({ length: 10 }, (_, i) => 5 + 30 * i),
      'only the unfinished records come again',
    );
    assert.is(b.metrics().processing.alreadyFinished, 290 - 5);
    await b.commitSync();
    assert.is(cluster.committed.get('t\u00000')?.offset, 300n);
    await b.close({ timeoutMs: 1_000 });
    await runB;
  } finally {
    await b.close({ timeoutMs: 500 });
  }
  // Another client's metadata at offset 100: ignored (every record from 100 comes), said once.
  cluster.committed.set('t\u00000', { offset: 100n, leaderEpoch: -1, metadata: 'written by another client' });
  const { logger, lines } = capturingLogger();
  const d = consumer(cluster, { logger });
  const handledByD = new Set<number>();
  try {
    await d.subscribe({ topics: ['t'] });
    const runD = d.run({ maxConcurrency: 16, eachMessage: async ({ message }) => void handledByD.add(offsetOf(message)) });
    await until('records 100-299', () => handledByD.size === 200, 30_000, 10);
    assert.is(lines.filter((l) => l.includes('commit metadata not written by kwire: ignored')).length, 1);
    await d.close({ timeoutMs: 1_000 });
    await runD;
  } finally {
    await d.close({ timeoutMs: 500 });
    await cluster.stop();
  }
});

test('pause() in the middle of concurrent work: nothing more of it starts; after resume() only unfinished records come', async () => {
  const cluster = await FakeCluster.start();
  cluster.createTopic('t', 1);
  cluster.append('t', 0, 400, (o) => `k${Number(o) % 20}`);
  const c = consumer(cluster);
  try {
    await c.subscribe({ topics: ['t'] });
    const count = new Map<number, number>();
    let paused = false;
    let startedWhilePaused = 0;
    const run = c.run({
      maxConcurrency: 32,
      ordering: 'key',
      eachMessage: async ({ topic, partition, message }) => {
        if (paused) startedWhilePaused++;
        count.set(offsetOf(message), (count.get(offsetOf(message)) ?? 0) + 1);
        if (offsetOf(message) === 100 && !paused) {
          paused = true;
          c.pause([{ topic, partition }]);
        }
        await sleep(Math.random() * 4);
      },
    });
    await until('the pause', () => paused, 30_000, 10);
    await sleep(300);
    assert.is(startedWhilePaused, 0, 'nothing started after pause()');
    paused = false;
    c.resume([{ topic: 't', partition: 0 }]);
    await until('every record', () => count.size === 400, 30_000, 10);
    await sleep(100);
    assert.equal(
      [...count.values()].filter((n) => n > 1),
      [],
      'no record handled twice',
    );
    await c.close({ timeoutMs: 2_000 });
    await run;
  } finally {
    await c.close({ timeoutMs: 1_000 });
    await cluster.stop();
  }
});

test("a failing record retried holds its key only; 'skip' calls onSkip and finishes the record", async () => {
  const cluster = await FakeCluster.start();
  cluster.createTopic('t', 1);
  cluster.append('t', 0, 100, (o) => `k${Number(o) % 10}`);
  const c = consumer(cluster, { retryBackoffMs: 100, retryBackoffMaxMs: 100 });
  try {
    await c.subscribe({ topics: ['t'] });
    const order: number[] = [];
    let attempts = 0;
    const skipped: [number, string][] = [];
    const run = c.run({
      maxConcurrency: 8,
      ordering: 'key',
      onFailure: (err) => ((err as Error).message === 'skip me' ? 'skip' : 'retry'),
      onSkip: async (record, err) => void skipped.push([offsetOf(record), (err as Error).message]),
      eachMessage: async ({ message }) => {
        const o = offsetOf(message);
        if (o === 3 && ++attempts <= 2) throw new Error('try again');
        if (o === 7) throw new Error('skip me');
        order.push(o);
      },
    });
    await until('every record but the skipped one', () => order.length === 99, 30_000, 10);
    const at3 = order.indexOf(3);
    assert.ok(order.indexOf(4) < at3 && order.indexOf(50) < at3, 'other keys went on while record 3 waited for its retry');
    assert.ok(order.indexOf(13) > at3 && order.indexOf(93) > at3, 'its key waited for it');
    assert.equal(skipped, [[7, 'skip me']]);
    const p = c.metrics().processing;
    assert.is(p.retried, 2);
    assert.is(p.skipped, 1);
    await c.commitSync();
    assert.is(cluster.committed.get('t\u00000')?.offset, 100n, 'the skipped record counts as finished');
    await c.close({ timeoutMs: 2_000 });
    await run;
  } finally {
    await c.close({ timeoutMs: 1_000 });
    await cluster.stop();
  }
});

test("'stop': run() rejects, nothing more starts, and no commit passes the failed record", async () => {
  const cluster = await FakeCluster.start();
  cluster.createTopic('t', 1);
  cluster.append('t', 0, 200, (o) => `k${Number(o) % 10}`);
  const c = consumer(cluster);
  try {
    await c.subscribe({ topics: ['t'] });
    const boom = new Error('boom');
    let startedAfter = 0;
    let failed = false;
    const run = c.run({
      maxConcurrency: 8,
      ordering: 'key',
      onFailure: 'stop',
      eachMessage: async ({ message }) => {
        if (failed) startedAfter++;
        if (offsetOf(message) === 42) {
          failed = true;
          throw boom;
        }
        await sleep(1);
      },
    });
    const err = await settlesWithin(
      run.then(
        () => null,
        (e: unknown) => e,
      ),
      10_000,
      'run() to reject',
    );
    assert.is(err, boom);
    await sleep(100);
    assert.ok(startedAfter < 8, `at most the records already running went on: ${startedAfter}`);
    await c.commitSync();
    assert.ok(cluster.committed.get('t\u00000')!.offset <= 42n);
  } finally {
    await c.close({ timeoutMs: 1_000 });
    await cluster.stop();
  }
});

// Ordering 'partition' hands the partition's next record on in the same slot (dispatched before
// the freeze, asked again when it comes up); 'key' mostly dispatches afresh after it.
for (const ordering of ['key', 'partition'] as const)
  test(`a loop blocked past session.timeout.ms (a frozen process) starts nothing more until the loss is processed (ordering '${ordering}')`, async () => {
    // Found by the chaos test (seed 773442): a member frozen with records in hand woke, and the
    // records queued behind its finished handlers started before its membership saw the session
    // gone, below what the partitions' next owner had committed.
    const cluster = await FakeCluster.start();
    cluster.createTopic('t', 2);
    for (const p of [0, 1]) cluster.append('t', p, 400, (o) => `k${Number(o) % 20}`);
    const c = consumer(cluster, { sessionTimeoutMs: 600, heartbeatIntervalMs: 250 });
    const starts: number[] = [];
    let lostAt = 0;
    let wokeAt = 0;
    let frozen = false;
    c.on('lost', () => {
      lostAt ||= Date.now();
    });
    try {
      await c.subscribe({ topics: ['t'] });
      const run = c.run({
        maxConcurrency: 32,
        ordering,
        eachMessage: async ({ message }) => {
          starts.push(Date.now());
          if (!frozen && offsetOf(message) === 100) {
            // The whole process stops (as under SIGSTOP): no timer, no socket, no heartbeat.
            frozen = true;
            const until = Date.now() + 1_000;
            while (Date.now() < until) {}
            wokeAt = Date.now();
            return;
          }
          await sleep(1);
        },
      });
      await until('the loss, after the freeze', () => lostAt > 0, 10_000, 10);
      const between = starts.filter((t) => t >= wokeAt && t < lostAt).length;
      assert.is(between, 0, `handlers started between waking (${wokeAt}) and the loss (${lostAt}): ${between}`);
      // It goes on after the loss: the member joins again and reads from the committed offsets.
      const before = starts.length;
      await until('records again after the rejoin', () => starts.length > before + 50, 10_000, 10);
      await c.close({ timeoutMs: 2_000 });
      await run;
    } finally {
      await c.close({ timeoutMs: 1_000 });
      await cluster.stop();
    }
  });

test('close() waits for records in flight, then commits them', async () => {
  const cluster = await FakeCluster.start();
  cluster.createTopic('t', 1);
  cluster.append('t', 0, 1_000, (o) => `k${Number(o) % 100}`);
  const c = consumer(cluster, { enableAutoCommit: true });
  try {
    await c.subscribe({ topics: ['t'] });
    let started = 0;
    let finished = 0;
    const run = c.run({
      maxConcurrency: 32,
      ordering: 'key',
      eachMessage: async () => {
        started++;
        await sleep(300);
        finished++;
      },
    });
    await until('records in flight', () => started >= 32, 30_000, 10);
    const result = await c.close({ timeoutMs: 5_000 });
    await run;
    assert.equal(result.inFlight, []);
    assert.is(finished, started, 'every record started was finished');
    const committed = cluster.committed.get('t\u00000')!;
    const beyond = decodeFinished(committed.metadata);
    const count = Number(committed.offset) + (beyond.kind === 'finished' ? beyond.offsets.length : 0);
    assert.is(count, finished, 'the commit covers every finished record (offset + metadata)');
  } finally {
    await c.close({ timeoutMs: 1_000 });
    await cluster.stop();
  }
});

test.run();
