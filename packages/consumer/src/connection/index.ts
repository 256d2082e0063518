// The connection layer of @kwire/consumer: one connection per broker and purpose, pooled.
export {
  Connection,
  decodeResponseBody,
  type ConnectionEvents,
  type ConnectionState,
  type ConnectionStats,
  type RequestOptions,
  type ResponseFrameLease,
} from './connection.js';
export { BrokerPool, type BrokerAddress, type BrokerPoolOptions, type BrokerPoolStats, type ConnectionPurpose } from './broker-pool.js';
export {
  CLIENT_SOFTWARE_NAME,
  CLIENT_SOFTWARE_VERSION,
  parseBootstrapServers,
  resolveConnectionConfig,
  type ConnectionConfig,
  type ConnectionOptions,
  type OAuthBearerToken,
  type ResolvedConnectionConfig,
  type SaslOptions,
  type SslOptions,
} from './options.js';
export { FrameReader, type FrameReaderOptions, type FrameSink } from './socket-reader.js';
export { SimpleFramePool, defaultFramePool, type FramePool, type SimpleFramePoolStats } from './frame-pool.js';
export { Backoff, backoffDelay, type BackoffOptions } from './backoff.js';
export { ScramClient, saslName, SCRAM_MAX_ITERATIONS, SCRAM_MIN_ITERATIONS, plainInitialResponse, oauthBearerInitialResponse, type ScramMechanism } from './sasl/index.js';
