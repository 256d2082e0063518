// Reads records with batch.cursor(), the zero-allocation path: one record object moved along each
// batch, its value read in place from the fetched bytes. Writes 20,000 records with the Java
// producer first. Against the broker KWIRE_BOOTSTRAP names, or a local one the project's launcher
// starts for the run.
//   node packages/consumer/examples/cursor.mjs          (after `npm test` or `npm run build`)
import { createTopic, producerPerformance, useKafka } from '@kwire/broker';
import { createConsumer } from '@kwire/consumer';

const kafka = await useKafka({ log: (l) => console.error(`[broker] ${l}`) });
const topic = `cursor-${Date.now().toString(36)}`;
const RECORDS = 20_000;
try {
  await createTopic(kafka, { topic, partitions: 3 });
  await producerPerformance(kafka, { topic, numRecords: RECORDS, recordSize: 100, compression: 'lz4' });

  const consumer = createConsumer({ bootstrapServers: kafka.bootstrap, autoOffsetReset: 'earliest' });
  await consumer.assign([0, 1, 2].map((partition) => ({ topic, partition })));
  let cursor; // reused from batch to batch: nothing allocated per batch either
  let records = 0;
  let valueBytes = 0;
  let checksum = 0;
  const next = [0, 0, 0];
  for await (const batch of consumer) {
    cursor = batch.cursor(cursor);
    for (let r = cursor.next(); r !== null; r = cursor.next()) {
      // Offsets as numbers, in order per partition; the value's bytes read where they were fetched.
      if (r.offsetNumber !== next[r.partition]) throw new Error(`${r.partition}@${r.offsetNumber}: expected ${next[r.partition]}`);
      next[r.partition]++;
      const data = r.data;
      for (let i = r.valueOffset, end = r.valueOffset + r.valueLength; i < end; i++) checksum = (checksum * 31 + data[i]) >>> 0;
      valueBytes += r.valueLength;
      records++;
    }
    if (records >= RECORDS) break;
  }
  console.log(`read ${records} records through the cursor: ${valueBytes} value bytes, checksum ${checksum.toString(16)}`);
  await consumer.close();
} finally {
  await kafka.release();
}
