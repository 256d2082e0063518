// Shared by the unit and the integration suites. uvu has no per-test timeout: a promise that never
// settles would hang the whole suite instead of failing its test.

/** `promise`, or a failure naming `what` once `ms` have passed without it settling. */
export function settlesWithin<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms)));
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}
