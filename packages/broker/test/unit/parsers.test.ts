import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { atLeast, parseConsumerPerformance, parseKafkaVersion, parseProducerPerformance } from '../../src/index.js';

test('parses the summary line of ProducerPerformance (3.9 to 4.1 form)', () => {
  const out = [
    '50000 records sent, 10000.0 records/sec (0.95 MB/sec), 3.2 ms avg latency, 120.0 ms max latency.',
    '100000 records sent, 72621.641249 records/sec (6.93 MB/sec), 81.74 ms avg latency, 471.00 ms max latency, 46 ms 50th, 235 ms 95th, 284 ms 99th, 292 ms 99.9th.',
  ].join('\n');
  const r = parseProducerPerformance(out, 100000);
  assert.is(r.records, 100000);
  assert.is(r.recordsPerSec, 72621.641249);
  assert.is(r.mbPerSec, 6.93);
  assert.is(r.avgLatencyMs, 81.74);
  assert.is(r.maxLatencyMs, 471);
});

test('ProducerPerformance: a short count or a missing line is an error, not a result', () => {
  assert.throws(() => parseProducerPerformance('10 records sent, 1.0 records/sec (0.01 MB/sec), 1.0 ms avg latency, 2.0 ms max latency', 11), /sent 10 records, not 11/);
  assert.throws(() => parseProducerPerformance('org.apache.kafka.common.errors.TimeoutException', 1), /no summary line/);
  // What 4.4 prints when authentication fails: nothing sent, NaN latencies, exit code 0.
  const none = '0 records sent, 0.000000 records/sec (0.00 MB/sec), NaN ms avg latency, 0.00 ms max latency, 0 ms 50th, 0 ms 95th, 0 ms 99th, 0 ms 99.9th.';
  assert.throws(() => parseProducerPerformance(none, 10), /sent 0 records, not 10/);
});

test('parses the CSV line of ConsumerPerformance', () => {
  const out = [
    'start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec',
    '2026-11-30 03:53:21:171, 2026-11-30 03:53:22:389, 9.5367, 7.8298, 100000, 82101.8062, 846, 372, 25.6364, 268817.2043',
  ].join('\n');
  const r = parseConsumerPerformance(out);
  assert.is(r.records, 100000);
  assert.is(r.mb, 9.5367);
  assert.is(r.rebalanceMs, 846);
  assert.is(r.fetchMs, 372);
  assert.is(r.fetchRecordsPerSec, 268817.2043);
  assert.throws(() => parseConsumerPerformance('WARN nothing'), /no result line/);
  assert.throws(() => parseConsumerPerformance('data.consumed.in.MB\n1, 2, x'), /not as expected/);
});

test('Kafka versions', () => {
  const v = parseKafkaVersion('4.1.2');
  assert.equal([v.major, v.minor, v.patch], [4, 1, 2]);
  assert.ok(atLeast(v, 4, 1));
  assert.ok(atLeast(v, 3, 9));
  assert.not.ok(atLeast(v, 4, 2));
  assert.throws(() => parseKafkaVersion('4.1'), /not a Kafka release version/);
  assert.throws(() => parseKafkaVersion('latest'), /not a Kafka release version/);
});

test.run();
