// @kwire/consumer: a Kafka consumer on kwire's own protocol stack.
export {
  Consumer,
  createConsumer,
  type ConsumerEvents,
  type TopicPartition,
  type PartitionAssignment,
  type StartOffset,
  type RunOptions,
  type EachBatchPayload,
  type EachMessagePayload,
  type ConsumerMetrics,
} from './consumer.js';
export { MessageStream } from './streams.js';
export type { PositionChange } from './fetch/fetcher.js';
export type { OffsetAndTimestamp } from './cluster/offset-lookup.js';
export { prometheusText } from './metrics/prometheus.js';
export {
  bridgeOpenTelemetry,
  openTelemetryMeter,
  type OpenTelemetryBridge,
  type OpenTelemetryBridgeOptions,
  type OtelMeter,
  type OtelInstrumentOptions,
  type OtelAttributes,
} from './metrics/opentelemetry.js';
export { CHANNELS as DIAGNOSTICS_CHANNELS, type RecordLatency, type GroupMetrics } from './metrics/meter.js';
export type { CloseResult } from './consumer.js';
export type { InFlightRecord } from './run.js';
export type { PartitionList, PartitionsOfTopic, OffsetAndMetadata, OffsetsToCommit, TimesToLookUp } from './usage.js';
export type { FailurePolicy, ProcessingFailure } from './run.js';
export type { GroupCloseReport } from './group/group-manager.js';
export { ShareConsumer, createShareConsumer, AcknowledgementError, type ShareConsumerEvents, type ShareConsumerMetrics, type AcknowledgeType, type ShareAcknowledgeResult } from './share-consumer.js';
export { ShareRecord, ShareBatch } from './share/records.js';
export { resolveShareConfig, type ShareConsumerConfig, type ResolvedShareConfig } from './share/config.js';
export type { ShareAssignment, ShareGroupEventDetails } from './share/membership.js';
export { LatencyWindow, type LatencySummary } from './fetch/latency.js';
export { RecordReleasedError } from '@kwire/protocol';
export { ConsumerBatch, ConsumedRecord, BatchCursor, CursorRecord, type ConsumerRecord, type KeptRecord } from './records.js';
export {
  resolveConfig,
  JAVA_NAMES,
  type ConsumerConfig,
  type ResolvedConfig,
  type Deserializer,
  type DeserializerContext,
  type Deserialized,
  type DeserializedKey,
  type DeserializedValue,
  type ConsumerInterceptor,
  type SaslConfig,
} from './config.js';
export {
  KafkaError,
  isKafkaError,
  ConnectionError,
  RequestTimeoutError,
  BrokerResponseError,
  ConfigError,
  UsageError,
  AuthenticationError,
  ClosedError,
  CorruptRecordError,
  OffsetOutOfRangeError,
  LogTruncationError,
  DeserializationError,
  type KwireErrorCode,
} from './errors.js';
export { consoleLogger, silentLogger, type Logger } from './logger.js';
export { MetadataCache, type BrokerInfo, type TopicInfo, type PartitionInfo, type MetadataChange } from './cluster/metadata.js';
export * from './connection/index.js';
export { coordinatorPartition, javaStringHashCode } from './group/coordinator.js';
export { CommitFailedError, type OffsetToCommit, type CommittedOffset } from './group/offsets.js';
export { FatalGroupError } from './group/membership.js';
export { Kip848UnavailableError } from './group/kip848.js';
export type { RebalanceListener, Subscription } from './group/group-manager.js';
export type { GroupEventName, GroupEventDetails } from './group/membership.js';
export * from './group/assignors/index.js';
