// Issue 13, the OpenTelemetry metrics bridge on a real broker: a group member's metrics as
// OpenTelemetry instruments, read back through the OpenTelemetry SDK's own MetricReader (the SDK is
// a devDependency; @opentelemetry/api an optional peer). A second consumer reads the same topic at
// the same time: the diagnostics_channel messages are the process's, and its batches must not show
// in the first consumer's histograms. A share group member (KIP-932) through the same bridge, with
// its own instruments (and its figures in Prometheus text).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MeterProvider, MetricReader, type MetricData } from '@opentelemetry/sdk-metrics';
import { bridgeOpenTelemetry, createConsumer, createShareConsumer, prometheusText, type ConsumerBatch } from '../../src/index.js';
import { kafkaSuite, until } from '@kwire/testkit';

const run = Date.now().toString(36);

class TestReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

const env = kafkaSuite(test);

async function collect(reader: MetricReader): Promise<Map<string, MetricData>> {
  const { resourceMetrics } = await reader.collect();
  return new Map(resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).map((m) => [m.descriptor.name, m]));
}

function point(metrics: Map<string, MetricData>, name: string, attributes: Record<string, string> = {}) {
  const m = metrics.get(name);
  assert.ok(m, `${name} published`);
  const p = m!.dataPoints.find((d) => Object.entries(attributes).every(([k, v]) => d.attributes[k] === v));
  assert.ok(p, `${name} has a point with ${JSON.stringify(attributes)}: ${JSON.stringify(m!.dataPoints.map((d) => d.attributes))}`);
  return p!;
}

test("a group member's lag, counts, commits, rebalances and latency histograms, through the SDK's reader; not another consumer's", async () => {
  const topic = `otel-${run}`;
  await env.producer.createTopics([topic]);
  await env.producer.send(
    topic,
    0,
    Array.from({ length: 30 }, (_, i) => ({ value: `o${i}` })),
  );
  const reader = new TestReader();
  const provider = new MeterProvider({ readers: [reader] });
  const groupId = `g-${topic}`;
  const a = createConsumer({ bootstrapServers: env.kafka.bootstrap, clientId: 'otel-a', groupId, autoOffsetReset: 'earliest', fetchMaxWaitMs: 100, maxPollRecords: 10, autoCommitIntervalMs: 600_000 });
  env.track(a);
  const bridge = bridgeOpenTelemetry(a, { meter: provider.getMeter('kwire-test'), attributes: { service: 'billing' } });
  const b = createConsumer({ bootstrapServers: env.kafka.bootstrap, clientId: 'otel-b', fetchMaxWaitMs: 100, maxPollRecords: 10 });
  env.track(b);
  try {
    await b.assign([{ topic, partition: 0, offset: 'earliest' }]);
    let seenByB = 0;
    for await (const batch of b) if ((seenByB += batch.records.length) >= 30) break;

    await a.subscribe({ topics: [topic] });
    const it = a[Symbol.asyncIterator]();
    let seen = 0;
    let last: ConsumerBatch | undefined;
    while (seen < 30) {
      last = (await it.next()).value as ConsumerBatch;
      seen += last.records.length;
    }
    last!.release();
    await a.commitSync();

    const m = a.metrics();
    const metrics = await collect(reader);
    const mine = { 'messaging.system': 'kafka', 'messaging.client.id': 'otel-a', 'messaging.consumer.group.name': groupId, service: 'billing' };
    assert.is(point(metrics, 'kwire.consumer.records.consumed', mine).value, 30);
    assert.is(metrics.get('kwire.consumer.records.consumed')!.descriptor.unit, '{record}');
    assert.is(point(metrics, 'kwire.consumer.bytes.fetched').value, m.bytesFetched);
    assert.ok(m.bytesFetched > 0);
    assert.is(point(metrics, 'kwire.consumer.records.lag', { 'messaging.destination.name': topic, 'messaging.destination.partition.id': '0' }).value, 0);
    assert.is(point(metrics, 'kwire.consumer.records.lag.max').value, 0);
    assert.is(point(metrics, 'kwire.consumer.assigned.partitions').value, 1);
    assert.is(point(metrics, 'kwire.consumer.commits').value, 1);
    assert.is(point(metrics, 'kwire.consumer.commit.failures').value, 0);
    assert.is(point(metrics, 'kwire.consumer.rebalances').value, 1);
    assert.ok((point(metrics, 'kwire.consumer.heartbeat.age').value as number) < 10_000);

    // Histograms: one measurement per batch this consumer delivered (B's batches left out).
    const batches = m.recordLatency.brokerWait.count;
    assert.ok(batches >= 3, `${batches} batches`);
    const brokerWait = point(metrics, 'kwire.consumer.record.broker_wait', { 'messaging.destination.name': topic, service: 'billing' }).value as { count: number; sum: number; max: number };
    assert.is(brokerWait.count, batches);
    assert.is(metrics.get('kwire.consumer.record.broker_wait')!.descriptor.unit, 'ms');
    assert.ok(Math.abs(brokerWait.max - m.recordLatency.brokerWait.maxMs) < 0.01, `max ${brokerWait.max} vs ${m.recordLatency.brokerWait.maxMs}`);
    assert.is((point(metrics, 'kwire.consumer.record.buffered').value as { count: number }).count, m.recordLatency.buffered.count);
    assert.is((point(metrics, 'kwire.consumer.record.processing').value as { count: number }).count, m.recordLatency.processing.count);
    const commit = point(metrics, 'kwire.consumer.commit.duration').value as { count: number; sum: number };
    assert.is(commit.count, 1);
    assert.ok(Math.abs(commit.sum - m.group!.commitLatency.avgMs) < 0.01, `commit ${commit.sum} ms vs ${m.group!.commitLatency.avgMs}`);
    assert.is((point(metrics, 'kwire.consumer.rebalance.duration').value as { count: number }).count, 1);
    assert.ok(!metrics.get('kwire.consumer.records.consumed')!.dataPoints.some((d) => d.attributes['messaging.client.id'] === 'otel-b'), 'the other consumer is not observed');

    // After close(), what the consumer does is no longer observed nor recorded.
    bridge.close();
    await env.producer.send(
      topic,
      0,
      Array.from({ length: 5 }, (_, i) => ({ value: `p${i}` })),
    );
    const more = (await it.next()).value as ConsumerBatch;
    assert.ok(more.records.length > 0);
    assert.ok(a.metrics().recordsConsumed > 30);
    const after = await collect(reader);
    const consumed = after.get('kwire.consumer.records.consumed')?.dataPoints.find((d) => d.attributes['messaging.client.id'] === 'otel-a');
    assert.ok(consumed === undefined || consumed.value === 30, `records.consumed after close(): ${consumed?.value}`);
    assert.is((point(after, 'kwire.consumer.record.broker_wait').value as { count: number }).count, batches, 'no histogram recording after close()');
    await it.return?.();
  } finally {
    bridge.close();
    await provider.shutdown();
  }
});

test("a share group member's acquisitions, acknowledgements by type, fetches and epoch, through the SDK's reader", async () => {
  const topic = `otel-share-${run}`;
  await env.producer.createTopics([topic]);
  const reader = new TestReader();
  const provider = new MeterProvider({ readers: [reader] });
  const groupId = `sg-${topic}`;
  const c = createShareConsumer({ bootstrapServers: env.kafka.bootstrap, clientId: 'otel-share', groupId, fetchMaxWaitMs: 100, maxPollRecords: 5 });
  env.track(c);
  const bridge = bridgeOpenTelemetry(c, { meter: provider.getMeter('kwire-test'), attributes: { service: 'jobs' } });
  try {
    await c.subscribe([topic]);
    await c.assigned(30_000);
    // A new share group starts at the latest offset when it first fetches a partition: produce
    // once the member has fetched (its second ShareFetch follows the first one's answer).
    await until('the member fetched once', () => c.metrics().fetches >= 2, 30_000);
    await env.producer.send(
      topic,
      0,
      Array.from({ length: 20 }, (_, i) => ({ value: `s${i}` })),
      { batchSize: 5 },
    );
    // Implicit mode: each batch is accepted when the loop asks for the next; the one the loop is
    // left on is released.
    let seen = 0;
    for await (const batch of c) if ((seen += batch.records.length) >= 20) break;
    await c.commitSync();

    const metrics = await collect(reader);
    const m = c.metrics();
    const mine = { 'messaging.system': 'kafka', 'messaging.client.id': 'otel-share', 'messaging.consumer.group.name': groupId, service: 'jobs' };
    assert.ok(m.recordsAcquired >= 20, `${m.recordsAcquired} acquired`);
    assert.is(point(metrics, 'kwire.share_consumer.records.acquired', mine).value, m.recordsAcquired);
    assert.is(metrics.get('kwire.share_consumer.records.acquired')!.descriptor.unit, '{record}');
    assert.ok(m.acknowledged.accept > 0 && m.acknowledged.release > 0, JSON.stringify(m.acknowledged));
    for (const type of ['accept', 'release', 'reject', 'gap', 'renew'] as const) {
      assert.is(point(metrics, 'kwire.share_consumer.acknowledgements', { ...mine, 'kwire.acknowledge.type': type }).value, m.acknowledged[type], type);
    }
    assert.is(point(metrics, 'kwire.share_consumer.redeliveries').value, m.redeliveries);
    assert.is(point(metrics, 'kwire.share_consumer.acknowledgement.errors').value, 0);
    assert.is(point(metrics, 'kwire.share_consumer.lock.expired').value, 0);
    assert.is(point(metrics, 'kwire.share_consumer.assigned.partitions').value, 1);
    assert.is(point(metrics, 'kwire.share_consumer.member.epoch').value, m.memberEpoch);
    assert.ok(m.memberEpoch > 0);
    // Still fetching and heartbeating in the background: between the collection and metrics().
    const fetches = point(metrics, 'kwire.share_consumer.fetches').value as number;
    assert.ok(fetches >= 2 && fetches <= m.fetches, `fetches ${fetches} of ${m.fetches}`);
    const heartbeats = point(metrics, 'kwire.share_consumer.heartbeats').value as number;
    assert.ok(heartbeats >= 1 && heartbeats <= m.heartbeats, `heartbeats ${heartbeats} of ${m.heartbeats}`);
    assert.ok(metrics.has('kwire.share_consumer.outstanding') && metrics.has('kwire.share_consumer.session.resets'));
    assert.ok(!metrics.has('kwire.consumer.records.consumed'), 'no consumer instruments for a share consumer');
    // The same figures in Prometheus text.
    const text = prometheusText(m, { service: 'jobs' }).split('\n');
    assert.ok(text.includes(`kwire_share_consumer_records_acquired_total{service="jobs"} ${m.recordsAcquired}`), text.join('\n'));
    assert.ok(text.includes(`kwire_share_consumer_acknowledgements_total{service="jobs",type="release"} ${m.acknowledged.release}`));
    assert.ok(text.includes(`kwire_share_consumer_member_epoch{service="jobs"} ${m.memberEpoch}`));

    // After close(), the member is no longer observed.
    bridge.close();
    await env.producer.send(topic, 0, [{ value: 'after' }]);
    for await (const batch of c) if (batch.records.length > 0) break;
    await c.commitSync();
    assert.ok(c.metrics().recordsAcquired > m.recordsAcquired);
    const after = await collect(reader);
    const acquired = after.get('kwire.share_consumer.records.acquired')?.dataPoints.find((d) => d.attributes['messaging.client.id'] === 'otel-share');
    assert.ok(acquired === undefined || acquired.value === m.recordsAcquired, `records.acquired after close(): ${acquired?.value}`);
  } finally {
    bridge.close();
    await provider.shutdown();
  }
});

test.run();
