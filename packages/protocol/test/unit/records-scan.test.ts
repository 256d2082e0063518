import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { encodeRecordBatch, scanRecordBatches } from '../../src/index.js';

const rec = (n: number) => Array.from({ length: n }, (_, i) => ({ value: Buffer.from(`v${i}`) }));

test('scanRecordBatches: whole batches, their bytes, first and next offsets, without decoding', () => {
  const a = encodeRecordBatch(rec(3), { baseOffset: 10n, compression: 'lz4' });
  const b = encodeRecordBatch(rec(5), { baseOffset: 13n, partitionLeaderEpoch: 7 });
  const both = Buffer.concat([a, b]);
  assert.equal(scanRecordBatches(both), { batches: 2, wholeBytes: both.length, firstOffset: 10n, nextOffset: 18n, lastLeaderEpoch: 7 });
  // A partial trailing batch (a broker's cut) is not counted.
  for (const cut of [1, 11, 12, 30, b.length - 1]) {
    const s = scanRecordBatches(both.subarray(0, a.length + cut));
    assert.equal(s, { batches: 1, wholeBytes: a.length, firstOffset: 10n, nextOffset: 13n, lastLeaderEpoch: -1 }, `cut ${cut} bytes into the second batch`);
  }
  assert.equal(scanRecordBatches(Buffer.alloc(0)), { batches: 0, wholeBytes: 0, firstOffset: -1n, nextOffset: -1n, lastLeaderEpoch: -1 });
});

test('scanRecordBatches stops at anything that is not a v2 batch header, for the reader to report', () => {
  const a = encodeRecordBatch(rec(2), { baseOffset: 0n });
  const legacy = Buffer.from(a);
  legacy[16] = 1; // magic 1
  assert.is(scanRecordBatches(Buffer.concat([a, legacy])).batches, 1);
  const badLength = Buffer.from(a);
  badLength.writeInt32BE(10, 8);
  assert.is(scanRecordBatches(badLength).batches, 0);
});

test.run();
