/**
 * Reconnect backoff, as the Java client's ClusterConnectionStates does it: exponential from
 * reconnect.backoff.ms (default 50) doubling per consecutive failure up to reconnect.backoff.max.ms
 * (default 1000), each delay spread by +-20% jitter so that many clients that lost the same broker
 * do not come back in lockstep.
 */
export interface BackoffOptions {
  /** reconnect.backoff.ms */
  baseMs: number;
  /** reconnect.backoff.max.ms */
  maxMs: number;
  /** Relative spread of each delay, 0.2 = +-20%. */
  jitter?: number;
  random?: () => number;
}

/** The delay before attempt number `failures + 1`, after `failures` consecutive failures (>= 1). */
export function backoffDelay(failures: number, options: BackoffOptions): number {
  if (failures <= 0) return 0;
  const { baseMs, maxMs } = options;
  const jitter = options.jitter ?? 0.2;
  const random = options.random ?? Math.random;
  // 2^(failures-1), capped before it can overflow to Infinity.
  const exp = baseMs * 2 ** Math.min(failures - 1, 30);
  const spread = 1 - jitter + 2 * jitter * random();
  return Math.max(0, Math.round(Math.min(exp, maxMs) * spread));
}

/** Failure bookkeeping for one connection target. */
export class Backoff {
  private failures = 0;
  private notBefore = 0;
  private readonly options: BackoffOptions;

  constructor(options: BackoffOptions) {
    this.options = options;
  }

  get consecutiveFailures(): number {
    return this.failures;
  }

  /** Milliseconds to wait before the next attempt may start (0 when it may start now). */
  remaining(now = Date.now()): number {
    return Math.max(0, this.notBefore - now);
  }

  /** Records a failed attempt; returns the delay imposed on the next one. */
  fail(now = Date.now(), atLeastMs = 0): number {
    this.failures++;
    const delay = Math.max(atLeastMs, backoffDelay(this.failures, this.options));
    this.notBefore = now + delay;
    return delay;
  }

  /** A successful attempt: the next failure starts again from the base delay. */
  succeed(): void {
    this.failures = 0;
    this.notBefore = 0;
  }
}
