import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { crc32c, crc32cImplementation, crc32cImplementations, crc32cJs } from '../../src/index.js';

/** Bit by bit, from the definition: reflected polynomial 0x82F63B78. */
function reference(data: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of data) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0x82f63b78 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

test('the fastest implementation that loads is the one in use', () => {
  // linux-x64-gnu has @node-rs/crc32's prebuilt binary, and `install` builds kwire's addon where a
  // compiler and Node's headers are present (they are on the project's machines): if this fails,
  // the fast path silently fell back.
  const forced = process.env.KWIRE_CRC32C;
  if (forced === 'js' || forced === 'native' || forced === 'kwire-scalar') assert.is(crc32cImplementation, forced);
  else if ('kwire' in crc32cImplementations) assert.is(crc32cImplementation, 'kwire');
  if (process.platform === 'linux' && process.arch === 'x64') {
    assert.ok('native' in crc32cImplementations, '@node-rs/crc32 loads');
    if (!process.env.KWIRE_SKIP_NATIVE) assert.ok('kwire' in crc32cImplementations, 'the addon was built by install (set KWIRE_SKIP_NATIVE to go without)');
  }
  // A CPU with AVX-512 and VPCLMULQDQ folds long buffers, and the CRC32-instruction path is listed
  // on its own beside it (so that both are compared below).
  if ('kwire' in crc32cImplementations && process.platform === 'linux' && process.arch === 'x64') {
    const flags = /^flags\s*:(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.split(/\s+/) ?? [];
    const vector = ['avx512f', 'avx512vl', 'avx512bw', 'vpclmulqdq'].every((f) => flags.includes(f));
    assert.is('kwire-scalar' in crc32cImplementations, vector, `vector path expected: ${vector}`);
  }
});

test('every implementation agrees with the definition: check value, sizes 0..2400, random buffers and subranges', () => {
  const impls = Object.entries(crc32cImplementations);
  assert.ok(impls.length >= 1);
  assert.is(crc32c(Buffer.from('123456789')), 0xe3069283);
  for (const [name, f] of impls) assert.is(f(Buffer.from('123456789')), 0xe3069283, name);
  // Past 3 x 256 bytes the addon runs three lanes joined by its shift tables, and from 256 bytes
  // the vector path folds 256- and 64-byte blocks and ends in 8- and 1-byte steps: around every
  // boundary and at every alignment it must still agree.
  const pool = randomBytes(2400 + 64);
  for (let n = 0; n <= 2400; n += n < 300 ? 1 : 7) {
    const at = n % 61;
    const b = pool.subarray(at, at + n);
    const r = reference(b);
    assert.is(crc32c(b), r, `in use, ${n} bytes at ${at}`);
    for (const [name, f] of impls) assert.is(f(b), r, `${name}, ${n} bytes at ${at}`);
  }
  const big = randomBytes((1 << 20) + 3);
  const whole = crc32cJs(big);
  for (const [name, f] of impls) assert.is(f(big), whole, `${name}, 1 MiB + 3`);
  // 3 x 8192-byte lanes and the sizes around them.
  for (const n of [24575, 24576, 24577, 24576 + 768, 49152 + 5, 100_000]) {
    const b = big.subarray(5, 5 + n);
    const r = crc32cJs(b);
    for (const [name, f] of impls) assert.is(f(b), r, `${name}, ${n} bytes`);
  }
  for (let i = 0; i < 50; i++) {
    const start = Math.floor(Math.random() * 1000);
    const end = start + Math.floor(Math.random() * 5000);
    assert.is(crc32c(big, start, end), reference(big.subarray(start, end)));
  }
});

test('the addon refuses what is not a Uint8Array with a TypeError', () => {
  const f = crc32cImplementations.kwire;
  if (!f) return;
  for (const bad of [undefined, null, 'abc', 42, {}, new Uint16Array(4), new ArrayBuffer(8)]) {
    assert.throws(
      () => (f as (x: unknown) => number)(bad),
      (e: Error) => e instanceof TypeError,
      String(bad),
    );
  }
  assert.is(f(new Uint8Array(0)), 0);
});

test.run();
