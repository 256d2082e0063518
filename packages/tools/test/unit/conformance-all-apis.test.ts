// The conformance runner over test-fixtures/ with the whole protocol (ALL_API_DEFINITIONS): what
// real clients send outside the consumer's scope (librdkafka 2.0.2's older versions, the Java
// producer's transaction APIs) now decodes and re-encodes byte for byte instead of being skipped,
// and every API and version a 4.4.0 broker advertises in its ApiVersions answer is implemented.
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ALL_API_DEFINITIONS } from '@kwire/protocol/all-apis';
import { API_DEFINITIONS, decodeResponseFrame } from '@kwire/protocol';
import { formatMarkdownTable, formatReport, readCapture, runConformance, StreamFile, type ConformanceReport, type ExchangeLine } from '../../src/index.js';

const fixtures = resolve(dirname(fileURLToPath(import.meta.url)), '../../../../../test-fixtures');

let report: ConformanceReport;
test.before(() => {
  report = runConformance(fixtures, { definitions: ALL_API_DEFINITIONS });
});

test('every frame passes; the only frame skipped is the ApiVersions v99 request kwire sent on purpose', () => {
  assert.equal(
    report.failures.map((f) => `${f.capture} ${f.api} v${f.version}: ${f.message}`),
    [],
    formatReport(report),
  );
  assert.ok(report.ok);
  const skipped = report.rows.filter((r) => r.skipped > 0).map((r) => `${r.name} v${r.version} x${r.skipped}`);
  assert.equal(skipped, ['ApiVersions v99 x1']);
  assert.is(report.totals.skipped, 1);
  // The coverage requirement stays the consumer's scope: 67 API versions and 8 embedded ones.
  assert.is(report.coverage.length, [...API_DEFINITIONS.values()].reduce((n, a) => n + a.maxVersion - a.minVersion + 1, 0) + 8);
  assert.ok(report.coverage.every((c) => c.covered));
});

test('kcat (librdkafka 2.0.2) and the Java clients decode with no frame skipped', () => {
  for (const c of report.captures) {
    if (c.name.startsWith('kwire/')) continue;
    assert.is(c.skipped, 0, `${c.name}: ${c.skipped} skipped`);
    assert.is(c.failed, 0, c.name);
  }
  const kcat = report.captures.find((c) => c.name.startsWith('kcat-'))!;
  assert.ok(kcat.passed >= 70, `kcat: ${kcat.passed} frames`);
  const row = (name: string, v: number) => report.rows.find((r) => r.name === name && r.version === v);
  // librdkafka's pre-flexible versions, as requests and responses.
  for (const [name, v] of [
    ['Produce', 7],
    ['Fetch', 11],
    ['JoinGroup', 5],
    ['Heartbeat', 3],
    ['LeaveGroup', 1],
    ['SyncGroup', 3],
  ] as const) {
    const r = row(name, v);
    assert.ok(r && r.requestsPassed > 0 && r.responsesPassed > 0 && !r.inScope, `${name} v${v}`);
    assert.ok(r!.sources.includes('librdkafka 2.0.2'), `${name} v${v} from librdkafka`);
  }
  // The Java producer's transaction APIs, which the consumer does not model.
  for (const [name, v] of [
    ['InitProducerId', 5],
    ['EndTxn', 5],
  ] as const) {
    const r = row(name, v);
    assert.ok(r && r.passed === r.frames && r.frames > 0, `${name} v${v}`);
  }
  assert.match(formatMarkdownTable(report), /\| InitProducerId \(22\) \|\s+5 \|\s+\d+ \|\s+\d+ \|\s+0 \|\s+0 \| no \(all-apis\)/);
});

test("every API and version in a 4.4.0 broker's ApiVersions answer is in ALL_API_DEFINITIONS", () => {
  const dir = join(fixtures, 'java-4.4.0', 'console');
  const capture = readCapture(dir);
  const line = capture.lines.find((l): l is ExchangeLine => l.type === 'exchange' && l.apiKey === 18 && l.apiVersion >= 3 && l.response !== undefined)!;
  const file = new StreamFile(dir, line.conn, 'broker');
  const frame = file.read(line.response!.offset, line.response!.length);
  file.close();
  assert.ok(Buffer.isBuffer(frame));
  const body = decodeResponseFrame(18, line.apiVersion, frame as Buffer).body as { errorCode: number; apiKeys: { apiKey: number; minVersion: number; maxVersion: number }[] };
  assert.is(body.errorCode, 0);
  assert.ok(body.apiKeys.length > 60, `${body.apiKeys.length} APIs advertised`);
  const missing: string[] = [];
  for (const k of body.apiKeys) {
    const def = ALL_API_DEFINITIONS.get(k.apiKey);
    // Produce: 4.x advertises v0 for the sake of librdkafka's version check (KAFKA-18659) but its
    // schema starts at v3 (KIP-896) and the broker answers v0-2 with UNSUPPORTED_VERSION; those
    // carry magic 0/1 message sets. Everything from v3 is implemented.
    const min = k.apiKey === 0 ? Math.max(k.minVersion, 3) : k.minVersion;
    if (!def || min < def.minVersion || k.maxVersion > def.maxVersion) missing.push(`${k.apiKey} v${k.minVersion}-${k.maxVersion}`);
  }
  assert.equal(missing, []);
  assert.is(body.apiKeys.find((k) => k.apiKey === 0)?.minVersion, 0);
  // And most of them lie outside the consumer's definitions.
  assert.ok(body.apiKeys.filter((k) => !API_DEFINITIONS.has(k.apiKey)).length > 30);
});

test.run();
