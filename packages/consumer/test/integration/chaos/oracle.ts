// The chaos test's oracle: reads the members' own logs (see member.ts for the line format) and
// the harness's record of faults, and checks them against the high watermarks (ListOffsets) and
// the committed offsets Kafka's ConsumerGroupCommand reads back. Pure: no sockets, no clock, so
// that its unit test can feed it histories that break each rule.
//
//  (1) every offset below the high watermark was processed at least once;
//  (2) every commit c at time t had every offset below c processed before t;
//  (3) committed offsets never go down, and end at the high watermark;
//  (4) an offset processed again is at or above the offset committed when it was processed again
//      (a duplicate below it means a member went back behind what the group had already
//      finished), each duplicate counted with the fault in force;
//  (5) no two members own a partition at once, outside a zombie window of at most the session
//      timeout (counted in the old owner's waking time: a SIGSTOPped process cannot act);
//  (6) within one ownership interval, offsets are processed in order, each one after the other;
//  (7) every partition with records to read makes progress within 60 s of every fault;
//  and every close() resolved within its budget.
// The concurrent mode (ordering 'key': members log B when a handler starts and P when it is about
// to resolve) replaces (6), which a concurrent run breaks by design, with:
//  (8) per key, within one ownership interval, handlers start in increasing offset order and one
//      at a time (the next starts after the previous one's P line);
//  (9) after a SIGKILL, no record its last successful commit of a partition had finished (below
//      the committed offset, or in the metadata's finished set) is handled again, by anyone; the
//      records it had started that do come again are counted (in flight at the kill, or finished
//      after that last commit);
//  (10) no handler of a partition starts in a member after the member's revocation of it began or
//      it lost it, until it is assigned again (both modes: in the sequential one P is the start).
// And in both modes, (2) covers the metadata too: a record a commit's metadata calls finished was
// processed before the commit.
import { decodeFinished } from '../../../src/internals.js';

export interface FaultRecord {
  kind: string;
  /** The member slot, the broker node id or the partition it hit, for the summary. */
  target: string;
  start: number;
  /** When it was lifted (restart done, SIGCONT, black hole gone); = start for a one-shot. */
  end: number;
}

export interface OracleInput {
  partitions: number;
  /** High watermark per partition (ListOffsets, after the producer stopped). */
  highWatermarks: readonly number[];
  /** What ConsumerGroupCommand reads back after every member closed: committed and log end offset. */
  groupOffsets: readonly { partition: number; committed: number | null; logEndOffset: number | null }[];
  /** Each member slot's log, as written. */
  logs: readonly string[];
  faults: readonly FaultRecord[];
  /** SIGKILLs of members: the end of whatever the slot owned. */
  kills: readonly { slot: number; at: number }[];
  /** SIGSTOP to SIGCONT spans of members. */
  frozen: readonly { slot: number; from: number; to: number }[];
  /** SIGTERMs sent to members: each one must have its close() result. */
  terms: readonly { slot: number; at: number }[];
  sessionTimeoutMs: number;
  closeBudgetMs: number;
  progressWithinMs: number;
  /**
   * 'partition' (default): run() at its defaults, P lines mark a record's start and end, and (6)
   * holds. 'key': the concurrent mode, B lines mark starts, P lines ends; (8) instead of (6).
   */
  ordering?: 'partition' | 'key';
}

/** What happened to the records a SIGKILLed member had started, once it was gone (rule (9)). */
export interface AfterKills {
  kills: number;
  /** Its started records handled again: still running at the kill. */
  unfinished: number;
  /** ... finished, but after its last commit of their partition: duplicates that at-least-once allows. */
  finishedAfterCommit: number;
  /** Its finished records beyond its last commit point that the commit metadata carried (not handled again). */
  carriedByMetadata: number;
}

export interface CloseReport {
  slot: number;
  signalledAt: number;
  durationMs: number;
  /** From SIGTERM to the resolved close(), measured on the member's clock. */
  sinceSignalMs: number;
  timedOut: boolean;
  leftGroup: boolean;
  committed: number;
  uncommitted: number;
}

export interface OracleReport {
  violations: string[];
  processed: number;
  unique: number;
  duplicatesByCause: Record<string, number>;
  zombieDeliveries: number;
  longestOverlapMs: number;
  longestRecovery: { ms: number; fault: string } | undefined;
  recoveries: { fault: string; ms: number }[];
  closes: CloseReport[];
  commits: number;
  /** Commits whose metadata carried finished records beyond the offset. */
  commitsWithMetadata: number;
  /** Handler ends (P lines); in the sequential mode equal to `processed`. */
  finished: number;
  afterKills: AfterKills;
}

interface Processed {
  t: number;
  slot: number;
  offset: number;
}

interface Interval {
  slot: number;
  partition: number;
  start: number;
  end: number;
  /** Offsets processed inside it, in log order. */
  offsets: number[];
  zombie: number;
  /** (8): per key, the offset started last in this interval and whether its handler ended. */
  keys: Map<string, { offset: number; ended: boolean }>;
}

interface Commit {
  t: number;
  slot: number;
  offset: number;
  /** Finished offsets beyond `offset` from the metadata; null when it did not decode. */
  finished: ReadonlySet<number> | null;
}

/** One process of a member slot: what rule (9) needs if it was SIGKILLed. */
interface Incarnation {
  slot: number;
  started: Map<number, Set<number>>;
  ended: Map<number, Set<number>>;
  lastCommit: Map<number, Commit>;
  killedAt?: number;
}

/**
 * A commit's metadata as member.ts writes it in its C line: '-' (none), the finished offsets
 * beyond the committed one as ranges ('a-b,c'), '!foreign' or '!corrupt:<why>'. kwire's
 * metadata is relative to the commit point: a base other than the offset is corrupt too.
 */
export function finishedField(offset: bigint, metadata: string | null | undefined): string {
  const d = decodeFinished(metadata);
  if (d.kind === 'none') return '-';
  if (d.kind === 'foreign') return '!foreign';
  if (d.kind === 'corrupt') return `!corrupt:${d.reason.replaceAll(' ', '_')}`;
  if (d.base !== offset) return `!corrupt:base_${d.base}_is_not_the_offset`;
  const runs: string[] = [];
  let from = -1;
  let to = -2;
  for (const big of d.offsets) {
    const o = Number(big);
    if (o !== to + 1) {
      if (from >= 0) runs.push(from === to ? `${from}` : `${from}-${to}`);
      from = o;
    }
    to = o;
  }
  if (from >= 0) runs.push(from === to ? `${from}` : `${from}-${to}`);
  return runs.join(',') || '-';
}

/** The offsets of a C line's metadata field (finishedField's output); null for '!...'. */
export function parseFinishedField(field: string | undefined): Set<number> | null {
  const out = new Set<number>();
  if (field === undefined || field === '-') return out;
  if (field.startsWith('!')) return null;
  for (const run of field.split(',')) {
    const [a, b] = run.split('-').map(Number) as [number, number | undefined];
    for (let o = a; o <= (b ?? a); o++) out.add(o);
  }
  return out;
}

const LIMIT = 20;

export function checkChaos(input: OracleInput): OracleReport {
  const violations: string[] = [];
  // Up to 10 messages per rule, then a count: one zombie can break a rule a thousand times.
  const perRule = new Map<string, number>();
  const violate = (s: string) => {
    const rule = /^\(\d+\)/.exec(s)?.[0] ?? 'other';
    const k = (perRule.get(rule) ?? 0) + 1;
    perRule.set(rule, k);
    if (k <= 10) violations.push(s);
  };
  const n = input.partitions;
  const keyed = input.ordering === 'key';
  // Handler ends (P lines), and handler starts: B lines when keyed, else the same P lines.
  const processed: Processed[][] = Array.from({ length: n }, () => []);
  const started: Processed[][] = keyed ? Array.from({ length: n }, () => []) : processed;
  const commits: Commit[][] = Array.from({ length: n }, () => []);
  const intervals: Interval[] = [];
  const closes: CloseReport[] = [];
  const killed: Incarnation[] = [];
  let zombieDeliveries = 0;
  let finishedCount = 0;

  input.logs.forEach((text, slot) => {
    const open = new Map<number, Interval>();
    const last = new Map<number, Interval>();
    // (10): partitions whose revocation began (V), that were revoked (R) or lost (L), and were not
    // assigned again since; what ended them, for the message.
    const gone = new Map<number, string>();
    // Started and not ended yet (keyed): "p:offset" -> its interval and key, for (8).
    const running = new Map<string, { iv: Interval; key: string }>();
    const kills = input.kills.filter((k) => k.slot === slot).map((k) => k.at);
    const endAll = (at: number) => {
      for (const iv of open.values()) iv.end = at;
      open.clear();
    };
    const newIncarnation = (): Incarnation => ({ slot, started: new Map(), ended: new Map(), lastCommit: new Map() });
    let inc = newIncarnation();
    const note = (m: Map<number, Set<number>>, p: number, o: number) => {
      let set = m.get(p);
      if (!set) m.set(p, (set = new Set()));
      set.add(o);
    };
    let lastT = 0;
    let incarnation = -Infinity;
    // A handler start: the interval it belongs to, zombie or not, and rules (8) and (10).
    const start = (t: number, p: number, offset: number, key: string | undefined) => {
      // (Sequential: the P line's entry in `processed` is the start too.)
      if (keyed) started[p]!.push({ t, slot, offset });
      note(inc.started, p, offset);
      const why = gone.get(p);
      if (why !== undefined) violate(`(10) member ${slot} started ${p}@${offset} at ${t}, after ${why}`);
      let iv = open.get(p);
      if (!iv) {
        // Started after its ownership ended: a zombie delivery. It extends the interval, so that
        // (5) measures it against whoever owned the partition then.
        iv = last.get(p);
        if (!iv) {
          violate(`(5) member ${slot} processed ${p}@${offset} at ${t} without ever being assigned partition ${p}`);
          return;
        }
        iv.end = Math.max(iv.end, t);
        iv.zombie++;
        zombieDeliveries++;
      }
      iv.offsets.push(offset);
      if (key === undefined) return;
      const prev = iv.keys.get(key);
      if (prev && offset <= prev.offset) violate(`(8) member ${slot}, partition ${p} (owned from ${iv.start}), key ${key}: offset ${offset} started at ${t} after offset ${prev.offset}`);
      else if (prev && !prev.ended) violate(`(8) member ${slot}, partition ${p} (owned from ${iv.start}), key ${key}: offset ${offset} started at ${t} while offset ${prev.offset} was still running`);
      iv.keys.set(key, { offset, ended: false });
      running.set(`${p}:${offset}`, { iv, key });
    };
    for (const raw of text.split('\n')) {
      if (!raw) continue;
      const [tag, ts, a, b, c] = raw.split(' ');
      const t = Number(ts);
      lastT = t;
      const list = (s: string | undefined) => (s && s !== '-' ? s.split(',').map(Number) : []);
      switch (tag) {
        case 'S': {
          // A new incarnation: what the previous one owned ended when it was killed (or closed).
          const killedAt = kills.find((k) => k >= incarnation && k <= t);
          if (open.size) endAll(killedAt ?? t);
          if (killedAt !== undefined) killed.push({ ...inc, killedAt });
          inc = newIncarnation();
          last.clear();
          gone.clear();
          running.clear();
          incarnation = t;
          break;
        }
        case 'A':
          for (const p of list(a)) {
            if (open.has(p)) violate(`(5) member ${slot} was assigned partition ${p} at ${t} while it owned it already`);
            const iv: Interval = { slot, partition: p, start: t, end: Infinity, offsets: [], zombie: 0, keys: new Map() };
            intervals.push(iv);
            open.set(p, iv);
            last.set(p, iv);
            gone.delete(p);
          }
          break;
        case 'V':
          // onPartitionsRevoked is the first sign of a revocation in the log, and a sound bound:
          // GroupManager.revoke stops the partition's deliveries (subscriptions.revoke) and waits
          // for its handlers to end (whenReleased) before calling it, so no handler may start
          // after it. The 'revoked' event comes later, after the revocation's commit; the
          // 'rebalance' event comes too early (a cooperative or KIP-848 member keeps handling the
          // partitions it keeps, and those it will give up, until the new assignment is known).
          for (const p of list(a)) if (!gone.has(p)) gone.set(p, `its revocation began at ${t}`);
          break;
        case 'R':
        case 'L':
          for (const p of list(a)) {
            const iv = open.get(p);
            if (iv) iv.end = t;
            open.delete(p);
            if (!gone.has(p)) gone.set(p, `${tag === 'R' ? 'it was revoked' : 'it was lost'} at ${t}`);
          }
          break;
        case 'B':
          if (keyed) start(t, Number(a), Number(b), c);
          break;
        case 'P': {
          const p = Number(a);
          const offset = Number(b);
          processed[p]!.push({ t, slot, offset });
          note(inc.ended, p, offset);
          finishedCount++;
          if (!keyed) {
            start(t, p, offset, undefined);
            break;
          }
          const r = running.get(`${p}:${offset}`);
          if (r) {
            running.delete(`${p}:${offset}`);
            const k = r.iv.keys.get(r.key);
            if (k && k.offset === offset) k.ended = true;
          }
          break;
        }
        case 'C': {
          const finished = parseFinishedField(c);
          if (finished === null) violate(`(9) member ${slot} committed ${a}@${b} at ${t} with metadata that does not decode: ${c}`);
          const commit: Commit = { t, slot, offset: Number(b), finished };
          commits[Number(a)]!.push(commit);
          inc.lastCommit.set(Number(a), commit);
          break;
        }
        case 'X': {
          endAll(t);
          const r = JSON.parse(raw.slice(raw.indexOf('{'))) as {
            durationMs: number;
            timedOut: boolean;
            leftGroup: boolean;
            committed: unknown[];
            uncommitted: unknown[];
            signalledAt: number;
          };
          closes.push({
            slot,
            signalledAt: r.signalledAt,
            durationMs: r.durationMs,
            sinceSignalMs: t - r.signalledAt,
            timedOut: r.timedOut,
            leftGroup: r.leftGroup,
            committed: r.committed.length,
            uncommitted: r.uncommitted.length,
          });
          break;
        }
        case 'E':
          violate(`member ${slot}: ${raw.slice(raw.indexOf(' ', 2) + 1)}`);
          break;
      }
    }
    // Still open at the end of the log: killed last, or never closed (a missing X is caught below).
    const killedAt = kills.find((k) => k >= incarnation);
    for (const iv of open.values()) iv.end = killedAt ?? lastT;
    if (killedAt !== undefined) killed.push({ ...inc, killedAt });
  });

  // Events of different members are merged by time; sort is stable, so one member's order holds.
  for (const list of processed) list.sort((x, y) => x.t - y.t);
  if (keyed) for (const list of started) list.sort((x, y) => x.t - y.t);
  for (const list of commits) list.sort((x, y) => x.t - y.t);

  // First processing time of each offset.
  const first: Float64Array[] = input.highWatermarks.map((hw) => new Float64Array(hw).fill(Infinity));
  for (let p = 0; p < n; p++) {
    const hw = input.highWatermarks[p]!;
    for (const r of processed[p]!) {
      if (r.offset >= hw || r.offset < 0) {
        violate(`member ${r.slot} processed ${p}@${r.offset}, outside [0, ${hw}) (the high watermark)`);
        continue;
      }
      if (r.t < first[p]![r.offset]!) first[p]![r.offset] = r.t;
    }
  }

  // (1)
  for (let p = 0; p < n; p++) {
    const missing: number[] = [];
    first[p]!.forEach((t, o) => {
      if (t === Infinity) missing.push(o);
    });
    if (missing.length) violate(`(1) partition ${p}: ${missing.length} offset(s) below the high watermark ${input.highWatermarks[p]} never processed: ${missing.slice(0, LIMIT).join(' ')}`);
  }

  // (2) and (3)
  let commitCount = 0;
  let commitsWithMetadata = 0;
  for (let p = 0; p < n; p++) {
    const hw = input.highWatermarks[p]!;
    // prefix[c] = the time by which every offset below c had been processed.
    const prefix = new Float64Array(hw + 1);
    prefix[0] = -Infinity;
    for (let o = 0; o < hw; o++) prefix[o + 1] = Math.max(prefix[o]!, first[p]![o]!);
    let high = -1;
    for (const c of commits[p]!) {
      commitCount++;
      if (c.offset > hw) violate(`(2) member ${c.slot} committed ${p}@${c.offset} at ${c.t}, above the high watermark ${hw}`);
      else if (!(prefix[c.offset]! <= c.t)) {
        // (Same millisecond allowed: a loopback commit can be answered within the ms of the last record.)
        const late = first[p]!.findIndex((t, o) => o < c.offset && !(t <= c.t));
        violate(`(2) member ${c.slot} committed ${p}@${c.offset} at ${c.t}, but offset ${late} was ${first[p]![late] === Infinity ? 'never processed' : `first processed at ${first[p]![late]}`}`);
      }
      if (c.finished?.size) commitsWithMetadata++;
      // What the metadata calls finished must have been, by the commit.
      for (const o of c.finished ?? []) {
        const t = o < hw ? first[p]![o]! : Infinity;
        if (o <= c.offset || !(t <= c.t)) {
          violate(
            `(2) member ${c.slot} committed ${p}@${c.offset} at ${c.t} with offset ${o} finished in its metadata, but ${o <= c.offset ? 'that is not beyond the committed offset' : t === Infinity ? 'it was never processed' : `it was first processed at ${t}`}`,
          );
          break;
        }
      }
      if (c.offset < high) violate(`(3) partition ${p}: member ${c.slot} committed ${c.offset} at ${c.t}, below ${high} committed before`);
      high = Math.max(high, c.offset);
    }
    if (high !== hw) violate(`(3) partition ${p}: the last commit the members logged is ${high < 0 ? 'none' : high}, not the high watermark ${hw}`);
    const g = input.groupOffsets.find((x) => x.partition === p);
    if (!g || g.committed !== hw) violate(`(3) partition ${p}: ConsumerGroupCommand reads committed ${g?.committed ?? 'none'}, not the high watermark ${hw}`);
    if (g && g.logEndOffset !== hw) violate(`partition ${p}: ConsumerGroupCommand's log end offset ${g.logEndOffset} differs from ListOffsets' ${hw}`);
  }

  // (4) Duplicates, the committed offset at the time of each, and their cause.
  const faults = [...input.faults].sort((x, y) => x.start - y.start);
  // The faults in force at t (started, not yet lifted: a broker still down, a member still
  // stopped), else the aftermath of the last one; "a+b" when several are in force.
  const causeAt = (t: number) => {
    const inForce = faults.filter((f) => f.start <= t && t <= f.end).map((f) => f.kind);
    if (inForce.length) return [...new Set(inForce)].join('+');
    let cause = 'no fault (rebalance)';
    for (const f of faults) if (f.start <= t) cause = `after ${f.kind}`;
    return cause;
  };
  const duplicatesByCause: Record<string, number> = {};
  let unique = 0;
  let total = 0;
  for (let p = 0; p < n; p++) {
    const seen = new Set<number>();
    const cs = commits[p]!;
    let ci = 0;
    let committed = -1;
    // The latest commit's metadata: records finished beyond the committed offset.
    let latest: Commit | undefined;
    // Keyed: duplicates are handler starts (a handler that a SIGSTOP caught mid-way ends after the
    // partition's next owner did it again: that is not a delivery).
    for (const r of started[p]!) {
      total++;
      // Commits logged strictly before this record was processed again.
      while (ci < cs.length && cs[ci]!.t < r.t) {
        latest = cs[ci++]!;
        committed = Math.max(committed, latest.offset);
      }
      if (!seen.has(r.offset)) {
        seen.add(r.offset);
        unique++;
        continue;
      }
      const cause = causeAt(r.t);
      duplicatesByCause[cause] = (duplicatesByCause[cause] ?? 0) + 1;
      if (r.offset < committed) violate(`(4) member ${r.slot} processed ${p}@${r.offset} again at ${r.t}, below the committed offset ${committed} (${cause})`);
      else if (latest?.finished?.has(r.offset))
        violate(`(4) member ${r.slot} processed ${p}@${r.offset} again at ${r.t}, finished in the metadata of member ${latest.slot}'s commit of ${latest.offset} at ${latest.t} (${cause})`);
    }
  }

  // (9) What came again after each SIGKILL, against the killed process's last commit of each partition.
  const afterKills: AfterKills = { kills: killed.length, unfinished: 0, finishedAfterCommit: 0, carriedByMetadata: 0 };
  for (const k of killed) {
    const at = k.killedAt!;
    for (let p = 0; p < n; p++) {
      const mine = k.started.get(p);
      const ended = k.ended.get(p) ?? new Set<number>();
      const c = k.lastCommit.get(p);
      if (c?.finished) for (const o of c.finished) if (ended.has(o)) afterKills.carriedByMetadata++;
      const again = new Set<number>();
      for (const r of started[p]!) {
        if (r.t <= at) continue;
        if (c && (r.offset < c.offset || c.finished?.has(r.offset))) {
          const how = r.offset < c.offset ? 'below its committed offset' : 'finished in its metadata';
          violate(
            `(9) member ${r.slot} started ${p}@${r.offset} at ${r.t}, after member ${k.slot} was SIGKILLed at ${at}, though that member's last commit (${p}@${c.offset} at ${c.t}) had it ${how}${ended.has(r.offset) ? '' : ' (finished by an earlier owner)'}`,
          );
          continue;
        }
        if (!mine?.has(r.offset) || again.has(r.offset)) continue;
        again.add(r.offset);
        if (ended.has(r.offset)) afterKills.finishedAfterCommit++;
        else afterKills.unfinished++;
      }
    }
  }

  // (5) Overlapping ownership, in the old owner's waking time.
  let longestOverlapMs = 0;
  const awake = (slot: number, from: number, to: number) => {
    let ms = to - from;
    for (const z of input.frozen) if (z.slot === slot) ms -= Math.max(0, Math.min(to, z.to) - Math.max(from, z.from));
    return ms;
  };
  for (let p = 0; p < n; p++) {
    const ivs = intervals.filter((iv) => iv.partition === p).sort((x, y) => x.start - y.start);
    for (let i = 0; i < ivs.length; i++) {
      for (let j = i + 1; j < ivs.length; j++) {
        const a = ivs[i]!;
        const b = ivs[j]!;
        if (b.start >= a.end) continue;
        if (a.slot === b.slot) {
          violate(`(5) member ${a.slot} owned partition ${p} twice at once (from ${a.start} and from ${b.start})`);
          continue;
        }
        const ms = awake(a.slot, b.start, Math.min(a.end, b.end));
        longestOverlapMs = Math.max(longestOverlapMs, ms);
        if (ms > input.sessionTimeoutMs) violate(`(5) partition ${p}: member ${a.slot} (owner since ${a.start}) still owned it ${ms} ms (awake) after member ${b.slot} got it at ${b.start}`);
      }
    }
  }

  // (6) One after the other within an interval (sequential mode; keyed runs have (8) instead).
  for (const iv of keyed ? [] : intervals) {
    for (let k = 1; k < iv.offsets.length; k++) {
      const prev = iv.offsets[k - 1]!;
      const cur = iv.offsets[k]!;
      if (cur !== prev + 1) {
        violate(`(6) member ${iv.slot}, partition ${iv.partition} (owned from ${iv.start}): offset ${cur} after ${prev}`);
        break;
      }
    }
  }

  // (7) Progress after every fault: each partition with records left to read processes a new one.
  const recoveries: { fault: string; ms: number }[] = [];
  for (const f of faults) {
    let worst = 0;
    for (let p = 0; p < n; p++) {
      let frontier = -1;
      let next = Infinity;
      for (const r of processed[p]!) {
        if (r.t <= f.start) frontier = Math.max(frontier, r.offset);
        else if (r.offset > frontier && first[p]![r.offset] === r.t) {
          next = r.t;
          break;
        }
      }
      if (frontier + 1 >= input.highWatermarks[p]!) continue;
      const ms = next - f.start;
      worst = Math.max(worst, ms);
      if (ms > input.progressWithinMs)
        violate(`(7) partition ${p}: ${next === Infinity ? 'no' : `the first`} new record processed ${next === Infinity ? 'after' : `${ms} ms after`} ${f.kind} ${f.target} at ${f.start}`);
    }
    recoveries.push({ fault: `${f.kind} ${f.target}`, ms: worst });
  }
  const longestRecovery = recoveries.reduce<{ ms: number; fault: string } | undefined>((m, r) => (!m || r.ms > m.ms ? r : m), undefined);

  // Every SIGTERM has its close() result, within the budget.
  for (const term of input.terms) {
    const c = closes.find((x) => x.slot === term.slot && x.signalledAt >= term.at - 1_000 && x.signalledAt <= term.at + 5_000);
    if (!c) {
      violate(`member ${term.slot}: no close() result after the SIGTERM at ${term.at}`);
      continue;
    }
    if (c.durationMs > input.closeBudgetMs || c.sinceSignalMs > input.closeBudgetMs + 500) {
      violate(`member ${term.slot}: close() took ${c.durationMs} ms (${c.sinceSignalMs} ms after SIGTERM), budget ${input.closeBudgetMs} ms`);
    }
  }

  for (const [rule, k] of perRule) if (k > 10) violations.push(`${rule} ... and ${k - 10} more like these`);
  return {
    violations,
    processed: total,
    unique,
    duplicatesByCause,
    zombieDeliveries,
    longestOverlapMs,
    longestRecovery,
    recoveries,
    closes,
    commits: commitCount,
    commitsWithMetadata,
    finished: finishedCount,
    afterKills,
  };
}
