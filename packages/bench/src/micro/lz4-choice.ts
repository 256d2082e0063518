// LZ4 frame decoding for lz4-compressed batches: kwire's JavaScript block decoder against kwire's
// addon (packages/protocol/native/lz4.c). Payloads like the benchmark's:
// random A-Z values as ProducerPerformance writes them (stored blocks), the same with short repeats
// (literal-heavy compressed blocks, as Java writes them), repeated records, and JSON-like text.
// Run: node packages/bench/dist/src/micro/lz4-choice.js
import { BufferPool, compressRecords, lz4Implementations } from '@kwire/protocol';

function letters(n: number): Buffer {
  const b = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) b[i] = 65 + Math.floor(Math.random() * 26);
  return b;
}

/**
 * The shape of Java's lz4 frames of ProducerPerformance values, written sequence by sequence:
 * lz4-java finds short matches in random A-Z by chance and compresses (lz4-napi skips ahead on
 * such data and stores it), so its blocks are literal runs of about 130 B between short matches.
 * Frame as Kafka writes it: FLG 0x60, BD 0x40 (header checksum 0x82), 64 KiB independent blocks.
 */
function javaLikeFrame(n: number): { frame: Buffer; size: number } {
  const parts: Buffer[] = [Buffer.from([0x04, 0x22, 0x4d, 0x18, 0x60, 0x40, 0x82])];
  let size = 0;
  while (size < n) {
    const block: number[] = [];
    let out = 0;
    const lengthBytes = (v: number) => {
      for (; v >= 255; v -= 255) block.push(255);
      block.push(v);
    };
    for (;;) {
      let literals = 100 + Math.floor(Math.random() * 60);
      const last = out + literals + 64 > 65_536;
      if (last) literals = 65_536 - out; // the block ends exactly at its maximum
      const match = last ? 0 : 6 + Math.floor(Math.random() * 4);
      block.push((Math.min(literals, 15) << 4) | Math.min(match - 4, 15));
      if (literals >= 15) lengthBytes(literals - 15);
      for (let i = 0; i < literals; i++) block.push(65 + Math.floor(Math.random() * 26));
      out += literals;
      if (last) break;
      const offset = 1 + Math.floor(Math.random() * Math.min(out, 60_000));
      block.push(offset & 0xff, offset >>> 8);
      out += match;
    }
    const header = Buffer.alloc(4);
    header.writeUInt32LE(block.length);
    parts.push(header, Buffer.from(block));
    size += out;
  }
  parts.push(Buffer.alloc(4));
  return { frame: Buffer.concat(parts), size };
}

function json(n: number): Buffer {
  const parts: string[] = [];
  let len = 0;
  for (let i = 0; len < n; i++) {
    const s = JSON.stringify({ id: i, user: `user-${(i * 7919) % 10007}`, amount: Math.round(Math.random() * 1e6) / 100, tags: ['a', 'bb', 'ccc'].slice(i % 3) });
    parts.push(s);
    len += s.length;
  }
  return Buffer.from(parts.join('\n')).subarray(0, n);
}

const cases: [string, Buffer][] = [
  ['one 10 KB A-Z value', letters(10_240)],
  ['100 x 10 KB A-Z values', letters(1_024_000)],
  ['160 x 100 B A-Z values', letters(16_000)],
  ['one 10 KB A-Z value x 100', Buffer.concat(new Array(100).fill(letters(10_240)))],
  ['1 MB of JSON lines', json(1_000_000)],
];

const pool = new BufferPool();
type Fn = (frame: Buffer) => void;
const fns: [string, Fn][] = [];
for (const [name, f] of Object.entries(lz4Implementations)) {
  fns.push([name === 'kwire' ? 'addon' : 'JavaScript', (frame) => pool.release(f!(frame, 64 << 20, pool).buffer)]);
}

const javaLike = javaLikeFrame(1_024_000);
const frames: [string, Buffer, number][] = cases.map(([label, data]) => [label, compressRecords('lz4', data), data.length]);
frames.splice(2, 0, ['1 MB as Java compresses A-Z', javaLike.frame, javaLike.size]);

for (const [label, frame, size] of frames) {
  const rates = new Map<string, number>();
  for (const [name, fn] of fns) {
    for (let i = 0; i < 30; i++) fn(frame);
    let n = 0;
    const started = process.hrtime.bigint();
    let elapsed = 0;
    while (elapsed < 0.5) {
      for (let i = 0; i < 5; i++) fn(frame);
      n += 5;
      elapsed = Number(process.hrtime.bigint() - started) / 1e9;
    }
    const mbps = (n * size) / elapsed / 1e6;
    rates.set(name, mbps);
    console.log(`${label.padEnd(27)} ${String(frame.length).padStart(9)} B frame  ${name.padEnd(10)} ${mbps.toFixed(0).padStart(6)} MB/s  ${((elapsed * 1e6) / n).toFixed(1).padStart(8)} us/frame`);
  }
  if (rates.has('addon')) console.log(`${label.padEnd(27)} addon / JavaScript = ${(rates.get('addon')! / rates.get('JavaScript')!).toFixed(2)}x`);
}
