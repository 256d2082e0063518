// Every API in kwire's scope (request and response) and both consumer-protocol data structures, at
// every version in scope, against the naive encoder of test/unit/naive/ (which reads
// test/schemas.json at run time and shares no code with src/):
//   (a) the production encoder writes exactly the naive encoder's bytes;
//   (b) the production decoder gives back the body (with the defaults a version lacks filled in);
//   (c) re-encoding the decoded body gives the same bytes.
// Bodies are random (seeded): empty arrays, nulls where nullable, non-default and default tagged
// fields, unknown tagged fields, unicode strings, int64 extremes, uuids, omitted fields.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { API_DEFINITIONS, decodeRequestFrame, decodeResponseFrame, encodeRequestFrame, encodeResponseFrame, isKafkaProtocolError, unknownTaggedFields, type ResponseFrame } from '../../src/index.js';
import { codecFor, prodDecode, prodEncode } from './naive/codecs.js';
import { diff, hex } from './naive/compare.js';
import { defaultOf, naiveEncode, naiveRequestFrame, naiveResponseFrame, type RawTag, UNKNOWN_TAGS, uvarintBytes } from './naive/encoder.js';
import { expectedDecoded, randomBody, randomString, Rng } from './naive/random.js';
import { inRange, isFlexible, isTaggedAt, loadSchemas, message, type NField, type NMessage, prop, scopedMessages, type ScopedMessage } from './naive/schema.js';

const SEED = 0x5eed_c0de;
const BODIES_PER_VERSION = 40;
const FRAMES_PER_VERSION = 12;

function versions(s: { min: number; max: number }): number[] {
  const out: number[] = [];
  for (let v = s.min; v <= s.max; v++) out.push(v);
  return out;
}

function label(s: ScopedMessage, v: number): string {
  return `${s.message.name} v${v}`;
}

/** Up to `limit` failure descriptions, then a count. */
function report(failures: string[], limit = 5): string {
  return `${failures.length} failure(s):\n${failures.slice(0, limit).join('\n---\n')}`;
}

function show(body: unknown): string {
  return JSON.stringify(body, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v instanceof Uint8Array ? `<${hex(v)}>` : v)).slice(0, 600);
}

// ------------------------------------------------------------------ scope sanity

test('schemas.json scope matches the API definitions (versions, flexible floor, api keys)', () => {
  const s = loadSchemas();
  assert.is(s.kafkaVersion, '4.4.0');
  const apis = s.scope.apis;
  assert.is(API_DEFINITIONS.size, apis.length);
  for (const a of apis) {
    const req = message(`${a.name}Request`);
    const def = API_DEFINITIONS.get(req.apiKey!);
    assert.ok(def, `no definition for ${a.name}`);
    assert.is(def!.name, a.name);
    assert.is(def!.minVersion, a.min, `${a.name} min`);
    assert.is(def!.maxVersion, a.max, `${a.name} max`);
    // flexibleFrom is the first flexible version of the schema (Infinity for never).
    const flex = req.flexibleVersions === 'none' ? Infinity : Number(/^(\d+)\+$/.exec(req.flexibleVersions)![1]);
    assert.is(def!.flexibleFrom, flex, `${a.name} flexibleFrom`);
    // The scope starts at the flexible floor, except ApiVersions 0-5 and SaslHandshake 1.
    if (a.name !== 'ApiVersions' && a.name !== 'SaslHandshake') assert.ok(a.min >= flex, `${a.name} starts below its flexible floor`);
  }
  assert.equal(
    s.scope.data.map((d) => [d.name, d.min, d.max]),
    [
      ['ConsumerProtocolSubscription', 0, 3],
      ['ConsumerProtocolAssignment', 0, 3],
    ],
  );
  // The naive encoder keeps unknown tags under the same key the codec uses.
  assert.is(UNKNOWN_TAGS, unknownTaggedFields);
});

// ------------------------------------------------------------------ bodies, per API

const byApi = new Map<string, ScopedMessage[]>();
for (const s of scopedMessages()) byApi.set(s.api, [...(byApi.get(s.api) ?? []), s]);

let totalBodies = 0;

for (const [api, messages] of byApi) {
  test(`${api}: naive bytes = production bytes, decode gives the body back, re-encode is identical`, () => {
    const failures: string[] = [];
    for (const s of messages) {
      const codec = codecFor(s);
      for (const v of versions(s)) {
        const rng = new Rng(SEED ^ (s.message.name.length * 7919) ^ (v * 104729) ^ (s.kind === 'response' ? 0x1000 : 0));
        for (let i = 0; i < BODIES_PER_VERSION; i++) {
          // The first body of each version is empty: every field takes its default.
          const body = i === 0 ? {} : randomBody(rng, s.message, v, s.min, s.max);
          const where = `${label(s, v)} body #${i}`;
          let expectedBytes: Buffer;
          try {
            expectedBytes = naiveEncode(s.message, v, body);
          } catch (e) {
            failures.push(`${where}: the naive encoder failed: ${(e as Error).message}\n${show(body)}`);
            continue;
          }
          totalBodies++;
          let bytes: Buffer;
          try {
            bytes = prodEncode(codec, body, v);
          } catch (e) {
            failures.push(`${where}: production encode threw ${(e as Error).message}\nbody ${show(body)}`);
            continue;
          }
          if (!bytes.equals(expectedBytes)) {
            failures.push(`${where}: (a) bytes differ\n  production ${hex(bytes)}\n  naive      ${hex(expectedBytes)}\nbody ${show(body)}`);
            continue;
          }
          let decoded: unknown;
          try {
            decoded = prodDecode(codec, expectedBytes, v);
          } catch (e) {
            failures.push(`${where}: decode threw ${(e as Error).message}\nbytes ${hex(expectedBytes)}`);
            continue;
          }
          const d = diff(decoded, expectedDecoded(s.message, v, s.min, s.max, body));
          if (d) {
            failures.push(`${where}: (b) decoded body differs at ${d}\nbytes ${hex(expectedBytes)}`);
            continue;
          }
          const again = prodEncode(codec, decoded, v);
          if (!again.equals(expectedBytes)) failures.push(`${where}: (c) re-encode differs\n  re-encoded ${hex(again)}\n  original   ${hex(expectedBytes)}`);
        }
      }
    }
    assert.ok(failures.length === 0, report(failures));
  });
}

test('the random bodies contain what they are meant to exercise', () => {
  // The same generator and seeds as above: a weaker generator would make the round trips mean less.
  const seen = {
    nulls: 0,
    emptyArrays: 0,
    taggedNonDefault: 0,
    taggedDefault: 0,
    unknownTags: 0,
    int64Min: 0,
    int64Max: 0,
    int64AsNumber: 0,
    multiByteStrings: 0,
    uuids: 0,
    zeroUuids: 0,
    omitted: 0,
    nullStructs: 0,
    longStrings: 0,
  };
  const walk = (fields: NField[], s: Record<string, unknown>, v: number): void => {
    if ((s as { [UNKNOWN_TAGS]?: RawTag[] })[UNKNOWN_TAGS]) seen.unknownTags++;
    for (const f of fields) {
      if (!inRange(f.versions, v)) continue;
      const x = s[prop(f)];
      if (x === undefined) {
        seen.omitted++;
        continue;
      }
      if (isTaggedAt(f, v)) {
        // Equal to its default (so not written) or not: compare what a decoder would give.
        const one: NMessage = { name: 'One', type: 'data', validVersions: `${v}`, flexibleVersions: `${v}`, fields: [f] };
        if (diff(expectedDecoded(one, v, v, v, { [prop(f)]: x }), expectedDecoded(one, v, v, v, {})) === null) seen.taggedDefault++;
        else seen.taggedNonDefault++;
      }
      if (x === null) {
        seen.nulls++;
        if (f.fields && !f.type.startsWith('[]')) seen.nullStructs++;
        continue;
      }
      if (Array.isArray(x)) {
        if (x.length === 0) seen.emptyArrays++;
        if (f.fields) for (const e of x) walk(f.fields, e as Record<string, unknown>, v);
        continue;
      }
      if (f.fields) walk(f.fields, x as Record<string, unknown>, v);
      else if (f.type === 'int64') {
        if (x === -(2n ** 63n)) seen.int64Min++;
        if (x === 2n ** 63n - 1n) seen.int64Max++;
        if (typeof x === 'number') seen.int64AsNumber++;
      } else if (f.type === 'uuid') {
        if (x === 'AAAAAAAAAAAAAAAAAAAAAA') seen.zeroUuids++;
        else seen.uuids++;
      } else if (f.type === 'string') {
        if (Buffer.byteLength(x as string) !== (x as string).length) seen.multiByteStrings++;
        if (Buffer.byteLength(x as string) >= 127) seen.longStrings++;
      }
    }
  };
  for (const s of scopedMessages()) {
    for (const v of versions(s)) {
      const rng = new Rng(SEED ^ (s.message.name.length * 7919) ^ (v * 104729) ^ (s.kind === 'response' ? 0x1000 : 0));
      for (let i = 1; i < BODIES_PER_VERSION; i++) walk(s.message.fields, randomBody(rng, s.message, v, s.min, s.max), v);
    }
  }
  console.log(`  generated features: ${JSON.stringify(seen)}`);
  // One nullable struct in scope (ConsumerGroupHeartbeat's Assignment, 2 versions): fewer of those.
  for (const [k, n] of Object.entries(seen)) assert.ok(n >= (k === 'nullStructs' ? 3 : 50), `only ${n} ${k}`);
});

test('bodies checked', () => {
  // 20 APIs' worth of messages (18 APIs x request/response + 2 data structures), every version.
  const expected = scopedMessages().reduce((n, s) => n + (s.max - s.min + 1) * BODIES_PER_VERSION, 0);
  assert.is(totalBodies, expected);
  console.log(`  messages-roundtrip: ${totalBodies} bodies over ${scopedMessages().length} message types`);
});

// ------------------------------------------------------------------ array count fit checks

/**
 * Bodies holding one array field with `n` elements of all-default (that is, smallest) values, for
 * every array field of the message at any depth (its ancestors hold one default element each).
 */
function minimalArrayBodies(fields: NField[], v: number, n: number, path = ''): { path: string; body: Record<string, unknown> }[] {
  const out: { path: string; body: Record<string, unknown> }[] = [];
  for (const f of fields) {
    if (!inRange(f.versions, v)) continue;
    const p = `${path}/${prop(f)}`;
    if (f.type.startsWith('[]')) {
      const element = f.fields ? {} : defaultOf({ ...f, type: f.type.slice(2), default: undefined });
      out.push({ path: p, body: { [prop(f)]: Array.from({ length: n }, () => element) } });
    }
    if (f.fields) {
      for (const inner of minimalArrayBodies(f.fields, v, n, p)) {
        out.push({ path: inner.path, body: { [prop(f)]: f.type.startsWith('[]') ? [inner.body] : inner.body } });
      }
    }
  }
  return out;
}

test('arrays of many smallest-possible elements decode (the count fit check never refuses valid input)', () => {
  const failures: string[] = [];
  let cases = 0;
  for (const s of scopedMessages()) {
    const codec = codecFor(s);
    for (const v of versions(s)) {
      for (const n of [1, 200]) {
        for (const { path, body } of minimalArrayBodies(s.message.fields, v, n)) {
          cases++;
          const where = `${label(s, v)} ${path} x${n}`;
          try {
            const bytes = naiveEncode(s.message, v, body);
            const prod = prodEncode(codec, body, v);
            if (!prod.equals(bytes)) failures.push(`${where}: bytes differ\n  ${hex(prod)}\n  ${hex(bytes)}`);
            const d = diff(prodDecode(codec, bytes, v), expectedDecoded(s.message, v, s.min, s.max, body));
            if (d) failures.push(`${where}: ${d}`);
          } catch (e) {
            failures.push(`${where}: ${(e as Error).message}`);
          }
        }
      }
    }
  }
  console.log(`  minimal-element arrays: ${cases} cases`);
  assert.ok(cases > 500, `only ${cases} cases`);
  assert.ok(failures.length === 0, report(failures));
});

// ------------------------------------------------------------------ unknown tagged fields

test('an unknown tag spliced into naive bytes is kept by the decoder and re-encoded byte for byte', () => {
  const rng = new Rng(SEED + 1);
  const failures: string[] = [];
  let cases = 0;
  for (const s of scopedMessages()) {
    const codec = codecFor(s);
    for (const v of versions(s)) {
      if (!isFlexible(s.message, v)) continue;
      for (let i = 0; i < 6; i++) {
        // A body whose top-level tagged section is empty, so the bytes end with its count, 0x00.
        const body = randomBody(rng, s.message, v, s.min, s.max);
        delete (body as { [UNKNOWN_TAGS]?: RawTag[] })[UNKNOWN_TAGS];
        for (const f of s.message.fields) if (isTaggedAt(f, v)) delete body[prop(f)];
        const plain = naiveEncode(s.message, v, body);
        if (plain[plain.length - 1] !== 0) {
          failures.push(`${label(s, v)}: naive bytes do not end with an empty tagged section`);
          continue;
        }
        const known = new Set(s.message.fields.filter((f) => isTaggedAt(f, v)).map((f) => f.tag!));
        let tag = rng.pick([7, 100, 127, 128, 5000, 2 ** 31 - 1]);
        while (known.has(tag)) tag++;
        const data = i === 5 ? rng.bytes(200) : rng.bytes(rng.int(0, 9));
        const spliced = Buffer.concat([plain.subarray(0, plain.length - 1), uvarintBytes(1), uvarintBytes(tag), uvarintBytes(data.length), data]);
        cases++;
        try {
          const decoded = prodDecode(codec, spliced, v) as { [unknownTaggedFields]?: RawTag[] };
          const kept = decoded[unknownTaggedFields];
          const d = diff(kept ?? null, [{ tag, data }]);
          if (d) failures.push(`${label(s, v)}: unknown tag ${tag} not kept: ${d}`);
          const expected = expectedDecoded(s.message, v, s.min, s.max, { ...body, [UNKNOWN_TAGS]: [{ tag, data }] });
          const d2 = diff(decoded, expected);
          if (d2) failures.push(`${label(s, v)}: body differs at ${d2}`);
          const again = prodEncode(codec, decoded, v);
          if (!again.equals(spliced)) failures.push(`${label(s, v)}: re-encode differs\n  ${hex(again)}\n  ${hex(spliced)}`);
        } catch (e) {
          failures.push(`${label(s, v)}: ${(e as Error).message}\n${hex(spliced)}`);
        }
      }
    }
  }
  console.log(`  spliced unknown tags: ${cases} cases`);
  assert.ok(cases > 300, `only ${cases} cases`);
  assert.ok(failures.length === 0, report(failures));
});

test('unknown tags mixed with known ones, on nested structs too, keep their order and bytes', () => {
  // Fetch v17 request: partitions carry known tag 0 (ReplicaDirectoryId, v17+) and tag 1 is
  // unknown in v17 (HighWatermark is v18+). The top level knows tags 0 and 1.
  const fetch = message('FetchRequest');
  const body = {
    replicaState: { replicaId: 3, replicaEpoch: 9n },
    clusterId: 'c1',
    topics: [
      {
        topicId: 'AAAAAAAAAAAAAAAAAAAAAQ',
        partitions: [
          {
            partition: 4,
            fetchOffset: 10n,
            replicaDirectoryId: 'AQIDBAUGBwgJCgsMDQ4PEA',
            [UNKNOWN_TAGS]: [
              { tag: 1, data: Buffer.from([0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe]) },
              { tag: 9, data: Buffer.from([]) },
            ],
          },
        ],
      },
    ],
    [UNKNOWN_TAGS]: [{ tag: 2, data: Buffer.from('hi') }],
  };
  const codec = codecFor(scopedMessages().find((s) => s.message.name === 'FetchRequest')!);
  const bytes = naiveEncode(fetch, 17, body);
  // The partition's tagged section: 3 fields, tags 0 (16-byte uuid), 1, 9.
  const uuid = Buffer.from('AQIDBAUGBwgJCgsMDQ4PEA', 'base64url');
  const partitionTags = Buffer.concat([Buffer.from([3, 0, 16]), uuid, Buffer.from([1, 8, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe, 9, 0])]);
  assert.ok(bytes.includes(partitionTags), 'naive partition tags');
  assert.is(hex(prodEncode(codec, body, 17)), hex(bytes));
  const decoded = prodDecode(codec, bytes, 17) as {
    topics: { partitions: { replicaDirectoryId: string; highWatermark: bigint; [unknownTaggedFields]?: RawTag[] }[] }[];
    [unknownTaggedFields]?: RawTag[];
  };
  const p = decoded.topics[0]!.partitions[0]!;
  assert.is(p.replicaDirectoryId, 'AQIDBAUGBwgJCgsMDQ4PEA');
  // v17 has no HighWatermark: tag 1 stays unknown and the field keeps its default.
  assert.is(p.highWatermark, 2n ** 63n - 1n);
  assert.equal(
    p[unknownTaggedFields]!.map((t) => [t.tag, hex(t.data)]),
    [
      [1, '7f ff ff ff ff ff ff fe'],
      [9, ''],
    ],
  );
  assert.equal(
    decoded[unknownTaggedFields]!.map((t) => [t.tag, t.data.toString()]),
    [[2, 'hi']],
  );
  assert.is(hex(prodEncode(codec, decoded, 17)), hex(bytes));
  // The same body as v18: tag 1 is HighWatermark there, read from the unknown tag's bytes.
  const asV18 = prodDecode(codec, naiveEncode(fetch, 18, body), 18) as typeof decoded;
  assert.is(asV18.topics[0]!.partitions[0]!.highWatermark, 2n ** 63n - 2n);
  assert.equal(
    asV18.topics[0]!.partitions[0]![unknownTaggedFields]!.map((t) => t.tag),
    [9],
  );
});

test('an unknown tag given twice is refused when encoding, with the path of the struct that holds it', () => {
  const dup = [
    { tag: 7, data: Buffer.from([1]) },
    { tag: 7, data: Buffer.from([2]) },
  ];
  const pathOf = (f: () => unknown): string => {
    try {
      f();
    } catch (e) {
      assert.ok(isKafkaProtocolError(e), String(e));
      assert.is((e as { reason: string }).reason, 'invalid-value');
      return (e as { path: string }).path;
    }
    return 'no error';
  };
  // A struct with known tagged fields: the top level of ApiVersionsResponse v3.
  assert.is(
    pathOf(() => encodeResponseFrame(18, 3, 1, { errorCode: 0, apiKeys: [], [unknownTaggedFields]: dup })),
    '',
  );
  // Structs without known tagged fields: the error must not blame their last field.
  assert.is(
    pathOf(() => encodeResponseFrame(12, 4, 1, { errorCode: 1, [unknownTaggedFields]: dup })),
    '',
    'HeartbeatResponse top level',
  );
  assert.is(
    pathOf(() => encodeResponseFrame(18, 3, 1, { errorCode: 0, apiKeys: [{ apiKey: 1, minVersion: 0, maxVersion: 1, [unknownTaggedFields]: dup }] })),
    'apiKeys/0',
    'ApiVersionsResponse apiKeys/0',
  );
});

// ------------------------------------------------------------------ whole frames

interface FrameCase {
  correlationId: number;
  clientId: string | null;
  headerTags?: RawTag[];
}

function randomFrameCase(rng: Rng, flexible: boolean): FrameCase {
  const c: FrameCase = {
    correlationId: rng.pick([0, 1, -1, 2 ** 31 - 1, -(2 ** 31), rng.int(-(2 ** 31), 2 ** 31 - 1)]),
    clientId: rng.chance(0.15) ? null : rng.chance(0.1) ? '' : randomString(rng),
  };
  if (flexible && rng.chance(0.25)) c.headerTags = [{ tag: rng.int(0, 5), data: rng.bytes(rng.int(0, 4)) }];
  return c;
}

function headerTagsOf(decoded: { headerTaggedFields?: RawTag[] }): unknown {
  return decoded.headerTaggedFields?.map((t) => ({ tag: t.tag, data: Buffer.from(t.data) })) ?? null;
}

test('request frames: header v1/v2, client id, body, against the naive frame', () => {
  const rng = new Rng(SEED + 2);
  const failures: string[] = [];
  let cases = 0;
  for (const s of scopedMessages()) {
    if (s.kind !== 'request') continue;
    for (const v of versions(s)) {
      const flexible = isFlexible(s.message, v);
      for (let i = 0; i < FRAMES_PER_VERSION; i++) {
        cases++;
        // Header tags are checked on their own below (encodeRequestFrame drops them: see there).
        const c = randomFrameCase(rng, false);
        const body = randomBody(rng, s.message, v, s.min, s.max);
        const naive = naiveRequestFrame(s.message, { apiVersion: v, correlationId: c.correlationId, clientId: c.clientId, body, headerTaggedFields: c.headerTags });
        const where = `${label(s, v)} frame #${i}`;
        try {
          const frame = encodeRequestFrame({
            apiKey: s.apiKey!,
            apiVersion: v,
            correlationId: c.correlationId,
            clientId: c.clientId,
            body,
            ...(c.headerTags ? { headerTaggedFields: c.headerTags.map((t) => ({ tag: t.tag, data: Buffer.from(t.data) })) } : {}),
          });
          if (!frame.equals(naive.bytes)) {
            failures.push(`${where}: frame differs\n  production ${hex(frame)}\n  naive      ${hex(naive.bytes)}`);
            continue;
          }
          // Header v2 iff flexible: the byte after the client id is the header's tag count.
          const decoded = decodeRequestFrame(naive.bytes);
          const d =
            diff([decoded.apiKey, decoded.apiVersion, decoded.correlationId, decoded.clientId], [s.apiKey, v, c.correlationId, c.clientId]) ??
            diff(headerTagsOf(decoded as never), c.headerTags && c.headerTags.length ? c.headerTags.map((t) => ({ tag: t.tag, data: Buffer.from(t.data) })) : null, '/headerTaggedFields') ??
            diff(decoded.body, expectedDecoded(s.message, v, s.min, s.max, body), '/body');
          if (d) failures.push(`${where}: decoded frame differs at ${d}\n${hex(naive.bytes)}`);
        } catch (e) {
          failures.push(`${where}: threw ${(e as Error).message}\n${hex(naive.bytes)}`);
        }
      }
    }
  }
  console.log(`  request frames: ${cases}`);
  assert.ok(failures.length === 0, report(failures));
});

test('request header v2 tagged fields: decoded into headerTaggedFields, and written back by encodeRequestFrame', () => {
  // Heartbeat v4 (flexible, header v2) with one header tag: tag 5, 2 bytes.
  const hb = message('HeartbeatRequest');
  const headerTaggedFields = [{ tag: 5, data: Buffer.from([0xbe, 0xef]) }];
  const request = { apiVersion: 4, correlationId: 9, clientId: 'c', body: { groupId: 'g', generationId: 1, memberId: 'm' }, headerTaggedFields };
  const naive = naiveRequestFrame(hb, request).bytes;
  //            size        key   ver   corr        client id header tags      body
  const text = '00 00 00 1a 00 0c 00 04 00 00 00 09 00 01 63 01 05 02 be ef 02 67 00 00 00 01 02 6d 00 00';
  assert.is(hex(naive), text.replace(/ +/g, ' '));
  const decoded = decodeRequestFrame(naive);
  assert.is(diff(headerTagsOf(decoded as never), headerTaggedFields), null);
  // Decode -> encode must be byte-exact: the header tags travel in RequestFrame.headerTaggedFields.
  const again = encodeRequestFrame(decoded);
  assert.is(hex(again), hex(naive), 'encodeRequestFrame(decodeRequestFrame(frame)) dropped the request header tags');
});

test('response frames: header v0/v1 (ApiVersions always v0), body, against the naive frame', () => {
  const rng = new Rng(SEED + 3);
  const failures: string[] = [];
  let cases = 0;
  for (const s of scopedMessages()) {
    if (s.kind !== 'response') continue;
    for (const v of versions(s)) {
      const headerV1 = s.apiKey !== 18 && isFlexible(s.message, v);
      for (let i = 0; i < FRAMES_PER_VERSION; i++) {
        cases++;
        const c = randomFrameCase(rng, headerV1);
        const body = randomBody(rng, s.message, v, s.min, s.max);
        // An ApiVersions answer with UNSUPPORTED_VERSION is written as v0, whatever was asked.
        const bodyVersion = s.apiKey === 18 && body['errorCode'] === 35 ? 0 : v;
        const naive = naiveResponseFrame(s.message, { apiVersion: v, bodyVersion, correlationId: c.correlationId, body, headerTaggedFields: c.headerTags });
        const where = `${label(s, v)} frame #${i}`;
        try {
          const tags = c.headerTags?.map((t) => ({ tag: t.tag, data: Buffer.from(t.data) }));
          const frame = encodeResponseFrame(s.apiKey!, v, c.correlationId, body, undefined, tags);
          if (!frame.equals(naive.bytes)) {
            failures.push(`${where}: frame differs\n  production ${hex(frame)}\n  naive      ${hex(naive.bytes)}`);
            continue;
          }
          const decoded: ResponseFrame = decodeResponseFrame(s.apiKey!, v, naive.bytes);
          const d =
            diff([decoded.correlationId, decoded.bodyVersion], [c.correlationId, bodyVersion]) ??
            diff(headerTagsOf(decoded as never), tags && tags.length ? tags : null, '/headerTaggedFields') ??
            diff(decoded.body, expectedDecoded(s.message, bodyVersion, s.min, s.max, body), '/body');
          if (d) failures.push(`${where}: decoded frame differs at ${d}\n${hex(naive.bytes)}`);
        } catch (e) {
          failures.push(`${where}: threw ${(e as Error).message}\n${hex(naive.bytes)}`);
        }
      }
    }
  }
  console.log(`  response frames: ${cases}`);
  assert.ok(failures.length === 0, report(failures));
});

test('response header: v1 for flexible versions adds exactly one tag-count byte; ApiVersions v3+ has none', () => {
  // Heartbeat v4 response (flexible): int32 size, int32 correlation id, 00 header tags, then
  // int32 throttle, int16 error, 00 body tags.
  const hb = encodeResponseFrame(12, 4, 7, { throttleTimeMs: 1, errorCode: 27 });
  assert.is(hex(hb), '00 00 00 0c 00 00 00 07 00 00 00 00 01 00 1b 00');
  // ApiVersions v3 response: header v0 (no tag byte) although the body is flexible.
  const av = encodeResponseFrame(18, 3, 7, { errorCode: 0, apiKeys: [{ apiKey: 18, minVersion: 0, maxVersion: 4 }], throttleTimeMs: 0 });
  assert.is(hex(av), '00 00 00 13 00 00 00 07 00 00 02 00 12 00 00 00 04 00 00 00 00 00 00');
  assert.is(decodeResponseFrame(18, 3, av).bodyVersion, 3);
});

// ------------------------------------------------------------------ ApiVersions UNSUPPORTED_VERSION

test('an ApiVersions UNSUPPORTED_VERSION answer is v0 for any requested version, even above the scope', () => {
  const res = message('ApiVersionsResponse');
  const def = API_DEFINITIONS.get(18)!;
  const body = { errorCode: 35, apiKeys: [{ apiKey: 18, minVersion: 0, maxVersion: 4 }] };
  for (const requested of [0, 1, 2, 3, 4, 5, 6, 7, 100, 32767]) {
    const naive = naiveResponseFrame(res, { apiVersion: requested, bodyVersion: 0, correlationId: 42, body });
    // v0 body: int16 error 35, int32 count 1, 3 x int16; no throttle, no tags; header v0.
    assert.is(hex(naive.bytes), '00 00 00 10 00 00 00 2a 00 23 00 00 00 01 00 12 00 00 00 04', `naive v${requested}`);
    const decoded = decodeResponseFrame(18, requested, naive.bytes);
    assert.is(decoded.bodyVersion, 0, `bodyVersion for v${requested}`);
    assert.is(decoded.correlationId, 42);
    assert.is(diff(decoded.body, expectedDecoded(res, 0, def.minVersion, def.maxVersion, body)), null);
    assert.is(hex(encodeResponseFrame(18, requested, 42, body)), hex(naive.bytes), `encode v${requested}`);
  }
  // Any other error code above the scope is a version kwire cannot read.
  const other = naiveResponseFrame(res, { apiVersion: 6, bodyVersion: 0, correlationId: 1, body: { errorCode: 0, apiKeys: [] } });
  try {
    decodeResponseFrame(18, 6, other.bytes);
    assert.unreachable('decoded ApiVersions v6 with error 0');
  } catch (e) {
    assert.ok(isKafkaProtocolError(e));
    assert.is((e as { reason: string }).reason, 'unsupported-version');
  }
});

test('frame-level errors are typed: unknown api, version outside the scope, bad size, trailing bytes', () => {
  const reasonOf = (f: () => unknown): string => {
    try {
      f();
    } catch (e) {
      assert.ok(isKafkaProtocolError(e), String(e));
      return (e as { reason: string }).reason;
    }
    return 'no error';
  };
  const hbReq = message('HeartbeatRequest');
  const good = naiveRequestFrame(hbReq, { apiVersion: 4, correlationId: 1, clientId: 'c', body: { groupId: 'g', generationId: 1, memberId: 'm' } }).bytes;
  assert.ok(decodeRequestFrame(good));
  const unknownApi = Buffer.from(good);
  unknownApi.writeInt16BE(999, 4);
  assert.is(
    reasonOf(() => decodeRequestFrame(unknownApi)),
    'unknown-api',
  );
  const oldVersion = Buffer.from(good);
  oldVersion.writeInt16BE(3, 6);
  assert.is(
    reasonOf(() => decodeRequestFrame(oldVersion)),
    'unsupported-version',
  );
  const badSize = Buffer.from(good);
  badSize.writeInt32BE(good.length, 0);
  assert.is(
    reasonOf(() => decodeRequestFrame(badSize)),
    'invalid-length',
  );
  const trailing = Buffer.concat([good, Buffer.from([0])]);
  trailing.writeInt32BE(trailing.length - 4, 0);
  assert.is(
    reasonOf(() => decodeRequestFrame(trailing)),
    'trailing-bytes',
  );
  assert.is(
    reasonOf(() => encodeRequestFrame({ apiKey: 12, apiVersion: 5, correlationId: 1, clientId: null, body: {} })),
    'unsupported-version',
  );
  assert.is(
    reasonOf(() => encodeRequestFrame({ apiKey: 12, apiVersion: 3, correlationId: 1, clientId: null, body: {} })),
    'unsupported-version',
  );
  // Null where the version does not allow it is refused when encoding, not written.
  assert.is(
    reasonOf(() => encodeRequestFrame({ apiKey: 12, apiVersion: 4, correlationId: 1, clientId: null, body: { groupId: null } })),
    'invalid-value',
  );
  // Metadata v9 topic names are not nullable (v10+ are).
  assert.ok(inRange(message('MetadataRequest').fields[0]!.fields![1]!.nullableVersions, 10));
  assert.is(
    reasonOf(() => encodeRequestFrame({ apiKey: 3, apiVersion: 9, correlationId: 1, clientId: null, body: { topics: [{ name: null }] } })),
    'invalid-value',
  );
});

test.run();
