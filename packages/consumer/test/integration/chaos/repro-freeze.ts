// A reproduction of what chaos seed 102 (KIP-848) found, kept out of `npm test` while it fails:
//   node packages/consumer/dist/test/integration/chaos/repro-freeze.js [consumer|classic]
// (a broker of its own). Exit code 1 while the bug shows, 0 when it does not.
//
// Issue 10 item 3: a member with no successful heartbeat for session.timeout.ms stops delivering.
// A member process frozen (SIGSTOP: a long GC pause, a suspended VM) for longer than its session
// has, when it wakes up, records already fetched before the freeze. kwire hands them to the
// application first, and only then does its session-expiry timer run and lose the partitions: the
// records go to a member that the coordinator fenced seconds ago, below what the partition's new
// owner has committed meanwhile.
//
// Here: members A and B (chaos/member.ts processes, 20 ms per record so that they always have
// records in hand) share a topic that a producer keeps writing; A is stopped for session + 5 s,
// then continued. Bug: A's log has records processed after the
// SIGCONT, before its partitions are lost.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { createTopic, startKafka } from '@kwire/broker';
import { TestProducer } from '@kwire/testkit';
import type { MemberOptions } from './member.js';

const protocol = (process.argv[2] ?? 'consumer') as 'consumer' | 'classic';
const SESSION_MS = 10_000;
const cluster = await startKafka({
  config: {
    'group.consumer.session.timeout.ms': SESSION_MS,
    'group.consumer.min.session.timeout.ms': 6_000,
    'group.consumer.heartbeat.interval.ms': 1_000,
    'group.consumer.min.heartbeat.interval.ms': 1_000,
  },
});
const run = Date.now().toString(36);
const topic = `freeze-${run}`;
const dir = mkdtempSync(join(tmpdir(), 'kwire-freeze-'));
const producer = new TestProducer(cluster.bootstrap);
let producing = true;
let code = 1;
const members: ReturnType<typeof spawn>[] = [];
try {
  await createTopic(cluster, { topic, partitions: 2 });
  const loop = (async () => {
    for (let n = 0; producing; n += 20) {
      await Promise.all(
        [0, 1].map((p) =>
          producer.send(
            topic,
            p,
            Array.from({ length: 10 }, (_, i) => ({ value: `${n + i}` })),
          ),
        ),
      );
      await sleep(100);
    }
  })();
  const logOf = (name: string) => join(dir, `${name}.log`);
  for (const name of ['A', 'B']) {
    const o: MemberOptions = {
      bootstrap: cluster.bootstrap,
      groupId: `freeze-${run}`,
      topic,
      groupProtocol: protocol,
      log: logOf(name),
      sessionTimeoutMs: SESSION_MS,
      heartbeatIntervalMs: 1_000,
      closeTimeoutMs: 5_000,
      processMs: 20,
    };
    members.push(spawn(process.execPath, [join(dirname(fileURLToPath(import.meta.url)), 'member.js'), JSON.stringify(o)], { stdio: 'ignore' }));
    await sleep(3_000);
  }
  const a = members[0]!;
  const lines = () => readFileSync(logOf('A'), 'utf8').split('\n');
  let found = 0;
  for (let attempt = 1; attempt <= 3 && found === 0; attempt++) {
    await sleep(8_000);
    if (!lines().some((l) => l.startsWith('P '))) throw new Error('A processes nothing');
    a.kill('SIGSTOP');
    const stoppedAt = Date.now();
    await sleep(SESSION_MS + 5_000);
    a.kill('SIGCONT');
    const contAt = Date.now();
    await sleep(5_000);
    const after = lines().filter((l) => Number(l.split(' ')[1]) >= contAt - 50);
    const lostAt = after.findIndex((l) => l.startsWith('L '));
    const zombie = after.slice(0, lostAt < 0 ? after.length : lostAt).filter((l) => l.startsWith('P '));
    found = zombie.length;
    console.log(
      `attempt ${attempt}: A stopped ${contAt - stoppedAt} ms (session ${SESSION_MS}); after SIGCONT it processed ${zombie.length} record(s) before losing its partitions${
        zombie.length ? `: ${zombie[0]} .. ${zombie.at(-1)}` : ''
      }; lost ${lostAt < 0 ? 'not seen' : `at ${after[lostAt]!.split(' ')[1]}`}`,
    );
  }
  code = found ? 1 : 0;
  console.log(found ? 'BUG: records delivered by a member whose session had expired' : 'no zombie delivery seen in 3 freezes');
  producing = false;
  await loop;
} catch (err) {
  console.error(err);
} finally {
  producing = false;
  for (const m of members) m.kill('SIGKILL');
  await producer.close();
  await cluster.stop();
}
process.exit(code);
