// The manifest's facts against what the decoded frames say. The facts come from the scenario (what
// the capture script created, wrote and ran), so a decoder that reads the wrong field, the wrong
// record or the wrong error code fails here even when it re-encodes its own mistake byte for byte.
import { ErrorCode, type ConsumerProtocolAssignment } from '@kwire/protocol';
import type { RecordFact, ScenarioFacts, TopicRecordsFact } from '../capture/format.js';
import type { ExchangeOutcome, RecordsSeen } from './exchange.js';
import type { SeenBatch, SeenRecord } from './records.js';

type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any

export interface FactResult {
  fact: string;
  ok: boolean;
  detail: string;
}

interface ClassicJoin {
  members: number;
}

/** Collects what the facts need while the runner walks a capture's exchanges. */
export class FactCollector {
  private readonly facts: ScenarioFacts;
  private readonly software = new Set<string>();
  /** topic name -> partition counts seen in Metadata/CreateTopics responses. */
  private readonly partitionCounts = new Map<string, Set<number>>();
  private readonly topicNames = new Map<string, string>();
  private readonly records: RecordsSeen[] = [];
  /** "Api:code" of every error code seen in a response. */
  private readonly errors = new Set<string>();
  private readonly joins = new Map<string, ClassicJoin[]>();
  private readonly syncs = new Map<string, ConsumerProtocolAssignment[][]>();
  /** KIP-848: group -> member id -> partitions (topic id/partition) ever assigned. */
  private readonly heartbeats = new Map<string, Map<string, Set<string>>>();

  constructor(facts: ScenarioFacts) {
    this.facts = facts;
  }

  onExchange(apiKey: number, apiName: string, outcome: ExchangeOutcome): void {
    const req: Any = outcome.requestBody;
    const res: Any = outcome.responseBody;
    this.records.push(...outcome.records);
    if (apiKey === 18 && req && req.clientSoftwareName) this.software.add(`${req.clientSoftwareName} ${req.clientSoftwareVersion}`);
    if (res) collectErrors(res, apiName, this.errors);
    if (apiKey === 3 && res) {
      for (const t of res.topics) {
        if (t.errorCode !== 0 || t.name === null) continue;
        this.count(t.name, t.partitions.length);
        this.topicNames.set(t.topicId, t.name);
      }
    }
    if (apiKey === 19 && res) {
      for (const t of res.topics) {
        if (t.errorCode !== 0) continue;
        this.count(t.name, t.numPartitions);
        if (t.topicId) this.topicNames.set(t.topicId, t.name);
      }
    }
    if (apiKey === 11 && req && res && res.errorCode === 0 && res.members.length > 0) {
      const list = this.joins.get(req.groupId) ?? [];
      list.push({ members: res.members.length });
      this.joins.set(req.groupId, list);
    }
    if (apiKey === 14 && req && req.assignments.length > 0) {
      const decoded = (req.assignments as Any[]).map((a) => a.decodedAssignment).filter((a) => a !== undefined);
      const list = this.syncs.get(req.groupId) ?? [];
      list.push(decoded);
      this.syncs.set(req.groupId, list);
    }
    if (apiKey === 68 && req && res && res.errorCode === 0 && res.memberId && res.memberEpoch > 0) {
      const group = this.heartbeats.get(req.groupId) ?? new Map<string, Set<string>>();
      const owned = group.get(res.memberId) ?? new Set<string>();
      for (const t of res.assignment?.topicPartitions ?? []) for (const p of t.partitions) owned.add(`${t.topicId}/${p}`);
      group.set(res.memberId, owned);
      this.heartbeats.set(req.groupId, group);
    }
  }

  private count(topic: string, partitions: number): void {
    const set = this.partitionCounts.get(topic) ?? new Set<number>();
    set.add(partitions);
    this.partitionCounts.set(topic, set);
  }

  private topicOf(r: RecordsSeen): string | null {
    return r.topicName ?? (r.topicId ? (this.topicNames.get(r.topicId) ?? null) : null);
  }

  check(): FactResult[] {
    const f = this.facts;
    const out: FactResult[] = [];
    const add = (fact: string, ok: boolean, detail: string) => out.push({ fact, ok, detail });

    if (f.clientSoftware) {
      const expected = new Set(f.clientSoftware.map((s) => `${s.name} ${s.version}`));
      const unexpected = [...this.software].filter((s) => !expected.has(s));
      const missing = [...expected].filter((s) => !this.software.has(s));
      add(
        'clientSoftware',
        unexpected.length === 0 && missing.length === 0,
        `ApiVersions requests name ${[...this.software].join(', ') || 'nothing'}${missing.length ? `; missing ${missing.join(', ')}` : ''}`,
      );
    }
    for (const t of f.topics ?? []) {
      const seen = this.partitionCounts.get(t.name);
      const ok = seen !== undefined && seen.size === 1 && seen.has(t.partitions);
      add(`topic ${t.name}`, ok, seen ? `listed with ${[...seen].join(' / ')} partitions, ${t.partitions} expected` : 'not listed by any Metadata or CreateTopics response');
    }
    for (const r of f.records ?? []) out.push(...this.checkRecords(r));
    for (const g of f.groups ?? []) {
      if (g.protocol === 'classic') {
        const joins = this.joins.get(g.groupId) ?? [];
        const most = Math.max(0, ...joins.map((j) => j.members));
        add(`group ${g.groupId} members`, most === g.members, `the leader's JoinGroup responses list at most ${most} members, ${g.members} expected`);
        if (g.topics) {
          const syncs = this.syncs.get(g.groupId) ?? [];
          const full = syncs.reduce<ConsumerProtocolAssignment[] | undefined>((best, s) => (best === undefined || s.length > best.length ? s : best), undefined);
          const owners = new Map<string, number>();
          for (const a of full ?? []) for (const tp of a.assignedPartitions) for (const p of tp.partitions) owners.set(`${tp.topic}/${p}`, (owners.get(`${tp.topic}/${p}`) ?? 0) + 1);
          const problems = this.assignmentProblems(g.topics, (key) => owners.get(key) ?? 0, true);
          add(
            `group ${g.groupId} assignment`,
            full !== undefined && full.length === g.members && problems.length === 0,
            full === undefined ? 'no SyncGroup request with assignments' : `the leader assigned ${full.length} members${problems.length ? `; ${problems.join('; ')}` : ', every partition once'}`,
          );
        }
      } else {
        const members = this.heartbeats.get(g.groupId) ?? new Map<string, Set<string>>();
        add(`group ${g.groupId} members`, members.size === g.members, `${members.size} member ids heartbeat with an epoch, ${g.members} expected`);
        if (g.topics) {
          const byName = new Map<string, number>();
          for (const owned of members.values()) {
            for (const key of owned) {
              const [id, p] = key.split('/');
              const name = this.topicNames.get(id!) ?? id!;
              byName.set(`${name}/${p}`, (byName.get(`${name}/${p}`) ?? 0) + 1);
            }
          }
          const problems = this.assignmentProblems(g.topics, (key) => byName.get(key) ?? 0, false);
          add(`group ${g.groupId} assignment`, problems.length === 0, problems.length ? problems.join('; ') : 'every partition assigned');
        }
      }
    }
    for (const e of f.errors ?? []) {
      const code = (ErrorCode as Record<string, number>)[e.error];
      if (code === undefined) {
        add(`error ${e.error}`, false, 'not a Kafka error name');
        continue;
      }
      const seen = e.api ? this.errors.has(`${e.api}:${code}`) : [...this.errors].some((x) => x.endsWith(`:${code}`));
      add(`error ${e.api ? `${e.api} ` : ''}${e.error}`, seen, seen ? `answered (code ${code})` : `no ${e.api ?? ''} response carries code ${code}`);
    }
    return out;
  }

  /** Problems with an assignment of the partitions of `topics` (exactly once, or at least once). */
  private assignmentProblems(topics: string[], owners: (key: string) => number, exactlyOnce: boolean): string[] {
    const problems: string[] = [];
    for (const topic of topics) {
      const partitions = this.facts.topics?.find((t) => t.name === topic)?.partitions;
      if (partitions === undefined) {
        problems.push(`the facts do not say how many partitions ${topic} has`);
        continue;
      }
      for (let p = 0; p < partitions; p++) {
        const n = owners(`${topic}/${p}`);
        if (n === 0 || (exactlyOnce && n !== 1)) problems.push(`${topic}/${p} assigned ${n} times`);
      }
    }
    return problems;
  }

  private checkRecords(fact: TopicRecordsFact): FactResult[] {
    const out: FactResult[] = [];
    const add = (what: string, ok: boolean, detail: string) => out.push({ fact: `records ${fact.topic} ${what}`, ok, detail });
    const mine = this.records.filter((r) => this.topicOf(r) === fact.topic);
    const data = (batches: SeenBatch[]) => batches.filter((b) => !b.isControl);

    if (fact.compression) {
      const codecs = new Set(mine.flatMap((r) => data(r.batches).map((b) => b.compression)));
      add('compression', codecs.size === 1 && codecs.has(fact.compression), `data batches use ${[...codecs].join(', ') || 'nothing'}, ${fact.compression} expected`);
    }
    if (fact.produced) {
      const produced = mine.filter((r) => r.source === 'produce').flatMap((r) => data(r.batches).flatMap((b) => b.records));
      out.push(...this.compareRecords('produced', fact, produced, 'all'));
    }
    // Fetched records: each (partition, offset) once, however often it was fetched.
    const fetched = new Map<string, SeenRecord>();
    const byPartition = new Map<number, Map<bigint, SeenBatch>>();
    for (const r of mine.filter((x) => x.source === 'fetch')) {
      const batches = byPartition.get(r.partition) ?? new Map<bigint, SeenBatch>();
      for (const b of r.batches) {
        batches.set(b.baseOffset, b);
        if (!b.isControl) for (const rec of b.records) fetched.set(`${r.partition}/${rec.offset}`, rec);
      }
      byPartition.set(r.partition, batches);
    }
    if (fact.fetched) out.push(...this.compareRecords('fetched', fact, [...fetched.values()], fact.fetched));
    if (fact.transactions) {
      const tx = fact.transactions;
      let commits = 0;
      let aborts = 0;
      const aborted: SeenRecord[] = [];
      const abortedProducers = new Set<bigint>();
      for (const batches of byPartition.values()) {
        const pending = new Map<bigint, SeenRecord[]>();
        for (const b of [...batches.values()].sort((x, y) => (x.baseOffset < y.baseOffset ? -1 : 1))) {
          if (!b.isTransactional) continue;
          if (!b.isControl) {
            pending.set(b.producerId, [...(pending.get(b.producerId) ?? []), ...b.records]);
          } else if (b.controlType === 1 || b.controlType === 0) {
            if (b.controlType === 1) commits++;
            else {
              aborts++;
              abortedProducers.add(b.producerId);
              aborted.push(...(pending.get(b.producerId) ?? []));
            }
            pending.delete(b.producerId);
          }
        }
      }
      add('commit markers', commits === tx.commitMarkers, `${commits} COMMIT markers fetched, ${tx.commitMarkers} expected`);
      add('abort markers', aborts === tx.abortMarkers, `${aborts} ABORT markers fetched, ${tx.abortMarkers} expected`);
      if (tx.abortedRecords) {
        const r = this.compareRecords('aborted', { ...fact, count: tx.abortedRecords.length, records: tx.abortedRecords }, aborted, 'all');
        out.push(...r);
      }
      if (tx.readCommitted) {
        const named = mine.some((r) => r.source === 'fetch' && r.isolationLevel === 1 && (r.abortedProducerIds ?? []).some((p) => abortedProducers.has(p)));
        add('read_committed', named, named ? 'a read_committed Fetch response lists the aborted transactions' : 'no read_committed Fetch response lists an aborted transaction of the topic');
      }
    }
    return out;
  }

  private compareRecords(what: string, fact: TopicRecordsFact, seen: SeenRecord[], mode: 'all' | 'some'): FactResult[] {
    const out: FactResult[] = [];
    const add = (ok: boolean, detail: string) => out.push({ fact: `records ${fact.topic} ${what}`, ok, detail });
    if (mode === 'all' && seen.length !== fact.count) {
      add(false, `${seen.length} records, ${fact.count} expected`);
      return out;
    }
    if (mode === 'some' && seen.length === 0) {
      add(false, 'no records');
      return out;
    }
    if (fact.records) {
      const withKeys = fact.records.some((r) => r.key !== undefined);
      const withHeaders = fact.records.some((r) => r.headers !== undefined);
      const canon = (r: RecordFact | SeenRecord) => JSON.stringify([withKeys ? (r.key ?? null) : 0, r.value, withHeaders ? (r.headers ?? []) : 0]);
      const expected = new Map<string, number>();
      for (const r of fact.records) expected.set(canon(r), (expected.get(canon(r)) ?? 0) + 1);
      const unexpected: string[] = [];
      for (const r of seen) {
        const k = canon(r);
        const n = expected.get(k) ?? 0;
        if (n === 0) unexpected.push(k);
        else expected.set(k, n - 1);
      }
      const missing = mode === 'all' ? [...expected.entries()].filter(([, n]) => n > 0).map(([k]) => k) : [];
      const ok = unexpected.length === 0 && missing.length === 0;
      add(
        ok,
        ok
          ? `${seen.length} records as written`
          : `${unexpected.length ? `not written: ${unexpected.slice(0, 3).join(' ')}` : ''}${missing.length ? ` missing: ${missing.slice(0, 3).join(' ')}` : ''}`.trim(),
      );
    } else if (fact.valueBytes !== undefined) {
      const wrong = seen.filter((r) => r.value === null || Buffer.byteLength(r.value) !== fact.valueBytes);
      add(wrong.length === 0, wrong.length ? `${wrong.length} of ${seen.length} values are not ${fact.valueBytes} bytes` : `${seen.length} values of ${fact.valueBytes} bytes`);
    } else {
      add(true, `${seen.length} records`);
    }
    return out;
  }
}

/** Every errorCode in a decoded response body, as "Api:code". */
function collectErrors(body: Any, apiName: string, into: Set<string>): void {
  if (Array.isArray(body)) {
    for (const x of body) collectErrors(x, apiName, into);
    return;
  }
  if (body === null || typeof body !== 'object' || Buffer.isBuffer(body)) return;
  for (const [k, v] of Object.entries(body)) {
    if (k === 'errorCode' && typeof v === 'number' && v !== 0) into.add(`${apiName}:${v}`);
    else if (typeof v === 'object') collectErrors(v, apiName, into);
  }
}
