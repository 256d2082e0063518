// The scenario matrix and the clients. Full mode covers every record size (100 B, 1 KB, 10 KB),
// both partition counts (1, 12) and every codec (none, lz4, zstd) without running every
// combination, a full-touch workload (keys and headers, every field read), plus the group,
// latency, latency-under-load (fairness), rebalance, RSS-soak (10 GB) and share-group (KIP-932, 1
// and 3 members) runs. A full run on a fresh clone of the 2-core machine, node-rdkafka's build
// included, must stay under 40 minutes (each run's time is in its report; what each trim saved, in
// results/analysis.md). Quick mode is a smoke test of every code path on small data, under 3 minutes.
//
// Steady state: every throughput client reads the topic `warmupPasses` + `repetitions` times in
// one process (one JVM for Java; kcat, a C program with nothing to warm, once per process), and
// the measured passes are the repetitions. In full runs a pass ends at the topic's end (1 GB of
// values) or PASS_SECONDS into its fetch phase, whichever comes first (issue 32). Peers are swept over the settings their expert users
// change for throughput; each setting is a client variant ("family@setting") with a row of its own,
// and the report compares kwire (at its defaults) against each family's best variant.
import type { HandlerSettings } from './clients/handler-settings.js';
import type { Codec, ScenarioInfo } from './report/types.js';

const MIB = 1_048_576;

export interface ClientVariant {
  /** "family" for a library's defaults as the bench ran them before, "family@setting" otherwise. */
  id: string;
  family: string;
  /** The run-client program ('kwire', 'kafkajs', ...), or 'java' / 'kcat' (driven from outside). */
  program: string;
  /** What differs from the library's defaults, in words. */
  setting: string;
  /** Handed to the library (consumer configuration). */
  config?: Record<string, unknown>;
  /** How the bench drives it (ClientOptions.settings); 'partitions' is replaced by the scenario's count. */
  settings?: Record<string, unknown>;
  kcatArgs?: string[];
  /** Only where the setting can make a difference. */
  only?: 'compressed' | 'multi-partition';
  /** Only on scenarios of records up to this size (a sweep point that never won above it). */
  maxRecordSize?: number;
  /**
   * Only on scenarios where this sweep point has been its family's best at least once in the eight
   * full runs before issue 32 (results/ history): compressed topics, 10 KB records, or both.
   */
  wonOn?: 'compressed-or-10kb' | 'compressed';
  /** Every pass in a process of its own (a library that cannot stop mid-topic and go on: node-rdkafka's flowing mode). */
  processPerPass?: boolean;
  /** Full runs: only on the scenarios of issue 33's facade goals (100 B and 1 KB, 12 partitions, value only, uncompressed). */
  facadeOnly?: boolean;
  /** Not on these scenarios (where it was never its family's best in those eight runs). */
  neverWonOn?: readonly string[];
  /** Not run in --quick (the sweep's other points: --quick runs each family's defaults, platformatic at 1 MiB and node-rdkafka's flowing mode, one code path each). */
  fullOnly?: boolean;
  /** Run only when named in --clients (experiments). */
  optIn?: boolean;
}

// node-rdkafka's queue settings for throughput: a deep prefetch queue (librdkafka's defaults are
// 100,000 messages or 64 MiB per partition) and a short back-off when it is full (default 1 s).
const RDKAFKA_TUNED = { 'queued.min.messages': 1_000_000, 'queued.max.messages.kbytes': 1_048_576, 'fetch.queue.backoff.ms': 10 };
const platformatic = (mib: number, fullOnly: boolean, wonOn?: ClientVariant['wonOn']): ClientVariant => ({
  id: `platformatic@${mib}MiB`,
  family: 'platformatic',
  program: 'platformatic',
  setting: `maxBytes = maxBytesPerPartition = ${mib} MiB${mib === 50 ? ' (its default sizes)' : ''}, read_uncommitted`,
  config: { maxBytes: mib * MIB, maxBytesPerPartition: mib * MIB, isolationLevel: 0 },
  fullOnly,
  ...(wonOn ? { wonOn } : {}),
});

export const THROUGHPUT_VARIANTS: readonly ClientVariant[] = [
  { id: 'kwire', family: 'kwire', program: 'kwire', setting: 'defaults' },
  { id: 'kwire-nocrc', family: 'kwire-nocrc', program: 'kwire', setting: 'checkCrcs: false', config: { checkCrcs: false } },
  {
    // Larger per-partition fetches (4 MiB, as java@4MiB), fixed: beside the defaults, whose sizes
    // adapt (1 MiB, up to 4 MiB for a partition that is behind: issue 32 step 4).
    id: 'kwire-4mib',
    family: 'kwire-4mib',
    program: 'kwire',
    setting: 'maxPartitionFetchBytes 4 MiB (max.partition.fetch.bytes), defaults otherwise',
    config: { maxPartitionFetchBytes: 4 * MIB },
    fullOnly: true,
  },
  {
    // max.partition.fetch.bytes set to its default, 1 MiB: an explicit setting is obeyed exactly, so
    // this is kwire before sizes adapted (what the adaptive defaults gain or lose).
    id: 'kwire-1mib',
    family: 'kwire-1mib',
    program: 'kwire',
    setting: 'maxPartitionFetchBytes 1 MiB set (fixed: no adaptive sizes), defaults otherwise',
    config: { maxPartitionFetchBytes: MIB },
    fullOnly: true,
  },
  {
    // The zero-allocation path (ConsumerBatch.cursor(): one reused record, bytes read by position), defaults otherwise.
    id: 'kwire-cursor',
    family: 'kwire-cursor',
    program: 'kwire',
    setting: 'batch.cursor() (the zero-allocation path), defaults',
    settings: { cursor: true },
    fullOnly: true,
  },
  { id: 'kafkajs', family: 'kafkajs', program: 'kafkajs', setting: 'defaults (eachBatch, maxBytes 10 MiB, maxBytesPerPartition 1 MiB, one partition at a time)' },
  {
    id: 'kafkajs@concurrent',
    family: 'kafkajs',
    program: 'kafkajs',
    setting: 'partitionsConsumedConcurrently = partitions',
    settings: { partitionsConsumedConcurrently: 'partitions' },
    only: 'multi-partition',
    fullOnly: true,
  },
  {
    id: 'kafkajs@concurrent-50MiB',
    family: 'kafkajs',
    program: 'kafkajs',
    setting: 'partitionsConsumedConcurrently = partitions, maxBytes 50 MiB, maxBytesPerPartition 4 MiB',
    settings: { partitionsConsumedConcurrently: 'partitions' },
    config: { maxBytes: 50 * MIB, maxBytesPerPartition: 4 * MIB },
    fullOnly: true,
  },
  // Issue 32's trim (plan.ts's header): in eight full runs @1MiB was platformatic's best on every
  // uncompressed topic of 100 B and 1 KB records but three times (by 2-13%); @4MiB won at 10 KB,
  // @16MiB at 10 KB and on compressed topics, @50MiB only on compressed ones.
  // Issue 33: kafkajs's own programs through @kwire/kafkajs (the one-line migration): what the
  // facade costs against kwire's API and gains over kafkajs (the kafkajs@eachMessage row beside it).
  {
    // kwire's own API with the memory rule the facade runs under (records' Buffers never reused):
    // what that rule costs, apart from what the facade's message objects cost.
    id: 'kwire-owned',
    family: 'kwire-owned',
    program: 'kwire',
    setting: "recordBuffers 'owned' (Buffers the application may keep, as @kwire/kafkajs runs), defaults otherwise",
    config: { recordBuffers: 'owned' },
    fullOnly: true,
    facadeOnly: true,
  },
  { id: 'kwire-kafkajs', family: 'kwire-kafkajs', program: 'kwire-kafkajs', setting: "@kwire/kafkajs through kafkajs's program (eachBatch, kafkajs's defaults)", facadeOnly: true },
  {
    id: 'kwire-kafkajs@eachMessage',
    family: 'kwire-kafkajs',
    program: 'kwire-kafkajs',
    setting: '@kwire/kafkajs, run({ eachMessage })',
    settings: { each: 'message' },
    fullOnly: true,
    facadeOnly: true,
  },
  {
    // The facade's opt-in for handlers that keep no Buffer past their promise: kwire's pooled memory.
    id: 'kwire-kafkajs@pooled',
    family: 'kwire-kafkajs',
    program: 'kwire-kafkajs',
    setting: "@kwire/kafkajs, kwire: { recordBuffers: 'pooled' } (Buffers valid until the handler settles)",
    config: { kwire: { recordBuffers: 'pooled' } },
    fullOnly: true,
    facadeOnly: true,
  },
  { id: 'kafkajs@eachMessage', family: 'kafkajs', program: 'kafkajs', setting: 'run({ eachMessage }), defaults otherwise', settings: { each: 'message' }, fullOnly: true, facadeOnly: true },
  platformatic(1, false),
  platformatic(4, true, 'compressed-or-10kb'),
  platformatic(16, true, 'compressed-or-10kb'),
  platformatic(50, true, 'compressed'),
  // Never node-rdkafka's best on 1 KB topics in those runs (flowing mode won each by 1.3-2.8x).
  { id: 'rdkafka', family: 'rdkafka', program: 'rdkafka', setting: 'consume(1000), defaults', neverWonOn: ['1KB-12p-none', '1KB-12p-zstd'] },
  {
    id: 'rdkafka@consume10k',
    family: 'rdkafka',
    program: 'rdkafka',
    setting: 'consume(10000), queued.min.messages 1M, queued.max.messages.kbytes 1 GiB, fetch.queue.backoff.ms 10',
    settings: { consume: 10_000 },
    config: RDKAFKA_TUNED,
    fullOnly: true,
    // The full run of 2026-12-01 (results/): behind flowing mode on every scenario, and at 1 KB and
    // 10 KB behind it by more than the spreads; kept where the per-call batch matters most.
    maxRecordSize: 100,
  },
  {
    id: 'rdkafka@flowing',
    family: 'rdkafka',
    program: 'rdkafka',
    setting: 'flowing mode, queued.min.messages 1M, queued.max.messages.kbytes 1 GiB, fetch.queue.backoff.ms 10',
    settings: { consume: 'flowing' },
    config: RDKAFKA_TUNED,
    // A pass cut at its time limit leaves up to 1 GiB prefetched: clients/rdkafka.ts.
    processPerPass: true,
  },
  {
    // Never the Java family's best in the 14 scenario runs where both ran (java@4MiB won each, by
    // 3-68%): since issue 32 only with --clients java (as an experiment), so that the run's time goes
    // to longer passes.
    id: 'java',
    family: 'java',
    program: 'java',
    setting: "ConsumerPerformance's settings (check.crcs=false, receive.buffer.bytes 2 MiB)",
    optIn: true,
  },
  {
    // ConsumerPerformance's --fetch-size (max.partition.fetch.bytes) at 4 MiB: what a Java user tuning
    // for throughput raises first. Measured before it was added (BenchJava, 2 x 7 passes each, one
    // broker): 1 KB 0.66-0.75M -> 0.79-0.84M records/s, 10 KB 1 partition 70-90k -> 100-110k, 100 B
    // level. The Java family's one row in every run (it was the family's best in all eight).
    id: 'java@4MiB',
    family: 'java',
    program: 'java',
    setting: "ConsumerPerformance's settings with --fetch-size 4 MiB (max.partition.fetch.bytes)",
    config: { 'max.partition.fetch.bytes': 4 * MIB },
  },
  { id: 'kcat', family: 'kcat', program: 'kcat', setting: "defaults, -f '%S\\n' (the value's size only)" },
  { id: 'kcat@queued', family: 'kcat', program: 'kcat', setting: "-X queued.min.messages=10000000, -f '%S\\n'", kcatArgs: ['-X', 'queued.min.messages=10000000'] },
  { id: 'ceiling', family: 'ceiling', program: 'ceiling', setting: 'the same Fetch requests, batches scanned, nothing decoded' },
  {
    id: 'ceiling-decompress',
    family: 'ceiling-decompress',
    program: 'ceiling',
    setting: 'the same, and every batch decompressed (no CRC, records not decoded)',
    config: { decompress: true },
    only: 'compressed',
  },
  {
    id: 'ceiling-burn',
    family: 'ceiling-burn',
    program: 'ceiling',
    setting: 'the same, spinning KWIRE_BENCH_BURN_US_PER_MIB µs of CPU on its main thread per MiB received (an experiment; only with --clients)',
    config: { burn: true },
    optIn: true,
  },
  // The worker-thread experiment (clients/split.ts): the same Fetch loop and cursor decode, the
  // transport on the main thread or on a worker. Only with --clients.
  {
    id: 'split-main',
    family: 'split-main',
    program: 'split',
    setting: "the ceiling's Fetch loop and the cursor's decode (CRC checked, every value digested) on the main thread (an experiment; only with --clients)",
    optIn: true,
  },
  {
    id: 'split-worker',
    family: 'split-worker',
    program: 'split',
    setting: "the same Fetch loop on a worker thread, each answer's records transferred to the main thread and decoded there (an experiment; only with --clients)",
    config: { worker: true },
    optIn: true,
  },
  {
    id: 'split-worker-crc',
    family: 'split-worker-crc',
    program: 'split',
    setting: 'the same, with the CRCs checked on the worker (an experiment; only with --clients)',
    config: { worker: true, workerCrc: true },
    optIn: true,
  },
];

/** The variant of each family that is the library's defaults (as the bench ran it before). */
export const DEFAULT_VARIANT: Record<string, string> = { platformatic: 'platformatic@50MiB' };

/** Client families (what availability is decided for); kcat@queued belongs to kcat. */
export const THROUGHPUT_CLIENTS = [...new Set(THROUGHPUT_VARIANTS.map((v) => v.family))];
export const GROUP_CLIENTS = ['kwire', 'kafkajs', 'platformatic', 'rdkafka'] as const;
/** The ceiling's fetch loop doubles as the latency floor: the same requests, no consumer around them. */
export const LATENCY_CLIENTS = ['kwire', 'kafkajs', 'platformatic', 'rdkafka', 'ceiling'] as const;
export const REBALANCE_CLIENTS = ['kwire', 'kafkajs', 'platformatic', 'rdkafka', 'java'] as const;
/** Share groups (KIP-932): no other JavaScript client has a share consumer; Java runs its ShareConsumerPerformance. */
export const SHARE_CLIENTS = ['kwire', 'java'] as const;
/**
 * Node client variants measured for allocation per record (a separate pass each): the defaults, and
 * kwire's zero-allocation path (report/goals.ts's 'alloc-cursor-0b'); kwire only in --quick.
 */
export const ALLOC_CLIENTS = ['kwire', 'kwire-cursor', 'kafkajs', 'platformatic@1MiB', 'rdkafka'] as const;
export function allocClients(mode: 'full' | 'quick'): readonly string[] {
  return mode === 'quick' ? ['kwire'] : ALLOC_CLIENTS;
}

/** The variants that run on scenario `s` in this mode. */
export function variantsFor(s: ScenarioInfo, mode: 'full' | 'quick', selected?: readonly string[]): ClientVariant[] {
  return THROUGHPUT_VARIANTS.filter((v) => {
    if (mode === 'quick' && v.fullOnly) return false;
    // A scenario without the sweep still runs kwire's zero-allocation path (kwire's own variant, not a peer's setting).
    if (s.sweep === false && v.fullOnly && v.family !== 'kwire-cursor') return false;
    if (v.optIn && !(selected ?? []).includes(v.id)) return false;
    if (v.only === 'compressed' && s.compression === 'none') return false;
    if (v.only === 'multi-partition' && s.partitions < 2) return false;
    if (v.maxRecordSize !== undefined && s.recordSize > v.maxRecordSize) return false;
    if (v.wonOn === 'compressed' && s.compression === 'none') return false;
    if (v.wonOn === 'compressed-or-10kb' && s.compression === 'none' && s.recordSize < 10_240) return false;
    if (v.neverWonOn?.includes(s.id)) return false;
    if (v.facadeOnly && mode === 'full' && !(s.recordSize <= 1024 && s.compression === 'none' && (s.touch ?? 'value') === 'value' && s.partitions === 12)) return false;
    // kcat prints records: it has no way to hand keys and headers to code, so no full touch.
    if (v.family === 'kcat' && s.touch === 'full') return false;
    return true;
  });
}

export function variantById(id: string): ClientVariant | undefined {
  return THROUGHPUT_VARIANTS.find((v) => v.id === id);
}

/**
 * The handler-bound family (issue 31): each row one client at one setting, one run, reading the
 * family's keyed topic in a fresh group. `program` is the run-client program ('handler-kwire', ...)
 * or 'java-parallel' (BenchParallel, driven from outside); `promises` is the order the setting
 * guarantees per key, which the run is checked against (a row that breaks it fails).
 */
export interface HandlerVariant {
  id: string;
  family: string;
  program: 'handler-kwire' | 'handler-kafkajs' | 'handler-platformatic' | 'java-parallel';
  setting: string;
  settings: Partial<HandlerSettings>;
  promises: 'key' | 'none';
}

const kwireIo = (ordering: 'key' | 'partition', maxConcurrency: number): HandlerVariant => ({
  id: `kwire@${ordering}-${maxConcurrency}`,
  family: 'kwire',
  program: 'handler-kwire',
  setting: `run({ eachMessage, maxConcurrency: ${maxConcurrency}, ordering: '${ordering}' })`,
  settings: { maxConcurrency, ordering },
  promises: 'key',
});
const javaParallel = (maxConcurrency: number): HandlerVariant => ({
  id: `java-parallel@key-${maxConcurrency}`,
  family: 'java-parallel',
  program: 'java-parallel',
  setting: `parallel-consumer 0.5.3.2, ProcessingOrder.KEY, maxConcurrency ${maxConcurrency}, Thread.sleep in its pool threads`,
  settings: { maxConcurrency, ordering: 'key' },
  promises: 'key',
});

/**
 * I/O-bound rows: a handler that awaits 5 ms. kwire with ordering 'partition' holds one record of
 * each of the 12 partitions at a time whatever maxConcurrency says (at most 12 x 200 records/s),
 * so it runs at 64 only: 256 and 1,024 would repeat the same figure for 30 s each.
 */
export const HANDLER_IO_VARIANTS: readonly HandlerVariant[] = [
  kwireIo('key', 1024),
  kwireIo('key', 256),
  kwireIo('key', 64),
  kwireIo('partition', 64),
  javaParallel(1024),
  javaParallel(256),
  javaParallel(64),
  {
    id: 'kafkajs@pcc12',
    family: 'kafkajs',
    program: 'handler-kafkajs',
    setting: 'run({ partitionsConsumedConcurrently: 12, eachMessage }) (its best: one record per partition at a time)',
    settings: { partitionsConsumedConcurrently: 12 },
    promises: 'key',
  },
  {
    // Its README's "Concurrent processing": hwp's forEach(stream, handler, 16), no ordering.
    id: 'platformatic@hwp16',
    family: 'platformatic',
    program: 'handler-platformatic',
    setting: "consume() and hwp's forEach(stream, handler, 16), as its README shows (no ordering)",
    settings: { concurrency: 16 },
    promises: 'none',
  },
];

/** CPU-bound rows: a handler that burns 1 ms of CPU, inline or on 2 worker threads (kwire's default ordering, 'partition'). */
export const HANDLER_CPU_VARIANTS: readonly HandlerVariant[] = [
  {
    id: 'kwire@inline',
    family: 'kwire',
    program: 'handler-kwire',
    setting: 'run({ eachMessage, maxConcurrency: 64 }), the burn on the main thread',
    settings: { maxConcurrency: 64 },
    promises: 'key',
  },
  {
    id: 'kwire@worker-2',
    family: 'kwire',
    program: 'handler-kwire',
    setting: "run({ worker: { module, threads: 2 } }), the burn on kwire's worker threads",
    settings: { workerThreads: 2 },
    promises: 'key',
  },
];

export function handlerVariantsFor(s: ScenarioInfo): readonly HandlerVariant[] {
  return s.kind === 'handler-io' ? HANDLER_IO_VARIANTS : s.kind === 'handler-cpu' ? HANDLER_CPU_VARIANTS : [];
}

export function handlerVariantById(kind: ScenarioInfo['kind'], id: string): HandlerVariant | undefined {
  return (kind === 'handler-io' ? HANDLER_IO_VARIANTS : kind === 'handler-cpu' ? HANDLER_CPU_VARIANTS : []).find((v) => v.id === id);
}

/** The time limit of each handler-bound run: the slow peers (about 2,000-3,000 records/s) are measured over their first 30 s. */
export const HANDLER_TIME_LIMIT_SECONDS = 30;

/** I/O-bound: 200,000 records of 100 B keyed over 2,000 keys on 12 partitions, a handler that awaits 5 ms. */
export function handlerIo(records = 200_000): ScenarioInfo {
  return {
    id: 'handler-io',
    kind: 'handler-io',
    title: `I/O-bound handler: ${records.toLocaleString('en-US')} records of 100 B, 2,000 keys, 12 partitions, a handler that awaits 5 ms`,
    recordSize: 100,
    partitions: 12,
    compression: 'none',
    records,
    repetitions: 1,
    keys: 2000,
    handlerMs: 5,
    timeLimitSeconds: HANDLER_TIME_LIMIT_SECONDS,
  };
}

/** CPU-bound: the first 20,000 records handled of the same topic, a handler that burns 1 ms of CPU (20 s of CPU inline, on 2 shared cores). */
export function handlerCpu(records = 20_000): ScenarioInfo {
  return {
    ...handlerIo(),
    id: 'handler-cpu',
    kind: 'handler-cpu',
    title: `CPU-bound handler: ${records.toLocaleString('en-US')} records of the I/O-bound topic, a handler that burns 1 ms of CPU`,
    records,
    handlerMs: 1,
  };
}

export interface Plan {
  mode: 'full' | 'quick';
  scenarios: ScenarioInfo[];
  latencyClients: readonly string[];
}

function sizeName(bytes: number): string {
  return bytes >= 1024 ? `${bytes / 1024}KB` : `${bytes}B`;
}

function sizeText(bytes: number): string {
  return bytes >= 1024 ? `${bytes / 1024} KB` : `${bytes} B`;
}

/** Full runs: the least time a throughput client warms up for before its measured passes, from its first pass's start. */
export const FULL_WARMUP_SECONDS = 4;
/** The same for the Java consumer's JVM (see below). */
export const FULL_JVM_WARMUP_SECONDS = 4;
/**
 * Issue 32: a full run's throughput topics hold 1 GB of values and a pass ends at the topic's end or
 * this many seconds into its fetch phase, whichever comes first: every measured pass lasts at
 * least 2 s or reads at least 1 GB. Passes of 0.05-0.6 s (500,000 records of 100 B, 250,000 of 1 KB)
 * measured the first Fetch round trips, not the client, and spread up to 44%.
 */
export const PASS_SECONDS = 2;
/** Records of `size` bytes that make at least 1 GB (1e9 bytes) of values. */
export function gigabyteOf(size: number): number {
  return Math.ceil(1e9 / size);
}

/** The least warm-up time a program gets on scenario `s` (seconds, 0 for none): the JVM its own, every other program the scenario's. */
export function warmupSecondsFor(s: ScenarioInfo, program: string): number {
  return (program === 'java' ? (s.jvmWarmupSeconds ?? s.warmupSeconds) : s.warmupSeconds) ?? 0;
}

/** How many warm-up passes came before the first measured one (`warmup`, the planned count, if none was measured). */
export function warmupsBefore(passes: readonly { warmup: boolean }[], warmup: number): number {
  const first = passes.findIndex((p) => !p.warmup);
  return first < 0 ? warmup : first;
}

export function throughput(recordSize: number, partitions: number, compression: Codec, records: number, repetitions: number, touch: 'value' | 'full' = 'value', warmupPasses = 1): ScenarioInfo {
  return {
    id: `${sizeName(recordSize)}-${partitions}p-${compression}${touch === 'full' ? '-full' : ''}`,
    kind: 'throughput',
    title: `${sizeText(recordSize)} records, ${partitions} partition${partitions > 1 ? 's' : ''}, ${compression === 'none' ? 'uncompressed' : compression}${touch === 'full' ? ', full touch (keys and headers; key, every value byte, headers, offset, timestamp read)' : ''}`,
    recordSize,
    partitions,
    compression,
    records,
    repetitions,
    warmupPasses,
    touch,
  };
}

/** A topic loaded for other runs to read (group, soak, share), with no throughput runs of its own. */
export function topicOnly(t: ScenarioInfo, id: string): ScenarioInfo {
  const { warmupSeconds: _w, jvmWarmupSeconds: _j, passSeconds: _p, allocRecords: _a, ...rest } = t;
  return { ...rest, id, kind: 'topic', title: `${t.title} (a topic for the group, soak and share runs)`, repetitions: 0 };
}

/** A share group of `members` members on the topic of throughput scenario `t`, warm-up + `repetitions` passes. */
export function shareOn(t: ScenarioInfo, members: number, repetitions: number): ScenarioInfo {
  return {
    ...t,
    id: `share-${t.id}-x${members}`,
    kind: 'share',
    title: `Share group (KIP-932) of ${members} member${members > 1 ? 's' : ''} on ${t.title}`,
    members,
    topicOf: t.id,
    repetitions,
    warmupPasses: 1,
  };
}

/**
 * Issue 16's latency under load: a live partition at 10,000 records/s of 100 B for `seconds` s
 * while the same consumer drains a backlog: a topic of its own of `backlogRecords` x 1 KB over 12
 * partitions, or (`on`, --quick) the topic of throughput scenario `on`, already loaded.
 */
export function fairness(backlogRecords: number, seconds: number, repetitions: number, on?: ScenarioInfo): ScenarioInfo {
  const backlogRecordSize = on?.recordSize ?? 1024;
  const backlogPartitions = on?.partitions ?? 12;
  const records = on?.records ?? backlogRecords;
  const gb = ((records * backlogRecordSize) / 1e9).toFixed(2);
  const what = on
    ? `the topic of ${on.id} (${records.toLocaleString('en-US')} x ${sizeText(backlogRecordSize)}, ${on.compression})`
    : `${records.toLocaleString('en-US')} x 1 KB over 12 partitions (${gb} GB)`;
  return {
    id: 'fairness-100B-1p',
    kind: 'fairness',
    title: `Latency under load: 100 B records, 1 partition, 10,000 records/s, while the same consumer drains a backlog of ${what}`,
    recordSize: 100,
    partitions: 1,
    compression: 'none',
    records: 10_000 * seconds,
    rate: 10_000,
    seconds,
    repetitions,
    backlogRecords: records,
    backlogRecordSize,
    backlogPartitions,
    ...(on ? { topicOf: on.id } : {}),
  };
}

export function buildPlan(mode: 'full' | 'quick', repetitions?: number): Plan {
  if (mode === 'quick') {
    const reps = repetitions ?? 1;
    const a = throughput(100, 12, 'lz4', 200_000, reps);
    const b = throughput(10_240, 1, 'zstd', 5_000, reps);
    const c = throughput(1024, 12, 'none', 20_000, reps, 'full');
    return {
      mode,
      latencyClients: ['kwire'],
      scenarios: [
        a,
        b,
        c,
        { ...a, id: `group-${a.id}`, kind: 'group', title: `3-member group on ${a.title}`, members: 3, topicOf: a.id },
        {
          id: 'latency-100B-1p',
          kind: 'latency',
          title: '100 B records, 1 partition, 10,000 records/s',
          recordSize: 100,
          partitions: 1,
          compression: 'none',
          records: 50_000,
          rate: 10_000,
          seconds: 5,
          repetitions: 1,
        },
        // The backlog is quick's 100 B lz4 topic, already loaded: no second load.
        fairness(0, 8, 1, a),
        { ...a, id: `rebalance-${a.id}`, kind: 'rebalance', title: `Fresh group on ${a.title}`, topicOf: a.id },
        { ...a, id: `soak-${a.id}`, kind: 'soak', title: `kwire over ${a.title}, 3 passes`, passes: 3, topicOf: a.id, repetitions: 1 },
      ],
    };
  }
  // Three measured passes (five before issue 32): each now 2 s or 1 GB, where a pass was 0.05-0.6 s.
  const reps = repetitions ?? 3;
  const gb = (size: number, partitions: number, codec: Codec, touch: 'value' | 'full' = 'value'): ScenarioInfo => ({
    ...throughput(size, partitions, codec, gigabyteOf(size), reps, touch),
    passSeconds: PASS_SECONDS,
    // The allocation runs read what the topics held before issue 32 (their window, three fifths of
    // it, spans many fetches): a slow client would take minutes over 1 GB of 100 B records.
    allocRecords: size === 100 ? (touch === 'full' ? 300_000 : 500_000) : size === 1024 ? 250_000 : 60_000,
  });
  const t = [
    gb(100, 1, 'none'),
    gb(100, 12, 'none'),
    gb(100, 12, 'lz4'),
    gb(1024, 12, 'none'),
    gb(1024, 12, 'zstd'),
    gb(10_240, 1, 'none'),
    gb(10_240, 12, 'lz4'),
    // Full touch without the peers' sweep (as below): in the full run of 2026-12-01 the sweep's
    // other points were within their spreads of these or behind (platformatic@1MiB won), and they
    // took 150 of the run's 2,496 s, which went over the 40 minutes by 96 s.
    { ...gb(1024, 12, 'none', 'full'), sweep: false },
    // Issue 16's 100 B full-touch goal (kwire >= 1.5x Java). Without the peers' sweep (each family
    // at the settings --quick runs: its defaults, platformatic at 1 MiB, node-rdkafka flowing) to
    // keep the run's time: the goal is against Java, which has one setting.
    { ...gb(100, 12, 'none', 'full'), sweep: false },
  ];
  // Warm-up by time as well as by count. With passes of 0.2-0.4 s (before issue 32) kwire's first
  // measured pass was often the odd one and the Java consumer's five measured passes still rose after
  // 3 s (100B-12p-lz4: 1.72M, 1.43M, 1.99M, 2.08M, 2.74M), hence 1.5 s for Node and 6 s for the JVM;
  // with passes of up to 2 s the JVM gets two (4 s). Node clients too need 4-5 s: kwire's passes of
  // 1 GB (100B-1p-none, six measured after 1.5 s of warm-up) read 8.9M, 9.8M, 10.0M, 10.9M, 11.1M,
  // 11.0M records/s, steady from the fourth; so every client warms up for 4 s.
  for (const s of t) Object.assign(s, { warmupSeconds: FULL_WARMUP_SECONDS, jvmWarmupSeconds: FULL_JVM_WARMUP_SECONDS });
  // The group, soak and share runs read every record of their topic in every pass, for every member:
  // they keep the 1 KB topic of 250,000 records they read before issue 32 (loaded once, 3-4 s). The
  // rebalance run reads one record of the 100 B topic.
  const oneKb = topicOnly(throughput(1024, 12, 'none', 250_000, 1), '1KB-12p-none-250k');
  const hundred = { ...t[1]!, warmupSeconds: undefined, jvmWarmupSeconds: undefined };
  return {
    mode,
    latencyClients: LATENCY_CLIENTS,
    scenarios: [
      ...t,
      oneKb,
      { ...oneKb, id: `group-${oneKb.id}`, kind: 'group', title: `3-member group on ${oneKb.title}`, members: 3, topicOf: oneKb.id, repetitions: 3 },
      {
        id: 'latency-100B-1p',
        kind: 'latency',
        title: '100 B records, 1 partition, 10,000 records/s',
        recordSize: 100,
        partitions: 1,
        compression: 'none',
        // 12 s at 10,000 records/s: 120,000 latencies a run, a p999 from 120 of them (20 s before
        // the second full run of 2026-12-01, which went over the 40 minutes on a slow hour).
        records: 120_000,
        rate: 10_000,
        seconds: 12,
        repetitions: 2,
      },
      fairness(1_000_000, 14, 2),
      { ...hundred, id: `rebalance-${hundred.id}`, kind: 'rebalance', title: `Fresh group on ${hundred.title}`, topicOf: hundred.id, repetitions: 3 },
      // Issue 16: RSS flat over 10 GB consumed (42 passes of 256 MB = 10.75 GB; kwire reads 1 KB
      // records at about 1 GB/s, so this is about 15 s).
      { ...oneKb, id: `soak-${oneKb.id}`, kind: 'soak', title: `kwire over ${oneKb.title}, 42 passes (10.75 GB)`, passes: 42, topicOf: oneKb.id, repetitions: 1 },
      // 3 measured passes unless --reps says otherwise (5 before the time-based warm-up above, which
      // costs about as long as the two passes saved here: the four share steps took 173 s in the
      // run of 7f6def1, 95 s in the run of 3187f52).
      shareOn(oneKb, 1, repetitions ?? 3),
      shareOn(oneKb, 3, repetitions ?? 3),
      // Issue 31: handlers that do I/O or burn CPU (about 4-5 minutes: each row one run, the slow
      // peers cut at 30 s). Not in --quick; `--scenarios handler-io,handler-cpu` runs them alone.
      handlerIo(),
      handlerCpu(),
    ],
  };
}
