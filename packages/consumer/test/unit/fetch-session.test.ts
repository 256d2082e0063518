// Incremental fetch sessions (KIP-227): what each request lists, its epoch, and what it covers.
// The fetcher reads an answer against the covered map of the request it answers, so that map must
// stay as it was sent whatever happens to the session meanwhile (a reset, a later request).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FetchSession, type SessionPartition } from '../../src/fetch/fetch-session.js';

function part(partition: number, fetchOffset = 0n, topic = 't'): SessionPartition {
  return {
    key: `${topic}\u0000${partition}`,
    topic,
    topicId: 'AAAAAAAAAAAAAAAAAAAAAA',
    partition,
    fetchOffset,
    currentLeaderEpoch: 3,
    lastFetchedEpoch: -1,
    partitionMaxBytes: 1048576,
  };
}

const keys = (list: readonly SessionPartition[]) => list.map((p) => p.partition).sort((a, b) => a - b);

test('the first request is full, asks for a session (epoch 0) and covers every partition', () => {
  const s = new FetchSession();
  const r = s.build([part(0), part(1), part(2)]);
  assert.is(r.full, true);
  assert.is(r.sessionId, 0);
  assert.is(r.sessionEpoch, 0);
  assert.equal(keys(r.partitions), [0, 1, 2]);
  assert.equal(r.forgotten, []);
  assert.equal([...r.covered.keys()].sort(), [part(0).key, part(1).key, part(2).key].sort());
  assert.is(s.closeRequest(), undefined);
});

test('once the broker gives a session, requests list only what changed and what to forget', () => {
  const s = new FetchSession();
  const first = s.build([part(0), part(1), part(2)]);
  s.accepted(first, 77);
  assert.is(s.id, 77);

  // Partition 0 moved on, 1 is as before, 2 is no longer wanted, 3 is new.
  const second = s.build([part(0, 50n), part(1), part(3)]);
  assert.is(second.full, false);
  assert.is(second.sessionId, 77);
  assert.is(second.sessionEpoch, 1);
  assert.equal(keys(second.partitions), [0, 3]);
  assert.equal(keys(second.forgotten), [2]);
  assert.equal([...second.covered.keys()].sort(), [part(0).key, part(1).key, part(3).key].sort());

  s.accepted(second, 77);
  // Nothing changed since: an empty incremental request, the epoch one further.
  const third = s.build([part(0, 50n), part(1), part(3)]);
  assert.is(third.sessionEpoch, 2);
  assert.equal(third.partitions, []);
  assert.equal(third.forgotten, []);
  assert.equal(s.closeRequest(), { sessionId: 77, sessionEpoch: -1 });
});

test('every fetch parameter the broker keeps counts as a change', () => {
  const s = new FetchSession();
  s.accepted(s.build([part(0)]), 5);
  const base = part(0);
  const variants: SessionPartition[] = [
    { ...base, fetchOffset: 1n },
    { ...base, currentLeaderEpoch: 4 },
    { ...base, lastFetchedEpoch: 2 },
    { ...base, partitionMaxBytes: 1 },
    { ...base, topicId: 'BBBBBBBBBBBBBBBBBBBBBB' },
  ];
  for (const v of variants)
    assert.equal(
      keys(s.build([v]).partitions),
      [0],
      JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? `${x}` : x)),
    );
  assert.equal(s.build([base]).partitions, []);
});

test('a broker that gives no session: every later request is full and sessionless (epoch -1)', () => {
  const s = new FetchSession();
  s.accepted(s.build([part(0)]), 0);
  const next = s.build([part(0), part(1)]);
  assert.is(next.full, true);
  assert.is(next.sessionId, 0);
  assert.is(next.sessionEpoch, -1);
  assert.equal(keys(next.partitions), [0, 1]);
  assert.is(s.closeRequest(), undefined);
});

test('reset: the next request is full again, asking for a new session', () => {
  const s = new FetchSession();
  s.accepted(s.build([part(0)]), 9);
  s.reset();
  const r = s.build([part(0)]);
  assert.is(r.full, true);
  assert.is(r.sessionEpoch, 0);
  assert.equal(keys(r.partitions), [0]);
  assert.is(s.closeRequest(), undefined);
});

test("a request's covered map stays as it was sent: through accepted(), a reset and later requests", () => {
  const s = new FetchSession();
  const first = s.build([part(0), part(1)]);
  s.accepted(first, 11);
  // The fetcher is still reading the answer to `first` when the session is reset (a partition's
  // error on the same broker) and a new request is built and accepted.
  s.reset();
  const second = s.build([part(2)]);
  s.accepted(second, 12);
  assert.equal([...first.covered.keys()].sort(), [part(0).key, part(1).key].sort());
  assert.is(first.covered.get(part(0).key)?.fetchOffset, 0n);
  // And the session knows only what the last accepted request covered: 2 is unchanged, 0 and 1 are
  // not known (a new partition 0 is listed).
  const third = s.build([part(2), part(0)]);
  assert.equal(keys(third.partitions), [0]);
  assert.equal(third.forgotten, []);
});

test.run();
