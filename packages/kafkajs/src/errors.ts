// How kwire's errors become kafkajs's (error-classes.ts): by class and `retriable` as kafkajs would
// have thrown them, with the kwire error as `cause`.
import {
  AuthenticationError,
  BrokerResponseError,
  ClosedError,
  ConfigError,
  ConnectionError,
  CorruptRecordError,
  Kip848UnavailableError,
  OffsetOutOfRangeError,
  RequestTimeoutError,
  UsageError,
  isKafkaError,
} from '@kwire/consumer';
import {
  type KafkaJSConnectionClosedError,
  KafkaJSConnectionError,
  KafkaJSError,
  KafkaJSNonRetriableError,
  KafkaJSOffsetOutOfRange,
  KafkaJSRequestTimeoutError,
  KafkaJSSASLAuthenticationError,
} from './error-classes.js';
import { createErrorFromCode, upstream } from './upstream.js';

export type KafkaJSErrorInstance = InstanceType<typeof upstream.KafkaJSError>;
/** kafkajs's error constructors as they are at run time (error-classes.ts; its types omit the metadata argument of some). */
type ErrorClass = typeof KafkaJSConnectionClosedError;

/** What kafkajs's retrier makes of an error it must not retry: a KafkaJSNonRetriableError with the error as cause. */
export function nonRetriable(error: Error): KafkaJSErrorInstance {
  return new (KafkaJSNonRetriableError as unknown as ErrorClass)(error, { cause: (error as { cause?: unknown }).cause ?? error });
}

/** Names of the errors kafkajs's retrier never retries (src/retry/index.js). */
const UNRECOVERABLE = new Set(['RangeError', 'ReferenceError', 'SyntaxError', 'TypeError']);

/** Whether kafkajs's retrier would retry after this error (an application's error included). */
export function retriableForKafkaJS(error: unknown): boolean {
  if (error === null || typeof error !== 'object') return true;
  const e = error as { retriable?: unknown; name?: unknown };
  return e.retriable !== false && !UNRECOVERABLE.has(String(e.name));
}

/**
 * The kafkajs error for an error kwire raised: the class kafkajs has for that failure, its
 * `retriable`, and the kwire error as `cause`. kafkajs errors and anything not from kwire (an
 * application's own error) come back as they are.
 */
export function toKafkaJSError(error: unknown): Error {
  if (error instanceof KafkaJSError) return error;
  if (!(error instanceof Error)) return new KafkaJSError(String(error));
  if (!isKafkaError(error)) return error;
  const withCause = <E extends KafkaJSErrorInstance>(e: E): E => {
    Object.defineProperty(e, 'cause', { value: error, enumerable: false, writable: true, configurable: true });
    return e;
  };
  if (error instanceof OffsetOutOfRangeError) {
    const proto = createErrorFromCode(1);
    return withCause(new KafkaJSOffsetOutOfRange(proto, { topic: error.topic, partition: error.partition }));
  }
  if (error instanceof BrokerResponseError) {
    const proto = createErrorFromCode(error.errorCode);
    if (error.errorCode === 1) return withCause(new KafkaJSOffsetOutOfRange(proto, { topic: '', partition: -1 }));
    return withCause(proto);
  }
  if (error instanceof ConnectionError) {
    return withCause(new KafkaJSConnectionError(error.message, { broker: error.broker }));
  }
  if (error instanceof RequestTimeoutError) {
    return withCause(new KafkaJSRequestTimeoutError(error.message, { broker: '', clientId: '', correlationId: -1, createdAt: 0, sentAt: 0, pendingDuration: 0 }));
  }
  if (error instanceof AuthenticationError) return withCause(new (KafkaJSSASLAuthenticationError as unknown as ErrorClass)(error.message));
  if (error instanceof Kip848UnavailableError) return withCause(new KafkaJSNonRetriableError(error.message));
  if (error instanceof ConfigError || error instanceof UsageError || error instanceof ClosedError) return withCause(new KafkaJSNonRetriableError(error.message));
  if (error instanceof CorruptRecordError) return withCause(new KafkaJSNonRetriableError(error.message));
  return withCause(new KafkaJSError(error.message, { retriable: error.retriable }));
}
