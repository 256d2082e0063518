import { KafkaProtocolError } from '../errors.js';

/** Corrupt or unsupported compressed data; `offset` is within the compressed payload. */
export function compressionError(detail: string, offset?: number, cause?: unknown): KafkaProtocolError {
  return new KafkaProtocolError(detail, { reason: 'compression', offset, cause });
}

/** The decompressed output would exceed the configured limit. */
export function overLimit(codec: string, size: number | string, limit: number): KafkaProtocolError {
  return new KafkaProtocolError(`${codec} output of ${size} bytes exceeds the limit of ${limit} bytes (maxDecompressedBytes)`, {
    reason: 'compression',
  });
}
