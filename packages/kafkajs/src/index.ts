// @kwire/kafkajs: kafkajs 2.2.4's API with kwire's consumer underneath. `import { Kafka } from
// '@kwire/kafkajs'` (or the package.json alias "kafkajs": "npm:@kwire/kafkajs@...") is the whole
// migration; producer() and admin() are kafkajs itself.
import { upstream } from './upstream.js';

export { Kafka } from './kafka.js';
export { Consumer } from './consumer.js';
export type { ClientContext } from './consumer.js';
export type { ConsumerConfig, KwireOptions } from './config.js';
export type { Message, BatchContext } from './message.js';
export { PartitionAssigners } from './assigners.js';
export * from './error-classes.js';

// kafkajs's constants and helpers, kafkajs's own objects.
export const {
  logLevel,
  CompressionTypes,
  CompressionCodecs,
  AssignerProtocol,
  Partitioners,
  ConfigResourceTypes,
  AclResourceTypes,
  AclOperationTypes,
  AclPermissionTypes,
  ResourcePatternTypes,
  ConfigSource,
} = upstream;

// kafkajs's types, for programs written against them (consumer types are checked against this
// package's classes: test/types/).
export type {
  KafkaConfig,
  SASLOptions,
  SASLMechanism,
  RetryOptions,
  logCreator,
  LogEntry,
  Logger,
  ProducerConfig,
  Producer,
  Admin,
  AdminConfig,
  Message as ProducerMessage,
  IHeaders,
  KafkaMessage,
  EachMessagePayload,
  EachBatchPayload,
  EachMessageHandler,
  EachBatchHandler,
  ConsumerRunConfig,
  ConsumerSubscribeTopic,
  ConsumerSubscribeTopics,
  ConsumerEvents,
  ConsumerHeartbeatEvent,
  ConsumerCommitOffsetsEvent,
  ConsumerGroupJoinEvent,
  ConsumerFetchStartEvent,
  ConsumerFetchEvent,
  ConsumerStartBatchProcessEvent,
  ConsumerEndBatchProcessEvent,
  ConsumerCrashEvent,
  ConsumerRebalancingEvent,
  ConsumerReceivedUnsubcribedTopicsEvent,
  InstrumentationEvent,
  RemoveInstrumentationEventListener,
  GroupDescription,
  MemberDescription,
  TopicPartitions,
  TopicPartition,
  TopicPartitionOffset,
  TopicPartitionOffsetAndMetadata,
  OffsetsByTopicPartition,
  Offsets,
  PartitionAssigner,
  Assigner,
  Batch,
  RecordMetadata,
} from 'kafkajs-upstream';
