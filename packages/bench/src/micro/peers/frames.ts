// Fetch responses for decode-peers.ts: record batches as the Java producer writes them, inside
// Fetch response frames in the version each client decodes, all carrying the same batch bytes.
//
// Batches: 1,000 records of random A-Z values (ProducerPerformance's payload), null keys, no
// headers, written with @kwire/protocol's encodeRecordBatch and the Java producer's settings:
// idempotent (producer id, epoch 0, running base sequence per partition), CreateTime timestamps a
// few ms apart, lz4 (LZ4 frame) or zstd (level 3, Java's default). The broker's part is filled in
// as it would be on disk: base offsets running per partition, partition leader epoch 0.
//
// A response holds one topic and PARTITIONS partitions; each partition carries as many whole
// batches as fit in max.partition.fetch.bytes (1 MiB, the Java and kafkajs default), at least one
// (the broker always returns the first batch whole).
//
// Frames (size prefix included), byte for byte what a broker sends:
//   kwire         Fetch v18 (flexible; kwire's newest), by encodeResponseFrame
//   platformatic  Fetch v17 (flexible; @platformatic/kafka 2.x's newest, so what it negotiates
//                 with a Kafka 4 broker), by encodeResponseFrame: the same bytes as v18, whose
//                 response changed nothing
//   kafkajs       Fetch v11 (non-flexible; kafkajs's newest), written by hand below
import { createHash } from 'node:crypto';
import * as K from '@kwire/protocol';

export type Codec = 'none' | 'lz4' | 'zstd';

export const RECORDS_PER_BATCH = 1_000;
export const PARTITIONS = 4;
export const MAX_PARTITION_FETCH_BYTES = 1024 * 1024;
export const TOPIC = 'bench-peers';
export const TOPIC_ID = K.uuidFromBytes(Buffer.from('5b2b8b4e6f0c4d8a9a530c1e6f4d2a71', 'hex'), 0);
export const KWIRE_FETCH_VERSION = 18;
export const PLATFORMATIC_FETCH_VERSION = 17;
export const KAFKAJS_FETCH_VERSION = 11;
const BASE_TIMESTAMP = 1_763_000_000_000;

export interface PartitionData {
  index: number;
  /** Offset of its first record. */
  baseOffset: bigint;
  /** The partition's records field: its batches back to back. */
  records: Buffer;
  recordCount: number;
  batchCount: number;
}

export interface FetchCase {
  valueSize: number;
  codec: Codec;
  partitions: PartitionData[];
  recordCount: number;
  batchCount: number;
  /** Bytes of record values in one frame (what MB/s counts). */
  valueBytes: number;
  /** Bytes of record batches in one frame (compressed size for lz4/zstd). */
  batchBytes: number;
  /** What verification expects: see ValueDigest. */
  expected: DigestResult;
  frames: { kwire: Buffer; platformatic: Buffer; kafkajs: Buffer };
}

/** Deterministic A-Z bytes (xorshift32), so that every run decodes the same data. */
class Capitals {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0 || 1;
  }
  fill(n: number): Buffer {
    const b = Buffer.allocUnsafe(n);
    let s = this.s;
    for (let i = 0; i < n; i++) {
      s ^= s << 13;
      s ^= s >>> 17;
      s ^= s << 5;
      b[i] = 65 + ((s >>> 0) % 26);
    }
    this.s = s;
    return b;
  }
}

export interface DigestResult {
  records: number;
  valueBytes: number;
  /** sha1 over (partition, offset, value) of every record in frame order. */
  sha1: string;
}

/** Order-sensitive digest of what a client decoded: partition, offset and value bytes of each record. */
export class ValueDigest {
  private readonly hash = createHash('sha1');
  private records = 0;
  private valueBytes = 0;
  add(partition: number, offset: bigint | string, value: Uint8Array | null): void {
    this.records++;
    this.hash.update(`${partition}:${offset.toString()}:`);
    if (value === null) this.hash.update('null');
    else {
      this.valueBytes += value.length;
      this.hash.update(value);
    }
    this.hash.update('|');
  }
  result(): DigestResult {
    return { records: this.records, valueBytes: this.valueBytes, sha1: this.hash.digest('hex') };
  }
}

export function sameDigest(a: DigestResult, b: DigestResult): boolean {
  return a.records === b.records && a.valueBytes === b.valueBytes && a.sha1 === b.sha1;
}

function buildBatch(values: Buffer[], codec: Codec, baseOffset: bigint, producerId: bigint, baseSequence: number, t0: number): Buffer {
  const records: K.RecordInput[] = values.map((value, i) => ({ key: null, value, timestamp: t0 + Math.floor(i / 250) }));
  const batch = K.encodeRecordBatch(records, {
    compression: codec,
    ...(codec === 'zstd' ? { compressionLevel: 3 } : {}),
    baseOffset,
    partitionLeaderEpoch: 0,
    producerId,
    producerEpoch: 0,
    baseSequence,
  });
  return Buffer.from(batch);
}

/** The Fetch response of one case, in every client's version, plus what decoding must yield. */
export function buildCase(valueSize: number, codec: Codec): FetchCase {
  const gen = new Capitals(0x9e3779b9 ^ (valueSize * 31 + codec.length));
  const partitions: PartitionData[] = [];
  const digest = new ValueDigest();
  let batchBytes = 0;
  for (let p = 0; p < PARTITIONS; p++) {
    const baseOffset = BigInt(1_000_000 * (p + 1));
    const batches: Buffer[] = [];
    let size = 0;
    let offset = baseOffset;
    for (;;) {
      const values: Buffer[] = [];
      for (let i = 0; i < RECORDS_PER_BATCH; i++) values.push(gen.fill(valueSize));
      const batch = buildBatch(values, codec, offset, 7_000n + BigInt(p), Number(offset - baseOffset), BASE_TIMESTAMP + batches.length * 5);
      if (batches.length > 0 && size + batch.length > MAX_PARTITION_FETCH_BYTES) break;
      batches.push(batch);
      size += batch.length;
      for (let i = 0; i < values.length; i++) digest.add(p, offset + BigInt(i), values[i]!);
      offset += BigInt(RECORDS_PER_BATCH);
    }
    batchBytes += size;
    partitions.push({ index: p, baseOffset, records: Buffer.concat(batches), recordCount: batches.length * RECORDS_PER_BATCH, batchCount: batches.length });
  }
  const recordCount = partitions.reduce((n, p) => n + p.recordCount, 0);
  const expected = digest.result();
  return {
    valueSize,
    codec,
    partitions,
    recordCount,
    batchCount: partitions.reduce((n, p) => n + p.batchCount, 0),
    valueBytes: recordCount * valueSize,
    batchBytes,
    expected,
    frames: {
      kwire: flexibleFrame(partitions, KWIRE_FETCH_VERSION),
      platformatic: flexibleFrame(partitions, PLATFORMATIC_FETCH_VERSION),
      kafkajs: fetchV11Frame(partitions),
    },
  };
}

function highWatermark(p: PartitionData): bigint {
  return p.baseOffset + BigInt(p.recordCount) + 5_000n;
}

/** A Fetch v12+ response frame (flexible, header v1), by kwire's encoder; copied to its own memory. */
function flexibleFrame(partitions: PartitionData[], version: number): Buffer {
  const body: K.Input<K.FetchResponse> = {
    throttleTimeMs: 0,
    errorCode: 0,
    sessionId: 0,
    responses: [
      {
        topic: TOPIC,
        topicId: TOPIC_ID,
        partitions: partitions.map((p) => ({
          partitionIndex: p.index,
          errorCode: 0,
          highWatermark: highWatermark(p),
          lastStableOffset: highWatermark(p),
          logStartOffset: 0n,
          abortedTransactions: null,
          preferredReadReplica: -1,
          records: p.records,
        })),
      },
    ],
    nodeEndpoints: [],
  };
  return Buffer.from(K.encodeResponseFrame(K.ApiKey.Fetch, version, 1234, body, new K.Writer(1 << 20)));
}

/**
 * A Fetch v11 response frame (non-flexible, header v0), as a broker writes it:
 *   size correlation_id throttle_time_ms error_code session_id [topic [partition error_code
 *   high_watermark last_stable_offset log_start_offset [aborted_transactions] preferred_read_replica
 *   records]]
 * with int16-length strings, int32 array counts (-1 = null) and int32-length records.
 */
function fetchV11Frame(partitions: PartitionData[]): Buffer {
  const w = new K.Writer(1 << 20);
  const size = w.reserve(4);
  w.writeInt32(1234);
  w.writeInt32(0);
  w.writeInt16(0);
  w.writeInt32(0);
  w.writeArrayLength(1);
  w.writeString(TOPIC);
  w.writeArrayLength(partitions.length);
  for (const p of partitions) {
    w.writeInt32(p.index);
    w.writeInt16(0);
    w.writeInt64(highWatermark(p));
    w.writeInt64(highWatermark(p));
    w.writeInt64(0n);
    w.writeArrayLength(-1);
    w.writeInt32(-1);
    w.writeNullableBytes(p.records);
  }
  w.backfillInt32(size, w.length - 4);
  return Buffer.from(w.finish());
}
