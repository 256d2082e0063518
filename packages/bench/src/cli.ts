import { parseArgs } from 'node:util';
import { consumerPerformance, createTopic, ensureKafka, producerPerformance, startKafka, type KafkaTarget } from '@kwire/broker';

/**
 * `npm run bench`. For now the smoke run of the foundation: start the launcher's broker (or use
 * --bootstrap), load 100,000 records with ProducerPerformance, consume them with the Java baseline
 * (ConsumerPerformance) and print its figures. The benchmark issue replaces this with the full
 * comparison of clients.
 */
const { values } = parseArgs({
  options: {
    bootstrap: { type: 'string' },
    records: { type: 'string', default: '100000' },
    'record-size': { type: 'string', default: '100' },
    compression: { type: 'string', default: 'none' },
  },
});

const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);
const records = Number(values.records);
const recordSize = Number(values['record-size']);

const cluster = values.bootstrap ? undefined : await startKafka({ log });
try {
  const target: KafkaTarget = cluster ?? { bootstrap: values.bootstrap!, dist: await ensureKafka(undefined, { log }) };
  const topic = `bench-smoke-${Date.now()}`;
  await createTopic(target, { topic, partitions: 1 });
  log(`loading ${records} records of ${recordSize} B (${values.compression}) into ${topic}`);
  const produced = await producerPerformance(target, { topic, numRecords: records, recordSize, compression: values.compression as 'none' });
  log(`loaded: ${produced.recordsPerSec.toFixed(0)} records/s`);
  const consumed = await consumerPerformance(target, { topic, messages: records });
  if (consumed.records !== records) throw new Error(`the Java consumer read ${consumed.records} records, not ${records}`);
  process.stdout.write(
    [
      `broker: Apache Kafka ${target.dist.version.text} at ${target.bootstrap}`,
      `Java consumer (ConsumerPerformance), ${records} records of ${recordSize} B:`,
      `  ${consumed.fetchRecordsPerSec.toFixed(0)} records/s, ${consumed.fetchMbPerSec.toFixed(1)} MiB/s (fetch phase; group join took ${consumed.rebalanceMs} ms)`,
      '',
    ].join('\n'),
  );
} finally {
  await cluster?.stop();
}
