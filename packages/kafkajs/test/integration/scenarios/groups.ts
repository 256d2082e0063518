// Groups: two members of one group (a rebalance when the second joins, a takeover when one
// leaves), and kafkajs's assigner protocol (PartitionAssigners.roundRobin, a user assigner).
import type { Assigner, Consumer, ConsumerGroupJoinEvent, PartitionAssigner } from 'kafkajs';
import type { Ctx, Scenario } from './harness.js';
import { fill, recording, start } from './steps.js';

/** A member's latest assignment, from its GROUP_JOIN events: "T0:0,2". */
function assignments(ctx: Ctx, c: Consumer): { latest(): string; joins(): number } {
  let latest = '';
  let joins = 0;
  c.on(c.events.GROUP_JOIN, (e: ConsumerGroupJoinEvent) => {
    joins++;
    latest = Object.keys(e.payload.memberAssignment)
      .sort()
      .map((t) => `${ctx.show(t)}:${[...e.payload.memberAssignment[t]].sort((a, b) => a - b).join(',')}`)
      .join(' ');
  });
  return { latest: () => latest, joins: () => joins };
}

/** Whether the members' latest assignments split `partitions` of T0 between them with no overlap. */
function split(partitions: number, ...members: { latest(): string }[]): boolean {
  const seen: number[] = [];
  for (const m of members) {
    const parts = m.latest().split(':')[1];
    if (parts) seen.push(...parts.split(',').map(Number));
  }
  return seen.length === partitions && new Set(seen).size === partitions;
}

export const groups: Scenario[] = [
  {
    name: 'two members: the second joins, the partitions are split (roundRobin), nothing is read twice',
    topics: [4],
    events: ['GROUP_JOIN', 'REBALANCING'],
    async run(ctx) {
      await fill(ctx, 0, 4, 3);
      const a = ctx.consumer();
      const aJoins = assignments(ctx, a);
      await start(ctx, a, { topic: ctx.topics[0], fromBeginning: true }, { eachMessage: recording(ctx) });
      await ctx.until('A read everything', () => ctx.delivered() >= 12);
      ctx.note(`A alone: ${aJoins.latest()}`);
      const b = ctx.consumer();
      const bJoins = assignments(ctx, b);
      await start(ctx, b, { topic: ctx.topics[0], fromBeginning: true }, { eachMessage: recording(ctx) });
      await ctx.until('the partitions split between A and B', () => bJoins.joins() > 0 && aJoins.joins() > 1 && split(4, aJoins, bJoins));
      ctx.note(`after the rebalance: ${[aJoins.latest(), bJoins.latest()].sort().join(' | ')}`);
      await fill(ctx, 0, 4, 3, 3);
      await ctx.until('24 deliveries', () => ctx.delivered() >= 24);
      await Promise.all([a.disconnect(), b.disconnect()]);
    },
  },
  {
    name: 'a second member joins while the first is in the middle of a slow batch: each record once',
    topics: [2],
    async run(ctx) {
      await fill(ctx, 0, 2, 20);
      const a = ctx.consumer();
      const aJoins = assignments(ctx, a);
      // 20 ms per record: the rebalance lands inside a batch, wherever the timing puts it.
      await start(
        ctx,
        a,
        { topic: ctx.topics[0], fromBeginning: true },
        {
          eachMessage: recording(ctx, async () => {
            await new Promise((r) => setTimeout(r, 20));
          }),
        },
      );
      await ctx.until('A is reading', () => ctx.delivered() >= 5);
      const b = ctx.consumer();
      const bJoins = assignments(ctx, b);
      await start(ctx, b, { topic: ctx.topics[0], fromBeginning: true }, { eachMessage: recording(ctx) });
      await ctx.until('the partitions split between A and B', () => bJoins.joins() > 0 && split(2, aJoins, bJoins));
      await ctx.until('40 deliveries', () => ctx.delivered() >= 40);
      await Promise.all([a.disconnect(), b.disconnect()]);
    },
  },
  {
    name: 'autoCommit off and nothing committed, a second member joins: every partition is read again from the start',
    topics: [4],
    async run(ctx) {
      await fill(ctx, 0, 4, 3);
      const a = ctx.consumer();
      const aJoins = assignments(ctx, a);
      await start(ctx, a, { topic: ctx.topics[0], fromBeginning: true }, { autoCommit: false, eachMessage: recording(ctx) });
      await ctx.until('A read everything', () => ctx.delivered() >= 12);
      const b = ctx.consumer();
      const bJoins = assignments(ctx, b);
      await start(ctx, b, { topic: ctx.topics[0], fromBeginning: true }, { autoCommit: false, eachMessage: recording(ctx) });
      await ctx.until('the partitions split between A and B', () => bJoins.joins() > 0 && aJoins.joins() > 1 && split(4, aJoins, bJoins));
      await ctx.until('24 deliveries', () => ctx.delivered() >= 24);
      await Promise.all([a.disconnect(), b.disconnect()]);
    },
  },
  {
    name: 'two members: one leaves, the other takes its partitions over at the committed offsets',
    topics: [2],
    async run(ctx) {
      const a = ctx.consumer();
      const aJoins = assignments(ctx, a);
      await start(ctx, a, { topic: ctx.topics[0], fromBeginning: true }, { eachMessage: recording(ctx) });
      await ctx.until('A joined', () => aJoins.joins() > 0);
      const b = ctx.consumer();
      const bJoins = assignments(ctx, b);
      await start(ctx, b, { topic: ctx.topics[0], fromBeginning: true }, { eachMessage: recording(ctx) });
      await ctx.until('the partitions split between A and B', () => bJoins.joins() > 0 && aJoins.joins() > 1 && split(2, aJoins, bJoins));
      await fill(ctx, 0, 2, 4);
      await ctx.until('8 deliveries', () => ctx.delivered() >= 8);
      const aBefore = aJoins.joins();
      await b.disconnect();
      await ctx.until('A took over', () => aJoins.joins() > aBefore && split(2, aJoins));
      ctx.note(`A after B left: ${aJoins.latest()}`);
      await fill(ctx, 0, 2, 4, 4);
      await ctx.until('16 deliveries', () => ctx.delivered() >= 16);
      await a.disconnect();
    },
  },
  {
    name: 'partitionAssigners: [PartitionAssigners.roundRobin] named explicitly',
    topics: [2],
    events: ['GROUP_JOIN'],
    async run(ctx) {
      await fill(ctx, 0, 2, 3);
      const c = ctx.consumer({ partitionAssigners: [ctx.module.PartitionAssigners.roundRobin] });
      const joins = assignments(ctx, c);
      let protocol = '';
      c.on(c.events.GROUP_JOIN, (e: ConsumerGroupJoinEvent) => {
        protocol = e.payload.groupProtocol;
      });
      await start(ctx, c, { topic: ctx.topics[0], fromBeginning: true }, { eachMessage: recording(ctx) });
      await ctx.until('6 deliveries', () => ctx.delivered() >= 6);
      ctx.note(`groupProtocol ${protocol} assignment ${joins.latest()}`);
      await c.disconnect();
    },
  },
  {
    name: 'a user assigner (protocol + assign) that leaves partition 1 out',
    topics: [3],
    async run(ctx) {
      await fill(ctx, 0, 3, 3);
      const { AssignerProtocol } = ctx.module;
      const calls: string[] = [];
      const evens: PartitionAssigner = ({ cluster }) => {
        const assigner: Assigner = {
          name: 'EvenPartitions',
          version: 1,
          protocol({ topics }) {
            calls.push(`protocol(${topics.map((t) => ctx.show(t)).join(',')})`);
            return { name: 'EvenPartitions', metadata: AssignerProtocol.MemberMetadata.encode({ version: 1, topics, userData: Buffer.from('u') }) };
          },
          async assign({ members, topics }) {
            calls.push(`assign(members=${members.length}, topics=${topics.map((t) => ctx.show(t)).join(',')})`);
            const assignment: Record<string, number[]> = {};
            for (const t of topics) {
              const partitions = cluster.findTopicPartitionMetadata(t).map((m) => m.partitionId);
              assignment[t] = partitions.filter((p) => p % 2 === 0);
            }
            const meta = AssignerProtocol.MemberMetadata.decode(members[0].memberMetadata);
            calls.push(`member metadata userData=${meta?.userData.toString() ?? '?'}`);
            return members.map(({ memberId }) => ({ memberId, memberAssignment: AssignerProtocol.MemberAssignment.encode({ version: 1, assignment, userData: Buffer.alloc(0) }) }));
          },
        };
        return assigner;
      };
      const c = ctx.consumer({ partitionAssigners: [evens] });
      const joins = assignments(ctx, c);
      await start(ctx, c, { topic: ctx.topics[0], fromBeginning: true }, { eachMessage: recording(ctx) });
      await ctx.until('6 deliveries', () => ctx.delivered() >= 6);
      const g = await c.describeGroup();
      ctx.note(`protocol ${g.protocol}; assignment ${joins.latest()}; p1 delivered ${ctx.deliveredOf(0, 1)}`);
      ctx.note(`assigner calls ${[...new Set(calls)].join('; ')}`);
      await c.disconnect();
    },
  },
];
