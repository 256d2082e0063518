// CRC-32C for record batches: every implementation @kwire/protocol can use, on batch-sized
// buffers: crc-32 (JavaScript, slice-by-16), @node-rs/crc32 (one chain of CRC32 instructions) and
// kwire's addon (three interleaved chains, and carry-less folding where the CPU has VPCLMULQDQ:
// packages/protocol/native/crc32c.c; 'kwire-scalar' is its chains alone).
// Run: node packages/bench/dist/src/micro/crc-choice.js
import { randomBytes } from 'node:crypto';
import { crc32cImplementations } from '@kwire/protocol';

const names: Record<string, string> = { js: 'crc-32 (JS)', native: '@node-rs/crc32', kwire: 'kwire addon', 'kwire-scalar': 'kwire, CRC32 only' };
for (const size of [100, 1_024, 10_240, 16 * 1_024, 128 * 1_024, 1_048_576]) {
  const buf = randomBytes(size);
  const rates = new Map<string, number>();
  for (const [key, fn] of Object.entries(crc32cImplementations)) {
    for (let i = 0; i < 50; i++) fn!(buf);
    let n = 0;
    const started = process.hrtime.bigint();
    let elapsed = 0;
    while (elapsed < 0.5) {
      for (let i = 0; i < 20; i++) fn!(buf);
      n += 20;
      elapsed = Number(process.hrtime.bigint() - started) / 1e9;
    }
    const gbps = (n * size) / elapsed / 1e9;
    rates.set(key, gbps);
    console.log(`${String(size).padStart(8)} B  ${(names[key] ?? key).padEnd(18)} ${gbps.toFixed(2).padStart(6)} GB/s  ${((elapsed * 1e9) / n).toFixed(0).padStart(7)} ns/call`);
  }
  const js = rates.get('js')!;
  console.log(
    `${String(size).padStart(8)} B  ${[...rates]
      .filter(([k]) => k !== 'js')
      .map(([k, v]) => `${k} / js = ${(v / js).toFixed(1)}x`)
      .join(', ')}${rates.has('kwire') && rates.has('native') ? `, kwire / native = ${(rates.get('kwire')! / rates.get('native')!).toFixed(1)}x` : ''}`,
  );
}
