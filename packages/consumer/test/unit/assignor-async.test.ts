// A user's assignor may compute asynchronously (kafkajs's custom assigners do: @kwire/kafkajs
// adapts them): the leader awaits its answer before SyncGroup, on the fake cluster.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createConsumer } from '../../src/index.js';
import type { Assignor, MemberAssignment } from '../../src/group/assignors/index.js';
import { FakeCluster, within } from '@kwire/testkit';

test('an assignor whose assign() returns a Promise: the member gets what it resolved to', async () => {
  const cluster = await FakeCluster.start();
  cluster.createTopic('t', 3);
  for (const p of [0, 1, 2]) cluster.append('t', p, 5, () => `k${p}`);
  let calls = 0;
  // Gives the member partitions 0 and 2 only, after a lookup that takes a moment.
  const later: Assignor = {
    name: 'later',
    rebalanceProtocol: 'eager',
    subscriptionUserData: () => null,
    assign: async (ctx) => {
      calls++;
      await new Promise((r) => setTimeout(r, 30));
      return new Map<string, MemberAssignment>(ctx.members.map((m) => [m.memberId, { partitions: [0, 2].map((partition) => ({ topic: 't', partition })) }]));
    },
  };
  const c = createConsumer({ bootstrapServers: cluster.bootstrap, groupId: 'g', autoOffsetReset: 'earliest', fetchMaxWaitMs: 50, partitionAssignmentStrategy: [later] });
  try {
    await c.subscribe({ topics: ['t'] });
    const seen = new Set<number>();
    let n = 0;
    for await (const batch of within(c, 10_000, 'the records of partitions 0 and 2')) {
      seen.add(batch.partition);
      n += batch.records.length;
      if (n === 10) break;
    }
    assert.equal([...seen].sort(), [0, 2]);
    assert.is(calls, 1);
    assert.equal(
      c
        .assignment()
        .map((tp) => tp.partition)
        .sort(),
      [0, 2],
    );
  } finally {
    await c.close();
    await cluster.stop();
  }
});

test.run();
