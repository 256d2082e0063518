import { KafkaProtocolError } from '../errors.js';
import { crc32c } from './crc32c.js';
import {
  batchError,
  CRC_START,
  HEADER_SIZE_UP_TO_MAGIC,
  int32,
  LOG_OVERHEAD,
  RECORD_BATCH_OVERHEAD,
  RecordBatch,
  settings,
  type DecodeSettings,
  type RecordBatchDecodeOptions,
} from './record-batch.js';

/* Batch framing: where one batch of a Fetch partition's records bytes ends and the next begins. */

/**
 * Reads the record batches of one Fetch partition's `records` bytes, one per next() call.
 *
 * A batch whose declared length runs past the end of the bytes is the partial batch brokers leave
 * when they cut a response at its byte limit (as Java's ByteBufferLogInputStream, fewer than 17
 * bytes, or fewer than 12 + batchLength): iteration ends quietly and `truncatedTail` says how many
 * bytes were left unread. A response whose bytes hold no whole batch at all then shows as
 * batchesRead === 0 with truncatedTail > 0 (Java calls that a stuck fetch: raise the byte limits).
 *
 * Anything else malformed throws KafkaProtocolError and the reader stays failed (next() throws the
 * same error again): after a bad length or CRC there is no trustworthy place to resume.
 */
export class RecordBatchReader implements Iterable<RecordBatch> {
  readonly buffer: Buffer;
  readonly end: number;
  /** Where the next batch starts. */
  position: number;
  /** Bytes of a partial trailing batch left unread (0 when the bytes ended on a batch boundary). */
  truncatedTail = 0;
  /** Whole batches returned so far. */
  batchesRead = 0;
  private readonly settings: DecodeSettings;
  private failure: KafkaProtocolError | null = null;

  constructor(records: Buffer, options?: RecordBatchDecodeOptions, start = 0, end = records.length) {
    if (!(start >= 0 && start <= end && end <= records.length)) {
      throw new RangeError(`bad range [${start}, ${end}) of a ${records.length}-byte buffer`);
    }
    this.buffer = records;
    this.position = start;
    this.end = end;
    this.settings = settings(options);
  }

  /** True once the bytes are used up (whole batches and a possible partial tail). */
  get done(): boolean {
    return this.failure === null && this.position === this.end;
  }

  /** The next whole batch, or null at the end (including a partial tail, see truncatedTail). */
  next(): RecordBatch | null {
    if (this.failure !== null) throw this.failure;
    const buf = this.buffer;
    const pos = this.position;
    const remaining = this.end - pos;
    if (remaining === 0) return null;
    if (remaining < HEADER_SIZE_UP_TO_MAGIC) return this.tail(remaining);
    const magic = (buf[pos + 16]! << 24) >> 24;
    if (magic !== 2) {
      throw this.fail(
        magic === 0 || magic === 1
          ? batchError('unsupported-version', `legacy message set (magic ${magic}): kwire decodes only magic 2 record batches (Kafka 0.11+)`, pos + 16, 'magic')
          : batchError('unsupported-version', `unknown record batch magic ${magic}`, pos + 16, 'magic'),
      );
    }
    const batchLength = int32(buf, pos + 8);
    if (batchLength < RECORD_BATCH_OVERHEAD - LOG_OVERHEAD) {
      throw this.fail(batchError('invalid-length', `batchLength ${batchLength} is shorter than a batch header`, pos + 8, 'batchLength'));
    }
    if (batchLength > remaining - LOG_OVERHEAD) return this.tail(remaining);
    const batchEnd = pos + LOG_OVERHEAD + batchLength;
    const attributes = (buf[pos + 21]! << 8) | buf[pos + 22]!;
    if (this.settings.checkCrc) {
      const stored = int32(buf, pos + 17) >>> 0;
      const actual = crc32c(buf, pos + CRC_START, batchEnd);
      if (stored !== actual) {
        throw this.fail(batchError('crc-mismatch', `record batch CRC-32C is 0x${hex(stored)}, the bytes give 0x${hex(actual)} (batch at offset ${buf.readBigInt64BE(pos)})`, pos + 17, 'crc'));
      }
    }
    if ((attributes & 7) > 4) {
      throw this.fail(batchError('compression', `unknown compression codec ${attributes & 7}`, pos + 21, 'attributes'));
    }
    const recordCount = int32(buf, pos + 57);
    if (recordCount < 0) {
      throw this.fail(batchError('invalid-length', `recordsCount ${recordCount}`, pos + 57, 'recordCount'));
    }
    const batch = new RecordBatch(buf, pos, this.settings);
    this.position = batchEnd;
    this.batchesRead++;
    return batch;
  }

  *[Symbol.iterator](): Iterator<RecordBatch> {
    for (let b = this.next(); b !== null; b = this.next()) yield b;
  }

  private tail(remaining: number): null {
    this.truncatedTail = remaining;
    this.position = this.end;
    return null;
  }

  private fail(err: KafkaProtocolError): KafkaProtocolError {
    return (this.failure = err);
  }
}

function hex(n: number): string {
  return n.toString(16).padStart(8, '0');
}

/** A reader over one Fetch partition's records bytes. */
export function readRecordBatches(records: Buffer, options?: RecordBatchDecodeOptions): RecordBatchReader {
  return new RecordBatchReader(records, options);
}

/**
 * The one batch at the start of `bytes`, which must be whole (a partial batch is a 'truncated'
 * error here, not a quiet end). Bytes after it are ignored; use RecordBatchReader for several.
 */
export function decodeRecordBatch(bytes: Buffer, options?: RecordBatchDecodeOptions): RecordBatch {
  const reader = new RecordBatchReader(bytes, options);
  const batch = reader.next();
  if (batch === null) {
    throw new KafkaProtocolError(`no whole record batch in ${bytes.length} bytes`, { reason: 'truncated', offset: 0 });
  }
  return batch;
}
