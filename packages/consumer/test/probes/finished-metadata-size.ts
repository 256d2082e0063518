// Sizes and speed of the finished-offsets metadata (issue 31, src/group/finished-metadata.ts):
//
//   node packages/consumer/dist/test/probes/finished-metadata-size.js
//
// Prints the metadata length in bytes (= chars: it is ASCII) and the form chosen ('b' bitmap, 'r'
// run lengths, upper case when deflated) for K finished offsets scattered at random over spans of
// 1,000, 5,000 and 20,000 after the commit point, and for the opposite case, where all but K are
// finished (a few slow records in flight). Each cell is the median over 9 seeds; the base has 10
// digits (a 19-digit base adds 9 bytes). Then the time of one encode and one decode over a span of
// 20,000: the median of 9 rounds of 200 calls each, after a warm-up, in microseconds.
import { prng } from '@kwire/testkit';
import { decodeFinished, encodeFinished, maxSpan } from '../../src/group/finished-metadata.js';

const BASE = 1_234_567_890n;
const SEEDS = 9;

function scattered(seed: number, span: number, count: number): bigint[] {
  const random = prng(seed);
  const picked = new Set<number>([span]);
  while (picked.size < count) picked.add(1 + Math.floor(random() * span));
  return [...picked].sort((a, b) => a - b).map((r) => BASE + BigInt(r));
}

/** All of (BASE, BASE + span] finished except `count` scattered ones (never the last). */
function allBut(seed: number, span: number, count: number): bigint[] {
  const random = prng(seed);
  const holes = new Set<number>();
  while (holes.size < count) holes.add(1 + Math.floor(random() * (span - 1)));
  const out: bigint[] = [];
  for (let r = 1; r <= span; r++) if (!holes.has(r)) out.push(BASE + BigInt(r));
  return out;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

function cell(make: (seed: number) => bigint[]): string {
  const lengths: number[] = [];
  const forms = new Set<string>();
  for (let seed = 1; seed <= SEEDS; seed++) {
    const s = encodeFinished(BASE, make(seed), 64 * 1024)!;
    lengths.push(s.length);
    forms.add(s[3]!);
  }
  return `${median(lengths)} ${[...forms].sort().join('')}`.padStart(12);
}

const SPANS = [1000, 5000, 20_000];
const COUNTS = [64, 256, 1024];
console.log(`maxSpan(4096) = ${maxSpan(4096)}: any set over at most that many offsets after the commit point fits`);
for (const [title, make] of [
  ['K finished, scattered', scattered],
  ['all finished but K, scattered', allBut],
] as const) {
  console.log(`\n${title}: bytes and forms`);
  console.log(`${'K \\ span'.padEnd(10)}${SPANS.map((s) => String(s).padStart(12)).join('')}`);
  for (const k of COUNTS) {
    const cells = SPANS.map((span) => (k < span ? cell((seed) => make(seed, span, k)) : '—'.padStart(12)));
    console.log(`${String(k).padEnd(10)}${cells.join('')}`);
  }
}

function timeUs(f: () => unknown): number {
  for (let i = 0; i < 200; i++) f();
  const rounds: number[] = [];
  for (let r = 0; r < 9; r++) {
    const t = process.hrtime.bigint();
    for (let i = 0; i < 200; i++) f();
    rounds.push(Number(process.hrtime.bigint() - t) / 200 / 1000);
  }
  return median(rounds);
}

console.log('\nspan 20,000: microseconds per call (median of 9 rounds of 200)');
console.log(`${'finished'.padEnd(28)}${'bytes'.padStart(7)}${'form'.padStart(6)}${'encode'.padStart(9)}${'decode'.padStart(9)}`);
for (const [label, set] of [
  ['64 scattered', scattered(1, 20_000, 64)],
  ['1,000 scattered', scattered(1, 20_000, 1000)],
  ['10,000 scattered', scattered(1, 20_000, 10_000)],
  ['all but 64', allBut(1, 20_000, 64)],
  ['all', allBut(1, 20_000, 0)],
] as const) {
  const s = encodeFinished(BASE, set)!;
  const enc = timeUs(() => encodeFinished(BASE, set));
  const dec = timeUs(() => decodeFinished(s));
  console.log(`${label.padEnd(28)}${String(s.length).padStart(7)}${s[3]!.padStart(6)}${enc.toFixed(1).padStart(9)}${dec.toFixed(1).padStart(9)}`);
}
