export { NEWEST_KAFKA_VERSION, defaultKafkaVersion, parseKafkaVersion, atLeast, type KafkaVersion } from './version.js';
export { ensureKafka, compileJava, type KafkaDistribution, type EnsureOptions } from './distribution.js';
export {
  startKafka,
  tailFile,
  DEFAULT_SASL_USERS,
  SASL_MECHANISMS,
  type StartKafkaOptions,
  type KafkaCluster,
  type KafkaNode,
  type SaslUser,
} from './broker.js';
export { spawnJava, liveJavaProcesses, strayJvms, pidDir, type JavaProcess, type JavaOptions, type JavaExit, type StrayJvm } from './jvm.js';
export { probeApiVersions, type ApiVersionRange } from './probe.js';
export { freePorts } from './ports.js';
export { generateBrokerTls, type BrokerTls } from './tls.js';
export {
  runTool,
  createTopic,
  describeTopic,
  describeGroupOffsets,
  parseGroupOffsets,
  type GroupPartitionOffset,
  producerPerformance,
  parseProducerPerformance,
  consumerPerformance,
  parseConsumerPerformance,
  consoleConsumer,
  consoleProducer,
  alterGroupConfig,
  consoleShareConsumer,
  describeShareGroup,
  type ConsoleShareConsumerOptions,
  type KafkaTarget,
  type ToolOptions,
  type ToolResult,
  type CreateTopicOptions,
  type DescribedPartition,
  type CompressionType,
  type ProducerPerformanceOptions,
  type ProducerPerformanceResult,
  type ConsumerPerformanceOptions,
  type ConsumerPerformanceResult,
  type ConsoleConsumerOptions,
  type ConsoleProducerOptions,
} from './tools.js';
export { useKafka, type TestKafka } from './testing.js';
export { BrokerError } from './errors.js';
export { cacheDir, repoRoot } from './paths.js';
export { writeTransactions, transactionsSource, type TransactionsOptions, type TransactionsResult, type TransactionalRecord, type TransactionOutcome } from './transactions.js';
