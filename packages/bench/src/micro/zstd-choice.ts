// Which zstd for @kwire/protocol? Decompression speed of the candidates that install from the npm
// registry alone, on payloads shaped like Kafka record batches, in one run:
//   zstd-napi  simple decompress() (allocates the output)
//   zstd-napi  DCtx.decompress into a reused buffer (what a pooled decoder does)
//   fzstd      pure JavaScript, into a reused buffer
//   node:zlib  zstdDecompressSync (Node >= 22.15 only; absent on Node 20, the floor)
// Run: node packages/bench/dist/src/micro/zstd-choice.js
import { randomBytes } from 'node:crypto';
import * as zlib from 'node:zlib';
import { decompress as fzstdDecompress } from 'fzstd';
import { compress, decompress } from 'zstd-napi';
import binding from 'zstd-napi/binding.js';

function kafkaLikePayload(records: number, valueSize: number): Buffer {
  // ProducerPerformance values (random A-Z) framed like records: some varints, a key-less header.
  const parts: Buffer[] = [];
  for (let i = 0; i < records; i++) {
    const value = Buffer.alloc(valueSize);
    const rnd = randomBytes(valueSize);
    for (let j = 0; j < valueSize; j++) value[j] = 65 + (rnd[j]! % 26);
    parts.push(Buffer.from([valueSize + 8, 0, i & 0x7f, i & 0x7f, 1, valueSize & 0x7f, 0]), value);
  }
  return Buffer.concat(parts);
}

function jsonPayload(records: number): Buffer {
  const lines: string[] = [];
  for (let i = 0; i < records; i++) {
    lines.push(JSON.stringify({ id: i, user: `user-${i % 977}`, event: i % 3 ? 'click' : 'view', ts: 1_700_000_000_000 + i * 13, amount: (i * 7919) % 10_000 }));
  }
  return Buffer.from(lines.join('\n'));
}

function measure(name: string, bytes: number, fn: () => number): number {
  // Warm up, then run for ~1.5 s.
  for (let i = 0; i < 50; i++) fn();
  let n = 0;
  let sink = 0;
  const started = process.hrtime.bigint();
  let elapsed = 0;
  while (elapsed < 1.5) {
    for (let i = 0; i < 20; i++) sink += fn();
    n += 20;
    elapsed = Number(process.hrtime.bigint() - started) / 1e9;
  }
  if (sink === 42) console.log('');
  const mbps = (bytes * n) / elapsed / 1e6;
  console.log(`  ${name.padEnd(38)} ${mbps.toFixed(0).padStart(6)} MB/s`);
  return mbps;
}

const hasZlibZstd = typeof (zlib as { zstdDecompressSync?: unknown }).zstdDecompressSync === 'function';
console.log(`node ${process.versions.node}; node:zlib zstd ${hasZlibZstd ? 'present' : 'absent'}`);

const payloads: [string, Buffer][] = [
  ['1,000 x 100 B A-Z records (~107 KB)', kafkaLikePayload(1_000, 100)],
  ['1,000 x 1 KB A-Z records (~1 MB)', kafkaLikePayload(1_000, 1_024)],
  ['10,000 JSON events (~1 MB)', jsonPayload(10_000)],
];
for (const [label, raw] of payloads) {
  const packed = compress(raw, { compressionLevel: 3 });
  console.log(`${label}: ${raw.length} B -> ${packed.length} B at level 3`);
  const out = Buffer.allocUnsafe(raw.length);
  const dctx = new binding.DCtx();
  const napi = measure('zstd-napi decompress()', raw.length, () => decompress(packed).length);
  const pooled = measure('zstd-napi DCtx into a reused buffer', raw.length, () => dctx.decompress(out, packed));
  const fz = measure('fzstd into a reused buffer', raw.length, () => fzstdDecompress(packed, out).length);
  let zl = Number.NaN;
  if (hasZlibZstd) {
    const z = zlib as unknown as { zstdDecompressSync(b: Buffer): Buffer };
    zl = measure('node:zlib zstdDecompressSync', raw.length, () => z.zstdDecompressSync(packed).length);
  }
  console.log(`  ratios: zstd-napi pooled / fzstd = ${(pooled / fz).toFixed(2)}x${hasZlibZstd ? `, / node:zlib = ${(pooled / zl).toFixed(2)}x` : ''}, simple / fzstd = ${(napi / fz).toFixed(2)}x`);
}
