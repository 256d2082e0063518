// pnpm --filter @kwire/protocol generate [-- --check] [--version 4.4.0]
// Regenerates src/messages/*.ts, src/api-keys.ts, src/error-codes.ts and test/schemas.json from
// the kafka-clients jar of one Kafka release. --check writes nothing and fails if any file differs.
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { dumpKafka, protocolDir } from './dump.js';
import { generateAll } from './generate.js';

const { values } = parseArgs({ options: { check: { type: 'boolean' }, version: { type: 'string' } } });
const dump = await dumpKafka(values.version, (l) => process.stderr.write(`${l}\n`));
const files = generateAll(dump);
const stale: string[] = [];
for (const [rel, content] of files) {
  const path = join(protocolDir, rel);
  const current = await readFile(path, 'utf8').catch(() => undefined);
  if (current === content) continue;
  stale.push(rel);
  if (!values.check) {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, content);
  }
}
if (values.check) {
  if (stale.length) {
    process.stderr.write(`out of date with Kafka ${dump.kafkaVersion}: ${stale.join(', ')}\n`);
    process.exit(1);
  }
  process.stdout.write(`generated sources match Kafka ${dump.kafkaVersion}\n`);
} else {
  process.stdout.write(`Kafka ${dump.kafkaVersion}: ${files.size} files, ${stale.length} changed${stale.length ? `: ${stale.join(', ')}` : ''}\n`);
}
