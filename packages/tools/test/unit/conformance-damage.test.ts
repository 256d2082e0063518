// The conformance runner on captures that are wrong in every way a user's capture can be:
// frames our codec would write differently (reported with api, version, byte offset and field
// path), records with a bad CRC, APIs we do not model, truncated or missing stream files, garbage
// index lines. Nothing may throw; everything must be reported.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { API_DEFINITIONS, ApiKey, encodeRecordBatch, encodeRequestFrame, encodeResponseFrame } from '@kwire/protocol';
import { formatReport, requestFieldAt, responseFieldAt, runConformance, streamFileName, type ExchangeLine, type IndexLine } from '../../src/index.js';

const fixtures = resolve(dirname(fileURLToPath(import.meta.url)), '../../../../../test-fixtures');
const dirs: string[] = [];

function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'kwire-conformance-'));
  dirs.push(d);
  return d;
}

test.after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Frames {
  apiKey: number;
  apiVersion: number;
  correlationId: number;
  request: Buffer;
  response: Buffer | null;
}

/** Writes a one-connection capture of these exchanges, in the format kwire record writes. */
function writeCapture(dir: string, exchanges: Frames[]): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'capture.json'), JSON.stringify({ format: 'kwire-capture', formatVersion: 1, recorder: 'test', startedAt: new Date().toISOString(), target: 'x:1', listen: 'y:2' }));
  const lines: IndexLine[] = [{ type: 'connection', conn: 1, at: 0, client: 'c:1', listener: 'y:2', broker: 'x:1' }];
  let clientAt = 0;
  let brokerAt = 0;
  for (const x of exchanges) {
    const line: ExchangeLine = {
      type: 'exchange',
      conn: 1,
      apiKey: x.apiKey,
      apiName: null,
      apiVersion: x.apiVersion,
      correlationId: x.correlationId,
      clientId: 'test',
      request: { offset: clientAt, length: x.request.length, at: 1, end: 1 },
      response: x.response ? { offset: brokerAt, length: x.response.length, at: 2, end: 2 } : null,
    };
    clientAt += x.request.length;
    brokerAt += x.response?.length ?? 0;
    lines.push(line);
  }
  writeFileSync(join(dir, streamFileName(1, 'client')), Buffer.concat(exchanges.map((x) => x.request)));
  writeFileSync(join(dir, streamFileName(1, 'broker')), Buffer.concat(exchanges.map((x) => x.response ?? Buffer.alloc(0))));
  writeFileSync(join(dir, 'index.jsonl'), lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
}

function metadataExchange(correlationId: number): Frames {
  const request = Buffer.from(
    encodeRequestFrame({ apiKey: ApiKey.Metadata, apiVersion: 12, correlationId, clientId: 'test', body: { topics: null, allowAutoTopicCreation: true, includeTopicAuthorizedOperations: false } }),
  );
  const response = Buffer.from(
    encodeResponseFrame(ApiKey.Metadata, 12, correlationId, {
      brokers: [{ nodeId: 1, host: 'broker-one', port: 9092, rack: null }],
      clusterId: 'c',
      controllerId: 1,
      topics: [
        {
          errorCode: 0,
          name: 'topic-a',
          topicId: 'AAAAAAAAAAAAAAAAAAAAAQ',
          isInternal: false,
          partitions: [{ errorCode: 0, partitionIndex: 0, leaderId: 1, leaderEpoch: 0, replicaNodes: [1], isrNodes: [1], offlineReplicas: [] }],
          topicAuthorizedOperations: 0,
        },
      ],
    }),
  );
  return { apiKey: ApiKey.Metadata, apiVersion: 12, correlationId, request, response };
}

test('a frame our codec writes differently: the api, version, byte offset and field path', () => {
  const dir = tmp();
  const x = metadataExchange(1);
  // allowAutoTopicCreation is the third byte from the end (then includeTopicAuthorizedOperations,
  // then the tag section): any non-zero byte reads as true; ours writes 0x01.
  const at = x.request.length - 3;
  assert.is(x.request[at], 1);
  x.request[at] = 2;
  writeCapture(dir, [x]);
  const report = runConformance(dir);
  assert.not.ok(report.ok);
  assert.is(report.failures.length, 1);
  const f = report.failures[0]!;
  assert.is(f.api, 'Metadata');
  assert.is(f.version, 12);
  assert.is(f.part, 'request');
  assert.is(f.offset, at);
  assert.is(f.path, 'allowAutoTopicCreation');
  assert.match(f.message, new RegExp(`differ at byte ${at} \\(field allowAutoTopicCreation\\): 0x02 recorded, 0x01 ours`));
  const row = report.rows.find((r) => r.name === 'Metadata' && r.version === 12)!;
  assert.equal([row.frames, row.passed, row.failed], [2, 1, 1], 'the response still passes');
  assert.match(formatReport(report), /Metadata v12 request: re-encoded bytes differ at byte/);
});

test('a non-minimal varint deep inside a response: the path names the nested field', () => {
  const dir = tmp();
  const x = metadataExchange(2);
  // Re-encode the broker's host "broker-one" with a two-byte compact length (0x8b 0x00 = 11).
  const host = x.response!.indexOf(Buffer.from('broker-one'));
  assert.is(x.response![host - 1], 11);
  const patched = Buffer.concat([x.response!.subarray(0, host - 1), Buffer.from([0x8b, 0x00]), x.response!.subarray(host)]);
  patched.writeInt32BE(patched.length - 4, 0);
  writeCapture(dir, [{ ...x, response: patched }]);
  const report = runConformance(dir);
  const f = report.failures[0]!;
  assert.is(f.part, 'response');
  assert.is(f.offset, host - 1);
  assert.is(f.path, 'brokers/0/host');
  assert.match(f.message, /the frame is 1\d\d bytes, ours 1\d\d/);
});

test('field paths at any offset: array indexes and nested fields of a Fetch request', () => {
  const api = API_DEFINITIONS.get(ApiKey.Fetch)!;
  const body = (offset: bigint) => ({
    maxWaitMs: 500,
    minBytes: 1,
    maxBytes: 1 << 20,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [
      {
        topicId: 'AAAAAAAAAAAAAAAAAAAAAQ',
        partitions: [
          { partition: 0, fetchOffset: 5n },
          { partition: 1, fetchOffset: offset },
        ],
      },
    ],
  });
  const a = Buffer.from(encodeRequestFrame({ apiKey: 1, apiVersion: 17, correlationId: 1, clientId: 'c', body: body(7n) }));
  const b = Buffer.from(encodeRequestFrame({ apiKey: 1, apiVersion: 17, correlationId: 1, clientId: 'c', body: body(8n) }));
  let d = 0;
  while (a[d] === b[d]) d++;
  assert.is(requestFieldAt(api, a, d).path, 'topics/0/partitions/1/fetchOffset');
  assert.is(requestFieldAt(api, a, 9).path, 'header/correlationId');
  assert.is(requestFieldAt(api, a, 1).path, 'size');
  assert.is(requestFieldAt(api, a, a.length).path, '(after the last field)');
  const res = Buffer.from(encodeResponseFrame(1, 17, 3, { responses: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAQ', partitions: [{ partitionIndex: 0, highWatermark: 10n, records: Buffer.from('xyz') }] }] }));
  const records = res.indexOf(Buffer.from('xyz'));
  assert.is(responseFieldAt(api, 17, 17, res, records + 1).path, 'responses/0/partitions/0/records');
});

test('records with a bad CRC inside a Fetch response: a failure with the path into the records', () => {
  const dir = tmp();
  const batch = encodeRecordBatch([{ key: 'k', value: 'v', timestamp: 1_700_000_000_000 }]);
  const bad = Buffer.from(batch);
  bad[bad.length - 1] ^= 0xff;
  const req = Buffer.from(
    encodeRequestFrame({
      apiKey: 1,
      apiVersion: 17,
      correlationId: 4,
      clientId: 'c',
      body: { maxWaitMs: 1, minBytes: 1, maxBytes: 1000, sessionEpoch: -1, topics: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAQ', partitions: [{ partition: 0, fetchOffset: 0n }] }] },
    }),
  );
  const res = Buffer.from(
    encodeResponseFrame(1, 17, 4, { responses: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAQ', partitions: [{ partitionIndex: 0, highWatermark: 1n, records: Buffer.concat([batch, bad]) }] }] }),
  );
  writeCapture(dir, [{ apiKey: 1, apiVersion: 17, correlationId: 4, request: req, response: res }]);
  const report = runConformance(dir);
  assert.is(report.failures.length, 1);
  const f = report.failures[0]!;
  assert.is(f.part, 'records');
  assert.match(f.path!, /^responses\/0\/partitions\/0\/records\/batch at byte \d+\/crc$/);
  assert.match(f.message, /CRC-32C/);
  assert.is(report.rows.find((r) => r.name === 'Fetch')!.failed, 1);
});

test('APIs kwire does not model, versions outside its range, and acks=0 exchanges: skipped or request-only', () => {
  const dir = tmp();
  const unknown = Buffer.alloc(20);
  unknown.writeInt32BE(16, 0);
  unknown.writeInt16BE(22, 4); // InitProducerId
  unknown.writeInt16BE(5, 6);
  unknown.writeInt32BE(9, 8);
  unknown.writeInt16BE(-1, 12);
  const strange = Buffer.from(unknown);
  strange.writeInt16BE(999, 4); // not a Kafka API at all
  const oldFetch = Buffer.from(unknown);
  oldFetch.writeInt16BE(1, 4);
  oldFetch.writeInt16BE(11, 6); // Fetch v11: below our range
  const answer = Buffer.from('0000000800000009000000aa', 'hex');
  const produce = Buffer.from(
    encodeRequestFrame({
      apiKey: 0,
      apiVersion: 13,
      correlationId: 10,
      clientId: 'c',
      body: { acks: 0, timeoutMs: 100, topicData: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAQ', partitionData: [{ index: 0, records: encodeRecordBatch([{ value: 'fire and forget' }]) }] }] },
    }),
  );
  writeCapture(dir, [
    { apiKey: 22, apiVersion: 5, correlationId: 9, request: unknown, response: answer },
    { apiKey: 999, apiVersion: 5, correlationId: 9, request: strange, response: answer },
    { apiKey: 1, apiVersion: 11, correlationId: 9, request: oldFetch, response: answer },
    { apiKey: 0, apiVersion: 13, correlationId: 10, request: produce, response: null },
  ]);
  const report = runConformance(dir);
  assert.ok(report.ok, formatReport(report));
  assert.equal(report.totals, { frames: 7, passed: 1, failed: 0, skipped: 6 });
  const produceRow = report.rows.find((r) => r.name === 'Produce')!;
  assert.equal([produceRow.frames, produceRow.requestsPassed, produceRow.responsesPassed], [1, 1, 0]);
  assert.ok(report.rows.find((r) => r.apiKey === 999)!.name.includes('999'));
});

test('damaged captures: a clear error per file, no crash', () => {
  const root = tmp();
  const copy = (name: string) => {
    const d = join(root, name);
    cpSync(join(fixtures, 'kwire', 'not-coordinator-3nodes'), d, { recursive: true });
    return d;
  };
  // A broker stream cut short (a recorder killed mid-write).
  const cut = copy('cut');
  truncateSync(join(cut, 'conn-0001.broker.bin'), 100);
  // Garbage in the index: a binary line, a line that is JSON but no index line, a cut-off last line.
  const garbage = copy('garbage');
  writeFileSync(join(garbage, 'index.jsonl'), `${readFileSync(join(garbage, 'index.jsonl'), 'utf8')}\u0000\u0001\u00ff\n{"type":"exchange","conn":1}\n{"type":"exch`);
  // A stream file missing, and capture.json that is not ours.
  const missing = copy('missing');
  rmSync(join(missing, 'conn-0002.client.bin'));
  writeFileSync(join(missing, 'capture.json'), '{"format":"pcap"}');
  // Random bytes where every file should be.
  const random = join(root, 'random');
  mkdirSync(random);
  for (const f of ['index.jsonl', 'capture.json', 'manifest.json', 'conn-0001.client.bin']) writeFileSync(join(random, f), Buffer.from(Array.from({ length: 300 }, (_, i) => (i * 131 + 7) & 0xff)));

  const report = runConformance(root);
  assert.not.ok(report.ok);
  const byCapture = (name: string) => report.failures.filter((f) => f.capture === name).map((f) => f.message);
  assert.ok(
    byCapture('cut').some((m) => /conn-0001\.broker\.bin ends at byte 100, but the index puts a \d+-byte frame at byte \d+/.test(m)),
    byCapture('cut').join('\n'),
  );
  const g = byCapture('garbage');
  assert.ok(g.some((m) => /index\.jsonl line \d+: not JSON/.test(m)));
  assert.ok(g.some((m) => /index\.jsonl line \d+: exchange line without/.test(m)));
  assert.is(g.filter((m) => /index\.jsonl/.test(m)).length, 3);
  const m = byCapture('missing');
  assert.ok(m.some((x) => /conn-0002\.client\.bin is missing/.test(x)));
  assert.ok(m.some((x) => /capture\.json: not a kwire-capture file/.test(x)));
  const r = byCapture('random');
  assert.ok(r.some((x) => /manifest\.json: /.test(x)) && r.some((x) => /index\.jsonl line 1: not JSON/.test(x)));
  // The undamaged exchanges of damaged captures are still checked.
  assert.ok(report.totals.passed > 0);
  const text = formatReport(report);
  assert.match(text, /damaged: index\.jsonl line/);
  assert.match(text, /FAIL/);
});

test('a folder without captures is not a pass', () => {
  const report = runConformance(tmp());
  assert.is(report.captures.length, 0);
  assert.not.ok(report.ok);
});

test.run();
