// @kwire/protocol: the Kafka wire protocol, no sockets.
export { KafkaProtocolError, isKafkaProtocolError, atPath, toProtocolError, type ProtocolErrorReason, type ProtocolErrorDetails } from './errors.js';
export { Reader } from './primitives/reader.js';
export { Writer, toInt64, sizeOfUVarint, sizeOfVarint } from './primitives/writer.js';
export { ZERO_UUID, isUuid, uuidFromBytes, uuidToBytes, randomUuid } from './primitives/uuid.js';
export {
  unknownTaggedFields,
  EMPTY_BYTES,
  type TaggedField,
  type Input,
  type ApiDefinition,
  type DataDefinition,
} from './messages/runtime.js';
export * from './messages/index.js';
export { API_KEY_NAMES, ApiKey } from './api-keys.js';
export { ERROR_CODES, ErrorCode, type KafkaErrorCode } from './error-codes.js';
export { errorFor } from './error-table.js';
export {
  requestHeaderVersion,
  responseHeaderVersion,
  writeRequestHeader,
  readRequestHeaderStart,
  readHeaderTags,
  writeResponseHeader,
  readResponseHeader,
  type RequestHeader,
  type ResponseHeader,
} from './header.js';
export {
  encodeRequestFrame,
  writeRequestFrame,
  decodeRequestFrame,
  decodeRequestHeader,
  encodeResponseFrame,
  decodeResponseFrame,
  peekCorrelationId,
  apiDefinition,
  type RequestFrame,
  type ResponseFrame,
  type ApiDefinitions,
} from './frames.js';
export { FrameSplitter, type FrameSink, type FrameSplitterOptions, type FrameSplitterStats } from './framing.js';
export { negotiateVersion, type BrokerVersionRange } from './versions.js';
export * from './records/index.js';
export * from './consumer-protocol.js';
