// Issue 6 acceptance: three kwire members in one group over a 12-partition topic, records produced
// all along. Each partition is owned by one member at any time; kill -9 of one member moves its
// partitions to the others within the session timeout; everything produced is consumed; the only
// duplicates are the killed member's uncommitted tail (counted and reported), none from the clean
// rebalances.
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTopic } from '@kwire/broker';
import { Member, ownershipOverlaps } from './group-harness.js';
import { kafkaSuite, produceContinuously } from '@kwire/testkit';

const members: Member[] = [];

const env = kafkaSuite(test);
// The members are child processes: killed at teardown, before the producer and the broker go.
env.track({ close: () => Promise.all(members.map((m) => m.kill())) });

function consumedBy(list: Member[]) {
  const seen = new Map<string, Member[]>();
  for (const m of list)
    for (const r of m.records()) {
      const k = `${r.key}@${r.offset}`;
      const l = seen.get(k);
      if (l) l.push(m);
      else seen.set(k, [m]);
    }
  return seen;
}

test('3 members, 12 partitions, one killed with SIGKILL: no loss, one owner at a time, duplicates only from the killed member', async () => {
  const topic = `group-kill-${Date.now().toString(36)}`;
  const groupId = `g-${topic}`;
  const sessionTimeoutMs = 8_000;
  await createTopic(env.kafka, { topic, partitions: 12 });
  const load = produceContinuously(env.producer, topic, 12, 10, 50);
  const options = { bootstrap: env.kafka.bootstrap, groupId, topics: [topic], sessionTimeoutMs, heartbeatIntervalMs: 1_000, autoCommitIntervalMs: 1_000 };
  const [a, b, c] = ['A', 'B', 'C'].map((name) => new Member(name, options));
  members.push(a!, b!, c!);
  // Wait for a stable assignment over the three.
  const deadline = Date.now() + 60_000;
  while (a!.owned().size + b!.owned().size + c!.owned().size !== 12 || [a, b, c].some((m) => m!.owned().size === 0)) {
    assert.ok(Date.now() < deadline, 'the three members never shared the 12 partitions');
    await sleep(100);
  }
  await sleep(3_000);
  const victim = c!.owned();
  const killedAt = Date.now();
  await c!.kill();
  // The survivors take C's partitions within the session timeout (plus a rebalance).
  while (a!.owned().size + b!.owned().size !== 12) {
    assert.ok(Date.now() - killedAt < sessionTimeoutMs + 15_000, `C's partitions not moved ${Date.now() - killedAt} ms after the kill`);
    await sleep(100);
  }
  const movedMs = Date.now() - killedAt;
  await sleep(2_000);
  await load.stop();
  const total = load.produced.reduce((x, y) => x + y, 0);
  // Drain: the survivors read to the end of every partition.
  const drainDeadline = Date.now() + 60_000;
  for (;;) {
    const seen = consumedBy([a!, b!, c!]);
    let missing = 0;
    for (let p = 0; p < 12; p++) for (let o = 0; o < load.produced[p]!; o++) if (!seen.has(`${topic}:${p}@${o}`)) missing++;
    if (missing === 0) break;
    assert.ok(Date.now() < drainDeadline, `${missing} of ${total} records never consumed`);
    await sleep(200);
  }
  await Promise.all([a!.stop(), b!.stop()]);

  const seen = consumedBy([a!, b!, c!]);
  let duplicates = 0;
  const unexpected: string[] = [];
  for (const [k, who] of seen) {
    if (who.length === 1) continue;
    duplicates += who.length - 1;
    // Allowed: C (killed) read it, and then A or B read it again after taking C's partition.
    const fromC = who.filter((m) => m === c).length;
    const [topicPartition] = k.split('@');
    if (fromC !== 1 || who.length !== 2 || !victim.has(topicPartition!)) unexpected.push(`${k} read by ${who.map((m) => m.name).join(', ')}`);
  }
  const overlaps = ownershipOverlaps([a!, b!, c!], new Map([[c!, killedAt]]));
  console.log(
    `  ${total} records produced; ${seen.size} distinct consumed; ${duplicates} duplicates, all from C's uncommitted tail; C's ${victim.size} partitions moved ${movedMs} ms after the kill (session timeout ${sessionTimeoutMs} ms)`,
  );
  assert.equal(unexpected, [], "duplicates other than the killed member's tail");
  assert.equal(overlaps, [], 'a partition owned by two members at once');
  assert.ok(seen.size === total, 'every record consumed');
});

test.run();
