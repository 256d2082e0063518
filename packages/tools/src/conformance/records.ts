// The records inside Fetch responses and Produce requests: the frame codec treats them as opaque
// bytes, so the runner decodes them separately (CRC, decompression, every record) and rebuilds each
// batch with our encoder to compare bytes.
import { isKafkaProtocolError, toProtocolError, encodeRecordBatch, RECORD_BATCH_OVERHEAD, readRecordBatches, type RecordInput, type RecordBatch, type CompressionType } from '@kwire/protocol';
import { firstDifference } from './trace.js';

/** A decoded record, kept for the manifest's facts. */
export interface SeenRecord {
  offset: bigint;
  key: string | null;
  value: string | null;
  headers: [string, string | null][];
}

/** A decoded batch, kept for the manifest's facts. */
export interface SeenBatch {
  baseOffset: bigint;
  lastOffset: bigint;
  compression: CompressionType;
  isTransactional: boolean;
  isControl: boolean;
  /** ControlRecordType of a control batch (0 ABORT, 1 COMMIT), -1 otherwise. */
  controlType: number;
  producerId: bigint;
  records: SeenRecord[];
}

export interface RecordsProblem {
  message: string;
  /** Offset within the records bytes. */
  offset?: number;
  path: string;
}

export interface RecordsCheck {
  batches: number;
  records: number;
  /** Batches per codec. */
  codecs: Partial<Record<CompressionType, number>>;
  problems: RecordsProblem[];
  /** Set when the bytes hold something we do not decode at all (legacy magic 0/1 message sets). */
  unsupported?: string;
  /** Bytes of a partial batch at the end (normal in Fetch responses). */
  truncatedTail: number;
  kept: SeenBatch[];
}

function recordInputs(batch: RecordBatch): RecordInput[] {
  // With the delete-horizon bit, baseTimestamp holds the horizon and deltas still count from it.
  const base = batch.baseTimestampBigInt;
  return batch.records().map((r) => {
    if (Number.isNaN(r.timestampDelta)) throw new Error(`record ${r.offsetDelta} has a timestamp delta outside the safe integer range`);
    return {
      key: r.key,
      value: r.value,
      headers: r.headers.map((h) => ({ key: h.key, value: h.value })),
      timestamp: base + BigInt(r.timestampDelta),
      offsetDelta: r.offsetDelta,
      attributes: r.attributes,
    };
  });
}

/**
 * Our encoder's version of the batch, uncompressed. For an uncompressed batch it must equal the
 * original; for a compressed one its records must equal the decompressed records and its header
 * the original's header except length, CRC and codec bits (compressors differ between
 * implementations and levels, so compressed bytes are not compared).
 */
function compareBatch(batch: RecordBatch): RecordsProblem | undefined {
  let rebuilt: Buffer;
  try {
    rebuilt = encodeRecordBatch(recordInputs(batch), {
      baseOffset: batch.baseOffset,
      partitionLeaderEpoch: batch.partitionLeaderEpoch,
      compression: 'none',
      timestampType: batch.timestampType,
      isTransactional: batch.isTransactional,
      isControl: batch.isControl,
      ...(batch.hasDeleteHorizon ? { deleteHorizonMs: batch.baseTimestampBigInt } : { baseTimestamp: batch.baseTimestampBigInt }),
      maxTimestamp: batch.maxTimestampBigInt,
      producerId: batch.producerId,
      producerEpoch: batch.producerEpoch,
      baseSequence: batch.baseSequence,
      lastOffsetDelta: batch.lastOffsetDelta,
    });
  } catch (err) {
    return { message: `our encoder cannot rebuild the batch: ${(err as Error).message}`, path: 'batch', offset: batch.byteOffset };
  }
  const original = batch.raw;
  if (batch.compression === 'none') {
    const d = firstDifference(original, rebuilt);
    if (d < 0) return undefined;
    return {
      message: `re-encoded batch differs at byte ${d} of the batch (${original.length} bytes, ours ${rebuilt.length})${describeBatchByte(d)}`,
      path: 'batch',
      offset: batch.byteOffset + d,
    };
  }
  // Header: partitionLeaderEpoch and magic (12..17), attributes without the codec bits, the rest (23..61).
  const head = firstDifference(original.subarray(12, 17), rebuilt.subarray(12, 17));
  if (head >= 0) return { message: `batch header differs at byte ${12 + head}${describeBatchByte(12 + head)}`, path: 'batch', offset: batch.byteOffset + 12 + head };
  if ((original.readInt16BE(21) & ~7) !== (rebuilt.readInt16BE(21) & ~7)) {
    return { message: 'batch attributes (other than the codec) differ', path: 'batch/attributes', offset: batch.byteOffset + 21 };
  }
  const tail = firstDifference(original.subarray(23, RECORD_BATCH_OVERHEAD), rebuilt.subarray(23, RECORD_BATCH_OVERHEAD));
  if (tail >= 0) return { message: `batch header differs at byte ${23 + tail}${describeBatchByte(23 + tail)}`, path: 'batch', offset: batch.byteOffset + 23 + tail };
  const plain = batch.data!.subarray(batch.dataStart, batch.dataEnd);
  const d = firstDifference(plain, rebuilt.subarray(RECORD_BATCH_OVERHEAD));
  if (d < 0) return undefined;
  return {
    message: `re-encoded records differ from the decompressed ${batch.compression} records at byte ${d} of ${plain.length} (ours ${rebuilt.length - RECORD_BATCH_OVERHEAD})`,
    path: 'batch/records',
  };
}

const BATCH_FIELDS: [number, string][] = [
  [0, 'baseOffset'],
  [8, 'batchLength'],
  [12, 'partitionLeaderEpoch'],
  [16, 'magic'],
  [17, 'crc'],
  [21, 'attributes'],
  [23, 'lastOffsetDelta'],
  [27, 'baseTimestamp'],
  [35, 'maxTimestamp'],
  [43, 'producerId'],
  [51, 'producerEpoch'],
  [53, 'baseSequence'],
  [57, 'recordsCount'],
  [61, 'records'],
];

function describeBatchByte(d: number): string {
  let name = 'records';
  for (const [at, field] of BATCH_FIELDS) if (d >= at) name = field;
  return ` (${name})`;
}

/**
 * Decodes every batch of a records field (CRC, decompression, every record), compares each with
 * our encoder's rebuild, and keeps the records when `keep` is set.
 */
export function checkRecordBytes(bytes: Buffer, options: { keep: boolean; partialTailAllowed: boolean }): RecordsCheck {
  const out: RecordsCheck = { batches: 0, records: 0, codecs: {}, problems: [], truncatedTail: 0, kept: [] };
  // Decompression buffers are not pooled here: every batch is released right after its check.
  const reader = readRecordBatches(bytes, { pool: null });
  for (;;) {
    let batch: RecordBatch | null;
    try {
      batch = reader.next();
    } catch (err) {
      const e = toProtocolError(err);
      if (e.reason === 'unsupported-version' && e.path === 'magic') {
        out.unsupported = e.detail;
      } else {
        out.problems.push({ message: e.detail, offset: e.offset, path: `batch at byte ${reader.position}/${e.path}` });
      }
      break;
    }
    if (batch === null) break;
    out.batches++;
    out.codecs[batch.compression] = (out.codecs[batch.compression] ?? 0) + 1;
    const where = `batch ${out.batches - 1} (offset ${batch.baseOffset})`;
    try {
      const records = batch.records();
      out.records += records.length;
      const problem = compareBatch(batch);
      if (problem) out.problems.push({ ...problem, path: `${where}/${problem.path.replace(/^batch\/?/, '')}`.replace(/\/$/, '') });
      if (options.keep) {
        out.kept.push({
          baseOffset: batch.baseOffset,
          lastOffset: batch.lastOffset,
          compression: batch.compression,
          isTransactional: batch.isTransactional,
          isControl: batch.isControl,
          controlType: batch.controlType,
          producerId: batch.producerId,
          records: records.map((r) => ({
            offset: r.offset,
            key: r.keyString(),
            value: r.valueString(),
            headers: r.headers.map((h): [string, string | null] => [h.key, h.value === null ? null : h.value.toString('utf8')]),
          })),
        });
      }
    } catch (err) {
      const e = toProtocolError(err);
      out.problems.push({ message: e.detail, offset: isKafkaProtocolError(err) ? e.offset : undefined, path: `${where}/${e.path}` });
    } finally {
      batch.release();
    }
  }
  out.truncatedTail = reader.truncatedTail;
  if (out.truncatedTail > 0 && !options.partialTailAllowed) {
    out.problems.push({ message: `${out.truncatedTail} bytes of a partial batch at the end`, path: 'records', offset: bytes.length - out.truncatedTail });
  }
  return out;
}
