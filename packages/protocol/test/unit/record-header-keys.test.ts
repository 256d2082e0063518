// Header keys are decoded through a small table of recent keys (record.ts, headerKey): whatever
// the mix of repeated, colliding, long, empty and multi-byte keys, each record's headers read back
// exactly as they were written.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeRecordBatch, encodeRecordBatch, type RecordInput } from '../../src/index.js';

function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

test('header keys read back exactly: repeats, slot collisions, over 32 bytes, empty, multi-byte', () => {
  const rand = seeded(7);
  const alphabet = ['a', 'b', 'z', '-', '0', 'é', 'ключ', '🙂'];
  const keys: string[] = ['', 'trace-id', 'content-type', 'x'.repeat(32), 'x'.repeat(33), 'y'.repeat(200)];
  // Many keys of the same length and the same first and last byte: they share a slot.
  for (let i = 0; i < 40; i++) keys.push(`a${alphabet[i % alphabet.length]}${i}${'q'.repeat(i % 5)}a`);
  for (let i = 0; i < 200; i++) {
    let k = '';
    const n = 1 + Math.floor(rand() * 12);
    for (let j = 0; j < n; j++) k += alphabet[Math.floor(rand() * alphabet.length)];
    keys.push(k);
  }
  const records: RecordInput[] = [];
  for (let i = 0; i < 3000; i++) {
    const n = Math.floor(rand() * 4);
    const headers = Array.from({ length: n }, () => ({ key: keys[Math.floor(rand() * keys.length)]!, value: rand() < 0.2 ? null : `v${i}` }));
    records.push({ value: `r${i}`, headers });
  }
  const batch = decodeRecordBatch(encodeRecordBatch(records));
  let i = 0;
  for (const r of batch.records()) {
    const want = records[i]!.headers!;
    const got = r.headers;
    assert.is(got.length, want.length, `record ${i}`);
    for (let h = 0; h < want.length; h++) {
      assert.is(got[h]!.key, want[h]!.key, `record ${i} header ${h}`);
      assert.is(got[h]!.value === null ? null : got[h]!.value!.toString(), want[h]!.value ?? null);
    }
    // A second read gives the same keys (the table may have moved on in between).
    assert.equal(
      r.headers.map((x) => x.key),
      want.map((x) => x.key),
    );
    i++;
  }
  assert.is(i, records.length);
});

test.run();
