// kafkajs's retry policy (retries, initialRetryTime, factor, multiplier, maxRetryTime) for the
// operations it retries itself, such as connect(): a retriable failure is tried again after a
// growing, randomised wait, and when the retries run out the last error comes wrapped in
// KafkaJSNumberOfRetriesExceeded; a failure that is not retriable comes at once, as it is.
import { RETRY_DEFAULTS, type RetryConfig } from './config.js';
import { KafkaJSNumberOfRetriesExceeded } from './error-classes.js';
import { retriableForKafkaJS, toKafkaJSError } from './errors.js';

function randomized(factor: number, time: number): number {
  const delta = factor * time;
  return Math.ceil(time - delta + Math.random() * 2 * delta);
}

/**
 * Runs `attempt` under kafkajs's retry policy. `wrap: false`: the last error comes as it is when
 * the retries run out (kafkajs's metadata refreshes), not in KafkaJSNumberOfRetriesExceeded.
 */
export async function withRetries<T>(retry: RetryConfig, attempt: () => Promise<T>, options: { wrap?: boolean } = {}): Promise<T> {
  const { retries, initialRetryTime, factor, multiplier, maxRetryTime } = { ...RETRY_DEFAULTS, ...retry };
  let retryTime = randomized(factor, initialRetryTime);
  for (let count = 0; ; count++) {
    try {
      return await attempt();
    } catch (err) {
      const e = toKafkaJSError(err);
      if (!retriableForKafkaJS(e)) throw e;
      if (count >= retries) throw options.wrap === false ? e : new KafkaJSNumberOfRetriesExceeded(e, { retryCount: count, retryTime });
      await new Promise((resolve) => setTimeout(resolve, retryTime));
      retryTime = Math.min(randomized(factor, retryTime) * multiplier, maxRetryTime);
    }
  }
}
