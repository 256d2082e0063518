// The records bytes of Produce requests and Fetch/ShareFetch responses as JSON: every batch with
// its header, and every record (offset, timestamp, key, value, headers), decompressed. A batch
// that does not decode (bad CRC, corrupt compression) becomes {"error": ...} with its position;
// a partial batch at the end (brokers cut responses at their byte limit) is reported, not decoded.
import { isKafkaProtocolError, readRecordBatches } from '@kwire/protocol';
import { bytesJson, int64Json, type Json } from '../json.js';

export function recordsJson(bytes: Buffer): Json {
  const batches: Json[] = [];
  const reader = readRecordBatches(bytes, { checkCrc: true });
  let truncatedTail = 0;
  try {
    for (;;) {
      const batch = reader.next();
      if (batch === null) break;
      try {
        const records = batch.records().map((r) => ({
          offset: int64Json(r.offset),
          timestamp: int64Json(r.timestampBigInt),
          key: bytesJson(r.key),
          value: bytesJson(r.value),
          headers: r.headers.map((h) => ({ key: h.key, value: bytesJson(h.value) })),
        }));
        const control = batch.isControl ? batch.controlRecord : null;
        batches.push({
          baseOffset: int64Json(batch.baseOffset),
          lastOffsetDelta: batch.lastOffsetDelta,
          partitionLeaderEpoch: batch.partitionLeaderEpoch,
          magic: batch.magic,
          crc: batch.crc,
          compression: batch.compression,
          timestampType: batch.timestampType,
          isTransactional: batch.isTransactional,
          isControl: batch.isControl,
          ...(control ? { control: { type: control.type, coordinatorEpoch: control.coordinatorEpoch } } : {}),
          producerId: int64Json(batch.producerId),
          producerEpoch: batch.producerEpoch,
          baseSequence: batch.baseSequence,
          baseTimestamp: int64Json(batch.baseTimestampBigInt),
          maxTimestamp: int64Json(batch.maxTimestampBigInt),
          recordCount: batch.recordCount,
          sizeInBytes: batch.sizeInBytes,
          records,
        });
      } finally {
        batch.release();
      }
    }
    truncatedTail = reader.truncatedTail;
  } catch (err) {
    batches.push({ error: isKafkaProtocolError(err) ? err.message : String(err), at: reader.position });
  }
  return truncatedTail > 0 ? { batches, truncatedTail } : batches;
}
