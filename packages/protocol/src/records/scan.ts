import { LOG_OVERHEAD } from './record-batch.js';

export interface BatchScan {
  /** Whole batches found. */
  batches: number;
  /** Bytes they take (a partial trailing batch is not counted). */
  wholeBytes: number;
  /** baseOffset of the first whole batch, or -1n when there is none. */
  firstOffset: bigint;
  /** lastOffset + 1 of the last whole batch: where the next fetch starts; -1n when there is none. */
  nextOffset: bigint;
  /** partitionLeaderEpoch of the last whole batch (a Fetch's lastFetchedEpoch, KIP-320); -1 when none. */
  lastLeaderEpoch: number;
}

/**
 * Walks the batch headers of a Fetch partition's records bytes without checking CRCs, decompressing
 * or decoding records: a few reads per batch. The fetcher uses it the moment a response arrives, to
 * know where the next fetch of the partition starts, while the records themselves are decoded
 * later, batch by batch, as the application pulls them.
 *
 * Stops at the first partial batch, and at anything that is not a magic v2 batch header (which the
 * record reader reports properly when it gets there).
 */
export function scanRecordBatches(records: Buffer, start = 0, end = records.length): BatchScan {
  let batches = 0;
  let firstOffset = -1n;
  let lastBase = 0n;
  let lastDelta = -1;
  let lastEpoch = -1;
  let pos = start;
  // baseOffset int64 | batchLength int32 | partitionLeaderEpoch int32 | magic int8 | crc int32 |
  // attributes int16 | lastOffsetDelta int32 | ...
  while (end - pos >= 27) {
    const batchLength = records.readInt32BE(pos + 8);
    if (records[pos + 16] !== 2 || batchLength < 49 || batchLength > end - pos - LOG_OVERHEAD) break;
    const base = records.readBigInt64BE(pos);
    if (batches === 0) firstOffset = base;
    lastBase = base;
    lastDelta = records.readInt32BE(pos + 23);
    lastEpoch = records.readInt32BE(pos + 12);
    batches++;
    pos += LOG_OVERHEAD + batchLength;
  }
  return { batches, wholeBytes: pos - start, firstOffset, nextOffset: batches === 0 ? -1n : lastBase + BigInt(lastDelta) + 1n, lastLeaderEpoch: lastEpoch };
}
