// The group machinery's error paths against the fake cluster, with errors injected where real
// brokers show them only in a rebalance or a failover: NOT_COORDINATOR, REBALANCE_IN_PROGRESS,
// ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID and FENCED_MEMBER_EPOCH during commits, heartbeats and
// revocation. What each must do, as the Java client: rediscover, rejoin, lose without committing,
// or commit what was finished before handing partitions over.
import { once } from 'node:events';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ApiKey, ErrorCode } from '@kwire/protocol';
import { CommitFailedError, createConsumer, type Consumer, type ConsumerBatch } from '../../src/index.js';
import { FakeCluster, settlesWithin } from '@kwire/testkit';

const event = (c: Consumer, name: 'lost' | 'revoked' | 'assigned' | 'joined', what: string = name) => settlesWithin(once(c, name) as Promise<[Record<string, unknown>]>, 15_000, `the ${what} event`);

async function setUp(extra: Record<string, unknown> = {}): Promise<{ cluster: FakeCluster; c: Consumer; batch: ConsumerBatch }> {
  const cluster = await FakeCluster.start();
  cluster.createTopic('t', 1, 20, 0);
  const c = createConsumer({
    bootstrapServers: cluster.bootstrap,
    groupId: 'g',
    autoOffsetReset: 'earliest',
    fetchMaxWaitMs: 50,
    heartbeatIntervalMs: 100,
    sessionTimeoutMs: 6_000,
    retryBackoffMs: 20,
    requestTimeoutMs: 2_000,
    maxPollRecords: 10,
    enableAutoCommit: true,
    autoCommitIntervalMs: 600_000,
    ...extra,
  });
  await c.subscribe({ topics: ['t'] });
  const it = c[Symbol.asyncIterator]();
  const { value } = await settlesWithin(it.next(), 15_000, 'the first batch');
  return { cluster, c, batch: value as ConsumerBatch };
}

async function tearDown(cluster: FakeCluster, c: Consumer): Promise<void> {
  await c.close({ timeoutMs: 2_000 });
  await cluster.stop();
}

test('commit answered NOT_COORDINATOR: the coordinator is looked up again and the commit goes through', async () => {
  const { cluster, c, batch } = await setUp();
  try {
    batch.release();
    const finds = cluster.broker.of(ApiKey.FindCoordinator).length;
    cluster.inject(ApiKey.OffsetCommit, ErrorCode.NOT_COORDINATOR);
    await settlesWithin(c.commitSync(), 10_000, 'commitSync');
    assert.ok(cluster.broker.of(ApiKey.FindCoordinator).length > finds, 'FindCoordinator again');
    assert.is(cluster.committed.get('t\u00000')?.offset, 10n);
    assert.is(cluster.broker.of(ApiKey.OffsetCommit).length, 2, 'refused once, then committed');
  } finally {
    await tearDown(cluster, c);
  }
});

for (const code of [ErrorCode.REBALANCE_IN_PROGRESS, ErrorCode.ILLEGAL_GENERATION, ErrorCode.UNKNOWN_MEMBER_ID]) {
  test(`commit answered ${code === ErrorCode.REBALANCE_IN_PROGRESS ? 'REBALANCE_IN_PROGRESS' : code === ErrorCode.ILLEGAL_GENERATION ? 'ILLEGAL_GENERATION' : 'UNKNOWN_MEMBER_ID'}: CommitFailedError, nothing committed, and the member rejoins`, async () => {
    const { cluster, c, batch } = await setUp();
    try {
      batch.release();
      const joins = cluster.broker.of(ApiKey.JoinGroup).length;
      cluster.inject(ApiKey.OffsetCommit, code);
      const err = await settlesWithin(
        c.commitSync().then(
          () => undefined,
          (e: unknown) => e,
        ),
        10_000,
        'commitSync',
      );
      assert.instance(err, CommitFailedError);
      assert.is((err as CommitFailedError).errorCode, code);
      assert.is(cluster.committed.get('t\u00000'), undefined, 'nothing committed');
      await settlesWithin(
        (async () => {
          while (cluster.broker.of(ApiKey.JoinGroup).length === joins) await new Promise((r) => setTimeout(r, 20));
        })(),
        10_000,
        'a JoinGroup',
      );
    } finally {
      await tearDown(cluster, c);
    }
  });
}

test('heartbeat REBALANCE_IN_PROGRESS: partitions are revoked with a commit of what was finished, then assigned again', async () => {
  const { cluster, c, batch } = await setUp();
  try {
    batch.release();
    const revoked = event(c, 'revoked');
    cluster.inject(ApiKey.Heartbeat, ErrorCode.REBALANCE_IN_PROGRESS);
    await revoked;
    assert.is(cluster.committed.get('t\u00000')?.offset, 10n, 'the finished batch committed before the handover');
    await event(c, 'assigned', 'assigned again');
  } finally {
    await tearDown(cluster, c);
  }
});

for (const [name, code] of [
  ['ILLEGAL_GENERATION', ErrorCode.ILLEGAL_GENERATION],
  ['UNKNOWN_MEMBER_ID', ErrorCode.UNKNOWN_MEMBER_ID],
] as const) {
  test(`heartbeat ${name}: partitions are lost (no commit, said at warn), the member joins again and reads on from the committed offset`, async () => {
    const warnings: string[] = [];
    const logger = { debug() {}, info() {}, error() {}, warn: (m: string, f?: Record<string, unknown>) => void warnings.push(`${m} ${JSON.stringify(f)}`) };
    const { cluster, c, batch } = await setUp({ logger });
    try {
      batch.release();
      const joinsBefore = cluster.broker.of(ApiKey.JoinGroup).length;
      const lost = event(c, 'lost');
      cluster.inject(ApiKey.Heartbeat, code);
      await lost;
      assert.is(cluster.committed.get('t\u00000'), undefined, 'a lost partition is not committed');
      const said = warnings.filter((w) => w.startsWith('partitions lost'));
      assert.is(said.length, 1, `one warning: ${warnings.join('; ')}`);
      assert.match(said[0]!, /"t-0"/);
      await event(c, 'assigned', 'assigned again');
      const it = c[Symbol.asyncIterator]();
      const { value } = await settlesWithin(it.next(), 15_000, 'a batch after rejoining');
      assert.is((value as ConsumerBatch).firstOffset, 0n, 'nothing was committed: the group starts over');
      const rejoin = cluster.broker.of(ApiKey.JoinGroup)[joinsBefore]!.body as { memberId: string };
      // UNKNOWN_MEMBER_ID: the id is gone, join as a new member; ILLEGAL_GENERATION: same member.
      assert.is(rejoin.memberId, code === ErrorCode.UNKNOWN_MEMBER_ID ? '' : 'member-1');
    } finally {
      await tearDown(cluster, c);
    }
  });
}

test('revocation commit against a coordinator that keeps refusing: bounded by request.timeout.ms, the handover goes on', async () => {
  const { cluster, c, batch } = await setUp({ requestTimeoutMs: 1_000 });
  try {
    batch.release();
    cluster.inject(ApiKey.OffsetCommit, ErrorCode.COORDINATOR_NOT_AVAILABLE, 1_000);
    const started = Date.now();
    const revoked = event(c, 'revoked');
    cluster.inject(ApiKey.Heartbeat, ErrorCode.REBALANCE_IN_PROGRESS);
    await revoked;
    const took = Date.now() - started;
    assert.ok(took < 1_000 + 1_500, `revocation took ${took} ms with request.timeout.ms 1000`);
    assert.is(cluster.committed.get('t\u00000'), undefined);
    await event(c, 'assigned', 'assigned again');
  } finally {
    await tearDown(cluster, c);
  }
});

test('KIP-848: FENCED_MEMBER_EPOCH on a heartbeat loses the partitions and joins again with epoch 0', async () => {
  const { cluster, c, batch } = await setUp({ groupProtocol: 'consumer' });
  try {
    batch.release();
    const lost = event(c, 'lost');
    cluster.inject(ApiKey.ConsumerGroupHeartbeat, ErrorCode.FENCED_MEMBER_EPOCH);
    await lost;
    assert.is(cluster.committed.get('t\u00000'), undefined, 'fenced: nothing committed');
    await event(c, 'assigned', 'assigned again');
    const epochs = cluster.broker.of(ApiKey.ConsumerGroupHeartbeat).map((r) => (r.body as { memberEpoch: number }).memberEpoch);
    assert.ok(epochs.lastIndexOf(0) > 0, `joined again with epoch 0 (epochs sent: ${epochs.join(',')})`);
  } finally {
    await tearDown(cluster, c);
  }
});

test('KIP-848: a commit answered STALE_MEMBER_EPOCH is a CommitFailedError and commits nothing', async () => {
  const { cluster, c, batch } = await setUp({ groupProtocol: 'consumer' });
  try {
    batch.release();
    cluster.inject(ApiKey.OffsetCommit, ErrorCode.STALE_MEMBER_EPOCH);
    const err = await settlesWithin(
      c.commitSync().then(
        () => undefined,
        (e: unknown) => e,
      ),
      10_000,
      'commitSync',
    );
    assert.instance(err, CommitFailedError);
    assert.is(cluster.committed.get('t\u00000'), undefined);
    await settlesWithin(c.commitSync(), 10_000, 'the next commit');
    assert.is(cluster.committed.get('t\u00000')?.offset, 10n, 'the next commit goes through');
  } finally {
    await tearDown(cluster, c);
  }
});

for (const groupProtocol of ['classic', 'consumer'] as const) {
  test(`${groupProtocol}: a process frozen past its session delivers nothing it buffered before losing its partitions`, async () => {
    const { cluster, c } = await setUp({ groupProtocol, sessionTimeoutMs: 1_500, heartbeatIntervalMs: 300 });
    try {
      // 20 records, 10 per batch: the first was taken by setUp, the second is buffered.
      const order: string[] = [];
      c.on('lost', () => order.push('lost'));
      // The fake broker runs in this process and freezes with it; a real one would have expired the
      // member meanwhile. So the heartbeats answered after the freeze (one may be in flight) say so,
      // as a real coordinator would: the member's session is gone either way.
      cluster.inject(groupProtocol === 'classic' ? ApiKey.Heartbeat : ApiKey.ConsumerGroupHeartbeat, groupProtocol === 'classic' ? ErrorCode.UNKNOWN_MEMBER_ID : ErrorCode.FENCED_MEMBER_EPOCH, 2);
      // A freeze (a long pause, SIGSTOP): the event loop does nothing for longer than the session.
      const until = Date.now() + 2_000;
      while (Date.now() < until) {
        // busy: no timer, no socket runs
      }
      const it = c[Symbol.asyncIterator]();
      const next = await settlesWithin(it.next(), 15_000, 'a batch after the freeze');
      order.push(`batch from ${(next.value as ConsumerBatch).firstOffset}`);
      assert.is(order[0], 'lost', `the partitions were lost before anything was delivered: ${order.join(', ')}`);
    } finally {
      await tearDown(cluster, c);
    }
  });
}

test.run();
