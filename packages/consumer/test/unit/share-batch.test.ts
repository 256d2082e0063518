// A share consumer's batches and records, without a broker: ShareBatch is a class of its own
// (records acknowledged one by one, so no commit point: nothing to mark processed or give back),
// ShareRecord is the consumer's ConsumerRecord with a delivery count, and both print and release as
// the consumer's do. Built as the share fetcher builds them: wire batches read from encoded bytes.
import { inspect } from 'node:util';
import { BufferPool, encodeRecordBatch, readRecordBatches, RecordReleasedError } from '@kwire/protocol';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ConsumedRecord, ConsumerBatch, ConsumerRecord, ShareBatch, ShareRecord } from '../../src/index.js';
import { recordContext } from '../../src/records/index.js';
import { ACK, Acquisition } from '../../src/share/records.js';

/** A share batch of `n` string records from offset `first`, acquired with delivery count 2. */
function shareBatch(first: number, n: number): { batch: ShareBatch<Buffer, string>; acquisition: Acquisition; released: () => number } {
  const bytes = encodeRecordBatch(
    Array.from({ length: n }, (_, i) => ({ key: `k${first + i}`, value: `v${first + i}` })),
    { baseOffset: BigInt(first) },
  );
  const acquisition = new Acquisition('t\u00000', 't', 'AAAAAAAAAAAAAAAAAAAAAQ', 0, BigInt(first), n, Date.now() + 30_000, () => {});
  const context = recordContext('t', 0, 'buffer', 'string', false);
  const wire = readRecordBatches(bytes, { checkCrc: true, pool: new BufferPool() }).next()!;
  const records: ShareRecord<Buffer, string>[] = [];
  for (const r of wire.records()) {
    acquisition.acquireAt(r.offsetDelta);
    records.push(new ShareRecord<Buffer, string>(r, context, 2, acquisition));
  }
  let releases = 0;
  const batch = new ShareBatch('t', 0, records, () => {
    releases++;
    wire.release();
  });
  return { batch, acquisition, released: () => releases };
}

test('a share batch has no commit point: nothing to mark processed or give back', () => {
  const { batch } = shareBatch(10, 3);
  assert.not.ok(batch instanceof ConsumerBatch);
  for (const method of ['markProcessed', 'giveBack', 'countFinished', 'flushProgress', 'cutBefore', 'partlyProcessed', 'highWatermark', 'lag']) {
    assert.not.ok(method in batch, `ShareBatch has no ${method}`);
  }
});

test('a share batch: its records in order, their place, and a cursor over them', () => {
  const { batch } = shareBatch(10, 3);
  assert.is(batch.count, 3);
  assert.is(batch.firstOffset, 10n);
  assert.is(batch.lastOffset, 12n);
  assert.is(batch.nextOffset, 13n);
  assert.equal(
    [...batch].map((r) => [r.offset, r.key.toString(), r.value, r.deliveryCount]),
    [
      [10n, 'k10', 'v10', 2],
      [11n, 'k11', 'v11', 2],
      [12n, 'k12', 'v12', 2],
    ],
  );
  const cursor = batch.cursor();
  const seen: string[] = [];
  for (let r = cursor.next(); r !== null; r = cursor.next()) seen.push(`${r.offsetNumber}:${r.valueString()}`);
  assert.equal(seen, ['10:v10', '11:v11', '12:v12']);
});

test('a share batch is released once: after every retain is matched, and then its records are gone', () => {
  const { batch, released } = shareBatch(0, 2);
  const record = batch.records[0]!;
  batch.retain();
  batch.release();
  assert.is(released(), 0, 'still retained');
  assert.not.ok(batch.isReleased);
  batch.release();
  batch.release();
  assert.is(released(), 1, 'released once');
  assert.ok(batch.isReleased);
  assert.throws(
    () => record.key,
    (e: unknown) => e instanceof RecordReleasedError,
  );
  assert.throws(
    () => batch.cursor().next(),
    (e: unknown) => e instanceof RecordReleasedError,
  );
  // Its place is still known (read when it was made), never read from memory reused since.
  assert.equal(batch.toJSON(), { topic: 't', partition: 0, count: 2, firstOffset: '0', lastOffset: '1', nextOffset: '2', released: true });
});

test('a share batch and its records print as themselves', () => {
  const { batch } = shareBatch(5, 2);
  assert.equal(batch.toJSON(), { topic: 't', partition: 0, count: 2, firstOffset: '5', lastOffset: '6', nextOffset: '7' });
  assert.match(inspect(batch), /^ShareBatch \{/);
  assert.match(inspect(batch), /firstOffset: 5n/);
  assert.is(inspect(batch, { depth: -1 }), '[ShareBatch t-0 2 records to 7]');
  const shown = inspect(batch.records[0]);
  assert.match(shown, /^ShareRecord \{/);
  assert.match(shown, /deliveryCount: 2/);
  assert.is(JSON.parse(JSON.stringify(batch.records[1])).deliveryCount, 2);
});

test('a share record is a ConsumerRecord (and a ConsumedRecord, the old name); acknowledging settles its acquisition', () => {
  const { batch, acquisition } = shareBatch(0, 2);
  const [a, b] = batch.records;
  assert.ok(a instanceof ConsumerRecord);
  assert.ok(a instanceof ConsumedRecord);
  assert.is(ConsumedRecord, ConsumerRecord);
  assert.is(acquisition.pending, 2);
  assert.not.ok(a!.acknowledged);
  assert.ok(acquisition.settle(a!.offset, ACK.accept));
  assert.ok(a!.acknowledged);
  assert.not.ok(b!.acknowledged);
  assert.is(acquisition.pending, 1);
  assert.is(acquisition.settled, 1);
});

test.run();
