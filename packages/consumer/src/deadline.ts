import { RequestTimeoutError } from './errors.js';

/**
 * `promise`, or a RequestTimeoutError naming `what` once `deadline` (a Date.now() time) passes. The
 * promise itself goes on (its outcome is observed, never an unhandled rejection): what it waits on
 * is ended by whoever owns it (close() closes the connections).
 */
export function withDeadline<T>(promise: Promise<T>, deadline: number, what: string): Promise<T> {
  const ms = deadline - Date.now();
  if (ms === Infinity) return promise;
  promise.catch(() => {});
  if (ms <= 0) return Promise.reject(new RequestTimeoutError(`${what}: not done within its deadline`));
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new RequestTimeoutError(`${what}: not done within ${Math.round(ms)} ms`)), ms);
    promise.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}

/** Whether `promise` settled (either way) by `deadline`. Never rejects. */
export function settledBy(promise: Promise<unknown>, deadline: number): Promise<boolean> {
  const settled = promise.then(
    () => true,
    () => true,
  );
  const ms = deadline - Date.now();
  if (ms === Infinity) return settled;
  return new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), Math.max(0, ms));
    void settled.then(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** Milliseconds left until `deadline` (never negative). */
export function remaining(deadline: number): number {
  return Math.max(0, deadline - Date.now());
}
