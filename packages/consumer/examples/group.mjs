// A consumer group member as a service runs one: run({ eachMessage }) with a handler that fails
// now and then (the record comes again: nothing is committed past what the handler finished), a
// bounded close() that reports what it committed, and the metrics a service watches.
// Against KWIRE_BOOTSTRAP, or a local broker started for the run.
//   node packages/consumer/examples/group.mjs
import { createTopic, describeGroupOffsets, producerPerformance, useKafka } from '@kwire/broker';
import { createConsumer, prometheusText } from '@kwire/consumer';

const kafka = await useKafka({ log: (l) => console.error(`[broker] ${l}`) });
const topic = `orders-${Date.now().toString(36)}`;
const groupId = `billing-${Date.now().toString(36)}`;
try {
  await createTopic(kafka, { topic, partitions: 3 });
  await producerPerformance(kafka, { topic, numRecords: 3_000, recordSize: 100 });

  const consumer = createConsumer({ bootstrapServers: kafka.bootstrap, groupId, autoOffsetReset: 'earliest', retryBackoffMs: 50 });
  consumer.on('assigned', (d) => console.log(`assigned ${d.added.map((tp) => `${tp.topic}-${tp.partition}`).join(', ')}`));
  await consumer.subscribe({ topics: [topic] });

  let handled = 0;
  let failures = 0;
  const running = consumer.run({
    eachMessage: async ({ partition, message }) => {
      // One record in 1,000 fails once: its partition is delivered again from it after a backoff.
      if (message.offset % 1000n === 500n && failures < 3) {
        failures++;
        throw new Error(`could not bill ${partition}@${message.offset} (this time)`);
      }
      if (++handled === 3_000) void stop();
    },
  });

  async function stop() {
    const result = await consumer.close({ timeoutMs: 10_000 });
    console.log(`closed in ${result.durationMs} ms; committed ${result.committed.length} offsets, ${result.uncommitted.length} left uncommitted`);
  }
  await running;
  const m = consumer.metrics();
  console.log(`handled ${handled} records (${failures} failures retried); ${m.group.commits} commits, ${m.group.rebalances} rebalance`);
  console.log(
    prometheusText(m)
      .split('\n')
      .filter((l) => l.startsWith('kwire_consumer_records_consumed_total'))
      .join('\n'),
  );
  const committed = (await describeGroupOffsets(kafka, groupId)).reduce((n, r) => n + Number(r.committed ?? 0), 0);
  console.log(`the group's committed offsets add up to ${committed} (kafka-consumer-groups --describe)`);
  if (committed !== 3_000) process.exitCode = 1;
} finally {
  await kafka.release();
}
