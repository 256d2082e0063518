// @kwire/consumer/internals: the layers under the application's API, exported for kwire's own
// tools, the benchmark and tests (a Connection to record through, a BrokerPool to create topics
// with, the frame reader to measure, the assignors to check against Java's). No promise of
// stability: these change with the consumer's insides. An application needs only the root
// ('@kwire/consumer'). etc/consumer-internals.api.md is the report of this surface.

// Connections: sockets, framing, SASL/TLS, the broker pool.
export * from './connection/index.js';

// What the cluster says: metadata, and which partition of __consumer_offsets holds a group.
export { MetadataCache, type BrokerInfo, type TopicInfo, type PartitionInfo, type MetadataChange, type MetadataOptions, type MetadataSender } from './cluster/metadata.js';
export { coordinatorPartition, javaStringHashCode } from './group/coordinator.js';

// Configuration as the consumers resolve it (createConsumer and createShareConsumer do it).
export { resolveConfig, JAVA_NAMES } from './config.js';
export { resolveShareConfig } from './share/config.js';

// Each partition's Fetch size as the consumer adapts it, and what the consumer's buffer pool keeps
// (the bench's transport ceiling asks and keeps the same).
export { FetchSizes, type FetchSizeConfig } from './fetch/fetch-sizes.js';
export { retainedFor } from './shared-pool.js';

// The classic group's partition assignors: the built-ins, their user-data codecs and the checks
// (the root exports the Assignor types, for writing one's own).
export {
  commonRebalanceProtocol,
  AbstractPartitionAssignor,
  RangeAssignor,
  RoundRobinAssignor,
  StickyAssignor,
  encodeStickyUserData,
  decodeStickyUserData,
  CooperativeStickyAssignor,
  encodeCooperativeStickyUserData,
  decodeCooperativeStickyUserData,
  BUILT_IN_ASSIGNORS,
  builtInAssignor,
  resolveAssignors,
  checkAssignment,
  type StickyMemberData,
  type BuiltInAssignorName,
} from './group/assignors/index.js';

// run()'s commit metadata: the records finished beyond a commit point (tests and the chaos oracle decode it).
export { encodeFinished, decodeFinished, maxSpan, FINISHED_METADATA_PREFIX, DEFAULT_METADATA_MAX_BYTES, type DecodedFinished } from './group/finished-metadata.js';

// A window of latencies with percentiles (the fetch latency of metrics(); the benchmark's ceiling).
export { LatencyWindow } from './metrics/latency.js';

// Types the signatures above name that the root exports too: here as well, so that this entry
// point is whole on its own (its API report has no type it cannot name).
export type { ConsumerConfig, ResolvedConfig, ConsumerInterceptor, CommittedPosition, Deserializer, DeserializerContext, SaslConfig } from './config.js';
export type { ShareConsumerConfig, ResolvedShareConfig } from './share/config.js';
export type { Assignor, AssignmentContext, MemberAssignment, MemberSubscription, RebalanceProtocol, SubscriptionContext } from './group/assignors/index.js';
export type { Logger } from './logger.js';
export type { LatencySummary } from './metrics/latency.js';
