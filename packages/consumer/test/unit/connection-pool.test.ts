// BrokerPool against fake brokers: lazy connections, one per node and purpose, bootstrap order,
// backoff, no reconnect storm on authentication failures, idle close, clean shutdown.
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Metadata, SaslAuthenticate, SaslHandshake } from '@kwire/protocol';
import { Backoff, backoffDelay, BrokerPool, type BrokerPoolOptions } from '../../src/connection/index.js';
import { AuthenticationError, ClosedError, ConfigError, ConnectionError } from '../../src/errors.js';
import { FakeBroker, metadataBody, type FakeRequest, type Handler, rejection } from '@kwire/testkit';

const escaped: unknown[] = [];
process.on('unhandledRejection', (err) => escaped.push(err));
process.on('uncaughtException', (err) => escaped.push(err));

const cleanup: (() => Promise<void>)[] = [];
test.after.each(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

async function broker(handlers: Partial<Record<number, Handler>> = {}): Promise<FakeBroker> {
  const b = await FakeBroker.start({
    handlers: {
      [Metadata.apiKey]: async (req: FakeRequest) => {
        const name = (req.body as { topics: { name: string }[] | null }).topics?.[0]?.name ?? '';
        if (name === 'slow') await sleep(800);
        return { body: metadataBody(name) };
      },
      ...handlers,
    },
  });
  cleanup.push(() => b.stop());
  return b;
}

function pool(options: Partial<BrokerPoolOptions> & { bootstrapServers: BrokerPoolOptions['bootstrapServers'] }): BrokerPool {
  const p = new BrokerPool(options);
  cleanup.push(() => p.close());
  return p;
}

async function deadPort(): Promise<number> {
  return new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

test('backoffDelay: doubling from reconnectBackoffMs up to reconnectBackoffMaxMs, with +-20% jitter', () => {
  const mid = { baseMs: 50, maxMs: 1000, random: () => 0.5 };
  assert.equal(
    [1, 2, 3, 4, 5, 6, 7, 40].map((n) => backoffDelay(n, mid)),
    [50, 100, 200, 400, 800, 1000, 1000, 1000],
  );
  assert.is(backoffDelay(0, mid), 0);
  assert.is(backoffDelay(3, { ...mid, random: () => 0 }), 160);
  assert.is(backoffDelay(3, { ...mid, random: () => 0.999999 }), 240);
  const b = new Backoff({ baseMs: 100, maxMs: 1000, random: () => 0.5 });
  assert.is(b.fail(1000), 100);
  assert.is(b.remaining(1050), 50);
  assert.is(b.fail(2000, 700), 700, 'a floor (authentication failures) wins over a shorter delay');
  b.succeed();
  assert.is(b.remaining(0), 0);
  assert.is(b.consecutiveFailures, 0);
});

test('connections are created lazily, once per node and purpose, and shared by concurrent callers', async () => {
  const b = await broker();
  const p = pool({ bootstrapServers: `127.0.0.1:${b.port}` });
  assert.is(b.accepted, 0, 'nothing before first use');
  const [c1, c2, c3] = await Promise.all([p.get({ nodeId: 1, ...b.address }), p.get({ nodeId: 1, ...b.address }), p.get({ nodeId: 1, ...b.address })]);
  assert.is(c1, c2);
  assert.is(c2, c3);
  assert.is(b.accepted, 1);
  assert.is(p.stats.connectAttempts, 1);
  assert.is(await p.get({ nodeId: 1, ...b.address }), c1);
  // Without a node id, the address is the key: another connection.
  const byAddress = await p.get(b.address);
  assert.is.not(byAddress, c1);
  assert.is(p.connections().length, 2);
});

test('the coordinator connection is separate: a long poll on it does not hold back data requests', async () => {
  const b = await broker();
  const p = pool({ bootstrapServers: `127.0.0.1:${b.port}` });
  const data = await p.get({ nodeId: 1, ...b.address }, 'data');
  const coordinator = await p.get({ nodeId: 1, ...b.address }, 'coordinator');
  assert.is.not(data, coordinator);
  const slow = coordinator.request(Metadata, { topics: [{ name: 'slow' }] as never });
  const started = performance.now();
  assert.is((await data.request(Metadata, { topics: [{ name: 'quick' }] as never })).clusterId, 'quick');
  const quick = performance.now() - started;
  assert.ok(quick < 400, `a data request took ${quick} ms next to an 800 ms coordinator long poll`);
  // Control: behind the long poll on the same connection, it waits.
  const behind = performance.now();
  await coordinator.request(Metadata, { topics: [{ name: 'quick' }] as never });
  assert.ok(performance.now() - behind > 500);
  await slow;
});

test('bootstrap: servers are tried in turn until one answers; all down is one ConnectionError naming each', async () => {
  const b = await broker();
  const dead = await deadPort();
  const p = pool({ bootstrapServers: [`127.0.0.1:${dead}`, `127.0.0.1:${b.port}`] });
  const c = await p.bootstrap();
  assert.is(c.port, b.port);
  assert.is(p.stats.connectAttempts, 2);
  assert.is(await p.bootstrap(), c, 'a ready bootstrap connection is reused');

  const dead2 = await deadPort();
  const none = pool({ bootstrapServers: `127.0.0.1:${dead},127.0.0.1:${dead2}`, reconnectBackoffMs: 10, reconnectBackoffMaxMs: 20 });
  const err = await rejection(none.bootstrap());
  assert.ok(err instanceof ConnectionError, String(err));
  assert.match(err.message, new RegExp(`127.0.0.1:${dead} \\(.*ECONNREFUSED.*\\); 127.0.0.1:${dead2} \\(`));
});

test('reconnect backoff: after failures the next attempt waits, doubling', async () => {
  const dead = await deadPort();
  const p = pool({ bootstrapServers: `127.0.0.1:${dead}`, reconnectBackoffMs: 150, reconnectBackoffMaxMs: 1000 });
  const target = { host: '127.0.0.1', port: dead };
  const times: number[] = [];
  for (let i = 0; i < 3; i++) {
    const started = performance.now();
    const err = await rejection(p.get(target));
    assert.ok(err instanceof ConnectionError);
    times.push(performance.now() - started);
  }
  // 1st: at once. 2nd: after 150 ms +-20%. 3rd: after 300 ms +-20%.
  assert.ok(times[0]! < 100, `first attempt after ${times[0]} ms`);
  assert.ok(times[1]! >= 115 && times[1]! < 400, `second after ${times[1]} ms`);
  assert.ok(times[2]! >= 235 && times[2]! < 600, `third after ${times[2]} ms`);
  assert.is(p.stats.connectAttempts, 3);
});

test('a wrong password: AuthenticationError to the caller, and no reconnect storm however hard it retries', async () => {
  const b = await broker({
    [SaslHandshake.apiKey]: () => ({ body: { errorCode: 0, mechanisms: ['PLAIN'] } }),
    [SaslAuthenticate.apiKey]: () => ({ body: { errorCode: 58, errorMessage: 'Invalid username or password', authBytes: Buffer.alloc(0), sessionLifetimeMs: 0n } }),
  });
  const p = pool({ bootstrapServers: `127.0.0.1:${b.port}`, reconnectBackoffMs: 50, reconnectBackoffMaxMs: 400, sasl: { mechanism: 'plain', username: 'alice', password: 'wrong' } });
  const end = performance.now() + 1500;
  let calls = 0;
  // A caller retrying in a tight loop (the worst case).
  while (performance.now() < end) {
    const err = await rejection(p.get({ nodeId: 1, ...b.address }));
    assert.ok(err instanceof AuthenticationError, String(err));
    assert.match(err.message, /Invalid username or password/);
    calls++;
    await new Promise((r) => setImmediate(r));
  }
  // One attempt per 400 ms at most: about 4 in 1.5 s, however many calls.
  assert.ok(calls > 100, `calls: ${calls}`);
  assert.ok(p.stats.connectAttempts <= 5, `connection attempts: ${p.stats.connectAttempts}`);
  assert.is(b.accepted, p.stats.connectAttempts, 'the broker saw exactly those');
  assert.is(p.stats.authenticationFailures, p.stats.connectAttempts);
  assert.ok(p.stats.fastFailures > 0);
});

test('a node that moved: the next get() connects to the new address and closes the old connection', async () => {
  const a = await broker();
  const b = await broker();
  const p = pool({ bootstrapServers: `127.0.0.1:${a.port}` });
  const c1 = await p.get({ nodeId: 7, ...a.address });
  const c2 = await p.get({ nodeId: 7, ...b.address });
  assert.is.not(c1, c2);
  assert.is(c2.port, b.port);
  await c1.whenClosed();
  assert.is(c1.closeError, undefined, 'closed cleanly');
});

test('a broken connection is replaced on the next get()', async () => {
  const b = await broker();
  const p = pool({ bootstrapServers: `127.0.0.1:${b.port}`, reconnectBackoffMs: 20, reconnectBackoffMaxMs: 40 });
  const c1 = await p.get({ nodeId: 1, ...b.address });
  for (const s of b.sockets) s.destroy();
  await c1.whenClosed();
  const c2 = await p.get({ nodeId: 1, ...b.address });
  assert.is.not(c2, c1);
  assert.ok(c2.ready);
  assert.is((await c2.request(Metadata, { topics: [{ name: 'again' }] as never })).clusterId, 'again');
});

test('idle connections are closed after connectionsMaxIdleMs; busy ones are not', async () => {
  const b = await broker();
  const p = pool({ bootstrapServers: `127.0.0.1:${b.port}`, connectionsMaxIdleMs: 200 });
  const idle = await p.get({ nodeId: 1, ...b.address });
  const busy = await p.get({ nodeId: 2, ...b.address });
  const end = performance.now() + 600;
  while (performance.now() < end) {
    await busy.request(Metadata, { topics: [] });
    await sleep(40);
  }
  assert.is(idle.state, 'closed');
  assert.is(busy.state, 'ready');
  assert.is(p.stats.idleClosed, 1);
  const again = await p.get({ nodeId: 1, ...b.address });
  assert.is.not(again, idle);
});

test('close(): every connection closed, waiting callers released, later calls refused', async () => {
  const b = await broker();
  const dead = await deadPort();
  const p = new BrokerPool({ bootstrapServers: `127.0.0.1:${b.port}`, reconnectBackoffMs: 5000, reconnectBackoffMaxMs: 5000 });
  const c = await p.get({ nodeId: 1, ...b.address });
  const inflight = c.request(Metadata, { topics: [{ name: 'slow' }] as never });
  await rejection(p.get({ host: '127.0.0.1', port: dead }));
  // This one sleeps out a 5 s backoff: close() must not wait for it.
  const sleeping = rejection(p.get({ host: '127.0.0.1', port: dead }));
  const started = performance.now();
  await p.close();
  assert.ok(performance.now() - started < 2000);
  assert.is(c.state, 'closed');
  assert.is((await inflight).clusterId, 'slow', 'in-flight requests completed before the close');
  assert.ok((await sleeping) instanceof ClosedError);
  assert.ok((await rejection(p.get({ nodeId: 1, ...b.address }))) instanceof ClosedError);
  for (let i = 0; i < 50 && b.sockets.size > 0; i++) await sleep(10);
  assert.is(b.sockets.size, 0);
});

test('pool options are checked up front', () => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ bootstrapServers: '' }, /bootstrapServers is empty/],
    [{ bootstrapServers: 'localhost' }, /"localhost" is not host:port/],
    [{ bootstrapServers: 42 }, /bootstrapServers must be/],
    [{ bootstrapServers: 'a:1', reconnectBackoffMs: 100, reconnectBackoffMaxMs: 50 }, /reconnectBackoffMaxMs \(50\) must not be below reconnectBackoffMs \(100\)/],
    [{ bootstrapServers: 'a:1', connectionsMaxIdleMs: 0 }, /connectionsMaxIdleMs must be a positive integer/],
    [{ bootstrapServers: 'a:1', sasl: { mechanism: 'plain' } }, /sasl.username/],
  ];
  for (const [opts, pattern] of cases) {
    assert.throws(
      () => new BrokerPool(opts as never),
      (e: unknown) => e instanceof ConfigError && pattern.test((e as Error).message),
      JSON.stringify(opts),
    );
  }
  // IPv6 literals in brackets.
  const p = new BrokerPool({ bootstrapServers: '[::1]:9092, 127.0.0.1:9093' });
  void p.close();
});

test('nothing escaped as an unhandled rejection or uncaught exception', () => {
  assert.equal(escaped, []);
});

test.run();
