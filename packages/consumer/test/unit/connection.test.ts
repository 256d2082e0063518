// Connection against a fake broker (@kwire/testkit's FakeBroker): handshake, pipelining, matching,
// timeouts, throttling, framing under awkward reads, bad input, closing, and leaks.
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ApiVersions, encodeResponseFrame, Fetch, isKafkaProtocolError, Metadata, SaslAuthenticate, SaslHandshake } from '@kwire/protocol';
import { Connection, decodeResponseBody, SimpleFramePool, type ConnectionOptions } from '../../src/connection/index.js';
import { ClosedError, ConfigError, ConnectionError, isKafkaError, RequestTimeoutError } from '../../src/errors.js';
import { allApiVersions, apiVersionsUpTo, type FakeBroker, fakeBrokers, metadataBody, type FakeRequest, rejection } from '@kwire/testkit';

// Anything escaping as an unhandled rejection or uncaught exception fails the last test.
const escaped: unknown[] = [];
process.on('unhandledRejection', (err) => escaped.push(err));
process.on('uncaughtException', (err) => escaped.push(err));

const broker = fakeBrokers(test);

function connect(b: FakeBroker, options: Partial<ConnectionOptions> = {}): Promise<Connection> {
  return Connection.connect({ ...b.address, clientId: 'conn-test', ...options });
}

/** The topic names of a Metadata request, for handlers that answer per request. */
function topicOf(req: FakeRequest): string {
  return (req.body as { topics: { name: string }[] | null }).topics?.[0]?.name ?? '';
}

const metadataEcho = (req: FakeRequest) => ({ body: metadataBody(topicOf(req)) });

test('connect: ApiVersions v5 carries client id and software name; versions negotiated from the broker ranges', async () => {
  const ranges = allApiVersions().map((k) => (k.apiKey === Metadata.apiKey ? { ...k, maxVersion: 11 } : k));
  const b = await broker({ apiVersions: ranges, handlers: { [Metadata.apiKey]: metadataEcho } });
  const c = await connect(b);
  const [av] = b.of(ApiVersions.apiKey);
  assert.is(av!.apiVersion, 5);
  assert.is(av!.clientId, 'conn-test');
  assert.is((av!.body as { clientSoftwareName: string }).clientSoftwareName, 'kwire');
  assert.is(c.apiVersionsVersion, 5);
  assert.is(c.state, 'ready');
  assert.equal(c.apiVersions.get(Metadata.apiKey), { minVersion: Metadata.minVersion, maxVersion: 11 });
  // Our Metadata range is 9-13, the broker's 9-11: 11.
  assert.is(c.version(Metadata), 11);
  const res = await c.request(Metadata, { topics: [{ name: 'a', topicId: undefined }] as never });
  assert.is(res.clusterId, 'a');
  assert.is(b.of(Metadata.apiKey)[0]!.apiVersion, 11);
  await c.close();
});

test('ApiVersions: a v0 UNSUPPORTED_VERSION answer makes the connection retry with the broker maximum', async () => {
  const b = await broker({ handlers: { [ApiVersions.apiKey]: apiVersionsUpTo(3), [Metadata.apiKey]: metadataEcho } });
  const c = await connect(b);
  assert.equal(
    b.of(ApiVersions.apiKey).map((r) => r.apiVersion),
    [5, 3],
  );
  assert.is(c.apiVersionsVersion, 3);
  assert.is((await c.request(Metadata, { topics: [{ name: 'x' }] as never })).clusterId, 'x');
  await c.close();
});

test('a broker offering an API only below our floor: a clear error naming the API and both ranges', async () => {
  const ranges = allApiVersions().map((k) => (k.apiKey === Fetch.apiKey ? { apiKey: k.apiKey, minVersion: 4, maxVersion: 11 } : k));
  const b = await broker({ apiVersions: ranges, handlers: { [Metadata.apiKey]: metadataEcho } });
  const c = await connect(b);
  const err = await rejection(c.request(Fetch, {}));
  assert.ok(isKafkaProtocolError(err));
  assert.match(err.message, /Fetch/);
  assert.match(err.message, /v4-11/);
  assert.match(err.message, new RegExp(`v${Fetch.minVersion}-${Fetch.maxVersion}`));
  // Nothing was sent, and the connection is still fine for what the broker does offer.
  assert.is(b.of(Fetch.apiKey).length, 0);
  assert.is((await c.request(Metadata, { topics: [{ name: 'still' }] as never })).clusterId, 'still');
  await c.close();

  // During setup: SASL needs SaslAuthenticate v2, a broker offering 0-1 cannot be used.
  const old = await broker({
    apiVersions: allApiVersions().map((k) => (k.apiKey === SaslAuthenticate.apiKey ? { ...k, minVersion: 0, maxVersion: 1 } : k)),
    handlers: { [SaslHandshake.apiKey]: () => ({ body: { errorCode: 0, mechanisms: ['PLAIN'] } }) },
  });
  const setup = await rejection(connect(old, { sasl: { mechanism: 'plain', username: 'u', password: 'p' } }));
  assert.ok(isKafkaProtocolError(setup));
  assert.match(setup.message, /SaslAuthenticate: the broker offers v0-1, kwire implements v2-2/);
});

test('pipelining: many requests in flight at once, each response matched to its request', async () => {
  const N = 25;
  const b = await broker({
    handlers: {
      [Metadata.apiKey]: async (req, br) => {
        // Answer nothing until every request is at the broker: only a pipelining client gets there
        // (a client waiting for each response before sending the next would time out here).
        for (let i = 0; i < 200 && br.of(Metadata.apiKey).length < N; i++) await sleep(5);
        return metadataEcho(req);
      },
    },
  });
  const c = await connect(b, { requestTimeoutMs: 3000 });
  const results = await Promise.all(Array.from({ length: N }, (_, i) => c.request(Metadata, { topics: [{ name: `t${i}` }] as never })));
  results.forEach((r, i) => assert.is(r.clusterId, `t${i}`));
  // Every request had reached the broker before the first answer was written.
  assert.is(b.of(Metadata.apiKey).length, N);
  const ids = b.of(Metadata.apiKey).map((r) => r.correlationId);
  assert.is(new Set(ids).size, N, 'distinct correlation ids');
  assert.is(c.stats.requestsSent, N + 1);
  await c.close();
});

test('a response whose correlation id is not the oldest in flight destroys the connection', async () => {
  const b = await broker({
    handlers: { [Metadata.apiKey]: (req) => ({ body: metadataBody('x'), correlationId: req.correlationId + 1000, delayMs: 20 }) },
  });
  const c = await connect(b);
  let closeReason: Error | undefined | 'not emitted' = 'not emitted';
  c.on('close', (r) => (closeReason = r));
  const first = rejection(c.request(Metadata, { topics: [{ name: 'a' }] as never }));
  const second = rejection(c.request(Metadata, { topics: [{ name: 'b' }] as never }));
  const [e1, e2] = await Promise.all([first, second]);
  assert.ok(e1 instanceof ConnectionError);
  assert.match(e1.message, /correlation id \d+ does not match the oldest request in flight \(Metadata v13, correlation id \d+\)/);
  assert.ok(e2 instanceof ConnectionError);
  await c.whenClosed();
  assert.is(c.state, 'closed');
  assert.is(closeReason, e1);
  // Later requests fail at once, with the reason.
  const later = await rejection(c.request(Metadata, { topics: [] }));
  assert.ok(later instanceof ConnectionError);
});

test('a request timeout destroys the connection and fails every pending request', async () => {
  const b = await broker({ handlers: { [Metadata.apiKey]: () => ({ none: true }) } });
  const c = await connect(b, { requestTimeoutMs: 30_000 });
  const started = performance.now();
  const a = rejection(c.request(Metadata, { topics: [] }, { timeoutMs: 150 }));
  const other = rejection(c.request(Metadata, { topics: [] }));
  const ea = await a;
  const elapsed = performance.now() - started;
  assert.ok(ea instanceof RequestTimeoutError, String(ea));
  assert.match(ea.message, /Metadata v13 .* got no response within 150 ms/);
  assert.ok(elapsed >= 140 && elapsed < 1000, `timed out after ${elapsed} ms`);
  const eo = await other;
  // The other request did not time out itself: it lost its connection.
  assert.ok(eo instanceof ConnectionError, String(eo));
  assert.is((eo as Error & { cause?: unknown }).cause, ea);
  assert.ok((eo as ConnectionError).retriable);
  await c.whenClosed();
  assert.is(c.closeError, ea);
});

test('a long-poll request may wait longer than requestTimeoutMs when it says so', async () => {
  const b = await broker({ handlers: { [Metadata.apiKey]: (req) => ({ ...metadataEcho(req), delayMs: 350 }) } });
  const c = await connect(b, { requestTimeoutMs: 150 });
  const res = await c.request(Metadata, { topics: [{ name: 'slow' }] as never }, { timeoutMs: 2000 });
  assert.is(res.clusterId, 'slow');
  // Control: the same wait under the default timeout fails, so the option made the difference.
  const err = await rejection(c.request(Metadata, { topics: [{ name: 'slow' }] as never }));
  assert.ok(err instanceof RequestTimeoutError);
});

test('throttleTimeMs > 0 holds the next request back until that time has passed (KIP-219)', async () => {
  let answeredAt = 0;
  const b = await broker({
    handlers: {
      [Metadata.apiKey]: (req) => {
        answeredAt = performance.now();
        return { body: metadataBody(topicOf(req), topicOf(req) === 'throttled' ? 300 : 0) };
      },
    },
  });
  const c = await connect(b);
  // Control: without throttling the next request follows at once.
  await c.request(Metadata, { topics: [{ name: 'free' }] as never });
  let t0 = answeredAt;
  await c.request(Metadata, { topics: [{ name: 'next' }] as never });
  const quick = b.of(Metadata.apiKey)[1]!.receivedAt - t0;
  assert.ok(quick < 150, `unthrottled follow-up after ${quick} ms`);

  const res = await c.request(Metadata, { topics: [{ name: 'throttled' }] as never });
  assert.is(res.throttleTimeMs, 300);
  t0 = answeredAt;
  const sentAt = performance.now();
  await c.request(Metadata, { topics: [{ name: 'after' }] as never });
  const waited = b.of(Metadata.apiKey)[3]!.receivedAt - t0;
  assert.ok(waited >= 290, `the request after a 300 ms throttle reached the broker after ${waited} ms`);
  assert.ok(performance.now() - sentAt < 2000);
  assert.is(c.stats.throttleEvents, 1);
  await c.close();
});

test('a request held back by a throttle times out after requestTimeoutMs from when it was made, alone', async () => {
  const b = await broker({ handlers: { [Metadata.apiKey]: (req) => ({ body: metadataBody(topicOf(req), topicOf(req) === 'throttled' ? 1_000 : 0) }) } });
  // The throttle (1000 ms) is capped at requestTimeoutMs (600 ms) from the answer; the held
  // request's own timeout (200 ms) runs out well before that. With the request's timeout equal to
  // the cap, which of the two timers fired first depended on a millisecond (flaky under load).
  const c = await connect(b, { requestTimeoutMs: 600 });
  await c.request(Metadata, { topics: [{ name: 'throttled' }] as never });
  const started = performance.now();
  const err = await rejection(c.request(Metadata, { topics: [{ name: 'held' }] as never }, { timeoutMs: 200 }));
  const took = performance.now() - started;
  assert.ok(err instanceof RequestTimeoutError, String(err));
  assert.match((err as Error).message, /waited 200 ms without being sent, while the broker throttled/);
  assert.ok(took >= 190 && took < 580, `failed after ${Math.round(took)} ms (timeoutMs 200, throttle capped at 600)`);
  assert.is(b.of(Metadata.apiKey).length, 1, 'the held request never reached the broker');
  assert.is(c.state, 'ready', 'nothing was sent: the connection stays in step and open');
  await c.close();
});

test('a throttle time longer than requestTimeoutMs is capped (a hostile 2^31-1 ms cannot stall the connection)', async () => {
  const b = await broker({ handlers: { [Metadata.apiKey]: (req) => ({ body: metadataBody(topicOf(req), topicOf(req) === 'forever' ? 0x7fffffff : 0) }) } });
  const c = await connect(b, { requestTimeoutMs: 400 });
  await c.request(Metadata, { topics: [{ name: 'forever' }] as never });
  const started = performance.now();
  // Made after the cap has run out: sent, not held for 24 days.
  await new Promise((r) => setTimeout(r, 450));
  const res = await c.request(Metadata, { topics: [{ name: 'later' }] as never });
  assert.is(res.clusterId, 'later');
  assert.ok(performance.now() - started < 1_500);
  await c.close();
});

test('requestFrame: the throttle time of an undecoded Fetch frame is honoured too', async () => {
  let answeredAt = 0;
  const b = await broker({
    handlers: {
      [Fetch.apiKey]: () => {
        answeredAt = performance.now();
        return { body: { throttleTimeMs: 250, errorCode: 0, sessionId: 0, responses: [] } };
      },
      [Metadata.apiKey]: metadataEcho,
    },
  });
  const c = await connect(b);
  const lease = await c.requestFrame(Fetch, { maxWaitMs: 0, topics: [] });
  assert.is(lease.throttleTimeMs, 250);
  const t0 = answeredAt;
  await c.request(Metadata, { topics: [{ name: 'x' }] as never });
  const waited = b.of(Metadata.apiKey)[0]!.receivedAt - t0;
  assert.ok(waited >= 240, `waited ${waited} ms`);
  lease.release();
  await c.close();
});

test('a response cut at every byte offset (two reads) arrives intact', async () => {
  let cut = 0;
  const b = await broker({ handlers: { [Metadata.apiKey]: (req) => ({ body: metadataBody(topicOf(req)), pieces: [cut], gapMs: 3 }) } });
  const c = await connect(b);
  const size = encodeResponseFrame(Metadata.apiKey, 13, 1, metadataBody('cut-00')).length;
  assert.ok(size > 40, `frame of ${size} bytes`);
  for (cut = 1; cut < size; cut++) {
    const name = `cut-${String(cut).padStart(2, '0')}`;
    const res = await c.request(Metadata, { topics: [{ name }] as never });
    assert.is(res.clusterId, name, `cut at ${cut}`);
  }
  // Three pieces: the size prefix itself split, then the body split again.
  for (const pieces of [
    [1, 3],
    [2, 6, 9],
    [3, 4, 5, 20],
  ]) {
    cut = 0;
    b.handlers[Metadata.apiKey] = (req) => ({ body: metadataBody(topicOf(req)), pieces, gapMs: 3 });
    assert.is((await c.request(Metadata, { topics: [{ name: 'multi' }] as never })).clusterId, 'multi');
  }
  assert.ok(c.stats.reads > size, `reads: ${c.stats.reads}`);
  await c.close();
});

/** A Fetch response body with `bytes` of records in one partition. */
function fetchBody(records: Buffer): unknown {
  return {
    throttleTimeMs: 0,
    errorCode: 0,
    sessionId: 0,
    responses: [
      {
        topic: '',
        topicId: 'AAAAAAAAAAAAAAAAAAAAAg',
        partitions: [{ partitionIndex: 0, errorCode: 0, highWatermark: 1n, lastStableOffset: 1n, logStartOffset: 0n, abortedTransactions: null, preferredReadReplica: -1, records }],
      },
    ],
  };
}

test('a 5 MiB frame arriving in small pieces lands in one pool buffer of its size, read into directly', async () => {
  const records = Buffer.alloc(5 * 1024 * 1024);
  for (let i = 0; i < records.length; i += 4) records.writeUInt32BE(i, i);
  let expected: Buffer | undefined;
  const b = await broker({
    handlers: {
      [Fetch.apiKey]: (req) => {
        expected = Buffer.from(encodeResponseFrame(Fetch.apiKey, req.apiVersion, req.correlationId, fetchBody(records)));
        const pieces: number[] = [];
        for (let o = 7000; o < expected.length; o += 7000) pieces.push(o);
        return { raw: expected, pieces, gapMs: 0 };
      },
    },
  });
  const pool = new SimpleFramePool();
  const c = await connect(b, { framePool: pool });
  const lease = await c.requestFrame(Fetch, { maxWaitMs: 0, topics: [] });
  assert.is(lease.frame.length, expected!.length, 'exactly the frame');
  assert.ok(lease.frame.equals(expected!));
  assert.is(pool.stats.misses, 1);
  assert.is(pool.stats.outstanding, 1);
  const stats = c.stats;
  assert.is(stats.largeFrames, 1);
  assert.ok(stats.directReads > 0, 'the kernel wrote into the frame buffer');
  const body = decodeResponseBody(Fetch, lease);
  assert.ok(body.responses[0]!.partitions[0]!.records!.equals(records));
  lease.release();
  lease.release();
  assert.is(pool.stats.outstanding, 0);
  assert.is(pool.stats.released, 1);
  assert.is(pool.stats.ignored, 0, 'a second release() is a no-op');

  // The same frame through request(): decoded, and not taken from the pool (the body keeps views).
  const decoded = await c.request(Fetch, { maxWaitMs: 0, topics: [] });
  assert.ok(decoded.responses[0]!.partitions[0]!.records!.equals(records));
  assert.is(pool.stats.misses, 1);
  assert.is(pool.stats.hits, 0);
  await c.close();
});

test("requestFrame: a small frame is the caller's copy, still valid after later reads", async () => {
  const b = await broker({ handlers: { [Metadata.apiKey]: metadataEcho } });
  const c = await connect(b);
  const l1 = await c.requestFrame(Metadata, { topics: [{ name: 'first' }] as never });
  const l2 = await c.requestFrame(Metadata, { topics: [{ name: 'second' }] as never });
  for (let i = 0; i < 5; i++) await c.request(Metadata, { topics: [{ name: `noise-${i}` }] as never });
  assert.is(decodeResponseBody(Metadata, l1).clusterId, 'first');
  assert.is(decodeResponseBody(Metadata, l2).clusterId, 'second');
  assert.is(l1.version, 13);
  assert.is(l1.frame.readInt32BE(0), l1.frame.length - 4);
  l1.release();
  l2.release();
  await c.close();
});

for (const [name, bytes, pattern] of [
  ['a negative frame size', Buffer.from([0xff, 0xff, 0xff, 0xf0, 1, 2, 3, 4]), /negative frame size/],
  ['an oversized frame size', Buffer.from([0x7f, 0, 0, 0, 1, 2, 3, 4]), /exceeds the limit of 1048576/],
  ['a frame too short for a correlation id', Buffer.from([0, 0, 0, 2, 0, 0]), /has no correlation id/],
] as const) {
  test(`bad input: ${name} destroys the connection with a KafkaProtocolError`, async () => {
    const b = await broker({ handlers: { [Metadata.apiKey]: () => ({ raw: bytes }) } });
    const c = await connect(b, { maxFrameBytes: 1024 * 1024 });
    const err = await rejection(c.request(Metadata, { topics: [] }));
    assert.ok(isKafkaProtocolError(err), String(err));
    assert.match(err.message, pattern);
    await c.whenClosed();
    assert.is(c.closeError, err);
  });
}

test('bad input: a body that does not decode fails its request with a KafkaProtocolError naming the API', async () => {
  const b = await broker({
    handlers: {
      [Metadata.apiKey]: (req) => {
        const f = Buffer.alloc(4 + 4 + 1 + 6);
        f.writeInt32BE(f.length - 4, 0);
        f.writeInt32BE(req.correlationId, 4);
        f[8] = 0; // no header tags, then garbage
        f.fill(0xee, 9);
        return { raw: f };
      },
    },
  });
  const c = await connect(b);
  const pending = rejection(c.request(Metadata, { topics: [] }));
  const queued = rejection(c.request(Metadata, { topics: [] }));
  const err = await pending;
  assert.ok(isKafkaProtocolError(err), String(err));
  assert.match(err.message, /MetadataResponse v13/);
  const other = await queued;
  assert.ok(other instanceof ConnectionError && (other as Error & { cause?: unknown }).cause === err);
});

test('bad input: a response with no request in flight destroys the connection', async () => {
  const b = await broker({
    handlers: {
      [Metadata.apiKey]: (req) => {
        const ok = Buffer.from(encodeResponseFrame(Metadata.apiKey, req.apiVersion, req.correlationId, metadataBody('ok')));
        return { raw: Buffer.concat([ok, ok]) };
      },
    },
  });
  const c = await connect(b);
  assert.is((await c.request(Metadata, { topics: [] })).clusterId, 'ok');
  await c.whenClosed();
  assert.ok(isKafkaProtocolError(c.closeError));
  assert.match(c.closeError!.message, /arrived with no request in flight/);
});

test('bad input: random garbage never hangs and never escapes as an uncaught error', async () => {
  let seed = 99;
  const rand = (n: number) => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n;
  let garbage = Buffer.alloc(0);
  const b = await broker({ handlers: { [Metadata.apiKey]: () => ({ raw: garbage }) } });
  for (let round = 0; round < 40; round++) {
    const len = 1 + rand(40);
    garbage = Buffer.alloc(len);
    for (let i = 0; i < len; i++) garbage[i] = rand(256);
    // Half the rounds: a plausible small size prefix, so the garbage reaches the decoders.
    if (round % 2 === 0 && len >= 4) garbage.writeInt32BE(len - 4, 0);
    const c = await connect(b, { requestTimeoutMs: 200, maxFrameBytes: 1 << 20 });
    const started = performance.now();
    const err = await rejection(c.request(Metadata, { topics: [] }));
    assert.ok(isKafkaError(err) || isKafkaProtocolError(err), `round ${round}: ${String(err)}`);
    assert.ok(performance.now() - started < 2000, `round ${round} took too long`);
    await c.whenClosed();
  }
});

test('close(): no new requests, in-flight ones complete, then the socket ends cleanly', async () => {
  const b = await broker({ handlers: { [Metadata.apiKey]: (req) => ({ ...metadataEcho(req), delayMs: 100 }) } });
  const c = await connect(b);
  let reason: Error | undefined | 'not emitted' = 'not emitted';
  c.on('close', (r) => (reason = r));
  const inflight = [1, 2, 3].map((i) => c.request(Metadata, { topics: [{ name: `f${i}` }] as never }));
  const closing = c.close();
  const refused = await rejection(c.request(Metadata, { topics: [] }));
  assert.ok(refused instanceof ClosedError);
  assert.equal(
    (await Promise.all(inflight)).map((r) => r.clusterId),
    ['f1', 'f2', 'f3'],
  );
  await closing;
  assert.is(reason, undefined, 'a clean close has no reason');
  assert.is(c.state, 'closed');
  // The broker sees the socket go.
  for (let i = 0; i < 50 && b.sockets.size > 0; i++) await sleep(10);
  assert.is(b.sockets.size, 0);
});

test('close() gives up on requests that never complete after its bound', async () => {
  const b = await broker({ handlers: { [Metadata.apiKey]: () => ({ none: true }) } });
  const c = await connect(b);
  const pending = rejection(c.request(Metadata, { topics: [] }));
  const started = performance.now();
  await c.close({ timeoutMs: 200 });
  const elapsed = performance.now() - started;
  assert.ok(elapsed >= 190 && elapsed < 1500, `close took ${elapsed} ms`);
  const err = await pending;
  assert.ok(err instanceof ClosedError, String(err));
  assert.ok(c.closeError instanceof ClosedError);
});

test('destroy(reason) fails everything pending with the reason as cause', async () => {
  const b = await broker({ handlers: { [Metadata.apiKey]: () => ({ none: true }) } });
  const c = await connect(b);
  const p = rejection(c.request(Metadata, { topics: [] }));
  const boom = new Error('boom');
  c.destroy(boom);
  const err = await p;
  assert.ok(err instanceof ConnectionError);
  assert.is((err as Error & { cause?: unknown }).cause, boom);
  await c.whenClosed();
  assert.is(c.closeError, boom);
});

test('the broker hanging up fails pending requests with a retriable ConnectionError', async () => {
  const b = await broker({ handlers: { [Metadata.apiKey]: () => ({ close: true }) } });
  const c = await connect(b);
  const err = await rejection(c.request(Metadata, { topics: [] }));
  assert.ok(err instanceof ConnectionError, String(err));
  assert.match(err.message, /closed the connection|ECONNRESET/);
  assert.ok((err as ConnectionError).retriable);
});

test('connect failures: a refused port, and a TLS handshake that never completes (setup timeout)', async () => {
  const port = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
  const refused = await rejection(Connection.connect({ host: '127.0.0.1', port }));
  assert.ok(refused instanceof ConnectionError, String(refused));
  assert.match(refused.message, /ECONNREFUSED/);
  assert.ok((refused as ConnectionError).retriable);

  // A TCP server that accepts and says nothing: the TLS handshake waits forever.
  const mute = createServer(() => {});
  await new Promise<void>((r) => mute.listen(0, '127.0.0.1', r));
  try {
    const started = performance.now();
    const err = await rejection(Connection.connect({ host: '127.0.0.1', port: (mute.address() as { port: number }).port, ssl: true, socketConnectionSetupTimeoutMs: 200 }));
    assert.ok(err instanceof ConnectionError, String(err));
    assert.match(err.message, /within 200 ms \(socketConnectionSetupTimeoutMs\)/);
    assert.ok(performance.now() - started < 1500);
  } finally {
    mute.close();
  }
});

test('options are checked up front with ConfigError', () => {
  const base = { host: '127.0.0.1', port: 9092 };
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ requestTimeoutMs: -1 }, /requestTimeoutMs must be a positive integer, got number -1/],
    [{ requestTimeoutMs: '30s' }, /requestTimeoutMs must be a positive integer, got "30s"/],
    [{ port: 70000 }, /port must be an integer 1-65535/],
    [{ host: '' }, /host must be a non-empty string/],
    [{ ssl: 'yes' }, /ssl must be true or an object of node:tls options/],
    [{ sasl: { mechanism: 'gssapi', username: 'u', password: 'p' } }, /sasl.mechanism must be one of plain, scram-sha-256, scram-sha-512, oauthbearer/],
    [{ sasl: { mechanism: 'plain', username: '', password: 'p' } }, /sasl.username must be a non-empty string/],
    [{ sasl: { mechanism: 'oauthbearer' } }, /sasl.oauthBearerProvider must be a function/],
    [{ readBufferBytes: 10 }, /readBufferBytes must be at least 1024/],
  ];
  for (const [patch, pattern] of cases) {
    assert.throws(
      () => new Connection({ ...base, ...patch } as never),
      (err: unknown) => err instanceof ConfigError && pattern.test((err as Error).message),
      JSON.stringify(patch),
    );
  }
  // A wrong password type is reported by type, never by value.
  try {
    new Connection({ ...base, sasl: { mechanism: 'plain', username: 'u', password: 12345678 } } as never);
    assert.unreachable();
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    assert.match((err as Error).message, /sasl.password must be a string for plain, got number/);
    assert.not.match((err as Error).message, /12345678/);
  }
});

test('opening and closing many connections leaves no handles, listeners or sockets behind', async () => {
  const b = await broker({ handlers: { [Metadata.apiKey]: metadataEcho } });
  const handles = () => (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles().length;
  const processListeners = () => process.eventNames().reduce((n, e) => n + process.listenerCount(e), 0);
  const baseHandles = handles();
  const baseListeners = processListeners();
  const warnings: Error[] = [];
  const onWarning = (w: Error) => warnings.push(w);
  process.on('warning', onWarning);
  for (let i = 0; i < 60; i++) {
    const c = await connect(b);
    await c.request(Metadata, { topics: [{ name: `n${i}` }] as never });
    // Three ways to end: clean close, destroy, the broker hanging up.
    if (i % 3 === 0) await c.close();
    else if (i % 3 === 1) {
      c.destroy();
      await c.whenClosed();
    } else {
      for (const s of b.sockets) s.destroy();
      await c.whenClosed();
    }
    assert.is(c.state, 'closed');
  }
  for (let i = 0; i < 50 && b.sockets.size > 0; i++) await sleep(10);
  await sleep(20);
  assert.is(b.sockets.size, 0, 'broker-side sockets left open');
  assert.ok(handles() <= baseHandles, `active handles: ${handles()} now, ${baseHandles} before`);
  process.off('warning', onWarning);
  assert.is(processListeners(), baseListeners, 'process listeners added');
  assert.equal(
    warnings.map((w) => w.name),
    [],
  );
});

test('re-authentication (KIP-368): before the session ends, with ordinary requests held back meanwhile', async () => {
  let authAt: number[] = [];
  const b = await broker({
    handlers: {
      [SaslHandshake.apiKey]: () => ({ body: { errorCode: 0, mechanisms: ['PLAIN'] } }),
      [SaslAuthenticate.apiKey]: () => {
        authAt.push(performance.now());
        return { body: { errorCode: 0, errorMessage: null, authBytes: Buffer.alloc(0), sessionLifetimeMs: 400n } };
      },
      [Metadata.apiKey]: (req) => ({ ...metadataEcho(req), delayMs: 30 }),
    },
  });
  const c = await connect(b, { sasl: { mechanism: 'plain', username: 'alice', password: 'pw' } });
  const reauths: number[] = [];
  c.on('reauthenticated', (info) => reauths.push(info.sessionLifetimeMs));
  const end = performance.now() + 1300;
  let i = 0;
  // Two requests at a time, continuously: the re-authentication must find a gap by holding new ones.
  while (performance.now() < end) {
    const r = await Promise.all([c.request(Metadata, { topics: [{ name: `a${i}` }] as never }), c.request(Metadata, { topics: [{ name: `b${i}` }] as never })]);
    assert.equal(
      r.map((x) => x.clusterId),
      [`a${i}`, `b${i}`],
    );
    i++;
  }
  assert.ok(reauths.length >= 2, `re-authentications: ${reauths.length}`);
  assert.equal(reauths.slice(0, 2), [400, 400]);
  assert.is(c.stats.reauthentications, reauths.length);
  // 85-95% of 400 ms after the previous authentication (plus the wait for in-flight requests).
  const gap = authAt[1]! - authAt[0]!;
  assert.ok(gap >= 330 && gap < 520, `first re-authentication ${gap} ms after the first`);
  // On the wire: each handshake is directly followed by its authenticate, and nothing was in
  // flight when the handshake arrived (the broker answers in order, so every earlier request had
  // been answered: count answers by position).
  const seq = b.requests.map((r) => r.apiKey);
  seq.forEach((k, at) => {
    if (k === SaslHandshake.apiKey) assert.is(seq[at + 1], SaslAuthenticate.apiKey, `authenticate right after the handshake at ${at}`);
  });
  assert.ok(i > 5, `requests kept flowing: ${i} rounds`);
  authAt = [];
  await c.close();
});

test('close() while a re-authentication is due: in-flight requests finish, queued ones go, no new handshake', async () => {
  const b = await broker({
    handlers: {
      [SaslHandshake.apiKey]: () => ({ body: { errorCode: 0, mechanisms: ['PLAIN'] } }),
      [SaslAuthenticate.apiKey]: () => ({ body: { errorCode: 0, errorMessage: null, authBytes: Buffer.alloc(0), sessionLifetimeMs: 300n } }),
      [Metadata.apiKey]: (req) => ({ ...metadataEcho(req), delayMs: topicOf(req) === 'long' ? 450 : 0 }),
    },
  });
  const c = await connect(b, { sasl: { mechanism: 'plain', username: 'alice', password: 'pw' } });
  const long = c.request(Metadata, { topics: [{ name: 'long' }] as never });
  // The re-authentication falls due (255-285 ms) while `long` is in flight; this one is held.
  await sleep(320);
  assert.is(c.inFlight, 1);
  const queued = c.request(Metadata, { topics: [{ name: 'queued' }] as never });
  assert.is(c.queued, 1, 'held back for the re-authentication');
  const started = performance.now();
  await c.close({ timeoutMs: 5000 });
  assert.ok(performance.now() - started < 1500, 'close did not wait for its bound');
  assert.is((await long).clusterId, 'long');
  assert.is((await queued).clusterId, 'queued');
  assert.is(b.of(SaslHandshake.apiKey).length, 1, 'no handshake for a session about to end');
  assert.is(c.closeError, undefined);
});

test('nothing escaped as an unhandled rejection or uncaught exception', () => {
  assert.equal(escaped, []);
});

test.run();
