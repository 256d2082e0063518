// kafkajs's partition assigners on kwire: the built-in round robin gives kafkajs's own answer
// (so kafkajs and @kwire/kafkajs members can share a group), and a user assigner runs as kafkajs
// runs it: its protocol's user data is sent, its async assign gets kafkajs's arguments and its
// MemberAssignment buffers are decoded.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { AssignmentContext, MemberAssignment } from '@kwire/consumer';
import { AssignerProtocol, Kafka, PartitionAssigners, logLevel, type Assigner, type PartitionAssigner } from '../../src/index.js';
import { kafkajsAssignor, roundRobinAssignor } from '../../src/assigners.js';

const logger = new Kafka({ brokers: ['h:1'], logLevel: logLevel.NOTHING }).logger();

function context(members: { id: string; topics: string[]; userData?: Buffer }[], partitions: Record<string, number>): AssignmentContext {
  return {
    members: members.map((m) => ({ memberId: m.id, groupInstanceId: null, topics: m.topics, userData: m.userData ?? null, ownedPartitions: [], generationId: -1, rackId: null })),
    partitionsPerTopic: new Map(Object.entries(partitions)),
  };
}

function byMember(result: Map<string, MemberAssignment>): Record<string, string[]> {
  return Object.fromEntries([...result].map(([id, a]) => [id, a.partitions.map((p) => `${p.topic}-${p.partition}`).sort()]));
}

test("roundRobin: kafkajs's name and version, and kafkajs's own assignment for the same group", async () => {
  const ctx = context(
    [
      { id: 'm-b', topics: ['a', 'b'] },
      { id: 'm-a', topics: ['a', 'b'] },
      { id: 'm-c', topics: ['a', 'b'] },
    ],
    { a: 4, b: 3 },
  );
  const ours = roundRobinAssignor();
  assert.is(ours.name, 'RoundRobinAssigner');
  assert.is(ours.version, 0);
  // kafkajs's own assigner, given the same partitions through its cluster view.
  const cluster = { findTopicPartitionMetadata: (t: string) => Array.from({ length: ctx.partitionsPerTopic.get(t) ?? 0 }, (_, partitionId) => ({ partitionId })) };
  const theirs = PartitionAssigners.roundRobin({ cluster, groupId: 'g', logger } as never);
  const answer = await theirs.assign({
    members: ctx.members.map((m) => ({ memberId: m.memberId, memberMetadata: Buffer.alloc(0) })),
    topics: ['a', 'b'],
  });
  const expected: Record<string, string[]> = {};
  for (const { memberId, memberAssignment } of answer) {
    const decoded = AssignerProtocol.MemberAssignment.decode(memberAssignment)!;
    expected[memberId] = Object.entries(decoded.assignment)
      .flatMap(([t, ps]) => ps.map((p) => `${t}-${p}`))
      .sort();
  }
  assert.equal(byMember(await ours.assign(ctx)), expected);
  assert.equal(expected['m-a'], ['a-0', 'a-3', 'b-2']);
});

test('a user assigner: protocol user data sent, async assign with kafkajs arguments, its answer decoded', async () => {
  const seen: { members: { memberId: string; topics: string[]; userData: string }[]; topics: string[]; partitions: number } = { members: [], topics: [], partitions: 0 };
  const factory: PartitionAssigner = ({ cluster, groupId }) => {
    assert.is(groupId, 'g');
    const assigner: Assigner = {
      name: 'EvenOnly',
      version: 1,
      protocol: ({ topics }) => ({ name: 'EvenOnly', metadata: AssignerProtocol.MemberMetadata.encode({ version: 1, topics, userData: Buffer.from('hello') }) }),
      async assign({ members, topics }) {
        await new Promise((r) => setTimeout(r, 5));
        seen.topics = topics;
        seen.partitions = cluster.findTopicPartitionMetadata('t').length;
        seen.members = members.map((m) => {
          const d = AssignerProtocol.MemberMetadata.decode(m.memberMetadata)!;
          return { memberId: m.memberId, topics: d.topics, userData: d.userData.toString() };
        });
        const leader = members[0]!.memberId;
        return [
          {
            memberId: leader,
            memberAssignment: AssignerProtocol.MemberAssignment.encode({ version: 1, assignment: { t: [0, 2] }, userData: Buffer.from('for-you') }),
          },
        ];
      },
    };
    return assigner;
  };
  const assignor = kafkajsAssignor(factory, { groupId: 'g', logger });
  assert.is(assignor.name, 'EvenOnly');
  assert.is(assignor.subscriptionUserData({ topics: ['t'], ownedPartitions: [], generationId: -1 })?.toString(), 'hello');
  const ctx = context(
    [
      { id: 'm1', topics: ['t'], userData: Buffer.from('hello') },
      { id: 'm2', topics: ['t'] },
    ],
    { t: 3 },
  );
  const result = await assignor.assign(ctx);
  assert.equal(seen.topics, ['t']);
  assert.is(seen.partitions, 3, 'cluster.findTopicPartitionMetadata from the leader');
  assert.equal(seen.members, [
    { memberId: 'm1', topics: ['t'], userData: 'hello' },
    { memberId: 'm2', topics: ['t'], userData: '' },
  ]);
  assert.equal(byMember(result), { m1: ['t-0', 't-2'], m2: [] }, 'partition 1 left out, as the assigner said');
  assert.is(result.get('m1')!.userData?.toString(), 'for-you');
});

test('the cluster view names what it does not offer', async () => {
  let caught: unknown;
  const assignor = kafkajsAssignor(
    ({ cluster }) => ({
      name: 'Nosy',
      version: 0,
      protocol: ({ topics }) => ({ name: 'Nosy', metadata: AssignerProtocol.MemberMetadata.encode({ version: 0, topics, userData: Buffer.alloc(0) }) }),
      async assign() {
        try {
          await cluster.metadata();
        } catch (e) {
          caught = e;
        }
        return [];
      },
    }),
    { groupId: 'g', logger },
  );
  const result = await assignor.assign(context([{ id: 'm1', topics: ['t'] }], { t: 1 }));
  assert.match((caught as Error).message, /cluster.metadata\(\) is not available to partition assigners/);
  assert.equal(byMember(result), { m1: [] });
});

test.run();
