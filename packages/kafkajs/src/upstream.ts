// kafkajs 2.2.4 itself, a dependency under the name `kafkajs-upstream`: the producer and admin are
// its own (kwire has no producer), and so are the error classes, logLevel, CompressionTypes and
// the assigner protocol, so that an error a producer throws and one this consumer throws are the
// same class, and `instanceof` works across both.
import { createRequire } from 'node:module';
import upstream from 'kafkajs-upstream';

export { upstream };

const require = createRequire(import.meta.url);

/** One entry of kafkajs's table of Kafka error codes (src/protocol/error.js). */
export interface UpstreamErrorCode {
  type: string;
  code: number;
  retriable: boolean;
  message: string;
}

// Not in kafkajs's public types: its table of error codes (type, retriable, message per code),
// which is what makes a KafkaJSProtocolError look exactly as kafkajs makes it.
const protocolErrors = require('kafkajs-upstream/src/protocol/error.js') as {
  errorCodes: UpstreamErrorCode[];
  createErrorFromCode(code: number): InstanceType<typeof upstream.KafkaJSProtocolError>;
};

export const errorCodes: readonly UpstreamErrorCode[] = protocolErrors.errorCodes;
export const createErrorFromCode = protocolErrors.createErrorFromCode;

/** kafkajs's 64-bit integer (its copy of long.js): what kafkajs puts in a few payloads. */
export interface UpstreamLong {
  toString(): string;
}
export const Long = require('kafkajs-upstream/src/utils/long.js') as { fromValue(value: string | number): UpstreamLong };
