// The chaos test's fault proxy against the fake broker: addresses rewritten to its own listeners,
// and each fault doing what it says (latency, black hole, RST, a Fetch answer cut mid-frame).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Fetch, Metadata } from '@kwire/protocol';
import { Connection } from '../../src/connection/index.js';
import { FaultProxy, FakeBroker, rejection } from '@kwire/testkit';

async function setup() {
  const b = await FakeBroker.start({
    handlers: {
      [Metadata.apiKey]: (_req, broker) => ({
        body: { throttleTimeMs: 0, brokers: [{ nodeId: 1, host: broker.host, port: broker.port, rack: null }], clusterId: 'c', controllerId: 1, topics: [] },
      }),
      [Fetch.apiKey]: () => ({ body: { throttleTimeMs: 0, errorCode: 0, sessionId: 0, responses: [] } }),
    },
  });
  const proxy = await FaultProxy.start('t', `${b.host}:${b.port}`);
  const [host, port] = (await proxy.bootstrap()).split(':');
  const c = await Connection.connect({ host: host!, port: Number(port), clientId: 'proxy-test', requestTimeoutMs: 5_000 });
  return { b, proxy, c, port: Number(port) };
}

test('Metadata answers name the proxy listener, not the broker', async () => {
  const { b, proxy, c, port } = await setup();
  const md = await c.request(Metadata, { topics: [] as never });
  assert.equal(
    md.brokers.map((x) => [x.host, x.port]),
    [['127.0.0.1', port]],
  );
  assert.is.not(port, b.port);
  await c.close();
  await proxy.close();
  await b.stop();
});

test('latency delays each direction; a black hole holds everything until it is lifted', async () => {
  const { b, proxy, c } = await setup();
  proxy.latencyMs = 300;
  let t = performance.now();
  await c.request(Metadata, { topics: [] as never });
  const slow = performance.now() - t;
  assert.ok(slow >= 580, `round trip ${slow} ms with 300 ms each way`);
  proxy.latencyMs = 0;
  proxy.setBlackhole(true);
  t = performance.now();
  const held = c.request(Metadata, { topics: [] as never });
  let answered = false;
  void held.then(() => (answered = true));
  await new Promise((r) => setTimeout(r, 400));
  assert.is(answered, false, 'no answer through a black hole');
  assert.is(b.of(Metadata.apiKey).length, 1, 'the request never reached the broker');
  proxy.setBlackhole(false);
  await held;
  assert.ok(performance.now() - t >= 400);
  await c.close();
  await proxy.close();
  await b.stop();
});

test('rst resets the connection; cut-fetch cuts the next Fetch answer and resets', async () => {
  const { b, proxy, c } = await setup();
  proxy.resetAll();
  await rejection(c.request(Metadata, { topics: [] as never }));
  const [host, port] = (await proxy.bootstrap()).split(':');
  const c2 = await Connection.connect({ host: host!, port: Number(port), clientId: 'proxy-test' });
  proxy.armCut();
  await c2.request(Metadata, { topics: [] as never }); // not a Fetch: passes
  const err = await rejection(c2.request(Fetch, { maxWaitMs: 0, topics: [] } as never));
  assert.ok(err.message.length > 0);
  assert.equal(proxy.counts, { rst: 1, cut: 1 });
  await c.close();
  await c2.close();
  await proxy.close();
  await b.stop();
});

test.run();
