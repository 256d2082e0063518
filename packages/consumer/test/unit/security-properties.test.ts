// Security settings as users paste them from Java properties files: the properties parser, the
// JAAS line, the translation to ssl / sasl, and errors that never show a credential.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { resolveConfig } from '../../src/config.js';
import { fromSecurityProperties, parseJaas, parseProperties } from '../../src/security-properties.js';

test('parseProperties: separators, comments, continuations, escapes', () => {
  const text = ['# comment', '! also', 'a=1', 'b : two words ', 'c three', '  d=x\\', '    y', 'e=tab\\tand\\u0041', 'f\\=g=h', 'empty='].join('\n');
  assert.equal(parseProperties(text), { a: '1', b: 'two words ', c: 'three', d: 'xy', e: 'tab\tandA', 'f=g': 'h', empty: '' });
});

test('parseJaas: the module, the flag, quoted and bare values', () => {
  assert.equal(parseJaas('org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p\\"q";'), {
    module: 'org.apache.kafka.common.security.plain.PlainLoginModule',
    options: { username: 'u', password: 'p"q' },
  });
  assert.equal(parseJaas('M optional a=b').options, { a: 'b' });
});

test('security.protocol SASL_SSL with SCRAM and PEM files becomes ssl + sasl', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kwire-sec-'));
  writeFileSync(join(dir, 'ca.pem'), 'CA PEM');
  const out = fromSecurityProperties({
    'bootstrap.servers': 'h:1',
    'security.protocol': 'SASL_SSL',
    'sasl.mechanism': 'SCRAM-SHA-512',
    'sasl.jaas.config': 'org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="s3cr3t";',
    'ssl.ca.location': join(dir, 'ca.pem'),
    'ssl.endpoint.identification.algorithm': '',
  });
  assert.equal(out.sasl, { mechanism: 'scram-sha-512', username: 'alice', password: 's3cr3t' });
  assert.is((out.ssl as { ca: string }).ca, 'CA PEM');
  assert.type((out.ssl as { checkServerIdentity: unknown }).checkServerIdentity, 'function');
  assert.is(out['bootstrap.servers'], 'h:1');
  // And through createConsumer's config: accepted, not an unknown option.
  const resolved = resolveConfig({ bootstrapServers: 'h:1', securityProtocol: 'SSL' });
  assert.is(resolved.ssl, true);
});

test('errors name the problem, never the credential', () => {
  const secret = 'hunter2-do-not-print';
  const cases: Record<string, unknown>[] = [
    { 'security.protocol': 'SASL_PLAINTEXT', 'sasl.mechanism': 'PLAIN', 'sasl.jaas.config': `org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="${secret}";` },
    { 'security.protocol': 'SASL_PLAINTEXT', 'sasl.mechanism': 'PLAIN', 'sasl.jaas.config': `PlainLoginModule username="u" password="${secret}"` },
    { 'security.protocol': 'SASL_PLAINTEXT', 'sasl.mechanism': 'PLAIN', 'sasl.jaas.config': `org.apache.kafka.common.security.plain.PlainLoginModule required password="${secret}` },
    { 'security.protocol': 'PLAINTEXT', 'sasl.jaas.config': `x required password="${secret}";` },
    { 'security.protocol': 'SASL_PLAINTEXT', 'sasl.mechanism': 'OAUTHBEARER', 'sasl.jaas.config': `x required token="${secret}";` },
    { 'security.protocol': 'TLS' },
  ];
  for (const c of cases) {
    let err: unknown;
    try {
      fromSecurityProperties(c);
    } catch (e) {
      err = e;
    }
    assert.match(String(err), /ConfigError/, JSON.stringify(Object.keys(c)));
    assert.not.match(String((err as Error).message), new RegExp(secret));
  }
});

test.run();
