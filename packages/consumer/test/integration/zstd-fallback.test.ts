// Issue 13 item 6 on a real broker: a consumer whose zstd addon did not build (staged: a preload
// makes resolving zstd-napi fail) still starts and reads gzip data; a zstd batch is read through
// Node's own zlib where this Node has it, else it is a CorruptRecordError naming the codec.
import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import * as zlib from 'node:zlib';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { useKafka, type TestKafka } from '@kwire/broker';
import { TestProducer } from '@kwire/testkit';

const here = dirname(fileURLToPath(import.meta.url));
const preload = join(here, '../../../../protocol/test/unit/fixtures/block-zstd.cjs');
const consumerIndex = join(here, '../../src/index.js');
let kafka: TestKafka;

test.before(async () => {
  kafka = await useKafka();
});
test.after(async () => {
  await kafka?.release();
});

test('no zstd addon: the consumer loads and reads gzip; zstd via node:zlib, or a clear CorruptRecordError', async () => {
  const run = Date.now().toString(36);
  const producer = new TestProducer(kafka.bootstrap);
  const gz = `nozstd-gzip-${run}`;
  const zs = `nozstd-zstd-${run}`;
  try {
    await producer.createTopics([gz, zs]);
    const records = Array.from({ length: 20 }, (_, i) => ({ value: `v${i}` }));
    await producer.send(gz, 0, records, { compression: 'gzip' });
    await producer.send(zs, 0, records, { compression: 'zstd' });
  } finally {
    await producer.close();
  }
  const script = `
    const { createConsumer } = await import(${JSON.stringify(consumerIndex)});
    const read = async (topic) => {
      const c = createConsumer({ bootstrapServers: ${JSON.stringify(kafka.bootstrap)}, autoOffsetReset: 'earliest', fetchMaxWaitMs: 100, valueDeserializer: 'string' });
      try {
        await c.assign([{ topic, partition: 0 }]);
        for await (const batch of c) return batch.records.map((r) => r.value).join(',');
      } catch (err) {
        return err.name + ': ' + err.message;
      } finally {
        await c.close({ timeoutMs: 2000 });
      }
    };
    process.stdout.write(JSON.stringify({ gzip: await read(${JSON.stringify(gz)}), zstd: await read(${JSON.stringify(zs)}) }));
  `;
  const { stdout } = await promisify(execFile)(process.execPath, ['--require', preload, '--input-type=module', '-e', script], { timeout: 60_000 });
  const out = JSON.parse(stdout) as { gzip: string; zstd: string };
  const all = Array.from({ length: 20 }, (_, i) => `v${i}`).join(',');
  assert.is(out.gzip, all);
  if (typeof (zlib as unknown as { zstdDecompressSync?: unknown }).zstdDecompressSync === 'function') assert.is(out.zstd, all);
  else assert.match(out.zstd, /^CorruptRecordError: .*zstd: no decoder here .*reinstall so that zstd-napi builds, or run Node 22\.15\+/);
});

test.run();
