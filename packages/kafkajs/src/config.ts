// kafkajs's configuration (the Kafka client's and the consumer's) as kwire's consumer takes it,
// with kafkajs's defaults where they differ from kwire's.
import type { Assignor, ConsumerConfig as KwireConsumerConfig, Logger as KwireLogger, SaslConfig } from '@kwire/consumer';
import type { ConsumerConfig as KafkaJSConsumerConfig, KafkaConfig, Logger, RetryOptions } from 'kafkajs-upstream';
import { KafkaJSNonRetriableError } from './error-classes.js';

/**
 * Options of @kwire/kafkajs's own, beyond kafkajs's: what kwire offers that kafkajs has no
 * option for. `consumer({ groupId, kwire: { groupProtocol: 'consumer' } })`.
 */
export interface KwireOptions {
  /** 'classic' (JoinGroup/SyncGroup, kafkajs's protocol, the default) or 'consumer' (KIP-848: the broker assigns, no stop-the-world rebalances). */
  groupProtocol?: 'classic' | 'consumer';
  /** With groupProtocol 'consumer': the broker-side assignor ('uniform', 'range'); the broker's default when unset. */
  groupRemoteAssignor?: string;
  /**
   * Classic groups: kwire's assignors by name ('range', 'roundrobin', 'sticky',
   * 'cooperative-sticky') or kwire Assignor objects, used instead of `partitionAssigners`.
   * ['cooperative-sticky'] gives incremental rebalances: members keep their partitions while
   * the group rebalances.
   */
  partitionAssignmentStrategy?: readonly (string | Assignor)[];
  /** group.instance.id: static membership (a restart within sessionTimeout keeps the partitions). */
  groupInstanceId?: string;
  /** How long disconnect() and stop() may take at most (default 30000 ms): what is not done by then is reported and cut off. */
  closeTimeoutMs?: number;
  /**
   * 'owned' (the default): messages' Buffers (key, value, header values) are the application's to
   * keep, as in kafkajs. 'pooled': they are views of memory kwire reuses once the handler's batch is
   * done, valid until your eachMessage/eachBatch handler's promise settles (copy with
   * Buffer.from() to keep one longer): no fresh memory per Fetch answer, faster where records are
   * large (the bench's kwire-kafkajs@pooled row). A Buffer kept past its handler then shows other
   * records' bytes: only for handlers that do not keep them.
   */
  recordBuffers?: 'owned' | 'pooled';
}

export interface ConsumerConfig extends KafkaJSConsumerConfig {
  kwire?: KwireOptions;
}

export type RetryConfig = RetryOptions & { restartOnFailure?: (err: Error) => Promise<boolean> };

/** kafkajs's retry defaults (src/retry/defaults.js). */
export const RETRY_DEFAULTS = { maxRetryTime: 30_000, initialRetryTime: 300, factor: 0.2, multiplier: 2, retries: 5 } as const;

/** kafkajs's consumer defaults (src/consumer/index.js). */
export const CONSUMER_DEFAULTS = {
  sessionTimeout: 30_000,
  rebalanceTimeout: 60_000,
  heartbeatInterval: 3_000,
  maxBytesPerPartition: 1_048_576,
  minBytes: 1,
  maxBytes: 10_485_760,
  maxWaitTimeInMs: 5_000,
  metadataMaxAge: 300_000,
} as const;

function nonNegative(value: unknown, name: string, fallback: number): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new KafkaJSNonRetriableError(`Invalid ${name}: expected a non-negative number, received ${String(value)}`);
  }
  return value;
}

/** kafkajs's `sasl` as kwire takes it: plain, scram-sha-256/512 and oauthbearer; others are refused by name. */
export function saslOf(sasl: KafkaConfig['sasl']): SaslConfig | undefined {
  if (sasl === undefined || sasl === null) return undefined;
  if (typeof sasl !== 'object') throw new KafkaJSNonRetriableError(`Invalid sasl: expected an object, received ${typeof sasl}`);
  const mechanism = String((sasl as { mechanism?: unknown }).mechanism ?? '').toLowerCase();
  if ('authenticationProvider' in sasl) {
    throw new KafkaJSNonRetriableError(
      `SASL mechanism ${mechanism}: custom authentication providers are not supported by @kwire/kafkajs's consumer (plain, scram-sha-256, scram-sha-512 and oauthbearer are)`,
    );
  }
  if (mechanism === 'plain' || mechanism === 'scram-sha-256' || mechanism === 'scram-sha-512') {
    const { username, password } = sasl as { username?: unknown; password?: unknown };
    if (typeof username !== 'string' || typeof password !== 'string') {
      throw new KafkaJSNonRetriableError(`SASL ${mechanism.toUpperCase()}: Missing username or password`);
    }
    return { mechanism, username, password };
  }
  if (mechanism === 'oauthbearer') {
    const provider = (sasl as { oauthBearerProvider?: unknown }).oauthBearerProvider;
    if (typeof provider !== 'function') throw new KafkaJSNonRetriableError('SASL OAUTHBEARER: Missing OAuth bearer token provider');
    return { mechanism, oauthBearerProvider: provider as () => Promise<{ value: string }> };
  }
  throw new KafkaJSNonRetriableError(`SASL ${mechanism.toUpperCase()} mechanism is not supported by @kwire/kafkajs's consumer (plain, scram-sha-256, scram-sha-512 and oauthbearer are)`);
}

/** kafkajs's logger under kwire's Logger interface. */
export function kwireLogger(logger: Logger): KwireLogger {
  return {
    debug: (message, fields) => logger.debug(message, fields),
    info: (message, fields) => logger.info(message, fields),
    warn: (message, fields) => logger.warn(message, fields),
    error: (message, fields) => logger.error(message, fields),
  };
}

/** The client's settings and the consumer's options as kwire's configuration. */
export function kwireConfig(
  client: KafkaConfig,
  brokers: readonly string[],
  options: ConsumerConfig,
  retry: RetryConfig,
  logger: Logger,
  assignors: readonly (string | Assignor)[],
): KwireConsumerConfig {
  const o = options;
  const sessionTimeout = nonNegative(o.sessionTimeout, 'sessionTimeout', CONSUMER_DEFAULTS.sessionTimeout);
  const heartbeatInterval = nonNegative(o.heartbeatInterval, 'heartbeatInterval', CONSUMER_DEFAULTS.heartbeatInterval);
  if (heartbeatInterval >= sessionTimeout) {
    throw new KafkaJSNonRetriableError(
      `Consumer heartbeatInterval (${heartbeatInterval}) must be lower than sessionTimeout (${sessionTimeout}). It is recommended to set heartbeatInterval to approximately a third of the sessionTimeout.`,
    );
  }
  const kw = o.kwire ?? {};
  const initialRetryTime = nonNegative(retry.initialRetryTime, 'retry.initialRetryTime', RETRY_DEFAULTS.initialRetryTime);
  const config: KwireConsumerConfig = {
    bootstrapServers: brokers,
    clientId: client.clientId ?? 'kafkajs',
    groupId: o.groupId,
    sessionTimeoutMs: sessionTimeout,
    heartbeatIntervalMs: heartbeatInterval,
    // kafkajs's rebalanceTimeout is what JoinGroup carries: Java's (and kwire's) max.poll.interval.ms.
    maxPollIntervalMs: nonNegative(o.rebalanceTimeout, 'rebalanceTimeout', CONSUMER_DEFAULTS.rebalanceTimeout),
    fetchMinBytes: nonNegative(o.minBytes, 'minBytes', CONSUMER_DEFAULTS.minBytes),
    fetchMaxBytes: nonNegative(o.maxBytes, 'maxBytes', CONSUMER_DEFAULTS.maxBytes),
    fetchMaxWaitMs: nonNegative(o.maxWaitTimeInMs, 'maxWaitTimeInMs', CONSUMER_DEFAULTS.maxWaitTimeInMs),
    // kafkajs reads committed data unless told otherwise (readUncommitted: false).
    isolationLevel: o.readUncommitted === true ? 'read_uncommitted' : 'read_committed',
    metadataMaxAgeMs: nonNegative(o.metadataMaxAge, 'metadataMaxAge', CONSUMER_DEFAULTS.metadataMaxAge),
    requestTimeoutMs: nonNegative(client.requestTimeout, 'requestTimeout', 30_000),
    socketConnectionSetupTimeoutMs: nonNegative(client.connectionTimeout, 'connectionTimeout', 1_000),
    retryBackoffMs: Math.max(1, initialRetryTime),
    retryBackoffMaxMs: Math.max(1, nonNegative(retry.maxRetryTime, 'retry.maxRetryTime', RETRY_DEFAULTS.maxRetryTime)),
    // kafkajs hands each fetch's records of a partition as one batch: no cap of kwire's 500.
    maxPollRecords: 100_000,
    // kafkajs's Buffers are the application's to keep: answers in memory that is never reused, so
    // messages are views of it (no copy of the records' bytes).
    recordBuffers: recordBuffersOf(kw.recordBuffers),
    enableAutoCommit: true,
    autoOffsetReset: 'latest',
    partitionAssignmentStrategy: assignors,
    logger: kwireLogger(logger),
  };
  // Unset, kafkajs's 1 MiB is kwire's default too, and kwire then lets a partition that is behind
  // ask for more (adaptive fetch sizes); set, it is obeyed exactly.
  if (o.maxBytesPerPartition !== undefined) config.maxPartitionFetchBytes = nonNegative(o.maxBytesPerPartition, 'maxBytesPerPartition', CONSUMER_DEFAULTS.maxBytesPerPartition);
  if (o.rackId) config.clientRack = o.rackId;
  if (client.ssl) config.ssl = client.ssl === true ? true : client.ssl;
  const sasl = saslOf(client.sasl);
  if (sasl) config.sasl = sasl;
  if (kw.groupProtocol !== undefined) config.groupProtocol = kw.groupProtocol;
  if (kw.groupRemoteAssignor !== undefined) config.groupRemoteAssignor = kw.groupRemoteAssignor;
  if (kw.groupInstanceId !== undefined) config.groupInstanceId = kw.groupInstanceId;
  return config;
}

function recordBuffersOf(v: unknown): 'owned' | 'pooled' {
  if (v === undefined || v === 'owned' || v === 'pooled') return v ?? 'owned';
  throw new KafkaJSNonRetriableError(`kwire.recordBuffers must be 'owned' (the default: Buffers the application may keep) or 'pooled' (valid until the handler settles), not ${JSON.stringify(v)}`);
}
