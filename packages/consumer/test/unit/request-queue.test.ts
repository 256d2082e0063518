// The request queue's throttle hold (KIP-219) against a clock that moves while the queue works:
// whatever millisecond the throttle's end falls on, a held request is sent when it ends.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Metadata } from '@kwire/protocol';
import { resolveConnectionConfig } from '../../src/connection/options.js';
import { RequestQueue, type RequestQueueHost } from '../../src/connection/request-queue.js';

function queue(): { q: RequestQueue; written: Buffer[] } {
  const written: Buffer[] = [];
  const host: RequestQueueHost = {
    broker: '127.0.0.1:9092',
    nodeId: 1,
    sending: () => true,
    write: (bytes) => written.push(bytes),
    version: () => 12,
    timedOut: () => {},
    dequeued: () => {},
  };
  return { q: new RequestQueue(host, resolveConnectionConfig({ requestTimeoutMs: 5_000 })), written };
}

test('a request held by a throttle is sent when it ends, whichever millisecond the clock crosses it on', async () => {
  const realNow = Date.now;
  try {
    // Each reading of the clock is 1 ms after the one before, starting `lead` ms before the
    // throttle's end: the end falls between two of the queue's readings, at every place in turn.
    for (let lead = 1; lead <= 6; lead++) {
      let now = 1_000_000;
      Date.now = () => now;
      const { q, written } = queue();
      q.throttle(300, Metadata);
      now = 1_000_000 + 300 - lead;
      Date.now = () => now++;
      const answered = q.submit(Metadata, { topics: [] }, {});
      answered.catch(() => {});
      // Real time: the queue's timers run on it, and this clock is already past the end.
      const deadline = realNow() + 1_000;
      while (written.length === 0 && realNow() < deadline) await new Promise((r) => setTimeout(r, 5));
      assert.is(written.length, 1, `held ${lead} ms before the throttle's end: not sent within 1 s`);
      q.drain();
    }
  } finally {
    Date.now = realNow;
  }
});

test('a request held by a re-authentication is sent only once it is released and flushed', async () => {
  const { q, written } = queue();
  q.holdForAuth();
  const answered = q.submit(Metadata, { topics: [] }, {});
  answered.catch(() => {});
  await new Promise((r) => setTimeout(r, 30));
  assert.is(written.length, 0);
  assert.is(q.queued, 1);
  q.releaseAuth();
  q.flush();
  assert.is(written.length, 1);
  q.drain();
});

test.run();
