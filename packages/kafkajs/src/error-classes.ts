// kafkajs's error classes, kafkajs's own (from the upstream dependency: the producer's errors and
// the consumer's are one set of classes), exported as kafkajs exports them. errors.ts turns kwire's
// errors into them.
import { upstream } from './upstream.js';

export const {
  KafkaJSError,
  KafkaJSNonRetriableError,
  KafkaJSPartialMessageError,
  KafkaJSBrokerNotFound,
  KafkaJSProtocolError,
  KafkaJSConnectionError,
  KafkaJSRequestTimeoutError,
  KafkaJSSASLAuthenticationError,
  KafkaJSNumberOfRetriesExceeded,
  KafkaJSOffsetOutOfRange,
  KafkaJSGroupCoordinatorNotFound,
  KafkaJSNotImplemented,
  KafkaJSMetadataNotLoaded,
  KafkaJSTopicMetadataNotLoaded,
  KafkaJSStaleTopicMetadataAssignment,
  KafkaJSDeleteGroupsError,
  KafkaJSTimeout,
  KafkaJSLockTimeout,
  KafkaJSServerDoesNotSupportApiKey,
  KafkaJSUnsupportedMagicByteInMessageSet,
  KafkaJSDeleteTopicRecordsError,
  KafkaJSAggregateError,
  KafkaJSAlterPartitionReassignmentsError,
} = upstream;

// Classes kafkajs exports at run time that its types leave out.
type ErrorClass = new (e: Error | string, metadata?: Record<string, unknown>) => InstanceType<typeof upstream.KafkaJSError>;
const untyped = upstream as unknown as Record<string, ErrorClass>;
export const KafkaJSConnectionClosedError: ErrorClass = untyped.KafkaJSConnectionClosedError!;
export const KafkaJSMemberIdRequired: ErrorClass = untyped.KafkaJSMemberIdRequired!;
export const KafkaJSNoBrokerAvailableError: ErrorClass = untyped.KafkaJSNoBrokerAvailableError!;
export const KafkaJSInvariantViolation: ErrorClass = untyped.KafkaJSInvariantViolation!;
export const KafkaJSInvalidVarIntError: ErrorClass = untyped.KafkaJSInvalidVarIntError!;
export const KafkaJSInvalidLongError: ErrorClass = untyped.KafkaJSInvalidLongError!;
export const KafkaJSCreateTopicError: ErrorClass = untyped.KafkaJSCreateTopicError!;
