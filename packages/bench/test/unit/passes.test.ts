// The steady-state pass loop (passes.ts): warm-up by count and by time, then exactly the measured passes.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { ClientReport } from '../../src/clients/common.js';
import { runPasses } from '../../src/passes.js';

const base = { bootstrap: 'x', topic: 't', partitions: 1, records: 10, mode: 'throughput' as const };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A pass that takes `ms` (the first `firstMs`) and reads every record. */
const passOf =
  (ms: number, firstMs = ms) =>
  async (index: number) => {
    await sleep(index === 0 ? firstMs : ms);
    return { records: 10 } as ClientReport;
  };

test('without warmupSeconds: warmupPasses warm-up passes, then the measured ones', async () => {
  const passes = await runPasses({ ...base, warmupPasses: 2, measuredPasses: 3 }, passOf(1));
  assert.equal(
    passes.map((p) => p.warmup),
    [true, true, false, false, false],
  );
  assert.equal(
    passes.map((p) => p.pass),
    [0, 1, 2, 3, 4],
  );
});

test('warmupSeconds: warm-up passes go on until that long after the first began', async () => {
  // 50 ms of a first pass, then 20 ms passes until 150 ms: about 5 more. How many depends on how
  // late the timers fire, so the rule is checked against when each pass began.
  const began: number[] = [];
  const pass = passOf(20, 50);
  const passes = await runPasses({ ...base, warmupPasses: 1, warmupSeconds: 0.15, measuredPasses: 3 }, (index) => {
    began.push(performance.now());
    return pass(index);
  });
  const warm = passes.filter((p) => p.warmup).length;
  assert.ok(warm >= 2, `warm-up went on past the one pass asked for: ${warm}`);
  // The loop reads its clock just before a pass begins: 2 ms of room either side for that.
  const since = (i: number) => began[i]! - began[0]!;
  for (let i = 1; i < warm; i++) assert.ok(since(i) < 152, `warm-up pass ${i} began ${since(i).toFixed(1)} ms after the first`);
  assert.ok(since(warm) >= 148, `the first measured pass began ${since(warm).toFixed(1)} ms after the first`);
  assert.is(passes.filter((p) => !p.warmup).length, 3, 'exactly the measured passes asked for');
  assert.ok(
    passes.slice(warm).every((p) => !p.warmup),
    'warm-up passes come first',
  );
});

test('warmupSeconds: a first pass as long as the warm-up is warm-up enough', async () => {
  const passes = await runPasses({ ...base, warmupPasses: 1, warmupSeconds: 0.05, measuredPasses: 2 }, passOf(5, 60));
  assert.equal(
    passes.map((p) => p.warmup),
    [true, false, false],
  );
});

test('a failed pass ends the loop, warm-up or measured', async () => {
  const passes = await runPasses({ ...base, warmupPasses: 1, warmupSeconds: 10, measuredPasses: 3 }, async (i) => ({ records: i === 2 ? 3 : 10 }) as ClientReport);
  assert.is(passes.length, 3);
  assert.ok(passes.every((p) => p.warmup));
});

test.run();
