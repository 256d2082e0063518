// The fetch state of a partition moves only by the transitions in PartitionState's table: each
// method from each state, allowed or refused (an answer applied to a partition that moved on is a
// bug, refused with an IllegalStateError, never applied).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { type FetchState, IllegalStateError, type PartitionState, TRANSITIONS } from '../../src/state/partition-state.js';
import { SubscriptionState } from '../../src/state/subscription-state.js';

const STATES: FetchState[] = ['awaiting-reset', 'awaiting-validation', 'validating', 'fetching', 'failed'];

/** A partition put in `state` through the subscription state's methods, as the consumer does. */
function partitionIn(state: FetchState): { s: SubscriptionState; p: PartitionState } {
  const s = new SubscriptionState(() => {});
  const p = s.create('t', 0);
  s.add(p);
  if (state === 'awaiting-reset') s.requestReset(p, 'earliest');
  else if (state === 'fetching') s.seek(p, 10n);
  else if (state === 'awaiting-validation') s.seek(p, 10n, 3);
  else if (state === 'validating') {
    s.seek(p, 10n, 3);
    s.validationSent(p);
  } else {
    s.seek(p, 10n);
    s.fail(p, new Error('authorization failed'));
  }
  assert.is(p.state, state);
  return { s, p };
}

/** Each method through the subscription state, and the state it leads to when allowed. */
const moves: Record<keyof typeof TRANSITIONS, { run: (s: SubscriptionState, p: PartitionState) => void; to: FetchState }> = {
  requestReset: { run: (s, p) => s.requestReset(p, 'latest'), to: 'awaiting-reset' },
  resetTo: { run: (s, p) => s.resetTo(p, 42n), to: 'fetching' },
  seek: { run: (s, p) => s.seek(p, 7n), to: 'fetching' },
  requestValidation: { run: (s, p) => s.requestValidation(p), to: 'awaiting-validation' },
  validationSent: { run: (s, p) => s.validationSent(p), to: 'validating' },
  validationRetry: { run: (_s, p) => p.validationRetry(), to: 'awaiting-validation' },
  completeValidation: { run: (s, p) => s.completeValidation(p), to: 'fetching' },
  fail: { run: (s, p) => s.fail(p, new Error('x')), to: 'failed' },
};

for (const [method, { run, to }] of Object.entries(moves) as [keyof typeof TRANSITIONS, (typeof moves)[keyof typeof moves]][]) {
  for (const from of STATES) {
    const allowed = (TRANSITIONS[method] as readonly FetchState[]).includes(from);
    test(`${method} from ${from}: ${allowed ? `allowed, to ${to}` : 'refused'}`, () => {
      const { s, p } = partitionIn(from);
      const generation = p.generation;
      if (allowed) {
        run(s, p);
        assert.is(p.state, to);
      } else {
        assert.throws(
          () => run(s, p),
          (e: unknown) => e instanceof IllegalStateError && (e as Error).message.includes(`${method} from ${from}`),
        );
        assert.is(p.state, from, 'a refused transition changes nothing');
        assert.is(p.generation, generation);
      }
    });
  }
}

test('the table: what a partition can never do', () => {
  // A position can only be validated once it is known and not failed.
  assert.not.ok((TRANSITIONS.requestValidation as readonly string[]).includes('awaiting-reset'));
  assert.not.ok((TRANSITIONS.requestValidation as readonly string[]).includes('failed'));
  // A reset answer lands only on a partition still awaiting it (a seek meanwhile wins).
  assert.equal([...TRANSITIONS.resetTo], ['awaiting-reset']);
  // Only a check that is due goes on the wire.
  assert.equal([...TRANSITIONS.validationSent], ['awaiting-validation']);
  // A seek and a reset leave any state, failed included: the way out of an error.
  assert.equal([...TRANSITIONS.seek].sort(), [...STATES].sort());
  assert.equal([...TRANSITIONS.requestReset].sort(), [...STATES].sort());
});

test('a seek with a leader epoch awaits validation; a truncation goes on from the divergence point', () => {
  const { s, p } = partitionIn('validating');
  s.truncatedTo(p, 5n, 2);
  assert.is(p.state, 'fetching');
  assert.is(p.position, 5n);
  assert.is(p.lastFetchedEpoch, 2);
  const q = partitionIn('awaiting-reset');
  assert.throws(
    () => q.s.truncatedTo(q.p, 5n, 2),
    (e: unknown) => e instanceof IllegalStateError,
  );
});

test('seek, reset and give-back bump the generation and drop what is buffered; pause does not', () => {
  const dropped: string[] = [];
  const s = new SubscriptionState(() => {});
  s.bufferIn({ drop: (p) => void dropped.push(`drop ${p.key}`), fail: () => {}, wake: (p) => void dropped.push(`wake ${p.key}`) });
  const p = s.create('t', 1);
  s.add(p);
  s.seek(p, 0n);
  const g = p.generation;
  s.pause([{ topic: 't', partition: 1 }]);
  assert.is(p.generation, g);
  s.resume([{ topic: 't', partition: 1 }]);
  s.requestReset(p, 'earliest');
  assert.is(p.generation, g + 1);
  assert.equal(dropped, ['drop t\u00001', 'wake t\u00001', 'drop t\u00001']);
});

test.run();
