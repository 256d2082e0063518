// Adaptive fetch sizes (issue 32, step 4): with max.partition.fetch.bytes unset, a partition whose
// answers come back full while it is behind asks for more, up to a cap, out of an allowance shared
// by all partitions, and for the default again once caught up; a setting the user gave is asked for
// exactly. The policy alone (FetchSizes), then the Fetch requests a consumer sends to a fake
// cluster whose Fetch answers, as a broker's, stop at what was asked (mid-batch).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ApiKey, encodeRecordBatch } from '@kwire/protocol';
import { FakeCluster, prng, settlesWithin, until, type Handler } from '@kwire/testkit';
import { MAX_ADAPTIVE_PARTITION_FETCH_BYTES, resolveConfig } from '../../src/config.js';
import { FetchSizes } from '../../src/fetch/fetch-sizes.js';
import { createConsumer, type ConsumedRecord } from '../../src/index.js';

const MiB = 1024 * 1024;

function sizes(config: Record<string, unknown> = {}, stillFetched: (key: string) => boolean = () => true): FetchSizes {
  return new FetchSizes(resolveConfig({ bootstrapServers: '127.0.0.1:9092', ...config }), stillFetched);
}

/**
 * A full answer for what `key` asks now, its position still short of the high watermark; alone in
 * its Fetch unless `others` (what the Fetch's other partitions asked for) is given.
 */
function grow(s: FetchSizes, key: string, others = 0): number {
  const asked = s.sizeFor(key);
  s.answered(key, asked, asked, true, asked + others);
  return s.sizeFor(key);
}

test('the configuration: unset, sizes adapt and the per-partition buffer holds four of the largest answers', () => {
  const unset = resolveConfig({ bootstrapServers: 'a:1' });
  assert.is(unset.maxPartitionFetchBytes, MiB);
  assert.is(unset.maxPartitionFetchBytesExplicit, false);
  assert.is(unset.maxBufferedBytesPerPartition, 4 * MAX_ADAPTIVE_PARTITION_FETCH_BYTES);
  assert.is(unset.maxBufferedBytes, 2 * unset.fetchMaxBytes);
  for (const set of [resolveConfig({ bootstrapServers: 'a:1', maxPartitionFetchBytes: MiB }), resolveConfig({ 'bootstrap.servers': 'a:1', 'max.partition.fetch.bytes': '1048576' })]) {
    assert.is(set.maxPartitionFetchBytes, MiB);
    assert.is(set.maxPartitionFetchBytesExplicit, true);
    assert.is(set.maxBufferedBytesPerPartition, 4 * MiB);
  }
  assert.is(resolveConfig({ bootstrapServers: 'a:1', maxBufferedBytesPerPartition: 3 * MiB }).maxBufferedBytesPerPartition, 3 * MiB);
});

test('full answers of a partition that is behind double its size, up to the cap', () => {
  const s = sizes();
  assert.ok(s.adaptive);
  assert.is(s.sizeFor('t\u00000'), MiB);
  // 2, 4... MiB up to the cap, then the cap.
  const expected: number[] = [];
  for (let size = 2 * MiB; size < MAX_ADAPTIVE_PARTITION_FETCH_BYTES; size *= 2) expected.push(size);
  expected.push(MAX_ADAPTIVE_PARTITION_FETCH_BYTES, MAX_ADAPTIVE_PARTITION_FETCH_BYTES, MAX_ADAPTIVE_PARTITION_FETCH_BYTES);
  assert.equal(
    expected.map(() => grow(s, 't\u00000')),
    expected,
  );
  // More than was asked (KIP-74's oversized first batch) is full too.
  const t = sizes();
  t.answered('t\u00001', MiB, 3 * MiB, true, MiB);
  assert.is(t.sizeFor('t\u00001'), 2 * MiB);
  // Other partitions are not touched.
  assert.is(s.sizeFor('t\u00001'), MiB);
});

test('back to the default once caught up, after an answer that was not full, or an empty one', () => {
  const s = sizes();
  const key = 't\u00000';
  grow(s, key);
  grow(s, key);
  assert.is(s.sizeFor(key), 4 * MiB);
  // Full, but it reached the high watermark: caught up.
  s.answered(key, 4 * MiB, 4 * MiB, false, 4 * MiB);
  assert.is(s.sizeFor(key), MiB);
  assert.is(s.allowanceTaken, 0);
  grow(s, key);
  // Behind, but the broker had less than asked (a segment's end, fetch.max.bytes).
  s.answered(key, 2 * MiB, 2 * MiB - 1, true, 2 * MiB);
  assert.is(s.sizeFor(key), MiB);
  grow(s, key);
  s.answered(key, 2 * MiB, 0, false, 2 * MiB);
  assert.is(s.sizeFor(key), MiB);
  assert.is(s.allowanceTaken, 0);
  // Not full at the default: nothing changes.
  s.answered(key, MiB, 10, false, MiB);
  assert.is(s.sizeFor(key), MiB);
});

test("an explicit max.partition.fetch.bytes is obeyed exactly, whatever the answers; recordBuffers 'owned' never adapts", () => {
  const cases: [Record<string, unknown>, number][] = [
    [{ maxPartitionFetchBytes: MiB }, MiB],
    [{ 'max.partition.fetch.bytes': 256 * 1024 }, 256 * 1024],
    // Room to grow in every other bound: the setting alone keeps it.
    [{ maxPartitionFetchBytes: MiB, maxBufferedBytesPerPartition: 64 * MiB }, MiB],
    // Unset, but answers in fresh memory (recordBuffers 'owned'): no growth either.
    [{ recordBuffers: 'owned' }, MiB],
  ];
  for (const [config, asked] of cases) {
    const s = sizes(config);
    assert.not.ok(s.adaptive);
    for (let i = 0; i < 5; i++) {
      s.answered('t\u00000', asked, asked * 2, true, asked);
      assert.is(s.sizeFor('t\u00000'), asked);
    }
    assert.is(s.allowanceTaken, 0);
  }
});

test('a Fetch of several partitions behind asks for no more than it did: growth stops at the ceiling in all', () => {
  const s = sizes();
  // Twelve partitions at 1 MiB in one Fetch: 12 MiB asked, none grows.
  for (let i = 0; i < 12; i++) assert.is(grow(s, `p${i}`, 11 * MiB), MiB);
  assert.is(s.allowanceTaken, 0);
  // Two in one Fetch: 1 + 1 MiB, each may double (3 MiB with the step), not again (6 MiB).
  assert.is(grow(s, 'a', MiB), 2 * MiB);
  assert.is(grow(s, 'b', 2 * MiB), 2 * MiB, '2 + 1 + 1 MiB: the ceiling exactly');
  assert.is(grow(s, 'a', 2 * MiB), 2 * MiB);
  // b alone in a Fetch (a caught up, fetched in the other lane): it grows to the cap.
  s.answered('a', 2 * MiB, MiB, false, 4 * MiB);
  assert.is(grow(s, 'b'), MAX_ADAPTIVE_PARTITION_FETCH_BYTES);
});

test('growth comes from a shared allowance: one partition at the cap, partitions at the default keep their room', () => {
  // At the defaults the allowance is one partition's way from 1 MiB to the cap: 3 MiB.
  const s = sizes();
  assert.is(grow(s, 'a'), 2 * MiB);
  assert.is(grow(s, 'b'), 2 * MiB);
  assert.is(grow(s, 'a'), 2 * MiB, 'a step of 2 MiB with 1 MiB left: a stays');
  assert.is(grow(s, 'c'), 2 * MiB);
  // The allowance is spent (1 + 1 + 1 MiB): b, c and d stay where they are, however full their answers.
  assert.is(s.allowanceTaken, 3 * MiB);
  assert.is(grow(s, 'b'), 2 * MiB);
  assert.is(grow(s, 'd'), MiB);
  const fetch = ['a', 'b', 'c', 'd', 'live'].map((k) => s.sizeFor(k));
  assert.equal(fetch, [2 * MiB, 2 * MiB, 2 * MiB, MiB, MiB]);
  // b and c catch up: their growth goes back, and a reaches the cap.
  s.answered('b', 2 * MiB, MiB, false, 2 * MiB);
  s.answered('c', 2 * MiB, 2 * MiB, false, 2 * MiB);
  assert.is(s.allowanceTaken, MiB);
  assert.is(grow(s, 'a'), MAX_ADAPTIVE_PARTITION_FETCH_BYTES);
  assert.is(s.allowanceTaken, MAX_ADAPTIVE_PARTITION_FETCH_BYTES - MiB);
  assert.is(grow(s, 'd'), MiB);
  // fetch.max.bytes 4 MiB: half of it, 2 MiB, is less than the way to the cap.
  const small = sizes({ fetchMaxBytes: 4 * MiB });
  assert.equal([grow(small, 'a'), grow(small, 'b'), grow(small, 'c'), grow(small, 'a')], [2 * MiB, 2 * MiB, MiB, 2 * MiB]);
});

test('growth of a partition no longer fetched is reclaimed when the allowance runs out', () => {
  const fetched = new Set(['a', 'b']);
  // fetch.max.bytes 6 MiB: 3 MiB of allowance.
  const s = sizes({ fetchMaxBytes: 6 * MiB }, (key) => fetched.has(key));
  assert.is(grow(s, 'a'), 2 * MiB);
  assert.is(grow(s, 'b'), 2 * MiB);
  assert.is(s.allowanceTaken, 2 * MiB);
  assert.is(grow(s, 'b'), 2 * MiB, 'no allowance left');
  fetched.delete('a');
  assert.is(grow(s, 'b'), 4 * MiB, "a's growth went to b");
  assert.is(s.sizeFor('a'), MiB);
  assert.is(s.allowanceTaken, 3 * MiB);
});

test('bounds: the per-partition buffer bound, fetch.max.bytes and maxBufferedBytes limit growth', () => {
  // An explicit per-partition bound of 8 MiB: sizes up to a quarter of it.
  const perPartition = sizes({ maxBufferedBytesPerPartition: 8 * MiB });
  assert.equal([grow(perPartition, 'a'), grow(perPartition, 'a')], [2 * MiB, 2 * MiB]);
  // Under 4 MiB of it: no growth at all.
  assert.not.ok(sizes({ maxBufferedBytesPerPartition: 4 * MiB - 1 }).adaptive);
  // fetch.max.bytes 1.5 MiB: no size over it (the broker would cut the answer).
  const small = sizes({ fetchMaxBytes: 1.5 * MiB });
  assert.equal([grow(small, 'a'), grow(small, 'a')], [1.5 * MiB, 1.5 * MiB]);
  // fetch.max.bytes 6 MiB: a takes all of the allowance (half of it), b stays at the default.
  const mid = sizes({ fetchMaxBytes: 6 * MiB });
  assert.equal([grow(mid, 'a'), grow(mid, 'a'), grow(mid, 'b'), grow(mid, 'b')], [2 * MiB, 4 * MiB, MiB, MiB]);
  // maxBufferedBytes 4 MiB: 2 MiB of allowance in all.
  const buffered = sizes({ maxBufferedBytes: 4 * MiB });
  assert.equal([grow(buffered, 'a'), grow(buffered, 'b'), grow(buffered, 'c'), grow(buffered, 'a')], [2 * MiB, 2 * MiB, MiB, 2 * MiB]);
  // At fetch.max.bytes at or under the default: nothing to grow into.
  assert.not.ok(sizes({ fetchMaxBytes: MiB }).adaptive);
});

test('any sequence of answers keeps every size within bounds and the allowance exact', () => {
  const random = prng(32);
  const keys = Array.from({ length: 20 }, (_, i) => `t\u0000${i}`);
  const s = sizes({ fetchMaxBytes: 16 * MiB });
  const allowance = MAX_ADAPTIVE_PARTITION_FETCH_BYTES - MiB;
  for (let i = 0; i < 20_000; i++) {
    const key = keys[Math.floor(random() * keys.length)]!;
    const asked = s.sizeFor(key);
    const r = random();
    // Mostly full answers of partitions behind: the allowance runs out and is given back often.
    // Alone in its Fetch, or beside partitions asking for up to 4 MiB more.
    const fetchAsked = asked + (random() < 0.5 ? 0 : Math.floor(random() * 4) * MiB);
    if (r < 0.7) s.answered(key, asked, asked, true, fetchAsked);
    else if (r < 0.85) s.answered(key, asked, Math.floor(random() * asked), true, asked);
    else s.answered(key, asked, asked, false, asked);
    let extra = 0;
    for (const k of keys) {
      const size = s.sizeFor(k);
      // The default doubled, within the cap.
      assert.ok(Number.isInteger(Math.log2(size / MiB)) && size <= MAX_ADAPTIVE_PARTITION_FETCH_BYTES, `${size}`);
      extra += size - MiB;
    }
    assert.is(s.allowanceTaken, extra);
    assert.ok(extra <= allowance);
  }
});

// ------------------------------------------------------------------ through a consumer

/** What the handler below reads of a Fetch request (v12: topics by name). */
interface FetchBody {
  maxWaitMs: number;
  topics: { topic: string; topicId: string; partitions: { partition: number; fetchOffset: bigint; partitionMaxBytes: number }[] }[];
}

/** One partition of one Fetch: what was asked, the bytes answered, and whether they left it behind. */
interface Exchange {
  asked: number;
  bytes: number;
  behind: boolean;
}

/**
 * A Fetch answering from the fake cluster's logs as a broker does: each partition's records up to
 * the partitionMaxBytes asked, the last batch cut where that runs out (the first one whole), and a
 * long poll while no partition has any. `seen` gets every partition's exchange, by "topic-partition".
 */
function brokerLikeFetch(cluster: FakeCluster, seen: Map<string, Exchange[]>): Handler {
  return async (req) => {
    const body = req.body as FetchBody;
    const build = () => {
      let any = false;
      const exchanges: [string, Exchange][] = [];
      const responses = body.topics.map((t) => ({
        topic: t.topic,
        topicId: t.topicId,
        partitions: t.partitions.map((fp) => {
          const log = cluster.partition(t.topic, fp.partition).log;
          // One record per batch: offset o is batch o - fetchOffset.
          const batches: Buffer[] = [];
          let bytes = 0;
          for (let o = Number(fp.fetchOffset); o < log.length && bytes < fp.partitionMaxBytes; o++) {
            const r = log[o]!;
            const batch = encodeRecordBatch([{ key: r.key, value: r.value }], { baseOffset: r.offset, partitionLeaderEpoch: r.epoch });
            batches.push(batch);
            bytes += batch.length;
          }
          let records: Buffer | null = batches.length ? Buffer.concat(batches) : null;
          let whole = batches.length;
          if (records && batches.length > 1 && records.length > fp.partitionMaxBytes) {
            records = records.subarray(0, fp.partitionMaxBytes);
            whole--;
          }
          if (records) any = true;
          exchanges.push([`${t.topic}-${fp.partition}`, { asked: fp.partitionMaxBytes, bytes: records?.length ?? 0, behind: Number(fp.fetchOffset) + whole < log.length }]);
          return {
            partitionIndex: fp.partition,
            errorCode: 0,
            highWatermark: BigInt(log.length),
            lastStableOffset: BigInt(log.length),
            logStartOffset: 0n,
            abortedTransactions: null,
            preferredReadReplica: -1,
            records,
          };
        }),
      }));
      return { any, responses, exchanges };
    };
    let out = build();
    const deadline = Date.now() + Math.min(body.maxWaitMs, 2_000);
    while (!out.any && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 10));
      out = build();
    }
    for (const [key, e] of out.exchanges) seen.set(key, [...(seen.get(key) ?? []), e]);
    return { body: { throttleTimeMs: 0, errorCode: 0, sessionId: 0, responses: out.responses, nodeEndpoints: [] } };
  };
}

const CAP = MAX_ADAPTIVE_PARTITION_FETCH_BYTES;

/**
 * The backlog: 400 records of 32 KiB (the key), 12.6 MiB, then one of 1 MiB more than the cap:
 * the answer that reaches the high watermark is that one record alone, whole (KIP-74), so full.
 */
const KEY = 'k'.repeat(32 * 1024);
const LAST_KEY = 'k'.repeat(CAP + MiB);
const BACKLOG = 401;

/**
 * Reads the backlog and a caught-up partition's few new records through a consumer with `config`;
 * every Fetch's exchange, per partition, until the backlog has been fetched again once caught up.
 */
async function exchanges(config: Record<string, unknown>): Promise<{ backlog: Exchange[]; live: Exchange[] }> {
  const cluster = await FakeCluster.start();
  cluster.createTopic('backlog', 1, 0);
  cluster.append('backlog', 0, BACKLOG - 1, () => KEY);
  cluster.append('backlog', 0, 1, () => LAST_KEY);
  cluster.createTopic('live', 1, 0);
  const seen = new Map<string, Exchange[]>();
  cluster.broker.handlers[ApiKey.Fetch] = brokerLikeFetch(cluster, seen);
  const c = createConsumer({ bootstrapServers: cluster.bootstrap, fetchMaxWaitMs: 50, retryBackoffMs: 20, ...config });
  try {
    await c.assign([
      { topic: 'backlog', partition: 0, offset: 0 },
      { topic: 'live', partition: 0, offset: 0 },
    ]);
    const it = c.records<unknown, unknown>()[Symbol.asyncIterator]();
    const read = { backlog: 0, live: 0 };
    while (read.backlog < BACKLOG || read.live < 3) {
      const r = (await settlesWithin(it.next(), 10_000, 'the next record')).value as ConsumedRecord<unknown, unknown>;
      read[r.topic as 'backlog' | 'live']++;
      // New records of the caught-up partition while the backlog is read.
      if (r.topic === 'backlog' && read.backlog === 100) cluster.append('live', 0, 3);
    }
    // A Fetch after the one that caught up.
    const sent = seen.get('backlog-0')!.length;
    await until('a Fetch of the caught-up backlog', () => seen.get('backlog-0')!.length > sent, 5_000, 5);
    return { backlog: [...seen.get('backlog-0')!], live: [...seen.get('live-0')!] };
  } finally {
    await c.close({ timeoutMs: 2_000 });
    await cluster.stop();
  }
}

const full = (e: Exchange) => e.bytes >= e.asked;
const show = (list: Exchange[]) => list.map((e) => `${e.asked / MiB}${full(e) ? (e.behind ? '+' : '=') : '-'}`).join(' ');

test('a consumer at its defaults asks more of a backlogged partition, the default of a caught-up one', async () => {
  const { backlog, live } = await exchanges({});
  // Each ask follows from the answer before it: doubled (up to the cap) after a full one that left
  // the partition behind, the default after any other.
  assert.is(backlog[0]!.asked, MiB);
  for (let i = 1; i < backlog.length; i++) {
    const before = backlog[i - 1]!;
    assert.is(backlog[i]!.asked, full(before) && before.behind ? Math.min(2 * before.asked, CAP) : MiB, show(backlog));
  }
  // It got to the cap, and the full answer that caught it up (the last record) sent it back.
  assert.ok(
    backlog.some((e) => e.asked === CAP && full(e) && e.behind),
    show(backlog),
  );
  const caughtUp = backlog.findIndex((e) => full(e) && !e.behind);
  assert.ok(caughtUp > 0 && backlog[caughtUp]!.asked === CAP && backlog[caughtUp + 1]!.asked === MiB, show(backlog));
  // The live partition's answers (empty, or its few new records) are never full: the default.
  assert.ok(live.some((e) => e.bytes > 0));
  assert.ok(
    live.every((e) => e.asked === MiB && !full(e)),
    show(live),
  );
});

test('with max.partition.fetch.bytes set, every Fetch asks for exactly that', async () => {
  // The same per-partition buffer bound as at the defaults: only the setting differs.
  const { backlog, live } = await exchanges({ maxPartitionFetchBytes: MiB, maxBufferedBytesPerPartition: 4 * CAP });
  // Full answers of a partition behind, every one, and still the setting.
  assert.ok(backlog.filter((e) => full(e) && e.behind).length >= 10, show(backlog));
  assert.ok(
    [...backlog, ...live].every((e) => e.asked === MiB),
    show([...backlog, ...live]),
  );
});

test('a consumer at its defaults grows none of four backlogged partitions fetched together', async () => {
  // Four partitions of 100 records of 32 KiB (3.2 MiB each), all behind, in one Fetch of 4 MiB:
  // each answer comes back full, and none asks for more (without the rule each would double).
  const cluster = await FakeCluster.start();
  cluster.createTopic('t', 4, 0);
  for (let p = 0; p < 4; p++) cluster.append('t', p, 100, () => KEY);
  const seen = new Map<string, Exchange[]>();
  cluster.broker.handlers[ApiKey.Fetch] = brokerLikeFetch(cluster, seen);
  const c = createConsumer({ bootstrapServers: cluster.bootstrap, fetchMaxWaitMs: 50, retryBackoffMs: 20 });
  try {
    await c.assign([0, 1, 2, 3].map((partition) => ({ topic: 't', partition, offset: 0 })));
    const it = c.records<unknown, unknown>()[Symbol.asyncIterator]();
    for (let read = 0; read < 400; read++) await settlesWithin(it.next(), 10_000, 'the next record');
  } finally {
    await c.close({ timeoutMs: 2_000 });
    await cluster.stop();
  }
  const all = [0, 1, 2, 3].flatMap((p) => seen.get(`t-${p}`) ?? []);
  assert.ok(all.filter((e) => full(e) && e.behind).length >= 8, show(all));
  assert.ok(
    all.every((e) => e.asked === MiB),
    show(all),
  );
});

test.run();
