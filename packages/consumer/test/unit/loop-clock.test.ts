// The loop clock (streams' yields): a stream steps out once the event loop has not run its timers
// for the interval, whatever phase it is delivering in; the clock's 1 ms timer runs only while
// streams deliver.
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loopClock, yieldToLoop } from '../../src/loop-clock.js';

function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {}
}

const running = () => (loopClock as unknown as { timer: unknown }).timer !== undefined;
/** When the clock's tick last ran (performance.now()). */
const lastTick = () => (loopClock as unknown as { lastTick: number }).lastTick;

test('not due when it starts, due after the interval without timers, not due once they ran', async () => {
  await sleep(150); // any clock of an earlier test stopped
  assert.is(running(), false);
  assert.is(loopClock.due(1), false, 'the first delivery starts the clock');
  assert.is(running(), true);
  spin(3);
  // Synchronous work: no timer could run, so the loop's timers are 3 ms behind.
  assert.is(loopClock.due(1), true);
  assert.is(loopClock.due(1_000), false, 'a longer interval is not over yet');
  const slept = performance.now();
  await sleep(3);
  // The timers phase that ran this sleep's timer ran the clock's overdue tick too.
  assert.ok(lastTick() >= slept, 'the tick ran while the loop ran its timers');
});

test('a yield from the check phase lets the timers run before the stream goes on', async () => {
  loopClock.due(1);
  // As a reader resumed by setImmediate would: deliver past the interval, then step out.
  await yieldToLoop();
  spin(2);
  assert.is(loopClock.due(1), true);
  const yielded = performance.now();
  await yieldToLoop();
  assert.ok(lastTick() >= yielded, 'the next iteration ran the timers first');
});

test('the clock stops when nothing has been delivered for a while', async () => {
  loopClock.due(1);
  assert.is(running(), true);
  await sleep(200);
  assert.is(running(), false, 'an idle consumer keeps no 1 ms timer');
});

test.run();
