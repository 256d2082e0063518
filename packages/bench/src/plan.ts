// The scenario matrix. Full mode covers every record size (100 B, 1 KB, 10 KB), both partition
// counts (1, 12) and every codec (none, lz4, zstd) without running every combination, plus the
// group, latency, rebalance and RSS-soak runs; sized so that the whole run stays under 30 minutes
// on 2 cores (record counts give the slowest client a few seconds of fetch phase per run). Quick
// mode is a smoke test of every code path on small data, one repetition, under 3 minutes.
import type { Codec, ScenarioInfo } from './report/types.js';

export const THROUGHPUT_CLIENTS = ['kwire', 'kwire-nocrc', 'kafkajs', 'platformatic', 'rdkafka', 'java', 'kcat', 'kcat-tuned', 'ceiling'] as const;
export const GROUP_CLIENTS = ['kwire', 'kafkajs', 'platformatic', 'rdkafka'] as const;
/** The ceiling's fetch loop doubles as the latency floor: the same requests, no consumer around them. */
export const LATENCY_CLIENTS = ['kwire', 'kafkajs', 'platformatic', 'rdkafka', 'ceiling'] as const;
export const REBALANCE_CLIENTS = ['kwire', 'kafkajs', 'platformatic', 'rdkafka', 'java'] as const;
/** Node clients measured for allocation per record (a separate pass each). */
export const ALLOC_CLIENTS = ['kwire', 'kwire-nocrc', 'kafkajs', 'platformatic', 'rdkafka'] as const;

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

export function throughput(recordSize: number, partitions: number, compression: Codec, records: number, repetitions: number): ScenarioInfo {
  return {
    id: `${sizeName(recordSize)}-${partitions}p-${compression}`,
    kind: 'throughput',
    title: `${sizeText(recordSize)} records, ${partitions} partition${partitions > 1 ? 's' : ''}, ${compression === 'none' ? 'uncompressed' : compression}`,
    recordSize,
    partitions,
    compression,
    records,
    repetitions,
  };
}

export function buildPlan(mode: 'full' | 'quick', repetitions?: number): Plan {
  if (mode === 'quick') {
    const reps = repetitions ?? 1;
    const a = throughput(100, 12, 'lz4', 200_000, reps);
    const b = throughput(10_240, 1, 'zstd', 5_000, reps);
    return {
      mode,
      latencyClients: ['kwire'],
      scenarios: [
        a,
        b,
        { ...a, id: `group-${a.id}`, kind: 'group', title: `3-member group on ${a.title}`, members: 3, topicOf: a.id },
        { id: 'latency-100B-1p', kind: 'latency', title: '100 B records, 1 partition, 10,000 records/s', recordSize: 100, partitions: 1, compression: 'none', records: 50_000, rate: 10_000, seconds: 5, repetitions: 1 },
        { ...a, id: `rebalance-${a.id}`, kind: 'rebalance', title: `Fresh group on ${a.title}`, topicOf: a.id },
        { ...a, id: `soak-${a.id}`, kind: 'soak', title: `kwire over ${a.title}, 3 passes`, passes: 3, topicOf: a.id, repetitions: 1 },
      ],
    };
  }
  const reps = repetitions ?? 3;
  const t = [
    throughput(100, 1, 'none', 2_000_000, reps),
    throughput(100, 12, 'none', 2_000_000, reps),
    throughput(100, 12, 'lz4', 2_000_000, reps),
    throughput(1024, 12, 'none', 500_000, reps),
    throughput(1024, 12, 'zstd', 500_000, reps),
    // 1.5 GB each: long enough (0.8-1.5 s for the fast clients) that a client's start-up and JIT
    // warm-up weigh on its figure no more than on the ceiling's, whose passes run warm.
    throughput(10_240, 1, 'none', 150_000, reps),
    throughput(10_240, 12, 'lz4', 150_000, reps),
  ];
  const oneKb = t[3]!;
  const hundred = t[1]!;
  return {
    mode,
    latencyClients: LATENCY_CLIENTS,
    scenarios: [
      ...t,
      { ...oneKb, id: `group-${oneKb.id}`, kind: 'group', title: `3-member group on ${oneKb.title}`, members: 3, topicOf: oneKb.id },
      { id: 'latency-100B-1p', kind: 'latency', title: '100 B records, 1 partition, 10,000 records/s', recordSize: 100, partitions: 1, compression: 'none', records: 200_000, rate: 10_000, seconds: 20, repetitions: 2 },
      { ...hundred, id: `rebalance-${hundred.id}`, kind: 'rebalance', title: `Fresh group on ${hundred.title}`, topicOf: hundred.id },
      { ...oneKb, id: `soak-${oneKb.id}`, kind: 'soak', title: `kwire over ${oneKb.title}, 8 passes (4 GB)`, passes: 8, topicOf: oneKb.id, repetitions: 1 },
    ],
  };
}
