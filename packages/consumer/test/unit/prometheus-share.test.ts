// prometheusText on a share consumer's metrics(): its own counters and gauges, kwire_share_consumer_*
// by default, acknowledgements one sample per type, the labels on every sample.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { prometheusText, type ShareConsumerMetrics } from '../../src/index.js';

const metrics: ShareConsumerMetrics = {
  fetches: 12,
  recordsAcquired: 40,
  redeliveries: 3,
  acknowledged: { accept: 30, release: 5, reject: 2, gap: 1, renew: 4 },
  acknowledgementErrors: 1,
  lockExpired: 2,
  sessionResets: 0,
  assignedPartitions: 2,
  outstanding: 7,
  memberEpoch: 5,
  heartbeats: 9,
};

test('every figure, with HELP and TYPE, the labels escaped, acknowledgements by type', () => {
  const text = prometheusText(metrics, { service: 'jobs "eu"' });
  const lines = text.trim().split('\n');
  const sample = (line: string) => assert.ok(lines.includes(line), `${line} in:\n${text}`);
  sample('kwire_share_consumer_records_acquired_total{service="jobs \\"eu\\""} 40');
  sample('kwire_share_consumer_redeliveries_total{service="jobs \\"eu\\""} 3');
  for (const [type, n] of Object.entries(metrics.acknowledged)) sample(`kwire_share_consumer_acknowledgements_total{service="jobs \\"eu\\"",type="${type}"} ${n}`);
  sample('kwire_share_consumer_acknowledgement_errors_total{service="jobs \\"eu\\""} 1');
  sample('kwire_share_consumer_lock_expired_total{service="jobs \\"eu\\""} 2');
  sample('kwire_share_consumer_fetches_total{service="jobs \\"eu\\""} 12');
  sample('kwire_share_consumer_session_resets_total{service="jobs \\"eu\\""} 0');
  sample('kwire_share_consumer_heartbeats_total{service="jobs \\"eu\\""} 9');
  sample('kwire_share_consumer_outstanding_records{service="jobs \\"eu\\""} 7');
  sample('kwire_share_consumer_assigned_partitions{service="jobs \\"eu\\""} 2');
  sample('kwire_share_consumer_member_epoch{service="jobs \\"eu\\""} 5');
  sample('# TYPE kwire_share_consumer_acknowledgements_total counter');
  sample('# TYPE kwire_share_consumer_outstanding_records gauge');
  // Each metric once: a HELP and a TYPE line per name.
  const types = lines.filter((l) => l.startsWith('# TYPE ')).map((l) => l.split(' ')[2]);
  assert.is(new Set(types).size, types.length);
  assert.is(types.length, 11);
  for (const line of lines) assert.match(line, /^(# (HELP|TYPE) \S+ .+|[a-z_]+(\{[^}]*\})? -?[\d.e+-]+)$/, line);
  // No consumer figures for a share consumer.
  assert.not.match(text, /kwire_consumer_/);
});

test('a prefix of its own, and no labels', () => {
  const text = prometheusText(metrics, {}, 'jobs');
  assert.ok(text.split('\n').includes('jobs_records_acquired_total 40'), text);
  assert.ok(text.split('\n').includes('jobs_acknowledgements_total{type="accept"} 30'), text);
});

test.run();
