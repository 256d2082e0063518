// The record-batch layer of @kwire/protocol: decode (lazily, batch by batch) and encode magic v2
// record batches, with CRC-32C and the four codecs. Buffer ownership: see pool/buffer-pool.ts.
export {
  RecordBatch,
  RecordCursor,
  RecordView,
  RecordReleasedError,
  readHeaders,
  RECORD_BATCH_OVERHEAD,
  LOG_OVERHEAD,
  type RecordBatchDecodeOptions,
  type RecordHeader,
  type RecordPlace,
  type TimestampType,
} from './record-batch.js';
export { RecordBatchReader, readRecordBatches, decodeRecordBatch } from './reader.js';
export { MIN_RECORD_SIZE } from './record-decode.js';
export { headerKey } from './header-key.js';
import { RecordView } from './record-batch.js';
/** @deprecated The wire record is RecordView; this name shadowed TypeScript's built-in Record. */
export const Record = RecordView;
/** @deprecated The wire record is RecordView. */
export type Record = RecordView;
/** @deprecated The wire record is RecordView. */
export const KafkaRecord = RecordView;
/** @deprecated The wire record is RecordView. */
export type KafkaRecord = RecordView;
export { ControlRecordType, parseControlRecord, type ControlRecord } from './control.js';
export {
  encodeRecordBatch,
  writeRecordBatch,
  encodeControlBatch,
  type RecordInput,
  type RecordHeaderInput,
  type RecordBatchEncodeOptions,
  type ControlBatchOptions,
} from './encode.js';
export { crc32c, crc32cJs, crc32cImplementation, crc32cImplementations } from './crc32c.js';
export { scanRecordBatches, type BatchScan } from './scan.js';
export { zigzag32, unzigzag32, zigzag64, unzigzag64, sizeOfVarlong } from './varint.js';
export {
  CompressionCodec,
  COMPRESSION_TYPES,
  DEFAULT_MAX_DECOMPRESSED_BYTES,
  compress as compressRecords,
  decompress as decompressRecords,
  compressionCodecId,
  lz4Implementation,
  lz4Implementations,
  zstdBackend,
  type CompressionType,
  type Decompressed,
} from '../compression/index.js';
export { BufferPool, defaultBufferPool, type BufferPoolOptions, type BufferPoolStats } from '../pool/index.js';
