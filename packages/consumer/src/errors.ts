import { errorFor, isKafkaProtocolError, KafkaProtocolError } from '@kwire/protocol';

/**
 * The consumer's errors: one class per kind of failure, each with a stable `code` and a
 * Symbol.for brand so that checks work across duplicate installs (`isKafkaError`). Protocol-level
 * failures (bad bytes) stay KafkaProtocolError from @kwire/protocol.
 */
const BRAND = Symbol.for('kwire.KafkaError');

/** The stable `code` of a kwire error (not to be confused with @kwire/protocol's table of Kafka's numeric error codes). */
export type KwireErrorCode =
  | 'KWIRE_CONNECTION'
  | 'KWIRE_TIMEOUT'
  | 'KWIRE_BROKER'
  | 'KWIRE_CONFIG'
  | 'KWIRE_USAGE'
  | 'KWIRE_AUTHENTICATION'
  | 'KWIRE_CLOSED'
  | 'KWIRE_OFFSET_OUT_OF_RANGE'
  | 'KWIRE_LOG_TRUNCATION'
  | 'KWIRE_DESERIALIZATION'
  | 'KWIRE_RECORD_RELEASED'
  | 'KWIRE_CORRUPT_RECORD';

export class KafkaError extends Error {
  override name = 'KafkaError';
  readonly code: KwireErrorCode;
  /** Retrying the same operation may succeed. */
  readonly retriable: boolean;

  constructor(code: KwireErrorCode, message: string, options: { cause?: unknown; retriable?: boolean } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.retriable = options.retriable ?? false;
  }

  get [BRAND](): true {
    return true;
  }
}

export function isKafkaError(value: unknown): value is KafkaError {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
}

/** A TCP/TLS connection could not be made or broke. Retriable: a new connection may work. */
export class ConnectionError extends KafkaError {
  override name = 'ConnectionError';
  readonly broker: string;
  constructor(broker: string, message: string, options: { cause?: unknown } = {}) {
    super('KWIRE_CONNECTION', `${broker}: ${message}`, { ...options, retriable: true });
    this.broker = broker;
  }
}

/** A request got no answer within its timeout (the connection is dropped: its stream is out of step). */
export class RequestTimeoutError extends KafkaError {
  override name = 'RequestTimeoutError';
  constructor(message: string) {
    super('KWIRE_TIMEOUT', message, { retriable: true });
  }
}

/** A broker answered with an error code. */
export class BrokerResponseError extends KafkaError {
  override name = 'BrokerResponseError';
  /** The Kafka error code, e.g. 6. */
  readonly errorCode: number;
  /** Its name, e.g. NOT_LEADER_OR_FOLLOWER. */
  readonly errorName: string;
  /** The client's metadata is stale: refresh it before retrying. */
  readonly invalidMetadata: boolean;
  constructor(errorCode: number, context: string, brokerMessage?: string | null) {
    const e = errorFor(errorCode);
    super('KWIRE_BROKER', `${context}: ${e.name} (${errorCode})${brokerMessage ? `: ${brokerMessage}` : ` - ${e.message}`}`, { retriable: e.retriable });
    this.errorCode = errorCode;
    this.errorName = e.name;
    this.invalidMetadata = e.invalidMetadata;
  }
}

/** A configuration value is missing, of the wrong type or out of range. */
export class ConfigError extends KafkaError {
  override name = 'ConfigError';
  constructor(message: string) {
    super('KWIRE_CONFIG', message);
  }
}

/**
 * A method was called with arguments it does not take, or at a moment it cannot be called (run()
 * twice, a partition that is not assigned): the program is wrong, not the configuration. The
 * message names what was met and, for a kafkajs or Java spelling, the kwire one.
 */
export class UsageError extends KafkaError {
  override name = 'UsageError';
  constructor(message: string) {
    super('KWIRE_USAGE', message);
  }
}

/** SASL or TLS authentication failed. Not retriable: the same credentials will fail again. */
export class AuthenticationError extends KafkaError {
  override name = 'AuthenticationError';
  constructor(message: string, options: { cause?: unknown } = {}) {
    super('KWIRE_AUTHENTICATION', message, options);
  }
}

/** The consumer or connection was closed while the operation was pending. */
export class ClosedError extends KafkaError {
  override name = 'ClosedError';
  constructor(what: string) {
    super('KWIRE_CLOSED', `${what} is closed`);
  }
}

/**
 * Fetched data of a partition that does not decode (CRC mismatch, malformed record). The position
 * stays where it was: the next read fetches and fails again, until the application seeks past.
 */
export class CorruptRecordError extends KafkaError {
  override name = 'CorruptRecordError';
  constructor(
    readonly topic: string,
    readonly partition: number,
    readonly offset: bigint,
    cause: unknown,
  ) {
    super('KWIRE_CORRUPT_RECORD', `${topic}-${partition}: corrupt data at or after offset ${offset}: ${(cause as Error)?.message ?? String(cause)}`, { cause });
  }
}

/** OFFSET_OUT_OF_RANGE with auto.offset.reset = none: the application must seek. */
export class OffsetOutOfRangeError extends KafkaError {
  override name = 'OffsetOutOfRangeError';
  constructor(
    readonly topic: string,
    readonly partition: number,
    readonly offset: bigint,
  ) {
    super('KWIRE_OFFSET_OUT_OF_RANGE', `${topic}-${partition}: offset ${offset} is out of range and auto.offset.reset is none: seek to a valid offset`);
  }
}

/**
 * The partition's log was truncated below the consumer's position (an unclean leader election, or
 * a leader that lost records it had served), detected through OffsetForLeaderEpoch or a Fetch's
 * diverging epoch (KIP-320), with auto.offset.reset = none: records the consumer read may be gone
 * and others may take their offsets. The application decides: seek to `divergentOffset` (the first
 * offset known to diverge) to read what the log holds now, or elsewhere.
 */
export class LogTruncationError extends KafkaError {
  override name = 'LogTruncationError';
  constructor(
    readonly topic: string,
    readonly partition: number,
    /** Where the consumer was. */
    readonly offset: bigint,
    /** The end of the last leader epoch the consumer and the log agree on. */
    readonly divergentOffset: bigint,
  ) {
    super(
      'KWIRE_LOG_TRUNCATION',
      `${topic}-${partition}: the log was truncated to ${divergentOffset} below the position ${offset} and auto.offset.reset is none: seek to ${divergentOffset} (or elsewhere) to go on`,
    );
  }
}

/**
 * A record's key or value could not be deserialized. With deserializationErrorPolicy 'stop' (the
 * default) its partition is paused and nothing is committed past it: seek past the record
 * (`offset + 1n`) or fix the deserializer, then resume().
 */
export class DeserializationError extends KafkaError {
  override name = 'DeserializationError';
  constructor(
    readonly topic: string,
    readonly partition: number,
    readonly offset: bigint,
    readonly part: 'key' | 'value',
    cause: unknown,
  ) {
    super('KWIRE_DESERIALIZATION', `${topic}-${partition} offset ${offset}: the ${part} does not deserialize: ${(cause as Error)?.message ?? String(cause)}`, { cause });
  }
}

export { isKafkaProtocolError, KafkaProtocolError };
