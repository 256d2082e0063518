import type { ConnectionOptions as TlsOptions } from 'node:tls';
import { ConfigError } from './errors.js';
import { fromSecurityProperties } from './security-properties.js';
import { defaultLogger, type Logger } from './logger.js';
import { withRedaction } from './connection/secrets.js';
import { hintFor } from './spelling.js';
import { DEFAULT_MAX_DECOMPRESSED_BYTES } from '@kwire/protocol';

/**
 * The most a partition's max.partition.fetch.bytes grows to when the user has not set it
 * (fetch/fetch-sizes.ts). 4 MiB: the bench's fixed 4 MiB (2026-12-04) gave 8-22% more records/s
 * than 1 MiB at 100 B-10 KB records; nothing larger was measured. Here rather than in fetch/,
 * because the default of maxBufferedBytesPerPartition follows it.
 */
export const MAX_ADAPTIVE_PARTITION_FETCH_BYTES = 4 * 1024 * 1024;

/**
 * Whether fetch sizes adapt: max.partition.fetch.bytes left unset, and answers read into pooled
 * memory (with recordBuffers 'owned' each answer is fresh memory, and larger answers cost more in
 * page faults than the round trips they save).
 */
export function adaptsFetchSizes(config: { maxPartitionFetchBytesExplicit: boolean; recordBuffers: 'pooled' | 'owned' }): boolean {
  return !config.maxPartitionFetchBytesExplicit && config.recordBuffers === 'pooled';
}

/**
 * Consumer configuration. Names are the Java consumer's, in camelCase (fetch.max.wait.ms ->
 * fetchMaxWaitMs); the dotted Java names are accepted too, so a properties file can be passed as
 * it is. Defaults are the Java client's. See the README for the full mapping.
 */
/**
 * How keys or values are read: the bytes as they are ('buffer'), UTF-8 text ('string'), JSON, or a
 * function (Java's Deserializer.deserialize(topic, headers, data)), which may be async. JSON and
 * functions run before a batch is delivered, so that a failure is met with the record's context and
 * the deserializationErrorPolicy; 'buffer' and 'string' cannot fail and run when read.
 */
export type Deserializer<T = unknown> = 'buffer' | 'string' | 'json' | ((data: Buffer | null, context: DeserializerContext) => T | Promise<T>);

/**
 * What a deserializer gives: Buffer | null for 'buffer' (and when none is set), string | null for
 * 'string' (a null key or value stays null), unknown for 'json', and a function's return type,
 * awaited. Anything else (a setting typed only as Deserializer, say) is unknown.
 */
export type Deserialized<D> = [D] extends [undefined] | ['buffer'] ? Buffer | null : [D] extends ['string'] ? string | null : D extends (...args: never[]) => infer R ? Awaited<R> : unknown;

/**
 * The key type of the records of a consumer with this configuration (camelCase or dotted name).
 * A configuration typed only as ConsumerConfig says nothing of its deserializer: unknown.
 */
export type DeserializedKey<C> = 'keyDeserializer' extends keyof C
  ? Deserialized<C['keyDeserializer' & keyof C]>
  : 'key.deserializer' extends keyof C
    ? Deserialized<C['key.deserializer' & keyof C]>
    : Buffer | null;

/** The value type of the records of a consumer with this configuration (camelCase or dotted name). */
export type DeserializedValue<C> = 'valueDeserializer' extends keyof C
  ? Deserialized<C['valueDeserializer' & keyof C]>
  : 'value.deserializer' extends keyof C
    ? Deserialized<C['value.deserializer' & keyof C]>
    : Buffer | null;

export interface DeserializerContext {
  topic: string;
  partition: number;
  /** 'key' or 'value' */
  part: 'key' | 'value';
  /** The record's headers (views into the batch, valid while it is). */
  headers: readonly { key: string; value: Buffer | null }[];
}

/** A partition's committed position, as interceptors see it. */
export interface CommittedPosition {
  topic: string;
  partition: number;
  offset: bigint;
  /** The records finished beyond the offset (run() with maxConcurrency; finished-metadata.ts), or null. */
  metadata?: string | null;
}

export interface ConsumerInterceptor {
  /** Called with each batch before the application sees it; may return a filtered list of records. */
  onConsume?(records: readonly unknown[], context: { topic: string; partition: number }): readonly unknown[] | void;
  /** Called after offsets are committed (groups). */
  onCommit?(offsets: CommittedPosition[]): void;
  close?(): void;
}

export type SaslConfig =
  | { mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512'; username: string; password: string }
  | { mechanism: 'oauthbearer'; oauthBearerProvider: () => Promise<{ value: string; lifetimeMs?: number; extensions?: Record<string, string> }> };

export interface ConsumerConfig {
  /** bootstrap.servers: "host:port,host:port" or a list. Required. */
  bootstrapServers: string | readonly string[];
  /** client.id */
  clientId?: string;
  /** group.id: consumer groups (subscribe) need it; manual assignment does not. */
  groupId?: string;
  /** group.instance.id: static membership. */
  groupInstanceId?: string;
  /** group.protocol: 'classic' (JoinGroup/SyncGroup, the default) or 'consumer' (KIP-848). */
  groupProtocol?: 'classic' | 'consumer';
  /** With groupProtocol 'consumer' on a broker without KIP-848: use classic instead of failing. */
  groupProtocolFallback?: boolean;
  /** group.remote.assignor: the broker-side assignor for KIP-848 groups ('uniform', 'range'); broker default when unset. */
  groupRemoteAssignor?: string;
  /**
   * partition.assignment.strategy: assignor names ('range', 'roundrobin', 'sticky',
   * 'cooperative-sticky') or Assignor objects, in order of preference. Default, as Java:
   * ['range', 'cooperative-sticky'] (eager rebalances: every assignor must be cooperative for
   * cooperative ones).
   */
  partitionAssignmentStrategy?: readonly (string | import('./group/assignors/index.js').Assignor)[];
  /** key.deserializer (default 'buffer') */
  keyDeserializer?: Deserializer;
  /** value.deserializer (default 'buffer') */
  valueDeserializer?: Deserializer;
  /** enable.auto.commit (default true) */
  enableAutoCommit?: boolean;
  /** auto.commit.interval.ms (default 5000) */
  autoCommitIntervalMs?: number;
  /** auto.offset.reset: where to start without a committed offset, or when the offset is out of range (default 'latest'). */
  autoOffsetReset?: 'latest' | 'earliest' | 'none';
  /** heartbeat.interval.ms (default 3000) */
  heartbeatIntervalMs?: number;
  /** session.timeout.ms (default 45000) */
  sessionTimeoutMs?: number;
  /** max.poll.interval.ms (default 300000) */
  maxPollIntervalMs?: number;
  /** fetch.min.bytes (default 1) */
  fetchMinBytes?: number;
  /** fetch.max.wait.ms (default 500) */
  fetchMaxWaitMs?: number;
  /** fetch.max.bytes (default 52428800) */
  fetchMaxBytes?: number;
  /**
   * max.partition.fetch.bytes (default 1048576). Unset, a partition whose answers come back full
   * asks for more, up to 4 MiB, and for 1048576 again once caught up (README, "Fetch sizes");
   * set, every Fetch asks for exactly this.
   */
  maxPartitionFetchBytes?: number;
  /** max.poll.records: the most records in one delivered batch (default 500) */
  maxPollRecords?: number;
  /** isolation.level (default 'read_uncommitted') */
  isolationLevel?: 'read_uncommitted' | 'read_committed';
  /** check.crcs (default true) */
  checkCrcs?: boolean;
  /** client.rack: for fetching from the closest replica (KIP-392). */
  clientRack?: string;
  /** request.timeout.ms (default 30000) */
  requestTimeoutMs?: number;
  /** socket.connection.setup.timeout.ms (default 10000) */
  socketConnectionSetupTimeoutMs?: number;
  /** reconnect.backoff.ms (default 50) */
  reconnectBackoffMs?: number;
  /** reconnect.backoff.max.ms (default 1000) */
  reconnectBackoffMaxMs?: number;
  /** retry.backoff.ms (default 100) */
  retryBackoffMs?: number;
  /** retry.backoff.max.ms (default 1000): the longest of the growing waits before a retry */
  retryBackoffMaxMs?: number;
  /**
   * (kwire) What a record whose key or value fails to deserialize leads to: 'stop' (default) pauses
   * its partition and throws a DeserializationError from the stream, nothing committed past it;
   * 'skip' leaves it out, emits 'deserialization-error' and goes on.
   */
  deserializationErrorPolicy?: 'stop' | 'skip';
  /** metadata.max.age.ms (default 300000) */
  metadataMaxAgeMs?: number;
  /** interceptor.classes, as objects */
  interceptors?: readonly ConsumerInterceptor[];
  /** TLS: true for defaults, or node:tls options (ca, cert, key, servername, rejectUnauthorized). */
  ssl?: boolean | TlsOptions;
  sasl?: SaslConfig;
  /** Bytes buffered per partition before it is left out of fetches (decompressed; default: 4 x maxPartitionFetchBytes when that is set or recordBuffers is 'owned', else 4 x 4 MiB). */
  maxBufferedBytesPerPartition?: number;
  /** Bytes buffered over all partitions before fetching pauses (decompressed; default: 2 x fetchMaxBytes). */
  maxBufferedBytes?: number;
  /**
   * Streams delivering batch after batch from their buffers step out to the event loop once it has
   * not run its timers for this many milliseconds (default 1; all streams of the process together),
   * so that timers and sockets keep running under full load.
   */
  yieldIntervalMs?: number;
  /**
   * The most bytes of metadata a commit carries (default 4096, the broker's offset.metadata.max.bytes;
   * set it to the broker's value if that was changed). run() with maxConcurrency writes there the
   * records finished beyond the commit point, and keeps a partition's unfinished span within what
   * fits (at 4096: 24,000 offsets).
   */
  commitMetadataMaxBytes?: number;
  /**
   * The most one record batch may decompress to (default 64 MiB). A batch over it fails its
   * partition with a CorruptRecordError naming this option; the memory is never taken.
   */
  maxDecompressedBytes?: number;
  /**
   * Whose memory records' bytes live in. 'pooled' (the default): Fetch answers and decompression
   * output come from a pool and are reused once their batch is released (the lifetime rule in the
   * README). 'owned': every answer and decompression output gets memory of its own that is never
   * reused, so Buffers taken from records (key, value, header values, and views made of them) stay
   * valid for as long as the application holds them, as kafkajs's do; records themselves still
   * follow the lifetime rule. Costs fresh memory for every answer, and the garbage collection that
   * goes with it (the bench's kwire-owned row).
   */
  recordBuffers?: 'pooled' | 'owned';
  logger?: Logger;
}

/** The dotted Java name of each option, for error messages, docs and accepting Java-style configs. */
export const JAVA_NAMES: Readonly<Record<string, string>> = {
  bootstrapServers: 'bootstrap.servers',
  clientId: 'client.id',
  groupId: 'group.id',
  groupInstanceId: 'group.instance.id',
  groupProtocol: 'group.protocol',
  groupRemoteAssignor: 'group.remote.assignor',
  partitionAssignmentStrategy: 'partition.assignment.strategy',
  keyDeserializer: 'key.deserializer',
  valueDeserializer: 'value.deserializer',
  enableAutoCommit: 'enable.auto.commit',
  autoCommitIntervalMs: 'auto.commit.interval.ms',
  autoOffsetReset: 'auto.offset.reset',
  heartbeatIntervalMs: 'heartbeat.interval.ms',
  sessionTimeoutMs: 'session.timeout.ms',
  maxPollIntervalMs: 'max.poll.interval.ms',
  fetchMinBytes: 'fetch.min.bytes',
  fetchMaxWaitMs: 'fetch.max.wait.ms',
  fetchMaxBytes: 'fetch.max.bytes',
  maxPartitionFetchBytes: 'max.partition.fetch.bytes',
  maxPollRecords: 'max.poll.records',
  isolationLevel: 'isolation.level',
  checkCrcs: 'check.crcs',
  clientRack: 'client.rack',
  requestTimeoutMs: 'request.timeout.ms',
  socketConnectionSetupTimeoutMs: 'socket.connection.setup.timeout.ms',
  reconnectBackoffMs: 'reconnect.backoff.ms',
  reconnectBackoffMaxMs: 'reconnect.backoff.max.ms',
  retryBackoffMs: 'retry.backoff.ms',
  retryBackoffMaxMs: 'retry.backoff.max.ms',
  metadataMaxAgeMs: 'metadata.max.age.ms',
  interceptors: 'interceptor.classes',
};

const FROM_JAVA = new Map(Object.entries(JAVA_NAMES).map(([camel, java]) => [java, camel]));

/** Options of kwire's own, without a Java name. */
export const KWIRE_OPTIONS: readonly string[] = [
  'ssl',
  'sasl',
  'maxBufferedBytesPerPartition',
  'maxBufferedBytes',
  'yieldIntervalMs',
  'commitMetadataMaxBytes',
  'groupProtocolFallback',
  'logger',
  'deserializationErrorPolicy',
  'maxDecompressedBytes',
  'recordBuffers',
];

/** Where options that are not configuration go, for a message naming the place. */
const ELSEWHERE: Readonly<Record<string, string>> = {
  eachMessage: 'a run() option: consumer.run({ eachMessage })',
  eachBatch: 'a run() option: consumer.run({ eachBatch })',
  eachBatchAutoResolve: 'a run() option: consumer.run({ eachBatch, eachBatchAutoResolve })',
  onFailure: 'a run() option: consumer.run({ eachMessage, onFailure })',
  topics: 'a subscribe() option: consumer.subscribe({ topics })',
  pattern: 'a subscribe() option: consumer.subscribe({ pattern })',
};

/** Why a key is refused: a kafkajs or Java spelling with the kwire one, a misplaced option, or a near miss. */
function unknownOption(key: string): string {
  const what = `unknown configuration option ${JSON.stringify(key)}`;
  if (Object.hasOwn(ELSEWHERE, key)) return `${what}: it is ${ELSEWHERE[key]}`;
  return what + hintFor(key, [...Object.keys(JAVA_NAMES), ...Object.values(JAVA_NAMES), ...KWIRE_OPTIONS], (c) => name(FROM_JAVA.get(c) ?? c));
}

export interface ResolvedConfig {
  bootstrapServers: { host: string; port: number }[];
  clientId: string;
  groupId: string | undefined;
  groupInstanceId: string | undefined;
  groupProtocol: 'classic' | 'consumer';
  groupProtocolFallback: boolean;
  groupRemoteAssignor: string | undefined;
  partitionAssignmentStrategy: readonly (string | import('./group/assignors/index.js').Assignor)[];
  keyDeserializer: Deserializer;
  valueDeserializer: Deserializer;
  enableAutoCommit: boolean;
  autoCommitIntervalMs: number;
  autoOffsetReset: 'latest' | 'earliest' | 'none';
  heartbeatIntervalMs: number;
  sessionTimeoutMs: number;
  maxPollIntervalMs: number;
  fetchMinBytes: number;
  fetchMaxWaitMs: number;
  fetchMaxBytes: number;
  maxPartitionFetchBytes: number;
  /** The user set maxPartitionFetchBytes: Fetches ask for it exactly. Unset, each partition's size adapts from it. */
  maxPartitionFetchBytesExplicit: boolean;
  maxPollRecords: number;
  isolationLevel: 'read_uncommitted' | 'read_committed';
  checkCrcs: boolean;
  clientRack: string;
  requestTimeoutMs: number;
  socketConnectionSetupTimeoutMs: number;
  reconnectBackoffMs: number;
  reconnectBackoffMaxMs: number;
  retryBackoffMs: number;
  retryBackoffMaxMs: number;
  deserializationErrorPolicy: 'stop' | 'skip';
  metadataMaxAgeMs: number;
  interceptors: readonly ConsumerInterceptor[];
  ssl: boolean | TlsOptions;
  sasl: SaslConfig | undefined;
  maxBufferedBytesPerPartition: number;
  maxBufferedBytes: number;
  yieldIntervalMs: number;
  commitMetadataMaxBytes: number;
  maxDecompressedBytes: number;
  recordBuffers: 'pooled' | 'owned';
  logger: Logger;
}

function name(key: string): string {
  return JAVA_NAMES[key] ? `${key} (${JAVA_NAMES[key]})` : key;
}

function integer(config: Record<string, unknown>, key: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = config[key];
  if (raw === undefined) return fallback;
  // Properties files give strings: accept "500" as well as 500.
  const v = typeof raw === 'string' && /^-?\d+$/.test(raw.trim()) ? Number(raw) : raw;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw new ConfigError(`${name(key)} must be an integer from ${min} to ${max}, not ${JSON.stringify(raw)}`);
  }
  return v;
}

function bool(config: Record<string, unknown>, key: string, fallback: boolean): boolean {
  const raw = config[key];
  if (raw === undefined) return fallback;
  if (raw === true || raw === 'true') return true;
  if (raw === false || raw === 'false') return false;
  throw new ConfigError(`${name(key)} must be true or false, not ${JSON.stringify(raw)}`);
}

function oneOf<T extends string>(config: Record<string, unknown>, key: string, allowed: readonly T[], fallback: T): T {
  const raw = config[key];
  if (raw === undefined) return fallback;
  if (typeof raw !== 'string' || !allowed.includes(raw as T)) {
    throw new ConfigError(`${name(key)} must be one of ${allowed.join(', ')}, not ${JSON.stringify(raw)}`);
  }
  return raw as T;
}

function optionalString(config: Record<string, unknown>, key: string): string | undefined {
  const raw = config[key];
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== 'string' || raw.length === 0) throw new ConfigError(`${name(key)} must be a non-empty string`);
  return raw;
}

function deserializer(config: Record<string, unknown>, key: string): Deserializer {
  const raw = config[key];
  if (raw === undefined) return 'buffer';
  if (raw === 'buffer' || raw === 'string' || raw === 'json' || typeof raw === 'function') return raw as Deserializer;
  // A Java properties file names classes: say which kwire value is the same.
  const java = typeof raw === 'string' && /(?:String|ByteArray|ByteBuffer|Bytes)Deserializer$/.exec(raw)?.[0];
  const hint = java ? ` (Java's ${java} is ${java === 'StringDeserializer' ? "'string'" : "'buffer'"})` : '';
  throw new ConfigError(`${name(key)} must be 'buffer', 'string', 'json' or a function, not ${JSON.stringify(raw)}${hint}`);
}

function strategies(config: Record<string, unknown>): readonly (string | import('./group/assignors/index.js').Assignor)[] {
  const raw = config.partitionAssignmentStrategy;
  if (raw === undefined) return ['range', 'cooperative-sticky'];
  // A properties file gives "range,cooperative-sticky".
  const list =
    typeof raw === 'string'
      ? raw
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : raw;
  if (!Array.isArray(list) || list.length === 0) throw new ConfigError(`${name('partitionAssignmentStrategy')} must be a non-empty list of assignor names or objects`);
  for (const a of list) {
    if (typeof a === 'string') continue;
    if (typeof a !== 'object' || a === null || typeof (a as { name?: unknown }).name !== 'string' || typeof (a as { assign?: unknown }).assign !== 'function') {
      throw new ConfigError(`${name('partitionAssignmentStrategy')}: ${JSON.stringify(a)} is neither an assignor name nor an Assignor`);
    }
  }
  return list as (string | import('./group/assignors/index.js').Assignor)[];
}

export function parseBootstrap(value: unknown): { host: string; port: number }[] {
  const list = typeof value === 'string' ? value.split(',') : Array.isArray(value) ? value : undefined;
  if (!list || list.length === 0) throw new ConfigError('bootstrapServers (bootstrap.servers) is required: "host:port[,host:port...]"');
  return list.map((entry: unknown) => {
    const text = typeof entry === 'string' ? entry.trim() : '';
    // host:port, or [ipv6]:port
    const m = /^(?:\[([^\]]+)\]|([^:\s]+)):(\d{1,5})$/.exec(text);
    const port = m ? Number(m[3]) : NaN;
    if (!m || port < 1 || port > 65535) throw new ConfigError(`bootstrapServers (bootstrap.servers): ${JSON.stringify(entry)} is not host:port`);
    return { host: (m[1] ?? m[2])!, port };
  });
}

/** Validates a configuration (camelCase or dotted Java names) and fills in the defaults. */
export function resolveConfig(input: ConsumerConfig | Record<string, unknown>): ResolvedConfig {
  if (typeof input !== 'object' || input === null) throw new ConfigError('the consumer needs a configuration object');
  const config: Record<string, unknown> = {};
  // security.protocol, sasl.jaas.config, ssl.*.location... (as pasted from a properties file) become ssl / sasl.
  for (const [k, v] of Object.entries(fromSecurityProperties(input as Record<string, unknown>))) {
    const key = FROM_JAVA.get(k) ?? k;
    if (!Object.hasOwn(JAVA_NAMES, key) && !KWIRE_OPTIONS.includes(key)) throw new ConfigError(unknownOption(k));
    if (key in config) throw new ConfigError(`${name(key)} is given twice (camelCase and dotted names)`);
    config[key] = v;
  }
  const fetchMaxBytes = integer(config, 'fetchMaxBytes', 52_428_800, 1, 0x7fffffff);
  const maxPartitionFetchBytes = integer(config, 'maxPartitionFetchBytes', 1_048_576, 1, 0x7fffffff);
  const maxPartitionFetchBytesExplicit = config.maxPartitionFetchBytes !== undefined;
  const recordBuffers = oneOf(config, 'recordBuffers', ['pooled', 'owned'] as const, 'pooled');
  const sessionTimeoutMs = integer(config, 'sessionTimeoutMs', 45_000, 1, 0x7fffffff);
  const heartbeatIntervalMs = integer(config, 'heartbeatIntervalMs', 3_000, 1, 0x7fffffff);
  if (heartbeatIntervalMs >= sessionTimeoutMs) {
    throw new ConfigError(`heartbeatIntervalMs (${heartbeatIntervalMs}) must be lower than sessionTimeoutMs (${sessionTimeoutMs})`);
  }
  const reconnectBackoffMs = integer(config, 'reconnectBackoffMs', 50, 0);
  const reconnectBackoffMaxMs = integer(config, 'reconnectBackoffMaxMs', 1_000, 0);
  if (config.interceptors !== undefined && !Array.isArray(config.interceptors)) throw new ConfigError('interceptors must be a list of objects');
  const sasl = config.sasl as SaslConfig | undefined;
  if (sasl !== undefined) {
    const m = (sasl as { mechanism?: unknown }).mechanism;
    if (m === 'oauthbearer') {
      if (typeof (sasl as { oauthBearerProvider?: unknown }).oauthBearerProvider !== 'function') throw new ConfigError('sasl oauthbearer needs an oauthBearerProvider function');
    } else if (m === 'plain' || m === 'scram-sha-256' || m === 'scram-sha-512') {
      const s = sasl as { username?: unknown; password?: unknown };
      // Never echo the values: they may be credentials.
      if (typeof s.username !== 'string' || typeof s.password !== 'string') throw new ConfigError(`sasl ${m} needs a username and a password (strings)`);
    } else {
      throw new ConfigError(`sasl.mechanism must be plain, scram-sha-256, scram-sha-512 or oauthbearer, not ${JSON.stringify(m)}`);
    }
  }
  const ssl = config.ssl ?? false;
  if (typeof ssl !== 'boolean' && (typeof ssl !== 'object' || ssl === null)) throw new ConfigError('ssl must be true, false or node:tls options');
  return {
    bootstrapServers: parseBootstrap(config.bootstrapServers),
    clientId: optionalString(config, 'clientId') ?? 'kwire',
    groupId: optionalString(config, 'groupId'),
    groupInstanceId: optionalString(config, 'groupInstanceId'),
    groupProtocol: oneOf(config, 'groupProtocol', ['classic', 'consumer'] as const, 'classic'),
    groupProtocolFallback: bool(config, 'groupProtocolFallback', false),
    groupRemoteAssignor: optionalString(config, 'groupRemoteAssignor'),
    partitionAssignmentStrategy: strategies(config),
    keyDeserializer: deserializer(config, 'keyDeserializer'),
    valueDeserializer: deserializer(config, 'valueDeserializer'),
    enableAutoCommit: bool(config, 'enableAutoCommit', true),
    autoCommitIntervalMs: integer(config, 'autoCommitIntervalMs', 5_000, 0),
    autoOffsetReset: oneOf(config, 'autoOffsetReset', ['latest', 'earliest', 'none'] as const, 'latest'),
    heartbeatIntervalMs,
    sessionTimeoutMs,
    maxPollIntervalMs: integer(config, 'maxPollIntervalMs', 300_000, 1, 0x7fffffff),
    fetchMinBytes: integer(config, 'fetchMinBytes', 1, 0, 0x7fffffff),
    fetchMaxWaitMs: integer(config, 'fetchMaxWaitMs', 500, 0, 0x7fffffff),
    fetchMaxBytes,
    maxPartitionFetchBytes,
    maxPartitionFetchBytesExplicit,
    maxPollRecords: integer(config, 'maxPollRecords', 500, 1),
    isolationLevel: oneOf(config, 'isolationLevel', ['read_uncommitted', 'read_committed'] as const, 'read_uncommitted'),
    checkCrcs: bool(config, 'checkCrcs', true),
    clientRack: (config.clientRack as string | undefined) ?? '',
    requestTimeoutMs: integer(config, 'requestTimeoutMs', 30_000, 1, 0x7fffffff),
    socketConnectionSetupTimeoutMs: integer(config, 'socketConnectionSetupTimeoutMs', 10_000, 1, 0x7fffffff),
    reconnectBackoffMs,
    reconnectBackoffMaxMs: Math.max(reconnectBackoffMs, reconnectBackoffMaxMs),
    retryBackoffMs: integer(config, 'retryBackoffMs', 100, 0),
    retryBackoffMaxMs: integer(config, 'retryBackoffMaxMs', 1_000, 0),
    deserializationErrorPolicy: oneOf(config, 'deserializationErrorPolicy', ['stop', 'skip'] as const, 'stop'),
    metadataMaxAgeMs: integer(config, 'metadataMaxAgeMs', 300_000, 0),
    interceptors: (config.interceptors as ConsumerInterceptor[] | undefined) ?? [],
    // Copies that print as [redacted] where they hold a password, a key or a passphrase.
    ssl: typeof ssl === 'object' ? withRedaction({ ...ssl }) : ssl,
    sasl: sasl && withRedaction({ ...sasl }),
    // Room for four of the partition's largest answers, so that its next Fetch goes out while
    // earlier answers are read (one answer's room alone made fetching and decoding take turns).
    // With adaptive sizes the largest is the cap: a partition at 1 MiB may then buffer 16 MiB
    // rather than 4 MiB, and maxBufferedBytes stays the bound on them all.
    maxBufferedBytesPerPartition: integer(
      config,
      'maxBufferedBytesPerPartition',
      4 * (adaptsFetchSizes({ maxPartitionFetchBytesExplicit, recordBuffers }) ? Math.max(maxPartitionFetchBytes, MAX_ADAPTIVE_PARTITION_FETCH_BYTES) : maxPartitionFetchBytes),
      1,
    ),
    maxBufferedBytes: integer(config, 'maxBufferedBytes', 2 * fetchMaxBytes, 1),
    yieldIntervalMs: integer(config, 'yieldIntervalMs', 1, 0, 1_000),
    // Room for the header and a few offsets at least (finished-metadata.ts).
    commitMetadataMaxBytes: integer(config, 'commitMetadataMaxBytes', 4096, 64, 1 << 20),
    maxDecompressedBytes: integer(config, 'maxDecompressedBytes', DEFAULT_MAX_DECOMPRESSED_BYTES, 1, 0x7fffffff),
    recordBuffers,
    logger: (config.logger as Logger | undefined) ?? defaultLogger,
  };
}
