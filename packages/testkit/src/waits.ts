// Waits that fail a test instead of hanging it. uvu has no per-test timeout: a promise that never
// settles, or a loop that reads until it has counted every record, would otherwise wait forever
// for one that was lost and hang the whole suite. For unit and integration suites alike.
import * as assert from 'uvu/assert';

/** `source`, item by item, failing the test when no item comes for `ms`. */
export async function* within<T>(source: AsyncIterable<T>, ms: number, what: string): AsyncGenerator<T> {
  const it = source[Symbol.asyncIterator]();
  try {
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      const expired = new Promise<'expired'>((resolve) => (timer = setTimeout(() => resolve('expired'), ms)));
      const next = await Promise.race([it.next(), expired]).finally(() => clearTimeout(timer));
      if (next === 'expired') throw new Error(`nothing arrived for ${ms} ms while waiting for ${what}`);
      if (next.done) return;
      yield next.value;
    }
  } finally {
    await it.return?.();
  }
}

/** Polls `cond` every `pollMs` until it holds; fails the test, naming `what`, after `ms`. */
export async function until(what: string, cond: () => boolean, ms = 60_000, pollMs = 100): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    assert.ok(Date.now() < deadline, `timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

/** `promise`, or a failure naming `what` once `ms` have passed without it settling. */
export function settlesWithin<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms)));
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}
