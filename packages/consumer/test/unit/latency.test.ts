// The fetch latency window: averages and maxima over every answer, percentiles over the last 1024.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { LatencyWindow } from '../../src/internals.js';

test('before any answer every figure is 0', () => {
  assert.equal(new LatencyWindow().summary(), { count: 0, avgMs: 0, maxMs: 0, p50Ms: 0, p90Ms: 0, p99Ms: 0, window: 0 });
});

test('nearest-rank percentiles, average and maximum of 1..100 ms', () => {
  const w = new LatencyWindow();
  // Shuffled, so that the summary cannot rely on arrival order.
  const values = Array.from({ length: 100 }, (_, i) => ((i * 37) % 100) + 1);
  for (const v of values) w.record(v);
  assert.equal(w.summary(), { count: 100, avgMs: 50.5, maxMs: 100, p50Ms: 50, p90Ms: 90, p99Ms: 99, window: 100 });
});

test('percentiles follow the most recent 1024 answers; count, average and maximum cover all', () => {
  const w = new LatencyWindow();
  for (let i = 0; i < 1000; i++) w.record(500); // an old slow spell
  for (let i = 0; i < 1024; i++) w.record(1 + (i % 4)); // then 1, 2, 3, 4 ms over and over
  const s = w.summary();
  assert.is(s.count, 2024);
  assert.is(s.window, 1024);
  assert.is(s.maxMs, 500);
  assert.is(s.avgMs, Math.round(((1000 * 500 + 256 * (1 + 2 + 3 + 4)) / 2024) * 1000) / 1000);
  assert.is(s.p50Ms, 2);
  assert.is(s.p90Ms, 4);
  assert.is(s.p99Ms, 4);
});

test('fractions of a millisecond are kept to the microsecond', () => {
  const w = new LatencyWindow();
  w.record(0.5554);
  w.record(0.4441);
  const s = w.summary();
  assert.is(s.p50Ms, 0.444);
  assert.is(s.maxMs, 0.555);
  assert.is(s.avgMs, 0.5);
});

test.run();
