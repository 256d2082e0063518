import { ERROR_CODES, type KafkaErrorCode } from './error-codes.js';

const byCode = new Map<number, KafkaErrorCode>(ERROR_CODES.map((e) => [e.code, e]));

/**
 * The table entry for an error code. A code this Kafka release does not know (a newer broker's)
 * gets a synthetic, non-retriable entry rather than undefined: the caller can always report it.
 */
export function errorFor(code: number): KafkaErrorCode {
  return (
    byCode.get(code) ?? {
      code,
      name: `UNKNOWN_ERROR_CODE_${code}`,
      message: `error code ${code}, unknown to kwire`,
      retriable: false,
      invalidMetadata: false,
      exception: null,
    }
  );
}
