// Issue 13, observability, on a real broker: per-partition lag (currentLag, records-lag),
// consumed rates, commit and rebalance metrics, record latency split into its parts, the same
// published on node:diagnostics_channel, and the Prometheus text.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { prometheusText, type ConsumerBatch } from '../../src/index.js';
import { kafkaSuite } from '@kwire/testkit';

const run = Date.now().toString(36);
const env = kafkaSuite(test);

test('lag, rates, commits, rebalances and record latency, in metrics(), diagnostics_channel and Prometheus text', async () => {
  const topic = `metrics-${run}`;
  await env.producer.createTopics([topic]);
  await env.producer.send(
    topic,
    0,
    Array.from({ length: 100 }, (_, i) => ({ value: `m${i}` })),
  );
  const commits: unknown[] = [];
  const onCommit = (m: unknown) => commits.push(m);
  subscribe('kwire:consumer:commit', onCommit);
  try {
    const c = env.consumer({ groupId: `g-${topic}`, autoOffsetReset: 'earliest', fetchMaxWaitMs: 100, maxPollRecords: 10, autoCommitIntervalMs: 600_000 });
    await c.subscribe({ topics: [topic] });
    const it = c[Symbol.asyncIterator]();
    const first = (await it.next()).value as ConsumerBatch;
    assert.is(first.records.length, 10);
    const tp = { topic, partition: 0 };
    assert.is(c.currentLag(tp), 90n, 'currentLag: the high watermark minus the position');
    await new Promise((r) => setTimeout(r, 20));
    await it.next(); // the first batch is released: finished
    await c.commitSync();
    const m = c.metrics();
    assert.is(m.recordsLag[`${topic}-0`], 80);
    assert.is(m.recordsLagMax, 80);
    assert.is(m.recordsConsumed, 20);
    assert.ok(m.bytesFetched > 0);
    assert.ok(m.recordLatency.buffered.count >= 2 && m.recordLatency.brokerWait.count >= 2);
    assert.ok(m.recordLatency.processing.count >= 1 && m.recordLatency.processing.maxMs >= 15, `processing ${JSON.stringify(m.recordLatency.processing)}`);
    assert.ok(m.group, 'group metrics for a member');
    assert.is(m.group!.rebalances, 1);
    assert.is(m.group!.lastRebalanceReason, 'joining the group');
    assert.ok(m.group!.rebalanceLatency.count === 1 && m.group!.rebalanceLatency.maxMs > 0);
    assert.is(m.group!.commits, 1);
    assert.is(m.group!.commitFailures, 0);
    assert.ok(m.group!.sinceLastHeartbeatMs! < 10_000);
    assert.is(commits.length, 1, 'the commit was published on kwire:consumer:commit');
    assert.equal((commits[0] as { offsets: unknown[] }).offsets, [{ topic, partition: 0, offset: 10n, metadata: null }]);
    const text = prometheusText(m, { client: 'test' });
    assert.match(text, new RegExp(`^kwire_consumer_records_lag\\{client="test",topic="${topic}",partition="0"\\} 80$`, 'm'));
    assert.match(text, /^# TYPE kwire_consumer_commit_latency_ms summary$/m);
    assert.match(text, /^kwire_consumer_rebalances_total\{client="test"\} 1$/m);
    for (const line of text.trim().split('\n')) assert.match(line, /^(# (HELP|TYPE) \S+ .+|[a-z_]+(\{[^}]*\})? -?[\d.e+-]+)$/, line);
    await it.return?.();
  } finally {
    unsubscribe('kwire:consumer:commit', onCommit);
  }
});

test.run();
