// The share consumer's pure parts: its configuration (Java's names and defaults, the options that
// belong to the broker's group config refused), and how settled records become acknowledgement
// batches (runs, mixed types, gaps, expired locks). The protocol against a broker is in
// test/integration/share-group.test.ts.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigError } from '../../src/index.js';
import { resolveShareConfig } from '../../src/internals.js';
import { ACK, Acquisition } from '../../src/share/records.js';
import { takeSettled } from '../../src/share/fetcher.js';

test('config: Java 4.4 defaults, dotted names accepted', () => {
  const c = resolveShareConfig({ bootstrapServers: 'b:9092', groupId: 'g' });
  assert.is(c.shareAcknowledgementMode, 'implicit');
  assert.is(c.shareAcquireMode, 'batch_optimized');
  assert.is(c.maxPollRecords, 500);
  assert.is(c.fetchMaxBytes, 52_428_800);
  assert.is(c.fetchMaxWaitMs, 500);
  assert.is(c.fetchMinBytes, 1);
  assert.is(c.defaultApiTimeoutMs, 60_000);
  assert.is(c.closeTimeoutMs, 30_000);
  const j = resolveShareConfig({ 'bootstrap.servers': 'b:9092', 'group.id': 'g', 'share.acknowledgement.mode': 'explicit', 'share.acquire.mode': 'record_limit', 'max.poll.records': '10' });
  assert.is(j.shareAcknowledgementMode, 'explicit');
  assert.is(j.shareAcquireMode, 'record_limit');
  assert.is(j.maxPollRecords, 10);
});

test('config: group-side settings and bad values are refused with the reason', () => {
  assert.throws(
    () => resolveShareConfig({ bootstrapServers: 'b:9092' }),
    (e: unknown) => e instanceof ConfigError && /groupId \(group.id\) is required/.test((e as Error).message),
  );
  assert.throws(() => resolveShareConfig({ bootstrapServers: 'b:9092', groupId: 'g', autoOffsetReset: 'earliest' }), /share.auto.offset.reset.*kafka-configs/);
  assert.throws(() => resolveShareConfig({ bootstrapServers: 'b:9092', groupId: 'g', 'session.timeout.ms': 10_000 }), /not a share consumer option/);
  assert.throws(() => resolveShareConfig({ bootstrapServers: 'b:9092', groupId: 'g', shareAcknowledgementMode: 'auto' }), /implicit, explicit/);
  assert.throws(() => resolveShareConfig({ bootstrapServers: 'b:9092', groupId: 'g', nonsense: 1 }), /unknown configuration option/);
});

function acquisition(first: bigint, acquired: number[], span: number, deadline = Date.now() + 30_000): Acquisition {
  const d = new Acquisition('t\u00000', 't', 'AAAAAAAAAAAAAAAAAAAAAQ', 0, first, span, deadline, () => {});
  for (const i of acquired) d.acquireAt(i);
  return d;
}

test('acknowledgements: consecutive offsets of one type make one batch; mixed types one type per offset; unacquired offsets split', () => {
  // Offsets 100..109 acquired except 105 (someone else's).
  const d = acquisition(100n, [0, 1, 2, 3, 4, 6, 7, 8, 9], 10);
  assert.is(d.pending, 9);
  for (const o of [100n, 101n, 102n]) assert.ok(d.settle(o, ACK.accept));
  assert.ok(d.settle(103n, ACK.release));
  assert.ok(d.settle(104n, ACK.accept));
  assert.not.ok(d.settle(105n, ACK.accept), 'not acquired');
  assert.not.ok(d.settle(100n, ACK.reject), 'settled already');
  for (const o of [106n, 107n]) d.settle(o, ACK.reject);
  // 108 and 109 still held by the application: not sent, and they end the run.
  const taken = takeSettled(d, Date.now());
  assert.equal(taken.batches, [
    { firstOffset: 100n, lastOffset: 104n, acknowledgeTypes: [1, 1, 1, 2, 1] },
    { firstOffset: 106n, lastOffset: 107n, acknowledgeTypes: [3] },
  ]);
  assert.is(taken.records, 7);
  assert.equal(taken.byType, [0, 4, 1, 2, 0]);
  assert.is(d.pending, 2);
  assert.not.ok(d.done);
  assert.equal(takeSettled(d, Date.now()).batches, [], 'sent once only');
  assert.is(d.settleAll(ACK.gap), 2);
  assert.equal(takeSettled(d, Date.now()).batches, [{ firstOffset: 108n, lastOffset: 109n, acknowledgeTypes: [0] }]);
  assert.ok(d.done);
});

test('acknowledgements after the acquisition lock expired are counted, not sent (gaps are not records)', () => {
  const d = acquisition(0n, [0, 1, 2, 3], 4, Date.now() - 1);
  d.settle(0n, ACK.accept);
  d.settle(1n, ACK.reject);
  d.settle(2n, ACK.gap);
  const taken = takeSettled(d, Date.now());
  assert.equal(taken.batches, []);
  assert.is(taken.records, 0);
  assert.is(taken.lockExpired, 2);
  assert.ok(d.isPending(3n), "the unsettled one is still the application's to settle");
});

test.run();
