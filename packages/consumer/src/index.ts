// @kwire/consumer: a Kafka consumer on kwire's own protocol stack. The root is what an application
// uses: the consumers, records and batches, configuration and option types, errors, loggers and
// metrics exporters. The layers below (connections, metadata, assignor internals, codecs) are in
// '@kwire/consumer/internals' (./internals.ts), for kwire's tools, the benchmark and tests.
// etc/consumer.api.md is the report of this surface: `npm test` fails when it changes unreviewed.

// Consumers
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
  type CloseResult,
} from './consumer.js';
export { MessageStream } from './streams.js';
export type { PositionChange } from './fetch/fetcher.js';
export type { OffsetAndTimestamp } from './cluster/offset-lookup.js';
export type { InFlightRecord, FailurePolicy, FailureDecision, Ordering, ProcessingFailure } from './run.js';
export type { WorkerOptions, WorkerRecord, WorkerHandler } from './run/worker-pool.js';
export type { PartitionList, PartitionsOfTopic, OffsetAndMetadata, OffsetsToCommit, TimesToLookUp } from './usage.js';
export type { GroupCloseReport, RebalanceListener, Subscription } from './group/group-manager.js';
export type { GroupEventName, GroupEventDetails } from './group/membership.js';
export type { OffsetToCommit, CommittedOffset } from './group/offsets.js';
export { ShareConsumer, createShareConsumer, AcknowledgementError, type ShareConsumerEvents, type AcknowledgeType, type ShareAcknowledgeResult } from './share-consumer.js';
export type { ShareAssignment, ShareGroupEventDetails } from './share/membership.js';

// Records and batches
export { ConsumerBatch, ConsumerRecord, ConsumedRecord, BatchCursor, CursorRecord, type KeptRecord } from './records/index.js';
export { ShareRecord, ShareBatch } from './share/records.js';
export type { RecordJson, JsonBytes } from './record-json.js';
export { RecordReleasedError } from '@kwire/protocol';

// Configuration
export type {
  ConsumerConfig,
  ResolvedConfig,
  Deserializer,
  DeserializerContext,
  Deserialized,
  DeserializedKey,
  DeserializedValue,
  ConsumerInterceptor,
  CommittedPosition,
  SaslConfig,
} from './config.js';
export type { ShareConsumerConfig, ResolvedShareConfig } from './share/config.js';
// A custom partition assignor implements Assignor (partitionAssignmentStrategy); the built-ins
// are named by string ('range', 'roundrobin', 'sticky', 'cooperative-sticky').
export type { Assignor, AssignmentContext, MemberAssignment, MemberSubscription, RebalanceProtocol, SubscriptionContext } from './group/assignors/index.js';
export { consoleLogger, silentLogger, type Logger } from './logger.js';

// Errors
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
export { CommitFailedError } from './group/offsets.js';
export { FatalGroupError } from './group/membership.js';
export { Kip848UnavailableError } from './group/kip848.js';

// Metrics
export type { ConsumerMetrics, FetcherStats, ShareConsumerMetrics, ProcessingMetrics, ShareCounters } from './metrics/types.js';
export type { LatencySummary } from './metrics/latency.js';
export { CHANNELS as DIAGNOSTICS_CHANNELS, type RecordLatency, type GroupMetrics } from './metrics/meter.js';
export { prometheusText } from './metrics/prometheus.js';
export {
  bridgeOpenTelemetry,
  openTelemetryMeter,
  type OpenTelemetryBridge,
  type OpenTelemetryBridgeOptions,
  type OtelMeter,
  type OtelInstrumentOptions,
  type OtelAttributes,
  type MeteredConsumer,
  type MeteredShareConsumer,
} from './metrics/opentelemetry.js';
