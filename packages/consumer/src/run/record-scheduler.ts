import { loopClock, yieldToLoop } from '../loop-clock.js';
import type { ConsumerBatch, ConsumerRecord } from '../records/index.js';
import type { MessageStream } from '../streams.js';
import type { FailureDecision, InFlightRecord, ProcessingFailure, RunContext, RunHandle, RunOptions, RunPartition } from './types.js';
import { IdleWaiter } from './idle-waiter.js';
import { RunStats } from './run-stats.js';
import { retryWait } from './types.js';

/** A delivered batch in the scheduler's hands: which of its records are finished. */
class Held {
  readonly records: readonly ConsumerRecord[];
  /** 1 where the record at that index is finished. */
  readonly finished: Uint8Array;
  /** The first unfinished record: everything before it is finished (and counted on the batch). */
  head = 0;

  constructor(readonly batch: ConsumerBatch) {
    this.records = batch.records as readonly ConsumerRecord[];
    this.finished = new Uint8Array(this.records.length);
  }
}

/** Records of one key (ordering 'key') waiting for the one being handled. */
class Lane {
  readonly waiting: Item[] = [];
  next = 0;
}

/** One record on its way through the scheduler. */
class Item {
  attempts = 0;
  /** When it started waiting behind its key (performance.now()), or 0 when it did not. */
  since = 0;
  retryTimer: NodeJS.Timeout | undefined;
  constructor(
    readonly work: PartitionWork,
    public held: Held,
    public index: number,
    /** The lane it belongs to (ordering 'key'), or undefined. */
    readonly lane: string | null | undefined,
  ) {}
  get record(): ConsumerRecord {
    return this.held.records[this.index]!;
  }
}

/**
 * One partition, as one run of the scheduler sees it while the partition stays the same (one
 * PartitionState, one generation): its batches in offset order, the next record to dispatch, and
 * what is under way. Draining: nothing more starts; once nothing is running its batches go back
 * (finished records counted, the rest delivered again).
 */
class PartitionWork {
  readonly batches: Held[] = [];
  /** The next record to dispatch: batches[at].records[index]. */
  at = 0;
  index = 0;
  /** Records started and not settled (retries waiting for their timer excluded). */
  running = 0;
  /** Records waiting for a retry timer. */
  readonly retrying = new Set<Item>();
  /** Records taken and not dispatched yet. */
  undispatched = 0;
  /** Ordering 'partition': a record of it is being handled. */
  busy = false;
  /** Ordering 'partition': the one item of the partition, reused record after record (one at a time). */
  item: Item | undefined;
  readonly lanes = new Map<string | null, Lane>();
  draining = false;

  constructor(
    readonly state: RunPartition,
    readonly generation: number,
  ) {}

  /** Whether the partition may go on: not paused, revoked, sought, moved or removed. */
  get live(): boolean {
    const s = this.state;
    return !this.draining && !s.paused && !s.revoking && s.generation === this.generation;
  }

  get hasUndispatched(): boolean {
    const b = this.batches[this.at];
    return b !== undefined && (this.index < b.records.length || this.at + 1 < this.batches.length);
  }

  /** Moves `at`/`index` to the next undispatched record if the current batch is used up. */
  normalize(): void {
    while (this.at < this.batches.length && this.index >= this.batches[this.at]!.records.length) {
      this.at++;
      this.index = 0;
    }
  }

  /** Offsets from the first unfinished record to the next undispatched one (numbers: exact below 2^53). */
  span(): number {
    this.normalize();
    const first = this.batches[0];
    const next = this.batches[this.at];
    if (first === undefined || next === undefined || this.index >= next.records.length) return 0;
    return next.records[this.index]!.offsetNumber - first.records[first.head]!.offsetNumber;
  }
}

const DEFAULT_MAX_CONCURRENCY = 64;

/**
 * run() with eachMessage: records of every stream handled concurrently, at most `maxConcurrency`
 * at once, in the order `ordering` asks for ('key': one record of a key at a time per partition, in
 * offset order; 'partition': one record of a partition at a time; 'unordered'). A record is
 * finished when its callback resolves; each partition's commit point is the end of its contiguous
 * run of finished records (the batch's countFinished), and records finished beyond it are told to
 * the partition state (finishedAhead), which commits carry as metadata and which are never handed
 * to the callback again. A partition whose unfinished span reaches `maxSpan` takes no more records
 * until its oldest finishes.
 *
 * Batches are taken from the streams only while the records in hand cannot fill the free slots;
 * what is held stays within the consumer's buffered-bytes bound (held batches count in it).
 */
export class RecordScheduler<K, V> implements RunHandle {
  readonly done: Promise<void>;
  private settle: { resolve: () => void; reject: (err: unknown) => void } | undefined;
  private stopped = false;
  private readonly maxConcurrency: number;
  private readonly ordering: 'key' | 'partition' | 'unordered';
  private readonly maxSpan: number;
  /** Records in hand per partition before its next batch is taken (see accept). */
  private readonly perPartitionTarget: number;
  private inFlight = 0;
  private readonly ready: Item[] = [];
  private readyHead = 0;
  private readonly works = new Map<RunPartition, PartitionWork>();
  /** Works being drained after their partition moved on (a newer work may have its state's key). */
  private readonly draining = new Set<PartitionWork>();
  /** Round-robin over works with records to dispatch. */
  private rr: PartitionWork[] = [];
  private rrAt = 0;
  /** Stream readers waiting to be asked for another batch. */
  private hungerWaiters: (() => void)[] = [];
  /** What each slot is handling (by slot number; undefined between records), for stop()'s report. */
  private readonly slots: (Item | undefined)[] = [];
  private readonly freeSlots: number[] = [];
  private sweepTimer: NodeJS.Timeout | undefined;
  private readonly idle = new IdleWaiter();
  readonly stats: RunStats;

  constructor(
    private readonly streams: readonly MessageStream[],
    private readonly options: RunOptions<K, V>,
    private readonly context: RunContext,
  ) {
    this.maxConcurrency = options.maxConcurrency ?? DEFAULT_MAX_CONCURRENCY;
    this.ordering = options.ordering ?? 'partition';
    this.maxSpan = context.maxSpan;
    this.perPartitionTarget = this.ordering === 'partition' ? 1 : this.maxConcurrency;
    this.stats = context.stats ?? new RunStats();
    this.stats.started(this, this.maxConcurrency);
    this.done = new Promise<void>((resolve, reject) => {
      this.settle = { resolve, reject };
    });
    // Whether a partition was paused, revoked, sought or lost is looked at when its records are
    // dispatched and when they finish; this catches a partition with nothing under way.
    this.sweepTimer = setInterval(() => this.sweep(), 20);
    this.sweepTimer.unref();
    Promise.all(streams.map((s) => this.read(s))).then(
      () => this.end(),
      (err: unknown) => this.end(err ?? new Error('a run() stream reader failed')),
    );
  }

  get inFlightRecords(): number {
    return this.inFlight;
  }

  /** Unfinished records per partition (from its first unfinished to its last dispatched record). */
  spans(): { topic: string; partition: number; span: number }[] {
    const out: { topic: string; partition: number; span: number }[] = [];
    for (const w of this.works.values()) {
      const first = w.batches[0];
      if (first === undefined) continue;
      out.push({ topic: first.batch.topic, partition: first.batch.partition, span: w.span() });
    }
    return out;
  }

  private end(err?: unknown): void {
    if (!this.stopped) this.stopAll();
    const s = this.settle;
    this.settle = undefined;
    if (s === undefined) return;
    if (err === undefined) s.resolve();
    else s.reject(err);
  }

  /** Nothing more starts; every partition drains. */
  private stopAll(): void {
    this.stopped = true;
    clearInterval(this.sweepTimer);
    for (const w of [...this.works.values()]) this.drain(w);
    this.feedHunger();
    this.stats.stopped(this);
  }

  // ------------------------------------------------------------------ input

  /** One stream's reader: takes a batch whenever the scheduler runs short of records to start. */
  private async read(stream: MessageStream): Promise<void> {
    for (;;) {
      await this.hunger();
      if (this.stopped) return;
      const batch = (await stream.takeWhere(this.accept)) as ConsumerBatch | null;
      if (batch === null) return;
      if (this.stopped) {
        batch.giveBack();
        return;
      }
      this.admit(batch);
    }
  }

  /** Resolves when the scheduler has a free slot that the records in hand may not fill. */
  private hunger(): Promise<void> {
    if (this.stopped || this.wantsMore()) return Promise.resolve();
    return new Promise((resolve) => this.hungerWaiters.push(resolve));
  }

  private wantsMore(): boolean {
    return this.inFlight + (this.ready.length - this.readyHead) < this.maxConcurrency;
  }

  private feedHunger(): void {
    if (this.hungerWaiters.length === 0) return;
    if (!this.stopped && !this.wantsMore()) return;
    for (const w of this.hungerWaiters.splice(0)) w();
  }

  /**
   * Whether a partition's next batch is taken now: not while it has records enough to keep its
   * share of the slots busy (one with ordering 'partition'), nor while its unfinished span is at
   * the bound. Batches of other partitions are taken meanwhile (the stream skips this one).
   */
  private readonly accept = (state: RunPartition): boolean => {
    const w = this.works.get(state);
    if (w === undefined) return true;
    return w.undispatched < this.perPartitionTarget && w.span() < this.maxSpan;
  };

  /** A partition went below its target: readers waiting in take() look again. */
  private wakeStreams(): void {
    for (const s of this.streams) s.wake();
  }

  private admit(batch: ConsumerBatch): void {
    const state = this.context.partition(batch.topic, batch.partition);
    if (state === undefined) {
      batch.giveBack();
      return;
    }
    let work = this.works.get(state);
    if (work !== undefined && work.generation !== state.generation) {
      this.drain(work);
      work = undefined;
    }
    if (work === undefined) {
      work = new PartitionWork(state, state.generation);
      this.works.set(state, work);
    }
    let held: Held;
    try {
      held = new Held(batch);
    } catch (err) {
      // Corrupt records, found when the records are made: the batch goes back (fetched again, and
      // failing again until the application seeks), and the run ends with the error as today.
      batch.giveBack();
      this.end(err);
      return;
    }
    if (held.records.length === 0) {
      batch.release();
      return;
    }
    if (!work.hasUndispatched) {
      work.at = work.batches.length;
      work.index = 0;
    }
    work.batches.push(held);
    work.undispatched += held.records.length;
    if (!this.rr.includes(work)) this.rr.push(work);
    this.pump();
  }

  // --------------------------------------------------------------- dispatch

  /**
   * Starts slots while there are free ones and records that may start. A slot is an async loop
   * that handles one record after another (one promise per slot, not per record): after each, the
   * record's key (or partition) goes on in the same slot, else the slot takes whatever may start.
   */
  private pump(): void {
    while (!this.stopped && this.inFlight < this.maxConcurrency) {
      const item = this.nextReady() ?? this.dispatchNext();
      if (item === undefined) break;
      this.inFlight++;
      void this.slot(item, this.freeSlots.pop() ?? this.slots.length);
    }
    this.feedHunger();
  }

  /**
   * Whether w's records may start now: its partition goes on (PartitionWork.live) and the group
   * session has not lapsed (RunContext.mayStart). A record that may not start is given back.
   */
  private startable(w: PartitionWork): boolean {
    return w.live && this.context.mayStart();
  }

  private nextReady(): Item | undefined {
    while (this.readyHead < this.ready.length) {
      const item = this.ready[this.readyHead]!;
      this.ready[this.readyHead++] = undefined as unknown as Item;
      if (this.readyHead > 1024 && this.readyHead * 2 > this.ready.length) {
        this.ready.splice(0, this.readyHead);
        this.readyHead = 0;
      }
      if (this.startable(item.work)) return item;
      // Its partition moved on (or the session lapsed): the record does not start (its batch goes back with the rest).
      this.notStarted(item);
    }
    return undefined;
  }

  /** Dispatches records of the partitions in turn until one may start now; undefined when none may. */
  private dispatchNext(): Item | undefined {
    for (let tries = this.rr.length; tries > 0 && this.rr.length > 0; tries--) {
      if (this.rrAt >= this.rr.length) this.rrAt = 0;
      const w = this.rr[this.rrAt]!;
      if (!w.hasUndispatched) {
        this.rr.splice(this.rrAt, 1);
        continue;
      }
      if (!this.startable(w)) {
        this.drain(w);
        continue;
      }
      if ((this.ordering === 'partition' && w.busy) || w.span() >= this.maxSpan) {
        this.rrAt++;
        continue;
      }
      const item = this.dispatchFrom(w);
      // Ordering 'key' dispatches into lanes: the partition's next record may start even when
      // this one waits for its key, so the same partition is tried again before moving on.
      if (item !== undefined) {
        this.rrAt++;
        return item;
      }
      tries++;
    }
    return undefined;
  }

  /** Dispatches w's next record: the item if it may start now, undefined if it waits for its key (or was finished already). */
  private dispatchFrom(w: PartitionWork): Item | undefined {
    w.normalize();
    const held = w.batches[w.at]!;
    const index = w.index++;
    if (--w.undispatched === this.perPartitionTarget - 1) this.wakeStreams();
    const record = held.records[index]!;
    if (w.state.hasFinishedAhead && w.state.isFinishedAhead(record.offset)) {
      // Finished before (as the commit metadata or an earlier delivery says): not handled again.
      this.stats.alreadyFinished++;
      this.markFinished(w, held, index, false);
      return undefined;
    }
    if (this.ordering === 'key') {
      const key = record.keyBinary();
      const item = new Item(w, held, index, key);
      const lane = w.lanes.get(key);
      if (lane !== undefined) {
        item.since = performance.now();
        lane.waiting.push(item);
        return undefined;
      }
      w.lanes.set(key, new Lane());
      return item;
    }
    if (this.ordering === 'partition') {
      w.busy = true;
      const item = w.item;
      if (item === undefined) return (w.item = new Item(w, held, index, undefined));
      item.held = held;
      item.index = index;
      item.attempts = 0;
      return item;
    }
    return new Item(w, held, index, undefined);
  }

  /** One slot: handles `item`, then the records that follow it here, until none may start. */
  private async slot(first: Item, n: number): Promise<void> {
    let item: Item | undefined = first;
    // Whether item passed startable() in this synchronous stretch (nextReady and dispatchNext ask
    // it; pump gave `first` that way): nothing can have changed since, so it is not asked again.
    // The session check reads the clock, once per record at most.
    let checked = true;
    let handled = 0;
    try {
      while (item !== undefined) {
        const w = item.work;
        if (!(checked ? w.live : this.startable(w))) {
          // Paused, sought, revoked or lost since it was dispatched, or the session lapsed: it does not start.
          this.notStarted(item);
          item = this.stopped ? undefined : (this.nextReady() ?? this.dispatchNext());
          checked = true;
          continue;
        }
        w.running++;
        this.slots[n] = item;
        if (item.since !== 0 && item.attempts === 0) this.stats.waited(performance.now() - item.since);
        let finished = true;
        try {
          const record = item.record;
          await this.options.eachMessage!({ topic: record.topic, partition: record.partition, message: record as ConsumerRecord<K, V> });
        } catch (err) {
          finished = await this.failed(item, err);
        }
        w.running--;
        this.slots[n] = undefined;
        let next: Item | undefined;
        if (finished) {
          this.markFinished(w, item.held, item.index, true);
          next = this.laneNext(item);
        } else if (w.draining) this.drainIfIdle(w);
        if (this.stopped) {
          if (next !== undefined) this.notStarted(next);
          return;
        }
        // A record of the same key or partition (laneNext) was dispatched before and is asked at the top.
        checked = next === undefined;
        if (next === undefined) next = this.nextReady() ?? this.dispatchNext();
        this.feedHunger();
        // Callbacks that settle at once would otherwise keep the event loop from its timers and
        // sockets. (Looked at every 16 records: once due, every slot steps out at its next look.)
        if (next !== undefined && (++handled & 15) === 0 && loopClock.due(this.context.yieldIntervalMs)) {
          await yieldToLoop();
          if (this.stopped || !this.startable(next.work)) {
            this.notStarted(next);
            if (this.stopped) return;
            next = this.nextReady() ?? this.dispatchNext();
          }
          checked = true;
        }
        item = next;
      }
    } finally {
      this.slots[n] = undefined;
      this.freeSlots.push(n);
      this.inFlight--;
      if (this.inFlight === 0) this.idle.idle();
      // A slot freed: records waiting for one (a retry that came due) may start.
      if (!this.stopped && this.readyHead < this.ready.length) this.pump();
      else this.feedHunger();
    }
  }

  /**
   * The record's key (or partition) may go on: its next record, to be handled in the same slot,
   * or undefined. (Ordering 'partition': the partition's next record, without a turn through the
   * other partitions, which have their own slots.)
   */
  private laneNext(item: Item): Item | undefined {
    const w = item.work;
    let next: Item | undefined;
    if (this.ordering === 'partition') {
      w.busy = false;
      while (next === undefined && !this.stopped && w.live && w.hasUndispatched) next = this.dispatchFrom(w);
    } else if (this.ordering === 'key') {
      const lane = w.lanes.get(item.lane!);
      if (lane !== undefined) {
        if (lane.next < lane.waiting.length) {
          next = lane.waiting[lane.next]!;
          lane.waiting[lane.next++] = undefined as unknown as Item;
        } else w.lanes.delete(item.lane!);
      }
    }
    if (w.draining) this.drainIfIdle(w);
    return next;
  }

  /** The lane (key or partition) of an item that will not be handled here is free again; its next record waits for a slot. */
  private releaseLane(item: Item): void {
    const next = this.laneNext(item);
    if (next !== undefined) this.ready.push(next);
  }

  /** A record is finished: its batch's finished prefix moves, or the partition state hears of it (out of order). */
  private markFinished(w: PartitionWork, held: Held, index: number, handled: boolean): void {
    held.finished[index] = 1;
    if (handled) this.stats.finished++;
    if (held !== w.batches[0] || index !== held.head) {
      this.context.finishedAhead(w.state, held.records[index]!.offset);
      if (held !== w.batches[0]) return;
    }
    const finished = held.finished;
    const n = finished.length;
    let head = held.head;
    while (head < n && finished[head] === 1) head++;
    if (head === held.head) return;
    held.head = head;
    held.batch.countFinished(head);
    // Batches finished in full leave, in order; the next one's finished prefix may move in turn.
    while (w.batches.length > 0 && w.batches[0]!.head === w.batches[0]!.records.length) {
      const done = w.batches.shift()!;
      done.batch.release();
      w.at--;
      const next = w.batches[0];
      if (next === undefined) break;
      let h = next.head;
      while (h < next.finished.length && next.finished[h] === 1) h++;
      if (h !== next.head) {
        next.head = h;
        next.batch.countFinished(h);
      }
    }
    if (w.at < 0) {
      w.at = 0;
      w.index = 0;
    }
    if (w.batches.length === 0) this.forget(w);
  }

  private forget(w: PartitionWork): void {
    this.unlist(w);
    this.draining.delete(w);
  }

  /** w is no longer its partition's work, nor in the rotation of works with records to dispatch. */
  private unlist(w: PartitionWork): void {
    if (this.works.get(w.state) === w) this.works.delete(w.state);
    const i = this.rr.indexOf(w);
    if (i >= 0) {
      this.rr.splice(i, 1);
      if (this.rrAt > i) this.rrAt--;
    }
  }

  // --------------------------------------------------------------- failures

  /**
   * The callback failed on `item`: what onFailure decides. Resolves true when the record counts as
   * finished ('skip', once onSkip resolved); false otherwise: a retry is scheduled (its key or
   * partition waits for it), or the run stops ('stop', or an onFailure or onSkip that throws).
   * The record keeps its slot meanwhile.
   */
  private async failed(item: Item, err: unknown): Promise<boolean> {
    item.attempts++;
    const record = item.record;
    const failure: ProcessingFailure = { topic: record.topic, partition: record.partition, offset: record.offset, attempts: item.attempts };
    const policy = this.options.onFailure ?? 'retry';
    let decision: FailureDecision;
    try {
      decision = typeof policy === 'function' ? await policy(err, failure) : policy;
    } catch (policyErr) {
      this.stopAt(item, policyErr);
      return false;
    }
    if (decision === 'skip') {
      try {
        await this.options.onSkip?.(record as ConsumerRecord<K, V>, err);
      } catch (hookErr) {
        // Neither handled nor set aside: the record stays unfinished, and the run stops.
        this.stopAt(item, hookErr);
        return false;
      }
      this.stats.skipped++;
      return true;
    }
    if (decision !== 'retry' || this.stopped) {
      // 'stop': the record stays unfinished, so no commit passes it.
      this.stopAt(item, decision === 'retry' || decision === 'stop' ? err : new TypeError(`onFailure returned ${String(decision)}: expected 'retry', 'stop' or 'skip'`));
      return false;
    }
    this.retryLater(item, err, failure);
    return false;
  }

  private stopAt(item: Item, err: unknown): void {
    this.fail(err);
    this.notStarted(item);
  }

  /** Handled again after a backoff; its key (or partition) waits for it, everything else goes on. */
  private retryLater(item: Item, err: unknown, failure: ProcessingFailure): void {
    const w = item.work;
    const waitMs = retryWait(this.context, item.attempts);
    this.stats.retried++;
    this.context.logger.warn('processing failed: the record is handled again after a backoff (other keys go on meanwhile)', {
      topic: failure.topic,
      partition: failure.partition,
      offset: failure.offset.toString(),
      attempts: failure.attempts,
      retryInMs: waitMs,
      error: (err as Error)?.message ?? String(err),
    });
    w.retrying.add(item);
    item.retryTimer = setTimeout(() => {
      item.retryTimer = undefined;
      w.retrying.delete(item);
      if (!this.startable(w)) {
        this.releaseLane(item);
        this.notStarted(item);
        return;
      }
      // It goes first, ahead of records waiting for a slot.
      this.ready.splice(this.readyHead, 0, item);
      this.pump();
    }, waitMs);
  }

  /** run() rejects with `err`; nothing more starts. */
  private fail(err: unknown): void {
    this.end(err);
  }

  // --------------------------------------------------------------- draining

  /** A record that was dispatched but will not be handled in this work: its partition drains. */
  private notStarted(item: Item): void {
    this.drain(item.work);
  }

  /** Nothing more of w starts; once nothing of it runs, its batches go back. */
  private drain(w: PartitionWork): void {
    if (!w.draining) {
      w.draining = true;
      this.unlist(w);
      this.draining.add(w);
      for (const item of w.retrying) clearTimeout(item.retryTimer);
      w.retrying.clear();
      w.lanes.clear();
    }
    this.drainIfIdle(w);
  }

  private drainIfIdle(w: PartitionWork): void {
    if (w.running > 0) return;
    // Finished records are counted on their batches (and beyond the first unfinished one, on the
    // partition state); giving the batches back delivers the partition again from its first
    // unfinished record.
    for (const held of w.batches.splice(0)) held.batch.giveBack();
    this.draining.delete(w);
  }

  private sweep(): void {
    for (const w of [...this.works.values()]) if (!this.startable(w)) this.drain(w);
    if (this.ready.length > this.readyHead || this.rr.length > 0) this.pump();
    else this.feedHunger();
    this.wakeStreams();
  }

  // ------------------------------------------------------------------ stop

  /** close(): nothing more starts; waits up to graceMs for records under way, then reports those still running. */
  async stop(graceMs: number): Promise<InFlightRecord[]> {
    if (!this.stopped) this.stopAll();
    if (this.inFlight > 0 && graceMs > 0) {
      await this.idle.upTo(graceMs);
    }
    const running: InFlightRecord[] = [];
    for (const item of this.slots) {
      if (item === undefined) continue;
      const r = item.record;
      running.push({ topic: r.topic, partition: r.partition, offset: r.offset });
    }
    this.end();
    return running;
  }
}
