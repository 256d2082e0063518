// The embedded consumer protocol: subscription and assignment bytes written by hand from the
// schema (ConsumerProtocolSubscription.json / ConsumerProtocolAssignment.json: int16 version,
// then the struct, non-flexible), round trips of every version, the forward-compatibility rule,
// and the user data of the sticky assignors written by hand from the Java structs.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { isKafkaProtocolError } from '@kwire/protocol';
import { decodeCooperativeStickyUserData, decodeStickyUserData, encodeCooperativeStickyUserData, encodeStickyUserData } from '../../src/group/assignors/index.js';
import { decodeAssignment, decodeSubscription, encodeAssignment, encodeSubscription, memberSubscription } from '../../src/group/consumer-protocol.js';

/** Hex digits, spaces and newlines; `#` starts a comment to the end of the line. */
function hex(s: string): Buffer {
  const digits = s.replace(/#[^\n]*/g, '').replace(/\s+/g, '');
  if (!/^([0-9a-f]{2})*$/.test(digits)) throw new Error(`bad hex in test: ${digits}`);
  return Buffer.from(digits, 'hex');
}

const SUBSCRIPTION = {
  topics: ['b', 'a'],
  userData: Buffer.from([1, 2]),
  ownedPartitions: [
    { topic: 'b', partition: 1 },
    { topic: 'a', partition: 2 },
    { topic: 'a', partition: 0 },
  ],
  generationId: 7,
  rackId: 'r1',
};

// Topics and owned partitions sorted (as Java's ConsumerProtocol writes them).
const SUBSCRIPTION_V3 = hex(`
  0003                                 # version 3
  00000002 0001 61 0001 62             # topics [a, b]
  00000002 0102                        # user data (2 bytes)
  00000002                             # owned partitions: 2 topics
    0001 61 00000002 00000000 00000002 # a: [0, 2]
    0001 62 00000001 00000001          # b: [1]
  00000007                             # generation 7
  0002 7231                            # rack "r1"
`);

test('subscription v3: the bytes, written by hand', () => {
  assert.is(encodeSubscription(SUBSCRIPTION).toString('hex'), SUBSCRIPTION_V3.toString('hex'));
  const d = decodeSubscription(SUBSCRIPTION_V3);
  assert.equal(d, {
    version: 3,
    topics: ['a', 'b'],
    userData: Buffer.from([1, 2]),
    ownedPartitions: [
      { topic: 'a', partition: 0 },
      { topic: 'a', partition: 2 },
      { topic: 'b', partition: 1 },
    ],
    generationId: 7,
    rackId: 'r1',
  });
});

test('subscription v0-v2: each version ends where its fields end', () => {
  assert.is(encodeSubscription(SUBSCRIPTION, 0).toString('hex'), '0000' + '00000002000161000162' + '000000020102');
  assert.is(encodeSubscription(SUBSCRIPTION, 1).toString('hex'), '0001' + '00000002000161000162' + '000000020102' + '00000002' + '00016100000002' + '0000000000000002' + '0001620000000100000001');
  assert.is(encodeSubscription(SUBSCRIPTION, 2).toString('hex'), encodeSubscription(SUBSCRIPTION, 1).toString('hex').replace(/^0001/, '0002') + '00000007');
  // What older versions cannot carry reads as the defaults.
  for (const v of [0, 1, 2, 3]) {
    const d = decodeSubscription(encodeSubscription(SUBSCRIPTION, v));
    assert.is(d.version, v);
    assert.equal(d.topics, ['a', 'b']);
    assert.equal(d.userData, Buffer.from([1, 2]));
    assert.is(d.ownedPartitions.length, v >= 1 ? 3 : 0);
    assert.is(d.generationId, v >= 2 ? 7 : -1);
    assert.is(d.rackId, v >= 3 ? 'r1' : null);
  }
});

test('subscription defaults: null user data, no ownership, generation -1, no rack (as Java 4.4 sends it)', () => {
  // From a Java 4.4.0 ConsoleConsumer's JoinGroup (test-fixtures/java-4.4.0/group-rebalance).
  const java = hex('0003 00000001 000b 726562616c616e63652d74 ffffffff 00000000 ffffffff ffff');
  assert.equal(encodeSubscription({ topics: ['rebalance-t'] }), java);
  assert.equal(decodeSubscription(java), { version: 3, topics: ['rebalance-t'], userData: null, ownedPartitions: [], generationId: -1, rackId: null });
  // An empty rack reads as none, as Java reads it.
  assert.is(decodeSubscription(encodeSubscription({ topics: ['t'], rackId: '' })).rackId, null);
});

test('subscription from a newer client: read as v3, trailing fields ignored', () => {
  const v5 = Buffer.concat([hex('0005'), SUBSCRIPTION_V3.subarray(2), hex('deadbeef 0003 787878'), Buffer.from([9])]);
  const d = decodeSubscription(v5);
  assert.is(d.version, 5);
  assert.equal({ ...d, version: 3 }, decodeSubscription(SUBSCRIPTION_V3));
  // memberSubscription gives the assignors' view with the JoinGroup member fields.
  assert.equal(memberSubscription({ memberId: 'm', groupInstanceId: 'i', metadata: v5 }), {
    memberId: 'm',
    groupInstanceId: 'i',
    topics: ['a', 'b'],
    userData: Buffer.from([1, 2]),
    ownedPartitions: d.ownedPartitions,
    generationId: 7,
    rackId: 'r1',
  });
});

test('subscription errors: negative version, truncation, bad versions to write', () => {
  for (const bad of [hex('ffff 00000000 ffffffff'), SUBSCRIPTION_V3.subarray(0, SUBSCRIPTION_V3.length - 1), hex('00'), Buffer.alloc(0)]) {
    assert.throws(
      () => decodeSubscription(bad),
      (e: unknown) => isKafkaProtocolError(e),
      bad.toString('hex'),
    );
  }
  assert.throws(
    () => encodeSubscription(SUBSCRIPTION, 4),
    (e: unknown) => isKafkaProtocolError(e) && e.reason === 'unsupported-version',
  );
  assert.throws(
    () => encodeSubscription(SUBSCRIPTION, -1),
    (e: unknown) => isKafkaProtocolError(e),
  );
});

test('assignment v3: the bytes, written by hand; partitions grouped by topic in order of appearance', () => {
  const a = {
    partitions: [
      { topic: 't', partition: 2 },
      { topic: 'u', partition: 0 },
      { topic: 't', partition: 0 },
    ],
    userData: null,
  };
  const bytes = hex(`
    0003
    00000002
      0001 74 00000002 00000002 00000000
      0001 75 00000001 00000000
    ffffffff
  `);
  assert.is(encodeAssignment(a).toString('hex'), bytes.toString('hex'));
  assert.equal(decodeAssignment(bytes), {
    version: 3,
    partitions: [
      { topic: 't', partition: 2 },
      { topic: 't', partition: 0 },
      { topic: 'u', partition: 0 },
    ],
    userData: null,
  });
});

test('assignment v0-v3 share one layout; user data round trips', () => {
  const a = { partitions: [{ topic: 'orders', partition: 5 }], userData: Buffer.from('hi') };
  const body = encodeAssignment(a, 0).subarray(2).toString('hex');
  for (const v of [0, 1, 2, 3]) {
    const bytes = encodeAssignment(a, v);
    assert.is(bytes.readInt16BE(0), v);
    assert.is(bytes.subarray(2).toString('hex'), body);
    assert.equal(decodeAssignment(bytes), { version: v, partitions: a.partitions, userData: Buffer.from('hi') });
  }
  assert.is(body, '00000001' + '00066f7264657273' + '0000000100000005' + '00000002' + '6869');
});

test("assignment: empty bytes mean no partitions; Java's empty assignment; newer versions", () => {
  assert.equal(decodeAssignment(Buffer.alloc(0)), { version: -1, partitions: [], userData: null });
  assert.equal(decodeAssignment(hex('0003 00000000 ffffffff')), { version: 3, partitions: [], userData: null });
  assert.equal(encodeAssignment({ partitions: [] }), hex('0003 00000000 ffffffff'));
  const v9 = hex('0009 00000001 0001 74 00000001 00000003 ffffffff 0102030405');
  assert.equal(decodeAssignment(v9), { version: 9, partitions: [{ topic: 't', partition: 3 }], userData: null });
  assert.throws(
    () => decodeAssignment(hex('0003 00000001 0001')),
    (e: unknown) => isKafkaProtocolError(e) && e.reason === 'invalid-length',
  );
  assert.throws(
    () => decodeAssignment(hex('0003 00000001 0001 74 00000001 00000003 ffff')),
    (e: unknown) => isKafkaProtocolError(e) && e.reason === 'truncated',
  );
  assert.throws(
    () => decodeAssignment(hex('fffe 00000000 ffffffff')),
    (e: unknown) => isKafkaProtocolError(e) && e.reason === 'unsupported-version',
  );
});

test('decoded user data is a copy, not a view of the frame', () => {
  const bytes = encodeSubscription({ topics: ['t'], userData: Buffer.from([5, 6, 7]) });
  const d = decodeSubscription(bytes);
  bytes.fill(0);
  assert.equal(d.userData, Buffer.from([5, 6, 7]));
});

// ---- user data of the sticky assignors -----------------------------------------------------

test('StickyAssignor user data v1: previous_assignment [topic, partitions], then generation', () => {
  const bytes = encodeStickyUserData(
    [
      { topic: 't', partition: 0 },
      { topic: 't', partition: 3 },
      { topic: 'u', partition: 1 },
    ],
    5,
  );
  // Struct(ArrayOf(Struct(topic: STRING, partitions: ArrayOf(INT32))), generation: INT32).
  assert.is(bytes.toString('hex'), '00000002' + '000174' + '00000002' + '00000000' + '00000003' + '000175' + '00000001' + '00000001' + '00000005');
  assert.equal(decodeStickyUserData(bytes), {
    partitions: [
      { topic: 't', partition: 0 },
      { topic: 't', partition: 3 },
      { topic: 'u', partition: 1 },
    ],
    generation: 5,
  });
});

test('StickyAssignor user data: v0 (no generation), empty, missing and unreadable, as Java reads them', () => {
  // v0, written by clients before Kafka 2.3: the same without the generation.
  assert.equal(decodeStickyUserData(hex('00000001 000174 00000001 00000002')), { partitions: [{ topic: 't', partition: 2 }], generation: undefined });
  assert.equal(decodeStickyUserData(null), { partitions: [], generation: undefined });
  assert.equal(decodeStickyUserData(Buffer.alloc(0)), { partitions: [], generation: undefined });
  // An array count beyond the bytes, a negative string length, a truncated partition list.
  for (const bad of ['00000009 01', '00000001 ffff 00000000', '00000001 000174 00000002 00000001']) {
    assert.equal(decodeStickyUserData(hex(bad)), { partitions: [], generation: -1 }, bad);
  }
  // Trailing bytes after v1 are ignored.
  assert.equal(decodeStickyUserData(hex('00000000 00000009 ffff')), { partitions: [], generation: 9 });
  assert.equal(encodeStickyUserData([], -1), hex('00000000 ffffffff'));
});

test('CooperativeStickyAssignor user data: the generation as int32', () => {
  assert.equal(encodeCooperativeStickyUserData(5), hex('00000005'));
  assert.equal(encodeCooperativeStickyUserData(-1), hex('ffffffff'));
  assert.is(decodeCooperativeStickyUserData(hex('0000002a')), 42);
  assert.is(decodeCooperativeStickyUserData(hex('0000002a ff')), 42);
  assert.is(decodeCooperativeStickyUserData(null), undefined);
  // Too short to hold an int32: Java's fallback, generation -1.
  assert.is(decodeCooperativeStickyUserData(hex('0000')), -1);
  assert.is(decodeCooperativeStickyUserData(Buffer.alloc(0)), -1);
  // As Java 3.9.1 sent it, offering range and cooperative-sticky (java-3.9.1/console-group).
  const java = hex('0003 00000001 000c 6f6c642d636c69656e742d74 00000004 ffffffff 00000000 00000001 ffff');
  const d = decodeSubscription(java);
  assert.is(decodeCooperativeStickyUserData(d.userData), -1);
  assert.is(d.generationId, 1);
  assert.equal(encodeSubscription(d), java);
});

test.run();
