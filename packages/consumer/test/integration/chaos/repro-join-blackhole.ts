// A reproduction of what chaos seed 7 (classic) found, kept out of `npm test` while it fails:
//   node packages/consumer/dist/test/integration/chaos/repro-join-blackhole.js [cooperative|eager]
// (a broker of its own). Exit code 1 while the bug is there, 0 once it is fixed.
//
// Issue 10 item 3 says a member that has had no successful heartbeat for session.timeout.ms stops
// delivering its partitions. A classic member only checks that in its heartbeat loop
// (classic.ts heartbeatUntilRejoin); once it has left that loop to rejoin, a JoinGroup that gets no
// answer (the coordinator unreachable) keeps the partitions owned and delivered, up to the JoinGroup
// timeout (max.poll.interval.ms + request.timeout.ms + 5 s). Meanwhile the coordinator expires the
// member and gives the partitions to others: two members deliver the same partition, and when
// the network heals the zombie delivers records below what the new owner has already committed.
//
// Here: member A (behind a FaultProxy) owns the one partition; member B joins; the moment A starts
// to rejoin (its 'rebalance' event) its network goes into a black hole. Expected: A loses the
// partition within session.timeout.ms plus a heartbeat interval. Seen: A keeps it until the hole
// is lifted.
import { setTimeout as sleep } from 'node:timers/promises';
import { createTopic, startKafka } from '@kwire/broker';
import { createConsumer } from '../../../src/index.js';
import { TestProducer, FaultProxy } from '@kwire/testkit';

const SESSION_MS = 6_000;
const HEARTBEAT_MS = 1_000;
const HOLE_MS = SESSION_MS + 8_000;

const cluster = await startKafka();
const bootstrap = cluster.bootstrap;
const run = Date.now().toString(36);
const topic = `join-hole-${run}`;
const groupId = `join-hole-${run}`;
let code = 1;
const proxy = await FaultProxy.start('A', bootstrap);
const producer = new TestProducer(bootstrap);
const strategy = process.argv[2] === 'eager' ? ['range'] : ['cooperative-sticky'];
const config = {
  groupId,
  partitionAssignmentStrategy: strategy,
  autoOffsetReset: 'earliest',
  sessionTimeoutMs: SESSION_MS,
  heartbeatIntervalMs: HEARTBEAT_MS,
  maxPollIntervalMs: 30_000,
  requestTimeoutMs: 5_000,
  fetchMaxWaitMs: 100,
} as const;
const a = createConsumer({ ...config, bootstrapServers: await proxy.bootstrap(), clientId: 'A' });
const b = createConsumer({ ...config, bootstrapServers: bootstrap, clientId: 'B' });
try {
  await createTopic(cluster, { topic, partitions: 1 });
  await producer.send(
    topic,
    0,
    Array.from({ length: 100 }, (_, i) => ({ value: `r${i}` })),
  );
  const t0 = Date.now();
  const ev = (who: string, what: string) => console.log(`${String(Date.now() - t0).padStart(6)} ms  ${who}: ${what}`);
  let holeAt = 0;
  let lostAt = 0;
  let deliveredInHole = 0;
  a.on('lost', () => {
    lostAt ||= Date.now();
    ev('A', 'lost its partitions');
  });
  // An eager member gives its partitions up (revoked) before it joins: its ownership ends too.
  a.on('revoked', () => {
    if (holeAt) lostAt ||= Date.now();
    ev('A', 'revoked its partitions');
  });
  a.on('rebalance', (d) => {
    ev('A', `rebalance (${String(d.why)})`);
    if (holeAt === 0 && a.assignment().length > 0) {
      holeAt = Date.now();
      proxy.setBlackhole(true);
      ev('proxy', `black hole in front of A for ${HOLE_MS} ms`);
    }
  });
  await a.subscribe({ topics: [topic] });
  void a.run({
    eachMessage: () => {
      if (holeAt && Date.now() - holeAt > SESSION_MS + HEARTBEAT_MS) deliveredInHole++;
    },
  });
  await a.assigned();
  ev(
    'A',
    `owns ${a
      .assignment()
      .map((tp) => tp.partition)
      .join(',')}`,
  );
  await sleep(2_000);
  await b.subscribe({ topics: [topic] });
  b.on('assigned', (d) => ev('B', `assigned ${JSON.stringify((d.assigned as { partition: number }[]).map((tp) => tp.partition))}`));
  void b.run({ eachMessage: () => {} });
  // Records to deliver while A should be out of the group.
  await sleep(1_000);
  const deadline = Date.now() + 30_000;
  while (!holeAt && Date.now() < deadline) await sleep(100);
  if (!holeAt) throw new Error('A never started to rebalance');
  await sleep(HOLE_MS);
  proxy.setBlackhole(false);
  ev('proxy', 'black hole lifted');
  await producer.send(
    topic,
    0,
    Array.from({ length: 100 }, (_, i) => ({ value: `s${i}` })),
  );
  await sleep(3_000);
  const limit = SESSION_MS + HEARTBEAT_MS + 1_500;
  const after = lostAt ? lostAt - holeAt : Infinity;
  console.log(`\nA lost its partitions ${after === Infinity ? 'never' : `${after} ms`} after the black hole began (limit ${limit} ms: session ${SESSION_MS} + heartbeat ${HEARTBEAT_MS} + 1500)`);
  console.log(`records A delivered later than session + heartbeat into the hole: ${deliveredInHole}`);
  code = after <= limit ? 0 : 1;
  console.log(code === 0 ? 'OK: no zombie' : 'BUG: A stayed the owner (and could deliver) for longer than its session');
} catch (err) {
  console.error(err);
} finally {
  await Promise.allSettled([a.close({ timeoutMs: 3_000 }), b.close({ timeoutMs: 3_000 })]);
  await proxy.close();
  await producer.close();
  await cluster.stop();
}
process.exit(code);
