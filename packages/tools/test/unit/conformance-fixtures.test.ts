// The conformance runner over the committed captures in test-fixtures/: real clients (Java 4.4.0
// and 3.9.1, kcat) and kwire's own requests, with real brokers' responses. Every frame must decode
// and re-encode byte for byte, every manifest fact must hold, and every API and version of the
// codec's scope must have passed as a request and as a response. No broker needed.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ALL_API_DEFINITIONS } from '@kwire/protocol/all-apis';
import { API_DEFINITIONS } from '@kwire/protocol';
import { conformanceScope, formatMarkdownTable, formatReport, runConformance, type CaptureManifest, type ConformanceReport } from '../../src/index.js';

// dist/test/unit -> the repository root
const fixtures = resolve(dirname(fileURLToPath(import.meta.url)), '../../../../../test-fixtures');

let report: ConformanceReport;

test.before(() => {
  // The captures hold what real clients send outside the consumer's APIs (kafkajs and librdkafka's
  // older versions, the Java producer's transactions): their facts need the whole protocol.
  report = runConformance(fixtures, { definitions: ALL_API_DEFINITIONS });
});

test('every frame of every capture decodes and re-encodes byte for byte; every fact holds', () => {
  const failures = report.failures.map((f) => `${f.capture} conn ${f.conn} ${f.api} v${f.version} ${f.part}: ${f.message}`);
  assert.equal(failures, [], formatReport(report));
  assert.ok(report.ok);
  assert.ok(report.captures.length >= 10, `${report.captures.length} captures`);
  assert.ok(report.totals.passed > 1000, `${report.totals.passed} frames passed`);
});

test('the whole scope is covered: every API version as request and response, every embedded version', () => {
  const missing = report.coverage.filter((c) => !c.covered).map((c) => `${c.name} v${c.version}`);
  const apis = report.coverage.filter((c) => c.kind === 'api');
  process.stdout.write(
    `\n  coverage: ${apis.filter((c) => c.covered).length}/${apis.length} API versions, ${report.coverage.length - apis.length} embedded versions; missing: ${missing.join(', ') || 'none'}\n`,
  );
  assert.equal(missing, []);
  assert.ok(report.requireFullCoverage, 'test-fixtures/conformance.json asks for full coverage');
  let versions = 0;
  for (const api of API_DEFINITIONS.values()) versions += api.maxVersion - api.minVersion + 1;
  assert.is(apis.length, versions);
  assert.is(conformanceScope().length, versions + 8);
});

test('every capture has a manifest with facts, and real peers cover what they send', () => {
  for (const c of report.captures) {
    assert.ok(c.manifest, `${c.name}: manifest.json`);
    assert.ok(c.manifest!.facts, `${c.name}: facts`);
    assert.ok(c.facts.length > 0 && c.facts.every((f) => f.ok), `${c.name}: facts checked`);
  }
  // Versions the current Java client sends are covered by it, not only by kwire's own requests.
  const row = (name: string, v: number) => report.rows.find((r) => r.name === name && r.version === v);
  for (const [name, v] of [
    ['Fetch', 18],
    ['Metadata', 13],
    ['JoinGroup', 9],
    ['SyncGroup', 5],
    ['Heartbeat', 4],
    ['ConsumerGroupHeartbeat', 1],
    ['Produce', 13],
    ['SaslAuthenticate', 2],
    ['ShareGroupHeartbeat', 1],
    ['ShareGroupDescribe', 1],
    ['ShareFetch', 2],
    ['ShareAcknowledge', 2],
  ] as const) {
    assert.ok(row(name, v)?.sources.includes('apache-kafka-java 4.4.0'), `${name} v${v} from the Java 4.4.0 client`);
  }
  assert.ok(row('Fetch', 17)?.sources.includes('apache-kafka-java 3.9.1'), 'Fetch v17 from the Java 3.9.1 client');
  assert.ok(row('ApiVersions', 3)?.sources.includes('librdkafka 2.0.2'), 'ApiVersions v3 from kcat');
});

test('compressed batches of every codec were decompressed and rebuilt', () => {
  for (const codec of ['none', 'gzip', 'snappy', 'lz4', 'zstd']) assert.ok((report.codecs[codec] ?? 0) > 0, `${codec} batches`);
});

test('with the consumer definitions only, APIs and versions outside them are counted as skipped, not failed', () => {
  const consumerOnly = runConformance(join(fixtures, 'java-4.4.0', 'transactions'));
  const kcat = runConformance(join(fixtures, 'kcat-1.7.1'));
  const skippedApis = consumerOnly.rows.filter((r) => r.kind === 'api' && !API_DEFINITIONS.has(r.apiKey));
  assert.ok(
    skippedApis.some((r) => r.name === 'InitProducerId'),
    'InitProducerId (transactions) was recorded',
  );
  for (const r of skippedApis) assert.is(r.skipped, r.frames, `${r.name} v${r.version}`);
  const old = kcat.rows.find((r) => r.name === 'Fetch' && r.version === 11);
  assert.ok(old && old.skipped === old.frames && !old.inScope, "kcat's Fetch v11 is skipped");
  assert.is(consumerOnly.totals.failed + kcat.totals.failed, 0);
  assert.ok(consumerOnly.ok && kcat.ok, formatReport(consumerOnly) + formatReport(kcat));
});

test('the report prints as a table and as Markdown', () => {
  const text = formatReport(report);
  assert.match(text, /Fetch \(1\)\s+18\s+\d+\s+\d+\s+0\s+0\s+yes/);
  assert.match(text, /67\/67 API versions/);
  assert.match(text, /PASS\n$/);
  const md = formatMarkdownTable(report);
  assert.match(md, /^\| API \| v \| frames/);
  assert.match(md, /\| ConsumerProtocolSubscription \| 0 \|/);
});

test('facts are checked against decoded data: a wrong fact fails the capture', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kwire-facts-'));
  try {
    cpSync(join(fixtures, 'java-4.4.0', 'transactions'), dir, { recursive: true });
    const file = join(dir, 'manifest.json');
    const manifest = JSON.parse(readFileSync(file, 'utf8')) as CaptureManifest;
    const good = runConformance(dir);
    assert.ok(good.ok, formatReport(good));
    const facts = manifest.facts!.records![0]!;
    facts.records![4]!.value = 'a value nobody wrote';
    facts.transactions!.abortMarkers = 2;
    manifest.facts!.errors = [{ api: 'Fetch', error: 'OFFSET_OUT_OF_RANGE' }];
    writeFileSync(file, JSON.stringify(manifest));
    const bad = runConformance(dir);
    assert.not.ok(bad.ok);
    const messages = bad.failures.map((f) => f.message).join('\n');
    assert.match(messages, /records tx-t produced: not written: .*a value/);
    assert.match(messages, /records tx-t fetched/);
    assert.match(messages, /abort markers: 1 ABORT markers fetched, 2 expected/);
    assert.match(messages, /error Fetch OFFSET_OUT_OF_RANGE: no Fetch response carries code 1/);
    assert.is(bad.totals.failed, 0, 'the frames themselves still pass');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
