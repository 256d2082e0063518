// `kwire decode` over the committed captures (test-fixtures/): every frame of the real clients'
// captures decodes with the whole protocol, each JSON line carries what the issue asks for, and
// the decoded records are the ones the scenarios wrote (their manifests' facts).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { captureConversations, decodeConversation, type DecodedFrame, findInputs, type Json } from '../../src/index.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../../../../..');
const fixtures = join(root, 'test-fixtures');

function decodeAll(dir: string): DecodedFrame[] {
  return captureConversations(dir).conversations.flatMap((c) => [...decodeConversation(c)]);
}

test('every frame of every real client capture decodes (kcat and Java included): none skipped, none failed', () => {
  let total = 0;
  for (const dir of findInputs(fixtures).captures) {
    const frames = decodeAll(dir);
    total += frames.length;
    const errors = frames.filter((f) => f.error !== undefined);
    if (dir.includes('kwire/raw-4.4.0')) {
      // kwire's deliberate ApiVersions v99 request: no schema has it (its v0 answer decodes).
      assert.equal(
        errors.map((f) => `${f.api} v${f.apiVersion} ${f.direction}`),
        ['ApiVersions v99 request'],
      );
    } else {
      assert.equal(
        errors.map((f) => `${f.api} v${f.apiVersion}: ${f.error}`),
        [],
        dir,
      );
    }
  }
  assert.ok(total > 2000, `${total} frames`);
});

test('a JSON line: connection, direction, correlation id, API and version, client id, header, body', () => {
  const frames = decodeAll(join(fixtures, 'kcat-1.7.1', 'produce-consume'));
  const req = frames.find((f) => f.api === 'Produce' && f.direction === 'request')!;
  assert.is(req.apiVersion, 7);
  assert.is(req.clientId, 'rdkafka');
  assert.ok(req.conn > 0 && req.correlationId > 0 && req.offset >= 0 && req.size > 8);
  assert.equal((req.header as { headerVersion: number }).headerVersion, 1);
  const res = frames[frames.indexOf(req) + 1]!;
  assert.is(res.direction, 'response');
  assert.is(res.correlationId, req.correlationId);
  assert.is(res.api, 'Produce');
  assert.equal(res.header, { correlationId: req.correlationId, headerVersion: 0 });
  // Only the fields of the version on the wire: Produce v7 has topic names, no topic ids (v13+).
  const topic = (req.body as { topicData: Record<string, unknown>[] }).topicData[0]!;
  assert.is(topic.name, 'kcat-t');
  assert.not.ok('topicId' in topic);
  assert.not.ok('nodeEndpoints' in (res.body as object), 'a v16+ response field');
  const v13 = decodeAll(join(fixtures, 'java-4.4.0', 'console')).find((f) => f.api === 'Produce' && f.apiVersion === 13 && f.direction === 'request')!;
  const t13 = (v13.body as { topicData: Record<string, unknown>[] }).topicData[0]!;
  assert.type(t13.topicId, 'string');
  assert.not.ok('name' in t13);
  // The line is plain JSON, round-trippable.
  assert.equal(JSON.parse(JSON.stringify(req)), req);
});

test('record batches decode with their records: Fetch responses hold the records the scenario wrote', () => {
  const dir = join(fixtures, 'java-4.4.0', 'console');
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { facts: { records: { topic: string; records: { key: string; value: string }[] }[] } };
  const wanted = manifest.facts.records[0]!.records.map((r) => `${r.key}=${r.value}`).sort();
  const seen = new Set<string>();
  let batches = 0;
  for (const f of decodeAll(dir)) {
    if (f.api !== 'Fetch' || f.direction !== 'response') continue;
    const body = f.body as { responses: { partitions: { records: Json }[] }[] };
    for (const t of body.responses)
      for (const p of t.partitions) {
        const list = Array.isArray(p.records) ? p.records : [];
        for (const b of list as { records: { key: string; value: string; offset: number }[]; compression: string; baseOffset: number }[]) {
          batches++;
          assert.type(b.baseOffset, 'number');
          for (const r of b.records) seen.add(`${r.key}=${r.value}`);
        }
      }
  }
  assert.ok(batches > 0);
  assert.equal([...seen].sort(), wanted);
});

test('compressed batches decode too (gzip, snappy, lz4, zstd), and transaction control batches say so', () => {
  const codecs = new Set<string>();
  for (const f of decodeAll(join(fixtures, 'java-4.4.0', 'compression'))) {
    if (f.api !== 'Produce' || f.direction !== 'request') continue;
    for (const t of (f.body as { topicData: { partitionData: { records: { compression: string; records: unknown[] }[] }[] }[] }).topicData)
      for (const p of t.partitionData) for (const b of p.records) if (b.records.length > 0) codecs.add(b.compression);
  }
  assert.equal([...codecs].sort(), ['gzip', 'lz4', 'snappy', 'zstd']);
  const controls = decodeAll(join(fixtures, 'java-4.4.0', 'transactions')).flatMap((f) =>
    f.api === 'Fetch' && f.direction === 'response'
      ? (f.body as { responses: { partitions: { records: { isControl: boolean; control?: { type: number } }[] }[] }[] }).responses.flatMap((t) =>
          t.partitions.flatMap((p) => (Array.isArray(p.records) ? p.records.filter((b) => b.isControl) : [])),
        )
      : [],
  );
  assert.ok(controls.length >= 2, `${controls.length} control batches`);
  assert.ok(controls.some((b) => b.control?.type === 0) && controls.some((b) => b.control?.type === 1), 'an ABORT and a COMMIT marker');
});

test('kwire decode and kwire-tools decode: --api, --json, the summary, the exit code', () => {
  const kwire = join(root, 'packages/consumer/bin/kwire.js');
  const dir = join(fixtures, 'kcat-1.7.1', 'produce-consume');
  const r = spawnSync(process.execPath, [kwire, 'decode', dir, '--api', 'Fetch', '--json'], { encoding: 'utf8' });
  assert.is(r.status, 0, r.stderr);
  const lines = r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as DecodedFrame);
  assert.ok(lines.length >= 10);
  assert.ok(lines.every((l) => l.api === 'Fetch' && l.apiVersion === 11));
  assert.match(r.stderr, /5 connection\(s\), \d+ request\(s\), \d+ response\(s\), 0 not decoded/);
  const text = spawnSync(process.execPath, [join(root, 'packages/tools/bin/kwire-tools.js'), 'decode', dir, '--api', '3'], { encoding: 'utf8' });
  assert.is(text.status, 0);
  assert.match(text.stdout, /conn 1 -> Metadata v4 #2 "rdkafka" \{"topics":\[/);
  assert.match(text.stdout, /conn 1 <- Metadata v4 #2 \{"throttleTimeMs":0,"brokers":/);
  assert.is(spawnSync(process.execPath, [kwire, 'decode'], { encoding: 'utf8' }).status, 2);
  assert.is(spawnSync(process.execPath, [kwire, 'decode', join(fixtures, 'kwire', 'raw-4.4.0')], { encoding: 'utf8' }).status, 1, 'the v99 request is reported');
});

test.run();
