// Issue 31 on a real broker: run() handles records concurrently (maxConcurrency, ordering) and
// keeps the finished rule: the commit point is the end of the contiguous finished records, the
// records finished beyond it travel in the commit's metadata, and on assignment those are not
// handed out again. Committed offsets are read with Kafka's own tools (ConsumerGroupCommand, and
// the Java Admin for the metadata), never with kwire.
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { compileJava, describeGroupOffsets, repoRoot, runTool } from '@kwire/broker';
import type { RecordInput } from '@kwire/protocol';
import { capturingLogger, kafkaSuite, until as untilPolled } from '@kwire/testkit';
import type { Consumer, ConsumerRecord, RunOptions } from '../../src/index.js';
import { decodeFinished, encodeFinished } from '../../src/internals.js';

const run = Date.now().toString(36);
const here = dirname(fileURLToPath(import.meta.url));
const READ_COMMITTED = join(repoRoot, 'packages/consumer/test/integration/java/ReadCommitted.java');

/** Prints errors only: retries and close() warn by design here, and the tests that care capture their own lines. */
const quiet = { debug() {}, info() {}, warn() {}, error: (m: string, f?: unknown) => console.error('error', m, f) };

const env = kafkaSuite(test, {
  consumer: { autoOffsetReset: 'earliest', fetchMaxWaitMs: 100, keyDeserializer: 'string', valueDeserializer: 'string', logger: quiet },
  // Some handlers here never settle: the teardown must not wait close()'s default 30 s for them.
  closeTimeoutMs: 5_000,
});

const until = (what: string, cond: () => boolean, ms = 60_000) => untilPolled(what, cond, ms, 20);
const range = (n: number) => Array.from({ length: n }, (_, i) => i);
const tp = (partition: number, offset: bigint | number) => `${partition}@${offset}`;

/** A topic of `partitions` partitions holding `records(p)` each, in batches of `batchSize`. */
async function topicWith(name: string, partitions: number, records: (p: number) => RecordInput[], batchSize = 500): Promise<string> {
  const topic = `${name}-${run}`;
  await env.producer.createTopics([topic], partitions);
  await Promise.all(range(partitions).map((p) => env.producer.send(topic, p, records(p), { batchSize })));
  return topic;
}

/**
 * run() on `c`, its failure kept: the waits of a test look at it, so that a run that ended early
 * fails the test at once instead of at the wait's timeout.
 */
function started(c: Consumer, options: RunOptions<string, string>): { done: Promise<void>; error: () => unknown } {
  let failure: unknown;
  const done = (c as Consumer<string, string>).run(options);
  done.catch((err: unknown) => (failure = err ?? new Error('run() rejected')));
  return {
    done,
    error: () => failure,
  };
}

/** `cond`, failing at once if the run ended with an error. */
function whileRunning(r: { error: () => unknown }, cond: () => boolean): () => boolean {
  return () => {
    if (r.error() !== undefined) throw r.error();
    return cond();
  };
}

/** Records in flight, at once and per partition and key, with the highest counts seen. */
class Flight {
  now = 0;
  max = 0;
  maxPerPartition = 0;
  maxPerKey = 0;
  private readonly partitions = new Map<number, number>();
  private readonly keys = new Map<string, number>();

  enter(partition: number, key: string | null): void {
    this.max = Math.max(this.max, ++this.now);
    const p = (this.partitions.get(partition) ?? 0) + 1;
    this.partitions.set(partition, p);
    this.maxPerPartition = Math.max(this.maxPerPartition, p);
    const k = `${partition}/${key}`;
    const n = (this.keys.get(k) ?? 0) + 1;
    this.keys.set(k, n);
    this.maxPerKey = Math.max(this.maxPerKey, n);
  }

  leave(partition: number, key: string | null): void {
    this.now--;
    this.partitions.set(partition, this.partitions.get(partition)! - 1);
    const k = `${partition}/${key}`;
    this.keys.set(k, this.keys.get(k)! - 1);
  }

  of(partition: number): number {
    return this.partitions.get(partition) ?? 0;
  }
}

/** How often each partition@offset was handled. */
function tally(list: readonly string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const k of list) m.set(k, (m.get(k) ?? 0) + 1);
  return m;
}

/** The group's committed offset of partition 0 of `topic`, as kafka-consumer-groups --describe shows it. */
async function committed(groupId: string, topic: string): Promise<bigint | null> {
  const rows = await describeGroupOffsets(env.kafka, groupId);
  return rows.find((r) => r.topic === topic && r.partition === 0)?.committed ?? null;
}

test("ordering 'key', maxConcurrency 256: 20,000 records over 2,000 keys, each once, per key in order, many at once", async () => {
  const PARTITIONS = 6;
  const KEYS = 2_000;
  const RECORDS = 20_000;
  // Key k lives in partition k % 6; its records carry their sequence number within the key.
  const topic = await topicWith('key-order', PARTITIONS, (p) =>
    range(RECORDS)
      .filter((i) => (i % KEYS) % PARTITIONS === p)
      .map((i) => ({ key: `k${i % KEYS}`, value: `${Math.floor(i / KEYS)}` })),
  );
  const c = env.consumer();
  c.assign(range(PARTITIONS).map((partition) => ({ topic, partition, offset: 'earliest' as const })));
  const flight = new Flight();
  const handled: string[] = [];
  const lastSeq = new Map<string, number>();
  const lastDone = new Map<string, number>();
  const outOfOrder: string[] = [];
  const r = started(c, {
    maxConcurrency: 256,
    ordering: 'key',
    eachMessage: async ({ partition, message }) => {
      const key = message.key!;
      flight.enter(partition, key);
      const seq = Number(message.value);
      const last = lastSeq.get(key) ?? -1;
      if (seq <= last && outOfOrder.length < 10) outOfOrder.push(`${key}: ${seq} started after ${last}`);
      lastSeq.set(key, seq);
      await sleep(Math.floor(Math.random() * 4));
      flight.leave(partition, key);
      // Handlers of one key that overlapped would finish in any order (their waits are random).
      if (seq <= (lastDone.get(key) ?? -1) && outOfOrder.length < 10) outOfOrder.push(`${key}: ${seq} finished after ${lastDone.get(key)}`);
      lastDone.set(key, seq);
      handled.push(tp(partition, message.offset));
    },
  });
  await until(
    'every record handled',
    whileRunning(r, () => handled.length >= RECORDS),
  );
  // A record handed out twice would show up in this time.
  await sleep(300);
  const processing = c.metrics().processing;
  await c.close();
  await r.done;
  const counts = tally(handled);
  assert.is(counts.size, RECORDS, 'every record handled');
  assert.equal([...counts].filter(([, n]) => n > 1).slice(0, 5), [], 'no record handled twice');
  assert.equal(outOfOrder, [], 'per key, the sequence strictly increasing (as handlers start and as they finish)');
  assert.is(lastSeq.size, KEYS);
  assert.ok(
    [...lastSeq.values()].every((s) => s === RECORDS / KEYS - 1),
    'every key reached its last record',
  );
  assert.is(flight.maxPerKey, 1, 'never two records of one key at once');
  assert.ok(flight.max > 50, `at most ${flight.max} records in flight at once: expected more than 50 (maxConcurrency 256)`);
  assert.ok(flight.max <= 256, `${flight.max} in flight, above maxConcurrency 256`);
  assert.ok(flight.maxPerPartition > 1, 'records of one partition handled at the same time');
  assert.is(processing.finished, RECORDS);
  console.log(`  in flight at most ${flight.max} (per partition ${flight.maxPerPartition}); key wait p99 ${processing.keyWait.p99Ms.toFixed(1)} ms`);
});

test("ordering 'partition': one record of a partition at a time, partitions at once; no ordering given is 'partition' with maxConcurrency 64", async () => {
  // 'partition' spelled out: 6 partitions, a 5 ms handler.
  {
    const PARTITIONS = 6;
    const PER = 60;
    const topic = await topicWith('partition-order', PARTITIONS, () => range(PER).map((i) => ({ key: `k${i % 7}`, value: `${i}` })));
    const c = env.consumer();
    c.assign(range(PARTITIONS).map((partition) => ({ topic, partition, offset: 'earliest' as const })));
    const flight = new Flight();
    const next = new Map<number, bigint>();
    const wrong: string[] = [];
    let handled = 0;
    const r = started(c, {
      ordering: 'partition',
      eachMessage: async ({ partition, message }) => {
        flight.enter(partition, null);
        const expected = next.get(partition) ?? 0n;
        if (message.offset !== expected) wrong.push(`${partition}: ${message.offset} where ${expected} was next`);
        next.set(partition, message.offset + 1n);
        await sleep(5);
        flight.leave(partition, null);
        handled++;
      },
    });
    await until(
      "every record with ordering 'partition'",
      whileRunning(r, () => handled >= PARTITIONS * PER),
    );
    await c.close();
    await r.done;
    assert.equal(wrong, [], 'each partition in offset order, each record once');
    assert.is(flight.maxPerPartition, 1, 'never two records of one partition at once');
    assert.is(flight.max, PARTITIONS, `partitions handled at the same time: at most ${flight.max} of ${PARTITIONS} at once`);
  }
  // The defaults: 70 partitions, more than the 64 slots, a 50 ms handler (long enough for the
  // batches of 64 partitions to be in hand while the first ones run).
  {
    const PARTITIONS = 70;
    const PER = 3;
    const topic = await topicWith('default-order', PARTITIONS, () => range(PER).map((i) => ({ key: `k${i}`, value: `${i}` })));
    const c = env.consumer();
    c.assign(range(PARTITIONS).map((partition) => ({ topic, partition, offset: 'earliest' as const })));
    const flight = new Flight();
    const next = new Map<number, bigint>();
    const wrong: string[] = [];
    let handled = 0;
    let maxConcurrency = 0;
    const r = started(c, {
      eachMessage: async ({ partition, message }) => {
        flight.enter(partition, null);
        maxConcurrency = c.metrics().processing.maxConcurrency;
        const expected = next.get(partition) ?? 0n;
        if (message.offset !== expected) wrong.push(`${partition}: ${message.offset} where ${expected} was next`);
        next.set(partition, message.offset + 1n);
        await sleep(50);
        flight.leave(partition, null);
        handled++;
      },
    });
    await until(
      'every record with the default ordering',
      whileRunning(r, () => handled >= PARTITIONS * PER),
    );
    await c.close();
    await r.done;
    assert.equal(wrong, [], 'each partition in offset order, each record once');
    assert.is(flight.maxPerPartition, 1, 'the default ordering: never two records of one partition at once');
    assert.is(maxConcurrency, 64, 'metrics().processing.maxConcurrency: the default 64');
    assert.is(flight.max, 64, `the default maxConcurrency: at most ${flight.max} records in flight over ${PARTITIONS} partitions, expected exactly 64`);
  }
});

test('a record that fails is retried after a backoff and holds only its key: the rest of its partition goes on', async () => {
  const RECORDS = 300;
  // Key K: offsets 5, 55, 105, ...; every other record has a key of its own, and there are more of
  // them than slots: they are taken from the partition while K's first record waits for its retries.
  const FAILING = 5n;
  const ofK = (i: number) => i % 50 === 5;
  const topic = await topicWith('retry-key', 1, () => range(RECORDS).map((i) => ({ key: ofK(i) ? 'K' : `o${i}`, value: `${i}` })));
  const c = env.consumer({ retryBackoffMs: 100, retryBackoffMaxMs: 1_000 });
  c.assign([{ topic, partition: 0, offset: 'earliest' }]);
  // One clock for every event, so that "before" is exact.
  let clock = 0;
  const startedAt = new Map<bigint, number[]>();
  const finishedAt = new Map<bigint, number>();
  let attempts = 0;
  const r = started(c, {
    ordering: 'key',
    maxConcurrency: 16,
    eachMessage: async ({ message }) => {
      const o = message.offset;
      startedAt.set(o, [...(startedAt.get(o) ?? []), clock++]);
      await sleep(2);
      if (o === FAILING && ++attempts <= 3) throw new Error(`attempt ${attempts} fails`);
      finishedAt.set(o, clock++);
    },
  });
  await until(
    'every record finished',
    whileRunning(r, () => finishedAt.size >= RECORDS),
  );
  const processing = c.metrics().processing;
  await c.close();
  await r.done;
  const done = finishedAt.get(FAILING)!;
  assert.is(startedAt.get(FAILING)!.length, 4, 'the failing record handled 4 times: 3 failures, then success');
  const laterSameKey = range(RECORDS).filter((i) => i > Number(FAILING) && ofK(i));
  const laterOtherKeys = range(RECORDS).filter((i) => i > Number(FAILING) && !ofK(i));
  const earlyOfKey = laterSameKey.filter((i) => startedAt.get(BigInt(i))![0]! < done);
  assert.equal(earlyOfKey, [], `records of the failing key started before it succeeded`);
  const beforeIt = laterOtherKeys.filter((i) => finishedAt.get(BigInt(i))! < done);
  // The three failures take 100 + 200 + 400 ms of backoff; the ~290 records after it of other keys
  // take ~50 ms at 16 at once: all of them finish meanwhile.
  assert.is(beforeIt.length, laterOtherKeys.length, `records of other keys after the failing one finished before its success: ${beforeIt.length} of ${laterOtherKeys.length}`);
  for (const [o, s] of startedAt) if (o !== FAILING) assert.is(s.length, 1, `record ${o} handled once`);
  assert.ok(processing.retried >= 3, `processing.retried ${processing.retried}`);
});

test("onFailure 'skip': onSkip gets the record and the error, and the record counts as finished (committed per ConsumerGroupCommand)", async () => {
  const RECORDS = 50;
  const SKIPPED = 10n;
  const topic = await topicWith('skip', 1, () => range(RECORDS).map((i) => ({ key: `k${i}`, value: `${i}` })));
  const groupId = `skip-${run}`;
  const c = env.consumer({ groupId });
  await c.subscribe({ topics: [topic] });
  const thrown = new Error('record 10 is poison');
  const skips: { offset: bigint; error: unknown }[] = [];
  const handled = new Set<bigint>();
  let attempts = 0;
  const r = started(c, {
    ordering: 'key',
    maxConcurrency: 8,
    onFailure: 'skip',
    onSkip: async (record: ConsumerRecord<string, string>, error: unknown) => {
      await sleep(5);
      skips.push({ offset: record.offset, error });
    },
    eachMessage: async ({ message }) => {
      await sleep(1);
      if (message.offset === SKIPPED) {
        attempts++;
        throw thrown;
      }
      handled.add(message.offset);
    },
  });
  await until(
    'every record handled or skipped',
    whileRunning(r, () => handled.size === RECORDS - 1 && skips.length === 1),
  );
  await sleep(100);
  await c.commitSync();
  const processing = c.metrics().processing;
  await c.close();
  await r.done;
  assert.is(skips.length, 1);
  assert.is(skips[0]!.offset, SKIPPED, 'onSkip got the failed record');
  assert.ok(skips[0]!.error === thrown, 'onSkip got the error the handler threw');
  assert.is(attempts, 1, 'a skipped record is not retried');
  assert.is(processing.skipped, 1);
  assert.is(await committed(groupId, topic), BigInt(RECORDS), 'committed offset per ConsumerGroupCommand: the log end, the skipped record included');
});

test("onFailure 'stop': run() rejects with the error and nothing past the failed record is committed (ConsumerGroupCommand)", async () => {
  const RECORDS = 60;
  const FAILING = 10n;
  const topic = await topicWith('stop', 1, () => range(RECORDS).map((i) => ({ key: `k${i}`, value: `${i}` })));
  const groupId = `stop-${run}`;
  const c = env.consumer({ groupId });
  await c.subscribe({ topics: [topic] });
  const thrown = new Error('record 10 failed');
  let clock = 0;
  const startedAt = new Map<bigint, number>();
  const finished = new Set<bigint>();
  const rejection = await (c as Consumer<string, string>)
    .run({
      ordering: 'key',
      maxConcurrency: 16,
      onFailure: 'stop',
      eachMessage: async ({ message }) => {
        startedAt.set(message.offset, clock++);
        // Records after it finish first (out of order), then it fails.
        await sleep(message.offset === FAILING ? 50 : 1);
        if (message.offset === FAILING) throw thrown;
        finished.add(message.offset);
      },
    })
    .then(
      () => undefined,
      (err: unknown) => err,
    );
  const rejectedAt = clock++;
  assert.ok(rejection === thrown, 'run() rejects with the error the handler threw');
  assert.equal(
    [...startedAt].filter(([, t]) => t > rejectedAt).map(([o]) => o),
    [],
    'nothing started after run() rejected',
  );
  assert.ok(
    [...finished].some((o) => o > FAILING),
    'records after the failed one finished first (the case where a commit could go past it)',
  );
  await c.close();
  assert.is(await committed(groupId, topic), FAILING, 'committed offset per ConsumerGroupCommand: the failed record, not past it');
});

/** A concurrent-member.js child process and what it reports. */
class Child {
  readonly events: Record<string, unknown>[] = [];
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
  stderr = '';
  private buffer = '';

  constructor(options: Record<string, unknown>) {
    this.child = spawn(process.execPath, [join(here, 'fixtures', 'concurrent-member.js'), JSON.stringify(options)], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child.stdout!.on('data', (chunk: Buffer) => {
      this.buffer += chunk.toString();
      let i: number;
      while ((i = this.buffer.indexOf('\n')) >= 0) {
        const line = this.buffer.slice(0, i);
        this.buffer = this.buffer.slice(i + 1);
        if (line.startsWith('{')) this.events.push(JSON.parse(line) as Record<string, unknown>);
      }
    });
    this.child.stderr!.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    this.exited = new Promise((resolve) => this.child.on('exit', () => resolve()));
  }

  async waitFor(what: string, pred: (e: Record<string, unknown>) => boolean, ms = 60_000): Promise<Record<string, unknown>> {
    const deadline = Date.now() + ms;
    for (;;) {
      const e = this.events.find(pred);
      if (e) return e;
      if (this.child.exitCode !== null) throw new Error(`the member exited (${this.child.exitCode}) before ${what}; stderr: ${this.stderr.slice(-2000)}`);
      if (Date.now() > deadline) throw new Error(`no ${what} within ${ms} ms; stderr: ${this.stderr.slice(-2000)}`);
      await sleep(20);
    }
  }

  async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await this.exited;
  }
}

/** Committed offsets and metadata of `groupId`, read by Kafka's Java Admin (ReadCommitted.java). */
async function readCommitted(groupId: string, compiled: Promise<string>): Promise<{ topic: string; partition: number; offset: bigint; metadata: string | null }[]> {
  const dist = env.kafka.dist;
  const result = await runTool(dist, 'ReadCommitted', [env.kafka.bootstrap, groupId], { extraClasspath: [await compiled], timeoutMs: 120_000, heapMb: 256, label: `read committed ${groupId}` });
  assert.is(result.code, 0, `ReadCommitted failed: ${result.stderr.slice(-2000)}`);
  return result.stdout
    .split('\n')
    .map((line) => line.split('\t'))
    .filter((f) => f[0] === groupId && f.length === 5)
    .map((f) => ({ topic: f[1]!, partition: Number(f[2]), offset: BigInt(f[3]!), metadata: f[4] === '-' ? null : Buffer.from(f[4]!, 'base64').toString('utf8') }));
}

test('SIGKILL after out-of-order completions: the commit carries the finished records as metadata, and only the unfinished ones come again', async () => {
  // Neither ConsumerGroupCommand (kafka-consumer-groups) nor any other shell tool of Kafka prints a
  // commit's metadata; the Java Admin's listConsumerGroupOffsets does: ReadCommitted.java.
  const compiled = compileJava(READ_COMMITTED, { classpath: env.kafka.dist.classpath });
  compiled.catch(() => {});
  const RECORDS = 400;
  const KEYS = 40;
  // Both hang for ever; with ordering 'key' their keys' later records wait behind them.
  const X = 50;
  const ALSO_STUCK = 123;
  const topic = await topicWith('crash', 1, () => range(RECORDS).map((i) => ({ key: `k${i % KEYS}`, value: `${i}` })));
  const groupId = `crash-${run}`;
  const stuck = (o: number) => (o >= X && o % KEYS === X % KEYS) || (o >= ALSO_STUCK && o % KEYS === ALSO_STUCK % KEYS);
  const finishBeyondX = range(RECORDS).filter((o) => o > X && !stuck(o));
  const child = new Child({
    bootstrap: env.kafka.bootstrap,
    groupId,
    topic,
    hang: [String(X), String(ALSO_STUCK)],
    maxConcurrency: 64,
    sessionTimeoutMs: 6_000,
    autoCommitIntervalMs: 200,
  });
  env.track({ close: () => child.kill() });
  const offsetsOf = (metadata: unknown) => {
    const d = decodeFinished(metadata as string | null);
    return d.kind === 'finished' ? d.offsets.map(Number) : [];
  };
  // Once everything that can finish has, the commit stops changing: killed after a commit with
  // the whole of it (and a few more intervals, in which nothing is left to commit).
  await child.waitFor('a commit with metadata of every record that can finish', (e) => e.ev === 'commit' && offsetsOf(e.metadata).length === finishBeyondX.length);
  await sleep(600);
  await child.kill();

  const events = child.events;
  let lastCommitAt = events.length - 1;
  while (lastCommitAt >= 0 && events[lastCommitAt]!.ev !== 'commit') lastCommitAt--;
  const lastCommit = events[lastCommitAt]!;
  const handledAsOfCommit = events
    .slice(0, lastCommitAt)
    .filter((e) => e.ev === 'handled')
    .map((e) => Number(e.o));
  const finishedBeyond = handledAsOfCommit.filter((o) => o > X).sort((a, b) => a - b);

  // (a) What the broker holds, read back by Kafka's Java client and decoded.
  const rows = await readCommitted(groupId, compiled);
  assert.is(rows.length, 1, `one committed partition: ${rows.map((w) => `${w.topic}-${w.partition}@${w.offset} ${w.metadata}`).join(', ')}`);
  const row = rows[0]!;
  assert.is(row.offset, BigInt(X), 'committed offset: the record that hangs');
  assert.is(lastCommit.offset, String(X));
  assert.is(row.metadata, lastCommit.metadata, 'the metadata is that of the last commit the member reported');
  const decoded = decodeFinished(row.metadata);
  assert.is(decoded.kind, 'finished', `metadata ${row.metadata} decodes`);
  if (decoded.kind !== 'finished') return;
  assert.is(decoded.base, BigInt(X));
  assert.equal(decoded.offsets.map(Number), finishedBeyond, 'the metadata lists exactly the records the member had finished beyond the committed offset');
  assert.equal(finishedBeyond, finishBeyondX, 'the member had finished every record not held behind a hung one');

  // (b) The next member of the group gets exactly the rest.
  const again = range(RECORDS).filter((o) => o >= X && !decoded.offsets.includes(BigInt(o)));
  const c = env.consumer({ groupId });
  await c.subscribe({ topics: [topic] });
  const got: number[] = [];
  const r = started(c, {
    ordering: 'key',
    maxConcurrency: 64,
    eachMessage: async ({ message }) => {
      got.push(Number(message.offset));
    },
  });
  // The dead member's session (6 s) expires before the group moves its partition.
  await until(
    'the unfinished records delivered to the next member',
    whileRunning(r, () => got.length >= again.length),
    40_000,
  );
  await sleep(500);
  const processing = c.metrics().processing;
  await c.close();
  await r.done;
  assert.equal(
    [...got].sort((a, b) => a - b),
    again,
    'delivered again: the hung records and those held behind them, nothing finished',
  );
  assert.is(processing.alreadyFinished, decoded.offsets.length, 'processing.alreadyFinished: the records the metadata carried');
  console.log(`  committed ${row.offset} + ${decoded.offsets.length} finished in ${row.metadata!.length} B of metadata; ${again.length} delivered again`);
});

test('commit metadata written by another client, or a kwire encoding garbled, is ignored (logged once) and every record from the offset comes', async () => {
  const PARTITIONS = 4;
  const PER = 20;
  const N = 5n;
  const topic = await topicWith('foreign', PARTITIONS, () => range(PER).map((i) => ({ key: `k${i}`, value: `${i}` })));
  const ours = encodeFinished(N, [N + 1n, N + 3n])!;
  /** `s` with the char at `i` changed (base64url and digits alike stay in the alphabet). */
  const garble = (s: string, i: number) => `${s.slice(0, i)}${s[i] === 'A' ? 'B' : 'A'}${s.slice(i + 1)}`;
  const commitFirst = async (groupId: string, metadata: (p: number) => string) => {
    const setter = env.consumer({ groupId });
    await setter.commitSync(range(PARTITIONS).map((partition) => ({ topic, partition, offset: N, metadata: metadata(partition) })));
    await setter.close();
  };
  const readAll = async (groupId: string, expected: number) => {
    const log = capturingLogger();
    const c = env.consumer({ groupId, logger: log.logger });
    await c.subscribe({ topics: [topic] });
    const got: string[] = [];
    const r = started(c, { ordering: 'key', eachMessage: async ({ partition, message }) => void got.push(tp(partition, message.offset)) });
    await until(
      `${expected} records in group ${groupId}`,
      whileRunning(r, () => got.length >= expected),
    );
    await sleep(300);
    const alreadyFinished = c.metrics().processing.alreadyFinished;
    await c.close();
    await r.done;
    return { got: [...got].sort(), lines: log.lines, alreadyFinished };
  };
  const from = (first: bigint, skip: bigint[] = []) =>
    range(PARTITIONS)
      .flatMap((p) =>
        range(PER)
          .filter((o) => BigInt(o) >= first && !skip.includes(BigInt(o)))
          .map((o) => tp(p, o)),
      )
      .sort();

  // The control: kwire's own encoding is trusted, its records are not handed out again.
  const control = `foreign-control-${run}`;
  await commitFirst(control, () => ours);
  const trusted = await readAll(control, from(N, [N + 1n, N + 3n]).length);
  assert.equal(trusted.got, from(N, [N + 1n, N + 3n]), "kwire's metadata: the records it marks finished are skipped");
  assert.is(trusted.alreadyFinished, 2 * PARTITIONS);

  // Partitions 0 and 1: metadata of another client; 2 and 3: ours with one char changed (in the
  // payload, in the check).
  const groupId = `foreign-${run}`;
  const garbled = [garble(ours, ours.length - 9), garble(ours, ours.length - 2)];
  for (const g of garbled) assert.is(decodeFinished(g).kind, 'corrupt', `${g} decodes as corrupt`);
  await commitFirst(groupId, (p) => (p < 2 ? 'some other client' : garbled[p - 2]!));
  const ignored = await readAll(groupId, from(N).length);
  assert.equal(ignored.got, from(N), 'every record from the committed offset, each once');
  assert.is(ignored.alreadyFinished, 0);
  const foreign = ignored.lines.filter((l) => l.startsWith('warn commit metadata not written by kwire'));
  const corrupt = ignored.lines.filter((l) => l.startsWith('warn commit metadata of finished records does not check out'));
  assert.is(foreign.length, 1, `one warn line for foreign metadata (on 2 partitions): ${JSON.stringify(ignored.lines)}`);
  assert.is(corrupt.length, 1, `one warn line for garbled metadata (on 2 partitions): ${JSON.stringify(ignored.lines)}`);
});

test('close() with records in flight: waits for them, commits them; a handler that never settles is reported and not committed', async () => {
  // Part 1: 32 records at a time that take 300 ms each.
  {
    const topic = await topicWith('close-wait', 1, () => range(200).map((i) => ({ key: `k${i}`, value: `${i}` })));
    const groupId = `close-wait-${run}`;
    const c = env.consumer({ groupId });
    await c.subscribe({ topics: [topic] });
    const startedOffsets = new Set<number>();
    let running = 0;
    let closing = false;
    let startedWhileClosing = 0;
    const r = started(c, {
      ordering: 'unordered',
      maxConcurrency: 32,
      eachMessage: async ({ message }) => {
        if (closing) startedWhileClosing++;
        startedOffsets.add(Number(message.offset));
        running++;
        await sleep(300);
        running--;
      },
    });
    await until(
      '32 records in flight',
      whileRunning(r, () => running >= 32),
    );
    closing = true;
    const t0 = performance.now();
    const result = await c.close({ timeoutMs: 10_000 });
    const ms = performance.now() - t0;
    await r.done;
    assert.is(running, 0, 'close() returned after every handler under way settled');
    assert.equal(result.inFlight, [], 'CloseResult.inFlight: nothing');
    assert.is(startedWhileClosing, 0, 'nothing started once close() was called');
    assert.ok(ms < 5_000, `close() took ${Math.round(ms)} ms`);
    let firstNeverStarted = 0;
    while (startedOffsets.has(firstNeverStarted)) firstNeverStarted++;
    assert.ok(firstNeverStarted >= 32);
    // Every record started was finished: the commit point is the first one never started.
    assert.is(await committed(groupId, topic), BigInt(firstNeverStarted), 'committed offset per ConsumerGroupCommand: the first record never started');
  }
  // Part 2: the same, one record's handler never settles.
  {
    const HUNG = 5n;
    const topic = await topicWith('close-hung', 1, () => range(100).map((i) => ({ key: `k${i}`, value: `${i}` })));
    const groupId = `close-hung-${run}`;
    const c = env.consumer({ groupId });
    await c.subscribe({ topics: [topic] });
    let running = 0;
    const r = started(c, {
      ordering: 'key',
      maxConcurrency: 32,
      eachMessage: async ({ message }) => {
        running++;
        if (message.offset === HUNG) await new Promise(() => {});
        await sleep(300);
        running--;
      },
    });
    await until(
      '32 records in flight',
      whileRunning(r, () => running >= 32),
    );
    const t0 = performance.now();
    const result = await c.close({ timeoutMs: 4_000 });
    const ms = performance.now() - t0;
    await r.done;
    assert.ok(ms < 4_500, `close({ timeoutMs: 4000 }) took ${Math.round(ms)} ms`);
    assert.equal(result.inFlight, [{ topic, partition: 0, offset: HUNG }], 'CloseResult.inFlight: the hung record, and only it');
    assert.is(running, 1, 'every other handler settled');
    const offset = await committed(groupId, topic);
    assert.ok(offset !== null && offset <= HUNG, `committed ${offset} per ConsumerGroupCommand: not past the hung record ${HUNG}`);
  }
});

test("a second member joins mid-run (cooperative-sticky, ordering 'key'): every record once, nothing of a revoked partition starts after its revocation", async () => {
  // Two keys per partition: at most 8 records in flight, under maxConcurrency 64, so the member
  // takes batches (of 50) of every partition, and a revoked partition has records in hand, waiting
  // for their key, when it goes (~5 s of work in all: a rebalance slower than that on a loaded
  // machine would find A done with every partition it gives up).
  const PARTITIONS = 4;
  const PER = 1_000;
  const KEYS = 2;
  const topic = await topicWith('rebalance', PARTITIONS, (p) => range(PER).map((i) => ({ key: `p${p}k${i % KEYS}`, value: `${Math.floor(i / KEYS)}` })), 50);
  const groupId = `rebalance-${run}`;
  const config = { groupId, partitionAssignmentStrategy: ['cooperative-sticky'], heartbeatIntervalMs: 500, sessionTimeoutMs: 10_000, autoCommitIntervalMs: 1_000 };
  let clock = 0;
  const starts: { member: string; at: number; partition: number; offset: bigint; key: string; seq: number }[] = [];
  /** Per member, per partition: when its revocation listener ran, and the 'revoked' event came. */
  const revokedAt = new Map<string, Map<number, number>>();
  const revokedEventAt = new Map<string, Map<number, number>>();
  const inFlightAtRevocation: string[] = [];
  // close() revokes what is left too: only the revocations of the rebalance count.
  let closing = false;
  const flights = new Map<string, Flight>();
  const member = async (name: string) => {
    const c = env.consumer(config);
    const flight = new Flight();
    flights.set(name, flight);
    revokedAt.set(name, new Map());
    revokedEventAt.set(name, new Map());
    c.on('revoked', ({ partitions }) => {
      if (!closing) for (const p of partitions) revokedEventAt.get(name)!.set(p.partition, clock++);
    });
    await c.subscribe(
      { topics: [topic] },
      {
        onPartitionsRevoked: (partitions) => {
          if (closing) return;
          for (const p of partitions) {
            revokedAt.get(name)!.set(p.partition, clock++);
            if (flight.of(p.partition) > 0) inFlightAtRevocation.push(`${name}: ${flight.of(p.partition)} of partition ${p.partition}`);
          }
        },
      },
    );
    const r = started(c, {
      ordering: 'key',
      maxConcurrency: 64,
      eachMessage: async ({ partition, message }) => {
        starts.push({ member: name, at: clock++, partition, offset: message.offset, key: message.key!, seq: Number(message.value) });
        flight.enter(partition, message.key);
        await sleep(10);
        flight.leave(partition, message.key);
      },
    });
    return { c, r };
  };
  const a = await member('A');
  await until(
    'A under way',
    whileRunning(a.r, () => starts.length >= 300),
  );
  const b = await member('B');
  const distinct = () => new Set(starts.map((s) => tp(s.partition, s.offset))).size;
  await until(
    'every record handled by A or B',
    whileRunning(a.r, () => {
      if (b.r.error() !== undefined) throw b.r.error();
      return distinct() >= PARTITIONS * PER;
    }),
  );
  await sleep(300);
  closing = true;
  await Promise.all([a.c.close(), b.c.close()]);
  await Promise.all([a.r.done, b.r.done]);

  const counts = tally(starts.map((s) => tp(s.partition, s.offset)));
  const duplicates = [...counts].filter(([, n]) => n > 1).map(([k, n]) => `${k} x${n}`);
  assert.is(counts.size, PARTITIONS * PER, 'every record handled');
  assert.equal(duplicates, [], 'no record handled twice: a clean rebalance commits what was finished, metadata included');
  const moved = [...revokedAt.get('A')!.keys()].filter((p) => revokedEventAt.get('A')!.has(p));
  assert.ok(moved.length > 0, 'A gave partitions up to B');
  for (const p of moved) {
    const cut = revokedAt.get('A')!.get(p)!;
    const late = starts.filter((s) => s.member === 'A' && s.partition === p && s.at > cut);
    assert.equal(
      late.map((s) => s.offset),
      [],
      `records of partition ${p} started in A after its revocation`,
    );
    const lateOfEvent = starts.filter((s) => s.member === 'A' && s.partition === p && s.at > revokedEventAt.get('A')!.get(p)!);
    assert.is(lateOfEvent.length, 0);
    assert.ok(
      starts.some((s) => s.member === 'A' && s.partition === p),
      `A handled records of partition ${p} before it went`,
    );
    // Records of p that A had taken but not started are dropped at the revocation: B gets them.
    assert.ok(
      starts.some((s) => s.member === 'B' && s.partition === p),
      `B handled records of partition ${p} (the revocation came while A still had work there)`,
    );
  }
  assert.equal(inFlightAtRevocation, [], 'records of a revoked partition in flight when its revocation listener ran');
  // Per key, over both members (in the order the handlers started): the sequence goes up.
  const lastSeq = new Map<string, number>();
  const outOfOrder: string[] = [];
  for (const s of starts) {
    const last = lastSeq.get(s.key) ?? -1;
    if (s.seq <= last) outOfOrder.push(`${s.key}: ${s.seq} (${s.member}) after ${last}`);
    lastSeq.set(s.key, s.seq);
  }
  assert.equal(outOfOrder.slice(0, 10), [], 'per key order over both members');
  for (const f of flights.values()) assert.is(f.maxPerKey, 1);
  const byB = starts.filter((s) => s.member === 'B').length;
  const aOf = (p: number) => starts.filter((s) => s.member === 'A' && s.partition === p).length;
  console.log(`  A handled ${starts.length - byB}, B ${byB}; A gave up partitions ${moved.map((p) => `${p} (after ${aOf(p)} of its records)`).join(', ')}`);
});

test.run();
