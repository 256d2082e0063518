// Fixed bytes: the worked examples of /work/shared/docs/kafka-protocol.md (1.7 and 5.1), and a few
// frames computed by hand from the protocol rules (nullable struct marker, tagged struct, null
// compact string/array). Each is checked against the production codec in both directions and
// against the naive encoder, which anchors the naive encoder itself to bytes nobody generated.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ConsumerGroupHeartbeat, ConsumerProtocolAssignmentData, decodeRequestFrame, decodeResponseFrame, encodeRequestFrame, encodeResponseFrame, Fetch, Reader, Writer } from '../../src/index.js';
import { diff, fromHex, hex } from './naive/compare.js';
import { naiveEncode, naiveRequestFrame, naiveResponseFrame } from './naive/encoder.js';
import { message } from './naive/schema.js';

const norm = (text: string) => hex(fromHex(text));

test('kafka-protocol.md 1.7: the ApiVersions v3 request frame', () => {
  const doc = `
    00 00 00 23                      size = 35
    00 12 00 03 00 00 00 01          api_key 18, api_version 3, correlation_id 1
    00 08 74 73 63 6c 69 65 6e 74    client_id (int16 length!) "tsclient"
    00                               header tagged fields (header v2)
    09 74 73 2d 6b 61 66 6b 61       compact string "ts-kafka" (len+1 = 9)
    06 30 2e 31 2e 30                compact string "0.1.0"
    00                               body tagged fields`;
  // Only the hex pairs before each comment.
  const expected = fromHex(
    doc
      .split('\n')
      .map((l) => /^\s*((?:[0-9a-f]{2} ?)+)/.exec(l)?.[1] ?? '')
      .join(' '),
  );
  assert.is(expected.length, 4 + 35);
  const request = { apiKey: 18, apiVersion: 3, correlationId: 1, clientId: 'tsclient', body: { clientSoftwareName: 'ts-kafka', clientSoftwareVersion: '0.1.0' } };
  assert.is(hex(encodeRequestFrame(request)), hex(expected));
  assert.is(hex(naiveRequestFrame(message('ApiVersionsRequest'), request).bytes), hex(expected));
  const decoded = decodeRequestFrame(expected);
  assert.is(decoded.apiKey, 18);
  assert.is(decoded.apiVersion, 3);
  assert.is(decoded.correlationId, 1);
  assert.is(decoded.clientId, 'tsclient');
  assert.is(decoded.headerTaggedFields, undefined);
  // v5 fields the v3 frame lacks take their defaults (ClusterId null, NodeId -1).
  assert.is(diff(decoded.body, { clientSoftwareName: 'ts-kafka', clientSoftwareVersion: '0.1.0', clusterId: null, nodeId: -1 }), null);
});

test('kafka-protocol.md 5.1: the empty ConsumerProtocolAssignment, version 3', () => {
  // 00 03 is the int16 version in front of the struct; the struct is the rest.
  const doc = fromHex('00 03 00 00 00 00 ff ff ff ff');
  const version = doc.readInt16BE(0);
  assert.is(version, 3);
  const body = doc.subarray(2);
  const w = new Writer();
  ConsumerProtocolAssignmentData.encode(w, { assignedPartitions: [], userData: null }, version);
  assert.is(hex(w.finish()), hex(body));
  // userData defaults to null: an empty object gives the same bytes.
  ConsumerProtocolAssignmentData.encode(w, {}, version);
  assert.is(hex(w.finish()), hex(body));
  assert.is(hex(naiveEncode(message('ConsumerProtocolAssignment'), 3, {})), hex(body));
  const r = new Reader(body);
  assert.is(diff(ConsumerProtocolAssignmentData.decode(r, version), { assignedPartitions: [], userData: null }), null);
  assert.is(r.remaining, 0);
});

test('by hand: ConsumerGroupHeartbeat v0 response, nullable struct Assignment (int8 marker)', () => {
  const res = message('ConsumerGroupHeartbeatResponse');
  const base = { throttleTimeMs: 0, errorCode: 0, errorMessage: null, memberId: 'm', memberEpoch: 5, heartbeatIntervalMs: 5000 };
  //                    throttle    error errMsg memberId epoch      interval
  const prefix = norm('00 00 00 00 00 00 00     02 6d    00 00 00 05 00 00 13 88');
  const cases: [string, object, string][] = [
    ['null assignment', { ...base, assignment: null }, `${prefix} ff 00`],
    [
      'one topic, partitions 0 and 2',
      { ...base, assignment: { topicPartitions: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAQ', partitions: [0, 2] }] } },
      //          marker array uuid (= 1)                                          partitions              elem-tags struct-tags body-tags
      `${prefix} 01     02    00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 01 03 00 00 00 00 00 00 00 02 00        00          00`,
    ],
    ['empty assignment', { ...base, assignment: { topicPartitions: [] } }, `${prefix} 01 01 00 00`],
  ];
  for (const [name, body, text] of cases) {
    const expected = fromHex(text);
    assert.is(hex(naiveEncode(res, 0, body)), hex(expected), `naive: ${name}`);
    const w = new Writer();
    ConsumerGroupHeartbeat.encodeResponse(w, body as never, 0);
    assert.is(hex(w.finish()), hex(expected), `production: ${name}`);
    const decoded = ConsumerGroupHeartbeat.decodeResponse(new Reader(expected), 0);
    assert.is(diff(decoded, body), null, name);
  }
  // The whole frame: response header v1 (flexible, not ApiVersions) adds a tag byte after the correlation id.
  const frame = encodeResponseFrame(68, 0, 3, cases[0]![1]);
  assert.is(hex(frame), hex(Buffer.concat([fromHex('00 00 00 18 00 00 00 03 00'), fromHex(cases[0]![2])])));
  assert.is(hex(naiveResponseFrame(res, { apiVersion: 0, correlationId: 3, body: cases[0]![1] }).bytes), hex(frame));
  assert.is(decodeResponseFrame(68, 0, frame).correlationId, 3);
});

test('by hand: ConsumerGroupHeartbeat v1 request, null compact strings and arrays', () => {
  const req = message('ConsumerGroupHeartbeatRequest');
  // GroupId "g", MemberId "", MemberEpoch 0, InstanceId null, RackId null, RebalanceTimeoutMs -1
  // (default), SubscribedTopicNames null, SubscribedTopicRegex "t.*", ServerAssignor null,
  // TopicPartitions null, no tags.
  const expected = fromHex('02 67 01 00 00 00 00 00 00 ff ff ff ff 00 04 74 2e 2a 00 00 00');
  const body = { groupId: 'g', memberId: '', memberEpoch: 0, subscribedTopicRegex: 't.*' };
  assert.is(hex(naiveEncode(req, 1, body)), hex(expected));
  const w = new Writer();
  ConsumerGroupHeartbeat.encodeRequest(w, body, 1);
  assert.is(hex(w.finish()), hex(expected));
  const decoded = ConsumerGroupHeartbeat.decodeRequest(new Reader(expected), 1);
  assert.is(
    diff(decoded, {
      groupId: 'g',
      memberId: '',
      memberEpoch: 0,
      instanceId: null,
      rackId: null,
      rebalanceTimeoutMs: -1,
      subscribedTopicNames: null,
      subscribedTopicRegex: 't.*',
      serverAssignor: null,
      topicPartitions: null,
    }),
    null,
  );
  // v0 has no SubscribedTopicRegex: the same body is one field shorter, and decodes with null.
  const v0 = fromHex('02 67 01 00 00 00 00 00 00 ff ff ff ff 00 00 00 00');
  const w0 = new Writer();
  ConsumerGroupHeartbeat.encodeRequest(w0, body, 0);
  assert.is(hex(w0.finish()), hex(v0));
  assert.is((ConsumerGroupHeartbeat.decodeRequest(new Reader(v0), 0) as { subscribedTopicRegex: string | null }).subscribedTopicRegex, null);
});

test('by hand: Fetch v12 response partition with a non-default tagged CurrentLeader', () => {
  const res = message('FetchResponse');
  const body = {
    throttleTimeMs: 0,
    errorCode: 0,
    sessionId: 0,
    responses: [
      {
        topic: 't',
        partitions: [
          {
            partitionIndex: 0,
            errorCode: 0,
            highWatermark: 10n,
            lastStableOffset: -1n,
            logStartOffset: 0n,
            currentLeader: { leaderId: 1, leaderEpoch: 7 },
            abortedTransactions: null,
            preferredReadReplica: -1,
            records: null,
          },
        ],
      },
    ],
  };
  const expected = fromHex(
    [
      '00 00 00 00 00 00 00 00 00 00', // throttle, error, session id
      '02 02 74', // one topic, name "t" (v12 still has names)
      '02 00 00 00 00 00 00', // one partition: index 0, error 0
      '00 00 00 00 00 00 00 0a ff ff ff ff ff ff ff ff 00 00 00 00 00 00 00 00', // HW 10, LSO -1, log start 0
      '00 ff ff ff ff 00', // aborted transactions null, preferred replica -1, records null
      '01 01 09 00 00 00 01 00 00 00 07 00', // tags: 1 field, tag 1 (CurrentLeader), 9 bytes: {1, 7} and its own (empty) tag section
      '00 00', // topic tags, body tags
    ].join(' '),
  );
  assert.is(hex(naiveEncode(res, 12, body)), hex(expected));
  const w = new Writer();
  Fetch.encodeResponse(w, body, 12);
  assert.is(hex(w.finish()), hex(expected));
  const decoded = Fetch.decodeResponse(new Reader(expected), 12) as { responses: { partitions: { currentLeader: unknown; divergingEpoch: unknown; snapshotId: unknown }[] }[] };
  const p = decoded.responses[0]!.partitions[0]!;
  assert.is(diff(p.currentLeader, { leaderId: 1, leaderEpoch: 7 }), null);
  // Absent tagged structs take their defaults (-1 everywhere).
  assert.is(diff(p.divergingEpoch, { epoch: -1, endOffset: -1n }), null);
  assert.is(diff(p.snapshotId, { endOffset: -1n, epoch: -1 }), null);
  // A CurrentLeader equal to its default is not written at all.
  const dflt = structuredClone(body);
  dflt.responses[0]!.partitions[0]!.currentLeader = { leaderId: -1, leaderEpoch: -1 };
  const w2 = new Writer();
  Fetch.encodeResponse(w2, dflt, 12);
  const noTags = w2.finish();
  assert.is(noTags.length, expected.length - 11);
  assert.is(hex(noTags), hex(naiveEncode(res, 12, dflt)));
});

test.run();
