// The handler-bound family (issue 31): the per-key order check on made-up handler timelines, the
// run's verdict per setting, and the family's goals met, missed and not measured.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { HandlerCheck } from '../../src/clients/handler-check.js';
import { keyMatches, parseKeySeq } from '../../src/clients/handler-settings.js';
import { HANDLER_IO_VARIANTS, handlerCpu, handlerIo } from '../../src/plan.js';
import { issue31Goals } from '../../src/report/goals.js';
import { summarize } from '../../src/report/summarize.js';
import type { HandlerFigures, RunRecord } from '../../src/report/types.js';
import { handlerRun } from '../../src/scenarios/handler.js';

const bytes = (s: string) => new Uint8Array(Buffer.from(s));
const value = (key: number, seq: number) => bytes(`key-${String(key).padStart(4, '0')}|${seq}|ABCDEFGHIJ`);
const key = (k: number) => bytes(`key-${String(k).padStart(4, '0')}`);

test('parseKeySeq and keyMatches read "key-NNNN|seq|"', () => {
  assert.equal(parseKeySeq(value(17, 1234)), [17, 1234]);
  assert.equal(parseKeySeq(bytes('nonsense-value'))[0], -1);
  assert.ok(keyMatches(key(17), value(17, 0)));
  assert.not.ok(keyMatches(key(18), value(17, 0)));
});

/** A check over one partition of `n` records, fed (offset, key, seq, start, end) by hand. */
function run(records: [offset: number, key: number, seq: number, start: number, end: number][], target = records.length): HandlerFigures {
  const check = new HandlerCheck({ ends: [10], records: target, keys: 4, timeLimitMs: 60_000 });
  const open = records.map(([o, k, s, start]) => check.begin(0, o, key(k), value(k, s), 0, 1000 + start));
  for (const [i, r] of records.entries()) check.end(open[i]!, 1000 + r[4]);
  check.stop();
  return check.figures();
}

test('one key at a time in seq order: no violation', () => {
  const f = run([
    [0, 1, 0, 0, 5],
    [1, 2, 0, 0, 5],
    [2, 1, 1, 5, 10],
    [3, 2, 1, 6, 11],
  ]);
  assert.is(f.outOfOrder + f.overlaps, 0);
  assert.is(f.records, 4);
  assert.is(f.seconds, 0.011);
  assert.is(f.handlerP99Ms, 5);
});

test('a key started before its previous record ended is an overlap; a lower seq after a higher one is out of order', () => {
  const f = run([
    [0, 1, 0, 0, 5],
    [1, 1, 1, 3, 8],
    [2, 3, 1, 10, 15],
    [3, 3, 0, 16, 20],
  ]);
  assert.is(f.overlaps, 1);
  assert.is(f.outOfOrder, 1);
});

test('a record started twice is a duplicate, counted once; the count stops at the target', () => {
  const check = new HandlerCheck({ ends: [10], records: 2, keys: 4, timeLimitMs: 60_000 });
  const a = check.begin(0, 0, key(1), value(1, 0), 0, 1);
  assert.is(check.begin(0, 0, key(1), value(1, 0), 0, 2), -1);
  check.end(a, 3);
  check.end(check.begin(0, 1, key(2), value(2, 0), 0, 4), 5);
  assert.ok(check.done);
  assert.is(check.begin(0, 2, key(3), value(3, 0), 0, 6), -1);
  const f = check.figures();
  assert.is(f.duplicates, 1);
  assert.is(f.records, 2);
});

const io = handlerIo();
const figures = (over: Partial<HandlerFigures> = {}): HandlerFigures => ({
  records: io.records,
  seconds: 4,
  capped: false,
  outOfOrder: 0,
  overlaps: 0,
  duplicates: 0,
  badKeys: 0,
  handlerP50Ms: 5.2,
  handlerP99Ms: 9,
  e2eP50Ms: 1000,
  e2eP99Ms: 2000,
  ...over,
});
const variant = (id: string) => HANDLER_IO_VARIANTS.find((v) => v.id === id)!;

test('a run fails when it breaks the order its setting promises, not otherwise', () => {
  assert.is(handlerRun(io, variant('kwire@key-1024'), figures()).status, 'ok');
  assert.is(handlerRun(io, variant('kwire@key-1024'), figures({ overlaps: 3 })).status, 'failed');
  assert.is(handlerRun(io, variant('platformatic@hwp16'), figures({ overlaps: 3 })).status, 'ok');
  assert.is(handlerRun(io, variant('kafkajs@pcc12'), figures({ duplicates: 1 })).status, 'failed');
  // Short of the records: failed unless the time limit stopped it.
  assert.is(handlerRun(io, variant('kafkajs@pcc12'), figures({ records: 50_000 })).status, 'failed');
  const capped = handlerRun(io, variant('kafkajs@pcc12'), figures({ records: 54_000, seconds: 30, capped: true }));
  assert.is(capped.status, 'ok');
  assert.is(capped.recordsPerSec, 1800);
});

test("issue 31's goals: met, missed by how much, not measured", () => {
  const cpu = handlerCpu();
  const runs: RunRecord[] = [handlerRun(io, variant('kwire@key-1024'), figures({ seconds: 2.5 })), handlerRun(io, variant('java-parallel@key-1024'), figures({ seconds: 16 }))];
  let goals = issue31Goals(summarize(runs, [], [io, cpu]), [io, cpu]);
  const byId = (id: string) => goals.find((g) => g.id === id)!;
  assert.is(byId('handler-io-50k').met, true);
  assert.is(byId('handler-io-50k').value, 80_000);
  assert.is(byId('handler-io-order').met, true);
  assert.is(byId('handler-io-java').value, 6.4);
  assert.is(byId('handler-cpu-loop-5ms').met, null);
  runs[0] = handlerRun(io, variant('kwire@key-1024'), figures({ seconds: 5 }));
  goals = issue31Goals(summarize(runs, [], [io, cpu]), [io, cpu]);
  const again = byId('handler-io-50k');
  assert.is(again.met, false);
  assert.match(again.miss ?? '', 'missed by 20.0%');
  assert.equal(issue31Goals([], []), []);
});

test.run();
