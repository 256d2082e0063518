// Frame-level behaviour the message round trips do not cover: size prefixes, header versions,
// unknown APIs and versions, and typed errors carrying api, version and path.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  API_DEFINITIONS,
  ApiKey,
  decodeRequestFrame,
  decodeRequestHeader,
  decodeResponseFrame,
  encodeRequestFrame,
  encodeResponseFrame,
  isKafkaProtocolError,
  KafkaProtocolError,
  negotiateVersion,
  Writer,
} from '../../src/index.js';

function expectProtocolError(fn: () => unknown, check: (e: KafkaProtocolError) => void): void {
  try {
    fn();
  } catch (err) {
    assert.ok(isKafkaProtocolError(err), `a KafkaProtocolError, not ${(err as Error)?.name}: ${(err as Error)?.message}`);
    assert.ok(err instanceof KafkaProtocolError);
    check(err as KafkaProtocolError);
    return;
  }
  assert.unreachable('no error thrown');
}

test('request header v1 for non-flexible versions, v2 (with a tag section) for flexible ones', () => {
  // SaslHandshake v1 is never flexible; Heartbeat v4 is.
  const hs = encodeRequestFrame({ apiKey: ApiKey.SaslHandshake, apiVersion: 1, correlationId: 5, clientId: 'c', body: { mechanism: 'PLAIN' } });
  // size | key 17 | v1 | corr 5 | client "c" | mechanism "PLAIN" (int16 length: not flexible)
  assert.is(hs.toString('hex'), `00000012` + `0011` + `0001` + `00000005` + `000163` + `0005${Buffer.from('PLAIN').toString('hex')}`);
  const hb = encodeRequestFrame({ apiKey: ApiKey.Heartbeat, apiVersion: 4, correlationId: 6, clientId: null, body: { groupId: 'g', generationId: 1, memberId: 'm', groupInstanceId: null } });
  // size | key 12 | v4 | corr 6 | client null (-1, int16 even in v2) | header tags 0 | compact "g" | gen 1 | compact "m" | null instance | tags 0
  assert.is(hb.toString('hex'), `00000015` + `000c` + `0004` + `00000006` + `ffff` + `00` + `0267` + `00000001` + `026d` + `00` + `00`);
  const back = decodeRequestFrame(hb);
  assert.equal(back, { apiKey: 12, apiVersion: 4, correlationId: 6, clientId: null, body: { groupId: 'g', generationId: 1, memberId: 'm', groupInstanceId: null } });
});

test('response header v0 for ApiVersions (always) and non-flexible versions, v1 for flexible ones', () => {
  const av = encodeResponseFrame(ApiKey.ApiVersions, 4, 9, { errorCode: 0, apiKeys: [], throttleTimeMs: 0 });
  // size | corr 9 | (no header tags) | error 0 | compact array 0 elements (01) | throttle 0 | body tags 0
  assert.is(av.toString('hex'), `0000000c` + `00000009` + `0000` + `01` + `00000000` + `00`);
  const hb = encodeResponseFrame(ApiKey.Heartbeat, 4, 9, { throttleTimeMs: 0, errorCode: 27 });
  assert.is(hb.toString('hex'), `0000000c` + `00000009` + `00` + `00000000` + `001b` + `00`);
  assert.is((decodeResponseFrame(ApiKey.Heartbeat, 4, hb).body as { errorCode: number }).errorCode, 27);
});

test('a size prefix that does not match, trailing bytes, and truncation are typed errors naming the API', () => {
  const hb = encodeRequestFrame({ apiKey: ApiKey.Heartbeat, apiVersion: 4, correlationId: 1, clientId: 'x', body: { groupId: 'g', generationId: 1, memberId: 'm' } });
  const longer = Buffer.concat([hb, Buffer.from([0])]);
  expectProtocolError(
    () => decodeRequestFrame(longer),
    (e) => {
      assert.is(e.reason, 'invalid-length');
      assert.is(e.offset, 0);
    },
  );
  const padded = Buffer.from(longer);
  padded.writeInt32BE(padded.length - 4, 0);
  expectProtocolError(
    () => decodeRequestFrame(padded),
    (e) => {
      assert.is(e.reason, 'trailing-bytes');
      assert.is(e.apiName, 'HeartbeatRequest');
      assert.is(e.apiVersion, 4);
    },
  );
  const res = encodeResponseFrame(ApiKey.Heartbeat, 4, 1, { errorCode: 0 });
  const cut = Buffer.from(res.subarray(0, res.length - 3));
  cut.writeInt32BE(cut.length - 4, 0);
  expectProtocolError(
    () => decodeResponseFrame(ApiKey.Heartbeat, 4, cut),
    (e) => {
      assert.is(e.reason, 'truncated');
      assert.is(e.apiKey, 12);
      assert.match(e.message, /HeartbeatResponse v4/);
    },
  );
});

test('the field path of a failure deep inside a message', () => {
  const body = {
    responses: [{ topic: 't', partitions: [{ partitionIndex: 0 }, { partitionIndex: 1, records: Buffer.alloc(10) }] }],
  };
  const frame = encodeResponseFrame(ApiKey.Fetch, 12, 3, body);
  // Cut inside the second partition's records.
  const cut = Buffer.from(frame.subarray(0, frame.length - 8));
  cut.writeInt32BE(cut.length - 4, 0);
  expectProtocolError(
    () => decodeResponseFrame(ApiKey.Fetch, 12, cut),
    (e) => {
      assert.is(e.path, 'responses/0/partitions/1/records');
      assert.is(e.reason, 'invalid-length');
    },
  );
});

test('unknown API keys and versions outside the implemented range are reported as such', () => {
  // api 60 (DescribeCluster: a real API kwire does not model) v0, correlation 1, null client id
  const frame = Buffer.from('0000000a' + '003c' + '0000' + '00000001' + 'ffff', 'hex');
  expectProtocolError(
    () => decodeRequestFrame(frame),
    (e) => {
      assert.is(e.reason, 'unknown-api');
      assert.is(e.apiKey, 60);
      assert.match(e.message, /DescribeCluster/);
    },
  );
  frame.writeInt16BE(999, 4);
  expectProtocolError(
    () => decodeRequestFrame(frame),
    (e) => assert.match(e.message, /unknown api key 999/),
  );
  assert.equal(decodeRequestHeader(frame), { apiKey: 999, apiVersion: 0, correlationId: 1, clientId: null });
  expectProtocolError(
    () => encodeRequestFrame({ apiKey: ApiKey.Fetch, apiVersion: 11, correlationId: 1, clientId: null, body: {} }),
    (e) => {
      assert.is(e.reason, 'unsupported-version');
      assert.match(e.message, /Fetch v11 is outside what kwire implements \(v12-18\)/);
    },
  );
});

test('encode errors: a value of the wrong type or range names the field and leaves the writer clean', () => {
  const w = new Writer();
  expectProtocolError(
    () => encodeRequestFrame({ apiKey: ApiKey.Heartbeat, apiVersion: 4, correlationId: 1, clientId: null, body: { groupId: 'g', generationId: 2 ** 31 } }, w),
    (e) => {
      assert.is(e.path, 'generationId');
      assert.is(e.reason, 'invalid-value');
    },
  );
  expectProtocolError(
    () => encodeRequestFrame({ apiKey: ApiKey.Heartbeat, apiVersion: 4, correlationId: 1, clientId: null, body: { groupId: null } }, w),
    (e) => assert.match(e.message, /groupId is null, which version 4 does not allow/),
  );
  assert.is(w.length, 0, 'the failed frames were abandoned');
  const ok = encodeRequestFrame({ apiKey: ApiKey.Heartbeat, apiVersion: 4, correlationId: 1, clientId: null, body: { groupId: 'g' } }, w);
  assert.is(ok.readInt32BE(0), ok.length - 4);
});

test('negotiateVersion: the highest common version, or an error naming the API and both ranges', () => {
  const fetch = API_DEFINITIONS.get(ApiKey.Fetch)!;
  assert.is(negotiateVersion(fetch, { minVersion: 4, maxVersion: 18 }), 18);
  assert.is(negotiateVersion(fetch, { minVersion: 4, maxVersion: 13 }), 13);
  assert.is(negotiateVersion(fetch, { minVersion: 4, maxVersion: 99 }), 18);
  expectProtocolError(
    () => negotiateVersion(fetch, { minVersion: 4, maxVersion: 11 }),
    (e) => {
      assert.is(e.reason, 'unsupported-version');
      assert.match(e.message, /^Fetch: the broker offers v4-11, kwire implements v12-18; no version in common/);
    },
  );
  expectProtocolError(
    () => negotiateVersion(fetch, undefined),
    (e) => assert.match(e.message, /does not offer Fetch \(api key 1\)/),
  );
});

test.run();
