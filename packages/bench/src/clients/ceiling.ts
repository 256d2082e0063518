// The transport ceiling: kwire's transport (a Connection from @kwire/consumer's BrokerPool)
// sending the same Fetch requests a consumer sends, for every partition not yet at its end, one in
// flight per broker with kwire's default sizes (fetch.max.bytes 50 MiB, fetch.max.wait.ms 500,
// fetch.min.bytes 1, and each partition's max.partition.fetch.bytes from the consumer's own
// FetchSizes: 1 MiB, up to 4 MiB while it is behind); each answer's record
// batches are only scanned (scanRecordBatches: batch headers, to advance the fetch offsets) and the
// bytes are released undecoded. No consumer can do less with the same requests: its records/s is
// what this broker and machine deliver to one connection, and every client's figure is shown as a
// ratio to it. It is not a limit on a client that asks differently (larger answers, more
// connections).
//
// With config.decompress (the `ceiling-decompress` row of compressed scenarios) each batch is also
// decompressed (CRC not checked, records not decoded): the floor of what any client reading those
// batches must spend.
//
// It is measured like every client: run-client.ts reads the topic warm-up + measured times in one
// process, each pass with a BrokerPool of its own, timed from connected to the last record.
//
// Verification: the count comes from the offsets (the fetch offsets must reach every partition's
// high watermark and add up to the expected records); values are not decoded, so there is no checksum.
import { BrokerPool, decodeResponseBody, FetchSizes, LatencyWindow, resolveConfig, retainedFor, SimpleFramePool } from '@kwire/consumer/internals';
import { Fetch, Metadata, readRecordBatches, scanRecordBatches, ZERO_UUID, type FetchRequest, type Input } from '@kwire/protocol';
import type { Connection, ResponseFrameLease } from '@kwire/consumer/internals';
import { now, Run, type ClientOptions, type ClientReport } from './common.js';

export async function ceilingClient(options: ClientOptions): Promise<ClientReport> {
  const run = new Run('ceiling', options);
  run.start();
  // The consumer at its defaults: the sizes it asks (one FetchSizes for every leader, as the
  // fetcher's) and the frames it keeps. With grown sizes an answer of 12 partitions is up to 50 MiB,
  // a 64 MiB buffer, and the connections' default pool (64 MiB in all) let such buffers go, so
  // every answer was fresh memory (the 12 partition ceilings of the eleventh run read 2.4-2.9x
  // slower, system CPU 0.5 s a pass).
  const defaults = resolveConfig({ bootstrapServers: options.bootstrap });
  const sizes = new FetchSizes(defaults, () => true);
  const pool = new BrokerPool({ bootstrapServers: options.bootstrap, clientId: 'kwire-ceiling', framePool: new SimpleFramePool({ maxRetainedBytes: retainedFor(defaults.maxBufferedBytes) }) });
  let wireBytes = 0;
  let decompressedBytes = 0;
  const decompress = options.config?.decompress === true;
  // The burning ceiling (`ceiling-burn`, an experiment): CPU spent on the main thread per MiB
  // received, to see whether a client's extra CPU per byte alone accounts for its distance from
  // the ceiling on these shared cores.
  // Only the variant that asks (config.burn): the variable reaches every client of the run.
  const burnUsPerMiB = options.config?.burn === true ? Number(process.env.KWIRE_BENCH_BURN_US_PER_MIB ?? 0) : 0;
  // Send to answer of each Fetch, measured as kwire's consumer measures its own (fetchLatency).
  const latency = new LatencyWindow();
  try {
    const { topicId, leaders } = await connectLeaders(pool, options.topic);
    if (run.mode === 'latency') {
      // The latency floor: the same fetch loop, records decoded only for their timestamps.
      if (leaders.length !== 1) throw new Error('the latency floor expects one leader');
      run.ready();
      await latencyFloor(run, leaders[0]!.connection, options.topic, topicId, leaders[0]!.partitions);
    } else {
      run.ready();
      const counts = await Promise.all(
        leaders.map(async ({ connection: conn, partitions }) => {
          const offsets = new Map<number, bigint>(partitions.map((p) => [p, 0n]));
          const ends = new Map<number, bigint>();
          let records = 0;
          const pendingNow = () => partitions.filter((p) => !ends.has(p) || offsets.get(p)! < ends.get(p)!);
          // What each partition of the Fetch in flight was asked for.
          const asked = new Map<number, number>();
          let fetchAsked = 0;
          const send = () => {
            const pending = pendingNow();
            fetchAsked = 0;
            for (const p of pending) {
              asked.set(p, sizes.sizeFor(String(p)));
              fetchAsked += asked.get(p)!;
            }
            return {
              sentAt: performance.now(),
              lease: conn.requestFrame<FetchRequest>(
                Fetch,
                fullFetch(options.topic, topicId, pending, offsets, (p) => asked.get(p)!),
                { timeoutMs: 30_500 },
              ),
            };
          };
          // The burning ceiling sends its next Fetch before it burns, as kwire sends its next one
          // before it decodes an answer (the early fetch); the others send after the scan.
          let early: ReturnType<typeof send> | null = null;
          for (;;) {
            if (!early && pendingNow().length === 0) return records;
            const f = early ?? send();
            early = null;
            const lease = await f.lease;
            latency.record(performance.now() - f.sentAt);
            let got = 0;
            let toBurn = 0;
            try {
              for (const { partition, records } of partitionsWithRecords(lease, ends)) {
                const scan = scanRecordBatches(records);
                const end = scan.batches > 0 ? scan.nextOffset : offsets.get(partition)!;
                sizes.answered(String(partition), asked.get(partition)!, records.length, end < ends.get(partition)!, fetchAsked);
                if (scan.batches === 0) continue;
                wireBytes += scan.wholeBytes;
                toBurn += (scan.wholeBytes / 1048576) * burnUsPerMiB;
                if (decompress) {
                  const reader = readRecordBatches(records, { checkCrc: false });
                  for (let b = reader.next(); b !== null; b = reader.next()) {
                    // Loads (decompresses) the records without decoding them.
                    decompressedBytes += b.recordsSizeInBytes;
                    b.release();
                  }
                }
                const from = offsets.get(partition)!;
                if (scan.nextOffset > from) {
                  got += Number(scan.nextOffset - from);
                  offsets.set(partition, scan.nextOffset);
                }
              }
            } finally {
              lease.release();
            }
            if (toBurn > 0) {
              if (pendingNow().length > 0) early = send();
              burn(toBurn);
            }
            records += got;
            run.batch(got);
          }
        }),
      );
      const total = counts.reduce((a, b) => a + b, 0);
      if (total !== options.records) run.error = `read ${total} records, expected ${options.records}`;
    }
  } catch (err) {
    run.error = `ceiling: ${(err as Error).message}`;
  } finally {
    await pool.close();
  }
  // Nothing decoded, so no digest: bytes are the records' value bytes by construction.
  const report = await run.report({ checksum: null, bytes: run.count * (options.recordSize ?? 0) });
  if (run.mode !== 'latency') {
    const l = latency.summary();
    report.notes = [
      ...(report.notes ?? []),
      `${(wireBytes / 1048576).toFixed(0)} MiB on the wire${decompress ? `, ${(decompressedBytes / 1048576).toFixed(0)} MiB decompressed` : ''}; fetch latency p50/p90/p99 ${l.p50Ms}/${l.p90Ms}/${l.p99Ms} ms`,
    ];
  }
  return report;
}

/** Spins on the main thread for `us` microseconds: CPU time, nothing else. */
function burn(us: number): void {
  const until = performance.now() + us / 1000;
  while (performance.now() < until);
}

/**
 * The partitions of a Fetch answer that hold records bytes, each error code checked (an error
 * throws) and each high watermark noted in `ends`.
 */
export function partitionsWithRecords(lease: ResponseFrameLease, ends: Map<number, bigint>): { partition: number; records: Buffer }[] {
  const res = decodeResponseBody(Fetch, lease);
  if (res.errorCode !== 0) throw new Error(`Fetch error ${res.errorCode}`);
  const out: { partition: number; records: Buffer }[] = [];
  for (const t of res.responses) {
    for (const pd of t.partitions) {
      if (pd.errorCode !== 0) throw new Error(`Fetch error ${pd.errorCode} on partition ${pd.partitionIndex}`);
      ends.set(pd.partitionIndex, pd.highWatermark);
      if (pd.records !== null && pd.records.length > 0) out.push({ partition: pd.partitionIndex, records: pd.records });
    }
  }
  return out;
}

/** A connection to each leader of `topicName`'s partitions, with the partitions it leads. */
export async function connectLeaders(pool: BrokerPool, topicName: string): Promise<{ topicId: string; leaders: { nodeId: number; connection: Connection; partitions: number[] }[] }> {
  const boot = await pool.bootstrap();
  const md = await boot.request(Metadata, { topics: [{ topicId: ZERO_UUID, name: topicName }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
  const topic = md.topics.find((t) => t.name === topicName);
  if (!topic || topic.errorCode !== 0) throw new Error(`topic ${topicName} not in metadata (error ${topic?.errorCode})`);
  const byLeader = new Map<number, number[]>();
  for (const p of topic.partitions) {
    let list = byLeader.get(p.leaderId);
    if (!list) byLeader.set(p.leaderId, (list = []));
    list.push(p.partitionIndex);
  }
  const leaders = await Promise.all(
    [...byLeader].map(async ([nodeId, partitions]) => {
      const b = md.brokers.find((x) => x.nodeId === nodeId);
      if (!b) throw new Error(`leader ${nodeId} not among the brokers`);
      return { nodeId, partitions, connection: await pool.get({ host: b.host, port: b.port, nodeId }) };
    }),
  );
  return { topicId: topic.topicId, leaders };
}

/**
 * A full (sessionless) Fetch of `partitions` from their offsets, with the Java consumer's default
 * sizes and wait: fetch.max.bytes 50 MiB, max.partition.fetch.bytes 1 MiB (or `sizeOf`'s),
 * fetch.min.bytes 1, fetch.max.wait.ms 500.
 */
export function fullFetch(
  topic: string,
  topicId: string,
  partitions: readonly number[],
  offsets: ReadonlyMap<number, bigint>,
  sizeOf: (partition: number) => number = () => 1_048_576,
): Input<FetchRequest> {
  return {
    replicaId: -1,
    maxWaitMs: 500,
    minBytes: 1,
    maxBytes: 52_428_800,
    isolationLevel: 0,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [
      {
        topic,
        topicId,
        partitions: partitions.map((p) => ({ partition: p, currentLeaderEpoch: -1, fetchOffset: offsets.get(p)!, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: sizeOf(p) })),
      },
    ],
    forgottenTopicsData: [],
    rackId: '',
  };
}

/**
 * Fetch requests back to back (one in flight, fetch.min.bytes 1, fetch.max.wait.ms 500: what every
 * consumer's defaults do), each record's CreateTime against the moment its response was read:
 * the end-to-end latency this broker and producer allow, with nothing of a consumer around it.
 */
async function latencyFloor(run: Run, conn: Connection, topic: string, topicId: string, partitions: number[]): Promise<void> {
  const offsets = new Map<number, bigint>(partitions.map((p) => [p, 0n]));
  const digest = run.digest;
  while (!run.done) {
    const lease = await conn.requestFrame<FetchRequest>(Fetch, fullFetch(topic, topicId, partitions, offsets), { timeoutMs: 30_500 });
    const at = now();
    let got = 0;
    try {
      const res = decodeResponseBody(Fetch, lease);
      for (const t of res.responses) {
        for (const pd of t.partitions) {
          if (pd.errorCode !== 0) throw new Error(`Fetch error ${pd.errorCode} on partition ${pd.partitionIndex}`);
          const records = pd.records;
          if (records === null || records.length === 0) continue;
          const reader = readRecordBatches(records, { checkCrc: false });
          for (let batch = reader.next(); batch !== null; batch = reader.next()) {
            const c = batch.cursor();
            for (let r = c.next(); r !== null; r = c.next()) {
              run.latencyOf(at, r.timestamp);
              digest.add(r.value);
              got++;
            }
            batch.release();
          }
          const scan = scanRecordBatches(records);
          if (scan.batches > 0 && scan.nextOffset > offsets.get(pd.partitionIndex)!) offsets.set(pd.partitionIndex, scan.nextOffset);
        }
      }
    } finally {
      lease.release();
    }
    run.batch(got);
  }
}
