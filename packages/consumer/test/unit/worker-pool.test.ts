// run({ worker }): the worker pool (src/run/worker-pool.ts, worker-entry.ts) without a broker.
// Records are ConsumerRecords as the fetcher makes them (fetched-fixture); the users' modules are
// small files written to a temporary folder. What a worker's handler saw comes back through the
// one channel a handler has, its error: an `Echo` error whose message is JSON.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { encodeRecordBatch, type RecordInput } from '@kwire/protocol';
import { ClosedError, UsageError } from '../../src/errors.js';
import { silentLogger } from '../../src/logger.js';
import type { ConsumerBatch, ConsumerRecord } from '../../src/records/index.js';
import { startWorkerPool, type WorkerPool } from '../../src/run/worker-pool.js';
import { fetchedFrom } from './fetched-fixture.js';

const dir = mkdtempSync(join(tmpdir(), 'kwire-worker-pool-'));

/** Writes a user's module; its path. */
function moduleFile(name: string, source: string): string {
  const file = join(dir, name);
  writeFileSync(file, source);
  return file;
}

/** A handler that answers with what it received (key, value and header values in hex). */
const ECHO = `
import { threadId } from 'node:worker_threads';
const hex = (b) => (b === null ? null : Buffer.from(b).toString('hex'));
export default function (r) {
  const e = new Error(JSON.stringify({
    topic: r.topic, partition: r.partition, offset: r.offset.toString(), offsetType: typeof r.offset, timestamp: r.timestamp,
    key: hex(r.key), value: hex(r.value), headers: r.headers.map(([k, v]) => [k, hex(v)]),
    isBuffer: r.value === null || Buffer.isBuffer(r.value), threadId,
  }));
  e.name = 'Echo';
  throw e;
}
`;

/** For a promise's fulfilment that should not be. */
function resolved(): never {
  assert.unreachable('it resolved');
  throw new Error('unreachable');
}

/** What an ECHO handler received. */
async function echo(pool: WorkerPool, record: ConsumerRecord, after?: () => void): Promise<Record<string, unknown>> {
  const handled = pool.handle(record);
  after?.();
  const err = await handled.then(resolved, (e: Error) => e);
  assert.is(err.name, 'Echo', err.stack);
  return JSON.parse(err.message);
}

/** One batch of ConsumerRecords over `records` from `baseOffset`; `bytes` is the memory they point into. */
function batchOf(records: RecordInput[], baseOffset = 0n, compression: 'none' | 'lz4' = 'none'): { batch: ConsumerBatch; bytes: Buffer } {
  const bytes = encodeRecordBatch(records, { baseOffset, compression });
  const { data } = fetchedFrom(bytes, { position: baseOffset, highWatermark: baseOffset + BigInt(records.length) });
  const batch = data.next(records.length)!;
  assert.is(batch.records.length, records.length);
  return { batch, bytes };
}

const resolving = moduleFile('resolves.mjs', 'export default async (r) => { await new Promise((done) => setTimeout(done, 5)); }\n');

test('a handler that resolves: handle() resolves; threads as asked, or availableParallelism() - 1', async () => {
  const pool = await startWorkerPool({ module: resolving, threads: 2 }, silentLogger);
  assert.is(pool.threads, 2);
  const { batch } = batchOf([{ value: 'a' }, { value: 'b' }, { value: 'c' }]);
  await Promise.all(batch.records.map((r) => pool.handle(r)));
  batch.release();
  await pool.close(1000);

  const byDefault = await startWorkerPool({ module: pathToFileURL(resolving) }, silentLogger);
  assert.is(byDefault.threads, Math.max(1, availableParallelism() - 1));
  await byDefault.close(1000);
});

test('the module as a file: URL string, as a path relative to the working directory, as an eachMessage export, as CommonJS', async () => {
  const named = moduleFile('named.mjs', 'export const eachMessage = async () => {};\nexport const other = 1;\n');
  const cjs = moduleFile('handler.cjs', 'module.exports = { eachMessage: async () => {} };\n');
  for (const module of [pathToFileURL(resolving).href, relative(process.cwd(), resolving), named, cjs]) {
    const pool = await startWorkerPool({ module, threads: 1 }, silentLogger);
    const { batch } = batchOf([{ value: 'a' }]);
    await pool.handle(batch.records[0]!);
    batch.release();
    await pool.close(1000);
  }
});

test("a handler that throws: handle() rejects with the worker's error, its name, message, stack and code", async () => {
  const file = moduleFile(
    'throws.mjs',
    `class PoisonError extends Error { name = 'PoisonError'; code = 'E_POISON'; }
     export default async (r) => {
       if (r.offset === 1n) throw new TypeError('cannot read ' + r.value.toString());
       if (r.offset === 2n) throw 'a string';
       if (r.offset === 3n) throw { reason: 42 };
       throw new PoisonError('poison at ' + r.offset);
     };\n`,
  );
  const pool = await startWorkerPool({ module: file, threads: 1 }, silentLogger);
  const { batch } = batchOf([{ value: 'zero' }, { value: 'one' }, { value: 'two' }, { value: 'three' }]);
  const [poison, type, text, object] = await Promise.all(batch.records.map((r) => pool.handle(r).then(resolved, (e: unknown) => e as Error & { code?: unknown })));
  batch.release();

  assert.instance(poison, Error);
  assert.is(poison!.name, 'PoisonError');
  assert.is(poison!.message, 'poison at 0');
  assert.is(poison!.code, 'E_POISON');
  assert.match(poison!.stack!, /PoisonError: poison at 0\n\s+at .*throws\.mjs/, "the stack is the worker's, pointing into the module");
  assert.is(type!.name, 'TypeError');
  assert.is(type!.message, 'cannot read one');
  assert.instance(text, Error);
  assert.is(text!.message, "the worker handler threw a non-Error: 'a string'");
  assert.is(object!.message, 'the worker handler threw a non-Error: { reason: 42 }');

  // The thread goes on after failures.
  const { batch: next } = batchOf([{ value: 'again' }], 4n);
  await pool.handle(next.records[0]!).then(resolved, (e: Error) => assert.is(e.message, 'poison at 4'));
  next.release();
  await pool.close(1000);
});

test('a module that is missing, does not load, or has no handler function: a UsageError naming the module and what was found', async () => {
  const cases: [string, RegExp][] = [
    [join(dir, 'missing.mjs'), /worker module file:\/\/.*\/missing\.mjs does not exist \(worker\.module is a path, relative to the working directory .*, or a file: URL\)/],
    [
      moduleFile('no-function.mjs', 'export default 42;\nexport const eachMessage = "not a function";\nexport const limit = 3;\n'),
      /worker module file:\/\/.*\/no-function\.mjs has no handler function: export one as default, or as eachMessage; it exports default \(number\), eachMessage \(string\), limit \(number\)/,
    ],
    [moduleFile('nothing.mjs', '// nothing\n'), /nothing\.mjs has no handler function: .* it exports nothing$/],
    [moduleFile('broken.mjs', 'throw new RangeError("no config at load");\n'), /worker module file:\/\/.*\/broken\.mjs could not be loaded: RangeError: no config at load/],
    [moduleFile('syntax.mjs', 'export default (r) => {\n'), /syntax\.mjs could not be loaded: SyntaxError/],
  ];
  for (const [module, message] of cases) {
    const err = await startWorkerPool({ module, threads: 2 }, silentLogger).then(
      async (pool) => {
        await pool.close(0);
        return resolved();
      },
      (e: unknown) => e,
    );
    assert.instance(err, UsageError);
    assert.match((err as Error).message, message);
  }
  for (const threads of [0, 1.5, -1]) {
    await startWorkerPool({ module: resolving, threads }, silentLogger).then(resolved, (e: unknown) => {
      assert.instance(e, UsageError);
      assert.match((e as Error).message, /worker\.threads must be a whole number of at least 1/);
    });
  }
  await startWorkerPool({ module: new URL('https://example.com/h.mjs') }, silentLogger).then(resolved, (e: unknown) => {
    assert.instance(e, UsageError);
    assert.match((e as Error).message, /worker\.module must be a path or a file: URL, got https:\/\/example\.com\/h\.mjs/);
  });
});

test("the record's place, timestamp, key, value and headers arrive exactly, though its memory is reused as soon as handle() returns", async () => {
  const pool = await startWorkerPool({ module: moduleFile('echo.mjs', ECHO), threads: 1 }, silentLogger);
  const every = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
  const big = Buffer.alloc(100_000, 0xa5);
  const records: RecordInput[] = [
    {
      key: 'k1',
      value: every,
      timestamp: 1_700_000_000_123,
      headers: [
        { key: 'h', value: Buffer.from([0, 1, 2]) },
        { key: 'none', value: null },
        { key: 'h', value: '' },
      ],
    },
    { key: null, value: null, timestamp: 1_700_000_000_124 },
    { key: '', value: big, timestamp: 1_700_000_000_125 },
  ];
  const base = 2n ** 40n + 7n;
  for (const compression of ['none', 'lz4'] as const) {
    const { batch, bytes } = batchOf(records, base, compression);
    const seen = [];
    for (const r of batch.records) seen.push(await echo(pool, r));
    // Again, releasing the batch and overwriting its bytes while the worker is on its way.
    const last = batchOf(records, base, compression);
    const overwritten = await echo(pool, last.batch.records[0]!, () => {
      last.batch.release();
      last.bytes.fill(0);
    });
    batch.release();
    bytes.fill(0);

    assert.equal(seen[0], {
      topic: 't',
      partition: 0,
      offset: base.toString(),
      offsetType: 'bigint',
      timestamp: 1_700_000_000_123,
      key: Buffer.from('k1').toString('hex'),
      value: every.toString('hex'),
      headers: [
        ['h', '000102'],
        ['none', null],
        ['h', ''],
      ],
      isBuffer: true,
      threadId: seen[0]!.threadId,
    });
    assert.equal(overwritten, seen[0], compression);
    assert.equal([seen[1]!.offset, seen[1]!.key, seen[1]!.value, seen[1]!.headers], [(base + 1n).toString(), null, null, []]);
    assert.equal([seen[2]!.key, (seen[2]!.value as string).length, seen[2]!.value === big.toString('hex')], ['', 200_000, true]);
  }
  await pool.close(1000);
});

test('a released record: handle() rejects (never throws) with the release error', async () => {
  const pool = await startWorkerPool({ module: resolving, threads: 1 }, silentLogger);
  const { batch } = batchOf([{ value: 'a' }]);
  const record = batch.records[0]!;
  batch.release();
  let handled: Promise<void> | undefined;
  assert.not.throws(() => {
    handled = pool.handle(record);
  });
  await handled!.then(resolved, (e: Error) => assert.is(e.name, 'RecordReleasedError'));
  await pool.close(1000);
});

test('close() waits for tasks under way, and with a hung handler ends within its timeout; handle() after close rejects', async () => {
  const slow = moduleFile('slow.mjs', 'export default () => new Promise((done) => setTimeout(done, 150));\n');
  const pool = await startWorkerPool({ module: slow, threads: 1 }, silentLogger);
  const { batch } = batchOf([{ value: 'a' }]);
  const handled = pool.handle(batch.records[0]!);
  batch.release();
  await pool.close(5000);
  await handled; // finished within close's time: resolved, not cut off

  for (const source of ['export default () => new Promise(() => {});\n', 'export default () => { for (;;); };\n']) {
    const hung = await startWorkerPool({ module: moduleFile(`hung-${source.length}.mjs`, source), threads: 2 }, silentLogger);
    const { batch: b } = batchOf([{ value: 'a' }, { value: 'b' }]);
    const pending = b.records.map((r) =>
      hung.handle(r).then(
        () => 'resolved',
        (e: unknown) => e,
      ),
    );
    b.release();
    await new Promise((done) => setTimeout(done, 50)); // both running
    const t0 = performance.now();
    await hung.close(300);
    const took = performance.now() - t0;
    assert.ok(took >= 290 && took < 1500, `close(300) took ${took.toFixed(0)} ms`);
    for (const outcome of await Promise.all(pending)) {
      assert.instance(outcome, ClosedError);
      assert.match((outcome as Error).message, /terminated this handler's thread after close\(\) waited 300 ms/);
    }
    const { batch: late } = batchOf([{ value: 'late' }]);
    await hung.handle(late.records[0]!).then(resolved, (e: unknown) => assert.instance(e, ClosedError));
    late.release();
    await hung.close(300); // again: nothing to do
  }
});

test('a thread that exits under a record: that record fails, the pool goes on with a new thread', async () => {
  const file = moduleFile('exits.mjs', 'export default (r) => { if (r.value.toString() === "exit") process.exit(3); };\n');
  const pool = await startWorkerPool({ module: file, threads: 1 }, silentLogger);
  const { batch } = batchOf([{ value: 'exit' }, { value: 'fine' }]);
  const [exited, fine] = batch.records.map((r) => pool.handle(r));
  batch.release();
  await exited!.then(resolved, (e: Error) => assert.match(e.message, /exit/i));
  await fine;
  await pool.close(1000);
});

test('a thread that fails outside a record (a stray timer of the module throws): logged, and a new thread takes the next record', async () => {
  // The timer fires 100 ms after the handler returned, so the failure is outside the record: with
  // 0 ms the thread can die before its answer is read, and the record fails instead (at-least-once
  // holds either way, but that is the other test's case).
  const file = moduleFile('stray.mjs', 'export default (r) => { if (r.value.toString() === "stray") setTimeout(() => { throw new Error("stray timer"); }, 100); };\n');
  const errors: [string, Record<string, unknown> | undefined][] = [];
  const pool = await startWorkerPool({ module: file, threads: 1 }, { ...silentLogger, error: (m, f) => errors.push([m, f]) });
  const { batch } = batchOf([{ value: 'stray' }]);
  await pool.handle(batch.records[0]!);
  batch.release();
  for (let i = 0; i < 500 && errors.length === 0; i++) await new Promise((done) => setTimeout(done, 10));
  assert.is(errors.length, 1);
  assert.match(errors[0]![0], /a worker thread failed outside a record/);
  assert.match(String(errors[0]![1]?.error), /stray timer/);
  const { batch: next } = batchOf([{ value: 'fine' }], 1n);
  await pool.handle(next.records[0]!);
  next.release();
  await pool.close(1000);
});

test('2 threads run 2 records at once: two 200 ms busy handlers overlap', async () => {
  const busy = moduleFile(
    'busy.mjs',
    `import { threadId } from 'node:worker_threads';
     export default () => {
       const start = performance.timeOrigin + performance.now();
       while (performance.timeOrigin + performance.now() < start + 200);
       const e = new Error(JSON.stringify({ threadId, start, end: performance.timeOrigin + performance.now() }));
       e.name = 'Echo';
       throw e;
     };\n`,
  );
  const pool = await startWorkerPool({ module: busy, threads: 2 }, silentLogger);
  const { batch } = batchOf([{ value: 'a' }, { value: 'b' }]);
  const t0 = performance.now();
  const [a, b] = await Promise.all(batch.records.map((r) => pool.handle(r).then(resolved, (e: Error) => JSON.parse(e.message) as { threadId: number; start: number; end: number })));
  const took = performance.now() - t0;
  batch.release();
  await pool.close(1000);
  assert.is.not(a!.threadId, b!.threadId);
  // Overlap is what proves it, and it holds on a loaded machine too, where a thread may start late
  // and the total time says little.
  assert.ok(a!.start < b!.end && b!.start < a!.end, `the two handlers did not overlap (${took.toFixed(0)} ms in all): ${JSON.stringify([a, b])}`);
});

test.after(() => rmSync(dir, { recursive: true, force: true }));

test.run();
