// What the handler-bound family (issue 31) checks and measures in every client, the same way:
// which records a handler started and ended and when, then, once the run is over, per-key order,
// duplicates and the handler's and end-to-end latencies. java/BenchParallel.java applies the same
// rules to the Java parallel-consumer.
//
// The topic (java/HandlerTopic.java) holds records keyed "key-NNNN" whose values begin
// "key-NNNN|seq|", seq counting that key's records from 0: a key lives on one partition, so its
// seq rises with its offsets. Per key, sorted by start time, a record breaks key order when its seq
// is lower than the one before it (out of order) or when it started before the one before it ended
// (overlap): 'key' ordering promises one at a time in offset order. A record started twice is a
// duplicate, counted once and left out of the order check.
//
// Nothing here is per record beyond a few typed-array writes and the value's first 15 bytes read;
// the sorting and the percentiles run after the run.
import { now, type ClientReport, type Run } from './common.js';
import type { HandlerFigures } from '../report/types.js';
import { keyMatches, parseKeySeq } from './handler-settings.js';

export type { HandlerFigures, HeartbeatFigures } from '../report/types.js';

/** A handler client's report: the usual one (CPU, RSS, GC) and the family's figures. */
export type HandlerReport = ClientReport & { handler?: HandlerFigures; skipped?: string };

export interface HandlerCheckOptions {
  /** End offset of each partition (the topic starts at 0). */
  ends: readonly number[];
  /** Stop counting at this many distinct records. */
  records: number;
  keys: number;
  /** Stop this long after the first handler started, even short of `records`. */
  timeLimitMs: number;
  /** Fail when no handler ended for this long. */
  idleMs?: number;
}

export class HandlerCheck {
  private readonly base: Float64Array;
  private readonly startAt: Float64Array;
  private readonly endAt: Float64Array;
  private readonly timestamp: Float64Array;
  private readonly key: Int32Array;
  private readonly seq: Int32Array;
  private readonly started: Uint8Array;
  handled = 0;
  duplicates = 0;
  badKeys = 0;
  tFirst: number | null = null;
  tLast: number | null = null;
  capped = false;
  error: string | undefined;
  done = false;
  private stopAt = Number.POSITIVE_INFINITY;
  private lastProgress = now();
  private readonly timer: NodeJS.Timeout;
  private resolveDone!: () => void;
  /** Resolves when the target was reached, the time limit passed, or the run went idle. */
  readonly finished = new Promise<void>((r) => (this.resolveDone = r));

  constructor(private readonly o: HandlerCheckOptions) {
    this.base = new Float64Array(o.ends.length + 1);
    for (let p = 0; p < o.ends.length; p++) this.base[p + 1] = this.base[p]! + o.ends[p]!;
    const total = this.base[o.ends.length]!;
    this.startAt = new Float64Array(total);
    this.endAt = new Float64Array(total);
    this.timestamp = new Float64Array(total);
    this.key = new Int32Array(total);
    this.seq = new Int32Array(total);
    this.started = new Uint8Array(total);
    // The limit and idleness are checked on a timer too: a run whose handlers stopped coming must end.
    this.timer = setInterval(() => this.tick(), 100);
  }

  private tick(): void {
    if (this.done) return;
    const t = now();
    if (this.tFirst !== null && t - this.tFirst >= this.o.timeLimitMs) {
      this.capped = true;
      this.stop();
    } else if (t - this.lastProgress > (this.o.idleMs ?? 30_000)) {
      this.error = `no handler ended for ${this.o.idleMs ?? 30_000} ms after ${this.handled} records`;
      this.stop();
    }
  }

  /** Ends the run now: later starts and ends are not counted. */
  stop(): void {
    if (this.done) return;
    this.done = true;
    this.stopAt = now();
    clearInterval(this.timer);
    this.resolveDone();
  }

  /** A handler starts on a record: its index, or -1 when it is not counted (a duplicate, or after the stop). */
  begin(partition: number, offset: number, key: Uint8Array | null, value: Uint8Array | null, timestamp: number, at = now()): number {
    if (this.done) return -1;
    const i = this.index(partition, offset);
    if (i < 0) return -1;
    if (this.started[i] !== 0) {
      this.duplicates++;
      return -1;
    }
    this.started[i] = 1;
    if (this.tFirst === null) this.tFirst = at;
    this.startAt[i] = at;
    this.timestamp[i] = timestamp;
    const [k, s] = parseKeySeq(value);
    if (k < 0 || k >= this.o.keys || !keyMatches(key, value)) {
      this.badKeys++;
      this.key[i] = 0;
    } else this.key[i] = k;
    this.seq[i] = s;
    return i;
  }

  /** The handler of record `i` (from begin) ended. */
  end(i: number, at = now()): void {
    if (i < 0 || this.done) return;
    this.endAt[i] = at;
    this.handled++;
    // A worker's reports may arrive out of time order: the last end is the latest one.
    if (this.tLast === null || at > this.tLast) this.tLast = at;
    this.lastProgress = at;
    if (this.handled >= this.o.records) this.stop();
  }

  /** A record handled elsewhere (a worker thread) with its own times: begin and end at once. */
  handledElsewhere(partition: number, offset: number, key: Uint8Array | null, value: Uint8Array | null, timestamp: number, startAt: number, endAt: number): void {
    this.end(this.begin(partition, offset, key, value, timestamp, startAt), endAt);
  }

  /** The same with the key already parsed (a worker sends numbers, not bytes). */
  handledParsed(partition: number, offset: number, key: number, seq: number, timestamp: number, startAt: number, endAt: number): void {
    if (this.done) return;
    const i = this.index(partition, offset);
    if (i < 0) return;
    if (this.started[i] !== 0) {
      this.duplicates++;
      return;
    }
    this.started[i] = 1;
    if (this.tFirst === null || startAt < this.tFirst) this.tFirst = startAt;
    this.startAt[i] = startAt;
    this.timestamp[i] = timestamp;
    if (key < 0 || key >= this.o.keys) {
      this.badKeys++;
      this.key[i] = 0;
    } else this.key[i] = key;
    this.seq[i] = seq;
    this.end(i, endAt);
  }

  private index(partition: number, offset: number): number {
    const p = this.base[partition];
    if (p === undefined || partition + 1 >= this.base.length || offset >= this.base[partition + 1]! - p) {
      this.error ??= `record ${partition}@${offset} beyond the end offsets given`;
      return -1;
    }
    return p + offset;
  }

  /** Order, duplicates and latencies over what was started before the stop. */
  figures(): HandlerFigures {
    clearInterval(this.timer);
    const total = this.startAt.length;
    const stopAt = this.stopAt;
    // Records by key (a counting sort), then each key's by start time.
    const count = new Int32Array(this.o.keys + 1);
    let n = 0;
    for (let i = 0; i < total; i++) {
      if (!this.started[i] || this.startAt[i]! > stopAt) continue;
      count[this.key[i]! + 1]!++;
      n++;
    }
    for (let k = 0; k < this.o.keys; k++) count[k + 1]! += count[k]!;
    const byKey = new Int32Array(n);
    const fill = count.slice();
    for (let i = 0; i < total; i++) if (this.started[i] && this.startAt[i]! <= stopAt) byKey[fill[this.key[i]!]!++] = i;
    let outOfOrder = 0;
    let overlaps = 0;
    for (let k = 0; k < this.o.keys; k++) {
      const list = Array.from(byKey.subarray(count[k]!, count[k + 1]!)).sort((a, b) => this.startAt[a]! - this.startAt[b]!);
      for (let j = 1; j < list.length; j++) {
        const prev = list[j - 1]!;
        const cur = list[j]!;
        // An unfinished record ends never: whatever of its key started after it overlapped it.
        const prevEnd = this.endAt[prev] === 0 ? Number.POSITIVE_INFINITY : this.endAt[prev]!;
        if (this.seq[cur]! < this.seq[prev]!) outOfOrder++;
        else if (this.startAt[cur]! < prevEnd) overlaps++;
      }
    }
    const handler: number[] = [];
    const e2e: number[] = [];
    for (let i = 0; i < total; i++) {
      const end = this.endAt[i]!;
      if (end === 0 || end > stopAt) continue;
      handler.push(end - this.startAt[i]!);
      e2e.push(end - this.timestamp[i]!);
    }
    return {
      records: this.handled,
      seconds: this.tFirst !== null && this.tLast !== null ? round((this.tLast - this.tFirst) / 1000, 3) : 0,
      capped: this.capped,
      outOfOrder,
      overlaps,
      duplicates: this.duplicates,
      badKeys: this.badKeys,
      handlerP50Ms: percentile(handler, 50),
      handlerP99Ms: percentile(handler, 99),
      e2eP50Ms: percentile(e2e, 50),
      e2eP99Ms: percentile(e2e, 99),
    };
  }
}

/**
 * The report of a handler client: Run's figures (CPU, RSS, GC, the event loop's delay over the
 * window from the first handler start) and the family's, the loop's delay among them.
 */
export async function handlerReport(run: Run, check: HandlerCheck, skipped: string | undefined, more: Partial<HandlerFigures> = {}): Promise<HandlerReport> {
  run.count = check.handled;
  run.tFirst = check.tFirst;
  run.tLast = check.tLast;
  if (check.error) run.error ??= check.error;
  const report = await run.report();
  const handler: HandlerFigures = { ...check.figures(), loopDelayP99Ms: report.p99EventLoopDelayMs ?? null, loopDelayMaxMs: report.maxEventLoopStallMs, ...more };
  return { ...report, handler, ...(skipped ? { skipped } : {}) };
}

function round(n: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

/** The p-th percentile (nearest rank), ms to the microsecond; null when empty. */
export function percentile(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  values.sort((a, b) => a - b);
  const i = Math.min(values.length - 1, Math.max(0, Math.ceil((p / 100) * values.length) - 1));
  return round(values[i]!, 3);
}
