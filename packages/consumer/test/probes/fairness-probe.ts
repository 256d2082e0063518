// Fairness probe (issue 16, "latency under load"): the end-to-end latency of a live partition's
// records while the same consumer drains a backlog of another topic.
//
//   node packages/consumer/dist/test/probes/fairness-probe.js --help
//
// One broker (startKafka, or --bootstrap for one already running, e.g. `kwire-broker start` of
// @kwire/broker, to load the backlog once for many runs), a backlog topic loaded once with Kafka's ProducerPerformance (reused when it already
// holds the records asked for), a live topic of one partition fed at --rate records/s by a child
// process (kwire's own codec, CreateTime = the time of sending). One consumer (assign, defaults)
// reads every record. Each round: --before-s seconds with the live partition alone, then the
// backlog assigned from its start next to it until every backlog record has been read. Latency =
// Date.now() when the application sees the record - its timestamp; the first 250 ms of each phase
// are left out (the assign that starts it seeks).
//
// Measured with it (2 shared cores, one broker, 3M x 1 KB over 12 partitions, 10k records/s of
// 100 B, the same window, 10 drains each): before the two fairness changes the live records were
// 17-49 ms old at the median during the drain (p99 29-133 ms; 1 ms and 3-7 ms before it), nearly
// all of it before their Fetch answer arrived: the live partition rode in the backlog's 12 MiB
// Fetches, ~20 ms each. With caught-up partitions in a lane of their own: p50 1-2 ms, p99 7-14 ms
// during the drain (before: p99 3-7 ms). The drain: 787k records/s at the median before, 705k after
// (the live lane's ~1000 small Fetches a second). Pacing the live lane (2 ms waits with min bytes
// raised while the bulk lane is busy) gave p50 3-4 ms and no throughput back: not kept.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { createTopic, ensureKafka, producerPerformance, startKafka, type KafkaCluster, type KafkaTarget } from '@kwire/broker';
import { encodeRecordBatch, ListOffsets, Metadata, Produce, ZERO_UUID } from '@kwire/protocol';
import { createConsumer, type ConsumerBatch } from '../../src/index.js';
import { BrokerPool } from '../../src/internals.js';

const HELP = `fairness-probe: live-partition latency while the same consumer drains a backlog

  --bootstrap HOST:PORT     use a running broker (default: start one with startKafka)
  --backlog-records N       backlog records (default 1000000)
  --backlog-size B          backlog record size (default 1024)
  --backlog-partitions P    backlog partitions (default 12)
  --rate R                  live records/s (default 10000)
  --live-size B             live record size (default 100)
  --before-s S              seconds of the live partition alone per round (default 8)
  --rounds N                rounds of before + drain (default 3)
  --config JSON             extra consumer config, e.g. '{"maxPollRecords":100}'
  --append-time             the live topic has LogAppendTime timestamps: latency from the broker's append
                            (without the produce request's own time) instead of from the send
  --trace-produce           the live producer prints its Produce latencies every second
  --json                    one JSON line per phase as well
  --help`;

/** Left out at the start of each phase: the assign that starts it seeks the live partition. */
const WARMUP_MS = 250;

interface Phase {
  round: number;
  name: 'before' | 'drain';
  latencies: number[];
  /** Of each latency, the time since the record's Fetch answer arrived (waiting in the client). */
  queued: number[];
  startedAt: number;
  endedAt: number;
  backlogRecords: number;
  backlogBytes: number;
}

function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

function summary(p: Phase) {
  const s = [...p.latencies].sort((a, b) => a - b);
  const q = [...p.queued].sort((a, b) => a - b);
  const seconds = (p.endedAt - p.startedAt) / 1000;
  return {
    round: p.round,
    phase: p.name,
    seconds: Number(seconds.toFixed(1)),
    liveRecords: s.length,
    p50: percentile(s, 0.5),
    p99: percentile(s, 0.99),
    max: s.length ? s[s.length - 1]! : Number.NaN,
    queuedP50: percentile(q, 0.5),
    queuedP99: percentile(q, 0.99),
    backlogRecordsPerSec: p.name === 'drain' ? Math.round(p.backlogRecords / seconds) : 0,
    backlogMiBPerSec: p.name === 'drain' ? Number((p.backlogBytes / seconds / 1048576).toFixed(1)) : 0,
  };
}

async function topicEnds(bootstrap: string, topic: string): Promise<number[] | undefined> {
  const pool = new BrokerPool({ bootstrapServers: bootstrap, clientId: 'fairness-probe' });
  try {
    const conn = await pool.bootstrap();
    const md = await conn.request(Metadata, { topics: [{ topicId: ZERO_UUID, name: topic }], allowAutoTopicCreation: false });
    const t = md.topics.find((x) => x.name === topic);
    if (!t || t.errorCode !== 0) return undefined;
    const res = await conn.request(ListOffsets, {
      replicaId: -1,
      isolationLevel: 0,
      topics: [{ name: topic, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, currentLeaderEpoch: -1, timestamp: -1n })) }],
      timeoutMs: 10_000,
    });
    return res.topics[0]!.partitions.sort((a, b) => a.partitionIndex - b.partitionIndex).map((p) => Number(p.offset));
  } finally {
    await pool.close();
  }
}

/** The child process: `rate` records/s to partition 0 of `topic`, a batch per millisecond tick. */
async function liveProducer(bootstrap: string, topic: string, rate: number, size: number, trace: boolean): Promise<void> {
  const pool = new BrokerPool({ bootstrapServers: bootstrap, clientId: 'fairness-probe-live' });
  const any = await pool.bootstrap();
  let leader;
  let topicId = ZERO_UUID;
  for (;;) {
    const md = await any.request(Metadata, { topics: [{ topicId: ZERO_UUID, name: topic }], allowAutoTopicCreation: false });
    const t = md.topics.find((x) => x.name === topic);
    const p = t?.partitions[0];
    if (t && t.errorCode === 0 && p && p.leaderId >= 0) {
      leader = md.brokers.find((b) => b.nodeId === p.leaderId)!;
      topicId = t.topicId;
      break;
    }
    await sleep(200);
  }
  const conn = await pool.get({ host: leader.host, port: leader.port, nodeId: leader.nodeId });
  const value = Buffer.alloc(size, 'x');
  let running = true;
  process.on('message', (m) => {
    if (m === 'stop') running = false;
  });
  process.send!('ready');
  const started = Date.now();
  let sent = 0;
  let window: number[] = [];
  let windowStart = started;
  while (running) {
    const now = Date.now();
    const due = Math.floor(((now - started) * rate) / 1000) - sent;
    if (due > 0) {
      const records = Array.from({ length: due }, () => ({ key: null, value, timestamp: now }));
      const t0 = performance.now();
      const res = await conn.request(Produce, {
        transactionalId: null,
        acks: 1,
        timeoutMs: 30_000,
        topicData: [{ name: topic, topicId, partitionData: [{ index: 0, records: encodeRecordBatch(records, { compression: 'none' }) }] }],
      });
      const code = res.responses[0]!.partitionResponses[0]!.errorCode;
      if (code !== 0) throw new Error(`Produce to ${topic}: error ${code}`);
      sent += due;
      if (trace) {
        window.push(performance.now() - t0);
        if (now - windowStart >= 1000) {
          window.sort((a, b) => a - b);
          console.error(
            `[live producer] ${window.length} Produce requests: p50 ${percentile(window, 0.5).toFixed(1)} ms p99 ${percentile(window, 0.99).toFixed(1)} ms max ${window.at(-1)!.toFixed(1)} ms`,
          );
          window = [];
          windowStart = now;
        }
      }
    }
    await sleep(1);
  }
  await pool.close();
  process.send!({ sent });
  process.disconnect();
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      help: { type: 'boolean' },
      bootstrap: { type: 'string' },
      'backlog-records': { type: 'string', default: '1000000' },
      'backlog-size': { type: 'string', default: '1024' },
      'backlog-partitions': { type: 'string', default: '12' },
      rate: { type: 'string', default: '10000' },
      'live-size': { type: 'string', default: '100' },
      'before-s': { type: 'string', default: '8' },
      rounds: { type: 'string', default: '3' },
      config: { type: 'string', default: '{}' },
      json: { type: 'boolean' },
      'append-time': { type: 'boolean' },
      'trace-produce': { type: 'boolean' },
      'live-producer': { type: 'string' },
    },
  });
  if (values.help) {
    console.log(HELP);
    return;
  }
  const rate = Number(values.rate);
  const liveSize = Number(values['live-size']);
  if (values['live-producer']) {
    const [bootstrap, topic] = values['live-producer'].split(' ');
    await liveProducer(bootstrap!, topic!, rate, liveSize, values['trace-produce'] === true);
    return;
  }
  const backlogRecords = Number(values['backlog-records']);
  const backlogSize = Number(values['backlog-size']);
  const backlogPartitions = Number(values['backlog-partitions']);
  const beforeMs = Number(values['before-s']) * 1000;
  const rounds = Number(values.rounds);
  const log = (line: string) => console.error(`[probe ${new Date().toISOString().slice(11, 23)}] ${line}`);

  let cluster: KafkaCluster | undefined;
  let target: KafkaTarget;
  if (values.bootstrap) {
    target = { bootstrap: values.bootstrap, dist: await ensureKafka() };
  } else {
    cluster = await startKafka({ heapMb: 1024, log });
    target = cluster;
    log(`broker at ${cluster.bootstrap}`);
  }
  const backlogTopic = `backlog-${backlogRecords}x${backlogSize}-${backlogPartitions}`;
  const liveTopic = values['append-time'] ? 'live-append-time' : 'live';
  let producer: ReturnType<typeof fork> | undefined;
  try {
    let ends = await topicEnds(target.bootstrap, backlogTopic);
    if (!ends || ends.reduce((a, b) => a + b, 0) !== backlogRecords) {
      log(`loading ${backlogTopic}`);
      await createTopic(target, { topic: backlogTopic, partitions: backlogPartitions });
      const p = await producerPerformance(target, {
        topic: backlogTopic,
        numRecords: backlogRecords,
        recordSize: backlogSize,
        props: { 'batch.size': 262_144, 'linger.ms': 20, acks: 1 },
        timeoutMs: 900_000,
      });
      log(`loaded: ${p.summary}`);
      ends = (await topicEnds(target.bootstrap, backlogTopic))!;
    }
    await createTopic(target, { topic: liveTopic, partitions: 1, config: values['append-time'] ? { 'message.timestamp.type': 'LogAppendTime' } : {} });

    producer = fork(
      fileURLToPath(import.meta.url),
      ['--live-producer', `${target.bootstrap} ${liveTopic}`, '--rate', String(rate), '--live-size', String(liveSize), ...(values['trace-produce'] ? ['--trace-produce'] : [])],
      { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
    );
    await new Promise<void>((resolve, reject) => {
      producer!.once('message', () => resolve());
      producer!.once('exit', (code) => reject(new Error(`live producer exited (${code})`)));
    });
    log(`live producer: ${rate} records/s of ${liveSize} B`);

    const extra = JSON.parse(values.config!) as Record<string, unknown>;
    const consumer = createConsumer({ bootstrapServers: target.bootstrap, clientId: 'fairness-probe', ...extra });
    const phases: Phase[] = [];
    let phase: Phase | undefined;
    let backlogLeft = 0;
    let drained: (() => void) | undefined;
    const reading = (async () => {
      for await (const batch of consumer as AsyncIterable<ConsumerBatch<unknown, Buffer>>) {
        const now = Date.now();
        if (batch.topic === liveTopic) {
          if (phase && now - phase.startedAt >= WARMUP_MS) {
            for (const r of batch.records) {
              phase.latencies.push(now - r.timestamp);
              phase.queued.push(now - batch.fetchedAt);
            }
          }
        } else {
          let bytes = 0;
          for (const r of batch.records) bytes += r.value.length;
          if (phase) {
            phase.backlogRecords += batch.records.length;
            phase.backlogBytes += bytes;
          }
          backlogLeft -= batch.records.length;
          if (backlogLeft <= 0 && drained) {
            drained();
            drained = undefined;
          }
        }
      }
    })();
    const start = (round: number, name: Phase['name']) => {
      if (phase) phase.endedAt = Date.now();
      phase = { round, name, latencies: [], queued: [], startedAt: Date.now(), endedAt: 0, backlogRecords: 0, backlogBytes: 0 };
      phases.push(phase);
    };
    const report = (p: Phase) => {
      const s = summary(p);
      log(
        `round ${s.round} ${s.phase.padEnd(6)} ${s.seconds}s live ${s.liveRecords} p50 ${s.p50} ms p99 ${s.p99} ms max ${s.max} ms (in the client: p50 ${s.queuedP50} p99 ${s.queuedP99})` +
          (s.phase === 'drain' ? ` | backlog ${s.backlogRecordsPerSec} records/s ${s.backlogMiBPerSec} MiB/s` : ''),
      );
      if (values.json) console.log(JSON.stringify(s));
    };
    const live = { topic: liveTopic, partition: 0 };
    const progress = setInterval(() => {
      if (phase) log(`  ${phase.name}: ${phase.latencies.length} live records measured, ${backlogLeft} backlog records to go`);
    }, 2000);
    await consumer.assign([{ ...live, offset: 'latest' }]);
    for (let round = 1; round <= rounds; round++) {
      start(round, 'before');
      await sleep(beforeMs);
      const position = consumer.position(live) ?? 'latest';
      backlogLeft = ends.reduce((a, b) => a + b, 0);
      const done = new Promise<void>((resolve) => (drained = resolve));
      start(round, 'drain');
      report(phases.at(-2)!);
      await consumer.assign([{ ...live, offset: position }, ...ends.map((_, partition) => ({ topic: backlogTopic, partition, offset: 'earliest' as const }))]);
      await done;
      phase!.endedAt = Date.now();
      report(phase!);
      phase = undefined;
      await consumer.assign([{ ...live, offset: consumer.position(live) ?? 'latest' }]);
    }
    clearInterval(progress);
    await consumer.close();
    await reading;
    const by = (name: string) => phases.filter((p) => p.name === name).map(summary);
    const line = (name: string) =>
      by(name)
        .map((s) => `p50 ${s.p50} p99 ${s.p99} max ${s.max}` + (name === 'drain' ? ` (${s.backlogRecordsPerSec} r/s)` : ''))
        .join(' | ');
    log(`before: ${line('before')}`);
    log(`drain:  ${line('drain')}`);
  } finally {
    if (producer && producer.exitCode === null) {
      producer.send('stop');
      await new Promise((r) => producer!.once('exit', r));
    }
    await cluster?.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
