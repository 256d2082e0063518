// Issue 14 acceptance: share groups (KIP-932) against the real 4.4.0 broker. Two kwire share
// consumers and Java's ConsoleShareConsumer in one group over 2 partitions (more members than
// partitions) share the records, each accepted exactly once; explicit acknowledgement (release
// comes back with deliveryCount + 1, reject never, the delivery-count limit archives, renew);
// kill -9 of a member holding records (the broker releases them when its connection drops); a
// member frozen (SIGSTOP) past the acquisition lock (its records go to another member, and its late
// acknowledgements are reported as expired, not sent); a share group next to a consumer group on
// the same topic; a bounded close that releases what was not finished.
import { execFile, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { alterGroupConfig, consoleShareConsumer, describeShareGroup, type TestKafka } from '@kwire/broker';
import { ShareGroupDescribe } from '@kwire/protocol';
import { createConsumer, createShareConsumer, type ShareAcknowledgeResult, type ShareBatch, type ShareConsumer } from '../../src/index.js';
import { kafkaSuite, until, within } from '@kwire/testkit';

const run = Date.now().toString(36);
const exec = promisify(execFile);

const groupOf = (name: string) => `sg-${name}-${run}`;

const env = kafkaSuite(test);
let started = 0;
test.before.each(() => {
  started = Date.now();
});
test.after.each(() => {
  console.log(`  (${((Date.now() - started) / 1000).toFixed(1)} s)`);
});

function share<K = unknown, V = unknown>(groupId: string, extra: Record<string, unknown> = {}): ShareConsumer<K, V> {
  return env.track(createShareConsumer<K, V>({ bootstrapServers: env.kafka.bootstrap, groupId, valueDeserializer: 'string', fetchMaxWaitMs: 200, ...extra }));
}

/**
 * Topics through kwire's own CreateTopics (the test producer's): TopicCommand is a JVM start per
 * topic, several seconds on a busy machine. Named and called as @kwire/broker's createTopic.
 */
function createTopic(_kafka: TestKafka, o: { topic: string; partitions: number }): Promise<void> {
  return env.producer.createTopics([o.topic], o.partitions);
}

async function produce(topic: string, partitions: number, perPartition: number, batchSize = 10, round = 0): Promise<string[]> {
  const values: string[] = [];
  for (let p = 0; p < partitions; p++) {
    const records = Array.from({ length: perPartition }, (_, i) => ({ key: Buffer.from(`k${i}`), value: Buffer.from(`${topic}:${p}:${round ? `${round}.` : ''}${i}`) }));
    await env.producer.send(topic, p, records, { batchSize });
    values.push(...records.map((r) => r.value.toString()));
  }
  return values;
}

/**
 * A new share group starts at the latest offset when its first member first fetches a partition
 * (share.auto.offset.reset, a group config, is latest by default). Rather than a ConfigCommand per
 * group (a JVM start each), the tests produce once the members have fetched: the second ShareFetch
 * of a session is sent only after the first was answered, so the share-partitions exist by then.
 */
async function ready(...members: ShareConsumer<any, any>[]): Promise<void> {
  await Promise.all(members.map((c) => c.assigned(30_000)));
  await until('the members fetched once', () => members.every((c) => c.metrics().fetches >= 2), 30_000);
}

/**
 * A share consumer in a child process: it takes one batch and holds it (printing HOLD values),
 * until a line on stdin; then it commits (which accepts the batch), prints METRICS and closes.
 */
function startHolder(groupId: string, topic: string) {
  const script = join(tmpdir(), `kwire-share-holder-${run}.mjs`);
  const index = new URL('../../src/index.js', import.meta.url).href;
  writeFileSync(
    script,
    `import { createInterface } from 'node:readline';
import { createShareConsumer } from ${JSON.stringify(index)};
const [bootstrap, groupId, topic] = process.argv.slice(2);
const c = createShareConsumer({ bootstrapServers: bootstrap, groupId, valueDeserializer: 'string', maxPollRecords: 10, shareAcquireMode: 'record_limit' });
await c.subscribe([topic]);
await c.assigned();
while (c.metrics().fetches < 2) await new Promise((r) => setTimeout(r, 20));
console.log('READY');
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
let results = [];
for await (const batch of c) {
  console.log('HOLD ' + batch.records.map((r) => r.value).join(','));
  await lines.next();
  // Done with the batch: committing accepts it (implicit mode).
  results = await c.commitSync();
  break;
}
const m = c.metrics();
console.log('METRICS ' + JSON.stringify({ lockExpired: m.lockExpired, accepted: m.acknowledged.accept, results: results.map((r) => ({ records: r.records, lockExpired: r.lockExpired, error: r.error && r.error.message })) }));
await c.close();
process.exit(0);
`,
  );
  const child = spawn(process.execPath, [script, env.kafka.bootstrap, groupId, topic], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { child, out: () => out, exited };
}

/** The next batch, or 'none' when nothing comes for `ms`. */
async function nextOrNone<T>(it: AsyncIterator<T>, ms: number): Promise<T | 'none'> {
  let timer: NodeJS.Timeout | undefined;
  const none = new Promise<'none'>((r) => (timer = setTimeout(() => r('none'), ms)));
  const got = await Promise.race([it.next(), none]).finally(() => clearTimeout(timer));
  if (got === 'none') return 'none';
  assert.ok(!got.done, 'the consumer ended');
  return got.value;
}

test('two kwire share consumers and a Java ConsoleShareConsumer, 2 partitions: every member gets records, every record accepted exactly once', async () => {
  const topic = `share-three-${run}`;
  const groupId = groupOf('three');
  await createTopic(env.kafka, { topic, partitions: 2 });
  const total = 2 * 1500;
  // Java first: its JVM takes a couple of seconds. Its idle timeout (--timeout-ms) counts from
  // its first poll, before its join: the join, the other members' next heartbeats (the share
  // heartbeat interval is 5 s) and the first records must all come within it, so 5 s was a race
  // (lost once in a clean-clone CI run); 15 s is not, and it costs 15 s at the end only.
  let javaEnded = '';
  const java = consoleShareConsumer(env.kafka, { topic, group: groupId, maxMessages: total, idleTimeoutMs: 15_000, props: { 'max.poll.records': 50 } });
  java.then(
    (lines) => (javaEnded = `it exited after ${lines.length} records`),
    (e: unknown) => (javaEnded = `it failed: ${String(e)}`),
  );
  const kwire = [share(groupId, { maxPollRecords: 50 }), share(groupId, { maxPollRecords: 50 })];
  const got = kwire.map(() => [] as string[]);
  await Promise.all(kwire.map((c) => c.subscribe([topic])));
  await ready(...kwire);
  // Records are written once Java is a member too (its JVM starts slowly on a busy machine).
  const conn = await kwire[0]!.pool.leastLoaded();
  for (const deadline = Date.now() + 60_000; ; await sleep(250)) {
    const res = await conn.request(ShareGroupDescribe, { groupIds: [groupId], includeAuthorizedOperations: false });
    const members = res.groups[0]?.members ?? [];
    if (members.length === 3 && members.every((m) => m.assignment.topicPartitions.length > 0)) break;
    assert.ok(!javaEnded && Date.now() < deadline, `the Java member never joined and got its assignment (members: ${members.length}; ${javaEnded || 'it is still running'})`);
  }
  await sleep(1_000); // and its first ShareFetch
  const loops = kwire.map(async (c, i) => {
    for await (const batch of within(c, 60_000, `share records (member ${i})`)) {
      for (const r of batch) got[i]!.push(r.value as string);
      // Slow enough that the records spread over the three members (the JVM's member too).
      await sleep(50);
    }
  });
  const written: string[] = [];
  for (let round = 0; round < 10; round++) {
    written.push(...(await produce(topic, 2, total / 20, 10, round + 1)));
    await sleep(300);
  }
  const javaLines = await java;
  await until('every record consumed by someone', () => got[0]!.length + got[1]!.length + javaLines.length >= total, 30_000);
  await Promise.all(kwire.map((c) => c.close()));
  await Promise.all(loops);
  const all = [...got[0]!, ...got[1]!, ...javaLines];
  console.log(`  share: kwire A ${got[0]!.length}, kwire B ${got[1]!.length}, Java ${javaLines.length} of ${total}`);
  assert.ok(got[0]!.length > 0 && got[1]!.length > 0 && javaLines.length > 0, 'every member received records');
  assert.is(new Set(all).size, all.length, 'no record was delivered twice');
  assert.equal([...all].sort(), [...written].sort(), 'every record written was consumed');
  for (const c of kwire) {
    const m = c.metrics();
    assert.is(m.acknowledged.accept, m.recordsAcquired, 'kwire accepted what it acquired');
    assert.is(m.redeliveries, 0);
    assert.is(m.acknowledgementErrors, 0);
  }
  // The broker agrees: nothing of either partition is left to deliver (lag 0).
  const offsets = await describeShareGroup(env.kafka, groupId, 'offsets');
  const rows = offsets.split('\n').filter((l) => l.includes(topic));
  assert.is(rows.length, 2, offsets);
  for (const row of rows) assert.match(row, /\s0\s*$/, `lag 0: ${row}`);
});

test('explicit mode: a released record returns with deliveryCount + 1, a rejected one never, the delivery-count limit (5) archives, renew keeps the lock', async () => {
  const topic = `share-explicit-${run}`;
  const groupId = groupOf('explicit');
  await createTopic(env.kafka, { topic, partitions: 1 });
  const c = share<Buffer, string>(groupId, { shareAcknowledgementMode: 'explicit' });
  await c.subscribe([topic]);
  await ready(c);
  await produce(topic, 1, 4, 4);
  const it = c[Symbol.asyncIterator]();
  const seen: { value: string; deliveryCount: number }[] = [];
  // First delivery: 0 released, 1 rejected, 2 renewed then accepted, 3 accepted.
  let batch = (await nextOrNone(it, 30_000)) as ShareBatch<Buffer, string>;
  assert.ok(batch !== ('none' as unknown), 'the first records arrived');
  assert.is(batch.records.length, 4);
  for (const r of batch) seen.push({ value: r.value, deliveryCount: r.deliveryCount });
  assert.equal(
    seen.map((s) => s.deliveryCount),
    [1, 1, 1, 1],
  );
  const [r0, r1, r2, r3] = batch.records;
  c.acknowledge(r0!, 'release');
  c.acknowledge(r1!, 'reject');
  const renewed = (await c.acknowledge(r2!, 'renew')) as ShareAcknowledgeResult[];
  assert.equal(
    renewed.map((r) => r.error),
    [null],
    'the broker renewed the lock',
  );
  assert.not.ok(r2!.acknowledged, 'a renewed record is still held');
  c.acknowledge(r2!, 'accept');
  c.acknowledge(r3!);
  assert.throws(() => c.acknowledge(r3!, 'accept'), /not held by this member/);
  const committed = await c.commitSync();
  assert.equal(
    committed.map((r) => [r.records, r.error]),
    [[4, null]],
  );
  // Then only record 0, each time with a delivery count one higher; released at the broker's
  // group.share.delivery.count.limit (5 by default) it is archived.
  for (let count = 2; count <= 5; count++) {
    batch = (await nextOrNone(it, 30_000)) as ShareBatch<Buffer, string>;
    assert.equal(
      batch.records.map((r) => [r.value, r.deliveryCount]),
      [[`${topic}:0:0`, count]],
    );
    c.acknowledge(batch.records[0]!, 'release');
  }
  // Nothing comes back: 0 is archived, 1 rejected, 2 and 3 accepted.
  assert.is(await nextOrNone(it, 3_000), 'none');
  const m = c.metrics();
  assert.equal({ ...m.acknowledged }, { accept: 2, release: 5, reject: 1, gap: 0, renew: 1 });
  assert.is(m.redeliveries, 4);
  await c.close();
  // A new member of the group finds nothing either.
  const late = share(groupId, { shareAcknowledgementMode: 'explicit' });
  await late.subscribe([topic]);
  assert.is(await nextOrNone(late[Symbol.asyncIterator](), 2_000), 'none');
  await late.close();
});

test('implicit mode: a loop that throws does not accept the record it was on; acknowledge() is refused', async () => {
  const topic = `share-implicit-${run}`;
  const groupId = groupOf('implicit');
  await createTopic(env.kafka, { topic, partitions: 1 });
  const c = share<Buffer, string>(groupId);
  await c.subscribe([topic]);
  await ready(c);
  await produce(topic, 1, 5, 5);
  const firstPass: string[] = [];
  let thrown: unknown;
  try {
    for await (const r of c.records()) {
      assert.throws(() => c.acknowledge(r as never, 'accept'), /explicit/);
      firstPass.push(r.value);
      if (firstPass.length === 3) throw new Error('handler failed');
    }
  } catch (err) {
    thrown = err;
  }
  assert.match(String(thrown), /handler failed/);
  // Records 0 and 1 were finished (accepted); 2 (the one that threw) and 3, 4 come back.
  const again: [string, number][] = [];
  for await (const r of within(c.records(), 30_000, 'the redelivered records')) {
    again.push([r.value, r.deliveryCount]);
    if (again.length === 3) break;
  }
  assert.equal(again, [
    [`${topic}:0:2`, 2],
    [`${topic}:0:3`, 2],
    [`${topic}:0:4`, 2],
  ]);
  await c.close();
});

test('kill -9 of a member holding acquired records: delivered again to the others (deliveryCount 2), nothing lost', async () => {
  const topic = `share-kill-${run}`;
  const groupId = groupOf('kill');
  await createTopic(env.kafka, { topic, partitions: 1 });
  const holder = startHolder(groupId, topic);
  await until('the holder is reading', () => holder.out().includes('READY'), 30_000);
  const written = await produce(topic, 1, 40, 10);
  await until('the holder acquired records', () => holder.out().includes('HOLD '), 30_000);
  const held = holder.out().split('HOLD ')[1]!.split('\n')[0]!.trim().split(',');
  holder.child.kill('SIGKILL');
  const killedAt = Date.now();
  assert.is(held.length, 10);
  const c = share<Buffer, string>(groupId, { maxPollRecords: 100 });
  await c.subscribe([topic]);
  const got = new Map<string, number>();
  for await (const batch of within(c, 40_000, 'records after the kill')) {
    for (const r of batch) got.set(r.value, r.deliveryCount);
    if (got.size === written.length) break;
  }
  const waited = Date.now() - killedAt;
  // The broker releases a member's records when its connection closes, before the lock runs out.
  console.log(`  share: the killed member's ${held.length} records came back ${waited} ms after the kill`);
  assert.equal([...got.keys()].sort(), [...written].sort(), 'nothing lost');
  for (const v of held) assert.is(got.get(v), 2, `${v} was delivered a second time`);
  await c.close();
});

test('a member frozen past the acquisition lock: its records go to another member; its late acknowledgements are reported as expired, not sent', async () => {
  const topic = `share-frozen-${run}`;
  const groupId = groupOf('frozen');
  await createTopic(env.kafka, { topic, partitions: 1 });
  // 15 s is the shortest lock the broker allows for a group (the default is 30 s).
  await alterGroupConfig(env.kafka, groupId, { 'share.record.lock.duration.ms': 15_000 });
  const holder = startHolder(groupId, topic);
  await until('the holder is reading', () => holder.out().includes('READY'), 30_000);
  const written = await produce(topic, 1, 10, 10);
  await until('the holder acquired records', () => holder.out().includes('HOLD '), 30_000);
  holder.child.kill('SIGSTOP');
  const frozenAt = Date.now();
  const c = share<Buffer, string>(groupId);
  await c.subscribe([topic]);
  const got = new Map<string, number>();
  for await (const batch of within(c, 40_000, 'records after the lock')) {
    for (const r of batch) got.set(r.value, r.deliveryCount);
    if (got.size === written.length) break;
  }
  const waited = Date.now() - frozenAt;
  console.log(`  share: the frozen member's records came back ${waited} ms after it stopped (lock 15 s)`);
  assert.ok(waited >= 13_000, `they waited for the lock (${waited} ms)`);
  assert.equal([...got.values()], new Array(written.length).fill(2));
  // The holder wakes up, finishes its batch and commits: the lock had expired, so nothing is sent.
  holder.child.kill('SIGCONT');
  holder.child.stdin!.write('go\n');
  await until('the holder reported', () => holder.out().includes('METRICS '), 30_000);
  const line = holder.out().split('METRICS ')[1]!.split('\n')[0]!;
  const report = JSON.parse(line) as { lockExpired: number; accepted: number; results: { records: number; lockExpired: number; error: unknown }[] };
  assert.is(report.lockExpired, written.length, 'every held record counted as lock-expired');
  assert.is(report.accepted, 0, 'none acknowledged as if held');
  assert.equal(
    report.results.map((r) => [r.records, r.lockExpired]),
    [[0, written.length]],
  );
  await holder.exited;
  await c.close();
});

test('a share group and a consumer group on one topic are independent: each reads every record', async () => {
  const topic = `share-mixed-${run}`;
  const shareGroup = groupOf('mixed');
  await createTopic(env.kafka, { topic, partitions: 2 });
  const s = share<Buffer, string>(shareGroup);
  const g = createConsumer({ bootstrapServers: env.kafka.bootstrap, groupId: `cg-mixed-${run}`, autoOffsetReset: 'earliest', valueDeserializer: 'string' });
  await s.subscribe([topic]);
  await g.subscribe({ topics: [topic] });
  await ready(s);
  const written = await produce(topic, 2, 50, 10);
  const read = async (source: AsyncIterable<{ records: readonly { value: unknown }[] }>, what: string) => {
    const values: string[] = [];
    for await (const batch of within(source, 30_000, what)) {
      for (const r of batch.records) values.push(r.value as string);
      if (values.length >= written.length) break;
    }
    return values;
  };
  const [fromShare, fromGroup] = await Promise.all([read(s, 'share records'), read(g, 'consumer group records')]);
  assert.equal(fromShare.sort(), [...written].sort());
  assert.equal(fromGroup.sort(), [...written].sort());
  await Promise.all([s.close(), g.close()]);
});

test('close() is bounded and releases what was not finished: another member gets it at once', async () => {
  const topic = `share-close-${run}`;
  const groupId = groupOf('close');
  await createTopic(env.kafka, { topic, partitions: 1 });
  const a = share<Buffer, string>(groupId);
  await a.subscribe([topic]);
  await ready(a);
  await produce(topic, 1, 6, 6);
  const it = a[Symbol.asyncIterator]();
  const first = (await nextOrNone(it, 30_000)) as ShareBatch<Buffer, string>;
  assert.is(first.records.length, 6);
  const started = Date.now();
  await a.close();
  const closeMs = Date.now() - started;
  assert.ok(closeMs < 5_000, `close took ${closeMs} ms`);
  assert.is(a.metrics().acknowledged.release, 6, 'the batch in hand was released, not accepted');
  const b = share<Buffer, string>(groupId);
  await b.subscribe([topic]);
  const again = (await nextOrNone(b[Symbol.asyncIterator](), 10_000)) as ShareBatch<Buffer, string>;
  assert.equal(
    again.records.map((r) => r.deliveryCount),
    [2, 2, 2, 2, 2, 2],
    'delivered again without waiting for the lock',
  );
  await b.close();
});

test('kwire consume --share-group: json lines with deliveryCount; --ack release gives them back; stopping early releases the rest', async () => {
  const topic = `share-cli-${run}`;
  const groupId = groupOf('cli');
  await createTopic(env.kafka, { topic, partitions: 1 });
  // Each CLI run is a new member of a group nobody stays in: the group starts at the earliest
  // offset (a group config), since a group that empties before its start was written down
  // starts again at the latest offset when a member next comes.
  await alterGroupConfig(env.kafka, groupId, { 'share.auto.offset.reset': 'earliest' });
  await produce(topic, 1, 5, 5);
  const bin = new URL('../../../bin/kwire.js', import.meta.url).pathname;
  const kwireWith = async (connect: string[], ...args: string[]) => {
    try {
      const { stdout, stderr } = await exec(process.execPath, [bin, 'consume', ...connect, '--share-group', groupId, '--topic', topic, ...args], { timeout: 60_000 });
      return { stdout, stderr, code: 0 };
    } catch (err) {
      return err as { stdout: string; stderr: string; code: number };
    }
  };
  const kwire = (...args: string[]) => kwireWith(['--bootstrap', env.kafka.bootstrap], ...args);
  const released = await kwire('--ack', 'release', '--max-records', '3');
  assert.is(released.code, 0, released.stderr);
  const lines = released.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { value: string; offset: string; deliveryCount: number });
  assert.equal(
    lines.map((l) => [l.offset, l.value, l.deliveryCount]),
    [0, 1, 2].map((i) => [String(i), `${topic}:0:${i}`, 1]),
  );
  assert.match(released.stderr, /share group .*: 3 records, .*acknowledged 0 accept, 5 release, 0 reject/);
  // The connection from a properties file and -X, as the normal path takes them (no --bootstrap);
  // --share-group wins over the file's group.id (the records are in this group only).
  const props = join(tmpdir(), `kwire-share-cli-${run}.properties`);
  writeFileSync(props, `bootstrap.servers=${env.kafka.bootstrap}\ngroup.id=not-this-one\nclient.id=kwire-share-cli\n`);
  const accepted = await kwireWith(['--config', props, '-X', 'fetch.max.wait.ms=100'], '--format', 'value', '--max-records', '5');
  assert.is(accepted.code, 0, accepted.stderr);
  assert.is(accepted.stdout, [0, 1, 2, 3, 4].map((i) => `${topic}:0:${i}\n`).join(''));
  const none = await kwire('--idle-exit-ms', '2000');
  assert.is(none.stdout, '', 'every record was accepted');
  // Options of the file or -X that a share consumer does not take are refused, as by the library.
  const refused = await kwireWith(['--config', props, '-X', 'session.timeout.ms=10000']);
  assert.is(refused.code, 1);
  assert.match(refused.stderr, /session.timeout.ms is not a share consumer option/);
  const bad = await kwire('--from', 'earliest');
  assert.is(bad.code, 2);
  assert.match(bad.stderr, /--from does not apply to a share group/);
});

test.run();
