// KIP-368 re-authentication against a real broker whose sessions last 3 s
// (connections.max.reauth.ms=3000): connections kept busy for ~10 s keep working because they
// re-authenticate on the same socket; a control connection that authenticated by hand (so the
// connection layer does not know to re-authenticate) is dropped by the broker once its session ends.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startKafka, type KafkaCluster } from '@kwire/broker';
import { Metadata, SaslAuthenticate, SaslHandshake } from '@kwire/protocol';
import { Connection } from '../../src/connection/index.js';
import { ConnectionError } from '../../src/errors.js';
import { capturingLogger } from '@kwire/testkit';

let cluster: KafkaCluster;

test.before(async () => {
  cluster = await startKafka({ sasl: true, heapMb: 384, config: { 'connections.max.reauth.ms': 3000 } });
});
test.after(async () => {
  await cluster?.stop();
});

function saslAddress(): { host: string; port: number } {
  const [host, port] = cluster.sasl!.bootstrap.split(',')[0]!.split(':');
  return { host: host!, port: Number(port) };
}

function unsecuredJwt(sub: string): string {
  const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  return `${b64({ alg: 'none' })}.${b64({ sub, iat: now - 5, exp: now + 3600 })}.`;
}

/** Metadata requests, two at a time, for `ms`; returns how many rounds completed. */
async function keepBusy(c: Connection, ms: number): Promise<number> {
  const end = performance.now() + ms;
  let rounds = 0;
  while (performance.now() < end) {
    const [a, b] = await Promise.all([c.request(Metadata, { topics: [] }), c.request(Metadata, { topics: [] })]);
    assert.ok(a.brokers.length >= 1 && b.brokers.length >= 1);
    rounds++;
    await new Promise((r) => setTimeout(r, 25));
  }
  return rounds;
}

test('connections kept busy for 10 s re-authenticate on the same socket (SCRAM-SHA-512 and OAUTHBEARER)', async () => {
  const scramLog = capturingLogger();
  const oauthLog = capturingLogger();
  let tokens = 0;
  const scram = await Connection.connect({
    ...saslAddress(),
    logger: scramLog.logger,
    sasl: { mechanism: 'scram-sha-512', username: 'alice', password: 'alice-secret' },
  });
  const oauth = await Connection.connect({
    ...saslAddress(),
    logger: oauthLog.logger,
    sasl: {
      mechanism: 'oauthbearer',
      oauthBearerProvider: async () => {
        tokens++;
        return { value: unsecuredJwt('alice') };
      },
    },
  });
  const events = { scram: 0, oauth: 0 };
  scram.on('reauthenticated', (info) => {
    assert.is(info.sessionLifetimeMs, 3000);
    events.scram++;
  });
  oauth.on('reauthenticated', () => events.oauth++);
  try {
    const [r1, r2] = await Promise.all([keepBusy(scram, 10_000), keepBusy(oauth, 10_000)]);
    assert.ok(r1 > 50 && r2 > 50, `rounds: ${r1}, ${r2}`);
    // 3 s sessions renewed at 85-95%: three renewals in 10 s, at least two whatever the timing.
    for (const [name, c, n, log] of [
      ['scram', scram, events.scram, scramLog.lines],
      ['oauth', oauth, events.oauth, oauthLog.lines],
    ] as const) {
      assert.ok(n >= 2, `${name}: ${n} re-authentications`);
      assert.is(c.stats.reauthentications, n);
      assert.is(log.filter((l) => l.startsWith('debug reauthenticated ')).length, n);
      assert.is(c.state, 'ready', `${name} still open`);
    }
    // Every OAUTHBEARER authentication asked the provider for a fresh token.
    assert.is(tokens, oauth.stats.authentications);
  } finally {
    await Promise.all([scram.close(), oauth.close()]);
  }
});

test('control: a session that is not renewed is ended by the broker', async () => {
  // No `sasl` option: the connection layer does not know this socket authenticated, so it never
  // re-authenticates. PLAIN by hand: SaslHandshake v1, then one SaslAuthenticate.
  const c = await Connection.connect(saslAddress());
  try {
    const hs = await c.request(SaslHandshake, { mechanism: 'PLAIN' });
    assert.is(hs.errorCode, 0);
    const auth = await c.request(SaslAuthenticate, { authBytes: Buffer.from('\0alice\0alice-secret') });
    assert.is(auth.errorCode, 0);
    assert.is(auth.sessionLifetimeMs, 3000n);
    assert.ok((await c.request(Metadata, { topics: [] })).brokers.length >= 1);
    await new Promise((r) => setTimeout(r, 3500));
    let err: unknown;
    try {
      await c.request(Metadata, { topics: [] }, { timeoutMs: 5000 });
    } catch (e) {
      err = e;
    }
    assert.ok(err instanceof ConnectionError, `expected the broker to drop the expired session, got ${String(err)}`);
  } finally {
    await c.close();
  }
});

test.run();
