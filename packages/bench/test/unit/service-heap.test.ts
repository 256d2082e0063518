// --heap-mib: the live heap a client holds, as a service's (service-heap.ts).
import { getHeapStatistics } from 'node:v8';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { heldEntries, holdHeap } from '../../src/service-heap.js';

const MIB = 1_048_576;

test('holdHeap keeps at least the asked MiB alive, and more with each call', () => {
  const before = getHeapStatistics().used_heap_size;
  const grown = holdHeap(16);
  assert.ok(grown >= 16, `grew by ${grown} MiB`);
  const entries = heldEntries();
  assert.ok(entries > 10_000, `${entries} entries`);
  // Still held after what the call allocated on the way is collectable: the entries are reachable.
  (globalThis as { gc?: () => void }).gc?.();
  assert.ok(getHeapStatistics().used_heap_size - before >= 16 * MIB);
  holdHeap(4);
  assert.ok(heldEntries() > entries);
});

test('holdHeap refuses what is not a positive whole number of MiB', () => {
  for (const bad of [0, -1, 1.5, Number.NaN])
    assert.throws(
      () => holdHeap(bad),
      (e: Error) => e instanceof RangeError && /positive integer/.test(e.message),
    );
});

test.run();
