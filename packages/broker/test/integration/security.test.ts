// The optional listeners: SASL_PLAINTEXT (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512) and SSL with a
// certificate made by keytool, exercised by the Java client (the peer kwire must match).
import { connect as tlsConnect } from 'node:tls';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTopic, producerPerformance, startKafka, type KafkaCluster } from '../../src/index.js';

let cluster: KafkaCluster;

test.before(async () => {
  cluster = await startKafka({ sasl: true, ssl: true, heapMb: 384 });
  await createTopic(cluster, { topic: 'secure', partitions: 1 });
});
test.after(async () => {
  await cluster?.stop();
});

function saslConfig(mechanism: string, username: string, password: string): Record<string, string> {
  const module = mechanism === 'PLAIN' ? 'org.apache.kafka.common.security.plain.PlainLoginModule' : 'org.apache.kafka.common.security.scram.ScramLoginModule';
  return {
    'security.protocol': 'SASL_PLAINTEXT',
    'sasl.mechanism': mechanism,
    'sasl.jaas.config': `${module} required username="${username}" password="${password}";`,
  };
}

for (const mechanism of ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512']) {
  test(`SASL ${mechanism}: alice gets in, a wrong password does not`, async () => {
    const sasl = { bootstrap: cluster.sasl!.bootstrap, dist: cluster.dist };
    const alice = cluster.sasl!.users.find((u) => u.username === 'alice')!;
    const ok = await producerPerformance(sasl, { topic: 'secure', numRecords: 100, recordSize: 10, clientConfig: saslConfig(mechanism, 'alice', alice.password) });
    assert.is(ok.records, 100);
    await producerPerformance(sasl, {
      topic: 'secure',
      numRecords: 10,
      recordSize: 10,
      props: { 'max.block.ms': 10_000, 'delivery.timeout.ms': 10_000, 'request.timeout.ms': 5_000 },
      clientConfig: saslConfig(mechanism, 'alice', 'not-her-password'),
    }).then(
      () => assert.unreachable('a wrong password was accepted'),
      (err: Error) => {
        assert.match(err.message, /sent 0 records, not 10/);
        assert.match(String((err as { logTail?: string }).logTail), /Authentication failed|SaslAuthenticationException/);
      },
    );
  });
}

test('SSL: the Java producer trusts the generated certificate', async () => {
  const ssl = { bootstrap: cluster.ssl!.bootstrap, dist: cluster.dist };
  const result = await producerPerformance(ssl, {
    topic: 'secure',
    numRecords: 100,
    recordSize: 10,
    clientConfig: {
      'security.protocol': 'SSL',
      'ssl.truststore.type': 'PKCS12',
      'ssl.truststore.location': cluster.ssl!.truststoreFile,
      'ssl.truststore.password': cluster.ssl!.password,
    },
  });
  assert.is(result.records, 100);
});

test('SSL: node:tls verifies the broker certificate for 127.0.0.1 with the PEM as ca', async () => {
  const [host, port] = cluster.ssl!.bootstrap.split(':');
  const authorized = await new Promise<boolean>((resolve, reject) => {
    const socket = tlsConnect({ host, port: Number(port), ca: cluster.ssl!.caPem }, () => {
      resolve(socket.authorized);
      socket.end();
    });
    socket.on('error', reject);
  });
  assert.ok(authorized);
  // Without the ca, the self-signed certificate must be refused.
  await new Promise<void>((resolve, reject) => {
    const socket = tlsConnect({ host, port: Number(port) }, () => reject(new Error('an untrusted certificate was accepted')));
    socket.on('error', (err: NodeJS.ErrnoException) => {
      assert.match(String(err.code), /SELF_SIGNED|UNABLE_TO_VERIFY|DEPTH_ZERO/);
      resolve();
    });
  });
});

test.run();
