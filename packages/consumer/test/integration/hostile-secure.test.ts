// Against a real broker with a SASL_PLAINTEXT listener and an SSL listener that requires client
// certificates (ssl.client.auth=required, a client certificate made here with keytool):
//  - `kwire record` in front of the SASL listener with PLAIN and both SCRAM users: the capture
//    holds no password bytes, and `kwire conformance` passes on it (both commands through the CLI
//    as users run it; they are @kwire/tools', which the kwire command hands them to);
//  - TLS: mutual TLS works, a missing client certificate is refused, a certificate for another
//    host name is refused, servername goes out for host names and not for IP literals;
//  - wrong listener for the settings: ssl against PLAINTEXT, plaintext against SSL, no sasl
//    against SASL_PLAINTEXT: each a prompt error that says what to change.
import { execFile, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import { promisify } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startKafka, type KafkaCluster } from '@kwire/broker';
import { Metadata } from '@kwire/protocol';
import { Connection, type ConnectionOptions } from '../../src/connection/index.js';
import { AuthenticationError, ConnectionError } from '../../src/errors.js';
import { rejection } from '@kwire/testkit';

const run = promisify(execFile);
const STORE_PASSWORD = 'kwire-client-store';
const work = mkdtempSync(join(tmpdir(), 'kwire-hostile-'));
const clientP12 = join(work, 'client.p12');
const clientPem = join(work, 'client.pem');
const brokerTrust = join(work, 'broker-trust.p12');
let cluster: KafkaCluster;
let clientPfx: Buffer;

test.before(async () => {
  // The client's key pair and certificate, and a truststore holding it for the broker.
  await run('keytool', [
    '-genkeypair',
    '-alias',
    'client',
    '-keyalg',
    'RSA',
    '-keysize',
    '2048',
    '-validity',
    '2',
    '-dname',
    'CN=kwire-client, OU=kwire tests',
    '-storetype',
    'PKCS12',
    '-keystore',
    clientP12,
    '-storepass',
    STORE_PASSWORD,
    '-keypass',
    STORE_PASSWORD,
  ]);
  await run('keytool', ['-exportcert', '-rfc', '-alias', 'client', '-keystore', clientP12, '-storepass', STORE_PASSWORD, '-file', clientPem]);
  await run('keytool', ['-importcert', '-noprompt', '-alias', 'client', '-file', clientPem, '-storetype', 'PKCS12', '-keystore', brokerTrust, '-storepass', STORE_PASSWORD]);
  clientPfx = readFileSync(clientP12);
  cluster = await startKafka({
    sasl: true,
    ssl: true,
    heapMb: 384,
    config: {
      'listener.name.ssl.ssl.client.auth': 'required',
      'listener.name.ssl.ssl.truststore.type': 'PKCS12',
      'listener.name.ssl.ssl.truststore.location': brokerTrust,
      'listener.name.ssl.ssl.truststore.password': STORE_PASSWORD,
    },
  });
});
test.after(async () => {
  await cluster?.stop();
  rmSync(work, { recursive: true, force: true });
});

function address(bootstrap: string): { host: string; port: number } {
  const [host, port] = bootstrap.split(',')[0]!.split(':');
  return { host: host!, port: Number(port) };
}

const kwire = new URL('../../../bin/kwire.js', import.meta.url).pathname;

/** `kwire record` as a child process: its listen address (its first line), and a stop that waits for its exit code. */
async function startRecord(target: string, out: string): Promise<{ address: string; stop: () => Promise<number | null> }> {
  const child = spawn(process.execPath, [kwire, 'record', '--target', target, '--out', out, '--quiet'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const address = await new Promise<string>((resolve, reject) => {
    let buf = '';
    child.stdout!.on('data', (c) => {
      buf += c;
      if (buf.includes('\n')) resolve(buf.split('\n')[0]!);
    });
    void exited.then((code) => reject(new Error(`kwire record exited ${code}`)));
  });
  return {
    address,
    stop: () => {
      child.kill('SIGINT');
      return exited;
    },
  };
}

test('kwire record before SASL_PLAINTEXT (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512): no password on disk; kwire conformance passes', async () => {
  const out = join(work, 'capture');
  const proxy = await startRecord(cluster.sasl!.bootstrap.split(',')[0]!, out);
  const [host, port] = proxy.address.split(':');
  const users = cluster.sasl!.users;
  try {
    for (const mechanism of ['plain', 'scram-sha-256', 'scram-sha-512'] as const) {
      for (const u of users) {
        const c = await Connection.connect({ host: host!, port: Number(port), sasl: { mechanism, username: u.username, password: u.password } });
        assert.ok((await c.request(Metadata, { topics: [] })).brokers.length >= 1);
        await c.close();
      }
    }
  } finally {
    assert.is(await proxy.stop(), 0, 'kwire record exits cleanly on SIGINT');
  }
  const files = readdirSync(out);
  const all = Buffer.concat(files.map((f) => readFileSync(join(out, f))));
  for (const u of users) {
    assert.ok(all.includes(u.username), `${u.username} is recorded`);
    assert.not.ok(all.includes(u.password), `${u.username}'s password reached the capture`);
    // Nor the password in the other encodings a reader might search.
    assert.not.ok(all.includes(Buffer.from(u.password).toString('base64')));
  }
  for (const f of files) assert.is(statSync(join(out, f)).mode & 0o777, 0o600, f);
  const r = spawnSync(process.execPath, [kwire, 'conformance', out], { encoding: 'utf8', timeout: 60_000 });
  assert.is(r.status, 0, `${r.stdout}\n${r.stderr}`);
  assert.match(r.stdout, /SaslAuthenticate/);
});

const sslOptions = (extra: Record<string, unknown> = {}) => ({ ca: cluster.ssl!.caPem, pfx: clientPfx, passphrase: STORE_PASSWORD, ...extra });

test('mutual TLS: with the client certificate it works; without one the broker refuses the handshake', async () => {
  const c = await Connection.connect({ ...address(cluster.ssl!.bootstrap), ssl: sslOptions() });
  assert.ok((await c.request(Metadata, { topics: [] })).brokers.length >= 1);
  await c.close();
  // TLS 1.3: the broker's refusal comes after the client's Finished, at the first read: either the
  // handshake or ApiVersions fails, as a connection problem, promptly.
  const started = performance.now();
  const err = await rejection(Connection.connect({ ...address(cluster.ssl!.bootstrap), ssl: { ca: cluster.ssl!.caPem }, socketConnectionSetupTimeoutMs: 5000 }));
  assert.ok(err instanceof ConnectionError || err instanceof AuthenticationError, String(err));
  assert.match(err.message, /certificate required|alert|closed the connection|ECONNRESET|handshake/i);
  assert.ok(performance.now() - started < 6000);
});

test('TLS: a certificate for another host name is refused (not retriable); the right name passes', async () => {
  const err = await rejection(Connection.connect({ ...address(cluster.ssl!.bootstrap), ssl: sslOptions({ servername: 'kafka.elsewhere.example' }) }));
  assert.ok(err instanceof AuthenticationError, String(err));
  assert.match(err.message, /ERR_TLS_CERT_ALTNAME_INVALID|Hostname\/IP does not match/);
  assert.not.ok((err as AuthenticationError).retriable);
  // The certificate names DNS:localhost and IP:127.0.0.1: both pass.
  const c = await Connection.connect({ ...address(cluster.ssl!.bootstrap), ssl: sslOptions({ servername: 'localhost' }) });
  await c.close();
});

test('TLS: servername (SNI) is sent for a host name and not for an IP literal', async () => {
  const seen: (string | false)[] = [];
  const server = createTlsServer({ pfx: readFileSync(cluster.ssl!.keystoreFile), passphrase: cluster.ssl!.password }, (socket: TLSSocket) => {
    seen.push(socket.servername ?? false);
    socket.destroy();
  });
  server.on('tlsClientError', () => {});
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  try {
    const opts = (host: string): ConnectionOptions => ({ host, port, ssl: { ca: cluster.ssl!.caPem }, socketConnectionSetupTimeoutMs: 3000 });
    await rejection(Connection.connect(opts('127.0.0.1')));
    // "localhost" may resolve to ::1 first; the server listens on 127.0.0.1 only, and Node tries both.
    await rejection(Connection.connect(opts('localhost')));
  } finally {
    server.close();
  }
  assert.equal(seen, [false, 'localhost']);
});

test('wrong listener for the settings: each a prompt ConnectionError that says what to change', async () => {
  const t0 = performance.now();
  // ssl against PLAINTEXT: Kafka reads the ClientHello as a 369 MB request size and hangs up.
  const a = await rejection(Connection.connect({ ...address(cluster.bootstrap), ssl: { ca: cluster.ssl!.caPem }, socketConnectionSetupTimeoutMs: 5000 }));
  assert.ok(a instanceof ConnectionError, String(a));
  assert.match(a.message, /PLAINTEXT or SASL_PLAINTEXT listener\? remove `ssl`/);
  // Plaintext against SSL: the broker answers with a TLS alert, or hangs up.
  const b = await rejection(Connection.connect({ ...address(cluster.ssl!.bootstrap) }));
  assert.ok(b instanceof ConnectionError, String(b));
  assert.match(b.message, /SSL listener\? set `ssl`|if this is an SSL listener, set `ssl`/);
  // No sasl against SASL_PLAINTEXT: ApiVersions works, the first other request is hung up on.
  const c = await Connection.connect({ ...address(cluster.sasl!.bootstrap) });
  const err = await rejection(c.request(Metadata, { topics: [] }));
  assert.ok(err instanceof ConnectionError, String(err));
  assert.match(err.message, /set `sasl`/);
  assert.ok(performance.now() - t0 < 10_000);
});

test.run();
