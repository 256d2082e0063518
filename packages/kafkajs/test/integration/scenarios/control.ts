// Flow control: pause/resume/paused, seek before and during a run (and inside a batch), isStale,
// isRunning, heartbeat, stop then run again, disconnect during a handler.
import type { Scenario } from './harness.js';
import { gate } from './harness.js';
import { consume, fill, recording, recordingBatches, start } from './steps.js';

export const control: Scenario[] = [
  {
    name: 'consumer.pause(topic) on GROUP_JOIN, paused(), resume() once the other topic is drained',
    topics: [1, 1],
    async run(ctx) {
      await fill(ctx, 0, 1, 5);
      await fill(ctx, 1, 1, 5);
      const c = ctx.consumer();
      c.on(c.events.GROUP_JOIN, () => c.pause([{ topic: ctx.topics[1] }]));
      await start(ctx, c, { topics: [ctx.topics[0], ctx.topics[1]], fromBeginning: true }, { eachMessage: recording(ctx) });
      await ctx.until('T0 drained', () => ctx.deliveredOf(0, 0) >= 5);
      ctx.note(`T1 delivered while paused: ${ctx.deliveredOf(1, 0)}`);
      ctx.note(`paused() ${ctx.show(c.paused())}`);
      c.resume([{ topic: ctx.topics[1] }]);
      ctx.note(`paused() after resume ${ctx.show(c.paused())}`);
      await ctx.until('10 deliveries', () => ctx.delivered() >= 10);
      await c.disconnect();
    },
  },
  {
    name: 'consumer.pause of one partition on GROUP_JOIN, resume([{ topic, partitions }])',
    topics: [3],
    async run(ctx) {
      await fill(ctx, 0, 3, 4);
      const c = ctx.consumer();
      c.on(c.events.GROUP_JOIN, () => c.pause([{ topic: ctx.topics[0], partitions: [1, 2] }]));
      await start(ctx, c, { topic: ctx.topics[0], fromBeginning: true }, { eachMessage: recording(ctx) });
      await ctx.until('p0 drained', () => ctx.deliveredOf(0, 0) >= 4);
      ctx.note(`p1,p2 delivered while paused: ${ctx.deliveredOf(0, 1) + ctx.deliveredOf(0, 2)}`);
      ctx.note(`paused() ${ctx.show(c.paused())}`);
      c.resume([{ topic: ctx.topics[0], partitions: [2] }]);
      await ctx.until('p2 drained', () => ctx.deliveredOf(0, 2) >= 4);
      ctx.note(`paused() after resuming p2 ${ctx.show(c.paused())}`);
      c.resume([{ topic: ctx.topics[0] }]);
      await ctx.until('12 deliveries', () => ctx.delivered() >= 12);
      await c.disconnect();
    },
  },
  {
    name: 'eachMessage pause() at offset 4: the partition stops after it; the returned resume() restarts at 5',
    topics: [2],
    async run(ctx) {
      await fill(ctx, 0, 2, 10);
      const c = ctx.consumer();
      let resume: (() => void) | undefined;
      await start(
        ctx,
        c,
        { topic: ctx.topics[0], fromBeginning: true },
        {
          eachMessage: recording(ctx, ({ partition, message, pause }) => {
            if (partition === 0 && message.offset === '4' && !resume) resume = pause();
          }),
        },
      );
      await ctx.until('p1 drained and p0 paused', () => ctx.deliveredOf(0, 1) >= 10 && resume !== undefined);
      ctx.note(`p0 delivered while paused: ${ctx.deliveredOf(0, 0)}`);
      ctx.note(`paused() ${ctx.show(c.paused())}`);
      resume?.();
      await ctx.until('20 deliveries', () => ctx.delivered() >= 20);
      await c.disconnect();
    },
  },
  {
    name: 'eachBatch pause() mid-batch after resolveOffset(3), consumer.resume() later',
    topics: [2],
    async run(ctx) {
      await fill(ctx, 0, 2, 8);
      const c = ctx.consumer();
      let paused = false;
      await start(
        ctx,
        c,
        { topic: ctx.topics[0], fromBeginning: true },
        {
          eachBatchAutoResolve: false,
          eachBatch: async ({ batch, resolveOffset, pause }) => {
            for (const m of batch.messages) {
              ctx.record(batch.topic, batch.partition, m);
              resolveOffset(m.offset);
              if (batch.partition === 0 && m.offset === '3' && !paused) {
                paused = true;
                pause();
                return;
              }
            }
          },
        },
      );
      await ctx.until('p1 drained and p0 paused', () => ctx.deliveredOf(0, 1) >= 8 && paused);
      ctx.note(`p0 delivered while paused: ${ctx.deliveredOf(0, 0)}`);
      c.resume([{ topic: ctx.topics[0], partitions: [0] }]);
      await ctx.until('16 deliveries', () => ctx.delivered() >= 16);
      await c.disconnect();
    },
  },
  {
    name: 'seek right after run() resolves: consumption starts at the sought offset',
    topics: [1],
    async run(ctx) {
      await fill(ctx, 0, 1, 10);
      const c = ctx.consumer();
      await start(ctx, c, { topic: ctx.topics[0], fromBeginning: true }, { eachMessage: recording(ctx) });
      c.seek({ topic: ctx.topics[0], partition: 0, offset: '6' });
      await ctx.until('4 deliveries', () => ctx.delivered() >= 4);
      await c.disconnect();
    },
  },
  {
    name: 'seek during the run (from outside), back to offset 3 after everything was read',
    topics: [1],
    async run(ctx) {
      await fill(ctx, 0, 1, 10);
      const c = ctx.consumer();
      await start(ctx, c, { topic: ctx.topics[0], fromBeginning: true }, { eachMessage: recording(ctx) });
      await ctx.until('10 deliveries', () => ctx.delivered() >= 10);
      c.seek({ topic: ctx.topics[0], partition: 0, offset: '3' });
      await ctx.until('17 deliveries', () => ctx.delivered() >= 17);
      await c.disconnect();
    },
  },
  {
    name: 'seek inside eachMessage at offset 5 back to 2: the rest of the batch is dropped',
    topics: [1],
    async run(ctx) {
      await fill(ctx, 0, 1, 10);
      const c = ctx.consumer();
      let sought = false;
      await consume(
        ctx,
        c,
        { topic: ctx.topics[0], fromBeginning: true },
        {
          eachMessage: recording(ctx, ({ topic, partition, message }) => {
            if (message.offset === '5' && !sought) {
              sought = true;
              c.seek({ topic, partition, offset: '2' });
            }
          }),
        },
        14,
      );
    },
  },
  {
    name: 'seek forward inside eachMessage at offset 2 to 7: 3..6 are skipped',
    topics: [1],
    async run(ctx) {
      await fill(ctx, 0, 1, 10);
      const c = ctx.consumer();
      await consume(
        ctx,
        c,
        { topic: ctx.topics[0], fromBeginning: true },
        {
          eachMessage: recording(ctx, ({ topic, partition, message }) => {
            if (message.offset === '2') c.seek({ topic, partition, offset: '7' });
          }),
        },
        6,
      );
    },
  },
  {
    name: 'eachBatch: seek at offset 5 makes isStale() true; the batch is left and 1.. comes again',
    topics: [1],
    async run(ctx) {
      await fill(ctx, 0, 1, 10);
      const c = ctx.consumer();
      let sought = false;
      await consume(
        ctx,
        c,
        { topic: ctx.topics[0], fromBeginning: true },
        {
          eachBatch: async ({ batch, isStale, resolveOffset }) => {
            for (const m of batch.messages) {
              if (isStale()) break;
              ctx.record(batch.topic, batch.partition, m);
              resolveOffset(m.offset);
              if (m.offset === '5' && !sought) {
                sought = true;
                ctx.note(`isStale before seek ${String(isStale())}`);
                c.seek({ topic: batch.topic, partition: batch.partition, offset: '1' });
                ctx.note(`isStale after seek ${String(isStale())}`);
              }
            }
          },
        },
        15,
      );
    },
  },
  {
    name: 'seek past the log end: kafkajs resets by fromBeginning (earliest)',
    topics: [1],
    async run(ctx) {
      await fill(ctx, 0, 1, 5);
      const c = ctx.consumer();
      await start(ctx, c, { topic: ctx.topics[0], fromBeginning: true }, { eachMessage: recording(ctx) });
      await ctx.until('5 deliveries', () => ctx.delivered() >= 5);
      c.seek({ topic: ctx.topics[0], partition: 0, offset: '100' });
      await ctx.until('10 deliveries', () => ctx.delivered() >= 10);
      await c.disconnect();
    },
  },
  {
    name: 'seek with invalid offsets: KafkaJSNonRetriableError; seek to -2 (earliest) is accepted',
    topics: [1],
    async run(ctx) {
      await fill(ctx, 0, 1, 3);
      const c = ctx.consumer();
      await start(ctx, c, { topic: ctx.topics[0], fromBeginning: true }, { eachMessage: recording(ctx) });
      await ctx.until('3 deliveries', () => ctx.delivered() >= 3);
      await ctx.attempt('seek -5', () => c.seek({ topic: ctx.topics[0], partition: 0, offset: '-5' }));
      await ctx.attempt('seek abc', () => c.seek({ topic: ctx.topics[0], partition: 0, offset: 'abc' }));
      await ctx.attempt('seek no topic', () => c.seek({ topic: '', partition: 0, offset: '1' }));
      await ctx.attempt('seek -2', () => c.seek({ topic: ctx.topics[0], partition: 0, offset: '-2' }));
      await ctx.until('6 deliveries', () => ctx.delivered() >= 6);
      await c.disconnect();
    },
  },
  {
    name: 'stop() while a handler runs, then run() again: resumes after the finished record',
    topics: [1],
    events: ['STOP'],
    async run(ctx) {
      await fill(ctx, 0, 1, 10);
      const c = ctx.consumer();
      const g = gate();
      let held = false;
      const handler = recording(ctx, async ({ message }) => {
        if (message.offset === '4' && !held) {
          held = true;
          await g.wait;
        }
      });
      await start(ctx, c, { topic: ctx.topics[0], fromBeginning: true }, { eachMessage: handler });
      await ctx.until('offset 4 in the handler', () => held);
      const stopping = c.stop();
      g.open();
      await stopping;
      ctx.note(`after stop: deliveries ${ctx.delivered()} STOP x${ctx.events('STOP')}`);
      await c.run({ eachMessage: handler });
      await ctx.until('10 deliveries', () => ctx.delivered() >= 10);
      await c.disconnect();
    },
  },
  {
    name: 'stop() then subscribe to one more topic and run() again',
    topics: [1, 1],
    async run(ctx) {
      await fill(ctx, 0, 1, 3);
      await fill(ctx, 1, 1, 3);
      const c = ctx.consumer();
      await start(ctx, c, { topic: ctx.topics[0], fromBeginning: true }, { eachMessage: recording(ctx) });
      await ctx.until('3 deliveries', () => ctx.delivered() >= 3);
      await c.stop();
      await c.subscribe({ topic: ctx.topics[1], fromBeginning: true });
      await c.run({ eachMessage: recording(ctx) });
      await ctx.until('6 deliveries', () => ctx.delivered() >= 6);
      await c.disconnect();
    },
  },
  {
    name: 'run() twice: the second call does nothing; subscribe() while running throws',
    topics: [1],
    async run(ctx) {
      await fill(ctx, 0, 1, 4);
      const c = ctx.consumer();
      await start(ctx, c, { topic: ctx.topics[0], fromBeginning: true }, { eachMessage: recording(ctx) });
      await ctx.attempt('second run', () => c.run({ eachMessage: recording(ctx) }));
      await ctx.attempt('subscribe while running', () => c.subscribe({ topic: ctx.topics[0] }));
      await ctx.until('4 deliveries', () => ctx.delivered() >= 4);
      await c.disconnect();
    },
  },
  {
    name: 'disconnect() while a handler runs: the handler finishes and its record is committed',
    topics: [1],
    events: ['STOP', 'DISCONNECT'],
    async run(ctx) {
      await fill(ctx, 0, 1, 10);
      const c = ctx.consumer();
      const g = gate();
      let held = false;
      let finished = false;
      await start(
        ctx,
        c,
        { topic: ctx.topics[0], fromBeginning: true },
        {
          eachMessage: recording(ctx, async ({ message }) => {
            if (message.offset === '6' && !held) {
              held = true;
              await g.wait;
              finished = true;
            }
          }),
        },
      );
      await ctx.until('offset 6 in the handler', () => held);
      const closing = c.disconnect();
      g.open();
      await closing;
      ctx.note(`handler finished ${String(finished)}; deliveries ${ctx.delivered()}`);
    },
  },
  {
    name: 'disconnect() and stop() without run(), disconnect() twice',
    topics: [1],
    committed: false,
    events: ['CONNECT', 'DISCONNECT'],
    async run(ctx) {
      const c = ctx.consumer();
      ctx.listen(c);
      await ctx.attempt('stop before connect', () => c.stop());
      await ctx.attempt('connect', () => c.connect());
      await ctx.attempt('stop without run', () => c.stop());
      await ctx.attempt('disconnect', () => c.disconnect());
      await ctx.attempt('disconnect again', () => c.disconnect());
      ctx.note(`CONNECT x${ctx.events('CONNECT')} DISCONNECT x${ctx.events('DISCONNECT')}`);
    },
  },
  {
    name: 'heartbeat() from eachMessage and eachBatch; HEARTBEAT events',
    topics: [1],
    events: ['HEARTBEAT'],
    async run(ctx) {
      await fill(ctx, 0, 1, 4);
      const c = ctx.consumer({ heartbeatInterval: 100 });
      await start(
        ctx,
        c,
        { topic: ctx.topics[0], fromBeginning: true },
        {
          eachMessage: recording(ctx, async ({ heartbeat }) => {
            await ctx.attempt('eachMessage heartbeat()', () => heartbeat());
          }),
        },
      );
      await ctx.until('4 deliveries and a HEARTBEAT', () => ctx.delivered() >= 4 && ctx.events('HEARTBEAT') > 0);
      await c.disconnect();
      await ctx.produce(0, 0, ctx.numbered(2, 4));
      const b = ctx.consumer({ heartbeatInterval: 100 });
      await start(
        ctx,
        b,
        { topic: ctx.topics[0], fromBeginning: true },
        {
          eachBatch: recordingBatches(ctx, async ({ heartbeat }) => {
            await ctx.attempt('eachBatch heartbeat()', () => heartbeat());
          }),
        },
      );
      await ctx.until('6 deliveries', () => ctx.delivered() >= 6);
      await b.disconnect();
    },
  },
  {
    name: 'eachBatch isRunning(): true in a batch, false once stop() was called',
    topics: [1],
    async run(ctx) {
      await fill(ctx, 0, 1, 3);
      const c = ctx.consumer();
      const g = gate();
      let held = false;
      await start(
        ctx,
        c,
        { topic: ctx.topics[0], fromBeginning: true },
        {
          eachBatch: recordingBatches(ctx, async ({ batch, isRunning }) => {
            if (batch.lastOffset() === '2' && !held) {
              ctx.note(`isRunning in batch ${String(isRunning())}`);
              held = true;
              await g.wait;
              ctx.note(`isRunning after stop() ${String(isRunning())}`);
            }
          }),
        },
      );
      await ctx.until('the last batch in the handler', () => held);
      const stopping = c.stop();
      g.open();
      await stopping;
      await c.disconnect();
    },
  },
  {
    name: 'logger(): the consumer has kafkajs logger methods',
    topics: [1],
    committed: false,
    async run(ctx) {
      const c = ctx.consumer();
      const log = c.logger();
      ctx.note(`logger methods ${['info', 'error', 'warn', 'debug', 'namespace', 'setLogLevel'].map((m) => `${m}:${typeof (log as unknown as Record<string, unknown>)[m]}`).join(',')}`);
      ctx.note(`events ${ctx.show(c.events)}`);
      await ctx.attempt('on(unknown event)', () => c.on('consumer.no_such_event' as never, () => undefined));
    },
  },
  {
    name: 'on() returns a function that removes the listener',
    topics: [1],
    async run(ctx) {
      await fill(ctx, 0, 1, 2);
      const c = ctx.consumer();
      let removedCalls = 0;
      let keptCalls = 0;
      const remove = c.on(c.events.GROUP_JOIN, () => {
        removedCalls++;
      });
      c.on(c.events.GROUP_JOIN, () => {
        keptCalls++;
      });
      ctx.note(`on() returned ${typeof remove}`);
      remove();
      await consume(ctx, c, { topic: ctx.topics[0], fromBeginning: true }, { eachMessage: recording(ctx) }, 2);
      ctx.note(`removed listener called ${removedCalls}, kept listener called ${keptCalls}`);
    },
  },
  {
    name: 'an empty topic: no deliveries, fetches go on, nothing committed',
    topics: [2],
    events: ['GROUP_JOIN', 'FETCH_START', 'FETCH'],
    async run(ctx) {
      const c = ctx.consumer();
      let calls = 0;
      await start(
        ctx,
        c,
        { topic: ctx.topics[0], fromBeginning: true },
        {
          eachMessage: async () => {
            calls++;
          },
        },
      );
      await ctx.until('three fetches', () => ctx.events('FETCH') >= 3);
      await c.disconnect();
      ctx.note(`handler calls ${calls}`);
    },
  },
  {
    name: 'subscribe to a missing topic with allowAutoTopicCreation: false',
    topics: [1],
    committed: false,
    async run(ctx) {
      const c = ctx.consumer({ allowAutoTopicCreation: false, retry: { retries: 1, initialRetryTime: 50, maxRetryTime: 100 } });
      await c.connect();
      await ctx.attempt('subscribe', () => c.subscribe({ topic: `${ctx.prefix}-missing`, fromBeginning: true }));
    },
  },
];
