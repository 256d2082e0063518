// CommonJS programs load the package with require() (Node's require of ES modules, 20.19+): a
// child process, from the package's directory, requires it by name and uses it.
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

test("require('@kwire/kafkajs') gives Kafka, the errors and the constants", () => {
  const program = `
    const kafkajs = require('@kwire/kafkajs');
    const { Kafka, KafkaJSError, KafkaJSNonRetriableError, logLevel, CompressionTypes, PartitionAssigners } = kafkajs;
    const kafka = new Kafka({ brokers: ['localhost:9092'], logLevel: logLevel.NOTHING });
    const consumer = kafka.consumer({ groupId: 'cjs' });
    let typed = false;
    try { kafka.consumer({}); } catch (e) { typed = e instanceof KafkaJSNonRetriableError && e instanceof KafkaJSError; }
    console.log(JSON.stringify({
      kafka: typeof Kafka,
      consumer: typeof consumer.run,
      producer: typeof kafka.producer().send,
      event: consumer.events.CRASH,
      gzip: CompressionTypes.GZIP,
      roundRobin: typeof PartitionAssigners.roundRobin,
      typed,
    }));
  `;
  const out = execFileSync(process.execPath, ['-e', program], { cwd: packageDir, encoding: 'utf8', timeout: 30_000 });
  const seen = JSON.parse(out.trim().split('\n').pop()!);
  assert.equal(seen, { kafka: 'function', consumer: 'function', producer: 'function', event: 'consumer.crash', gzip: 1, roundRobin: 'function', typed: true });
});

test.run();
