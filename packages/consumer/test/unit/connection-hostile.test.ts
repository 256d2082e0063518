// Hostile and mistaken peers against a Connection (fake servers from @kwire/testkit's FakeBroker):
// a wrong port (a TLS listener, a web server, an SSH server, any peer announcing an absurd first
// frame), per-request caps on what an answer may announce, `ssl` against a plaintext listener, and
// the SASL bounds (SCRAM iteration counts, one deadline over the whole exchange, the PLAIN warning).
// Every case must fail fast, with a message that says what was met, and allocate next to nothing.
import { createServer, type Server, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ApiVersions, Fetch, Metadata, SaslAuthenticate, SaslHandshake } from '@kwire/protocol';
import { Connection, SimpleFramePool, type ConnectionOptions } from '../../src/connection/index.js';
import { AuthenticationError, ConnectionError } from '../../src/errors.js';
import { capturingLogger, FakeBroker, fakeBrokers, metadataBody, type Handler, rejection } from '@kwire/testkit';

const escaped: unknown[] = [];
process.on('unhandledRejection', (err) => escaped.push(err));
process.on('uncaughtException', (err) => escaped.push(err));

const broker = fakeBrokers(test);
const servers: Server[] = [];
const openSockets = new Set<Socket>();
test.after.each(async () => {
  for (const k of openSockets) k.destroy();
  for (const s of servers.splice(0)) await new Promise<void>((r) => s.close(() => r()));
});

/** A TCP server that runs `onSocket` for every client; its port. Closed (with its sockets) after each test. */
async function server(onSocket: (socket: Socket) => void): Promise<number> {
  const s = createServer((socket) => {
    openSockets.add(socket);
    socket.on('close', () => openSockets.delete(socket));
    socket.on('error', () => {});
    onSocket(socket);
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  // A failed test skips after.each: the server must not keep the process alive.
  s.unref();
  servers.push(s);
  return (s.address() as { port: number }).port;
}

/**
 * Connects, expects a failure, and measures it: how long it took and how much memory outside the
 * heap (where Buffers live) grew, with a frame pool of our own that counts what it lent.
 */
async function failure(options: ConnectionOptions): Promise<{ err: Error; ms: number; grewBytes: number; pool: SimpleFramePool }> {
  const pool = new SimpleFramePool();
  global.gc?.();
  const before = process.memoryUsage().arrayBuffers;
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().arrayBuffers)), 5);
  const started = performance.now();
  try {
    const err = await rejection(Connection.connect({ framePool: pool, requestTimeoutMs: 30_000, ...options }));
    peak = Math.max(peak, process.memoryUsage().arrayBuffers);
    return { err, ms: performance.now() - started, grewBytes: peak - before, pool };
  } finally {
    clearInterval(sampler);
  }
}

const MiB = 1024 * 1024;

/** What a TLS listener sends a client whose first bytes are not a ClientHello: a fatal alert. */
const TLS_ALERT = Buffer.from([0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28]);

for (const [what, answer, pattern] of [
  ['a TLS listener (alert record 15 03 03 00 02 02 28)', TLS_ALERT, /answered with a TLS alert record \(fatal handshake_failure\): is this an SSL listener\? set `ssl`/],
  ['a web server', Buffer.from('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n'), /answered with HTTP: this is a web server/],
  ['an SSH server', Buffer.from('SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n'), /answered with an SSH banner/],
  [
    'a peer announcing a 200 MiB first frame',
    Buffer.from([0x0c, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01]),
    /the first answer announces 209715200 bytes, far more than any ApiVersions response \(at most 1048576\): this is probably not a Kafka listener/,
  ],
] as const) {
  test(`wrong port, ${what}: a ConnectionError that says so within 3 s, less than 64 MiB allocated`, async () => {
    const port = await server((socket) => socket.once('data', () => socket.write(answer)));
    const { err, ms, grewBytes, pool } = await failure({ host: '127.0.0.1', port });
    assert.ok(err instanceof ConnectionError, String(err));
    assert.match(err.message, pattern);
    assert.match(err.message, /^127\.0\.0\.1:\d+: the (server|first answer)/);
    assert.ok(ms < 3000, `took ${ms.toFixed(0)} ms`);
    assert.ok(grewBytes < 64 * MiB, `external memory grew by ${(grewBytes / MiB).toFixed(1)} MiB`);
    assert.is(pool.stats.misses + pool.stats.hits, 0, 'no frame memory was taken');
  });
}

test('wrong port: a TLS alert arriving one byte at a time is recognised as soon as four bytes are in', async () => {
  const port = await server((socket) =>
    socket.once('data', async () => {
      for (const b of TLS_ALERT) {
        if (socket.destroyed) return;
        socket.write(Buffer.from([b]));
        await sleep(20);
      }
    }),
  );
  const { err, ms } = await failure({ host: '127.0.0.1', port });
  assert.ok(err instanceof ConnectionError, String(err));
  assert.match(err.message, /TLS alert record: is this an SSL listener\?/);
  assert.ok(ms < 3000, `took ${ms.toFixed(0)} ms`);
});

test('per-request caps: an answer announcing more than the request admits is refused before memory is taken', async () => {
  // After a normal ApiVersions: Metadata answered with a size prefix of 100 MiB, then silence.
  const huge = Buffer.alloc(12);
  huge.writeInt32BE(100 * MiB, 0);
  const b = await broker({
    handlers: {
      [Metadata.apiKey]: () => ({ raw: huge }),
      [Fetch.apiKey]: () => ({ raw: huge }),
    },
  });
  const pool = new SimpleFramePool();
  const c = await Connection.connect({ ...b.address, framePool: pool, maxResponseBytes: 8 * MiB });
  const started = performance.now();
  const err = await rejection(c.request(Metadata, { topics: [] }));
  assert.ok(err instanceof ConnectionError, String(err));
  assert.match(err.message, /the response to Metadata v\d+ \(correlation id \d+\) announces 104857600 bytes, more than the 8388608 this request admits \(maxResponseBytes\)/);
  assert.ok(performance.now() - started < 1000);
  assert.is(pool.stats.misses, 0);

  // Fetch: its own maxBytes plus the 16 MiB margin (1 MiB + 16 MiB < 100 MiB).
  const f = await Connection.connect({ ...b.address, framePool: pool });
  const ferr = await rejection(
    f.requestFrame(Fetch, { replicaId: -1, maxWaitMs: 0, minBytes: 1, maxBytes: MiB, isolationLevel: 0, sessionId: 0, sessionEpoch: -1, topics: [], forgottenTopicsData: [], rackId: '' }),
  );
  assert.ok(ferr instanceof ConnectionError, String(ferr));
  assert.match(ferr.message, /the response to Fetch v\d+ .* announces 104857600 bytes, more than the 17825792 this request admits \(its maxBytes plus a 16777216-byte margin/);
  assert.match(ferr.message, /raise fetchMaxBytes/);
  assert.is(pool.stats.misses, 0);
});

test('per-request caps: an answer within the cap still arrives (a 3 MiB Metadata under the default 32 MiB)', async () => {
  // 16,000 brokers with 200-byte host names: about 3.3 MB.
  const brokersList = Array.from({ length: 16_000 }, (_, i) => ({ nodeId: i, host: 'h'.repeat(200), port: 9092, rack: null }));
  const big = { ...(metadataBody('big') as object), brokers: brokersList };
  const b = await broker({ handlers: { [Metadata.apiKey]: () => ({ body: big }) } });
  const c = await Connection.connect({ ...b.address });
  const res = await c.request(Metadata, { topics: [] });
  assert.is(res.brokers.length, 16_000);
  assert.ok(c.stats.bytesRead > 3 * MiB);
  await c.close();
});

test('ssl against a plaintext listener: a TLS handshake error naming the likely cause, within the setup timeout', async () => {
  // What a Kafka PLAINTEXT listener does with a ClientHello: reads 16 03 01 xx as a 369 MB
  // request size, over socket.request.max.bytes, and hangs up.
  const port = await server((socket) =>
    socket.once('data', (chunk: Buffer) => {
      if (chunk.length >= 4 && chunk.readInt32BE(0) > 100 * MiB) socket.destroy();
    }),
  );
  const started = performance.now();
  const err = await rejection(Connection.connect({ host: '127.0.0.1', port, ssl: true, socketConnectionSetupTimeoutMs: 5000 }));
  assert.ok(err instanceof ConnectionError, String(err));
  assert.match(err.message, /is it a PLAINTEXT or SASL_PLAINTEXT listener\? remove `ssl`/);
  assert.ok(performance.now() - started < 5000);

  // A plaintext peer that says nothing: the setup timeout, with the same advice.
  const mute = await server(() => {});
  const t = await rejection(Connection.connect({ host: '127.0.0.1', port: mute, ssl: true, socketConnectionSetupTimeoutMs: 300 }));
  assert.ok(t instanceof ConnectionError, String(t));
  assert.match(t.message, /within 300 ms \(socketConnectionSetupTimeoutMs\): the TCP connection is up but the TLS handshake did not finish; .*remove `ssl`/);
});

test('a listener that hangs up after ApiVersions (SASL listener, no sasl set): the error says to set `sasl`', async () => {
  const b = await broker({ handlers: { [Metadata.apiKey]: () => ({ close: true }) } });
  const c = await Connection.connect({ ...b.address });
  const err = await rejection(c.request(Metadata, { topics: [] }));
  assert.ok(err instanceof ConnectionError, String(err));
  assert.match(err.message, /closed the connection after ApiVersions, at the first request: if this is a SASL_PLAINTEXT or SASL_SSL listener, set `sasl`/);
});

test('a listener that hangs up before answering ApiVersions: the error suggests `ssl`', async () => {
  const port = await server((socket) => socket.once('data', () => socket.destroy()));
  const err = await rejection(Connection.connect({ host: '127.0.0.1', port }));
  assert.ok(err instanceof ConnectionError, String(err));
  assert.match(err.message, /before answering ApiVersions: if this is an SSL listener, set `ssl`|ECONNRESET/);
});

// ---- SASL -------------------------------------------------------------------------------------

const handshake: Handler = () => ({ body: { errorCode: 0, mechanisms: ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512', 'OAUTHBEARER'] } });

function serverFirst(iterations: number): Handler {
  return (req) => {
    const clientFirst = (req.body as { authBytes: Buffer }).authBytes.toString();
    const nonce = /r=([^,]+)/.exec(clientFirst)![1];
    const text = `r=${nonce}server,s=${Buffer.from('salt-salt').toString('base64')},i=${iterations}`;
    return { body: { errorCode: 0, errorMessage: null, authBytes: Buffer.from(text), sessionLifetimeMs: 0n } };
  };
}

for (const [iterations, ok] of [
  [2 ** 31 - 1, false],
  [16385, false],
  [4095, false],
] as const) {
  test(`SCRAM: a server-first with ${iterations} iterations is refused at once, no PBKDF2 run (${ok})`, async () => {
    const b = await broker({ handlers: { [SaslHandshake.apiKey]: handshake, [SaslAuthenticate.apiKey]: serverFirst(iterations) } });
    const started = performance.now();
    const err = await rejection(Connection.connect({ ...b.address, sasl: { mechanism: 'scram-sha-512', username: 'alice', password: 'pw' } }));
    assert.ok(err instanceof AuthenticationError, String(err));
    assert.match(err.message, new RegExp(`asks for ${iterations} iterations, outside the 4096-16384`));
    assert.ok(performance.now() - started < 1000);
    assert.is(b.of(SaslAuthenticate.apiKey).length, 1, 'no client-final (proof) was sent');
  });
}

test('SASL: a peer that stalls between rounds cannot hold a connect past socketConnectionSetupTimeoutMs', async () => {
  let rounds = 0;
  const b = await broker({
    handlers: {
      [SaslHandshake.apiKey]: handshake,
      // Answers the client-first, then never the client-final.
      [SaslAuthenticate.apiKey]: (req, br) => (++rounds === 1 ? serverFirst(4096)(req, br) : { none: true }),
    },
  });
  const started = performance.now();
  const err = await rejection(
    Connection.connect({ ...b.address, requestTimeoutMs: 60_000, socketConnectionSetupTimeoutMs: 400, sasl: { mechanism: 'scram-sha-256', username: 'alice', password: 'pw' } }),
  );
  const ms = performance.now() - started;
  assert.ok(err instanceof ConnectionError, String(err));
  assert.match(err.message, /SASL SCRAM-SHA-256 authentication did not complete within 400 ms \(socketConnectionSetupTimeoutMs\)/);
  assert.ok(ms >= 350 && ms < 2000, `took ${ms.toFixed(0)} ms`);
  assert.is(rounds, 2);
});

test('SASL: an OAUTHBEARER token provider that never settles is bounded by the same deadline', async () => {
  const b = await broker({ handlers: { [SaslHandshake.apiKey]: handshake } });
  const started = performance.now();
  const err = await rejection(Connection.connect({ ...b.address, socketConnectionSetupTimeoutMs: 300, sasl: { mechanism: 'oauthbearer', oauthBearerProvider: () => new Promise(() => {}) } }));
  assert.ok(err instanceof ConnectionError, String(err));
  assert.match(err.message, /SASL OAUTHBEARER authentication did not complete within 300 ms/);
  assert.ok(performance.now() - started < 2000);
  assert.is(b.of(SaslAuthenticate.apiKey).length, 0);
});

test('SASL PLAIN over plaintext: one warning per logger, however many connections; none over TLS options or for SCRAM', async () => {
  const ok: Handler = () => ({ body: { errorCode: 0, errorMessage: null, authBytes: Buffer.alloc(0), sessionLifetimeMs: 0n } });
  const b = await broker({ handlers: { [SaslHandshake.apiKey]: handshake, [SaslAuthenticate.apiKey]: ok } });
  const { logger, lines } = capturingLogger();
  const sasl = { mechanism: 'plain', username: 'alice', password: 'plain-secret-1' } as const;
  for (let i = 0; i < 3; i++) await (await Connection.connect({ ...b.address, logger, sasl })).close();
  const warnings = lines.filter((l) => l.startsWith('warn '));
  assert.is(warnings.length, 1, lines.join('\n'));
  assert.match(warnings[0]!, /SASL PLAIN over a plaintext connection: the password crosses the network unencrypted/);
  assert.not.ok(lines.some((l) => l.includes('plain-secret-1')));
  const other = capturingLogger();
  await (await Connection.connect({ ...b.address, logger: other.logger, sasl: { mechanism: 'oauthbearer', oauthBearerProvider: () => ({ value: 'tok' }) } })).close();
  assert.is(other.lines.filter((l) => l.startsWith('warn ')).length, 0);
});

test('ApiVersions is unaffected: the default answer is far below the setup cap', async () => {
  const b = await broker();
  const c = await Connection.connect({ ...b.address });
  assert.ok(c.apiVersions.has(ApiVersions.apiKey));
  await c.close();
});

test('nothing escaped as an unhandled rejection or uncaught exception', () => {
  assert.equal(escaped, []);
});

test.run();
