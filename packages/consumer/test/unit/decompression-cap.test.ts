// maxDecompressedBytes end to end against a fake broker: a consumer reading a zstd batch that
// decompresses past its cap gets a CorruptRecordError naming the cap and the option, the memory is
// never taken, and the same batch under a larger cap is delivered. Plus the config checks and the
// redaction of secrets in the resolved configuration.
import { inspect } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { encodeRecordBatch, Fetch, Metadata } from '@kwire/protocol';
import { resolveConfig } from '../../src/config.js';
import { createConsumer } from '../../src/consumer.js';
import { ConfigError, CorruptRecordError } from '../../src/errors.js';
import { capturingLogger, FakeBroker } from '@kwire/testkit';

const TOPIC_ID = 'AAAAAAAAAAAAAAAAAAAAAg';

/** One zstd batch of 40 records of 50 KB each: 2 MB decompressed, a few KB on the wire. */
const BATCH = encodeRecordBatch(
  Array.from({ length: 40 }, (_, i) => ({ value: Buffer.alloc(50_000, 97 + (i % 26)) })),
  { baseOffset: 0, compression: 'zstd' },
);

async function fakeCluster(): Promise<FakeBroker> {
  let port = 0;
  const b = await FakeBroker.start({
    handlers: {
      [Metadata.apiKey]: () => ({
        body: {
          throttleTimeMs: 0,
          brokers: [{ nodeId: 1, host: '127.0.0.1', port, rack: null }],
          clusterId: 'fake',
          controllerId: 1,
          topics: [
            {
              errorCode: 0,
              name: 'big',
              topicId: TOPIC_ID,
              isInternal: false,
              partitions: [{ errorCode: 0, partitionIndex: 0, leaderId: 1, leaderEpoch: 0, replicaNodes: [1], isrNodes: [1], offlineReplicas: [] }],
              topicAuthorizedOperations: -2147483648,
            },
          ],
        },
      }),
      [Fetch.apiKey]: (req) => {
        const body = req.body as { sessionEpoch: number; topics: { partitions: { fetchOffset: bigint }[] }[] };
        const from = body.topics[0]?.partitions[0]?.fetchOffset ?? 0n;
        return {
          // Past the batch: an empty answer after a short wait, as a long poll would.
          delayMs: from > 0n ? 50 : 0,
          body: {
            throttleTimeMs: 0,
            errorCode: 0,
            sessionId: 0,
            responses: [
              {
                topic: 'big',
                topicId: TOPIC_ID,
                partitions: [
                  {
                    partitionIndex: 0,
                    errorCode: 0,
                    highWatermark: 40n,
                    lastStableOffset: 40n,
                    logStartOffset: 0n,
                    abortedTransactions: null,
                    preferredReadReplica: -1,
                    records: from === 0n ? BATCH : null,
                  },
                ],
              },
            ],
          },
        };
      },
    },
  });
  port = b.port;
  return b;
}

async function firstOutcome(maxDecompressedBytes: number | undefined): Promise<{ records?: number; error?: unknown; broker: FakeBroker }> {
  const b = await fakeCluster();
  const consumer = createConsumer({ bootstrapServers: `127.0.0.1:${b.port}`, fetchMaxWaitMs: 50, ...(maxDecompressedBytes ? { maxDecompressedBytes } : {}) });
  try {
    await consumer.assign([{ topic: 'big', partition: 0, offset: 0n }]);
    for await (const batch of consumer) {
      const n = batch.records.length;
      assert.equal(batch.records[1]!.value, Buffer.alloc(50_000, 98));
      return { records: n, broker: b };
    }
    return { broker: b };
  } catch (error) {
    return { error, broker: b };
  } finally {
    await consumer.close();
    await b.stop();
  }
}

test('a batch decompressing past maxDecompressedBytes: CorruptRecordError naming the cap and the option', async () => {
  const { error, broker } = await firstOutcome(1_000_000);
  assert.equal(broker.errors, []);
  assert.ok(error instanceof CorruptRecordError, String(error));
  assert.is((error as CorruptRecordError).topic, 'big');
  assert.is((error as CorruptRecordError).offset, 0n);
  assert.match((error as Error).message, /big-0: corrupt data at or after offset 0: zstd output of .* exceeds the limit of 1000000 bytes \(maxDecompressedBytes\)/);
});

test('the same batch under the default cap (64 MiB) is delivered', async () => {
  const { records, error, broker } = await firstOutcome(undefined);
  assert.equal(broker.errors, []);
  assert.is(error, undefined, String(error));
  assert.ok(records !== undefined && records > 0);
});

test('maxDecompressedBytes is checked like every option', () => {
  assert.is(resolveConfig({ bootstrapServers: 'h:1' }).maxDecompressedBytes, 64 * 1024 * 1024);
  assert.is(resolveConfig({ bootstrapServers: 'h:1', maxDecompressedBytes: '1048576' }).maxDecompressedBytes, 1048576);
  assert.throws(
    () => resolveConfig({ bootstrapServers: 'h:1', maxDecompressedBytes: 0 }),
    (e: unknown) => e instanceof ConfigError && /maxDecompressedBytes must be an integer from 1/.test((e as Error).message),
  );
});

test('the resolved config shows [redacted] for passwords, keys and passphrases under inspect, JSON and a logger', () => {
  const c = resolveConfig({
    bootstrapServers: 'h:1',
    sasl: { mechanism: 'scram-sha-512', username: 'alice', password: 'pw-SECRET-1' },
    ssl: { ca: 'CA-PEM', key: 'KEY-SECRET-2', passphrase: 'PASS-SECRET-3', servername: 'kafka.example' },
  });
  const { logger, lines } = capturingLogger();
  logger.debug('config', { config: c });
  for (const text of [inspect(c, { depth: Infinity }), JSON.stringify(c), lines.join('\n'), `${inspect({ nested: [c] }, { depth: 9 })}`]) {
    for (const secret of ['pw-SECRET-1', 'KEY-SECRET-2', 'PASS-SECRET-3']) assert.not.ok(text.includes(secret), `${secret} in ${text.slice(0, 400)}`);
    assert.ok(text.includes('[redacted]'));
    assert.ok(text.includes('alice') && text.includes('kafka.example'), 'the rest still shows');
  }
  // The values themselves are intact for the code that uses them (and a spread copy carries them).
  assert.is((c.sasl as { password: string }).password, 'pw-SECRET-1');
  assert.is({ ...(c.ssl as object) }['key' as never], 'KEY-SECRET-2');
  assert.not.ok(JSON.stringify({ ...(c.ssl as object) }).includes('[redacted]'), 'a spread copy has no hook (tls.connect gets the real values)');
});

test.run();
