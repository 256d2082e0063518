// The seeded fault schedule: which fault comes next, against what, how long it lasts, and the pause
// before it. Drawn from a small PRNG (mulberry32) so that a seed names one schedule; the times at
// which faults land still depend on the machine.
import { prng } from '@kwire/testkit';

export type FaultKind =
  | 'member-sigkill'
  | 'member-sigterm'
  | 'member-sigstop'
  | 'proxy-rst'
  | 'proxy-blackhole'
  | 'proxy-latency'
  | 'proxy-cut-fetch'
  | 'broker-kill-leader'
  | 'broker-kill-coordinator';

export const FAULT_KINDS: readonly FaultKind[] = [
  'member-sigkill',
  'member-sigterm',
  'member-sigstop',
  'proxy-rst',
  'proxy-blackhole',
  'proxy-latency',
  'proxy-cut-fetch',
  'broker-kill-leader',
  'broker-kill-coordinator',
];

export interface PlannedFault {
  kind: FaultKind;
  /** Pause before the fault, 10-20 s. */
  gapMs: number;
  /** The member (0-2) a member or proxy fault hits. */
  member: number;
  /** The partition whose leader a broker-kill-leader fault kills. */
  partition: number;
  /** How long a fault with a duration lasts (stop, black hole, latency, broker down). */
  durationMs: number;
}

/**
 * Faults for `seed`, enough to fill `totalMs` of gaps (each `gapMs` long, 10-20 s by default).
 * Stops and black holes outlast the session timeout (by 3-6 s), so that the coordinator gives the
 * member's partitions away meanwhile.
 */
export function planFaults(seed: number, totalMs: number, sessionTimeoutMs: number, gapMs: readonly [number, number] = [10_000, 20_000]): PlannedFault[] {
  const rnd = prng(seed);
  const int = (lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1));
  const out: PlannedFault[] = [];
  // Kinds come from shuffled decks of all nine: a short run meets as many kinds as it has faults.
  let deck: FaultKind[] = [];
  let used = 0;
  while (used < totalMs) {
    if (deck.length === 0) {
      deck = [...FAULT_KINDS];
      for (let i = deck.length - 1; i > 0; i--) {
        const j = int(0, i);
        [deck[i], deck[j]] = [deck[j]!, deck[i]!];
      }
    }
    const kind = deck.pop()!;
    const gap = int(gapMs[0], gapMs[1]);
    const member = int(0, 2);
    const partition = int(0, 5);
    let durationMs = 0;
    if (kind === 'member-sigstop' || kind === 'proxy-blackhole') durationMs = sessionTimeoutMs + int(3_000, 6_000);
    else if (kind === 'proxy-latency') durationMs = int(5_000, 10_000);
    else if (kind.startsWith('broker-')) durationMs = int(2_000, 6_000);
    else if (kind === 'member-sigkill') durationMs = int(1_000, 3_000);
    used += gap;
    if (used > totalMs) break;
    out.push({ kind, gapMs: gap, member, partition, durationMs });
  }
  return out;
}

/**
 * The schedule of `seed` dealt over two runs of `totalMs` each (the short test's classic run then
 * its KIP-848 run): one sequence of faults cut where the first run's time ends, so the second run
 * continues the first one's deck and the pair meets nearly every kind (8 of the 9 on average, 7 at least) for
 * any seed. Each part has at least three faults (gaps are at most 20 s of 65).
 */
export function planFaultPair(seed: number, totalMs: number, sessionTimeoutMs: number): [PlannedFault[], PlannedFault[]] {
  const all = planFaults(seed, 2 * totalMs, sessionTimeoutMs);
  const first: PlannedFault[] = [];
  let used = 0;
  for (const f of all) {
    used += f.gapMs;
    if (used > totalMs) break;
    first.push(f);
  }
  return [first, all.slice(first.length)];
}

/**
 * The concurrent mode's short schedule: gaps of 8-14 s, so that `totalMs` of 45 s holds 3 to 5
 * faults, and always a member SIGKILL among them (rule (9) is about what comes again after one):
 * when the seed's deck dealt none, its first member fault (else its first fault) becomes one.
 * Its own stream of the seed, not the classic/KIP-848 pair's.
 */
export function planConcurrentFaults(seed: number, totalMs: number, sessionTimeoutMs: number): PlannedFault[] {
  const plan = planFaults((seed ^ 0x5bd1e995) >>> 0, totalMs, sessionTimeoutMs, [8_000, 14_000]);
  if (plan.length > 0 && !plan.some((f) => f.kind === 'member-sigkill')) {
    const i = Math.max(
      0,
      plan.findIndex((f) => f.kind.startsWith('member-')),
    );
    plan[i] = { ...plan[i]!, kind: 'member-sigkill', durationMs: 1_000 + (plan[i]!.durationMs % 2_001) };
  }
  return plan;
}
