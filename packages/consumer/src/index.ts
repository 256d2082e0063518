// @kwire/consumer: a Kafka consumer on kwire's own protocol stack.
export {
  KafkaError,
  isKafkaError,
  ConnectionError,
  RequestTimeoutError,
  BrokerResponseError,
  ConfigError,
  AuthenticationError,
  ClosedError,
  CorruptRecordError,
  OffsetOutOfRangeError,
  type KafkaErrorCode,
} from './errors.js';
export { consoleLogger, silentLogger, type Logger } from './logger.js';
export * from './connection/index.js';
