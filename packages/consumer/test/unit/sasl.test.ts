// SASL: the mechanisms on their own (RFC test vectors, exact bytes), then through a Connection
// against a fake broker that implements the server side of SCRAM independently (the RFC formulas
// written out again here, with pbkdf2Sync), PLAIN and OAUTHBEARER; and the rule that no password
// or token ever reaches a log line or an error.
import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Metadata, SaslAuthenticate, SaslHandshake } from '@kwire/protocol';
import { Connection, oauthBearerInitialResponse, plainInitialResponse, saslName, ScramClient, type ConnectionOptions } from '../../src/connection/index.js';
import { AuthenticationError } from '../../src/errors.js';
import { capturingLogger, FakeBroker, metadataBody, type FakeRequest, type Handler, rejection } from '@kwire/testkit';

const escaped: unknown[] = [];
process.on('unhandledRejection', (err) => escaped.push(err));
process.on('uncaughtException', (err) => escaped.push(err));

// ---- SCRAM on its own -----------------------------------------------------------------------

test('SCRAM-SHA-256: the RFC 7677 example exchange, byte for byte', async () => {
  const scram = new ScramClient('SCRAM-SHA-256', 'user', 'pencil', 'rOprNGfwEbeRWgbNEkqO');
  assert.is(scram.clientFirstMessage(), 'n,,n=user,r=rOprNGfwEbeRWgbNEkqO');
  const final = await scram.clientFinalMessage('r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096');
  assert.is(final, 'c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=');
  scram.verifyServerFinal('v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=');
});

async function rfcClientAtFinal(): Promise<ScramClient> {
  const scram = new ScramClient('SCRAM-SHA-256', 'user', 'pencil', 'rOprNGfwEbeRWgbNEkqO');
  scram.clientFirstMessage();
  await scram.clientFinalMessage('r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096');
  return scram;
}

test('SCRAM: a server signature that does not verify is refused', async () => {
  const scram = await rfcClientAtFinal();
  // One bit off in the RFC's signature.
  const good = Buffer.from('6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=', 'base64');
  good[0]! ^= 1;
  assert.throws(
    () => scram.verifyServerFinal(`v=${good.toString('base64')}`),
    (e: unknown) => e instanceof AuthenticationError && /server signature does not verify/.test((e as Error).message),
  );
  assert.throws(() => scram.verifyServerFinal('v='), /does not verify/);
  assert.throws(() => scram.verifyServerFinal('x=1'), /no verifier/);
});

test('SCRAM: the e= attribute of server-final is an AuthenticationError carrying the server error', async () => {
  const scram = await rfcClientAtFinal();
  assert.throws(
    () => scram.verifyServerFinal('e=invalid-proof'),
    (e: unknown) => e instanceof AuthenticationError && /e=invalid-proof/.test((e as Error).message),
  );
});

test('SCRAM: a server nonce that does not extend ours, or too few iterations, is refused before any proof is sent', async () => {
  const cases: [string, RegExp][] = [
    ['r=someoneElsesNonce123,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096', /server nonce does not start with the client nonce/],
    ['r=rOprNGfwEbeRWgbNEkqO,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096', /server nonce does not start with the client nonce/],
    ['r=rOprNGfwEbeRWgbNEkqOxyz,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=1000', /1000 iterations, outside the 4096-16384 a Kafka broker can store/],
    ['r=rOprNGfwEbeRWgbNEkqOxyz,s=W22ZaJ0SNY7soEsUEjb6gQ==', /lacks i/],
    ['r=rOprNGfwEbeRWgbNEkqOxyz,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096,m=ext', /extension kwire does not know/],
    ['e=unknown-user', /refused the client-first-message: unknown-user/],
    ['garbage', /malformed server-first-message/],
  ];
  for (const [serverFirst, pattern] of cases) {
    const scram = new ScramClient('SCRAM-SHA-256', 'user', 'pencil', 'rOprNGfwEbeRWgbNEkqO');
    scram.clientFirstMessage();
    const err = await rejection(scram.clientFinalMessage(serverFirst));
    assert.ok(err instanceof AuthenticationError, serverFirst);
    assert.match(err.message, pattern);
    assert.not.match(err.message, /pencil/);
  }
});

test('SCRAM: usernames are escaped as RFC 5802 saslname; nonces are random', () => {
  assert.is(saslName('a=b,c'), 'a=3Db=2Cc');
  assert.is(new ScramClient('SCRAM-SHA-512', 'x,y', 'p', 'N').clientFirstMessage(), 'n,,n=x=2Cy,r=N');
  const a = new ScramClient('SCRAM-SHA-512', 'u', 'p').clientFirstMessage();
  const b = new ScramClient('SCRAM-SHA-512', 'u', 'p').clientFirstMessage();
  assert.is.not(a, b);
  assert.match(a, /^n,,n=u,r=[A-Za-z0-9+/=]{32}$/);
});

test('PLAIN and OAUTHBEARER initial responses, byte for byte', () => {
  assert.equal(plainInitialResponse('alice', 'pw'), Buffer.from('\0alice\0pw'));
  assert.is(oauthBearerInitialResponse({ value: 'eyJ.abc.' }).toString('latin1'), 'n,,\x01auth=Bearer eyJ.abc.\x01\x01');
  assert.is(
    oauthBearerInitialResponse({ value: 'tok', extensions: { logicalCluster: 'lkc-1', traceId: 'a b' } }).toString('latin1'),
    'n,,\x01auth=Bearer tok\x01logicalCluster=lkc-1\x01traceId=a b\x01\x01',
  );
  assert.throws(() => oauthBearerInitialResponse({ value: 'tok', extensions: { auth: 'x' } }), /extension name "auth" is invalid/);
  assert.throws(() => oauthBearerInitialResponse({ value: 'tok', extensions: { 'bad-key': 'x' } }), /extension name "bad-key" is invalid/);
  assert.throws(() => oauthBearerInitialResponse({ value: 'tok', extensions: { k: 'x\x01y' } }), /extension "k" has an invalid value/);
  // A token that would break the framing is refused without being quoted.
  try {
    oauthBearerInitialResponse({ value: 'secret\x01token' });
    assert.unreachable();
  } catch (err) {
    assert.ok(err instanceof AuthenticationError);
    assert.not.match((err as Error).message, /secret/);
  }
});

// ---- through a Connection ---------------------------------------------------------------------

/** The server side of SCRAM, written from RFC 5802 independently of ScramClient. */
function scramServer(mechanism: 'SCRAM-SHA-256' | 'SCRAM-SHA-512', users: Record<string, string>, options: { badSignature?: boolean; lifetimeMs?: bigint } = {}): Handler {
  const hash = mechanism === 'SCRAM-SHA-256' ? 'sha256' : 'sha512';
  const len = hash === 'sha256' ? 32 : 64;
  const state = new Map<number, { user: string; clientFirstBare: string; serverFirst: string; nonce: string; salt: Buffer }>();
  const fail = () => ({
    body: { errorCode: 58, errorMessage: `Authentication failed during authentication due to invalid credentials with SASL mechanism ${mechanism}`, authBytes: Buffer.alloc(0), sessionLifetimeMs: 0n },
  });
  return (req: FakeRequest) => {
    const msg = (req.body as { authBytes: Buffer }).authBytes.toString('utf8');
    const s = state.get(req.connection);
    if (s === undefined || msg.startsWith('n,,')) {
      const bare = msg.slice(3);
      const m = /^n=([^,]*),r=(.+)$/.exec(bare)!;
      const nonce = m[2]! + randomBytes(9).toString('base64');
      const salt = randomBytes(16);
      const serverFirst = `r=${nonce},s=${salt.toString('base64')},i=4096`;
      state.set(req.connection, { user: m[1]!, clientFirstBare: bare, serverFirst, nonce, salt });
      return { body: { errorCode: 0, errorMessage: null, authBytes: Buffer.from(serverFirst), sessionLifetimeMs: 0n } };
    }
    state.delete(req.connection);
    const m = /^c=biws,r=([^,]+),p=(.+)$/.exec(msg);
    const password = users[s.user];
    if (!m || m[1] !== s.nonce || password === undefined) return fail();
    const salted = pbkdf2Sync(password, s.salt, 4096, len, hash);
    const clientKey = createHmac(hash, salted).update('Client Key').digest();
    const storedKey = createHash(hash).update(clientKey).digest();
    const authMessage = `${s.clientFirstBare},${s.serverFirst},c=biws,r=${m[1]}`;
    const clientSignature = createHmac(hash, storedKey).update(authMessage).digest();
    const proof = Buffer.from(m[2]!, 'base64');
    const recovered = Buffer.alloc(len);
    for (let i = 0; i < len; i++) recovered[i] = proof[i]! ^ clientSignature[i]!;
    if (!createHash(hash).update(recovered).digest().equals(storedKey)) return fail();
    const serverSignature = createHmac(hash, createHmac(hash, salted).update('Server Key').digest()).update(authMessage).digest();
    if (options.badSignature) serverSignature[3]! ^= 0x40;
    return { body: { errorCode: 0, errorMessage: null, authBytes: Buffer.from(`v=${serverSignature.toString('base64')}`), sessionLifetimeMs: options.lifetimeMs ?? 0n } };
  };
}

function handshake(mechanisms: string[]): Handler {
  return (req) => {
    const asked = (req.body as { mechanism: string }).mechanism;
    return { body: { errorCode: mechanisms.includes(asked) ? 0 : 33, mechanisms } };
  };
}

async function saslBroker(auth: Handler, mechanisms: string[]): Promise<FakeBroker> {
  return FakeBroker.start({
    handlers: {
      [SaslHandshake.apiKey]: handshake(mechanisms),
      [SaslAuthenticate.apiKey]: auth,
      [Metadata.apiKey]: () => ({ body: metadataBody('authenticated') }),
    },
  });
}

const PASSWORD = 'Pencil-S3cret-0xC0FFEE';
const TOKEN_SECRET = 'tokSecret-7f3a9b21e4';

function assertNoSecrets(texts: string[], secrets: string[]): void {
  for (const t of texts) for (const s of secrets) assert.not.ok(t.includes(s), `a secret leaked into: ${t.slice(0, 300)}`);
}

/** Everything an error exposes: message, stack, properties, causes (inspect walks them all). */
function exposed(err: unknown): string {
  return `${(err as Error).message}\n${(err as Error).stack}\n${inspect(err, { depth: Infinity, showHidden: true })}\n${JSON.stringify(err)}`;
}

for (const mechanism of ['SCRAM-SHA-256', 'SCRAM-SHA-512'] as const) {
  test(`${mechanism} through a Connection: the right password gets in, a wrong one gets the broker's message; no secret leaks`, async () => {
    const b = await saslBroker(scramServer(mechanism, { alice: PASSWORD }), ['PLAIN', mechanism]);
    const { logger, lines } = capturingLogger();
    const opts = (password: string): ConnectionOptions => ({ ...b.address, logger, sasl: { mechanism: mechanism.toLowerCase() as 'scram-sha-256', username: 'alice', password } });
    try {
      const c = await Connection.connect(opts(PASSWORD));
      assert.is((await c.request(Metadata, { topics: [] })).clusterId, 'authenticated');
      assert.is(c.stats.authentications, 1);
      // Handshake, then two authenticate round trips (client-first, client-final).
      assert.equal(
        b.requests.map((r) => r.apiKey),
        [18, 17, 36, 36, 3],
      );
      assert.is((b.of(SaslHandshake.apiKey)[0]!.body as { mechanism: string }).mechanism, mechanism);
      await c.close();

      const wrong = 'not-' + PASSWORD;
      const err = await rejection(Connection.connect(opts(wrong)));
      assert.ok(err instanceof AuthenticationError, String(err));
      assert.not.ok(err.retriable);
      assert.match(err.message, new RegExp(`SASL ${mechanism} authentication of user "alice" failed: Authentication failed during authentication due to invalid credentials`));
      assertNoSecrets([...lines, exposed(err)], [PASSWORD, wrong]);
      assert.ok(
        lines.some((l) => l.includes('authenticated') && l.includes('"username":"alice"')),
        'the success was logged (without the password)',
      );
    } finally {
      await b.stop();
    }
  });
}

test('SCRAM through a Connection: a broker whose server signature does not verify is refused', async () => {
  const b = await saslBroker(scramServer('SCRAM-SHA-512', { alice: PASSWORD }, { badSignature: true }), ['SCRAM-SHA-512']);
  try {
    const err = await rejection(Connection.connect({ ...b.address, sasl: { mechanism: 'scram-sha-512', username: 'alice', password: PASSWORD } }));
    assert.ok(err instanceof AuthenticationError);
    assert.match(err.message, /server signature does not verify/);
    // Nothing but the SASL exchange was sent.
    assert.is(b.of(Metadata.apiKey).length, 0);
  } finally {
    await b.stop();
  }
});

test('PLAIN through a Connection: a broker message that echoes the password is scrubbed', async () => {
  const b = await saslBroker(
    (req) => {
      const [, user, pass] = (req.body as { authBytes: Buffer }).authBytes.toString('utf8').split('\0');
      if (user === 'alice' && pass === PASSWORD) return { body: { errorCode: 0, errorMessage: null, authBytes: Buffer.alloc(0), sessionLifetimeMs: 0n } };
      // A careless broker (or proxy) quoting what it got.
      return { body: { errorCode: 58, errorMessage: `bad password ${pass} for ${user}`, authBytes: Buffer.alloc(0), sessionLifetimeMs: 0n } };
    },
    ['PLAIN'],
  );
  const { logger, lines } = capturingLogger();
  try {
    const ok = await Connection.connect({ ...b.address, logger, sasl: { mechanism: 'plain', username: 'alice', password: PASSWORD } });
    assert.equal((b.of(SaslAuthenticate.apiKey)[0]!.body as { authBytes: Buffer }).authBytes, Buffer.from(`\0alice\0${PASSWORD}`));
    await ok.close();
    const err = await rejection(Connection.connect({ ...b.address, logger, sasl: { mechanism: 'plain', username: 'alice', password: PASSWORD + 'x' } }));
    assert.ok(err instanceof AuthenticationError);
    assert.match(err.message, /bad password \*\*\* for alice/);
    assertNoSecrets([...lines, exposed(err)], [PASSWORD]);
  } finally {
    await b.stop();
  }
});

test('the broker not enabling the mechanism: AuthenticationError listing what it enables', async () => {
  const b = await saslBroker(() => ({ none: true }), ['PLAIN', 'OAUTHBEARER']);
  try {
    const err = await rejection(Connection.connect({ ...b.address, sasl: { mechanism: 'scram-sha-256', username: 'u', password: PASSWORD } }));
    assert.ok(err instanceof AuthenticationError);
    assert.match(err.message, /does not enable SASL mechanism SCRAM-SHA-256 \(it enables: PLAIN, OAUTHBEARER\)/);
    assert.is(b.of(SaslAuthenticate.apiKey).length, 0);
  } finally {
    await b.stop();
  }
});

/** OAUTHBEARER server: tokens containing "good" pass; others get the RFC 7628 error dance. */
function oauthServer(lifetimeMs: bigint): Handler {
  return (req) => {
    const bytes = (req.body as { authBytes: Buffer }).authBytes;
    if (bytes.length === 1 && bytes[0] === 1) {
      return { body: { errorCode: 58, errorMessage: '{"status":"invalid_token"}', authBytes: Buffer.alloc(0), sessionLifetimeMs: 0n } };
    }
    const m = /^n,,\x01auth=Bearer ([^\x01]+)\x01(.*)\x01$/s.exec(bytes.toString('utf8'));
    if (m && m[1]!.includes('good')) return { body: { errorCode: 0, errorMessage: null, authBytes: Buffer.alloc(0), sessionLifetimeMs: lifetimeMs } };
    return { body: { errorCode: 0, errorMessage: null, authBytes: Buffer.from('{"status":"invalid_token"}'), sessionLifetimeMs: 0n } };
  };
}

test('OAUTHBEARER through a Connection: the token callback, the exact initial response, re-authentication with a fresh token', async () => {
  const b = await saslBroker(oauthServer(300n), ['OAUTHBEARER']);
  const { logger, lines } = capturingLogger();
  let calls = 0;
  try {
    const c = await Connection.connect({
      ...b.address,
      logger,
      sasl: { mechanism: 'oauthbearer', oauthBearerProvider: async () => ({ value: `good-${TOKEN_SECRET}-${++calls}`, extensions: { traceId: 't1' } }) },
    });
    assert.equal((b.of(SaslAuthenticate.apiKey)[0]!.body as { authBytes: Buffer }).authBytes, Buffer.from(`n,,\x01auth=Bearer good-${TOKEN_SECRET}-1\x01traceId=t1\x01\x01`));
    const deadline = performance.now() + 2000;
    while (c.stats.reauthentications < 2 && performance.now() < deadline) {
      await c.request(Metadata, { topics: [] });
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.ok(c.stats.reauthentications >= 2, `re-authentications: ${c.stats.reauthentications}`);
    // Each authentication asked for a fresh token.
    assert.is(calls, c.stats.authentications);
    const tokens = b.of(SaslAuthenticate.apiKey).map((r) => /Bearer ([^\x01]+)/.exec((r.body as { authBytes: Buffer }).authBytes.toString())![1]);
    assert.equal(tokens.slice(0, 3), [`good-${TOKEN_SECRET}-1`, `good-${TOKEN_SECRET}-2`, `good-${TOKEN_SECRET}-3`]);
    await c.close();
    assertNoSecrets(lines, [TOKEN_SECRET]);
  } finally {
    await b.stop();
  }
});

test('OAUTHBEARER through a Connection: a rejected token fails after the 0x01 acknowledgement; the token never leaks', async () => {
  const b = await saslBroker(oauthServer(0n), ['OAUTHBEARER']);
  const { logger, lines } = capturingLogger();
  try {
    const err = await rejection(Connection.connect({ ...b.address, logger, sasl: { mechanism: 'oauthbearer', oauthBearerProvider: () => ({ value: `bad-${TOKEN_SECRET}` }) } }));
    assert.ok(err instanceof AuthenticationError, String(err));
    assert.match(err.message, /invalid_token/);
    const sent = b.of(SaslAuthenticate.apiKey).map((r) => (r.body as { authBytes: Buffer }).authBytes);
    assert.is(sent.length, 2);
    assert.equal(sent[1], Buffer.from([1]));
    assertNoSecrets([...lines, exposed(err)], [TOKEN_SECRET]);

    // A provider that throws: its error is the cause, the connection fails cleanly.
    const thrown = await rejection(
      Connection.connect({
        ...b.address,
        sasl: {
          mechanism: 'oauthbearer',
          oauthBearerProvider: async () => {
            throw new Error('identity provider down');
          },
        },
      }),
    );
    assert.ok(thrown instanceof AuthenticationError);
    assert.match(thrown.message, /token provider failed: identity provider down/);
  } finally {
    await b.stop();
  }
});

test('a failed re-authentication closes the connection with the AuthenticationError', async () => {
  let n = 0;
  const b = await saslBroker(() => {
    n++;
    return n === 1
      ? { body: { errorCode: 0, errorMessage: null, authBytes: Buffer.alloc(0), sessionLifetimeMs: 200n } }
      : { body: { errorCode: 58, errorMessage: 'credentials revoked', authBytes: Buffer.alloc(0), sessionLifetimeMs: 0n } };
  }, ['PLAIN']);
  try {
    const c = await Connection.connect({ ...b.address, sasl: { mechanism: 'plain', username: 'alice', password: PASSWORD } });
    let reason: Error | undefined;
    c.on('close', (r) => (reason = r));
    await c.whenClosed();
    assert.ok(reason instanceof AuthenticationError);
    assert.match(reason!.message, /credentials revoked/);
    const later = await rejection(c.request(Metadata, { topics: [] }));
    assert.is(later, reason);
  } finally {
    await b.stop();
  }
});

test('nothing escaped as an unhandled rejection or uncaught exception', () => {
  assert.equal(escaped, []);
});

test.run();
