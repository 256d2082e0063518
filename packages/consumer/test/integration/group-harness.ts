// Runs group members (fixtures/group-member.js) as child processes and collects what they report.
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const memberScript = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'group-member.js');

export interface MemberEvent {
  t: number;
  ev: string;
  [k: string]: unknown;
}

export class Member {
  readonly events: MemberEvent[] = [];
  readonly child: ChildProcess;
  private buffer = '';
  stderr = '';
  readonly exited: Promise<number | null>;

  constructor(
    readonly name: string,
    options: Record<string, unknown>,
  ) {
    this.child = spawn(process.execPath, [memberScript, JSON.stringify(options)], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child.stdout!.on('data', (c: Buffer) => {
      this.buffer += c.toString();
      let i;
      while ((i = this.buffer.indexOf('\n')) >= 0) {
        const line = this.buffer.slice(0, i);
        this.buffer = this.buffer.slice(i + 1);
        if (line.startsWith('{')) this.events.push(JSON.parse(line) as MemberEvent);
      }
    });
    this.child.stderr!.on('data', (c: Buffer) => (this.stderr += c.toString()));
    this.exited = new Promise((r) => this.child.on('exit', (code) => r(code)));
  }

  /** Waits until an event matching `pred` has been reported (after index `from`). */
  async waitFor(pred: (e: MemberEvent) => boolean, ms = 60_000, from = 0): Promise<MemberEvent> {
    const deadline = Date.now() + ms;
    for (;;) {
      const e = this.events.slice(from).find(pred);
      if (e) return e;
      if (Date.now() > deadline) throw new Error(`${this.name}: no matching event within ${ms} ms; stderr: ${this.stderr.slice(-2000)}`);
      if (this.child.exitCode !== null) throw new Error(`${this.name} exited (${this.child.exitCode}); stderr: ${this.stderr.slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Every (topic:partition, offset) delivered to this member, with the time of delivery. */
  records(): { key: string; offset: bigint; t: number }[] {
    const out: { key: string; offset: bigint; t: number }[] = [];
    for (const e of this.events) {
      if (e.ev !== 'batch') continue;
      for (let o = BigInt(e.from as string); o <= BigInt(e.to as string); o++) out.push({ key: `${e.topic as string}:${e.p as number}`, offset: o, t: e.t });
    }
    return out;
  }

  /** Partitions this member owns after its events (assigned adds, revoked and lost remove). */
  owned(): Set<string> {
    const owned = new Set<string>();
    for (const e of this.events) {
      if (e.ev === 'assigned') for (const p of (e.added as string[] | undefined) ?? []) owned.add(p);
      if (e.ev === 'assigned') for (const p of (e.revoked as string[] | undefined) ?? []) owned.delete(p);
      if (e.ev === 'revoked' || e.ev === 'lost') for (const p of (e.partitions as string[] | undefined) ?? []) owned.delete(p);
    }
    return owned;
  }

  stop(): Promise<number | null> {
    if (this.child.exitCode === null) this.child.kill('SIGTERM');
    return this.exited;
  }

  kill(): Promise<number | null> {
    if (this.child.exitCode === null) this.child.kill('SIGKILL');
    return this.exited;
  }
}

/**
 * Ownership intervals per partition from every member's events, to check that no partition was
 * owned by two members at once. A killed member's ownership ends when it was killed.
 */
export function ownershipOverlaps(members: Member[], killedAt = new Map<Member, number>()): string[] {
  const intervals = new Map<string, { member: string; from: number; to: number }[]>();
  for (const m of members) {
    const open = new Map<string, number>();
    const close = (p: string, t: number) => {
      const from = open.get(p);
      if (from === undefined) return;
      open.delete(p);
      let l = intervals.get(p);
      if (!l) intervals.set(p, (l = []));
      l.push({ member: m.name, from, to: t });
    };
    for (const e of m.events) {
      if (e.ev === 'assigned') {
        for (const p of (e.revoked as string[] | undefined) ?? []) close(p, e.t);
        for (const p of (e.added as string[] | undefined) ?? []) if (!open.has(p)) open.set(p, e.t);
      }
      if (e.ev === 'revoked' || e.ev === 'lost') for (const p of (e.partitions as string[] | undefined) ?? []) close(p, e.t);
    }
    const end = killedAt.get(m) ?? Infinity;
    for (const p of [...open.keys()]) close(p, end);
  }
  const problems: string[] = [];
  for (const [p, list] of intervals) {
    list.sort((a, b) => a.from - b.from);
    for (let i = 1; i < list.length; i++) {
      for (let j = 0; j < i; j++) {
        if (list[j]!.member !== list[i]!.member && list[i]!.from < list[j]!.to) {
          problems.push(`${p}: ${list[j]!.member} [${list[j]!.from}, ${list[j]!.to}) and ${list[i]!.member} from ${list[i]!.from}`);
        }
      }
    }
  }
  return problems;
}
