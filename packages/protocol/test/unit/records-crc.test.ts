import { randomBytes } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { crc32c, crc32cImplementation, crc32cJs } from '../../src/index.js';

/** Bit by bit, from the definition: reflected polynomial 0x82F63B78. */
function reference(data: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of data) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0x82f63b78 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

test('the native accelerator is in use on this platform (prebuilt @node-rs/crc32)', () => {
  // linux-x64-gnu has a prebuilt binary: if this fails, the fast path silently fell back to JS.
  if (process.platform === 'linux' && process.arch === 'x64' && process.env.KWIRE_CRC32C !== 'js') assert.is(crc32cImplementation, 'native');
});

test('both implementations agree with the definition: check value, sizes 0..300, random buffers and subranges', () => {
  assert.is(crc32c(Buffer.from('123456789')), 0xe3069283);
  assert.is(crc32cJs(Buffer.from('123456789')), 0xe3069283);
  for (let n = 0; n <= 300; n++) {
    const b = randomBytes(n);
    const r = reference(b);
    assert.is(crc32c(b), r, `native, ${n} bytes`);
    assert.is(crc32cJs(b), r, `js, ${n} bytes`);
  }
  const big = randomBytes(1 << 20);
  assert.is(crc32c(big), crc32cJs(big));
  for (let i = 0; i < 50; i++) {
    const start = Math.floor(Math.random() * 1000);
    const end = start + Math.floor(Math.random() * 5000);
    assert.is(crc32c(big, start, end), reference(big.subarray(start, end)));
  }
});

test.run();
