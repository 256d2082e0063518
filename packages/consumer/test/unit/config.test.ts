import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigError } from '../../src/index.js';
import { JAVA_NAMES, resolveConfig } from '../../src/internals.js';

test('the Java defaults', () => {
  const c = resolveConfig({ bootstrapServers: '127.0.0.1:9092' });
  assert.equal(c.bootstrapServers, [{ host: '127.0.0.1', port: 9092 }]);
  assert.is(c.enableAutoCommit, true);
  assert.is(c.autoCommitIntervalMs, 5000);
  assert.is(c.autoOffsetReset, 'latest');
  assert.is(c.heartbeatIntervalMs, 3000);
  assert.is(c.sessionTimeoutMs, 45000);
  assert.is(c.maxPollIntervalMs, 300000);
  assert.is(c.fetchMinBytes, 1);
  assert.is(c.fetchMaxWaitMs, 500);
  assert.is(c.fetchMaxBytes, 52428800);
  assert.is(c.maxPartitionFetchBytes, 1048576);
  assert.is(c.maxPollRecords, 500);
  assert.is(c.isolationLevel, 'read_uncommitted');
  assert.is(c.requestTimeoutMs, 30000);
});

test('dotted Java names (and string values from a properties file) are accepted', () => {
  const c = resolveConfig({ 'bootstrap.servers': 'a:1,[::1]:2', 'group.id': 'g', 'fetch.max.wait.ms': '250', 'enable.auto.commit': 'false', 'auto.offset.reset': 'earliest' });
  assert.equal(c.bootstrapServers, [
    { host: 'a', port: 1 },
    { host: '::1', port: 2 },
  ]);
  assert.is(c.groupId, 'g');
  assert.is(c.fetchMaxWaitMs, 250);
  assert.is(c.enableAutoCommit, false);
  assert.is(c.autoOffsetReset, 'earliest');
  for (const [camel, dotted] of Object.entries(JAVA_NAMES)) assert.ok(dotted.includes('.') && /^[a-z]/.test(camel));
});

test('bad configuration: a ConfigError naming the option in both spellings', () => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{}, /bootstrapServers \(bootstrap.servers\) is required/],
    [{ bootstrapServers: 'nohost' }, /is not host:port/],
    [{ bootstrapServers: 'a:70000' }, /is not host:port/],
    [{ bootstrapServers: 'a:1', fetchMaxWaitMs: -1 }, /fetchMaxWaitMs \(fetch.max.wait.ms\) must be an integer/],
    [{ bootstrapServers: 'a:1', maxPollRecords: 1.5 }, /maxPollRecords/],
    [{ bootstrapServers: 'a:1', autoOffsetReset: 'smallest' }, /must be one of latest, earliest, none/],
    [{ bootstrapServers: 'a:1', heartbeatIntervalMs: 50_000 }, /must be lower than sessionTimeoutMs/],
    [{ bootstrapServers: 'a:1', 'fetch.max.wait.ms': 1, fetchMaxWaitMs: 2 }, /given twice/],
    [{ bootstrapServers: 'a:1', fetchMaxWait: 2 }, /unknown configuration option "fetchMaxWait"/],
    [{ bootstrapServers: 'a:1', sasl: { mechanism: 'plain', username: 'u' } }, /needs a username and a password/],
    [{ bootstrapServers: 'a:1', sasl: { mechanism: 'gssapi' } }, /sasl.mechanism must be/],
  ];
  for (const [config, message] of cases) {
    assert.throws(
      () => resolveConfig(config),
      (e: unknown) => e instanceof ConfigError && message.test((e as Error).message),
      JSON.stringify(config),
    );
  }
});

test('a bad password is never echoed in the error', () => {
  try {
    resolveConfig({ bootstrapServers: 'a:1', sasl: { mechanism: 'scram-sha-256', username: 'u', password: 12345678 } });
    assert.unreachable();
  } catch (e) {
    assert.not.match(String((e as Error).message), /12345678/);
  }
});

test.run();
