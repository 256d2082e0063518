// Secrets out of `kwire record` captures: the redacting splitter cut at every byte offset, each
// mechanism's scrubber, and the proxy end to end against a fake SASL broker (no password or token
// bytes on disk, files readable by their owner only, the capture still passes the conformance
// runner; --keep-secrets keeps them).
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeRequestFrame, decodeResponseFrame, encodeRequestFrame, encodeResponseFrame, Metadata, SaslAuthenticate, SaslHandshake } from '@kwire/protocol';
import { formatReport, runConformance } from '../../src/index.js';
import { Connection } from '@kwire/consumer/internals';
import type { AppendFile } from '../../src/capture/writer.js';
import { RecordingProxy } from '../../src/record/proxy.js';
import { ConnectionRedactor, scrubClientAuthBytes, scrubServerAuthBytes } from '../../src/record/redact.js';
import { FakeBroker, metadataBody, type Handler } from '@kwire/testkit';

const dirs: string[] = [];
const brokers: FakeBroker[] = [];
test.after(async () => {
  for (const b of brokers) await b.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Stands in for an AppendFile: keeps what is written. */
function sink(): { file: AppendFile; bytes: () => Buffer } {
  const parts: Buffer[] = [];
  const file = { write: (b: Buffer) => (parts.push(Buffer.from(b)), true) } as unknown as AppendFile;
  return { file, bytes: () => Buffer.concat(parts) };
}

const req = (apiKey: number, apiVersion: number, correlationId: number, body: unknown) =>
  Buffer.from(encodeRequestFrame({ apiKey, apiVersion, correlationId, clientId: 'redact-test', body } as never));
const res = (apiKey: number, version: number, correlationId: number, body: unknown) => Buffer.from(encodeResponseFrame(apiKey, version, correlationId, body as never));

const PASSWORD = 'pa55-SECRET-word';
const PROOF = 'cHJvb2YtU0VDUkVULXByb29mLWJ5dGVzLTEyMzQ1Njc4';
const SIGNATURE = 'c2lnbmF0dXJlLVNFQ1JFVC0xMjM0NTY3ODkw';

const requests = Buffer.concat([
  req(18, 3, 1, { clientSoftwareName: 'x', clientSoftwareVersion: '1' }),
  req(17, 1, 2, { mechanism: 'PLAIN' }),
  req(36, 2, 3, { authBytes: Buffer.from(`\0alice\0${PASSWORD}`) }),
  req(36, 2, 4, { authBytes: Buffer.from(`c=biws,r=nonce-and-more,p=${PROOF}`) }),
  req(3, 12, 5, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false }),
]);
const responses = Buffer.concat([
  res(36, 2, 3, { errorCode: 0, errorMessage: null, authBytes: Buffer.from('r=nonce-and-more,s=c2FsdA==,i=4096'), sessionLifetimeMs: 0n }),
  res(36, 2, 4, { errorCode: 0, errorMessage: null, authBytes: Buffer.from(`v=${SIGNATURE}`), sessionLifetimeMs: 0n }),
  res(3, 12, 5, metadataBody('c')),
]);

/** The expected capture: the same bytes with each secret's bytes replaced by '*'. */
function starred(bytes: Buffer, secrets: string[]): Buffer {
  const out = Buffer.from(bytes);
  for (const s of secrets) {
    const at = out.indexOf(s);
    assert.ok(at >= 0, `${s} is in the input`);
    out.fill(0x2a, at, at + s.length);
  }
  return out;
}

test('the redacting splitter, cut at every byte offset: same length, only the secrets replaced, frames still decode', () => {
  const wantReq = starred(requests, [PASSWORD, PROOF]);
  const wantRes = starred(responses, [SIGNATURE]);
  for (let cut = 0; cut <= requests.length; cut++) {
    const c = sink();
    const b = sink();
    const r = new ConnectionRedactor(c.file, b.file);
    r.client.write(requests.subarray(0, cut));
    r.client.write(requests.subarray(cut));
    const rc = Math.min(cut, responses.length);
    r.broker.write(responses.subarray(0, rc));
    r.broker.write(responses.subarray(rc));
    assert.ok(c.bytes().equals(wantReq), `requests cut at ${cut}`);
    assert.ok(b.bytes().equals(wantRes), `responses cut at ${rc}`);
    assert.is(r.redactedFrames, 4);
  }
  // One byte at a time, too.
  const c = sink();
  const r = new ConnectionRedactor(c.file, sink().file);
  for (let i = 0; i < requests.length; i++) r.client.write(requests.subarray(i, i + 1));
  assert.ok(c.bytes().equals(wantReq));
  // The redacted frames decode, with the stars where the secret was.
  const plain = wantReq.subarray(requests.indexOf(req(36, 2, 3, { authBytes: Buffer.from(`\0alice\0${PASSWORD}`) })));
  const decoded = decodeRequestFrame(plain.subarray(0, plain.readInt32BE(0) + 4));
  assert.is((decoded.body as { authBytes: Buffer }).authBytes.toString(), `\0alice\0${'*'.repeat(PASSWORD.length)}`);
  const second = wantRes.subarray(wantRes.readInt32BE(0) + 4);
  const final = decodeResponseFrame(36, 2, second.subarray(0, second.readInt32BE(0) + 4));
  assert.is((final.body as { authBytes: Buffer }).authBytes.toString(), `v=${'*'.repeat(SIGNATURE.length)}`);
});

test('zeroed frames (raw SASL tokens, a SASL frame over 1 MiB), a broken stream, and a pass frame cut by end(): every byte accounted for, at every cut', () => {
  // After SaslHandshake v0 every frame keeps its size prefix and loses the rest, short ones too.
  const raw = Buffer.concat([Buffer.from([0, 0, 0, 3, 7, 7, 7]), Buffer.from([0, 0, 0, 20]), Buffer.alloc(20, 0x41), Buffer.from([0, 0, 0, 0])]);
  const rawWant = Buffer.from(raw);
  rawWant.fill(0, 4, 7);
  rawWant.fill(0, 11, 31);
  for (let cut = 0; cut <= raw.length; cut++) {
    const c = sink();
    const r = new ConnectionRedactor(c.file, sink().file);
    r.rawSasl();
    r.client.write(raw.subarray(0, cut));
    r.client.write(raw.subarray(cut));
    assert.ok(c.bytes().equals(rawWant), `raw cut at ${cut}`);
  }
  // A SaslAuthenticate request over 1 MiB is not parsed: zeroed past its size prefix, as it streams.
  const huge = req(36, 2, 9, { authBytes: Buffer.alloc(1024 * 1024 + 10, 0x53) });
  const c = sink();
  const r = new ConnectionRedactor(c.file, sink().file);
  for (let o = 0; o < huge.length; o += 100_000) r.client.write(huge.subarray(o, o + 100_000));
  const got = c.bytes();
  assert.is(got.length, huge.length);
  assert.ok(got.subarray(0, 4).equals(huge.subarray(0, 4)));
  assert.is(got.indexOf(0x53), -1, 'no byte of the auth bytes is left');
  // A negative size: the bytes that waited for a decision and everything after pass as they are.
  const broken = Buffer.concat([req(18, 3, 1, { clientSoftwareName: 'x', clientSoftwareVersion: '1' }), Buffer.from([0xff, 0xff, 0xff, 0xf0, 1, 2, 3, 4, 5, 6, 7, 8, 9])]);
  for (let cut = 0; cut <= broken.length; cut++) {
    const b = sink();
    const br = new ConnectionRedactor(b.file, sink().file);
    br.client.write(broken.subarray(0, cut));
    br.client.write(broken.subarray(cut));
    assert.ok(b.bytes().equals(broken), `broken stream cut at ${cut}`);
  }
  // end() with a frame passing through and the next one's first bytes undecided: all written.
  const pass = Buffer.concat([
    req(3, 12, 5, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false }),
    req(18, 3, 6, { clientSoftwareName: 'x', clientSoftwareVersion: '1' }),
  ]);
  for (const keep of [pass.length - 3, pass.length - 30, 30]) {
    const e = sink();
    const er = new ConnectionRedactor(e.file, sink().file);
    er.client.write(pass.subarray(0, keep));
    er.end();
    assert.ok(e.bytes().equals(pass.subarray(0, keep)), `ended after ${keep} bytes`);
  }
});

test('a connection cut in the middle of a SASL frame: the part written has its secret zeroed', () => {
  const c = sink();
  const r = new ConnectionRedactor(c.file, sink().file);
  const frame = req(36, 2, 3, { authBytes: Buffer.from(`\0alice\0${PASSWORD}`) });
  r.client.write(frame.subarray(0, frame.length - 3));
  r.end();
  assert.is(c.bytes().length, frame.length - 3);
  assert.not.ok(c.bytes().includes(PASSWORD.slice(0, 8)));
});

test('scrubbers: OAUTHBEARER token, SCRAM first messages kept, unknown mechanisms wholly hidden, error statuses kept', () => {
  const oauth = Buffer.from('n,,\u0001auth=Bearer eyJ-TOKEN-SECRET.x.y\u0001traceId=t1\u0001\u0001');
  assert.is(scrubClientAuthBytes(oauth), 'eyJ-TOKEN-SECRET.x.y'.length);
  assert.is(oauth.toString(), `n,,\u0001auth=Bearer ${'*'.repeat(20)}\u0001traceId=t1\u0001\u0001`);
  const first = Buffer.from('n,,n=alice,r=fyko+d2lbbFgONRv9qkxdawL');
  assert.is(scrubClientAuthBytes(first), 0);
  assert.is(scrubClientAuthBytes(Buffer.from([1])), 0);
  const gssapi = Buffer.from([0x60, 0x82, 0x01, 0x2c, 0x06, 0x09]);
  assert.is(scrubClientAuthBytes(gssapi), 6);
  assert.equal([...gssapi], [42, 42, 42, 42, 42, 42]);
  assert.is(scrubServerAuthBytes(Buffer.from('r=abc,s=c2FsdA==,i=4096')), 0);
  assert.is(scrubServerAuthBytes(Buffer.from('e=invalid-proof')), 0);
  assert.is(scrubServerAuthBytes(Buffer.from('{"status":"invalid_token"}')), 0);
  const v = Buffer.from('v=rmF9pqV8S7suAoZWja4dJRkFsKQ=');
  assert.is(scrubServerAuthBytes(v), 28);
});

// ---- the proxy end to end --------------------------------------------------------------------

const saslBroker = async (): Promise<FakeBroker> => {
  const handshake: Handler = () => ({ body: { errorCode: 0, mechanisms: ['PLAIN', 'OAUTHBEARER'] } });
  const auth: Handler = () => ({ body: { errorCode: 0, errorMessage: null, authBytes: Buffer.alloc(0), sessionLifetimeMs: 0n } });
  const b = await FakeBroker.start({ handlers: { [SaslHandshake.apiKey]: handshake, [SaslAuthenticate.apiKey]: auth, [Metadata.apiKey]: () => ({ body: metadataBody('c') }) } });
  brokers.push(b);
  return b;
};

async function recordThrough(keepSecrets: boolean): Promise<{ dir: string; files: Buffer }> {
  const b = await saslBroker();
  const dir = join(mkdtempSync(join(tmpdir(), 'kwire-redact-')), 'capture');
  dirs.push(dir);
  const proxy = await RecordingProxy.start({ listen: { host: '127.0.0.1', port: 0 }, target: b.address, out: dir, keepSecrets });
  const [host, port] = proxy.address.split(':');
  const plain = await Connection.connect({ host: host!, port: Number(port), sasl: { mechanism: 'plain', username: 'alice', password: PASSWORD } });
  await plain.request(Metadata, { topics: [] });
  await plain.close();
  const oauth = await Connection.connect({ host: host!, port: Number(port), sasl: { mechanism: 'oauthbearer', oauthBearerProvider: () => ({ value: 'tok-SECRET-oauth' }) } });
  await oauth.close();
  await proxy.stop();
  return { dir, files: Buffer.concat(readdirSync(dir).map((f) => readFileSync(join(dir, f)))) };
}

test('kwire record: no password or token bytes on disk by default; owner-only files; conformance passes', async () => {
  const { dir, files } = await recordThrough(false);
  for (const secret of [PASSWORD, 'tok-SECRET-oauth']) assert.not.ok(files.includes(secret), `${secret} reached the capture`);
  assert.ok(files.includes('alice'), 'the rest is recorded');
  assert.is(statSync(dir).mode & 0o777, 0o700);
  for (const f of readdirSync(dir)) assert.is(statSync(join(dir, f)).mode & 0o777, 0o600, f);
  const report = runConformance(dir);
  assert.ok(report.ok, formatReport(report));
  assert.ok(
    report.rows.some((r) => r.name === 'SaslAuthenticate' && r.passed >= 2),
    formatReport(report),
  );
});

test('kwire record --keep-secrets: the secrets are recorded as sent', async () => {
  const { files } = await recordThrough(true);
  assert.ok(files.includes(PASSWORD));
  assert.ok(files.includes('tok-SECRET-oauth'));
});

test.run();
