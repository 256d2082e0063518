// The whole protocol (src/all-apis, '@kwire/protocol/all-apis'): every API of Kafka 4.4.0's
// schemas at every valid version, the non-flexible ones below the consumer's floor included,
// against the naive encoder of test/unit/naive/ reading test/schemas-all.json:
//   (a) the production encoder writes exactly the naive encoder's bytes;
//   (b) the production decoder gives back the body (defaults filled in);
//   (c) re-encoding the decoded body gives the same bytes;
// and whole frames (header v1/v2, response header v0/v1) through the frame functions given
// ALL_API_DEFINITIONS. The consumer's definitions must be untouched by all of this.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ALL_API_DEFINITIONS, FIELD_VERSIONS, type FieldVersions } from '../../src/all-apis/index.js';
import { API_DEFINITIONS, decodeRequestFrame, decodeResponseFrame, encodeRequestFrame, encodeResponseFrame, isKafkaProtocolError, Reader, Writer } from '../../src/index.js';
import { diff, hex } from './naive/compare.js';
import { naiveEncode, naiveRequestFrame, naiveResponseFrame } from './naive/encoder.js';
import { expectedDecoded, randomBody, Rng } from './naive/random.js';
import { allScopedMessages, loadAllSchemas, loadSchemas, type NField, type ScopedMessage } from './naive/schema.js';

const SEED = 0xa11_a915;
const BODIES_PER_VERSION = 10;

const show = (body: unknown): string => JSON.stringify(body, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v instanceof Uint8Array ? `<${hex(v)}>` : v)).slice(0, 400);

function codec(s: ScopedMessage) {
  const api = ALL_API_DEFINITIONS.get(s.apiKey!);
  if (!api) throw new Error(`no definition for ${s.api}`);
  return s.kind === 'request'
    ? { encode: (w: Writer, b: unknown, v: number) => api.encodeRequest(w, b as never, v), decode: (r: Reader, v: number) => api.decodeRequest(r, v) }
    : { encode: (w: Writer, b: unknown, v: number) => api.encodeResponse(w, b as never, v), decode: (r: Reader, v: number) => api.decodeResponse(r, v) };
}

const writer = new Writer();
function encode(c: ReturnType<typeof codec>, body: unknown, v: number): Buffer {
  try {
    c.encode(writer, body, v);
  } catch (e) {
    writer.abandon();
    throw e;
  }
  return writer.finish();
}

test('every API of the schemas, every valid version; the consumer keeps its own ranges', () => {
  const all = loadAllSchemas();
  assert.is(all.kafkaVersion, '4.4.0');
  assert.is(ALL_API_DEFINITIONS.size, all.scope.apis.length);
  // 4.4.0 defines api keys 0-94; 4-7 (LeaderAndIsr, StopReplica, UpdateMetadata, ControlledShutdown)
  // were ZooKeeper-only and have no valid version left.
  assert.is(ALL_API_DEFINITIONS.size, 91);
  for (const a of all.scope.apis) {
    const req = all.messages[`${a.name}Request`]!;
    const def = ALL_API_DEFINITIONS.get(req.apiKey!)!;
    assert.is(def.name, a.name);
    assert.is(`${def.minVersion}-${def.maxVersion}`, `${a.min}-${a.max}`);
    const [lo, hi] = req.validVersions.includes('-') ? req.validVersions.split('-').map(Number) : [Number(req.validVersions), Number(req.validVersions)];
    assert.ok(def.minVersion === lo && def.maxVersion === hi, `${a.name}: v${def.minVersion}-${def.maxVersion}, schema ${req.validVersions}`);
  }
  // Versions below the flexible floor that librdkafka 2.0.2 and kafkajs 2.2.4 send.
  for (const [key, v] of [
    [0, 3],
    [0, 7],
    [1, 4],
    [1, 11],
    [3, 0],
    [3, 4],
    [8, 2],
    [9, 1],
    [10, 0],
    [11, 0],
    [11, 5],
    [12, 0],
    [13, 1],
    [14, 0],
    [22, 0],
  ] as const) {
    const def = ALL_API_DEFINITIONS.get(key)!;
    assert.ok(v >= def.minVersion && v <= def.maxVersion, `${def.name} v${v}`);
  }
  // The consumer's definitions are the consumer's scope, unchanged (the consumer never imports all-apis).
  const consumer = loadSchemas().scope.apis;
  assert.is(API_DEFINITIONS.size, consumer.length);
  for (const a of consumer) {
    const def = [...API_DEFINITIONS.values()].find((d) => d.name === a.name)!;
    assert.is(`${def.minVersion}-${def.maxVersion}`, `${a.min}-${a.max}`);
  }
});

test('FIELD_VERSIONS gives every field of every message its versions, nested structs included', () => {
  const all = loadAllSchemas();
  let checked = 0;
  const walk = (fields: NField[], table: FieldVersions, where: string) => {
    assert.equal(Object.keys(table).sort(), fields.map((f) => f.name.charAt(0).toLowerCase() + f.name.slice(1)).sort(), where);
    for (const f of fields) {
      const [lo, hi, sub] = table[f.name.charAt(0).toLowerCase() + f.name.slice(1)]!;
      const text = hi === 32767 ? `${lo}+` : lo === hi ? `${lo}` : `${lo}-${hi}`;
      assert.is(text, f.versions, `${where}.${f.name}`);
      checked++;
      if (f.fields) walk(f.fields, sub!, `${where}.${f.name}`);
      else assert.is(sub, undefined);
    }
  };
  for (const [name, m] of Object.entries(all.messages)) walk(m.fields, FIELD_VERSIONS[name]!, name);
  assert.ok(checked > 1500, `${checked} fields`);
});

let bodies = 0;
const byApi = new Map<string, ScopedMessage[]>();
for (const s of allScopedMessages()) byApi.set(s.api, [...(byApi.get(s.api) ?? []), s]);

test('naive bytes = production bytes, decode gives the body back, re-encode is identical (every API, every version)', () => {
  const failures: string[] = [];
  for (const [, messages] of byApi) {
    for (const s of messages) {
      const c = codec(s);
      for (let v = s.min; v <= s.max; v++) {
        const rng = new Rng(SEED ^ (s.message.name.length * 7919) ^ (v * 104729) ^ (s.kind === 'response' ? 0x1000 : 0) ^ (s.apiKey! << 20));
        for (let i = 0; i < BODIES_PER_VERSION; i++) {
          const body = i === 0 ? {} : randomBody(rng, s.message, v, s.min, s.max);
          const where = `${s.message.name} v${v} body #${i}`;
          try {
            const expected = naiveEncode(s.message, v, body);
            bodies++;
            const bytes = encode(c, body, v);
            if (!bytes.equals(expected)) {
              failures.push(`${where}: (a) bytes differ\n  production ${hex(bytes)}\n  naive      ${hex(expected)}\nbody ${show(body)}`);
              continue;
            }
            const r = new Reader(expected);
            const decoded = c.decode(r, v);
            if (r.offset !== expected.length) failures.push(`${where}: decoder stopped at ${r.offset} of ${expected.length}`);
            const d = diff(decoded, expectedDecoded(s.message, v, s.min, s.max, body));
            if (d) failures.push(`${where}: (b) decoded body differs at ${d}`);
            else if (!encode(c, decoded, v).equals(expected)) failures.push(`${where}: (c) re-encode differs`);
          } catch (e) {
            failures.push(`${where}: ${(e as Error).message}\nbody ${show(body)}`);
          }
        }
      }
    }
  }
  assert.ok(failures.length === 0, `${failures.length} failure(s):\n${failures.slice(0, 5).join('\n---\n')}`);
  const expected = allScopedMessages().reduce((n, s) => n + (s.max - s.min + 1) * BODIES_PER_VERSION, 0);
  assert.is(bodies, expected);
  console.log(`  all-apis: ${bodies} bodies over ${allScopedMessages().length} message types`);
});

test('whole frames of every API and version through the frame functions given ALL_API_DEFINITIONS', () => {
  const failures: string[] = [];
  let frames = 0;
  const rng = new Rng(SEED + 7);
  for (const [, [req, res]] of byApi) {
    for (let v = req!.min; v <= req!.max; v++) {
      const correlationId = 1000 + v;
      const reqBody = randomBody(rng, req!.message, v, req!.min, req!.max);
      const resBody = randomBody(rng, res!.message, v, res!.min, res!.max);
      try {
        const naiveReq = naiveRequestFrame(req!.message, { apiVersion: v, correlationId, clientId: 'all-apis', body: reqBody }).bytes;
        const ours = encodeRequestFrame({ apiKey: req!.apiKey!, apiVersion: v, correlationId, clientId: 'all-apis', body: reqBody }, undefined, ALL_API_DEFINITIONS);
        if (!Buffer.from(ours).equals(naiveReq)) failures.push(`${req!.api} v${v} request frame differs`);
        const back = decodeRequestFrame(naiveReq, ALL_API_DEFINITIONS);
        assert.is(back.correlationId, correlationId);
        if (!encodeRequestFrame(back, undefined, ALL_API_DEFINITIONS).equals(naiveReq)) failures.push(`${req!.api} v${v} request frame re-encode differs`);
        // ApiVersions answers with UNSUPPORTED_VERSION are v0 bodies: keep the random ones clear of it.
        if (req!.apiKey === 18) (resBody as { errorCode?: number }).errorCode = 0;
        const naiveRes = naiveResponseFrame(res!.message, { apiVersion: v, correlationId, body: resBody }).bytes;
        const decoded = decodeResponseFrame(res!.apiKey!, v, naiveRes, ALL_API_DEFINITIONS);
        const again = encodeResponseFrame(res!.apiKey!, v, correlationId, decoded.body, undefined, decoded.headerTaggedFields, ALL_API_DEFINITIONS);
        if (!again.equals(naiveRes)) failures.push(`${res!.api} v${v} response frame re-encode differs`);
        frames += 2;
      } catch (e) {
        failures.push(`${req!.api} v${v}: ${(e as Error).message}`);
      }
    }
  }
  assert.ok(failures.length === 0, failures.slice(0, 8).join('\n'));
  assert.ok(frames > 400, `${frames} frames`);
});

test('without ALL_API_DEFINITIONS the frame functions still refuse what the consumer does not model', () => {
  const frame = encodeRequestFrame({ apiKey: 15, apiVersion: 5, correlationId: 1, clientId: 'x', body: { groups: ['g'] } }, undefined, ALL_API_DEFINITIONS);
  assert.is(decodeRequestFrame(frame, ALL_API_DEFINITIONS).apiKey, 15);
  try {
    decodeRequestFrame(frame);
    assert.unreachable('DescribeGroups decoded with the consumer definitions');
  } catch (e) {
    assert.ok(isKafkaProtocolError(e));
    assert.is((e as { reason: string }).reason, 'unknown-api');
  }
});

test.run();
