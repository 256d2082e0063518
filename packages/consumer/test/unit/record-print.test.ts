// How records and batches print (issue 29): util.inspect / console.log show a record's place,
// timestamp, key, value (long ones cut, with their size) and headers, never the batch's memory;
// JSON.stringify writes the RecordJson shape; released and kept records print too. Records are
// made as the fetcher makes them (FetchedPartition over encoded wire batches).
import { inspect } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { encodeRecordBatch, type RecordInput } from '@kwire/protocol';
import type { Deserializer } from '../../src/config.js';
import { bytesToJson } from '../../src/record-json.js';
import { recordContext, type ConsumerRecord, type ConsumerBatch } from '../../src/records/index.js';
import { fetchedFrom } from './fetched-fixture.js';

const T0 = Date.UTC(2026, 11, 4, 10, 0, 0);

/** One delivered batch of these records (offsets from `base`), read with these deserializers. */
function batchOf(records: RecordInput[], opts: { key?: Deserializer; value?: Deserializer; base?: number; leaderEpoch?: number } = {}): ConsumerBatch {
  const base = opts.base ?? 0;
  const bytes = encodeRecordBatch(records, { baseOffset: base, partitionLeaderEpoch: opts.leaderEpoch ?? 7, now: T0 });
  const context = recordContext('orders', 3, opts.key ?? 'buffer', opts.value ?? 'buffer', true);
  const { data } = fetchedFrom(bytes, { topic: 'orders', partition: 3, position: BigInt(base), highWatermark: BigInt(base + records.length), context });
  const batch = data.next(500);
  assert.ok(batch, 'a batch');
  return batch as ConsumerBatch;
}

function first(records: RecordInput[], opts?: Parameters<typeof batchOf>[1]): { batch: ConsumerBatch; record: ConsumerRecord } {
  const batch = batchOf(records, opts);
  return { batch, record: batch.records[0]! };
}

const plain = (x: unknown) => inspect(x, { colors: false });

test('inspect shows topic, partition, offset, timestamp, key, value and headers', () => {
  const { record } = first(
    [
      {
        key: 'customer-1',
        value: '{"id":1}',
        headers: [
          { key: 'trace', value: 'abc' },
          { key: 'empty', value: null },
        ],
        timestamp: T0,
      },
    ],
    { base: 41 },
  );
  const out = plain(record);
  assert.match(out, /^ConsumerRecord \{/);
  assert.match(out, /topic: 'orders'/);
  assert.match(out, /partition: 3/);
  assert.match(out, /offset: 41n/);
  assert.match(out, new RegExp(`timestamp: ${T0} \\(2026-12-04T10:00:00.000Z\\)`));
  // Bytes (no deserializer): as text when they are UTF-8, marked as the Buffer they are.
  assert.match(out, /key: <Buffer 'customer-1'>/);
  assert.match(out, /value: <Buffer '\{"id":1\}'>/);
  assert.match(out, /\{ key: 'trace', value: <Buffer 'abc'> \}/);
  assert.match(out, /\{ key: 'empty', value: null \}/);
  assert.match(out, /leaderEpoch: 7/);
});

test('inspect never shows the internals (wireBatch, context, the pooled ArrayBuffer)', () => {
  // Several records in one batch: the memory behind one record holds the others' bytes.
  const { record } = first([{ value: 'mine' }, { value: 'SOMEONE-ELSES-BYTES' }]);
  const out = plain(record);
  for (const internal of ['wireBatch', 'context', 'ArrayBuffer', 'position', 'valueOffset', 'SOMEONE-ELSES-BYTES', 'ArrayBuffer {']) {
    assert.not.ok(out.includes(internal), `${internal} in ${out}`);
  }
  // console.log goes through the same path (formatWithOptions).
  assert.not.ok(inspect([record], { depth: 4 }).includes('wireBatch'));
});

test('a long value is cut, with its size in bytes; bytes that are not UTF-8 show as hex', () => {
  const long = 'x'.repeat(5_000);
  const { record } = first([{ value: long, key: Buffer.from([0xff, 0x00, 0x01]) }]);
  const out = plain(record);
  assert.ok(out.length < 600, `${out.length} characters: ${out}`);
  assert.match(out, /value: <Buffer 'x{100}'… \(5000 bytes\)>/);
  assert.match(out, /key: <Buffer ff 00 01>/);

  const { record: binary } = first([{ value: Buffer.alloc(1000, 0xfe) }]);
  assert.match(plain(binary), /value: <Buffer (fe ){31}fe … \(1000 bytes\)>/);
});

test('a deserialized value shows as itself; a string deserializer is cut like bytes', () => {
  const { record } = first([{ key: 'k', value: '{"id":1,"lines":["a","b"]}' }], { key: 'string', value: 'json' });
  assert.match(plain(record), /value: \{ id: 1, lines: \[ 'a', 'b' \] \}/);
  const { record: text } = first([{ value: 'é'.repeat(200) }], { value: 'string' });
  assert.match(plain(text), /value: 'é{100}'… \(400 bytes\)/);
});

test('toJSON: offset as a decimal string, UTF-8 text or base64, headers as [{ key, value }], leaderEpoch', () => {
  const { record } = first(
    [
      {
        key: 'customer-1',
        value: Buffer.from([0xc3, 0x28]), // not UTF-8
        headers: [
          { key: 'trace', value: 'abc' },
          { key: 'bin', value: Buffer.from([0xff]) },
          { key: 'none', value: null },
        ],
        timestamp: T0,
      },
    ],
    { base: 12345 },
  );
  assert.equal(JSON.parse(JSON.stringify(record)), {
    topic: 'orders',
    partition: 3,
    offset: '12345',
    timestamp: T0,
    key: 'customer-1',
    value: { base64: 'wyg=' },
    headers: [
      { key: 'trace', value: 'abc' },
      { key: 'bin', value: { base64: '/w==' } },
      { key: 'none', value: null },
    ],
    leaderEpoch: 7,
  });
  // The key order a reader expects.
  assert.equal(Object.keys(record.toJSON()), ['topic', 'partition', 'offset', 'timestamp', 'key', 'value', 'headers', 'leaderEpoch']);
});

test('toJSON: null key and value stay null; deserialized ones are themselves', () => {
  const { record: tombstone } = first([{ key: null, value: null }]);
  const t = tombstone.toJSON();
  assert.is(t.key, null);
  assert.is(t.value, null);
  assert.equal(t.headers, []);
  const { record } = first([{ key: 'k', value: '{"cents":250}' }], { key: 'string', value: 'json' });
  assert.equal(JSON.parse(JSON.stringify(record)).value, { cents: 250 });
  assert.is(record.toJSON().key, 'k');
  const { record: fn } = first([{ value: 'abc' }], { value: (data) => ({ length: data?.length }) });
  assert.equal(fn.toJSON().value, { length: 3 });
});

test('a released record prints without throwing, saying it is released instead of its bytes', () => {
  const { batch, record } = first([{ key: 'k', value: 'SECRET-BYTES', headers: [{ key: 'h', value: 'v' }] }], { base: 9 });
  void record.value; // read before release: a view of memory that is reused after it
  batch.release();
  assert.throws(() => record.headers, /released/);
  const out = plain(record);
  assert.match(out, /offset: 9n/);
  assert.match(out, /value: \[released with its batch\]/);
  assert.match(out, /headers: \[released with its batch\]/);
  assert.not.ok(out.includes('SECRET'), out);
  assert.equal(JSON.parse(JSON.stringify(record)), { topic: 'orders', partition: 3, offset: '9', leaderEpoch: 7, released: true });
});

test('a released record keeps showing what was deserialized (it outlives the batch)', () => {
  const { batch, record } = first([{ key: 'k', value: '{"cents":250}' }], { key: 'string', value: 'json' });
  record.decode(); // what the stream does before delivery ('json' runs early)
  void record.key; // 'string' runs when read
  batch.release();
  assert.match(plain(record), /key: 'k'/);
  assert.match(plain(record), /value: \{ cents: 250 \}/);
  assert.match(plain(record), /headers: \[released with its batch\]/);
  assert.equal(record.toJSON(), { topic: 'orders', partition: 3, offset: '0', key: 'k', value: { cents: 250 }, leaderEpoch: 7, released: true });
});

test('a kept record prints as a record and stays a plain object', () => {
  const { batch, record } = first([{ key: 'k', value: 'v'.repeat(300), headers: [{ key: 'h', value: 'x' }], timestamp: T0 }], { base: 5 });
  const kept = record.keep();
  batch.release();
  const out = plain(kept);
  assert.match(out, /^KeptRecord \{/);
  assert.match(out, /offset: 5n/);
  assert.match(out, /value: <Buffer 'v{100}'… \(300 bytes\)>/);
  assert.match(out, /\{ key: 'h', value: <Buffer 'x'> \}/);
  assert.equal(JSON.parse(JSON.stringify(kept)), {
    topic: 'orders',
    partition: 3,
    offset: '5',
    timestamp: T0,
    key: 'k',
    value: 'v'.repeat(300),
    headers: [{ key: 'h', value: 'x' }],
    leaderEpoch: 7,
  });
  // Plain: spread, keys and comparisons see only the record's fields.
  assert.equal(Object.keys(kept), ['topic', 'partition', 'offset', 'timestamp', 'key', 'value', 'headers', 'leaderEpoch']);
  assert.equal({ ...kept }.offset, 5n);
});

test('a batch prints its place, offsets and count, not its records', () => {
  const batch = batchOf(
    Array.from({ length: 4 }, (_, i) => ({ value: `value-${i}` })),
    { base: 100 },
  );
  const out = plain(batch);
  assert.match(out, /^ConsumerBatch \{/);
  assert.match(out, /topic: 'orders'/);
  assert.match(out, /count: 4/);
  assert.match(out, /firstOffset: 100n/);
  assert.match(out, /lastOffset: 103n/);
  assert.match(out, /nextOffset: 104n/);
  assert.not.ok(/value-|wireBatch|settlement|spans|ArrayBuffer/.test(out), out);
  assert.equal(JSON.parse(JSON.stringify(batch)), { topic: 'orders', partition: 3, count: 4, firstOffset: '100', lastOffset: '103', nextOffset: '104', highWatermark: '104' });
  batch.release();
  assert.match(plain(batch), /released: true/);
  assert.is(JSON.parse(JSON.stringify(batch)).released, true);
});

test('a released batch whose offsets were never read prints without reading its memory', () => {
  const batch = batchOf([{ value: 'a' }, { value: 'b' }], { base: 7 });
  batch.release();
  const out = plain(batch);
  assert.match(out, /count: 2/);
  assert.match(out, /nextOffset: 9n/);
  assert.not.ok(out.includes('firstOffset'), out);
});

test('nested deeper than inspect looks: a one-line summary', () => {
  const { record } = first([{ value: 'v' }], { base: 3 });
  assert.match(inspect({ a: { b: { c: record } } }, { depth: 1 }), /\[Object\]|\[ConsumerRecord orders-3@3\]/);
  assert.match(inspect({ a: { record } }, { depth: 0 }), /\[Object\]/);
  assert.is(inspect(record, { depth: -1 }), '[ConsumerRecord orders-3@3]');
});

test('bytesToJson: the one rule the CLI uses too', () => {
  assert.is(bytesToJson(null), null);
  assert.is(bytesToJson(Buffer.from('ünïcode')), 'ünïcode');
  assert.equal(bytesToJson(Buffer.from([0x80])), { base64: 'gA==' });
  assert.is(bytesToJson(new Uint8Array([0x68, 0x69])), 'hi');
});

test.run();
