// The process's shared buffer pool: it keeps what its live clients ask for, a closed client's part
// a while longer for the one that replaces it, and then lets the free buffers beyond it go.
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { retainedFor, SharedBufferPool } from '../../src/shared-pool.js';

test('each client adds its part; a closed one lingers, then the free buffers beyond the rest go', async () => {
  const shared = new SharedBufferPool(30);
  const a = {};
  const b = {};
  const pool = shared.join(a, 1 << 20);
  assert.is(shared.join(b, 1 << 20), pool, 'one pool for every client');
  assert.is(pool.maxRetainedBytes, 2 << 20);
  const bufs = [pool.acquire(1 << 20), pool.acquire(1 << 20)];
  for (const buf of bufs) pool.release(buf);
  assert.is(pool.stats.bytesRetained, 2 << 20);
  shared.leave(b);
  shared.leave(b);
  assert.is(pool.stats.bytesRetained, 2 << 20, "b's part is kept for a while");
  // A client created meanwhile (a restart) gets the buffers back without allocating.
  const misses = pool.stats.misses;
  const again = pool.acquire(1 << 20);
  assert.is(pool.stats.misses, misses);
  pool.release(again);
  await sleep(80);
  assert.is(pool.maxRetainedBytes, 1 << 20, 'only what a still asks for');
  assert.is(pool.stats.bytesRetained, 1 << 20);
  shared.leave(a);
  await sleep(80);
  assert.is(pool.stats.bytesRetained, 0, 'nothing is kept once every client has gone');
});

test('a client that joins while a part lingers keeps the pool from shrinking before the timer', async () => {
  const shared = new SharedBufferPool(30);
  const a = {};
  const pool = shared.join(a, 4 << 20);
  pool.release(pool.acquire(4 << 20));
  shared.leave(a);
  const b = {};
  shared.join(b, 4 << 20);
  assert.is(pool.stats.bytesRetained, 4 << 20);
  await sleep(80);
  assert.is(pool.maxRetainedBytes, 4 << 20, "b's part");
  assert.is(pool.stats.bytesRetained, 4 << 20);
});

test('retainedFor: 2 x the buffered bytes + 16 MiB, at most 256 MiB', () => {
  assert.is(retainedFor(8 << 20), 32 << 20);
  assert.is(retainedFor(100 << 20), 216 << 20);
  assert.is(retainedFor(1 << 30), 256 << 20);
});

test.run();
