// Commits: autoCommit on and off, interval and threshold, commitOffsets, eachBatch's resolveOffset,
// commitOffsetsIfNecessary and uncommittedOffsets. What counts is what Kafka holds afterwards.
import type { Scenario } from './harness.js';
import { consume, fill, recording, recordingBatches, start } from './steps.js';

export const commits: Scenario[] = [
  {
    name: 'autoCommit: false and no commitOffsets: nothing is committed',
    topics: [2],
    async run(ctx) {
      await fill(ctx, 0, 2, 5);
      const c = ctx.consumer();
      await consume(ctx, c, { topic: ctx.topics[0], fromBeginning: true }, { autoCommit: false, eachMessage: recording(ctx) }, 10);
    },
  },
  {
    name: 'autoCommit: false, then consumer.commitOffsets() of chosen offsets',
    topics: [2],
    events: ['COMMIT_OFFSETS'],
    async run(ctx) {
      await fill(ctx, 0, 2, 5);
      const c = ctx.consumer();
      await start(ctx, c, { topic: ctx.topics[0], fromBeginning: true }, { autoCommit: false, eachMessage: recording(ctx) });
      await ctx.until('10 deliveries', () => ctx.delivered() >= 10);
      await ctx.attempt('commitOffsets', () =>
        c.commitOffsets([
          { topic: ctx.topics[0], partition: 0, offset: '3' },
          { topic: ctx.topics[0], partition: 1, offset: '5', metadata: 'm' },
        ]),
      );
      await c.disconnect();
    },
  },
  {
    name: 'autoCommit: false, commitOffsets from inside eachMessage (offset + 1 of each record)',
    topics: [1],
    async run(ctx) {
      await fill(ctx, 0, 1, 6);
      const c = ctx.consumer();
      await consume(
        ctx,
        c,
        { topic: ctx.topics[0], fromBeginning: true },
        {
          autoCommit: false,
          eachMessage: recording(ctx, async ({ topic, partition, message }) => {
            if (Number(message.offset) < 4) await c.commitOffsets([{ topic, partition, offset: String(Number(message.offset) + 1) }]);
          }),
        },
        6,
      );
    },
  },
  {
    name: 'commitOffsets of a lower offset after everything was read (autoCommit on): the lower offset stays',
    topics: [1],
    async run(ctx) {
      await fill(ctx, 0, 1, 10);
      const c = ctx.consumer();
      await start(ctx, c, { topic: ctx.topics[0], fromBeginning: true }, { eachMessage: recording(ctx) });
      await ctx.until('10 deliveries', () => ctx.delivered() >= 10);
      // Wait for the commit of the finished batch, so that the rewind below is the last commit.
      const admin = ctx.env.setupKafka(ctx.endpoint.plain).admin();
      await admin.connect();
      try {
        let seen: string | undefined;
        const deadline = Date.now() + 15_000;
        while (seen !== '10' && Date.now() < deadline) {
          seen = (await admin.fetchOffsets({ groupId: ctx.groupId, topics: [ctx.topics[0]] }))[0]?.partitions[0]?.offset;
          if (seen !== '10') await new Promise((r) => setTimeout(r, 20));
        }
        ctx.note(`committed before the rewind ${String(seen)}`);
      } finally {
        await admin.disconnect();
      }
      await ctx.attempt('commitOffsets 2', () => c.commitOffsets([{ topic: ctx.topics[0], partition: 0, offset: '2' }]));
      await c.disconnect();
    },
  },
  {
    name: 'autoCommitInterval long: the end of each batch still commits',
    topics: [2],
    async run(ctx) {
      await fill(ctx, 0, 2, 7);
      const c = ctx.consumer();
      await consume(ctx, c, { topic: ctx.topics[0], fromBeginning: true }, { autoCommitInterval: 600_000, eachMessage: recording(ctx) }, 14);
    },
  },
  {
    name: 'autoCommitThreshold: 3 with eachMessage',
    topics: [1],
    events: ['COMMIT_OFFSETS'],
    async run(ctx) {
      await fill(ctx, 0, 1, 10);
      const c = ctx.consumer();
      await consume(ctx, c, { topic: ctx.topics[0], fromBeginning: true }, { autoCommitThreshold: 3, eachMessage: recording(ctx) }, 10);
    },
  },
  {
    name: 'eachBatchAutoResolve: false and resolveOffset of the first 7 records only',
    topics: [1],
    async run(ctx) {
      await fill(ctx, 0, 1, 10);
      const c = ctx.consumer();
      let sawLast = false;
      await start(
        ctx,
        c,
        { topic: ctx.topics[0], fromBeginning: true },
        {
          eachBatchAutoResolve: false,
          eachBatch: async ({ batch, resolveOffset }) => {
            for (const m of batch.messages) {
              if (Number(m.offset) >= 7) {
                if (m.offset === '9') sawLast = true;
                continue;
              }
              ctx.record(batch.topic, batch.partition, m);
              resolveOffset(m.offset);
            }
          },
        },
      );
      // Offsets 7..9 are handed over again and again (never resolved); the trace keeps 0..6.
      await ctx.until('offset 9 handed over', () => sawLast && ctx.delivered() >= 7);
      await c.disconnect();
    },
  },
  {
    name: 'eachBatch: commitOffsetsIfNecessary() with autoCommitThreshold 1 after each resolveOffset',
    topics: [1],
    async run(ctx) {
      await fill(ctx, 0, 1, 8);
      const c = ctx.consumer();
      await consume(
        ctx,
        c,
        { topic: ctx.topics[0], fromBeginning: true },
        {
          autoCommitThreshold: 1,
          eachBatchAutoResolve: false,
          eachBatch: recordingBatches(ctx, async ({ batch, resolveOffset, commitOffsetsIfNecessary }) => {
            for (const m of batch.messages) {
              resolveOffset(m.offset);
              await commitOffsetsIfNecessary();
            }
          }),
        },
        8,
      );
    },
  },
  {
    name: 'eachBatch: commitOffsetsIfNecessary(offsets) commits exactly the given offsets (autoCommit off)',
    topics: [1],
    async run(ctx) {
      await fill(ctx, 0, 1, 6);
      const c = ctx.consumer();
      await consume(
        ctx,
        c,
        { topic: ctx.topics[0], fromBeginning: true },
        {
          autoCommit: false,
          eachBatch: recordingBatches(ctx, async ({ batch, commitOffsetsIfNecessary }) => {
            if (batch.lastOffset() === '5') await commitOffsetsIfNecessary({ topics: [{ topic: batch.topic, partitions: [{ partition: batch.partition, offset: '2' }] }] });
          }),
        },
        6,
      );
    },
  },
  {
    name: 'eachBatch: uncommittedOffsets() after resolving the last record, autoCommit off',
    topics: [2],
    async run(ctx) {
      await fill(ctx, 0, 2, 4);
      const c = ctx.consumer();
      const seen: string[] = [];
      await consume(
        ctx,
        c,
        { topic: ctx.topics[0], fromBeginning: true },
        {
          autoCommit: false,
          eachBatchAutoResolve: false,
          eachBatch: recordingBatches(ctx, ({ batch, resolveOffset, uncommittedOffsets }) => {
            for (const m of batch.messages) resolveOffset(m.offset);
            if (batch.lastOffset() === '3') {
              const u = uncommittedOffsets();
              // kafkajs hands the partition back as a string (an object key): compared loosely, shown with its type.
              const mine = u.topics.flatMap((t) =>
                t.partitions
                  .filter((p) => String(p.partition) === String(batch.partition))
                  .map((p) => `${ctx.show(t.topic)}:${typeof p.partition} ${String(p.partition)}@${typeof p.offset} ${p.offset}`),
              );
              seen.push(`p${batch.partition} uncommitted {${Object.keys(u).join(',')}} own=${mine.join(',')}`);
            }
          }),
        },
        8,
      );
      for (const s of seen.sort()) ctx.note(s);
    },
  },
  {
    name: 'commitOffsets with invalid arguments and before run(): KafkaJSNonRetriableError',
    topics: [1],
    committed: false,
    async run(ctx) {
      const c = ctx.consumer();
      await c.connect();
      await c.subscribe({ topic: ctx.topics[0], fromBeginning: true });
      await ctx.attempt('commitOffsets before run', () => c.commitOffsets([{ topic: ctx.topics[0], partition: 0, offset: '1' }]));
      await ctx.attempt('commitOffsets negative', () => c.commitOffsets([{ topic: ctx.topics[0], partition: 0, offset: '-1' }]));
      await ctx.attempt('commitOffsets no topic', () => c.commitOffsets([{ topic: '', partition: 0, offset: '1' }]));
      await ctx.attempt('commitOffsets bad offset', () => c.commitOffsets([{ topic: ctx.topics[0], partition: 0, offset: 'abc' }]));
      await ctx.attempt('seek before run', () => c.seek({ topic: ctx.topics[0], partition: 0, offset: '0' }));
      await ctx.attempt('pause before run', () => c.pause([{ topic: ctx.topics[0] }]));
      await ctx.attempt('resume before run', () => c.resume([{ topic: ctx.topics[0] }]));
      await ctx.attempt('paused before run', () => c.paused());
      await ctx.attempt('subscribe without topics', () => c.subscribe({} as { topics: string[] }));
      await ctx.attempt('subscribe topics not an array', () => c.subscribe({ topics: ctx.topics[0] as unknown as string[] }));
      await ctx.attempt('subscribe number topic', () => c.subscribe({ topics: [42 as unknown as string] }));
    },
  },
];
