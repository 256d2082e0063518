// Handlers that throw: retries within run(), the CRASH event, restartOnFailure, the class and
// `retriable` of what the application sees, and what is committed afterwards.
import type { ConsumerCrashEvent } from 'kafkajs';
import type { Ctx, Scenario } from './harness.js';
import { describeError } from './harness.js';
import { fill, recording, recordingBatches, start } from './steps.js';

/**
 * Notes each CRASH: the error's class chain, groupId and restart. freeze() ends the noting before
 * the script's own disconnect: under load kafkajs itself sometimes crashes once more with a
 * KafkaJSConnectionError while a restarted consumer is being disconnected, which is not the point.
 */
function crashes(ctx: Ctx, c: ReturnType<Ctx['consumer']>): { count(): number; freeze(): void } {
  let n = 0;
  let frozen = false;
  c.on(c.events.CRASH, (e: ConsumerCrashEvent) => {
    if (frozen) return;
    n++;
    ctx.note(`CRASH #${n} payload {${Object.keys(e.payload).sort().join(',')}} error ${describeError(e.payload.error)} group=${ctx.show(e.payload.groupId)} restart=${String(e.payload.restart)}`);
  });
  return {
    count: () => n,
    freeze: () => {
      frozen = true;
    },
  };
}

const FAST_RETRY = { retries: 2, initialRetryTime: 50, maxRetryTime: 200 };

export const errors: Scenario[] = [
  {
    name: 'eachMessage throws once at offset 3: retried, delivered again, nothing lost',
    topics: [1],
    async run(ctx) {
      await fill(ctx, 0, 1, 8);
      const c = ctx.consumer({ retry: FAST_RETRY });
      const crash = crashes(ctx, c);
      let thrown = false;
      await start(
        ctx,
        c,
        { topic: ctx.topics[0], fromBeginning: true },
        {
          eachMessage: recording(ctx, ({ message }) => {
            if (message.offset === '3' && !thrown) {
              thrown = true;
              throw new Error('once');
            }
          }),
        },
      );
      await ctx.until('9 deliveries', () => ctx.delivered() >= 9);
      crash.freeze();
      await c.disconnect();
      ctx.note(`crashes ${crash.count()}`);
    },
  },
  {
    name: 'autoCommit: false, eachMessage throws once at offset 3: delivered again from 3, not from the last commit',
    topics: [1],
    async run(ctx) {
      await fill(ctx, 0, 1, 8);
      const c = ctx.consumer({ retry: FAST_RETRY });
      let thrown = false;
      await start(
        ctx,
        c,
        { topic: ctx.topics[0], fromBeginning: true },
        {
          autoCommit: false,
          eachMessage: recording(ctx, ({ message }) => {
            if (message.offset === '3' && !thrown) {
              thrown = true;
              throw new Error('once');
            }
          }),
        },
      );
      await ctx.until('9 deliveries', () => ctx.delivered() >= 9);
      await c.disconnect();
    },
  },
  {
    name: 'autoCommit: false, eachBatch resolves 0..3 then throws once at 4: delivered again from 4',
    topics: [1],
    async run(ctx) {
      await fill(ctx, 0, 1, 8);
      const c = ctx.consumer({ retry: FAST_RETRY });
      let thrown = false;
      await start(
        ctx,
        c,
        { topic: ctx.topics[0], fromBeginning: true },
        {
          autoCommit: false,
          eachBatchAutoResolve: false,
          eachBatch: async ({ batch, resolveOffset }) => {
            for (const m of batch.messages) {
              ctx.record(batch.topic, batch.partition, m);
              if (m.offset === '4' && !thrown) {
                thrown = true;
                throw new Error('batch failed at 4');
              }
              resolveOffset(m.offset);
            }
          },
        },
      );
      await ctx.until('9 deliveries', () => ctx.delivered() >= 9);
      await c.disconnect();
    },
  },
  {
    name: 'eachMessage always throws at offset 3, restartOnFailure false: retries, then CRASH (KafkaJSNumberOfRetriesExceeded)',
    topics: [1],
    events: ['CRASH', 'STOP', 'DISCONNECT'],
    async run(ctx) {
      await fill(ctx, 0, 1, 6);
      const c = ctx.consumer({ retry: { ...FAST_RETRY, restartOnFailure: async () => false } });
      const crash = crashes(ctx, c);
      await start(
        ctx,
        c,
        { topic: ctx.topics[0], fromBeginning: true },
        {
          eachMessage: recording(ctx, ({ message }) => {
            if (message.offset === '3') throw new Error('always');
          }),
        },
      );
      await ctx.until('a crash', () => crash.count() > 0 && ctx.events('DISCONNECT') > 0);
      ctx.note(`deliveries ${ctx.delivered()} STOP x${ctx.events('STOP')} DISCONNECT x${ctx.events('DISCONNECT')}`);
    },
  },
  {
    name: 'restartOnFailure is called with the error; returning true restarts the consumer',
    topics: [1],
    events: ['CRASH', 'GROUP_JOIN'],
    async run(ctx) {
      await fill(ctx, 0, 1, 6);
      let attempts = 0;
      const asked: string[] = [];
      const c = ctx.consumer({
        retry: {
          retries: 1,
          initialRetryTime: 50,
          maxRetryTime: 200,
          restartOnFailure: async (e) => {
            asked.push(describeError(e));
            return true;
          },
        },
      });
      const crash = crashes(ctx, c);
      await start(
        ctx,
        c,
        { topic: ctx.topics[0], fromBeginning: true },
        {
          // Fails the two attempts run()'s retries (1) allow at offset 3; after the restart, offset 3 succeeds.
          eachMessage: recording(ctx, ({ message }) => {
            if (message.offset === '3' && ++attempts <= 2) throw new Error(`attempt ${attempts}`);
          }),
        },
      );
      await ctx.until('8 deliveries', () => ctx.delivered() >= 8);
      crash.freeze();
      ctx.note(`restartOnFailure asked with ${asked.join(' | ')}; crashes ${crash.count()}; GROUP_JOIN x${ctx.events('GROUP_JOIN')}`);
      await c.disconnect();
    },
  },
  {
    name: 'eachMessage throws a TypeError: not retried, CRASH with restart false',
    topics: [1],
    events: ['CRASH'],
    async run(ctx) {
      await fill(ctx, 0, 1, 5);
      const c = ctx.consumer({ retry: FAST_RETRY });
      const crash = crashes(ctx, c);
      await start(
        ctx,
        c,
        { topic: ctx.topics[0], fromBeginning: true },
        {
          eachMessage: recording(ctx, ({ message }) => {
            if (message.offset === '2') throw new TypeError('a programming error');
          }),
        },
      );
      await ctx.until('a crash', () => crash.count() > 0 && ctx.events('CRASH') > 0);
      crash.freeze();
      await c.disconnect();
      ctx.note(`deliveries ${ctx.delivered()}`);
    },
  },
  {
    name: 'eachMessage throws a KafkaJSError with retriable false: CRASH KafkaJSNonRetriableError, no restart',
    topics: [1],
    events: ['CRASH'],
    async run(ctx) {
      await fill(ctx, 0, 1, 5);
      const c = ctx.consumer({ retry: FAST_RETRY });
      const crash = crashes(ctx, c);
      const { KafkaJSError } = ctx.module;
      await start(
        ctx,
        c,
        { topic: ctx.topics[0], fromBeginning: true },
        {
          eachMessage: recording(ctx, ({ message }) => {
            if (message.offset === '1') throw new KafkaJSError('not retriable', { retriable: false });
          }),
        },
      );
      await ctx.until('a crash', () => crash.count() > 0);
      crash.freeze();
      await c.disconnect();
      ctx.note(`deliveries ${ctx.delivered()}`);
    },
  },
  {
    name: 'eachBatch resolves 0..4 then throws once at 5: resolved offsets are committed, 5.. comes again',
    topics: [1],
    events: ['COMMIT_OFFSETS'],
    async run(ctx) {
      await fill(ctx, 0, 1, 10);
      const c = ctx.consumer({ retry: FAST_RETRY });
      const crash = crashes(ctx, c);
      let thrown = false;
      await start(
        ctx,
        c,
        { topic: ctx.topics[0], fromBeginning: true },
        {
          eachBatchAutoResolve: false,
          eachBatch: async ({ batch, resolveOffset }) => {
            for (const m of batch.messages) {
              ctx.record(batch.topic, batch.partition, m);
              if (m.offset === '5' && !thrown) {
                thrown = true;
                throw new Error('batch failed at 5');
              }
              resolveOffset(m.offset);
            }
          },
        },
      );
      await ctx.until('11 deliveries', () => ctx.delivered() >= 11);
      crash.freeze();
      await c.disconnect();
      ctx.note(`crashes ${crash.count()}`);
    },
  },
  {
    name: 'eachBatch throws once at offset 2 with the default auto-resolve: nothing resolved, the batch comes again from 0',
    topics: [1],
    async run(ctx) {
      await fill(ctx, 0, 1, 10);
      const c = ctx.consumer({ retry: FAST_RETRY });
      let thrown = false;
      await start(
        ctx,
        c,
        { topic: ctx.topics[0], fromBeginning: true },
        {
          eachBatch: async ({ batch }) => {
            for (const m of batch.messages) {
              ctx.record(batch.topic, batch.partition, m);
              if (m.offset === '2' && !thrown) {
                thrown = true;
                throw new Error('batch failed at 2');
              }
            }
          },
        },
      );
      await ctx.until('13 deliveries', () => ctx.delivered() >= 13);
      await c.disconnect();
    },
  },
  {
    name: 'eachBatch always throws at 2 with autoCommit on, restartOnFailure false: committed stops at the resolved 2',
    topics: [1],
    events: ['CRASH'],
    async run(ctx) {
      await fill(ctx, 0, 1, 6);
      const c = ctx.consumer({ retry: { ...FAST_RETRY, retries: 1, restartOnFailure: async () => false } });
      const crash = crashes(ctx, c);
      await start(
        ctx,
        c,
        { topic: ctx.topics[0], fromBeginning: true },
        {
          eachBatchAutoResolve: false,
          eachBatch: recordingBatches(ctx, ({ batch, resolveOffset }) => {
            for (const m of batch.messages) {
              if (m.offset === '2') throw new Error('batch always fails at 2');
              resolveOffset(m.offset);
            }
          }),
        },
      );
      await ctx.until('a crash', () => crash.count() > 0);
      crash.freeze();
      await c.disconnect();
    },
  },
  {
    name: 'a consumer with heartbeatInterval >= sessionTimeout: KafkaJSNonRetriableError at consumer()',
    topics: [1],
    committed: false,
    async run(ctx) {
      await ctx.attempt('consumer()', () => {
        ctx.consumer({ sessionTimeout: 6000, heartbeatInterval: 6000 });
        return 'created';
      });
    },
  },
];
