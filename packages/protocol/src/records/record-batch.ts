import { KafkaProtocolError, toProtocolError, type ProtocolErrorReason } from '../errors.js';
import { COMPRESSION_TYPES, DEFAULT_MAX_DECOMPRESSED_BYTES, decompress, type CompressionType } from '../compression/index.js';
import { defaultBufferPool, type BufferPool } from '../pool/buffer-pool.js';
import { bufferView } from './buffer-view.js';
import { crc32c } from './crc32c.js';
import { parseControlRecord, type ControlRecord } from './control.js';
import { RecordView, RecordReleasedError, type RecordPlace } from './record.js';

/*
 * RecordBatch (magic v2), the unit a Fetch partition's `records` bytes are made of:
 *
 *   baseOffset int64 · batchLength int32 · partitionLeaderEpoch int32 · magic int8 (2) ·
 *   crc uint32 (CRC-32C of attributes .. end) · attributes int16 · lastOffsetDelta int32 ·
 *   baseTimestamp int64 · maxTimestamp int64 · producerId int64 · producerEpoch int16 ·
 *   baseSequence int32 · recordsCount int32 · records (compressed as one stream when codec != 0)
 *
 *   Record: length varint · attributes int8 · timestampDelta varlong · offsetDelta varint ·
 *   keyLength varint (-1 null) · key · valueLength varint (-1 null) · value ·
 *   headerCount varint · [headerKeyLength varint · headerKey · headerValueLength varint (-1 null) · headerValue]
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
/** Header bytes up to and including magic: what must be there to tell a batch from a legacy message. */
const HEADER_SIZE_UP_TO_MAGIC = 17;
/** The CRC covers attributes (byte 21) to the end of the batch. */
const CRC_START = 21;
/** The fewest bytes one record can take: length, attributes, timestampDelta, offsetDelta, key, value, headerCount. */
export const MIN_RECORD_SIZE = 7;

export type TimestampType = 'CreateTime' | 'LogAppendTime';

export interface RecordBatchDecodeOptions {
  /** Verify each batch's CRC-32C (default true, as Java's check.crcs). */
  checkCrc?: boolean;
  /** Refuse a batch whose records decompress to more than this (default 64 MiB). */
  maxDecompressedBytes?: number;
  /** Where decompression buffers come from; null allocates without pooling. Default: defaultBufferPool. */
  pool?: BufferPool | null;
}

interface DecodeSettings {
  checkCrc: boolean;
  maxDecompressedBytes: number;
  pool: BufferPool | null;
}

function settings(options: RecordBatchDecodeOptions | undefined): DecodeSettings {
  const max = options?.maxDecompressedBytes ?? DEFAULT_MAX_DECOMPRESSED_BYTES;
  if (!(max >= 0) || !Number.isSafeInteger(max)) throw new RangeError(`maxDecompressedBytes must be a non-negative integer, got ${max}`);
  return {
    checkCrc: options?.checkCrc ?? true,
    maxDecompressedBytes: max,
    pool: options?.pool === undefined ? defaultBufferPool : options.pool,
  };
}

function batchError(reason: ProtocolErrorReason, detail: string, offset: number, path: string): KafkaProtocolError {
  return new KafkaProtocolError(detail, { reason, offset, path });
}

function int32(b: Buffer, o: number): number {
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
 * Record decoding: the hot loop. Varints are read with plain byte arithmetic; one- and two-byte
 * values take the inline fast path (a 100 B record's length and value length, and offset and
 * timestamp deltas past 63, are two bytes: in a call each, they were 6.6% of the 100 B profile).
 * The read position lives in a module variable so the readers return plain numbers without
 * allocating; everything here is synchronous, so nothing else can move it in between.
 * ------------------------------------------------------------------------------------------- */

let at = 0;

function recordError(reason: ProtocolErrorReason, detail: string, offset: number, index: number, field: string, header: number): KafkaProtocolError {
  const path = header < 0 ? `records/${index}/${field}` : `records/${index}/headers/${header}/${field}`;
  return new KafkaProtocolError(detail, { reason, offset, path });
}

/** What shortVarint() returns for a varint of more than two bytes (or none before `end`). */
const NOT_SHORT = 0x7fffffff;

/**
 * A zig-zag varint of one or two bytes at `at`, not past `end` (the same for int32 and int64: two
 * bytes hold 14 bits), or NOT_SHORT for the slow path to read (and check) instead.
 */
function shortVarint(buf: Buffer, end: number): number {
  const p = at;
  if (p < end) {
    const b = buf[p]!;
    if (b < 0x80) {
      at = p + 1;
      return (b >>> 1) ^ -(b & 1);
    }
    if (p + 1 < end) {
      const c = buf[p + 1]!;
      if (c < 0x80) {
        at = p + 2;
        const u = (b & 0x7f) | (c << 7);
        return (u >>> 1) ^ -(u & 1);
      }
    }
  }
  return NOT_SHORT;
}

/** Zig-zag varint (int32) at `at`, not past `end`. */
function varint(buf: Buffer, end: number, index: number, field: string, header: number): number {
  const v = shortVarint(buf, end);
  return v !== NOT_SHORT ? v : varintSlow(buf, end, index, field, header);
}

function varintSlow(buf: Buffer, end: number, index: number, field: string, header: number): number {
  const start = at;
  let p = start;
  let u = 0;
  for (let shift = 0; ; shift += 7) {
    if (p >= end) throw recordError('truncated', `${field} varint runs past the end of the record`, start, index, field, header);
    const b = buf[p++]!;
    if (shift === 28) {
      // The 5th byte may only carry the top 4 bits: anything more is a 6th byte or bits past 32.
      if (b > 0x0f) throw recordError('varint-too-long', `${field} varint longer than 5 bytes`, start, index, field, header);
      u |= b << 28;
      break;
    }
    u |= (b & 0x7f) << shift;
    if (b < 0x80) break;
  }
  at = p;
  return (u >>> 1) ^ -(u & 1);
}

/**
 * Zig-zag varlong (int64) at `at` as a number: exact when the value is a safe integer, NaN when it
 * is not (the caller then keeps the bytes' position and reads a bigint on demand).
 */
function varlong(buf: Buffer, end: number, index: number, field: string): number {
  const v = shortVarint(buf, end);
  return v !== NOT_SHORT ? v : varlongSlow(buf, end, index, field);
}

function varlongSlow(buf: Buffer, end: number, index: number, field: string): number {
  const start = at;
  let p = start;
  // Up to 4 bytes (28 bits) in int32 arithmetic: the usual case (deltas under ~1.5 days) then
  // returns a small integer, which V8 keeps unboxed, rather than a double it would allocate.
  let u = 0;
  for (let shift = 0; shift < 28; shift += 7) {
    if (p >= end) throw recordError('truncated', `${field} varlong runs past the end of the record`, start, index, field, -1);
    const b = buf[p++]!;
    u |= (b & 0x7f) << shift;
    if (b < 0x80) {
      at = p;
      return (u >>> 1) ^ -(u & 1);
    }
  }
  // 5 to 7 bytes: at most 49 bits, still exact in a double, and so is the zig-zag step.
  let scale = 0x10000000;
  for (let i = 4; i < 10; i++) {
    if (p >= end) throw recordError('truncated', `${field} varlong runs past the end of the record`, start, index, field, -1);
    const b = buf[p++]!;
    if (i === 9 && b > 1) throw recordError('varint-too-long', `${field} varlong longer than 64 bits`, start, index, field, -1);
    if (b < 0x80) {
      at = p;
      if (i < 7) {
        u += b * scale;
        return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
      }
      return exactVarlong(buf, start, p);
    }
    if (i < 7) u += (b & 0x7f) * scale;
    scale *= 128;
  }
  throw recordError('varint-too-long', `${field} varlong longer than 10 bytes`, start, index, field, -1);
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** A varlong of 8-10 bytes (rare: non-minimal or huge), via bigint; NaN outside the safe range. */
function exactVarlong(buf: Buffer, from: number, to: number): number {
  let u = 0n;
  for (let p = to - 1; p >= from; p--) u = (u << 7n) | BigInt(buf[p]! & 0x7f);
  const v = BigInt.asIntN(64, (u >> 1n) ^ -(u & 1n));
  return v > MAX_SAFE || v < -MAX_SAFE ? Number.NaN : Number(v);
}

/** Where the record at p ends (`at` is left just after its length): its length read and checked, for readRecord and for skipping. */
function recordEnd(buf: Buffer, p: number, end: number, index: number): number {
  at = p;
  const length = varint(buf, end, index, 'length', -1);
  if (length < MIN_RECORD_SIZE - 1 || length > end - at) {
    throw recordError('invalid-length', `record length ${length} (${end - at} bytes left, at least ${MIN_RECORD_SIZE - 1} needed)`, p, index, 'length', -1);
  }
  return at + length;
}

/**
 * The offsetDelta of the record whose body recordEnd() has just found (it starts at `at` and ends
 * at bodyEnd): the length is read once, for the skip and for this.
 */
function offsetDeltaOf(buf: Buffer, bodyEnd: number, index: number): number {
  at++; // attributes
  varlong(buf, bodyEnd, index, 'timestampDelta');
  return varint(buf, bodyEnd, index, 'offsetDelta', -1);
}

/**
 * Decodes the record at p (records end at `end`) into rec; returns where the next record starts.
 * Every length is checked against the bytes the record declares before it is used, and the fields
 * must use up exactly the declared length (as the Java client checks).
 */
function readRecord(rec: RecordPlace, buf: Buffer, p: number, end: number, index: number): number {
  const bodyEnd = recordEnd(buf, p, end, index);
  const bodyStart = at;
  const attributes = (buf[bodyStart]! << 24) >> 24;
  at = bodyStart + 1;
  const timestampDelta = varlong(buf, bodyEnd, index, 'timestampDelta');
  const offsetDelta = varint(buf, bodyEnd, index, 'offsetDelta', -1);

  let start = at;
  const keyLength = varint(buf, bodyEnd, index, 'key', -1);
  let keyOffset = -1;
  if (keyLength !== -1) {
    if (keyLength < 0 || keyLength > bodyEnd - at) {
      throw recordError('invalid-length', `key length ${keyLength}, ${bodyEnd - at} bytes left in the record`, start, index, 'key', -1);
    }
    keyOffset = at;
    at += keyLength;
  }

  start = at;
  const valueLength = varint(buf, bodyEnd, index, 'value', -1);
  let valueOffset = -1;
  if (valueLength !== -1) {
    if (valueLength < 0 || valueLength > bodyEnd - at) {
      throw recordError('invalid-length', `value length ${valueLength}, ${bodyEnd - at} bytes left in the record`, start, index, 'value', -1);
    }
    valueOffset = at;
    at += valueLength;
  }

  start = at;
  const headerCount = varint(buf, bodyEnd, index, 'headers', -1);
  // A header takes at least 2 bytes (two one-byte lengths): check before walking them.
  if (headerCount < 0 || headerCount * 2 > bodyEnd - at) {
    throw recordError('invalid-length', `header count ${headerCount}, ${bodyEnd - at} bytes left in the record`, start, index, 'headers', -1);
  }
  const headersOffset = at;
  for (let h = 0; h < headerCount; h++) {
    start = at;
    const hk = varint(buf, bodyEnd, index, 'key', h);
    if (hk < 0 || hk > bodyEnd - at) {
      throw recordError('invalid-length', `header key length ${hk}, ${bodyEnd - at} bytes left in the record`, start, index, 'key', h);
    }
    at += hk;
    start = at;
    const hv = varint(buf, bodyEnd, index, 'value', h);
    if (hv < -1 || hv > bodyEnd - at) {
      throw recordError('invalid-length', `header value length ${hv}, ${bodyEnd - at} bytes left in the record`, start, index, 'value', h);
    }
    if (hv > 0) at += hv;
  }
  if (at !== bodyEnd) {
    throw recordError('invalid-length', `record length ${bodyEnd - bodyStart}, but its fields take ${at - bodyStart} bytes`, p, index, 'length', -1);
  }

  rec.position = p;
  rec.attributes = attributes;
  rec.timestampDelta = timestampDelta;
  rec.offsetDelta = offsetDelta;
  rec.keyOffset = keyOffset;
  rec.keyLength = keyLength;
  rec.valueOffset = valueOffset;
  rec.valueLength = valueLength;
  rec.headersOffset = headersOffset;
  rec.headerCount = headerCount;
  return bodyEnd;
}

/* ---------------------------------------------------------------------------------------------
 * Batch framing
 * ------------------------------------------------------------------------------------------- */

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
