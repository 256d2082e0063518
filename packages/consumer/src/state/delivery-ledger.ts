/**
 * Progress the application made that is counted as it goes and written down (as offsets) only when
 * the commit point is read: run()'s eachMessage finishes a record with an integer store, not a
 * bigint and a ledger update per record.
 */
export interface LazyProgress {
  /** Reports what was finished since the last call (through DeliveryLedger.progressed). */
  flushProgress(): void;
}

/**
 * One delivered batch of a partition, from the ledger's point of view: the offsets it covers, how
 * far the application has finished it, and whether it is settled.
 */
export class Delivery {
  /** Finished through here (exclusive): `start` until the application finishes a record of it. */
  done: bigint;
  /** Leader epoch of the batch, committed with `done`. */
  readonly leaderEpoch: number;
  /** No more progress will come: the application finished it, or let it go unfinished. */
  settled = false;
  /** Dropped from the ledger (a seek, or an earlier delivery given back): its outcome is moot. */
  dropped = false;
  /** When it went to the application (performance.now()), and how many records: for metrics. */
  deliveredAt = 0;
  records = 0;
  /** Progress counted but not yet written into `done` (see LazyProgress). */
  lazy: LazyProgress | undefined;

  constructor(
    /** The partition's position when it was delivered (control records before it included). */
    readonly start: bigint,
    /** The offset after it (cut back to `done` when it is given back unfinished). */
    public next: bigint,
    leaderEpoch: number,
  ) {
    this.done = start;
    this.leaderEpoch = leaderEpoch;
  }
}

/**
 * The commit point of one partition: the end of the contiguous prefix of records the application
 * finished. Batches are delivered in offset order; each becomes a Delivery here, and the commit
 * point moves over a delivery only when it is settled and every delivery before it is too. A batch
 * released while an earlier one is still held (retained, or in a callback that has not settled)
 * moves nothing until the earlier one is released; a batch given back unfinished moves the point to
 * its first unfinished record and no further, and the deliveries after it are dropped (the
 * partition is delivered again from there).
 *
 * This is Java's "committed = position" made honest for an asynchronous application: there the
 * position moves when poll() returns, here only when the application says it is done.
 */
export class DeliveryLedger {
  private readonly open: Delivery[] = [];
  private point: bigint | null = null;
  private pointEpoch = -1;
  /**
   * Records beyond the commit point the application finished out of order (run() with
   * maxConcurrency), or that the group's commit metadata said were finished: committed as metadata,
   * and never handed to run() again. Entries the point has passed are pruned when read.
   */
  private readonly ahead = new Set<bigint>();
  /** Bumped when `ahead` changes: commits compare it to know whether the metadata moved. */
  private aheadVersion = 0;

  /** The offset a commit may carry now (null until the partition has a starting offset). */
  get commitPoint(): bigint | null {
    this.flushLazy();
    return this.point;
  }

  get commitPointEpoch(): number {
    this.flushLazy();
    return this.pointEpoch;
  }

  /** Progress on `d` will be reported by `progress` when the commit point is read. */
  progressLater(d: Delivery, progress: LazyProgress): void {
    if (!d.dropped && !d.settled) d.lazy = progress;
  }

  private flushLazy(): void {
    // (A flush moves the point, which takes settled deliveries out of `open`: walk a copy.)
    if (this.open.length > 0 && this.open.some((d) => d.lazy !== undefined)) for (const d of [...this.open]) d.lazy?.flushProgress();
  }

  /** Deliveries not yet settled or not yet passed by the commit point. */
  get openDeliveries(): number {
    return this.open.length;
  }

  /** The partition starts (again) at `offset`: whatever was delivered before no longer counts. */
  restart(offset: bigint, leaderEpoch = -1): void {
    for (const d of this.open) d.dropped = true;
    this.open.length = 0;
    this.point = offset;
    this.pointEpoch = leaderEpoch;
    this.clearAhead();
  }

  /** The partition has no starting offset yet (a reset is under way). */
  clear(): void {
    for (const d of this.open) d.dropped = true;
    this.open.length = 0;
    this.clearAhead();
  }

  private clearAhead(): void {
    if (this.ahead.size === 0) return;
    this.ahead.clear();
    this.aheadVersion++;
  }

  /** A record beyond the commit point was finished (before some record ahead of it). */
  finishedAhead(offset: bigint): void {
    if (this.point !== null && offset < this.point) return;
    const size = this.ahead.size;
    this.ahead.add(offset);
    if (this.ahead.size !== size) this.aheadVersion++;
  }

  /** Whether a record beyond the commit point is already finished (and so not to be handled again). */
  isFinishedAhead(offset: bigint): boolean {
    return this.ahead.size > 0 && this.ahead.has(offset);
  }

  get hasFinishedAhead(): boolean {
    return this.ahead.size > 0;
  }

  /**
   * The records finished beyond the commit point, in offset order, with a version that moves when
   * they change (the point passing some of them included).
   */
  finishedBeyondPoint(): { offsets: bigint[]; version: number } {
    const point = this.commitPoint;
    if (this.ahead.size === 0 || point === null) return { offsets: [], version: this.aheadVersion };
    const offsets: bigint[] = [];
    for (const o of this.ahead) if (o >= point) offsets.push(o);
    if (offsets.length !== this.ahead.size) {
      // Passed by the point: gone for good.
      this.ahead.clear();
      for (const o of offsets) this.ahead.add(o);
      this.aheadVersion++;
    }
    offsets.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return { offsets, version: this.aheadVersion };
  }

  /** A batch covering [start, next) went to the application. */
  delivered(start: bigint, next: bigint, leaderEpoch: number): Delivery {
    const d = new Delivery(start, next, leaderEpoch);
    this.open.push(d);
    return d;
  }

  /**
   * The partition's position moved past records the application never sees (control records,
   * aborted transactions) up to `to`: finished as soon as everything before them is.
   */
  skipped(from: bigint, to: bigint): void {
    if (to <= from) return;
    if (this.open.length === 0) {
      if (this.point === null || to > this.point) this.point = to;
      return;
    }
    const d = this.delivered(from, to, this.open[this.open.length - 1]!.leaderEpoch);
    d.done = to;
    d.settled = true;
  }

  /** The application finished a delivery's records before `offset`. */
  progressed(d: Delivery, offset: bigint): void {
    if (d.dropped || d.settled) return;
    const through = offset > d.next ? d.next : offset;
    if (through <= d.done) return;
    d.done = through;
    this.advance();
  }

  /** The application finished the whole delivery. */
  finished(d: Delivery): void {
    if (d.dropped || d.settled) return;
    d.done = d.next;
    d.settled = true;
    this.advance();
  }

  /**
   * The application let a delivery go with records unfinished (a loop left early, a callback that
   * threw). Returns where the partition must be delivered again from (its first unfinished record),
   * or null when nothing is left to redeliver (it was finished after all, or no longer counts).
   * Every later delivery is dropped: their records come again after this one's.
   */
  abandoned(d: Delivery): bigint | null {
    if (d.dropped || d.settled) return null;
    d.settled = true;
    if (d.done >= d.next) {
      this.advance();
      return null;
    }
    const i = this.open.indexOf(d);
    for (const later of this.open.splice(i + 1)) later.dropped = true;
    // What comes after `done` in this delivery is not finished: its end is where it was finished.
    d.next = d.done;
    this.advance();
    return d.done;
  }

  /**
   * A delivery is cut short: it covers only [start, at) from now on (the records from `at` were not
   * handed over after all). Every later delivery is dropped. Returns whether it was cut.
   */
  cut(d: Delivery, at: bigint): boolean {
    if (d.dropped || d.settled || at >= d.next) return false;
    d.next = at < d.start ? d.start : at;
    if (d.done > d.next) d.done = d.next;
    const i = this.open.indexOf(d);
    for (const later of this.open.splice(i + 1)) later.dropped = true;
    this.advance();
    return true;
  }

  private advance(): void {
    const open = this.open;
    let n = 0;
    while (n < open.length) {
      const d = open[n]!;
      if (this.point === null || d.done > this.point) {
        this.point = d.done;
        this.pointEpoch = d.leaderEpoch;
      }
      if (!d.settled) break;
      n++;
    }
    if (n > 0) open.splice(0, n);
  }
}
