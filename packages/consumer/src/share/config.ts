import { resolveConfig, JAVA_NAMES, type ConsumerConfig, type ResolvedConfig } from '../config.js';
import { ConfigError } from '../errors.js';

/**
 * Share consumer configuration (KIP-932). Names are those of Java's KafkaShareConsumer, in
 * camelCase or dotted; the defaults are Java 4.4's. The options a share group decides on the broker
 * side (where a new group starts, the lock duration, the delivery-count limit, the heartbeat and
 * session timeouts: `share.auto.offset.reset`, `share.record.lock.duration.ms`, ... set with
 * kafka-configs on the group) are not client options, as in Java.
 */
export interface ShareConsumerConfig
  extends Pick<
    ConsumerConfig,
    | 'bootstrapServers'
    | 'clientId'
    | 'keyDeserializer'
    | 'valueDeserializer'
    | 'fetchMinBytes'
    | 'fetchMaxWaitMs'
    | 'fetchMaxBytes'
    | 'maxPollRecords'
    | 'checkCrcs'
    | 'clientRack'
    | 'requestTimeoutMs'
    | 'socketConnectionSetupTimeoutMs'
    | 'reconnectBackoffMs'
    | 'reconnectBackoffMaxMs'
    | 'retryBackoffMs'
    | 'metadataMaxAgeMs'
    | 'ssl'
    | 'sasl'
    | 'yieldIntervalMs'
    | 'logger'
  > {
  /** group.id: the share group. Required. */
  groupId: string;
  /**
   * share.acknowledgement.mode: 'implicit' (default) accepts each record the application finished
   * when it asks for the next one (or commits, or closes); 'explicit' requires acknowledge() for
   * every record.
   */
  shareAcknowledgementMode?: 'implicit' | 'explicit';
  /**
   * share.acquire.mode: 'batch_optimized' (default) lets the broker acquire whole record batches,
   * possibly more than maxPollRecords; 'record_limit' never more than maxPollRecords per fetch.
   */
  shareAcquireMode?: 'batch_optimized' | 'record_limit';
  /** default.api.timeout.ms: the bound of commitSync() (default 60000). */
  defaultApiTimeoutMs?: number;
  /** The bound of close() (Java's close() default: 30 s). */
  closeTimeoutMs?: number;
}

export interface ResolvedShareConfig extends ResolvedConfig {
  groupId: string;
  shareAcknowledgementMode: 'implicit' | 'explicit';
  shareAcquireMode: 'batch_optimized' | 'record_limit';
  defaultApiTimeoutMs: number;
  closeTimeoutMs: number;
}

const SHARE_NAMES: Readonly<Record<string, string>> = {
  shareAcknowledgementMode: 'share.acknowledgement.mode',
  shareAcquireMode: 'share.acquire.mode',
  defaultApiTimeoutMs: 'default.api.timeout.ms',
};

/** Consumer options that mean nothing to a share consumer (the broker's group config decides). */
const NOT_FOR_SHARE = new Set([
  'groupInstanceId',
  'groupProtocol',
  'groupRemoteAssignor',
  'partitionAssignmentStrategy',
  'enableAutoCommit',
  'autoCommitIntervalMs',
  'autoOffsetReset',
  'heartbeatIntervalMs',
  'sessionTimeoutMs',
  'maxPollIntervalMs',
  'isolationLevel',
  'maxPartitionFetchBytes',
  'interceptors',
  'groupProtocolFallback',
]);

const FROM_JAVA = new Map([...Object.entries(JAVA_NAMES), ...Object.entries(SHARE_NAMES)].map(([camel, java]) => [java, camel]));

function int(raw: unknown, key: string, fallback: number, min: number): number {
  if (raw === undefined) return fallback;
  const v = typeof raw === 'string' && /^\d+$/.test(raw.trim()) ? Number(raw) : raw;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > 0x7fffffff) {
    throw new ConfigError(`${key} must be an integer from ${min} to ${0x7fffffff}, not ${JSON.stringify(raw)}`);
  }
  return v;
}

function oneOf<T extends string>(raw: unknown, key: string, allowed: readonly T[], fallback: T): T {
  if (raw === undefined) return fallback;
  if (typeof raw !== 'string' || !allowed.includes(raw as T)) throw new ConfigError(`${key} must be one of ${allowed.join(', ')}, not ${JSON.stringify(raw)}`);
  return raw as T;
}

/** Validates a share consumer configuration (camelCase or dotted Java names) and fills in defaults. */
export function resolveShareConfig(input: ShareConsumerConfig | Record<string, unknown>): ResolvedShareConfig {
  if (typeof input !== 'object' || input === null) throw new ConfigError('the share consumer needs a configuration object');
  const common: Record<string, unknown> = {};
  const share: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(input)) {
    const key = FROM_JAVA.get(k) ?? k;
    if (NOT_FOR_SHARE.has(key)) {
      throw new ConfigError(
        `${k} is not a share consumer option: a share group's ${key === 'autoOffsetReset' ? 'start offset (share.auto.offset.reset)' : 'settings'} are group configs on the broker (kafka-configs --entity-type groups)`,
      );
    }
    if (key in SHARE_NAMES || key === 'closeTimeoutMs') share[key] = v;
    else common[key] = v;
  }
  const base = resolveConfig(common);
  if (!base.groupId) throw new ConfigError('groupId (group.id) is required: the share group to join');
  return {
    ...base,
    groupId: base.groupId,
    shareAcknowledgementMode: oneOf(share.shareAcknowledgementMode, 'shareAcknowledgementMode (share.acknowledgement.mode)', ['implicit', 'explicit'] as const, 'implicit'),
    shareAcquireMode: oneOf(share.shareAcquireMode, 'shareAcquireMode (share.acquire.mode)', ['batch_optimized', 'record_limit'] as const, 'batch_optimized'),
    defaultApiTimeoutMs: int(share.defaultApiTimeoutMs, 'defaultApiTimeoutMs (default.api.timeout.ms)', 60_000, 1),
    closeTimeoutMs: int(share.closeTimeoutMs, 'closeTimeoutMs', 30_000, 0),
  };
}
