// Subscriptions, data shapes and compression: what a plain eachMessage/eachBatch program receives.
import { type Ctx, FAST, type Scenario } from './harness.js';
import { consume, fill, recording, recordingBatches, start } from './steps.js';

/** A committed transaction (0-2, marker 3), an aborted one (4-5, marker 6), then two plain records (7-8). */
async function transactionalWrites(ctx: Ctx): Promise<void> {
  const p = ctx.env.setupKafka(ctx.endpoint.plain).producer({ transactionalId: `${ctx.prefix}-tx`, idempotent: true, maxInFlightRequests: 1 });
  await p.connect();
  try {
    const topic = ctx.topics[0];
    const committed = await p.transaction();
    await committed.send({ topic, messages: ctx.numbered(3).map((m) => ({ ...m, partition: 0 })) });
    await committed.commit();
    const aborted = await p.transaction();
    await aborted.send({ topic, messages: ctx.numbered(2, 3).map((m) => ({ ...m, partition: 0 })) });
    await aborted.abort();
  } finally {
    await p.disconnect();
  }
  // The abort marker is written after abort() returns: the plain records go after it (offset 7 on).
  const admin = ctx.env.setupKafka(ctx.endpoint.plain).admin();
  await admin.connect();
  try {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const high = (await admin.fetchTopicOffsets(ctx.topics[0])).find((o) => o.partition === 0)?.high;
      if (high === '7') break;
      if (Date.now() > deadline) throw new Error(`the abort marker was not written: high watermark ${String(high)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    await admin.disconnect();
  }
  await ctx.produce(0, 0, ctx.numbered(2, 5));
}

const ALL_RUN_EVENTS = ['CONNECT', 'GROUP_JOIN', 'FETCH_START', 'FETCH', 'START_BATCH_PROCESS', 'END_BATCH_PROCESS', 'COMMIT_OFFSETS', 'STOP', 'DISCONNECT'] as const;

export const basic: Scenario[] = [
  {
    name: 'eachMessage: subscribe({ topic, fromBeginning: true }), three partitions, every run event',
    topics: [3],
    events: [...ALL_RUN_EVENTS],
    async run(ctx) {
      await fill(ctx, 0, 3, 10);
      const c = ctx.consumer();
      await consume(ctx, c, { topic: ctx.topics[0], fromBeginning: true }, { eachMessage: recording(ctx) }, 30);
      ctx.note(`CONNECT x${ctx.events('CONNECT')} STOP x${ctx.events('STOP')} DISCONNECT x${ctx.events('DISCONNECT')} GROUP_JOIN x${ctx.events('GROUP_JOIN')}`);
    },
  },
  {
    name: 'event order: the first of each event, and the first delivery, come in kafkajs order',
    topics: [1],
    async run(ctx) {
      await fill(ctx, 0, 1, 5);
      const c = ctx.consumer();
      // First occurrences only: repeats (fetches, heartbeats) depend on timing, the first of each does not.
      const order: string[] = [];
      const first = (what: string) => {
        if (!order.includes(what)) order.push(what);
      };
      for (const type of ['CONNECT', 'GROUP_JOIN', 'FETCH_START', 'FETCH', 'START_BATCH_PROCESS', 'END_BATCH_PROCESS', 'COMMIT_OFFSETS', 'STOP', 'DISCONNECT'] as const) {
        c.on(c.events[type], () => first(type));
      }
      await consume(
        ctx,
        c,
        { topic: ctx.topics[0], fromBeginning: true },
        {
          eachMessage: recording(ctx, () => first('eachMessage')),
        },
        5,
      );
      ctx.note(`first occurrences: ${order.join(' < ')}`);
    },
  },
  {
    name: 'subscribe({ topics: [a, b], fromBeginning: true })',
    topics: [2, 1],
    async run(ctx) {
      await fill(ctx, 0, 2, 5);
      await fill(ctx, 1, 1, 5);
      const c = ctx.consumer();
      await consume(ctx, c, { topics: [ctx.topics[0], ctx.topics[1]], fromBeginning: true }, { eachMessage: recording(ctx) }, 15);
    },
  },
  {
    name: 'subscribe({ topics: [RegExp] }) matches two topics of three',
    topics: [1, 1, 1],
    async run(ctx) {
      for (let t = 0; t < 3; t++) await fill(ctx, t, 1, 4);
      const c = ctx.consumer();
      // T0 and T1 match, T2 does not; the prefix is unique to this run.
      const re = new RegExp(`^${ctx.prefix}-t[01]$`);
      await consume(ctx, c, { topics: [re], fromBeginning: true }, { eachMessage: recording(ctx) }, 8);
      ctx.note(`T2 delivered ${ctx.deliveredOf(2, 0)}`);
    },
  },
  {
    name: 'subscribe({ topic: RegExp }) (the deprecated single form)',
    topics: [2],
    async run(ctx) {
      await fill(ctx, 0, 2, 3);
      const c = ctx.consumer();
      await consume(ctx, c, { topic: new RegExp(`^${ctx.prefix}-t0$`), fromBeginning: true }, { eachMessage: recording(ctx) }, 6);
    },
  },
  {
    name: 'fromBeginning: false starts at the end: only records produced after the first fetch',
    topics: [1],
    events: ['FETCH'],
    async run(ctx) {
      await fill(ctx, 0, 1, 5);
      const c = ctx.consumer();
      await start(ctx, c, { topic: ctx.topics[0], fromBeginning: false }, { eachMessage: recording(ctx) });
      // A FETCH has completed: the position was resolved to the log end before these exist.
      await ctx.until('a completed fetch', () => ctx.events('FETCH') > 0);
      await ctx.produce(0, 0, ctx.numbered(5, 5));
      await ctx.until('5 deliveries', () => ctx.delivered() >= 5);
      await c.disconnect();
    },
  },
  {
    name: 'fromBeginning: false with offsets committed: the group resumes at its commit',
    topics: [1],
    async run(ctx) {
      await fill(ctx, 0, 1, 5);
      const first = ctx.consumer();
      await consume(ctx, first, { topic: ctx.topics[0], fromBeginning: true }, { eachMessage: recording(ctx) }, 5);
      await ctx.produce(0, 0, ctx.numbered(5, 5));
      const second = ctx.consumer();
      await consume(ctx, second, { topic: ctx.topics[0], fromBeginning: false }, { eachMessage: recording(ctx) }, 10);
    },
  },
  {
    name: 'null keys, null values, empty values',
    topics: [1],
    async run(ctx) {
      await ctx.produce(0, 0, [
        { key: null, value: 'no key' },
        { key: 'no value', value: null },
        { key: null, value: null },
        { key: '', value: '' },
        { value: 'key omitted' },
        { key: Buffer.from([0, 1, 2]), value: Buffer.from([255, 254]) },
      ]);
      const c = ctx.consumer();
      await consume(ctx, c, { topic: ctx.topics[0], fromBeginning: true }, { eachMessage: recording(ctx) }, 6);
    },
  },
  {
    name: 'record timestamps set by the producer reach the application as strings',
    topics: [1],
    async run(ctx) {
      await ctx.produce(0, 0, [
        { value: 'a', timestamp: '1700000000000' },
        { value: 'b', timestamp: '1700000000123' },
        { value: 'c', timestamp: '1' },
      ]);
      const c = ctx.consumer();
      const stamps: string[] = [];
      await consume(
        ctx,
        c,
        { topic: ctx.topics[0], fromBeginning: true },
        {
          eachMessage: recording(ctx, ({ message }) => {
            stamps.push(`${typeof message.timestamp} ${String(message.timestamp)}`);
          }),
        },
        3,
      );
      ctx.note(`timestamps ${stamps.join(', ')}`);
    },
  },
  {
    name: 'transactions: committed records only (readUncommitted false); control records never reach the application',
    topics: [1],
    async run(ctx) {
      await transactionalWrites(ctx);
      const c = ctx.consumer();
      await consume(ctx, c, { topic: ctx.topics[0], fromBeginning: true }, { eachMessage: recording(ctx) }, 5);
    },
  },
  {
    name: 'transactions: readUncommitted true also delivers the aborted records',
    topics: [1],
    async run(ctx) {
      await transactionalWrites(ctx);
      const c = ctx.consumer({ readUncommitted: true });
      await consume(ctx, c, { topic: ctx.topics[0], fromBeginning: true }, { eachBatch: recordingBatches(ctx) }, 7);
    },
  },
  {
    name: "headers: single, repeated keys, empty, Buffer and string values, Object.prototype's names",
    topics: [1],
    async run(ctx) {
      await ctx.produce(0, 0, [
        { value: 'one', headers: { a: 'x' } },
        { value: 'repeated', headers: { a: ['x', 'y', 'z'], b: 'w' } },
        { value: 'empty value', headers: { e: '' } },
        { value: 'buffer', headers: { bin: Buffer.from([1, 2, 3]), txt: 'é' } },
        { value: 'none' },
        // Own properties named like Object.prototype's members (a computed key is an own property).
        { value: 'member names', headers: { ['__proto__']: ['p', 'q'], toString: 't', constructor: 'c' } },
      ]);
      const c = ctx.consumer();
      await consume(ctx, c, { topic: ctx.topics[0], fromBeginning: true }, { eachMessage: recording(ctx) }, 6);
    },
  },
  {
    name: 'gzip-compressed batches',
    topics: [2],
    async run(ctx) {
      for (let p = 0; p < 2; p++) {
        await ctx.produce(0, p, ctx.numbered(20), ctx.module.CompressionTypes.GZIP);
        await ctx.produce(0, p, ctx.numbered(5, 20), ctx.module.CompressionTypes.GZIP);
      }
      const c = ctx.consumer();
      await consume(ctx, c, { topic: ctx.topics[0], fromBeginning: true }, { eachMessage: recording(ctx) }, 50);
    },
  },
  {
    name: 'gzip mixed with uncompressed batches in one partition, read by eachBatch',
    topics: [1],
    async run(ctx) {
      await ctx.produce(0, 0, ctx.numbered(5), ctx.module.CompressionTypes.None);
      await ctx.produce(0, 0, ctx.numbered(5, 5), ctx.module.CompressionTypes.GZIP);
      await ctx.produce(0, 0, ctx.numbered(5, 10), ctx.module.CompressionTypes.None);
      const c = ctx.consumer();
      await consume(ctx, c, { topic: ctx.topics[0], fromBeginning: true }, { eachBatch: recordingBatches(ctx) }, 15);
    },
  },
  {
    name: 'many small record batches (one send per record)',
    topics: [1],
    async run(ctx) {
      for (let i = 0; i < 20; i++) await ctx.produce(0, 0, ctx.numbered(1, i));
      const c = ctx.consumer();
      await consume(ctx, c, { topic: ctx.topics[0], fromBeginning: true }, { eachMessage: recording(ctx) }, 20);
    },
  },
  {
    name: 'partitionsConsumedConcurrently: 3 over four partitions keeps order per partition',
    topics: [4],
    async run(ctx) {
      await fill(ctx, 0, 4, 25);
      const c = ctx.consumer();
      await consume(ctx, c, { topic: ctx.topics[0], fromBeginning: true }, { partitionsConsumedConcurrently: 3, eachMessage: recording(ctx) }, 100);
    },
  },
  {
    name: 'partitionsConsumedConcurrently: 2 with eachBatch',
    topics: [3],
    async run(ctx) {
      await fill(ctx, 0, 3, 15);
      const c = ctx.consumer();
      await consume(ctx, c, { topic: ctx.topics[0], fromBeginning: true }, { partitionsConsumedConcurrently: 2, eachBatch: recordingBatches(ctx) }, 45);
    },
  },
  {
    name: 'eachBatch: batch fields and methods; offsetLag of the last batch is 0',
    topics: [2],
    events: ['START_BATCH_PROCESS', 'END_BATCH_PROCESS'],
    async run(ctx) {
      await fill(ctx, 0, 2, 12);
      const c = ctx.consumer();
      const lastSeen: string[] = [];
      await consume(
        ctx,
        c,
        { topic: ctx.topics[0], fromBeginning: true },
        {
          eachBatch: recordingBatches(ctx, ({ batch }) => {
            // Only the batch that ends at the log end has values independent of batch boundaries.
            if (batch.lastOffset() === '11') {
              lastSeen.push(`p${batch.partition} hw=${batch.highWatermark} lag=${batch.offsetLag()} last=${batch.lastOffset()} empty=${String(batch.isEmpty())}`);
            }
          }),
        },
        24,
      );
      for (const l of lastSeen.sort()) ctx.note(l);
    },
  },
  {
    // The facade makes offset strings from a cached thousands' part and timestamp strings once per
    // run of equal timestamps: offsets across 999/1000 and 9999/10000, timestamps that repeat, move
    // on and go back, headers on some records.
    name: 'eachBatch over 10,050 records: offset and timestamp strings, headers, keys',
    topics: [1],
    async run(ctx) {
      const total = 10_050;
      const timestampOf = (i: number) => String(1_700_000_000_000 + (i % 500 === 499 ? -1000 : Math.floor(i / 7)));
      for (let from = 0; from < total; from += 2010) {
        const messages = Array.from({ length: Math.min(2010, total - from) }, (_, k) => {
          const i = from + k;
          return { key: i % 3 === 0 ? null : `k${i}`, value: `v${i}`, timestamp: timestampOf(i), ...(i % 4 === 0 ? { headers: { h: `x${i}` } } : {}) };
        });
        await ctx.produce(0, 0, messages);
      }
      const c = ctx.consumer();
      const wrong: string[] = [];
      await consume(
        ctx,
        c,
        { topic: ctx.topics[0], fromBeginning: true },
        {
          eachBatch: recordingBatches(ctx, ({ batch }) => {
            for (const m of batch.messages) if (m.timestamp !== timestampOf(Number(m.offset))) wrong.push(`${m.offset}:${m.timestamp}`);
          }),
        },
        total,
      );
      ctx.note(`timestamps not as produced: ${wrong.length} ${wrong.slice(0, 3).join(' ')}`);
    },
  },
  {
    name: 'maxBytesPerPartition and maxBytes small: records still all delivered in order',
    topics: [2],
    async run(ctx) {
      for (let p = 0; p < 2; p++) {
        await ctx.produce(
          0,
          p,
          Array.from({ length: 10 }, (_, i) => ({ key: `k${i}`, value: `${i}`.padEnd(300, 'x') })),
        );
      }
      const c = ctx.consumer({ maxBytesPerPartition: 1024, maxBytes: 2048, minBytes: 1 });
      await consume(ctx, c, { topic: ctx.topics[0], fromBeginning: true }, { eachMessage: recording(ctx) }, 20);
    },
  },
  {
    name: 'describeGroup() while running: state, protocol, members and their assignment',
    topics: [2],
    async run(ctx) {
      await fill(ctx, 0, 2, 3);
      const c = ctx.consumer();
      await start(ctx, c, { topic: ctx.topics[0], fromBeginning: true }, { eachMessage: recording(ctx) });
      await ctx.until('6 deliveries', () => ctx.delivered() >= 6);
      const g = await c.describeGroup();
      ctx.note(
        `group {${Object.keys(g).sort().join(',')}} state=${g.state} protocol=${g.protocol} protocolType=${g.protocolType} errorCode=${String((g as unknown as { errorCode?: number }).errorCode)} members=${g.members.length}`,
      );
      const m = g.members[0];
      ctx.note(`member {${Object.keys(m).sort().join(',')}} clientId=${m.clientId}`);
      const assignment = ctx.module.AssignerProtocol.MemberAssignment.decode(m.memberAssignment);
      ctx.note(`assignment ${ctx.show(assignment?.assignment)}`);
      await c.disconnect();
    },
  },
  {
    name: 'Kafka config: brokers as an async function, a logCreator, logLevel INFO',
    topics: [1],
    async run(ctx) {
      await fill(ctx, 0, 1, 3);
      let brokerCalls = 0;
      const entryShapes = new Set<string>();
      const levels = new Set<number>();
      const kafka = new ctx.module.Kafka({
        clientId: 'kjd-consumer',
        brokers: async () => {
          brokerCalls++;
          return ctx.endpoint.brokers.split(',');
        },
        logLevel: ctx.module.logLevel.INFO,
        logCreator: (level) => {
          levels.add(level);
          return (entry) => {
            entryShapes.add(`entry {${Object.keys(entry).sort().join(',')}} log has message:${typeof entry.log?.message} timestamp:${typeof entry.log?.timestamp}`);
          };
        },
      });
      const c = kafka.consumer({ groupId: ctx.groupId, ...FAST });
      try {
        await consume(ctx, c, { topic: ctx.topics[0], fromBeginning: true }, { eachMessage: recording(ctx) }, 3);
      } finally {
        await c.disconnect();
      }
      ctx.note(`brokers() called: ${String(brokerCalls > 0)}; logCreator given level ${[...levels].join(',')}`);
      for (const e of [...entryShapes].sort()) ctx.note(e);
    },
  },
  {
    name: 'describeGroup() of a group that does not exist yet',
    topics: [1],
    committed: false,
    async run(ctx) {
      const c = ctx.consumer();
      await c.connect();
      const g = await c.describeGroup();
      ctx.note(`group {${Object.keys(g).sort().join(',')}} state=${g.state} members=${g.members.length} protocol=${JSON.stringify(g.protocol)} protocolType=${JSON.stringify(g.protocolType)}`);
    },
  },
  {
    name: 'describeGroup() after disconnect: the group is Empty',
    topics: [1],
    async run(ctx) {
      await fill(ctx, 0, 1, 2);
      const c = ctx.consumer();
      await consume(ctx, c, { topic: ctx.topics[0], fromBeginning: true }, { eachMessage: recording(ctx) }, 2);
      const other = ctx.consumer();
      await other.connect();
      const g = await other.describeGroup();
      ctx.note(`state=${g.state} members=${g.members.length} protocolType=${g.protocolType}`);
    },
  },
];
