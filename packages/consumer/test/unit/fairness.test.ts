// Fairness between partitions (issue 16): a backlog must not queue ahead of a live partition's
// records. Two mechanisms: the stream delivers data that reached its partition's high watermark
// ahead of lagging partitions' data queued before it (each partition in offset order), and the
// fetcher fetches caught-up partitions in a lane of their own, so that their Fetch never waits for
// a lagging partition's large answers.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ApiKey, BufferPool, encodeRecordBatch } from '@kwire/protocol';
import { SharedFrame } from '../../src/connection/shared-frame.js';
import { BufferBudget } from '../../src/fetch/buffer-budget.js';
import { FetchCollector } from '../../src/fetch/fetch-collector.js';
import { FetchedPartition } from '../../src/fetch/fetched-partition.js';
import type { PartitionState } from '../../src/state/partition-state.js';
import { SubscriptionState } from '../../src/state/subscription-state.js';
import { recordContext, type ConsumerBatch, type RecordContext } from '../../src/records/index.js';
import { MessageStream, type StreamOwner } from '../../src/streams.js';
import { createConsumer, type ConsumedRecord } from '../../src/index.js';
import { FakeCluster, type Reply, settlesWithin } from '@kwire/testkit';

const subscriptions = new SubscriptionState(() => {});
const collector = new FetchCollector(subscriptions);
const budget = new BufferBudget(() => {});

const owner: StreamOwner = {
  maxPollRecords: 500,
  yieldIntervalMs: 2,
  delivered: (b) => b,
  drained: () => {},
  mayDeliver: () => true,
  collect: (data, max) => collector.next(data, max),
  corrupt: (state) => subscriptions.refetchCorrupt(state),
  deserializationErrorPolicy: 'stop',
  deserializationFailed: () => {},
};

function context(topic: string): RecordContext {
  return recordContext(topic, 0, 'buffer', 'buffer', true);
}

const pool = new BufferPool();

/** Records base..base+n-1 of a partition, as one Fetch answer's data with this high watermark. */
function data(state: PartitionState, base: number, n: number, highWatermark: number): FetchedPartition {
  const bytes = encodeRecordBatch(
    Array.from({ length: n }, (_, i) => ({ value: `${state.topic}-${base + i}` })),
    { baseOffset: base },
  );
  const frame = new SharedFrame(() => {});
  const d = new FetchedPartition(state, state.generation, frame, bytes, BigInt(highWatermark), BigInt(highWatermark), null, {
    readCommitted: false,
    checkCrcs: true,
    pool,
    context: context(state.topic),
    account: budget.of(state.key),
  });
  frame.release();
  return d;
}

/** The next `n` batches as "topic:first-last", each released. */
async function takeAll(stream: MessageStream, n: number): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const b = (await stream.take()) as ConsumerBatch;
    out.push(`${b.topic}:${b.records[0]!.offset}-${b.records.at(-1)!.offset}`);
    b.release();
  }
  return out;
}

/** A partition of `topic` at offset 0 (its data goes to the stream the test pushes it to). */
function partition(_stream: MessageStream, topic: string): PartitionState {
  const state = subscriptions.create(topic, 0);
  subscriptions.seek(state, 0n);
  subscriptions.add(state);
  return state;
}

test('a caught-up partition is delivered ahead of backlog queued before it', async () => {
  const stream = new MessageStream(owner, undefined, 0);
  const backlog = partition(stream, 'backlog');
  const live = partition(stream, 'live');
  stream.push(data(backlog, 0, 10, 1000));
  stream.push(data(backlog, 10, 10, 1000));
  stream.push(data(backlog, 20, 10, 1000));
  stream.push(data(live, 0, 5, 5), true);
  assert.equal(await takeAll(stream, 4), ['live:0-4', 'backlog:0-9', 'backlog:10-19', 'backlog:20-29']);
  stream.close();
});

test("a caught-up partition's earlier data goes first with it, in offset order", async () => {
  const stream = new MessageStream(owner, undefined, 0);
  const backlog = partition(stream, 'backlog');
  const live = partition(stream, 'live');
  stream.push(data(live, 0, 10, 15));
  stream.push(data(backlog, 0, 10, 1000));
  stream.push(data(live, 10, 5, 15), true);
  stream.push(data(backlog, 10, 10, 1000));
  assert.equal(await takeAll(stream, 4), ['live:0-9', 'live:10-14', 'backlog:0-9', 'backlog:10-19']);
  // Nothing caught up is left: plain queue order again.
  stream.push(data(backlog, 20, 10, 1000));
  stream.push(data(live, 15, 5, 100));
  assert.equal(await takeAll(stream, 2), ['backlog:20-29', 'live:15-19']);
  stream.close();
});

test('a caught-up partition is fetched apart from a lagging one: its records do not wait for the backlog answers', async () => {
  const cluster = await FakeCluster.start();
  cluster.createTopic('backlog', 1, 100_000);
  cluster.createTopic('live', 1, 0);
  // Answers carrying backlog records take 300 ms (a broker reading and sending megabytes).
  const fetch = cluster.broker.handlers[ApiKey.Fetch]!;
  cluster.broker.handlers[ApiKey.Fetch] = async (req, broker) => {
    const reply = (await fetch(req, broker)) as Reply & { body: { responses: { topic: string; partitions: { records: Buffer | null }[] }[] } };
    const backlog = reply.body.responses.some((t) => t.topic === 'backlog' && t.partitions.some((p) => p.records !== null && p.records.length > 0));
    return backlog ? { ...reply, delayMs: 300 } : reply;
  };
  const c = createConsumer({ bootstrapServers: cluster.bootstrap, fetchMaxWaitMs: 100, retryBackoffMs: 20, valueDeserializer: 'string' });
  try {
    await c.assign([
      { topic: 'backlog', partition: 0, offset: 0 },
      { topic: 'live', partition: 0, offset: 0 },
    ]);
    const it = c.records<unknown, string>()[Symbol.asyncIterator]();
    // Past the first answers: the live partition's high watermark is known (it is caught up).
    let backlogSeen = 0;
    while (backlogSeen < 200) {
      const r = (await settlesWithin(it.next(), 15_000, 'a backlog record')).value as ConsumedRecord<unknown, string>;
      if (r.topic === 'backlog') backlogSeen++;
    }
    const latencies: number[] = [];
    for (let round = 0; round < 3; round++) {
      cluster.append('live', 0, 1);
      const appended = Date.now();
      for (;;) {
        const r = (await settlesWithin(it.next(), 15_000, 'the live record')).value as ConsumedRecord<unknown, string>;
        if (r.topic === 'live') break;
      }
      latencies.push(Date.now() - appended);
    }
    // In one Fetch with the backlog, each would wait for a 300 ms answer (and often two).
    assert.ok(Math.max(...latencies) < 200, `live records took ${latencies.join(', ')} ms`);
    // The mechanism: once caught up, the live partition's Fetches name no backlog partition and
    // come on a connection of their own.
    const fetches = cluster.broker.of(ApiKey.Fetch).map((r) => ({ connection: r.connection, topics: ((r.body as { topics: { topic: string }[] }).topics ?? []).map((t) => t.topic) }));
    const liveOnly = fetches.filter((f) => f.topics.length === 1 && f.topics[0] === 'live');
    const withBacklog = fetches.filter((f) => f.topics.includes('backlog'));
    assert.ok(liveOnly.length > 0 && withBacklog.length > 0);
    assert.ok(
      liveOnly.every((f) => !withBacklog.some((b) => b.connection === f.connection)),
      'the live Fetches share a connection with the backlog ones',
    );
  } finally {
    await c.close({ timeoutMs: 2_000 });
    await cluster.stop();
  }
});

test.run();
