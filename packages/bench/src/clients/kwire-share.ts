// kwire's share consumer (KIP-932) as one member of a share group, in a process of its own: the
// normal API (createShareConsumer, subscribe, `for await` over batches, implicit acknowledgement:
// each batch is accepted when the loop asks for the next one), every value touched and hashed by
// partition and offset so that the orchestrator can check that the members together got every
// record once. The orchestrator starts the members of a pass together and stops them once their
// counts add up to the topic (share-group members cannot know when the others are done).
import { createShareConsumer } from '@kwire/consumer';
import { valueHash } from '../meter.js';
import { Run, type ClientOptions, type ClientReport } from './common.js';

export async function kwireShareClient(options: ClientOptions): Promise<ClientReport> {
  // One hash file per pass: the orchestrator merges the members pass by pass.
  const run = new Run('kwire', { ...options, mode: 'share', ...(options.hashFile ? { hashFile: `${options.hashFile}.p${options.pass ?? 0}` } : {}) });
  await run.waitGo();
  // As ShareConsumerPerformance counts: from the consumer's creation, the join included.
  run.start();
  const consumer = createShareConsumer({ bootstrapServers: options.bootstrap, groupId: options.groupId!, clientId: 'kwire-bench-share', ...options.config });
  // The loop ends when the orchestrator's stop closes the consumer (no break: a batch in hand when
  // leaving the loop is released, not accepted, and would be delivered again to another member).
  const closed = run.finishedPromise.then(() => consumer.close());
  const digest = run.digest;
  try {
    await consumer.subscribe([options.topic]);
    run.ready();
    for await (const batch of consumer) {
      const records = batch.records;
      const n = records.length;
      const partition = batch.partition;
      for (let i = 0; i < n; i++) {
        const r = records[i]!;
        const v = r.value as Buffer | null;
        if (v === null) continue;
        const h = valueHash(v);
        digest.addHash(h, v.length);
        run.offsetSeen(partition, Number(r.offset), h);
      }
      run.batch(n);
    }
  } catch (err) {
    run.error = `kwire share consumer: ${(err as Error).message}`;
  }
  run.finish();
  await closed;
  const m = consumer.metrics();
  run.notes.push(`kwire share: ${m.fetches} ShareFetch, ${m.recordsAcquired} records acquired, ${m.redeliveries} redeliveries, ${m.lockExpired} lock expiries`);
  return run.report();
}
