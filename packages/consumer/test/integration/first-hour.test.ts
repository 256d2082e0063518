// Issue 29 on a real broker: what a newcomer meets in the first hour does what the docs say.
// pause() inside a handler stops that partition at once; a record of eachMessage is finished when
// its callback resolves (commitSync() inside the handler, auto-commit during a long batch); run()'s
// lifecycle (once at a time, not after close(), settled by close() even with a hung handler);
// commits with groupId + assign(); what goes wrong is logged (the default logger on stderr, a
// missing topic, an offset out of range); a topic assigned before it exists is read soon after.
import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTopic, useKafka, type TestKafka } from '@kwire/broker';
import { ClosedError, createConsumer, UsageError, type Consumer, type Logger } from '../../src/index.js';
import { TestProducer, until as waitUntil } from '@kwire/testkit';

let kafka: TestKafka;
let producer: TestProducer;
const run = Date.now().toString(36);
const open: Consumer[] = [];
const here = dirname(fileURLToPath(import.meta.url));

test.before(async () => {
  kafka = await useKafka();
  producer = new TestProducer(kafka.bootstrap);
});
test.after(async () => {
  await Promise.allSettled(open.map((c) => c.close({ timeoutMs: 5_000 })));
  await producer?.close();
  await kafka?.release();
});

/** A logger that keeps what it is told (and prints nothing). */
function recorder(): Logger & { lines: { level: string; message: string; fields?: Record<string, unknown> }[] } {
  const lines: { level: string; message: string; fields?: Record<string, unknown> }[] = [];
  const at = (level: string) => (message: string, fields?: Record<string, unknown>) => void lines.push({ level, message, fields });
  return { lines, debug: () => {}, info: at('info'), warn: at('warn'), error: at('error') };
}

function consumer(extra: Record<string, unknown>): Consumer {
  const c = createConsumer({ bootstrapServers: kafka.bootstrap, autoOffsetReset: 'earliest', fetchMaxWaitMs: 100, logger: recorder(), ...extra });
  open.push(c);
  return c;
}

const until = (what: string, cond: () => boolean, ms = 30_000) => waitUntil(what, cond, ms, 20);

async function topicWith(name: string, partitions: number, perPartition: number): Promise<string> {
  const topic = `${name}-${run}`;
  await createTopic(kafka, { topic, partitions });
  for (let p = 0; p < partitions; p++) {
    await producer.send(
      topic,
      p,
      Array.from({ length: perPartition }, (_, i) => ({ key: Buffer.from(`k${i}`), value: Buffer.from(`v${p}-${i}`) })),
    );
  }
  return topic;
}

test('pause() inside eachMessage stops that partition at once; after resume() the rest comes, once, in order', async () => {
  const topic = await topicWith('pause', 1, 500);
  const c = consumer({});
  await c.assign([{ topic, partition: 0 }]);
  const seen: bigint[] = [];
  let pausedAt = 0;
  const running = c.run({
    eachMessage: async ({ topic: t, partition, message }) => {
      seen.push(message.offset);
      if (message.offset === 9n) {
        c.pause([{ topic: t, partition }]);
        pausedAt = seen.length;
      }
    },
  });
  await until('offset 9', () => pausedAt > 0);
  await sleep(500);
  assert.is(seen.length, pausedAt, `no record after the pause (got ${seen.slice(pausedAt).join(',')})`);
  assert.equal(
    c.paused().map((tp) => tp.partition),
    [0],
  );
  c.resume([{ topic, partition: 0 }]);
  await until('every record', () => seen.length >= 500);
  await sleep(200);
  assert.equal(
    seen,
    Array.from({ length: 500 }, (_, i) => BigInt(i)),
    'each offset once, in order',
  );
  await c.close();
  await running;
});

test('commitSync() inside eachMessage commits every record whose callback resolved (not the batch start)', async () => {
  const topic = await topicWith('commit-inside', 1, 200);
  const groupId = `g-${topic}`;
  const c = consumer({ groupId, maxPollRecords: 100, enableAutoCommit: false });
  await c.subscribe({ topics: [topic] });
  let committedAt150: unknown;
  const running = c.run({
    eachMessage: async ({ message }) => {
      if (message.offset === 150n) {
        await c.commitSync();
        committedAt150 = true;
      }
    },
  });
  await until('the commit at 150', () => committedAt150 === true);
  const tp = { topic, partition: 0 };
  const committed = await c.committed([tp]);
  assert.is(committed.get(tp)?.offset, 150n, '100-149 finished: the commit carries 150');
  await c.close();
  await running;
});

test('auto-commit during a long batch covers the records finished so far', async () => {
  const topic = await topicWith('autocommit-mid', 1, 100);
  const groupId = `g-${topic}`;
  const c = consumer({ groupId, maxPollRecords: 100, autoCommitIntervalMs: 100 });
  await c.subscribe({ topics: [topic] });
  let reached = false;
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const running = c.run({
    eachMessage: async ({ message }) => {
      if (message.offset === 40n) {
        reached = true;
        await held; // the batch's record 40 waits: 0-39 are finished, the batch is not
      }
    },
  });
  await until('record 40', () => reached);
  const tp = { topic, partition: 0 };
  let offset: bigint | undefined;
  await waitUntil(
    'an auto-commit of 40',
    () => {
      void c.committed([tp]).then((m) => (offset = m.get(tp)?.offset));
      return offset === 40n;
    },
    10_000,
    200,
  );
  release();
  await c.close();
  await running;
});

test('run(): a second run() is a UsageError and the first keeps running; run() after close() is a ClosedError', async () => {
  const topic = await topicWith('run-twice', 1, 10);
  const c = consumer({});
  await c.assign([{ topic, partition: 0 }]);
  let n = 0;
  const first = c.run({ eachMessage: async () => void n++ });
  const second = await c.run({ eachMessage: async () => {} }).catch((e: unknown) => e);
  assert.instance(second, UsageError);
  assert.match((second as Error).message, /already running/);
  await until('the first run() to read everything', () => n === 10);
  await c.close();
  await first; // settles at close()
  const after = await c.run({ eachMessage: async () => {} }).catch((e: unknown) => e);
  assert.instance(after, ClosedError);
});

test('close() with a handler that never resolves: run() settles, the record is reported and not committed', async () => {
  const topic = await topicWith('hung', 1, 10);
  const groupId = `g-${topic}`;
  const c = consumer({ groupId });
  await c.subscribe({ topics: [topic] });
  let reached = false;
  const running = c.run({
    eachMessage: async ({ message }) => {
      if (message.offset === 5n) {
        reached = true;
        await new Promise(() => {}); // never
      }
    },
  });
  await until('record 5', () => reached);
  const result = await c.close({ timeoutMs: 5_000 });
  const settled = await Promise.race([running.then(() => 'settled'), sleep(2_000).then(() => 'pending')]);
  assert.is(settled, 'settled', 'run() settled with close()');
  assert.equal(result.inFlight, [{ topic, partition: 0, offset: 5n }]);
  // By close() or, on a slow machine, by an auto-commit before it (then reported as already committed).
  assert.equal(
    [...result.committed, ...result.alreadyCommitted].map((o) => o.offset),
    [5n],
    'the records before the hung one are committed, it is not',
  );
});

test('groupId + assign(): commitSync() and committed() work; a partition assigned without an offset starts at the committed one', async () => {
  const topic = await topicWith('assign-commit', 1, 20);
  const groupId = `g-${topic}`;
  const tp = { topic, partition: 0 };
  const a = consumer({ groupId, enableAutoCommit: false });
  await a.assign([tp]);
  let n = 0;
  const running = a.run({ eachMessage: async () => void n++ });
  await until('20 records', () => n === 20);
  await a.commitSync([{ topic, partition: 0, offset: 12n }]);
  assert.is((await a.committed([tp])).get(tp)?.offset, 12n);
  await a.commitSync(); // the finished position
  assert.is((await a.committed([tp])).get(tp)?.offset, 20n);
  await a.close();
  await running;

  await producer.send(topic, 0, [{ value: Buffer.from('after') }]);
  const b = consumer({ groupId, autoCommitIntervalMs: 100 });
  await b.assign([tp]);
  const offsets: bigint[] = [];
  const running2 = b.run({ eachMessage: async ({ message }) => void offsets.push(message.offset) });
  await until('the record after the commit', () => offsets.length >= 1);
  await sleep(300);
  assert.equal(offsets, [20n], 'starts at the committed offset, not at auto.offset.reset (earliest)');
  const closed = await b.close();
  assert.equal(
    [...closed.committed, ...closed.alreadyCommitted].map((o) => o.offset),
    [21n],
    'auto-commit with assign(): 21 committed',
  );
  await running2;
  const check = consumer({ groupId, enableAutoCommit: false });
  assert.is((await check.committed([tp])).get(tp)?.offset, 21n);
});

test('close() after auto-commit committed everything says so (alreadyCommitted), not an empty "committed"', async () => {
  const topic = await topicWith('already', 1, 10);
  const groupId = `g-${topic}`;
  const c = consumer({ groupId, autoCommitIntervalMs: 100 });
  await c.subscribe({ topics: [topic] });
  let n = 0;
  const running = c.run({ eachMessage: async () => void n++ });
  await until('10 records', () => n === 10);
  const tp = { topic, partition: 0 };
  let offset: bigint | undefined;
  await waitUntil(
    'the auto-commit',
    () => {
      void c.committed([tp]).then((m) => (offset = m.get(tp)?.offset));
      return offset === 10n;
    },
    10_000,
    200,
  );
  const result = await c.close();
  await running;
  assert.equal(result.committed, []);
  assert.equal(
    result.alreadyCommitted.map((o) => [o.topic, o.partition, o.offset]),
    [[topic, 0, 10n]],
  );
});

test('assign() of a topic that does not exist yet: said once at warn, read within seconds of its creation', async () => {
  const topic = `late-${run}`;
  const logger = recorder();
  const c = consumer({ logger, retryBackoffMaxMs: 500 });
  await c.assign([{ topic, partition: 0 }]);
  const got: string[] = [];
  const running = c.run({ eachMessage: async ({ message }) => void got.push(String(message.value)) });
  await sleep(2_500);
  const said = logger.lines.filter((l) => l.level === 'warn' && l.message.includes(topic));
  assert.is(said.length, 1, `one warning naming the topic: ${JSON.stringify(logger.lines)}`);
  assert.match(said[0]!.message, /does not exist/);
  const created = Date.now();
  await createTopic(kafka, { topic, partitions: 1 });
  await producer.send(topic, 0, [{ value: Buffer.from('first') }]);
  await until('the first record', () => got.length === 1, 20_000);
  const tookMs = Date.now() - created;
  assert.ok(tookMs < 15_000, `read ${tookMs} ms after the topic was created (metadata.max.age.ms is 300 s)`);
  assert.equal(got, ['first']);
  await c.close();
  await running;
});

test('subscribe() to a topic that does not exist: said once at warn with its name', async () => {
  const topic = `nosuch-${run}`;
  const logger = recorder();
  const c = consumer({ logger, groupId: `g-${topic}` });
  await c.subscribe({ topics: [topic] });
  await sleep(3_000);
  const said = logger.lines.filter((l) => l.level === 'warn' && l.message.includes(topic));
  assert.is(said.length, 1, `one warning naming the topic: ${JSON.stringify(logger.lines)}`);
  await c.close();
});

test('an offset past the end is reset by auto.offset.reset, and the warning gives the log range', async () => {
  const topic = await topicWith('range', 1, 100);
  const logger = recorder();
  const c = consumer({ logger, autoOffsetReset: 'latest' });
  await c.assign([{ topic, partition: 0, offset: 500 }]);
  await until('the reset warning', () => logger.lines.some((l) => l.level === 'warn' && /out of range/.test(l.message)), 20_000);
  const line = logger.lines.find((l) => /out of range/.test(l.message))!;
  assert.match(line.message, new RegExp(`${topic}-0: offset 500 is out of range`));
  assert.match(line.message, /ends at 100/);
  assert.match(line.message, /going on from latest offset 100/);
  assert.not.match(line.message, /-1/);
  await until('the position to move', () => c.position({ topic, partition: 0 }) === 100n);
});

/** A short program run with the built package, as a user would run theirs: stderr is what they see. */
async function program(source: string): Promise<{ stdout: string; stderr: string }> {
  const index = join(here, '../../src/index.js');
  const code = `import { createConsumer, silentLogger } from ${JSON.stringify(index)};\n${source}`;
  const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', code], { timeout: 60_000, env: { ...process.env, BOOTSTRAP: kafka.bootstrap } });
  return { stdout, stderr };
}

test('the default logger writes warnings to stderr (a retried handler failure, once per retry); silentLogger prints nothing', async () => {
  const topic = await topicWith('stderr', 1, 3);
  const body = (logger: string) => `
    const c = createConsumer({ bootstrapServers: process.env.BOOTSTRAP, autoOffsetReset: 'earliest', fetchMaxWaitMs: 100, retryBackoffMs: 1000${logger} });
    await c.assign([{ topic: ${JSON.stringify(topic)}, partition: 0 }]);
    let failed = 0, done = 0;
    const running = c.run({ eachMessage: async ({ message }) => {
      if (message.offset === 1n && failed++ === 0) throw new Error('the database said no');
      if (++done === 3) void c.close();
    } });
    await running;
    console.log(\`done \${done}\`);`;
  const loud = await program(body(''));
  assert.ok(/done 3/.test(loud.stdout), `stdout: ${loud.stdout}\nstderr: ${loud.stderr}`);
  const warns = loud.stderr.split('\n').filter((l) => / WARN kwire: /.test(l));
  assert.is(warns.length, 1, `one warning line:\n${loud.stderr}`);
  assert.match(warns[0]!, /processing failed/);
  assert.match(warns[0]!, /"error":"the database said no"/);
  const quiet = await program(body(', logger: silentLogger'));
  assert.ok(/done 3/.test(quiet.stdout), `stdout: ${quiet.stdout}\nstderr: ${quiet.stderr}`);
  assert.is(quiet.stderr, '', 'silentLogger: nothing on stderr');
});

test.run();
