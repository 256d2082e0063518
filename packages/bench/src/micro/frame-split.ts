// The frame splitter alone, no socket: the consumer's FrameReader fed the way Node's `onread`
// feeds it (bytes copied into the buffer it hands out, then onRead(n)), over blocks of 1,000
// frames of 100 B and one of 1 MiB, each frame touched and a large frame's pool buffer released.
// The per-frame cost of splitting, where a socket benchmark sees mostly syscalls and copies.
//
// `--compare DIR` measures another build of @kwire/consumer (DIR holds its dist: DIR/src/internals.js)
// in the same process: the harness is compiled once per build (so neither shares the other's type
// feedback), the builds alternate round by round, and the ratios of CPU per frame are printed. Run
// with the same DIR on both sides (`--compare packages/consumer/dist`) to see the noise floor.
//
// Run: node packages/bench/dist/src/micro/frame-split.js [--rounds 40] [--blocks 100] [--compare DIR]
import { parseArgs } from 'node:util';
import * as current from '@kwire/consumer/internals';
import { internalsOf } from './compare-build.js';

type Consumer = Pick<typeof import('@kwire/consumer/internals'), 'FrameReader' | 'SimpleFramePool'>;

const SMALL = 100;
const LARGE = 1024 * 1024;

function block(): Buffer {
  const b = Buffer.allocUnsafe(1000 * SMALL + LARGE);
  let o = 0;
  for (let i = 0; i < 1000; i++) {
    b.writeInt32BE(SMALL - 4, o);
    b.fill(i & 0xff, o + 4, o + SMALL);
    o += SMALL;
  }
  b.writeInt32BE(LARGE - 4, o);
  b.fill(0x5a, o + 4);
  return b;
}

// Compiled once per build (new Function): each copy gathers its own type feedback.
const HARNESS = `return function run(blocks) {
  const pool = new mod.SimpleFramePool();
  let touch = 0;
  let frames = 0;
  const reader = new mod.FrameReader(
    { allocate: (n) => pool.acquire(n), frame: (f, backing) => { frames++; touch ^= f[4] ^ f[f.length - 1]; if (backing) pool.release(backing); } },
    { readBufferBytes: 65536 },
  );
  const c0 = process.cpuUsage();
  for (let k = 0; k < blocks; k++) {
    let pos = 0;
    while (pos < data.length) {
      const target = reader.nextBuffer();
      const n = Math.min(target.length, data.length - pos, 65536);
      data.copy(target, 0, pos, pos + n);
      reader.onRead(n);
      pos += n;
    }
  }
  const c = process.cpuUsage(c0);
  if (touch === -1) frames++;
  return ((c.user + c.system) * 1000) / frames;
}`;

function harness(mod: Consumer, data: Buffer): (blocks: number) => number {
  return new Function('mod', 'data', HARNESS)(mod, data) as (blocks: number) => number;
}

function quantile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))]!;
}

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: { rounds: { type: 'string', default: '40' }, blocks: { type: 'string', default: '100' }, compare: { type: 'string' } },
});
const rounds = Number(values.rounds);
const blocks = Number(values.blocks);
const data = block();
const variants: [string, (blocks: number) => number][] = [['this', harness(current, data)]];
if (values.compare) {
  const other = (await import(internalsOf(values.compare))) as Consumer;
  variants.push(['compare', harness(other, data)]);
}
const results = new Map<string, number[]>(variants.map(([name]) => [name, []]));
for (let r = 0; r < rounds; r++) {
  for (const [name, run] of r % 2 === 0 ? variants : [...variants].reverse()) {
    const ns = run(blocks);
    // The first rounds warm up (JIT, pool).
    if (r >= 4) results.get(name)!.push(ns);
  }
}
console.log(`node ${process.version}: FrameReader over ${blocks} blocks of 1000 x 100 B + 1 x 1 MiB per round, ${rounds - 4} rounds measured; CPU ns per frame`);
console.log('variant      min      p25   median');
for (const [name] of variants) {
  const xs = results.get(name)!;
  console.log(`${name.padEnd(8)} ${[0, 0.25, 0.5].map((p) => quantile(xs, p).toFixed(1).padStart(8)).join(' ')}`);
}
if (variants.length === 2) {
  const a = results.get('this')!;
  const b = results.get('compare')!;
  console.log(`this/compare: ${[0, 0.25, 0.5].map((p, i) => `${['min', 'p25', 'median'][i]} ${(quantile(a, p) / quantile(b, p)).toFixed(3)}`).join(', ')}`);
}
