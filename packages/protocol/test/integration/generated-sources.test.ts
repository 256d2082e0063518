// The generated sources (src/messages/*, src/api-keys.ts, src/error-codes.ts, test/schemas.json)
// still match what the generator makes from the kafka-clients jar of the Kafka release the tests
// run against. A stale file, a hand edit or a generator change without regeneration fails here.
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const protocolDir = join(dirname(fileURLToPath(import.meta.url)), '../../..');

// The generator is its own TypeScript project (codegen/), built into dist/codegen by tsc -b; it is
// loaded by path so that this test project does not compile it a second time.
interface Dump {
  kafkaVersion: string;
  errors: { code: number; name: string; retriable: boolean }[];
}
const codegen = async () => ({
  dumpKafka: ((await import(join(protocolDir, 'dist/codegen/dump.js'))) as { dumpKafka: () => Promise<Dump> }).dumpKafka,
  generateAll: ((await import(join(protocolDir, 'dist/codegen/generate.js'))) as { generateAll: (d: Dump) => Map<string, string> }).generateAll,
});

test('generated sources are up to date with the Kafka release on the classpath', async () => {
  const { dumpKafka, generateAll } = await codegen();
  const dump = await dumpKafka();
  const files = generateAll(dump);
  assert.ok(files.size >= 20);
  const stale: string[] = [];
  for (const [rel, content] of files) {
    const current = await readFile(join(protocolDir, rel), 'utf8').catch(() => '');
    if (current !== content) stale.push(rel);
  }
  assert.equal(stale, [], `run \`pnpm --filter @kwire/protocol generate\` (Kafka ${dump.kafkaVersion})`);
});

test('the error table has every code of the Java Errors enum of that release', async () => {
  const { dumpKafka } = await codegen();
  const { ERROR_CODES } = await import('../../src/index.js');
  const dump = await dumpKafka();
  assert.is(ERROR_CODES.length, dump.errors.length);
  for (const e of dump.errors) {
    const ours = ERROR_CODES.find((x) => x.code === e.code);
    assert.ok(ours, `code ${e.code}`);
    assert.is(ours!.name, e.name);
    assert.is(ours!.retriable, e.retriable);
  }
});

test.run();
