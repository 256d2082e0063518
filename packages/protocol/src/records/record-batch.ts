import { KafkaProtocolError, toProtocolError, type ProtocolErrorReason } from '../errors.js';
import { COMPRESSION_TYPES, DEFAULT_MAX_DECOMPRESSED_BYTES, decompress, type CompressionType } from '../compression/index.js';
import { defaultBufferPool, type BufferPool } from '../pool/buffer-pool.js';
import { bufferView } from './buffer-view.js';
import { parseControlRecord, type ControlRecord } from './control.js';
import { headerKey } from './header-key.js';
import { MIN_RECORD_SIZE, offsetDeltaOf, readRecord, recordEnd, type RecordFields } from './record-decode.js';

/*
 * RecordBatch (magic v2), the unit a Fetch partition's `records` bytes are made of:
 *
 *   baseOffset int64 · batchLength int32 · partitionLeaderEpoch int32 · magic int8 (2) ·
 *   crc uint32 (CRC-32C of attributes .. end) · attributes int16 · lastOffsetDelta int32 ·
 *   baseTimestamp int64 · maxTimestamp int64 · producerId int64 · producerEpoch int16 ·
 *   baseSequence int32 · recordsCount int32 · records (compressed as one stream when codec != 0)
 *
 *   Record: see record-decode.ts (one record's bytes), and RecordView below (one record's view).
 *
 * Work is done as late as the consumer allows: RecordBatchReader.next() reads one batch header and
 * checks its CRC; decompression and record decoding wait for records() (or cursor()), so a batch a
 * read_committed consumer drops as aborted is never decompressed, and a 50 MB fetch is decoded one
 * batch at a time on the consumer's schedule.
 */

/** Bytes before the records: the 61-byte v2 batch header. */
export const RECORD_BATCH_OVERHEAD = 61;
/** baseOffset + batchLength: the part of the header batchLength does not count. */
export const LOG_OVERHEAD = 12;
/** @internal Header bytes up to and including magic: what must be there to tell a batch from a legacy message. */
export const HEADER_SIZE_UP_TO_MAGIC = 17;
/** @internal The CRC covers attributes (byte 21) to the end of the batch. */
export const CRC_START = 21;

export type TimestampType = 'CreateTime' | 'LogAppendTime';

export interface RecordBatchDecodeOptions {
  /** Verify each batch's CRC-32C (default true, as Java's check.crcs). */
  checkCrc?: boolean;
  /** Refuse a batch whose records decompress to more than this (default 64 MiB). */
  maxDecompressedBytes?: number;
  /** Where decompression buffers come from; null allocates without pooling. Default: defaultBufferPool. */
  pool?: BufferPool | null;
}

/** @internal */
export interface DecodeSettings {
  checkCrc: boolean;
  maxDecompressedBytes: number;
  pool: BufferPool | null;
}

/** @internal */
export function settings(options: RecordBatchDecodeOptions | undefined): DecodeSettings {
  const max = options?.maxDecompressedBytes ?? DEFAULT_MAX_DECOMPRESSED_BYTES;
  if (!(max >= 0) || !Number.isSafeInteger(max)) throw new RangeError(`maxDecompressedBytes must be a non-negative integer, got ${max}`);
  return {
    checkCrc: options?.checkCrc ?? true,
    maxDecompressedBytes: max,
    pool: options?.pool === undefined ? defaultBufferPool : options.pool,
  };
}

/** @internal */
export function batchError(reason: ProtocolErrorReason, detail: string, offset: number, path: string): KafkaProtocolError {
  return new KafkaProtocolError(detail, { reason, offset, path });
}

/** @internal */
export function int32(b: Buffer, o: number): number {
  return (b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!;
}

/** An int64 as a number when it is a safe integer, else NaN (the bigint twin stays exact). */
function int64Number(b: Buffer, o: number): number {
  const v = int32(b, o) * 0x100000000 + (int32(b, o + 4) >>> 0);
  return Number.isSafeInteger(v) ? v : Number.NaN;
}

/** A batch's int64 header fields exactly, kept only when one of them is outside the safe-integer range. */
interface WideFields {
  readonly baseOffset: bigint;
  readonly baseTimestamp: bigint;
  readonly maxTimestamp: bigint;
  readonly producerId: bigint;
}

/**
 * One record batch: its header fields, decoded when the batch is read, and its records, decoded
 * on the first call to records().
 *
 * Ownership: a compressed batch owns the buffer its records were decompressed into (taken from the
 * pool) until release(); an uncompressed batch's records (and those of an lz4 batch that is one
 * stored block) are views into the bytes it was read from. Either way the records are valid until
 * release(), and never longer than the source bytes. See pool/buffer-pool.ts.
 */
export class RecordBatch {
  // The header fields are kept as numbers (small integers where V8 can store them in the object):
  // an object is made for each wire batch of every answer (at 10 KB records a batch holds only a
  // few of them), so each bigint or boxed number kept here was one more allocation per batch.
  // Bigints are made when asked for;
  // the exact ones of int64 fields outside the safe-integer range are kept in `wide`.

  /** Where the batch starts in the buffer it was read from. */
  readonly byteOffset: number;
  /** The whole batch, header included: LOG_OVERHEAD + batchLength. */
  readonly sizeInBytes: number;
  /**
   * baseOffset as a number (NaN past Number.MAX_SAFE_INTEGER): offsets computed from it cost no
   * bigint, which is what lets a cursor read a record's offset without allocating.
   */
  readonly baseOffsetNumber: number;
  readonly partitionLeaderEpoch: number;
  readonly magic: number;
  /** The raw attributes (int16). */
  readonly attributes: number;
  readonly lastOffsetDelta: number;
  readonly producerEpoch: number;
  readonly baseSequence: number;
  /** recordsCount: the number of records, never compressed. */
  readonly recordCount: number;

  /**
   * @internal The bytes the records are read from (the source, or the decompression output), null
   * before decompression and after release. Records read it through their batch.
   */
  data: Buffer | null;
  /** @internal Records occupy data[dataStart, dataEnd). */
  dataStart: number;
  /** @internal */
  dataEnd: number;
  /** @internal data's ArrayBuffer and where data starts in it, read once per batch for viewOf(). */
  private dataArrayBuffer: ArrayBuffer | null = null;
  private dataByteOffset = 0;
  /** The furthest record start known (recordStart, noteRecordStart): record knownIndex starts at knownPosition (-1: none yet). */
  private knownIndex = 0;
  private knownPosition = -1;

  private readonly source: Buffer;
  private readonly settings: DecodeSettings;
  /** The stored CRC as a signed int32 (a small integer to V8; `crc` is the unsigned form). */
  private readonly crcInt32: number;
  private readonly baseTs: number;
  private readonly maxTs: number;
  /** producerId as a number, NaN outside the safe-integer range (then exact in `wide`). */
  private readonly producerIdNumber: number;
  /** The exact int64 fields that are NaN as numbers; null when all four are safe integers (always, in practice). */
  private readonly wide: WideFields | null;
  /** The pooled buffer this batch must give back, if any. */
  private owned: Buffer | null = null;
  private ownedBy: BufferPool | null = null;
  private decoded: RecordView[] | null = null;
  private control: ControlRecord | null | undefined = undefined;
  private failure: KafkaProtocolError | null = null;
  private released = false;
  /** baseOffset and nextOffset, once read. */
  private baseOffsetOnce: bigint | undefined = undefined;
  private nextOffsetOnce: bigint | undefined = undefined;

  /** @internal Use RecordBatchReader or decodeRecordBatch: the header at `at` must have been checked. */
  constructor(source: Buffer, at: number, decodeSettings: DecodeSettings) {
    const b = source;
    this.source = source;
    this.settings = decodeSettings;
    this.byteOffset = at;
    this.baseOffsetNumber = int64Number(b, at);
    this.sizeInBytes = LOG_OVERHEAD + int32(b, at + 8);
    this.partitionLeaderEpoch = int32(b, at + 12);
    this.magic = b[at + 16]!;
    this.crcInt32 = int32(b, at + 17);
    const attributes = ((b[at + 21]! << 24) | (b[at + 22]! << 16)) >> 16;
    this.attributes = attributes;
    this.lastOffsetDelta = int32(b, at + 23);
    this.baseTs = int64Number(b, at + 27);
    this.maxTs = int64Number(b, at + 35);
    this.producerIdNumber = int64Number(b, at + 43);
    this.producerEpoch = ((b[at + 51]! << 24) | (b[at + 52]! << 16)) >> 16;
    this.baseSequence = int32(b, at + 53);
    this.recordCount = int32(b, at + 57);
    this.wide =
      Number.isNaN(this.baseOffsetNumber) || Number.isNaN(this.baseTs) || Number.isNaN(this.maxTs) || Number.isNaN(this.producerIdNumber)
        ? { baseOffset: b.readBigInt64BE(at), baseTimestamp: b.readBigInt64BE(at + 27), maxTimestamp: b.readBigInt64BE(at + 35), producerId: b.readBigInt64BE(at + 43) }
        : null;
    if ((attributes & 7) === 0) {
      this.data = source;
      this.dataStart = at + RECORD_BATCH_OVERHEAD;
      this.dataEnd = at + this.sizeInBytes;
      this.dataArrayBuffer = source.buffer as ArrayBuffer;
      this.dataByteOffset = source.byteOffset;
    } else {
      this.data = null;
      this.dataStart = 0;
      this.dataEnd = 0;
    }
  }

  /** The first offset (a bigint made on the first read, then kept). */
  get baseOffset(): bigint {
    return (this.baseOffsetOnce ??= Number.isNaN(this.baseOffsetNumber) ? this.wide!.baseOffset : BigInt(this.baseOffsetNumber));
  }

  /**
   * Whether the batch's first offset is at or after `offset`, without making the baseOffset bigint
   * (a Number and a BigInt compare exactly in JavaScript).
   */
  startsAtOrAfter(offset: bigint): boolean {
    const n = this.baseOffsetNumber;
    return Number.isNaN(n) ? this.wide!.baseOffset >= offset : n >= offset;
  }

  /** batchLength: the bytes after the length field (sizeInBytes - LOG_OVERHEAD). */
  get batchLength(): number {
    return this.sizeInBytes - LOG_OVERHEAD;
  }

  /** The stored CRC-32C, unsigned. */
  get crc(): number {
    return this.crcInt32 >>> 0;
  }

  get compression(): CompressionType {
    return COMPRESSION_TYPES[this.attributes & 7]!;
  }

  get timestampType(): TimestampType {
    return (this.attributes & 0x08) !== 0 ? 'LogAppendTime' : 'CreateTime';
  }

  get isTransactional(): boolean {
    return (this.attributes & 0x10) !== 0;
  }

  get isControl(): boolean {
    return (this.attributes & 0x20) !== 0;
  }

  /** baseTimestamp holds the delete horizon (set by the log cleaner, KIP-534). */
  get hasDeleteHorizon(): boolean {
    return (this.attributes & 0x40) !== 0;
  }

  /** baseTimestamp exactly, as a new bigint. */
  get baseTimestampBigInt(): bigint {
    return Number.isNaN(this.baseTs) ? this.wide!.baseTimestamp : BigInt(this.baseTs);
  }

  /** maxTimestamp exactly, as a new bigint. */
  get maxTimestampBigInt(): bigint {
    return Number.isNaN(this.maxTs) ? this.wide!.maxTimestamp : BigInt(this.maxTs);
  }

  /** -1 when the producer is not idempotent. A new bigint on each read. */
  get producerId(): bigint {
    return Number.isNaN(this.producerIdNumber) ? this.wide!.producerId : BigInt(this.producerIdNumber);
  }

  /** baseOffset + lastOffsetDelta: the fetch position moves past it even if compaction removed records. */
  get lastOffset(): bigint {
    return this.baseOffset + BigInt(this.lastOffsetDelta);
  }

  /** lastOffset + 1: where the next fetch starts after this batch (one bigint, made on the first read). */
  get nextOffset(): bigint {
    return (this.nextOffsetOnce ??= this.baseOffset + BigInt(this.lastOffsetDelta + 1));
  }

  /** First record's timestamp in ms (the delete horizon when hasDeleteHorizon); -1 for an empty batch. */
  get baseTimestamp(): number {
    const v = this.baseTs;
    if (!Number.isNaN(v)) return v;
    throw unsafeTimestamp('baseTimestamp', this.baseTimestampBigInt);
  }

  /** Largest record timestamp in ms; every record's timestamp for LogAppendTime batches. */
  get maxTimestamp(): number {
    const v = this.maxTs;
    if (!Number.isNaN(v)) return v;
    throw unsafeTimestamp('maxTimestamp', this.maxTimestampBigInt);
  }

  /** baseTimestamp, or NaN where that throws (outside the safe integer range): never throws. */
  get baseTimestampOrNaN(): number {
    return this.baseTs;
  }

  /** maxTimestamp, or NaN where that throws. */
  get maxTimestampOrNaN(): number {
    return this.maxTs;
  }

  /** The delete horizon in ms when hasDeleteHorizon, else -1. */
  get deleteHorizonMs(): number {
    return this.hasDeleteHorizon ? this.baseTimestamp : -1;
  }

  /** The batch as it was read, still compressed (a view of the source bytes). */
  get raw(): Buffer {
    if (this.released) throw new RecordReleasedError(this);
    return this.source.subarray(this.byteOffset, this.byteOffset + this.sizeInBytes);
  }

  get isReleased(): boolean {
    return this.released;
  }

  /** Bytes of decoded records (after decompression); loads them if needed. */
  get recordsSizeInBytes(): number {
    this.load();
    return this.dataEnd - this.dataStart;
  }

  /**
   * The records, decoded and checked on the first call (the array is kept and returned again).
   * Throws KafkaProtocolError for anything malformed, and again on every later call. Offsets in
   * errors about a record of a compressed batch count from the start of its decompressed records.
   */
  records(): RecordView[] {
    const done = this.decoded;
    if (done !== null) return done;
    const count = this.recordCount;
    // An empty batch (compaction keeps them for producer state) is not even decompressed: the
    // count is authoritative, as in the Java client.
    if (count === 0) {
      this.check();
      return (this.decoded = []);
    }
    this.load();
    const data = this.data!;
    const end = this.dataEnd;
    let p = this.dataStart;
    try {
      if (count > (end - p) / MIN_RECORD_SIZE) {
        throw batchError('invalid-length', `recordsCount ${count} cannot fit in ${end - p} bytes of records`, this.byteOffset + 57, 'recordCount');
      }
      const out = new Array<RecordView>(count);
      for (let i = 0; i < count; i++) {
        const r = new RecordView(this);
        p = readRecord(r, data, p, end, i);
        out[i] = r;
      }
      if (p !== end) throw trailing(this, end - p, p);
      return (this.decoded = out);
    } catch (err) {
      throw this.fail(this.inDecompressed(err));
    }
  }

  /**
   * Walks the records with one reused RecordView object instead of an array of them: next() moves
   * that object to the following record. Nothing is allocated per record, but a record is only
   * valid until the next call to next(): for code that handles each record before going on.
   * `reuse`: a cursor (of any batch) to move to the start of this one instead of making a new one,
   * so that walking many batches allocates nothing per batch either.
   */
  cursor(reuse?: RecordCursor): RecordCursor {
    if (this.recordCount === 0) this.check();
    else this.load();
    if (reuse === undefined) return new RecordCursor(this);
    reuse.reset(this);
    return reuse;
  }

  /**
   * Decodes (and checks) the record that starts at `position` of the decoded records into `into`
   * (whose batch becomes this one); returns where the next record starts. For code that has kept
   * where a record is (a cursor's position before next()) and reads it again later without
   * keeping a RecordView per record. `index` names the record in errors.
   */
  readRecordAt(position: number, into: RecordPlace, index = 0): number {
    const data = this.loadedData();
    if (position < this.dataStart || position >= this.dataEnd) throw new RangeError(`no record at ${position} (records are in [${this.dataStart}, ${this.dataEnd}))`);
    into.batch = this;
    try {
      return readRecord(into, data, position, this.dataEnd, index);
    } catch (err) {
      throw this.fail(this.inDecompressed(err));
    }
  }

  /**
   * Where record `index` (0 .. recordCount - 1) starts in the decoded records, for readRecordAt. It
   * is found by the records' lengths alone (each checked as RecordCursor.skip checks them), from
   * the furthest start already known (noteRecordStart, or an earlier call) when that is not past
   * `index`, else from the first record. A consumer that delivers a wire batch in parts
   * (max.poll.records) finds each part's start where the reading of the part before it ended,
   * instead of walking the records twice (once to cut, once to read).
   */
  recordStart(index: number): number {
    const data = this.loadedData();
    if (!(index >= 0 && index < this.recordCount)) throw new RangeError(`no record ${index} (the batch has ${this.recordCount})`);
    let i = 0;
    let p = this.dataStart;
    if (this.knownPosition >= 0 && this.knownIndex <= index) {
      i = this.knownIndex;
      p = this.knownPosition;
    }
    try {
      for (; i < index; i++) p = recordEnd(data, p, this.dataEnd, i);
    } catch (err) {
      throw this.fail(this.inDecompressed(err));
    }
    this.noteRecordStart(index, p);
    return p;
  }

  /** The decoded records' bytes (decompressing once), or the batch's first failure. */
  private loadedData(): Buffer {
    let data = this.data;
    if (data === null) {
      this.load();
      data = this.data!;
    }
    if (this.failure !== null) throw this.failure;
    return data;
  }

  /**
   * @internal Record `index` starts at `position`: what a reader of the records before it found
   * (readRecordAt's return), or recordStart's own walk. Kept only when it is further on than what
   * is known, so that asking for an earlier record never loses a later start.
   */
  noteRecordStart(index: number, position: number): void {
    if (this.knownPosition >= 0 && index <= this.knownIndex) return;
    this.knownIndex = index;
    this.knownPosition = position;
  }

  /**
   * The control record of a control batch: its type (ControlRecordType) and, for COMMIT/ABORT
   * markers, the coordinator epoch. null for other batches, and for a control batch left empty
   * by compaction.
   */
  get controlRecord(): ControlRecord | null {
    if (this.control !== undefined) return this.control;
    if (!this.isControl || this.recordCount === 0) return (this.control = null);
    const first = this.records()[0]!;
    try {
      return (this.control = parseControlRecord(first));
    } catch (err) {
      throw this.fail(err);
    }
  }

  /** ControlRecordType of a control batch, -1 for a data batch. */
  get controlType(): number {
    return this.controlRecord?.type ?? -1;
  }

  /**
   * Ends this batch's hold on its bytes: a pooled decompression buffer goes back to the pool, and
   * its records (and those of an uncompressed batch) stop being readable. Safe to call twice.
   */
  release(): void {
    if (this.released) return;
    this.released = true;
    const owned = this.owned;
    const pool = this.ownedBy;
    this.owned = null;
    this.ownedBy = null;
    this.data = null;
    this.dataArrayBuffer = null;
    this.decoded = null;
    if (owned !== null && pool !== null) pool.release(owned);
  }

  /**
   * @internal A Buffer view of data[start, start + length) (see buffer-view.ts): what record key
   * and value getters hand out. The caller has checked that data is there (not released).
   */
  viewOf(start: number, length: number): Buffer {
    return bufferView(this.dataArrayBuffer!, this.dataByteOffset + start, length);
  }

  /** Throws the batch's first failure, or RecordReleasedError after release. */
  private check(): void {
    if (this.failure !== null) throw this.failure;
    if (this.released) throw new RecordReleasedError(this);
  }

  /** Makes data/dataStart/dataEnd hold the plain records (decompressing once). */
  private load(): void {
    this.check();
    if (this.data !== null) return;
    const payloadStart = this.byteOffset + RECORD_BATCH_OVERHEAD;
    const payload = this.source.subarray(payloadStart, this.byteOffset + this.sizeInBytes);
    let out;
    try {
      out = decompress(this.attributes & 7, payload, this.settings.maxDecompressedBytes, this.settings.pool);
    } catch (err) {
      // The codec reports offsets within the compressed payload: make them point into the source.
      const e = toProtocolError(err);
      throw this.fail(new KafkaProtocolError(e.detail, { reason: e.reason, offset: payloadStart + (e.offset ?? 0), path: 'records', cause: e }));
    }
    this.data = out.buffer;
    this.dataStart = 0;
    this.dataEnd = out.length;
    this.dataArrayBuffer = out.buffer.buffer as ArrayBuffer;
    this.dataByteOffset = out.buffer.byteOffset;
    if (out.pool !== null) {
      this.owned = out.buffer;
      this.ownedBy = out.pool;
    }
  }

  /**
   * @internal Record errors carry offsets into the bytes the records were read from; for a
   * compressed batch those are the decompressed records, which the message then says.
   */
  inDecompressed(err: unknown): KafkaProtocolError {
    const e = toProtocolError(err);
    if ((this.attributes & 7) === 0 || e.offset === undefined) return e;
    return new KafkaProtocolError(`${e.detail} (offset within the decompressed records)`, { reason: e.reason, offset: e.offset, path: e.path, cause: e.cause });
  }

  /** @internal Remembers the first failure so later calls report it again. */
  fail(err: unknown): KafkaProtocolError {
    if (this.failure !== null) return this.failure;
    return (this.failure = toProtocolError(err));
  }
}

function unsafeTimestamp(field: string, value: bigint): KafkaProtocolError {
  return new KafkaProtocolError(`${field} ${value} is outside the safe integer range; read ${field}BigInt`, { reason: 'invalid-value', path: field });
}

function trailing(batch: RecordBatch, n: number, at: number): KafkaProtocolError {
  return batchError('trailing-bytes', `${n} bytes after the last of ${batch.recordCount} records`, at, 'records');
}

/** See RecordBatch.cursor(). */
export class RecordCursor {
  batch: RecordBatch;
  /** The records read so far. */
  index = 0;
  /** The one RecordView next() moves along (its batch is the cursor's). */
  readonly record: RecordView;
  private from: number;

  /** @internal */
  constructor(batch: RecordBatch, record: RecordView = new RecordView(batch)) {
    this.batch = batch;
    this.record = record;
    this.from = batch.dataStart;
    this.reset(batch);
  }

  /** Where the next record starts in the batch's decoded bytes (see RecordBatch.readRecordAt). */
  get position(): number {
    return this.from;
  }

  /** @internal Moves the cursor to the first record of `batch` (loaded: see RecordBatch.cursor). */
  reset(batch: RecordBatch): void {
    this.batch = batch;
    this.record.batch = batch;
    this.index = 0;
    this.from = batch.dataStart;
    const count = batch.recordCount;
    if (count > 0 && count > (batch.dataEnd - batch.dataStart) / MIN_RECORD_SIZE) {
      throw batch.fail(batchError('invalid-length', `recordsCount ${count} cannot fit in ${batch.dataEnd - batch.dataStart} bytes of records`, batch.byteOffset + 57, 'recordCount'));
    }
  }

  /** The next record (always the same object, moved along), or null after the last one. */
  next(): RecordView | null {
    const batch = this.batch;
    if (batch.isReleased) throw new RecordReleasedError(batch);
    const i = this.index;
    const count = batch.recordCount;
    if (i >= count) {
      if (count > 0 && this.from !== batch.dataEnd) throw batch.fail(trailing(batch, batch.dataEnd - this.from, this.from));
      return null;
    }
    const data = batch.data!;
    try {
      this.from = readRecord(this.record, data, this.from, batch.dataEnd, i);
    } catch (err) {
      throw batch.fail(batch.inDecompressed(err));
    }
    this.index = i + 1;
    return this.record;
  }

  /**
   * Moves past up to `count` records (fewer at the end of the batch) reading only each one's length,
   * and returns the offsetDelta of the last one passed (-1 when none). Nothing else is read or
   * checked: the consumer finds where max.poll.records cuts a batch this way, and the records are
   * decoded, and checked, once, by whoever reads them. `record` is not moved (it still holds what
   * next() last returned).
   */
  skip(count: number): number {
    const batch = this.batch;
    if (batch.isReleased) throw new RecordReleasedError(batch);
    const data = batch.data!;
    const dataEnd = batch.dataEnd;
    const end = Math.min(batch.recordCount, this.index + count);
    if (end <= this.index) return -1;
    let from = this.from;
    try {
      // Only the lengths on the way; the last record's offsetDelta once, at the end.
      for (let i = this.index; i < end - 1; i++) from = recordEnd(data, from, dataEnd, i);
      const next = recordEnd(data, from, dataEnd, end - 1);
      const delta = offsetDeltaOf(data, next, end - 1);
      this.from = next;
      this.index = end;
      return delta;
    } catch (err) {
      throw batch.fail(batch.inDecompressed(err));
    }
  }

  /**
   * Moves past the records whose offsetDelta is below `offsetDelta`, reading each one's length and
   * offsetDelta only: those before a position inside the batch (a compressed batch comes whole).
   */
  skipBefore(offsetDelta: number): void {
    const batch = this.batch;
    if (batch.isReleased) throw new RecordReleasedError(batch);
    const data = batch.data!;
    try {
      while (this.index < batch.recordCount) {
        const next = recordEnd(data, this.from, batch.dataEnd, this.index);
        if (offsetDeltaOf(data, next, this.index) >= offsetDelta) break;
        this.from = next;
        this.index++;
      }
    } catch (err) {
      throw batch.fail(batch.inDecompressed(err));
    }
  }
}

/* ---------------------------------------------------------------------------------------------
 * The records of a batch, viewed. In this module with RecordBatch because each names the other in
 * its API (a record's batch, a batch's records and cursor): two modules would import each other.
 * ------------------------------------------------------------------------------------------- */

/**
 * One record of a decoded batch, as a view: numbers locating its parts in the batch's bytes, which
 * it does not own. (Named RecordView, not Record, so that it neither shadows TypeScript's built-in
 * Record<K, V> where it is imported nor hides that it is only valid while its batch is.)
 *
 * Why an object of numbers rather than decoded fields: a consumer hands out millions of records a
 * second and most applications read only the value (often only as a string). So decoding a record
 * stores where its parts are (plain integers, no Buffers, no strings, no bigints) and the getters
 * build the Buffer views, header arrays and bigint offsets only when asked. The record object and
 * its slot in the batch's array are the whole per-record allocation. All fields are set by the
 * decoder before the record is handed out and the class never adds properties later, so every
 * RecordView shares one hidden class and property reads stay monomorphic in the consumer's loop.
 *
 * Lifetime: key, value and header values are views into the batch's bytes (the fetch response
 * frame, or the batch's decompression buffer). They are valid until the batch is released, see the
 * ownership rule in pool/buffer-pool.ts. After release the getters that would read those bytes
 * throw RecordReleasedError instead of returning whatever the buffer holds by then; a Buffer taken
 * before release is not protected: copy it (Buffer.from(record.value)) to keep it longer. (The
 * getters throw after release even for a null key or value, so a use-after-release bug shows up
 * on the first record rather than on the first non-null one.)
 *
 * Getters that allocate (key, value, headers, offset, timestampBigInt) build a new object on each
 * call: keep the result in a variable rather than calling them twice.
 */
export class RecordView {
  /** The batch this record belongs to (its base offset, timestamps, producer, bytes). */
  batch: RecordBatch;
  /** Where the record (its length varint) starts in the batch's decoded bytes. */
  position = 0;
  /** Record attributes byte; unused by Kafka so far (0). */
  attributes = 0;
  /**
   * timestamp - batch.baseTimestamp, in ms. NaN when the delta lies outside the safe integer range
   * (only a hostile or absurd batch does that): `timestamp` then throws and `timestampBigInt` is exact.
   */
  timestampDelta = 0;
  /** offset - batch.baseOffset. */
  offsetDelta = 0;
  /** Position of the key bytes in the batch's decoded bytes; -1 for a null key. */
  keyOffset = -1;
  /** Key length in bytes, -1 for a null key. */
  keyLength = -1;
  /** Position of the value bytes; -1 for a null value. */
  valueOffset = -1;
  /** Value length in bytes, -1 for a null value (a tombstone). */
  valueLength = -1;
  /** Position of the first header. */
  headersOffset = 0;
  headerCount = 0;

  constructor(batch: RecordBatch) {
    this.batch = batch;
  }

  /** The record's offset: baseOffset + offsetDelta. A new bigint on each call: see offsetNumber. */
  get offset(): bigint {
    return this.batch.baseOffset + BigInt(this.offsetDelta);
  }

  /**
   * The offset as a number, without allocating a bigint: exact up to Number.MAX_SAFE_INTEGER (2^53,
   * far past any real log); past it a KafkaProtocolError (read `offset`).
   */
  get offsetNumber(): number {
    const o = this.batch.baseOffsetNumber + this.offsetDelta;
    if (o <= Number.MAX_SAFE_INTEGER) return o;
    throw new KafkaProtocolError(`record offset ${this.offset} is outside the safe integer range; read offset`, { reason: 'invalid-value' });
  }

  /**
   * The bytes keyOffset, valueOffset and headersOffset point into (the fetch response, or the
   * batch's decompression buffer): for reading a record without making a Buffer view of it, e.g.
   * `r.data.toString('utf8', r.valueOffset, r.valueOffset + r.valueLength)`. Valid, like every
   * part of the record, until the batch is released; RecordReleasedError after.
   */
  get data(): Buffer {
    return this.bytes();
  }

  /**
   * Milliseconds since the epoch: baseTimestamp + timestampDelta for CreateTime batches, the
   * batch's maxTimestamp for LogAppendTime batches (as the Java client does). Exact, or a
   * KafkaProtocolError when the value is outside the safe integer range (use timestampBigInt).
   */
  get timestamp(): number {
    const b = this.batch;
    if (b.timestampType === 'LogAppendTime') return b.maxTimestamp;
    const t = b.baseTimestamp + this.timestampDelta;
    if (Number.isSafeInteger(t)) return t;
    throw new KafkaProtocolError(`record timestamp ${this.timestampBigInt} is outside the safe integer range; read timestampBigInt`, {
      reason: 'invalid-value',
    });
  }

  /** The timestamp, exact over the whole int64 range. */
  get timestampBigInt(): bigint {
    const b = this.batch;
    if (b.timestampType === 'LogAppendTime') return b.maxTimestampBigInt;
    const delta = Number.isNaN(this.timestampDelta) ? this.exactTimestampDelta() : BigInt(this.timestampDelta);
    return BigInt.asIntN(64, b.baseTimestampBigInt + delta);
  }

  /** The producer sequence of this record: baseSequence + offsetDelta, wrapping past int32 max; -1 if none. */
  get sequence(): number {
    const base = this.batch.baseSequence;
    if (base < 0) return -1;
    const d = this.offsetDelta;
    return base > 0x7fffffff - d ? d - (0x7fffffff - base) - 1 : base + d;
  }

  /** True for the marker of a control batch (consumers never show these to applications). */
  get isControl(): boolean {
    return this.batch.isControl;
  }

  /** A view of the key bytes, or null. */
  get key(): Buffer | null {
    this.bytes();
    if (this.keyLength < 0) return null;
    return this.batch.viewOf(this.keyOffset, this.keyLength);
  }

  /** A view of the value bytes, or null (a tombstone). */
  get value(): Buffer | null {
    this.bytes();
    if (this.valueLength < 0) return null;
    return this.batch.viewOf(this.valueOffset, this.valueLength);
  }

  /** The key decoded as text (UTF-8 by default) without making a view first; null for a null key. */
  keyString(encoding: BufferEncoding = 'utf8'): string | null {
    const data = this.bytes();
    if (this.keyLength < 0) return null;
    return data.toString(encoding, this.keyOffset, this.keyOffset + this.keyLength);
  }

  /** The value decoded as text (UTF-8 by default) without making a view first; null for a tombstone. */
  valueString(encoding: BufferEncoding = 'utf8'): string | null {
    const data = this.bytes();
    if (this.valueLength < 0) return null;
    return data.toString(encoding, this.valueOffset, this.valueOffset + this.valueLength);
  }

  /** The headers, in order (keys may repeat). A new array on every call. */
  get headers(): RecordHeader[] {
    this.bytes();
    return readHeaders(this.batch, this.headersOffset, this.headerCount);
  }

  /** The batch's decoded bytes, or RecordReleasedError once it has been released. */
  private bytes(): Buffer {
    const data = this.batch.data;
    if (data === null) throw new RecordReleasedError(this.batch);
    return data;
  }

  /** Re-reads a timestampDelta too large for a number, exactly. */
  private exactTimestampDelta(): bigint {
    const data = this.bytes();
    pos = this.position;
    uvarintZigzag(data); // the record length
    pos += 1; // attributes
    let u = 0n;
    let shift = 0n;
    for (;;) {
      const b = data[pos++]!;
      u |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) break;
      shift += 7n;
    }
    return BigInt.asIntN(64, (u >> 1n) ^ -(u & 1n));
  }
}

/**
 * What the decoder writes about one record (RecordView's positional fields): RecordBatch.readRecordAt
 * fills any object of this shape, so that a consumer can keep its own record class (one object
 * moved along, with fields of its own) without wrapping a RecordView.
 */
export interface RecordPlace extends RecordFields {
  batch: RecordBatch;
}

export interface RecordHeader {
  key: string;
  /** A view of the header value bytes, or null. */
  value: Buffer | null;
}

/**
 * The `count` headers of a record starting at `at` in the batch's data (just after the header
 * count), as a new array: keys through the table of recent keys, values as views into the data
 * (RecordBatch.viewOf). For records of a batch not released, which the decoder has checked already
 * (RecordView, and the consumer's own record classes): no bounds checks.
 */
export function readHeaders(batch: RecordBatch, at: number, count: number): RecordHeader[] {
  const data = batch.data!;
  const out = new Array<RecordHeader>(count);
  pos = at;
  for (let h = 0; h < count; h++) {
    const keyLength = uvarintZigzag(data);
    const key = headerKey(data, pos, keyLength);
    pos += keyLength;
    const valueLength = uvarintZigzag(data);
    let value: Buffer | null = null;
    if (valueLength >= 0) {
      value = batch.viewOf(pos, valueLength);
      pos += valueLength;
    }
    out[h] = { key, value };
  }
  return out;
}

/**
 * A record's bytes were read after its batch was released (the lifetime rule). It carries the
 * consumer's KafkaError brand, so `isKafkaError()` of @kwire/consumer recognizes it.
 */
export class RecordReleasedError extends Error {
  override name = 'RecordReleasedError';
  readonly code = 'KWIRE_RECORD_RELEASED';
  readonly retriable = false;
  get [Symbol.for('kwire.KafkaError')](): true {
    return true;
  }
  constructor(batch: RecordBatch) {
    super(`record batch at offset ${batch.baseOffset} was released; its records can no longer be read`);
  }
}

// Read position for the lazy getters above (synchronous use only).
let pos = 0;

/** Zig-zag varint at `pos`, already validated by the decoder. */
function uvarintZigzag(data: Buffer): number {
  let u = 0;
  for (let shift = 0; ; shift += 7) {
    const b = data[pos++]!;
    u |= (b & 0x7f) << shift;
    if (b < 0x80) break;
  }
  return (u >>> 1) ^ -(u & 1);
}
