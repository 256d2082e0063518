// The chaos test's oracle on histories written by hand: a clean one passes, and each rule fails on
// the history that breaks it (a check that cannot fail would prove nothing).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { checkChaos, type OracleInput } from '../integration/chaos/oracle.js';

const close = (t: number, signalledAt: number, extra: Record<string, unknown> = {}) =>
  `X ${t} ${JSON.stringify({ durationMs: t - signalledAt, timedOut: false, leftGroup: true, committed: [], uncommitted: [], signalledAt, ...extra })}`;

/** Member 0 reads partition 0 (offsets 0-9), commits 5 then 10; member 1 owns nothing; both close. */
function clean(): { logs: string[][]; input: Omit<OracleInput, 'logs'> } {
  const m0 = ['S 1000 11', 'A 1001 0'];
  for (let o = 0; o < 10; o++) m0.push(`P ${1010 + o} 0 ${o}`);
  m0.push('C 1100 0 5', 'C 1200 0 10', 'R 1295 0', close(1300, 1290));
  const m1 = ['S 1000 12', 'A 1001 -', close(1300, 1290)];
  return {
    logs: [m0, m1],
    input: {
      partitions: 1,
      highWatermarks: [10],
      groupOffsets: [{ partition: 0, committed: 10, logEndOffset: 10 }],
      faults: [],
      kills: [],
      frozen: [],
      terms: [
        { slot: 0, at: 1290 },
        { slot: 1, at: 1290 },
      ],
      sessionTimeoutMs: 100,
      closeBudgetMs: 50,
      progressWithinMs: 60,
    },
  };
}

function check(logs: string[][], input: Omit<OracleInput, 'logs'>) {
  return checkChaos({ ...input, logs: logs.map((l) => `${l.join('\n')}\n`) });
}

function violates(rule: string, logs: string[][], input: Omit<OracleInput, 'logs'>) {
  const r = check(logs, input);
  assert.ok(
    r.violations.some((v) => v.startsWith(rule)),
    `expected a ${rule} violation, got: ${r.violations.join('; ') || 'none'}`,
  );
  return r;
}

test('a clean history passes', () => {
  const { logs, input } = clean();
  const r = check(logs, input);
  assert.equal(r.violations, []);
  assert.is(r.processed, 10);
  assert.is(r.unique, 10);
  assert.is(r.commits, 2);
  assert.equal(
    r.closes.map((c) => c.durationMs),
    [10, 10],
  );
});

test('(1) an offset below the high watermark never processed', () => {
  const { logs, input } = clean();
  logs[0] = logs[0]!.filter((l) => l !== 'P 1017 0 7');
  violates('(1)', logs, input);
});

test('(2) a commit before the records below it were processed', () => {
  const { logs, input } = clean();
  logs[0] = logs[0]!.map((l) => (l === 'C 1100 0 5' ? 'C 1012 0 5' : l));
  violates('(2)', logs, input);
});

test('(3) a commit that goes down, and a group that does not end at the high watermark', () => {
  const a = clean();
  a.logs[0]!.splice(a.logs[0]!.indexOf('R 1295 0'), 0, 'C 1250 0 8');
  violates('(3)', a.logs, a.input);
  const b = clean();
  b.input = { ...b.input, groupOffsets: [{ partition: 0, committed: 9, logEndOffset: 10 }] };
  violates('(3)', b.logs, b.input);
});

test('(4) a duplicate below the committed offset; one above it is only counted, with its cause', () => {
  const { logs, input } = clean();
  // Member 1 gets the partition after member 0 revoked it (member 0 ends at 1295 here).
  const bad = [...logs];
  bad[1] = ['S 1000 12', 'A 1296 0', 'P 1297 0 3', close(1300, 1290)];
  violates('(4)', bad, input);
  const ok = [...logs];
  ok[0] = logs[0]!.filter((l) => l !== 'C 1200 0 10');
  ok[0].splice(ok[0].indexOf('R 1295 0'), 0, 'C 1290 0 8');
  ok[1] = ['S 1000 12', 'A 1296 0', 'P 1297 0 8', 'P 1298 0 9', 'C 1299 0 10', close(1300, 1290)];
  const rst = { kind: 'proxy-rst', target: 'member 0', start: 1250, end: 1250 };
  const r = check(ok, { ...input, faults: [rst] });
  assert.equal(r.violations, []);
  assert.equal(r.duplicatesByCause, { 'after proxy-rst': 2 });
  // A broker still down when the duplicates come is in force, with the one-shot fault's aftermath not counted.
  const down = { kind: 'broker-kill-coordinator', target: 'node 1', start: 1200, end: 1400 };
  assert.equal(check(ok, { ...input, faults: [rst, down] }).duplicatesByCause, { 'broker-kill-coordinator': 2 });
});

test('(5) two owners at once beyond the session timeout, unless the old one was frozen', () => {
  const { logs, input } = clean();
  const two = [...logs];
  two[1] = ['S 1000 12', 'A 1050 0', 'R 1290 0', close(1300, 1290)];
  violates('(5)', two, input);
  // The same overlap while member 0 was SIGSTOPped from 1040 to 1250: 45 ms awake, within 100.
  const r = check(two, { ...input, frozen: [{ slot: 0, from: 1040, to: 1250 }] });
  assert.ok(!r.violations.some((v) => v.startsWith('(5)')), r.violations.join('; '));
  // Processing a partition never assigned.
  const never = [...logs];
  never[1] = ['S 1000 12', 'P 1200 0 4', close(1300, 1290)];
  violates('(5)', never, input);
});

test('(6) an offset out of order within one ownership interval', () => {
  const { logs, input } = clean();
  logs[0] = logs[0]!.map((l) => (l === 'P 1015 0 5' ? 'P 1015 0 6' : l === 'P 1016 0 6' ? 'P 1016 0 5' : l));
  violates('(6)', logs, input);
});

test('(7) no progress within the limit after a fault', () => {
  const { logs, input } = clean();
  // Offsets 5-9 come 200 ms after a fault at 1014; the limit is 60 ms.
  logs[0] = logs[0]!.map((l) => {
    const m = /^P (\d+) 0 (\d+)$/.exec(l);
    return m && Number(m[2]) >= 5 ? `P ${Number(m[1]) + 200} 0 ${m[2]}` : l;
  });
  logs[0] = logs[0].map((l) => (l === 'C 1100 0 5' ? 'C 1100 0 5' : l === 'C 1200 0 10' ? 'C 1230 0 10' : l));
  violates('(7)', logs, { ...input, faults: [{ kind: 'member-sigstop', target: 'member 0', start: 1014, end: 1100 }] });
});

test('close(): over its budget, or no result after a SIGTERM', () => {
  const { logs, input } = clean();
  logs[1] = ['S 1000 12', 'A 1001 -', close(1400, 1290)];
  violates('member 1: close() took', logs, input);
  const { logs: l2, input: i2 } = clean();
  l2[1] = ['S 1000 12', 'A 1001 -'];
  violates('member 1: no close() result', l2, i2);
});

test.run();
