// KIP-320 against the fake cluster: a truncated log (an unclean election staged in the fake) is
// detected through a Fetch's diverging epoch, through OffsetForLeaderEpoch after a leader change and
// when a committed offset with its epoch is restored; never skipped silently.
import { once } from 'node:events';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ApiKey } from '@kwire/protocol';
import { createConsumer, LogTruncationError, type Consumer, type ConsumedRecord, type PositionChange } from '../../src/index.js';
import { FakeCluster, settlesWithin } from '@kwire/testkit';

/** The next `n` records as "offset:epoch" (the fake's values end in -e<epoch>); each one finished. */
async function records(c: Consumer, n: number): Promise<string[]> {
  const out: string[] = [];
  const it = c.records<unknown, string>()[Symbol.asyncIterator]();
  while (out.length < n) {
    const next = await settlesWithin(it.next(), 15_000, `record ${out.length + 1} of ${n}`);
    if (next.done) break;
    const r = next.value as ConsumedRecord<unknown, string>;
    out.push(`${r.offset}:${r.value.slice(r.value.lastIndexOf('-') + 1)}`);
  }
  return out;
}

function consumer(cluster: FakeCluster, extra: Record<string, unknown> = {}): Consumer {
  return createConsumer({ bootstrapServers: cluster.bootstrap, fetchMaxWaitMs: 50, retryBackoffMs: 20, valueDeserializer: 'string', autoOffsetReset: 'earliest', ...extra });
}

const expected = (from: number, to: number, epoch: number) => Array.from({ length: to - from }, (_, i) => `${from + i}:e${epoch}`);

test('a Fetch answered with a diverging epoch moves the position to the divergence point and says so', async () => {
  const cluster = await FakeCluster.start();
  // The fetcher's currentLeaderEpoch stays the old one (no FENCED_LEADER_EPOCH): only the Fetch's
  // lastFetchedEpoch can reveal the truncation.
  cluster.fenceStaleEpochs = false;
  cluster.createTopic('t', 1, 10, 0);
  const c = consumer(cluster);
  try {
    await c.assign([{ topic: 't', partition: 0, offset: 0 }]);
    const it = c.records<unknown, string>()[Symbol.asyncIterator]();
    const first: string[] = [];
    while (first.length < 10) {
      const r = (await settlesWithin(it.next(), 15_000, 'a record')).value as ConsumedRecord<unknown, string>;
      first.push(`${r.offset}`);
    }
    const truncated = settlesWithin(once(c, 'log-truncation') as Promise<[PositionChange]>, 15_000, 'the log-truncation event');
    cluster.electUnclean('t', 0, 6);
    cluster.append('t', 0, 4);
    const [change] = await truncated;
    assert.equal([change.from, change.to, change.why], [10n, 6n, 'log-truncation']);
    const again: string[] = [];
    while (again.length < 4) {
      const r = (await settlesWithin(it.next(), 15_000, 'a record')).value as ConsumedRecord<unknown, string>;
      again.push(`${r.offset}:${r.value.slice(r.value.lastIndexOf('-') + 1)}`);
    }
    assert.equal(again, expected(6, 10, 1), 'the records the new leader holds at 6..9, read again');
    assert.is(c.metrics().truncations, 1);
    const fetches = cluster.broker
      .of(ApiKey.Fetch)
      .map((r) => (r.body as { topics: { partitions: { fetchOffset: bigint; lastFetchedEpoch: number }[] }[] }).topics[0]?.partitions[0])
      .filter((p) => p !== undefined);
    assert.ok(
      fetches.some((p) => p!.fetchOffset === 10n && p!.lastFetchedEpoch === 0),
      'Fetch carried the epoch of the last batch fetched',
    );
    assert.is(cluster.broker.of(ApiKey.OffsetForLeaderEpoch).length, 0, 'the Fetch alone told');
    await it.return?.();
  } finally {
    await c.close({ timeoutMs: 2_000 });
    await cluster.stop();
  }
});

test('a leader change is validated with OffsetForLeaderEpoch before fetching on', async () => {
  const cluster = await FakeCluster.start();
  cluster.createTopic('t', 1, 10, 3);
  const c = consumer(cluster);
  try {
    await c.assign([{ topic: 't', partition: 0, offset: 0 }]);
    assert.equal(await records(c, 10), expected(0, 10, 3));
    const truncated = settlesWithin(once(c, 'log-truncation') as Promise<[PositionChange]>, 15_000, 'the log-truncation event');
    cluster.electUnclean('t', 0, 7);
    cluster.append('t', 0, 3);
    const [change] = await truncated;
    assert.equal([change.from, change.to], [10n, 7n]);
    const validations = cluster.broker
      .of(ApiKey.OffsetForLeaderEpoch)
      .map((r) => (r.body as { topics: { partitions: { leaderEpoch: number; currentLeaderEpoch: number }[] }[] }).topics[0]!.partitions[0]!);
    assert.ok(
      validations.some((v) => v.leaderEpoch === 3 && v.currentLeaderEpoch === 4),
      `asked for the end of epoch 3 under leader epoch 4: ${JSON.stringify(validations)}`,
    );
    assert.equal(await records(c, 3), expected(7, 10, 4));
  } finally {
    await c.close({ timeoutMs: 2_000 });
    await cluster.stop();
  }
});

test('auto.offset.reset none: a truncation is a LogTruncationError naming the divergence point', async () => {
  const cluster = await FakeCluster.start();
  cluster.createTopic('t', 1, 10, 0);
  const c = consumer(cluster, { autoOffsetReset: 'none' });
  try {
    await c.assign([{ topic: 't', partition: 0, offset: 0 }]);
    assert.equal((await records(c, 10)).length, 10);
    cluster.electUnclean('t', 0, 4);
    let thrown: unknown;
    try {
      await settlesWithin(
        (async () => {
          for await (const batch of c) void batch;
        })(),
        15_000,
        'the LogTruncationError',
      );
    } catch (err) {
      thrown = err;
    }
    assert.instance(thrown, LogTruncationError);
    const e = thrown as LogTruncationError;
    assert.equal([e.topic, e.partition, e.offset, e.divergentOffset, e.code], ['t', 0, 10n, 4n, 'KWIRE_LOG_TRUNCATION']);
  } finally {
    await c.close({ timeoutMs: 2_000 });
    await cluster.stop();
  }
});

test('a committed offset restored with its leader epoch is validated: a truncation below it is found before the first fetch', async () => {
  const cluster = await FakeCluster.start();
  cluster.createTopic('t', 1, 10, 0);
  cluster.committed.set('t\u00000', { offset: 10n, leaderEpoch: 0, metadata: null });
  cluster.electUnclean('t', 0, 5);
  cluster.append('t', 0, 8);
  const c = consumer(cluster, { groupId: 'g', heartbeatIntervalMs: 200 });
  try {
    const truncated = settlesWithin(once(c, 'log-truncation') as Promise<[PositionChange]>, 15_000, 'the log-truncation event');
    await c.subscribe({ topics: ['t'] });
    const [change] = await truncated;
    assert.equal([change.from, change.to], [10n, 5n]);
    const fetchOffsets = cluster.broker.of(ApiKey.Fetch).map((r) => (r.body as { topics: { partitions: { fetchOffset: bigint }[] }[] }).topics[0]?.partitions[0]?.fetchOffset);
    assert.not.ok(fetchOffsets.includes(10n), 'never fetched from the committed offset the log no longer holds');
    assert.equal(await records(c, 8), expected(5, 13, 1));
  } finally {
    await c.close({ timeoutMs: 2_000 });
    await cluster.stop();
  }
});

test.run();
