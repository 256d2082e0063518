// int64 in @kwire/protocol: native bigint or the design card's `long`? Measured on what the codec
// does with int64s: read them from a buffer (offsets, timestamps, producer ids) into decoded objects,
// and, on the record path, add a record's offset delta to its batch's base offset. Every value is
// stored (as a decoder stores it in the object it returns), so no allocation is optimized away.
// Run: node packages/bench/dist/src/micro/int64-choice.js
import Long from 'long';

const N = 1 << 16;
const buf = Buffer.allocUnsafe(N * 8);
for (let i = 0; i < N; i++) buf.writeBigInt64BE(BigInt(i) * 1_000_003n + 9_000_000_000n, i * 8);
const keep: unknown[] = new Array(1024);

function measure(name: string, fn: () => void): number {
  for (let i = 0; i < 20; i++) fn();
  let rounds = 0;
  const started = process.hrtime.bigint();
  let elapsed = 0;
  while (elapsed < 1) {
    fn();
    rounds++;
    elapsed = Number(process.hrtime.bigint() - started) / 1e9;
  }
  const perSec = (rounds * N) / elapsed;
  console.log(`  ${name.padEnd(58)} ${(perSec / 1e6).toFixed(1).padStart(7)} M/s`);
  return perSec;
}

/** int64 from two int32 halves: one BigInt from a number when the value is a safe integer. */
function readInt64(b: Buffer, o: number): bigint {
  const hi = (b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!;
  const lo = ((b[o + 4]! << 24) | (b[o + 5]! << 16) | (b[o + 6]! << 8) | b[o + 7]!) >>> 0;
  if (hi >= -0x200000 && hi < 0x200000) return BigInt(hi * 4294967296 + lo);
  return (BigInt(hi) << 32n) | BigInt(lo);
}

console.log(`node ${process.versions.node}: reading ${N} int64 values`);
const r1 = measure('bigint: buf.readBigInt64BE', () => {
  for (let i = 0; i < N; i++) keep[i & 1023] = buf.readBigInt64BE(i * 8);
});
const r2 = measure('bigint: two int32 halves, BigInt(number) when safe', () => {
  for (let i = 0; i < N; i++) keep[i & 1023] = readInt64(buf, i * 8);
});
const r3 = measure('long: Long.fromBits(int32 lo, int32 hi)', () => {
  for (let i = 0; i < N; i++) keep[i & 1023] = Long.fromBits(buf.readInt32BE(i * 8 + 4), buf.readInt32BE(i * 8));
});
console.log('base offset + delta for every record of a batch');
const base = 9_000_000_000n;
const baseLong = Long.fromString('9000000000');
const a1 = measure('bigint: base + BigInt(delta)', () => {
  for (let i = 0; i < N; i++) keep[i & 1023] = base + BigInt(i);
});
const a2 = measure('long: base.add(delta)', () => {
  for (let i = 0; i < N; i++) keep[i & 1023] = baseLong.add(i);
});
console.log(`ratios: read bigint(halves)/long ${(r2 / r3).toFixed(2)}x, readBigInt64BE/long ${(r1 / r3).toFixed(2)}x; add bigint/long ${(a1 / a2).toFixed(2)}x`);
