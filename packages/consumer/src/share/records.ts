import { inspect, type InspectOptionsStylized } from 'node:util';
import type { RecordView } from '@kwire/protocol';
import { inspectAs } from '../record-json.js';
import { BatchCursor, ConsumerRecord, type RecordContext } from '../records/index.js';

/** How the application settles a record it was given (KIP-932's acknowledge types). */
export type AcknowledgeType = 'accept' | 'release' | 'reject' | 'renew';

/** The wire values: 0 gap (no record at the offset), 1 accept, 2 release, 3 reject, 4 renew. */
export const ACK = { gap: 0, accept: 1, release: 2, reject: 3, renew: 4 } as const;
export const ACK_TYPES: Readonly<Record<AcknowledgeType, number>> = { accept: ACK.accept, release: ACK.release, reject: ACK.reject, renew: ACK.renew };

/** Slots of Acquisition.types that are not acknowledge types. */
export const PENDING = -1; // acquired, not yet settled
export const NOT_ACQUIRED = -2; // inside the span but acquired by someone else, or never
export const SENT = -3; // settled and sent (or dropped because its lock expired)

/**
 * One partition's records acquired by one ShareFetch response (KIP-932's acquired records; Java's
 * ShareInFlightBatch): the span of offsets from the first to the last acquired one, with one slot
 * per offset holding its state (a number, so a thousand records cost a kilobyte and no object
 * each). Records point at their acquisition; settling a record writes its slot; the share fetcher
 * collects settled slots into acknowledgement batches.
 */
export class Acquisition {
  readonly types: Int8Array;
  /** Slots still PENDING. */
  pending = 0;
  /** Slots settled and waiting to be sent. */
  settled = 0;
  /** Where the acquisition lock ends (ms since the epoch); acknowledging after it is pointless. */
  deadline: number;

  constructor(
    readonly key: string,
    readonly topic: string,
    readonly topicId: string,
    readonly partition: number,
    readonly first: bigint,
    span: number,
    deadline: number,
    private readonly onSettled: (a: Acquisition) => void,
  ) {
    this.types = new Int8Array(span).fill(NOT_ACQUIRED);
    this.deadline = deadline;
  }

  /** Marks the offset at index `i` of the span (first + i) acquired. */
  acquireAt(i: number): void {
    if (this.types[i] === NOT_ACQUIRED) {
      this.types[i] = PENDING;
      this.pending++;
    }
  }

  isPending(offset: bigint): boolean {
    const i = Number(offset - this.first);
    return i >= 0 && i < this.types.length && this.types[i] === PENDING;
  }

  /** Settles one acquired offset; false when it was not pending (settled before, or never acquired). */
  settle(offset: bigint, type: number): boolean {
    const i = Number(offset - this.first);
    if (i < 0 || i >= this.types.length || this.types[i] !== PENDING) return false;
    this.types[i] = type;
    this.pending--;
    this.settled++;
    this.onSettled(this);
    return true;
  }

  /** Every offset still pending gets `type` (release on close, accept on commit in implicit mode). */
  settleAll(type: number): number {
    let n = 0;
    for (let i = 0; i < this.types.length; i++) {
      if (this.types[i] === PENDING) {
        this.types[i] = type;
        n++;
      }
    }
    if (n) {
      this.pending -= n;
      this.settled += n;
      this.onSettled(this);
    }
    return n;
  }

  /** Nothing left to do with it: every slot sent or never acquired. */
  get done(): boolean {
    return this.pending === 0 && this.settled === 0;
  }
}

/** A record of a share group: delivered to this member, to be acknowledged. */
export class ShareRecord<K = unknown, V = unknown> extends ConsumerRecord<K, V> {
  /** @internal Made by the share fetcher. */
  constructor(
    wire: RecordView,
    context: RecordContext,
    /** How many times the broker has handed this record out, this time included (1 the first time). */
    readonly deliveryCount: number,
    /** @internal The acquisition the record is part of, which its acknowledgement settles. */
    readonly acquisition: Acquisition,
  ) {
    super(wire.batch, context, wire.position, wire.offsetDelta, wire.valueOffset, wire.valueLength);
  }

  /** No longer to be acknowledged by this member: acknowledged already, or not held any more. */
  get acknowledged(): boolean {
    return !this.acquisition.isPending(this.offset);
  }
}

/**
 * The batches a share consumer delivers: a run of one partition's acquired records. Records are
 * acknowledged one by one (ShareConsumer.acknowledge, or accepted when the loop moves on), so a
 * share batch has no commit point of its own: nothing to mark processed or give back (as a
 * ConsumerBatch has), only its memory to release, under the same lifetime rule as ConsumerRecord.
 */
export class ShareBatch<K = unknown, V = unknown> implements Iterable<ShareRecord<K, V>> {
  /** The consumer's own hold plus one per retain(): the records' memory goes when the last is let go. */
  private holds = 1;
  /** The offsets of the first and last record, and the one after the last (read once: see toJSON). */
  readonly firstOffset: bigint;
  readonly lastOffset: bigint;
  readonly nextOffset: bigint;

  /** @internal Made by the share fetcher; `onRelease` lets go of the records' memory. */
  constructor(
    readonly topic: string,
    readonly partition: number,
    /** At least one. */
    readonly records: readonly ShareRecord<K, V>[],
    private readonly onRelease: () => void,
  ) {
    this.firstOffset = records[0]!.offset;
    this.lastOffset = records[records.length - 1]!.offset;
    this.nextOffset = this.lastOffset + 1n;
  }

  /** How many records the batch holds. */
  get count(): number {
    return this.records.length;
  }

  [Symbol.iterator](): Iterator<ShareRecord<K, V>> {
    return this.records[Symbol.iterator]();
  }

  /** A cursor over the records that allocates nothing per record (see ConsumerBatch.cursor()). */
  cursor(reuse?: BatchCursor): BatchCursor {
    const c = reuse ?? new BatchCursor();
    c.reset(this, null, this.records);
    return c;
  }

  /** Keeps the batch (and its records) alive past the point where it would be released. */
  retain(): this {
    if (this.holds > 0) this.holds++;
    return this;
  }

  /** Lets the batch go: the last release (one per retain, plus the consumer's own) frees it. */
  release(): void {
    if (this.holds > 0 && --this.holds === 0) this.onRelease();
  }

  get isReleased(): boolean {
    return this.holds === 0;
  }

  /** What JSON.stringify(batch) writes: where the batch is and how many records, not their bytes (offsets as decimal strings). */
  toJSON(): { topic: string; partition: number; count: number; firstOffset: string; lastOffset: string; nextOffset: string; released?: true } {
    return {
      topic: this.topic,
      partition: this.partition,
      count: this.count,
      firstOffset: this.firstOffset.toString(),
      lastOffset: this.lastOffset.toString(),
      nextOffset: this.nextOffset.toString(),
      ...(this.holds === 0 ? { released: true as const } : {}),
    };
  }

  /** What util.inspect and console.log show: the batch's place, offsets and size, not its records' bytes. */
  [inspect.custom](depth: number | null, options: InspectOptionsStylized): string {
    const fields: Record<string, unknown> = {
      topic: this.topic,
      partition: this.partition,
      count: this.count,
      firstOffset: this.firstOffset,
      lastOffset: this.lastOffset,
      nextOffset: this.nextOffset,
    };
    if (this.holds === 0) fields.released = true;
    return inspectAs(this.constructor.name, `${this.topic}-${this.partition} ${this.count} records to ${this.nextOffset}`, fields, depth, options);
  }
}
