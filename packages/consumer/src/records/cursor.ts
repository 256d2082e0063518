// Reading a batch's records without an object per record: a cursor (BatchCursor) that moves one
// record object (CursorRecord) along them.
import { headerKey, RecordReleasedError, type RecordBatch, type RecordHeader, type RecordPlace, type RecordView } from '@kwire/protocol';
import { CorruptRecordError } from '../errors.js';
import type { ConsumerRecord } from './record.js';
import { scratch } from './scratch.js';
import { NO_SPANS, notConsecutive, type RecordSpan, type RecordSpans } from './spans.js';

/** What a cursor needs of the batch it reads (a ConsumerBatch): its place and whether it is released. */
export interface CursorOwner {
  readonly topic: string;
  readonly partition: number;
  readonly isReleased: boolean;
}

/**
 * The record a BatchCursor moves along: plain fields, so that reading them allocates nothing
 * whether or not V8 inlines anything (a number past 2^31, every timestamp, returned by a getter
 * that is not inlined is a 16-byte box).
 *
 * Read without allocating:
 *  - topic, partition, leaderEpoch; offsetNumber (exact below 2^53); timestamp (ms since the
 *    epoch; NaN outside the safe integer range, where timestampBigInt is exact);
 *  - data (the backing bytes) with keyOffset/keyLength and valueOffset/valueLength (length -1 for
 *    null): e.g. `r.data.toString('utf8', r.valueOffset, r.valueOffset + r.valueLength)` makes
 *    only the string, `r.data[r.valueOffset]` reads a byte;
 *  - headerCount, and header(i), which sets headerKeyOffset/headerKeyLength and
 *    headerValueOffset/headerValueLength (-1 for null) for the i-th header; headerKeyString(), its
 *    key as a string, allocates only for a key not seen recently.
 * Allocating, as their names say: offset (a bigint), timestampBigInt, key and value (Buffer views),
 * keyString()/valueString(), headers (an array of header objects).
 *
 * LIFETIME: the object is the cursor's and the next call to next() moves it to the next record:
 * read what you need before that. Its bytes are valid until the batch is released, like every
 * record's; after that `data` (and next()) throw RecordReleasedError. Copy what must outlive the
 * batch (Buffer.from(r.value), or data.copy(...)).
 */
export class CursorRecord implements RecordPlace {
  /** @internal The wire batch the record is in. */
  batch: RecordBatch = null as unknown as RecordBatch;
  topic = '';
  partition = -1;
  /** The offset (exact below 2^53, far past any real log; NaN past it, where `offset` is exact). */
  offsetNumber = 0.5;
  /** Milliseconds since the epoch (create time, or log-append time when the topic says so); NaN outside the safe integer range. */
  timestamp = 0.5;
  /** @internal Where the record starts in `data`. */
  position = 0;
  /** Record attributes (unused by Kafka so far: 0). */
  attributes = 0;
  /** timestamp - the batch's base timestamp (NaN when huge). */
  timestampDelta = 0;
  /** offset - the batch's base offset. */
  offsetDelta = 0;
  /** Where the key is in `data`; -1 for a null key. */
  keyOffset = -1;
  /** The key's length in bytes; -1 for a null key. */
  keyLength = -1;
  /** Where the value is in `data`; -1 for a null value. */
  valueOffset = -1;
  /** The value's length in bytes; -1 for a null value (a tombstone). */
  valueLength = -1;
  /** @internal Where the headers start in `data`. */
  headersOffset = 0;
  headerCount = 0;
  /** Set by header(i): where the header's key is in `data`, and its length in bytes. */
  headerKeyOffset = 0;
  headerKeyLength = 0;
  /** Set by header(i): where the header's value is in `data`, and its length (-1 for null). */
  headerValueOffset = -1;
  headerValueLength = -1;
  /** The header walk: the record (its position) and header it is at, and where the next starts. */
  private walkRecord = -1;
  private walkIndex = -1;
  private walkNext = 0;

  /** The bytes the record's offsets point into; RecordReleasedError once its batch is released. */
  get data(): Buffer {
    const data = this.batch.data;
    if (data === null) throw new RecordReleasedError(this.batch);
    return data;
  }

  /** The leader epoch of the record's batch (for commits). */
  get leaderEpoch(): number {
    return this.batch.partitionLeaderEpoch;
  }

  /** The offset as a bigint (a new one on each call). */
  get offset(): bigint {
    return this.batch.baseOffset + BigInt(this.offsetDelta);
  }

  /** The timestamp, exact over the whole int64 range (allocates). */
  get timestampBigInt(): bigint {
    return this.wire().timestampBigInt;
  }

  /** A view of the key bytes, or null (allocates the view). */
  get key(): Buffer | null {
    return this.viewAt(this.keyOffset, this.keyLength);
  }

  /** A view of the value bytes, or null (allocates the view). */
  get value(): Buffer | null {
    return this.viewAt(this.valueOffset, this.valueLength);
  }

  /** A view of `length` bytes at `offset` of the record's batch (null for -1), once the batch is known live. */
  private viewAt(offset: number, length: number): Buffer | null {
    if (this.batch.data === null) throw new RecordReleasedError(this.batch);
    return length < 0 ? null : this.batch.viewOf(offset, length);
  }

  /** The key as text (allocates the string only); null for a null key. */
  keyString(encoding: BufferEncoding = 'utf8'): string | null {
    const data = this.data;
    return this.keyLength < 0 ? null : data.toString(encoding, this.keyOffset, this.keyOffset + this.keyLength);
  }

  /** The value as text (allocates the string only); null for a tombstone. */
  valueString(encoding: BufferEncoding = 'utf8'): string | null {
    const data = this.data;
    return this.valueLength < 0 ? null : data.toString(encoding, this.valueOffset, this.valueOffset + this.valueLength);
  }

  /**
   * The key of the header header(i) moved to, as text (UTF-8). Keys repeat from record to record,
   * so a short key seen recently is the same string again, made once (the table `headers` uses too).
   */
  headerKeyString(): string {
    return headerKey(this.data, this.headerKeyOffset, this.headerKeyLength);
  }

  /** The headers as objects, in order (a new array on each call). */
  get headers(): RecordHeader[] {
    return this.wire().headers;
  }

  /** The record decoded into the shared scratch view (synchronous use only). */
  private wire(): RecordView {
    this.batch.readRecordAt(this.position, scratch);
    return scratch;
  }

  /**
   * Moves to the header at `index` (0 .. headerCount - 1) and sets headerKeyOffset/headerKeyLength
   * and headerValueOffset/headerValueLength: in order (0, 1, 2, ...) each step is a few byte reads;
   * any other order walks from the first header. Allocates nothing.
   */
  header(index: number): void {
    if (!(index >= 0 && index < this.headerCount)) throw new RangeError(`header ${index} of a record with ${this.headerCount}`);
    const data = this.data;
    if (this.walkRecord !== this.position || this.walkIndex >= index) {
      this.walkRecord = this.position;
      this.walkIndex = -1;
      this.walkNext = this.headersOffset;
    }
    // The cursor's decoder checked every header's lengths already: plain varint reads here.
    let p = this.walkNext;
    while (this.walkIndex < index) {
      let u = 0;
      for (let shift = 0; ; shift += 7) {
        const b = data[p++]!;
        u |= (b & 0x7f) << shift;
        if (b < 0x80) break;
      }
      this.headerKeyLength = (u >>> 1) ^ -(u & 1);
      this.headerKeyOffset = p;
      p += this.headerKeyLength;
      u = 0;
      for (let shift = 0; ; shift += 7) {
        const b = data[p++]!;
        u |= (b & 0x7f) << shift;
        if (b < 0x80) break;
      }
      const valueLength = (u >>> 1) ^ -(u & 1);
      this.headerValueLength = valueLength;
      this.headerValueOffset = valueLength < 0 ? -1 : p;
      if (valueLength > 0) p += valueLength;
      this.walkIndex++;
    }
    this.walkNext = p;
  }
}

/**
 * A cursor over a ConsumerBatch's records (ConsumerBatch.cursor()): next() returns the cursor's one
 * CursorRecord moved to the next record, or null after the last. Nothing is allocated per record,
 * and nothing per batch when the cursor is reused (batch.cursor(previous)).
 */
export class BatchCursor {
  /** The one record object next() returns. */
  readonly record = new CursorRecord();
  private owner: CursorOwner | null = null;
  private spans: readonly RecordSpan[] = NO_SPANS;
  private list: readonly ConsumerRecord[] | null = null;
  /** The next span (or the next record of `list`). */
  private next_ = 0;
  private wire: RecordBatch | null = null;
  /** Records left in the current span, where the next starts, and its index in its wire batch. */
  private left = 0;
  private at = 0;
  private index = 0;
  /** The current span ends its wire batch: nothing may follow its last record. */
  private ends = false;
  /** The current span was placed by its index: each record's offsetDelta must be its index. */
  private placed = false;

  /** @internal See ConsumerBatch.cursor(). */
  reset(owner: CursorOwner, spans: RecordSpans | null, list: readonly ConsumerRecord[] | null): void {
    this.owner = owner;
    this.spans = spans === null ? NO_SPANS : spans.spans;
    this.list = list;
    this.next_ = 0;
    this.wire = null;
    this.left = 0;
    this.record.topic = owner.topic;
    this.record.partition = owner.partition;
  }

  /** The next record (always the same object, moved along), or null after the last one. */
  next(): CursorRecord | null {
    const owner = this.owner;
    if (owner === null) return null;
    if (this.left === 0 && !this.nextSpan()) return null;
    const wire = this.wire!;
    if (owner.isReleased) throw new RecordReleasedError(wire);
    const rec = this.record;
    try {
      const index = this.index++;
      if (this.at < 0) this.at = wire.recordStart(index);
      this.at = wire.readRecordAt(this.at, rec, index);
      if (this.placed && rec.offsetDelta !== index) throw notConsecutive(wire, index, rec.offsetDelta);
      rec.offsetNumber = wire.baseOffsetNumber + rec.offsetDelta;
      const t = wire.timestampType === 'LogAppendTime' ? wire.maxTimestampOrNaN : wire.baseTimestampOrNaN + rec.timestampDelta;
      rec.timestamp = Number.isSafeInteger(t) ? t : Number.NaN;
      if (--this.left === 0) {
        // A span that does not end its wire batch ends where the batch's next part starts.
        if (this.list === null && !this.ends) wire.noteRecordStart(this.index, this.at);
        else if (this.ends && this.at !== wire.dataEnd) throw new Error(`${wire.dataEnd - this.at} bytes after the last of ${wire.recordCount} records`);
      }
    } catch (err) {
      if (err instanceof RecordReleasedError) throw err;
      throw new CorruptRecordError(owner.topic, owner.partition, wire.baseOffset, err);
    }
    return rec;
  }

  /** Moves to the next span with records (or the next record of a list); false at the end. */
  private nextSpan(): boolean {
    const list = this.list;
    if (list !== null) {
      if (this.next_ >= list.length) return false;
      const r = list[this.next_++]!;
      this.wire = r.wireBatch;
      this.at = r.position;
      this.index = 0;
      this.left = 1;
      this.ends = false;
      this.placed = false;
      return true;
    }
    while (this.next_ < this.spans.length) {
      const span = this.spans[this.next_++]!;
      if (span.count === 0) continue;
      this.wire = span.batch;
      // -1 for a part placed by its index: found by next(), where errors are reported as corrupt records.
      this.at = span.position;
      this.index = span.index;
      this.left = span.count;
      this.ends = span.index + span.count === span.batch.recordCount;
      this.placed = span.position < 0;
      return true;
    }
    return false;
  }
}
