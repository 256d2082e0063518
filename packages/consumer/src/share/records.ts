import type { RecordView } from '@kwire/protocol';
import { ConsumedRecord, ConsumerBatch, type RecordContext } from '../records.js';

/** How the application settles a record it was given (KIP-932's acknowledge types). */
export type AcknowledgeType = 'accept' | 'release' | 'reject' | 'renew';

/** The wire values: 0 gap (no record at the offset), 1 accept, 2 release, 3 reject, 4 renew. */
export const ACK = { gap: 0, accept: 1, release: 2, reject: 3, renew: 4 } as const;
export const ACK_TYPES: Readonly<Record<AcknowledgeType, number>> = { accept: ACK.accept, release: ACK.release, reject: ACK.reject, renew: ACK.renew };

/** Slots of Delivery.types that are not acknowledge types. */
export const PENDING = -1; // acquired, not yet settled
export const NOT_ACQUIRED = -2; // inside the span but acquired by someone else, or never
export const SENT = -3; // settled and sent (or dropped because its lock expired)

/**
 * One partition's acquired records from one ShareFetch response: the span of offsets from the
 * first to the last acquired one, with one slot per offset holding its state (a number, so a
 * thousand records cost a kilobyte and no object each). Records point at their delivery; settling
 * a record writes its slot; the session collects settled slots into acknowledgement batches.
 */
export class Delivery {
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
    private readonly onSettled: (d: Delivery) => void,
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
export class ShareRecord<K = unknown, V = unknown> extends ConsumedRecord<K, V> {
  constructor(
    wire: RecordView,
    context: RecordContext,
    /** How many times the broker has handed this record out, this time included (1 the first time). */
    readonly deliveryCount: number,
    /** @internal */
    readonly delivery: Delivery,
  ) {
    super(wire.batch, context, wire.position, wire.offsetDelta, wire.valueOffset, wire.valueLength);
  }

  /** Still to be acknowledged by this member. */
  get acknowledged(): boolean {
    return !this.delivery.isPending(this.offset);
  }
}

/** The batches a share consumer delivers: a run of one partition's acquired records. */
export class ShareBatch<K = unknown, V = unknown> extends ConsumerBatch<K, V> {
  override get records(): readonly ShareRecord<K, V>[] {
    return super.records as readonly ShareRecord<K, V>[];
  }

  override [Symbol.iterator](): Iterator<ShareRecord<K, V>> {
    return this.records[Symbol.iterator]();
  }
}
