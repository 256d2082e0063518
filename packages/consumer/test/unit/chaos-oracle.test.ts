// The chaos test's oracle on histories written by hand: a clean one passes, and each rule fails on
// the history that breaks it (a check that cannot fail would prove nothing).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { encodeFinished } from '../../src/internals.js';
import { checkChaos, finishedField, parseFinishedField, type OracleInput } from '../integration/chaos/oracle.js';

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

test('(10) a record started after the revocation began (V), or after the partition was lost', () => {
  const { logs, input } = clean();
  logs[0]!.splice(logs[0]!.indexOf('P 1015 0 5'), 0, 'V 1014 0');
  violates('(10)', logs, input);
  const lost = clean();
  lost.logs[0]!.splice(lost.logs[0]!.indexOf('P 1015 0 5'), 0, 'L 1014 0');
  violates('(10)', lost.logs, lost.input);
});

// The concurrent mode (ordering 'key'): B when a handler starts, P when it is about to resolve.
// Member 0 owns partition 0: offsets 0-5 with keys a b a c b a, handled as keyed concurrency
// allows (1 and 3 end before 0), commits 0 with 1 and 3 in the metadata, then 6; member 1 idle.
function keyed(): { logs: string[][]; input: Omit<OracleInput, 'logs'> } {
  const m0 = [
    'S 1000 11',
    'A 1001 0',
    'B 1010 0 0 a',
    'B 1010 0 1 b',
    'B 1011 0 3 c',
    'P 1015 0 1',
    'P 1016 0 3',
    'C 1020 0 0 1,3',
    'P 1021 0 0',
    'B 1022 0 2 a',
    'B 1022 0 4 b',
    'P 1025 0 4',
    'P 1030 0 2',
    'B 1031 0 5 a',
    'P 1035 0 5',
    'C 1100 0 6 -',
    'V 1290 0',
    'R 1295 0',
    close(1300, 1290),
  ];
  const m1 = ['S 1000 12', 'A 1001 -', close(1300, 1290)];
  return { logs: [m0, m1], input: { ...clean().input, highWatermarks: [6], groupOffsets: [{ partition: 0, committed: 6, logEndOffset: 6 }], ordering: 'key' } };
}

test('keyed: a clean concurrent history passes, and (6) does not apply', () => {
  const { logs, input } = keyed();
  const r = check(logs, input);
  assert.equal(r.violations, []);
  assert.is(r.processed, 6);
  assert.is(r.finished, 6);
  assert.is(r.commitsWithMetadata, 1);
  // The same history read as sequential breaks (6): 3 comes after 1.
  violates('(6)', logs, { ...input, ordering: 'partition' });
});

test('(8) per key: an offset started before a lower one, or while the previous one still runs', () => {
  const swap = keyed();
  const ren: Record<string, string> = { 'B 1010 0 0 a': 'B 1010 0 2 a', 'P 1021 0 0': 'P 1021 0 2', 'B 1022 0 2 a': 'B 1022 0 0 a', 'P 1030 0 2': 'P 1030 0 0' };
  swap.logs[0] = swap.logs[0]!.map((l) => ren[l] ?? l);
  const r = violates('(8)', swap.logs, swap.input);
  assert.ok(
    r.violations.some((v) => v.includes('key a: offset 0 started at 1022 after offset 2')),
    r.violations.join('; '),
  );
  const overlap = keyed();
  const m0 = overlap.logs[0]!.filter((l) => l !== 'P 1021 0 0');
  m0.splice(m0.indexOf('P 1025 0 4'), 0, 'P 1023 0 0');
  overlap.logs[0] = m0;
  const r2 = violates('(8)', overlap.logs, overlap.input);
  assert.ok(
    r2.violations.some((v) => v.includes('key a: offset 2 started at 1022 while offset 0 was still running')),
    r2.violations.join('; '),
  );
  // Another ownership interval starts afresh: the same key may start while the old one's handler runs.
  const again = keyed();
  again.logs[0]!.splice(again.logs[0]!.indexOf('V 1290 0'), 0, 'L 1200 0', 'A 1201 0', 'B 1202 0 5 a', 'P 1203 0 5');
  assert.ok(!check(again.logs, again.input).violations.some((v) => v.startsWith('(8)')));
});

/**
 * Member 0 is SIGKILLed at 1040: its last commit (1020) has 0 as commit point and 1, 3 finished
 * in the metadata; it finished 4 after that commit, and 0 was still running. Member 1 then owns
 * partition 0 from 1050 and handles 0, 4 (both allowed again), 2 and 5.
 */
function killed(): { logs: string[][]; input: Omit<OracleInput, 'logs'> } {
  const m0 = ['S 1000 11', 'A 1001 0', 'B 1010 0 0 a', 'B 1010 0 1 b', 'B 1011 0 3 c', 'P 1015 0 1', 'P 1016 0 3', 'C 1020 0 0 1,3', 'B 1022 0 4 b', 'P 1025 0 4'];
  const m1 = [
    'S 1000 12',
    'A 1001 -',
    'A 1050 0',
    'B 1051 0 0 a',
    'B 1051 0 4 b',
    'P 1055 0 0',
    'P 1055 0 4',
    'B 1056 0 2 a',
    'P 1058 0 2',
    'B 1059 0 5 a',
    'P 1060 0 5',
    'C 1100 0 6 -',
    'V 1290 0',
    'R 1295 0',
    close(1300, 1290),
  ];
  const base = keyed().input;
  return {
    logs: [m0, m1],
    input: { ...base, kills: [{ slot: 0, at: 1040 }], terms: [{ slot: 1, at: 1290 }], faults: [{ kind: 'member-sigkill', target: 'member 0', start: 1040, end: 1045 }] },
  };
}

test('(9) after a SIGKILL only what its last commit left unfinished comes again', () => {
  const { logs, input } = killed();
  const r = check(logs, input);
  assert.equal(r.violations, []);
  assert.equal(r.afterKills, { kills: 1, unfinished: 1, finishedAfterCommit: 1, carriedByMetadata: 2 });
  // Member 1 handles 3 again: the killed member finished it and its last commit's metadata said so.
  const bad = killed();
  bad.logs[1]!.splice(bad.logs[1]!.indexOf('B 1056 0 2 a'), 0, 'B 1052 0 3 c', 'P 1053 0 3');
  const v = violates('(9)', bad.logs, bad.input);
  assert.ok(
    v.violations.some((x) => x.startsWith('(9) member 1 started 0@3 at 1052, after member 0 was SIGKILLed at 1040') && x.includes('finished in its metadata')),
    v.violations.join('; '),
  );
  // Metadata that does not decode is a violation of its own.
  const corrupt = killed();
  corrupt.logs[0] = corrupt.logs[0]!.map((l) => (l === 'C 1020 0 0 1,3' ? 'C 1020 0 0 !corrupt:checksum_mismatch' : l));
  violates('(9)', corrupt.logs, corrupt.input);
});

test('(2) and (4) read the metadata too: nothing in it unfinished, nothing in it handled again', () => {
  const early = keyed();
  early.logs[0] = early.logs[0]!.map((l) => (l === 'C 1020 0 0 1,3' ? 'C 1020 0 0 1,3,5' : l));
  violates('(2)', early.logs, early.input);
  // A rebalance (no kill): member 1 takes partition 0 from member 0 and handles 1 again, finished in the metadata.
  const r = keyed();
  const m0 = ['S 1000 11', 'A 1001 0', 'B 1010 0 0 a', 'B 1010 0 1 b', 'B 1011 0 3 c', 'P 1015 0 1', 'P 1016 0 3', 'V 1017 0', 'C 1020 0 0 1,3', 'R 1021 0', close(1300, 1290)];
  const m1 = [
    'S 1000 12',
    'A 1030 0',
    'B 1031 0 0 a',
    'B 1031 0 1 b',
    'P 1032 0 0',
    'P 1032 0 1',
    'B 1033 0 2 a',
    'B 1033 0 4 b',
    'B 1033 0 5 c',
    'P 1034 0 2',
    'P 1034 0 4',
    'P 1034 0 5',
    'C 1100 0 6 -',
    close(1300, 1290),
  ];
  violates('(4)', [m0, m1], r.input);
});

test('commit metadata in a C line: written from the OffsetCommit metadata, read back', () => {
  const md = encodeFinished(10n, [12n, 13n, 14n, 17n]);
  assert.is(finishedField(10n, md), '12-14,17');
  assert.equal([...parseFinishedField('12-14,17')!], [12, 13, 14, 17]);
  assert.is(finishedField(10n, null), '-');
  assert.equal(parseFinishedField('-')!.size, 0);
  assert.equal(parseFinishedField(undefined)!.size, 0);
  assert.is(finishedField(10n, 'written by someone else'), '!foreign');
  assert.ok(finishedField(11n, md).startsWith('!corrupt:base_10'));
  assert.ok(finishedField(10n, `${md!.slice(0, -2)}xx`).startsWith('!corrupt:'));
  assert.is(parseFinishedField('!foreign'), null);
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
