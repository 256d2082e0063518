// kafkajs's data shapes as the facade makes them: headers (repeated keys as arrays, nulls kept),
// and the Batch helpers, checked against kafkajs 2.2.4's own Batch class on the same input.
import { createRequire } from 'node:module';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Batch, addHeader, headersObject, type Message } from '../../src/message.js';

const require = createRequire(import.meta.url);
type UpstreamBatch = { isEmpty(): boolean; firstOffset(): string | null; lastOffset(): string; offsetLag(): string; offsetLagLow(): string };
const KafkaJSBatch = require('kafkajs/src/consumer/batch.js') as new (topic: string, fetchedOffset: string, data: unknown) => UpstreamBatch;

function message(offset: string): Message {
  return {
    magicByte: 2,
    attributes: 0,
    timestamp: '1700000000000',
    offset,
    key: null,
    value: Buffer.from(`v${offset}`),
    headers: {},
    isControlRecord: false,
    batchContext: {
      firstOffset: offset,
      firstTimestamp: '1700000000000',
      partitionLeaderEpoch: 0,
      inTransaction: false,
      isControlBatch: false,
      lastOffsetDelta: 0,
      producerId: '-1',
      producerEpoch: -1,
      firstSequence: -1,
      maxTimestamp: '1700000000000',
      timestampType: 0,
      magicByte: 2,
    },
  };
}

test('headers: one value as a Buffer, a repeated key as an array in order, null values kept', () => {
  const a = Buffer.from('a');
  const b = Buffer.from('b');
  const c = Buffer.from('c');
  const headers = headersObject([
    { key: 'one', value: a },
    { key: 'many', value: a },
    { key: 'many', value: b },
    { key: 'many', value: c },
    { key: 'none', value: null },
  ]);
  assert.equal(Object.keys(headers), ['one', 'many', 'none']);
  assert.ok(headers.one === a);
  assert.ok(Array.isArray(headers.many));
  assert.equal((headers.many as Buffer[]).map(String), ['a', 'b', 'c']);
  assert.is(headers.none, null);
  const h = {};
  addHeader(h, 'k', a);
  addHeader(h, 'k', null);
  assert.equal(h, { k: [a, null] });
});

test("headers named like Object.prototype's members: as kafkajs makes them, the prototype untouched", () => {
  const a = Buffer.from('a');
  const b = Buffer.from('b');
  const list = [
    { key: '__proto__', value: a },
    { key: '__proto__', value: b },
    { key: 'toString', value: a },
    { key: 'plain', value: b },
  ];
  const headers = headersObject(list);
  // kafkajs 2.2.4's decoder: { ...obj, [key]: obj[key] === undefined ? value : ... [obj[key], value] }.
  const kafkajs = list.reduce<Record<string, unknown>>(
    (obj, { key, value }) => ({
      ...obj,
      [key]: obj[key] === undefined ? value : Array.isArray(obj[key]) ? (obj[key] as unknown[]).concat([value]) : [obj[key], value],
    }),
    {},
  );
  assert.equal(Object.keys(headers), Object.keys(kafkajs));
  assert.equal(Object.keys(headers), ['__proto__', 'toString', 'plain']);
  assert.is(Object.getPrototypeOf(headers), Object.prototype);
  const own = (o: object, k: string) => Object.getOwnPropertyDescriptor(o, k)!.value as unknown[];
  assert.equal(own(headers, '__proto__'), own(kafkajs, '__proto__'));
  assert.equal(own(headers, '__proto__'), [Object.prototype, a, b]);
  assert.equal(own(headers, 'toString'), [Object.prototype.toString, a]);
  assert.equal(own(headers, 'toString'), own(kafkajs, 'toString'));
  assert.ok(headers.plain === b);
});

const cases: { name: string; offsets: string[]; highWatermark: string }[] = [
  { name: 'a full batch', offsets: ['5', '6', '7'], highWatermark: '10' },
  { name: 'a batch at the end of the log', offsets: ['0', '1'], highWatermark: '2' },
  { name: 'one message', offsets: ['41'], highWatermark: '100' },
  { name: 'an empty batch', offsets: [], highWatermark: '7' },
  { name: 'offsets past 2^53', offsets: ['9007199254740993', '9007199254740994'], highWatermark: '9007199254741000' },
];

for (const c of cases) {
  test(`Batch helpers agree with kafkajs's: ${c.name}`, () => {
    const ours = new Batch('t', 3, c.highWatermark, c.offsets.map(message));
    const theirs = new KafkaJSBatch('t', c.offsets[0] ?? c.highWatermark, {
      partition: 3,
      highWatermark: c.highWatermark,
      abortedTransactions: [],
      messages: c.offsets.map((o) => ({ ...message(o), isControlRecord: false })),
    });
    assert.is(ours.topic, 't');
    assert.is(ours.partition, 3);
    assert.is(ours.highWatermark, c.highWatermark);
    assert.is(ours.isEmpty(), theirs.isEmpty(), 'isEmpty');
    assert.is(ours.firstOffset(), theirs.firstOffset(), 'firstOffset');
    assert.is(ours.lastOffset(), theirs.lastOffset(), 'lastOffset');
    assert.is(ours.offsetLag(), theirs.offsetLag(), 'offsetLag');
    assert.is(ours.offsetLagLow(), theirs.offsetLagLow(), 'offsetLagLow');
    assert.is(typeof ours.offsetLag(), 'string');
  });
}

test.run();
