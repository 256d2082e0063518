// SASL and TLS against a real broker: one cluster with a SASL_PLAINTEXT listener (PLAIN,
// SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER with Kafka's unsecured JWT validator) and an SSL
// listener with a certificate made at start, for the whole file.
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inspect, promisify } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTopic, producerPerformance, startKafka, type KafkaCluster } from '@kwire/broker';
import { Fetch, Metadata } from '@kwire/protocol';
import { BrokerPool, Connection, decodeResponseBody, type ConnectionOptions, type SaslOptions } from '../../src/connection/index.js';
import { AuthenticationError, ConnectionError } from '../../src/errors.js';
import { createConsumer } from '../../src/index.js';
import { rejection, capturingLogger } from '@kwire/testkit';

let cluster: KafkaCluster;

const topic = 'kwire-secure';

test.before(async () => {
  cluster = await startKafka({ sasl: true, ssl: true, heapMb: 384 });
  // ~2 MB to fetch over TLS: frames far larger than one TLS record and than the read buffer.
  await createTopic(cluster, { topic, partitions: 1 });
  await producerPerformance(cluster, { topic, numRecords: 2000, recordSize: 1000, props: { 'batch.size': 262144, 'linger.ms': 20 } });
});
test.after(async () => {
  await cluster?.stop();
});

function address(bootstrap: string): { host: string; port: number } {
  const [host, port] = bootstrap.split(',')[0]!.split(':');
  return { host: host!, port: Number(port) };
}

/** Everything an error shows: message, stack, own and hidden properties, causes. */
function exposed(err: unknown): string {
  return `${(err as Error).message}\n${(err as Error).stack}\n${inspect(err, { depth: Infinity, showHidden: true })}`;
}

function assertNoSecret(texts: string[], secret: string): void {
  for (const t of texts) assert.not.ok(t.includes(secret), `the secret leaked into: ${t.slice(0, 300)}`);
}

/** An unsigned JWT (alg "none"), which Kafka's unsecured OAUTHBEARER validator accepts. */
function unsecuredJwt(sub: string, expiresInS: number): string {
  const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  return `${b64({ alg: 'none' })}.${b64({ sub, iat: now - 5, exp: now + expiresInS })}.`;
}

for (const mechanism of ['plain', 'scram-sha-256', 'scram-sha-512'] as const) {
  test(`SASL ${mechanism}: alice gets in; a wrong password is an AuthenticationError; no password in logs or errors`, async () => {
    const { logger, lines } = capturingLogger();
    const alice = cluster.sasl!.users.find((u) => u.username === 'alice')!;
    const opts = (password: string): ConnectionOptions => ({ ...address(cluster.sasl!.bootstrap), logger, sasl: { mechanism, username: 'alice', password } });
    const c = await Connection.connect(opts(alice.password));
    try {
      const md = await c.request(Metadata, { topics: [] });
      assert.ok(md.brokers.length >= 1);
      assert.is(c.stats.authentications, 1);
    } finally {
      await c.close();
    }
    const wrong = `${alice.password}-but-wrong`;
    const err = await rejection(Connection.connect(opts(wrong)));
    assert.ok(err instanceof AuthenticationError, String(err));
    assert.not.ok(err.retriable);
    // The broker's own words, e.g. "Authentication failed: Invalid username or password".
    assert.match(err.message, /SASL_AUTHENTICATION_FAILED/);
    assert.match(err.message, /[Aa]uthentication failed/);
    assertNoSecret([...lines, exposed(err)], alice.password);
    assertNoSecret([...lines, exposed(err)], wrong);
  });
}

test('SASL oauthbearer: an unsecured JWT gets in; an expired one is refused; the token never leaks', async () => {
  const { logger, lines } = capturingLogger();
  const good = unsecuredJwt('alice', 3600);
  const sasl: SaslOptions = { mechanism: 'oauthbearer', oauthBearerProvider: async () => ({ value: good, lifetimeMs: 3_600_000 }) };
  const c = await Connection.connect({ ...address(cluster.sasl!.bootstrap), logger, sasl });
  try {
    assert.ok((await c.request(Metadata, { topics: [] })).brokers.length >= 1);
  } finally {
    await c.close();
  }
  const expired = unsecuredJwt('alice', -3600);
  const err = await rejection(Connection.connect({ ...address(cluster.sasl!.bootstrap), logger, sasl: { mechanism: 'oauthbearer', oauthBearerProvider: () => ({ value: expired }) } }));
  assert.ok(err instanceof AuthenticationError, String(err));
  assert.match(err.message, /invalid_token|[Aa]uthentication failed/);
  for (const token of [good, expired]) assertNoSecret([...lines, exposed(err)], token);
});

test('TLS: the generated CA is trusted; without it the certificate is refused (not retriable)', async () => {
  const ssl = cluster.ssl!;
  const c = await Connection.connect({ ...address(ssl.bootstrap), ssl: { ca: ssl.caPem } });
  try {
    const md = await c.request(Metadata, { topics: [{ name: topic }] as never });
    assert.ok(md.brokers.length >= 1);
    // A Fetch of ~2 MB: TLS (TLSWrap) honours onread's buffer function too, so the decrypted
    // bytes of a large frame are written straight into its buffer.
    const maxBytes = 16 * 1024 * 1024;
    const lease = await c.requestFrame(Fetch, {
      replicaId: -1,
      maxWaitMs: 500,
      minBytes: 1,
      maxBytes,
      sessionEpoch: -1,
      topics: [
        { topic, topicId: md.topics[0]!.topicId, partitions: [{ partition: 0, fetchOffset: 0n, currentLeaderEpoch: -1, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: maxBytes }] },
      ],
    });
    const partition = decodeResponseBody(Fetch, lease).responses[0]!.partitions[0]!;
    assert.is(partition.errorCode, 0);
    assert.is(partition.highWatermark, 2000n);
    assert.ok(partition.records!.length > 1_000_000, `records: ${partition.records!.length} bytes`);
    lease.release();
    assert.is(c.stats.largeFrames, 1);
    assert.ok(c.stats.directReads > 0, 'direct reads through TLS');
  } finally {
    await c.close();
  }
  const err = await rejection(Connection.connect({ ...address(ssl.bootstrap), ssl: true }));
  assert.ok(err instanceof AuthenticationError, String(err));
  assert.match(err.message, /TLS: the broker's certificate was refused \((DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE)\)/);
  // And TLS to the plaintext port fails as a connection problem, promptly.
  const started = performance.now();
  const wrongPort = await rejection(Connection.connect({ ...address(cluster.bootstrap), ssl: { ca: ssl.caPem }, socketConnectionSetupTimeoutMs: 3000 }));
  assert.ok(wrongPort instanceof ConnectionError, String(wrongPort));
  assert.ok(performance.now() - started < 5000);
});

test('a wrong password through BrokerPool: no retry storm (a handful of attempts over 3 s of retrying)', async () => {
  const { logger, lines } = capturingLogger();
  const pool = new BrokerPool({
    bootstrapServers: cluster.sasl!.bootstrap,
    logger,
    sasl: { mechanism: 'scram-sha-512', username: 'alice', password: 'definitely-not-alice-secret' },
  });
  let calls = 0;
  try {
    const end = performance.now() + 3000;
    while (performance.now() < end) {
      const err = await rejection(pool.bootstrap());
      assert.ok(err instanceof AuthenticationError, String(err));
      calls++;
      await new Promise((r) => setTimeout(r, 5));
    }
  } finally {
    await pool.close();
  }
  const tcpConnects = lines.filter((l) => l.startsWith('debug connected ')).length;
  assert.ok(calls > 50, `calls: ${calls}`);
  // reconnectBackoffMaxMs (1000) between attempts after an authentication failure: about 3-4.
  assert.ok(pool.stats.connectAttempts <= 5, `connection attempts: ${pool.stats.connectAttempts}`);
  assert.is(tcpConnects, pool.stats.connectAttempts, 'every attempt reached the broker and nothing else did');
  assertNoSecret(lines, 'definitely-not-alice-secret');
});

// Issue 13: secured clusters from the CLI and from properties, as users paste them.
const kwireBin = join(dirname(fileURLToPath(import.meta.url)), '../../../bin/kwire.js');

async function kwireConsume(...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [kwireBin, 'consume', ...args], { timeout: 90_000 });
    return { stdout, stderr, code: 0 };
  } catch (err) {
    const e = err as { stdout: string; stderr: string; code: number };
    return { stdout: e.stdout, stderr: e.stderr, code: e.code };
  }
}

test('kwire consume --config: a SASL_SSL cluster (SCRAM-SHA-256, the CA as a PEM file) from a Java properties file', async () => {
  assert.ok(cluster.saslSsl, 'the launcher has a SASL_SSL listener when both sasl and ssl are on');
  const dir = mkdtempSync(join(tmpdir(), 'kwire-config-'));
  const file = join(dir, 'client.properties');
  writeFileSync(
    file,
    [
      '# as a Java client would have it',
      `bootstrap.servers=${cluster.saslSsl!.bootstrap}`,
      'security.protocol=SASL_SSL',
      'sasl.mechanism=SCRAM-SHA-256',
      'sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\',
      '    username="alice" password="alice-secret";',
      `ssl.ca.location=${cluster.ssl!.caFile}`,
      'max.poll.records=5',
    ].join('\n'),
  );
  const r = await kwireConsume('--config', file, '--topic', topic, '--partition', '0', '--from', 'earliest', '--max-records', '5', '--format', 'none');
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stderr, /kwire consume: 5 records/);
});

test('kwire consume -X: SASL_PLAINTEXT with PLAIN; a wrong password fails with an authentication error that does not show it', async () => {
  const base = ['-X', `bootstrap.servers=${cluster.sasl!.bootstrap}`, '-X', 'security.protocol=SASL_PLAINTEXT', '-X', 'sasl.mechanism=PLAIN'];
  const ok = await kwireConsume(
    ...base,
    '-X',
    'sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="bob" password="bob-secret";',
    '--topic',
    topic,
    '--partition',
    '0',
    '--from',
    'earliest',
    '--max-records',
    '3',
    '--format',
    'none',
  );
  assert.is(ok.code, 0, ok.stderr);
  assert.match(ok.stderr, /kwire consume: 3 records/);
  const bad = await kwireConsume(
    ...base,
    '-X',
    'sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="bob" password="not-bobs-secret-9876";',
    '--topic',
    topic,
    '--partition',
    '0',
    '--max-records',
    '1',
  );
  assert.is(bad.code, 1);
  assert.match(bad.stderr, /auth/i);
  assert.not.match(bad.stderr + bad.stdout, /not-bobs-secret-9876/, 'the password is not in the output');
});

test('createConsumer with the dotted SSL form: ssl.ca.location (PEM) against the SSL listener', async () => {
  const c = createConsumer({ 'bootstrap.servers': cluster.ssl!.bootstrap, 'security.protocol': 'SSL', 'ssl.ca.location': cluster.ssl!.caFile, 'auto.offset.reset': 'earliest' });
  try {
    await c.assign([{ topic, partition: 0 }]);
    const it = c[Symbol.asyncIterator]();
    const first = await it.next();
    assert.ok(!first.done && first.value.records.length > 0);
    await it.return?.();
  } finally {
    await c.close();
  }
});

test.run();
