/**
 * Connection options: the Java client's names in camelCase where Java has one (request.timeout.ms
 * -> requestTimeoutMs, ...), checked once up front so that a typo or a wrong type fails at
 * construction with a ConfigError rather than as an odd failure later.
 *
 * Error messages name the option and the expected shape; they never echo a password or a token.
 */
import type { ConnectionOptions as TlsConnectionOptions } from 'node:tls';
import { ConfigError } from '../errors.js';
import { silentLogger, type Logger } from '../logger.js';
import { defaultFramePool, type FramePool } from './frame-pool.js';
import { withRedaction } from './secrets.js';

/** What an OAUTHBEARER token provider returns. */
export interface OAuthBearerToken {
  /** The compact token (e.g. a JWT). Sent to the broker, never logged. */
  value: string;
  /** How long the token stays valid, for information (the broker's session lifetime rules re-authentication). */
  lifetimeMs?: number;
  /** SASL extensions (RFC 7628 kvpairs), e.g. { logicalCluster: 'lkc-1' }. Keys: letters only. */
  extensions?: Record<string, string>;
}

export type SaslOptions =
  | { mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512'; username: string; password: string }
  | { mechanism: 'oauthbearer'; oauthBearerProvider: () => Promise<OAuthBearerToken> | OAuthBearerToken };

/** node:tls options passed through (ca, cert, key, servername, rejectUnauthorized, ...). */
export type SslOptions = Omit<TlsConnectionOptions, 'host' | 'port' | 'socket' | 'path' | 'onread'>;

/** Everything a connection needs except where it goes. Shared by BrokerPool for all its connections. */
export interface ConnectionConfig {
  /** client.id: sent in every request header. Default "kwire". */
  clientId?: string;
  /** request.timeout.ms: how long a request may wait for its response. Default 30000. */
  requestTimeoutMs?: number;
  /** socket.connection.setup.timeout.ms: TCP connect plus TLS handshake. Default 10000. */
  socketConnectionSetupTimeoutMs?: number;
  /** TLS: true for the system's trust store, or node:tls options. */
  ssl?: boolean | SslOptions;
  sasl?: SaslOptions;
  logger?: Logger;
  /** Where frames larger than the read buffer get their memory (e.g. @kwire/protocol's BufferPool). */
  framePool?: FramePool;
  /** The reusable read buffer; frames up to this size never allocate on arrival. Default 64 KiB. */
  readBufferBytes?: number;
  /** A response announcing more bytes than this is a protocol error. Default 1 GiB. */
  maxFrameBytes?: number;
  /**
   * The largest answer admitted to a request other than Fetch (Fetch: its maxBytes plus 16 MiB;
   * ApiVersions and SASL: 1 MiB). A peer announcing more is refused before anything is allocated,
   * with a ConnectionError. Default 32 MiB (Metadata of a 200,000-partition cluster is about 10 MB).
   */
  maxResponseBytes?: number;
  /** How long close() waits for in-flight requests before giving up on them. Default 5000. */
  closeTimeoutMs?: number;
}

export interface ConnectionOptions extends ConnectionConfig {
  host: string;
  port: number;
  /** The broker's node id when known (logs and errors only). */
  nodeId?: number;
}

export interface ResolvedConnectionConfig {
  clientId: string;
  requestTimeoutMs: number;
  socketConnectionSetupTimeoutMs: number;
  ssl: SslOptions | undefined;
  sasl: SaslOptions | undefined;
  logger: Logger;
  framePool: FramePool;
  readBufferBytes: number;
  maxFrameBytes: number;
  maxResponseBytes: number;
  closeTimeoutMs: number;
}

/** Sent in ApiVersions v3+ (the broker checks both against [a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?). */
export const CLIENT_SOFTWARE_NAME = 'kwire';
export const CLIENT_SOFTWARE_VERSION = '0.1.0';

const SASL_MECHANISMS = ['plain', 'scram-sha-256', 'scram-sha-512', 'oauthbearer'] as const;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return `"${v.length > 40 ? `${v.slice(0, 40)}...` : v}"`;
  if (typeof v === 'object') return 'an object';
  return `${typeof v} ${String(v)}`;
}

export function positiveInt(name: string, value: unknown, fallback: number, { allowZero = false } = {}): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0 || (value === 0 && !allowZero)) {
    throw new ConfigError(`${name} must be a ${allowZero ? 'non-negative' : 'positive'} integer, got ${describe(value)}`);
  }
  return value;
}

/** The SASL block, checked without ever putting a secret into a message. */
export function validateSasl(value: unknown): SaslOptions | undefined {
  if (value === undefined) return undefined;
  if (!isPlainObject(value)) throw new ConfigError(`sasl must be an object such as { mechanism: 'scram-sha-512', username, password }, got ${describe(value)}`);
  const mechanism = typeof value.mechanism === 'string' ? value.mechanism.toLowerCase() : value.mechanism;
  if (!SASL_MECHANISMS.includes(mechanism as never)) {
    throw new ConfigError(`sasl.mechanism must be one of ${SASL_MECHANISMS.join(', ')}, got ${describe(value.mechanism)}`);
  }
  if (mechanism === 'oauthbearer') {
    if (typeof value.oauthBearerProvider !== 'function') {
      throw new ConfigError('sasl.oauthBearerProvider must be a function returning { value, lifetimeMs?, extensions? } (or a promise of it)');
    }
    return withRedaction({ mechanism, oauthBearerProvider: value.oauthBearerProvider as never });
  }
  if (typeof value.username !== 'string' || value.username === '') throw new ConfigError(`sasl.username must be a non-empty string for ${mechanism}`);
  // Describe the password's type only: its value must not reach a message.
  if (typeof value.password !== 'string') throw new ConfigError(`sasl.password must be a string for ${mechanism}, got ${value.password === null ? 'null' : typeof value.password}`);
  return withRedaction({ mechanism: mechanism as 'plain', username: value.username, password: value.password });
}

export function validateSsl(value: unknown): SslOptions | undefined {
  if (value === undefined || value === false) return undefined;
  if (value === true) return {};
  if (!isPlainObject(value)) throw new ConfigError(`ssl must be true or an object of node:tls options (ca, cert, key, servername, rejectUnauthorized, ...), got ${describe(value)}`);
  return withRedaction({ ...(value as SslOptions) });
}

export function resolveConnectionConfig(config: ConnectionConfig): ResolvedConnectionConfig {
  if (!isPlainObject(config as unknown)) throw new ConfigError(`connection options must be an object, got ${describe(config)}`);
  const clientId = config.clientId ?? 'kwire';
  if (typeof clientId !== 'string') throw new ConfigError(`clientId must be a string, got ${describe(clientId)}`);
  const logger: Logger = config.logger ?? silentLogger;
  if (typeof logger !== 'object' || logger === null || typeof logger.debug !== 'function' || typeof logger.warn !== 'function') {
    throw new ConfigError('logger must have debug, info, warn and error methods');
  }
  const framePool: FramePool = config.framePool ?? defaultFramePool;
  if (typeof framePool !== 'object' || framePool === null || typeof framePool.acquire !== 'function' || typeof framePool.release !== 'function') {
    throw new ConfigError('framePool must have acquire(size) and release(buffer) methods');
  }
  const readBufferBytes = positiveInt('readBufferBytes', config.readBufferBytes, 64 * 1024);
  if (readBufferBytes < 1024) throw new ConfigError(`readBufferBytes must be at least 1024, got ${readBufferBytes}`);
  return {
    clientId,
    requestTimeoutMs: positiveInt('requestTimeoutMs', config.requestTimeoutMs, 30_000),
    socketConnectionSetupTimeoutMs: positiveInt('socketConnectionSetupTimeoutMs', config.socketConnectionSetupTimeoutMs, 10_000),
    ssl: validateSsl(config.ssl),
    sasl: validateSasl(config.sasl),
    logger,
    framePool,
    readBufferBytes,
    maxFrameBytes: positiveInt('maxFrameBytes', config.maxFrameBytes, 1024 * 1024 * 1024),
    maxResponseBytes: positiveInt('maxResponseBytes', config.maxResponseBytes, 32 * 1024 * 1024),
    closeTimeoutMs: positiveInt('closeTimeoutMs', config.closeTimeoutMs, 5_000, { allowZero: true }),
  };
}

/** host and port of one broker. */
export function validateAddress(host: unknown, port: unknown): { host: string; port: number } {
  if (typeof host !== 'string' || host === '') throw new ConfigError(`host must be a non-empty string, got ${describe(host)}`);
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535) throw new ConfigError(`port must be an integer 1-65535, got ${describe(port)}`);
  return { host, port };
}

/**
 * bootstrap.servers: "host:port,host:port" or an array of "host:port" ("[::1]:9092" for IPv6).
 */
export function parseBootstrapServers(value: unknown): { host: string; port: number }[] {
  const list = typeof value === 'string' ? value.split(',') : Array.isArray(value) ? value : undefined;
  if (list === undefined) throw new ConfigError(`bootstrapServers must be "host:port,..." or an array of "host:port", got ${describe(value)}`);
  const out: { host: string; port: number }[] = [];
  for (const raw of list) {
    if (typeof raw !== 'string') throw new ConfigError(`bootstrapServers entries must be strings "host:port", got ${describe(raw)}`);
    const entry = raw.trim();
    if (entry === '') continue;
    const m = /^(?:\[([^\]]+)\]|([^:\s]+)):(\d{1,5})$/.exec(entry);
    if (!m) throw new ConfigError(`bootstrapServers entry "${entry}" is not host:port`);
    out.push(validateAddress(m[1] ?? m[2], Number(m[3])));
  }
  if (out.length === 0) throw new ConfigError('bootstrapServers is empty');
  return out;
}
