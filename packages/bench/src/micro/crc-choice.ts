// CRC-32C for record batches: crc-32 (JavaScript, slice-by-16) against @node-rs/crc32 (native,
// hardware instructions), on batch-sized buffers. Run: node packages/bench/dist/src/micro/crc-choice.js
import { randomBytes } from 'node:crypto';
import { crc32c as native } from '@node-rs/crc32';
import CRC32C from 'crc-32/crc32c.js';

for (const size of [1_024, 16 * 1_024, 128 * 1_024, 1_048_576]) {
  const buf = randomBytes(size);
  const rows: [string, (b: Buffer) => number][] = [
    ['crc-32 (JS)', (b) => CRC32C.buf(b, 0) >>> 0],
    ['@node-rs/crc32 (native)', (b) => native(b) >>> 0],
  ];
  const rates: number[] = [];
  for (const [name, fn] of rows) {
    for (let i = 0; i < 50; i++) fn(buf);
    let n = 0;
    const started = process.hrtime.bigint();
    let elapsed = 0;
    while (elapsed < 0.5) {
      for (let i = 0; i < 20; i++) fn(buf);
      n += 20;
      elapsed = Number(process.hrtime.bigint() - started) / 1e9;
    }
    const gbps = (n * size) / elapsed / 1e9;
    rates.push(gbps);
    console.log(`${String(size).padStart(8)} B  ${name.padEnd(26)} ${gbps.toFixed(2)} GB/s`);
  }
  console.log(`${String(size).padStart(8)} B  native / JS = ${(rates[1]! / rates[0]!).toFixed(1)}x`);
}
