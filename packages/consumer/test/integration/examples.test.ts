// The consumer package's examples run against the test broker (KWIRE_BOOTSTRAP), as a reader of
// the README would run them: each must exit 0 and print what it promises.
import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { useKafka, type TestKafka } from '@kwire/broker';

const examples = join(dirname(fileURLToPath(import.meta.url)), '../../../examples');
let kafka: TestKafka;

test.before(async () => {
  kafka = await useKafka();
});
test.after(async () => {
  await kafka?.release();
});

async function example(name: string): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [join(examples, name)], { timeout: 180_000, env: { ...process.env, KWIRE_BOOTSTRAP: kafka.bootstrap } });
  return stdout;
}

test('examples/tail.mjs reads every record through two streams', async () => {
  assert.match(await example('tail.mjs'), /read 5000 records/);
});

test('examples/cursor.mjs reads every record through the zero-allocation cursor', async () => {
  assert.match(await example('cursor.mjs'), /read 20000 records through the cursor: 2000000 value bytes/);
});

test('examples/group.mjs: failures retried, everything committed, metrics printed', async () => {
  const out = await example('group.mjs');
  assert.match(out, /handled 3000 records \(3 failures retried\)/);
  assert.match(out, /the group's committed offsets add up to 3000/);
  assert.match(out, /^kwire_consumer_records_consumed_total \d+$/m);
});

test.run();
