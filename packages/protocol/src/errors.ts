/**
 * Every failure to decode or encode bytes in this package is a KafkaProtocolError: never a bare
 * RangeError or TypeError. It says where: the API and version (when known), the byte offset in
 * the buffer being read, and the field path (e.g. "responses/0/partitions/3/records").
 *
 * The brand (Symbol.for) makes `isKafkaProtocolError` work across duplicate installs of the
 * package, where `instanceof` would not.
 */
const BRAND = Symbol.for('kwire.KafkaProtocolError');

export type ProtocolErrorReason =
  /** Fewer bytes than a field needs. */
  | 'truncated'
  /** A length or count that cannot be right: negative (not the null marker), or beyond the buffer. */
  | 'invalid-length'
  /** A varint longer than 5 (int32) or 10 (int64) bytes. */
  | 'varint-too-long'
  /** A value the schema does not allow: null where not nullable, an unknown enum, ... */
  | 'invalid-value'
  /** A version outside what we implement or what the peer offers. */
  | 'unsupported-version'
  /** An API key we do not model. */
  | 'unknown-api'
  /** Record batch checksum mismatch. */
  | 'crc-mismatch'
  /** Unknown compression codec, corrupt compressed data, or output over the configured limit. */
  | 'compression'
  /** Bytes left over where a structure should have ended. */
  | 'trailing-bytes';

export interface ProtocolErrorDetails {
  reason: ProtocolErrorReason;
  /** Byte offset in the buffer being decoded (or written) where the problem was found. */
  offset?: number;
  apiKey?: number;
  apiName?: string;
  apiVersion?: number;
  /** Slash-separated field path from the message root, e.g. "topics/0/partitions/2/fetchOffset". */
  path?: string;
  cause?: unknown;
}

export class KafkaProtocolError extends Error {
  override name = 'KafkaProtocolError';
  readonly code = 'KWIRE_PROTOCOL';
  readonly reason: ProtocolErrorReason;
  offset: number | undefined;
  apiKey: number | undefined;
  apiName: string | undefined;
  apiVersion: number | undefined;
  /** Filled from the innermost field outwards as the error travels up through the decoders. */
  path: string;
  /** The message without the where-information, which `message` recomputes. */
  readonly detail: string;

  constructor(detail: string, details: ProtocolErrorDetails) {
    super(detail, details.cause === undefined ? undefined : { cause: details.cause });
    this.detail = detail;
    this.reason = details.reason;
    this.offset = details.offset;
    this.apiKey = details.apiKey;
    this.apiName = details.apiName;
    this.apiVersion = details.apiVersion;
    this.path = details.path ?? '';
    this.refresh();
  }

  /** Adds an outer path segment (a field name or an array index). */
  under(segment: string | number): this {
    this.path = this.path === '' ? String(segment) : `${segment}/${this.path}`;
    this.refresh();
    return this;
  }

  /** Records which API the failure belongs to, once, at the top of a decode. */
  inApi(apiKey: number, apiName: string, apiVersion: number): this {
    this.apiKey ??= apiKey;
    this.apiName ??= apiName;
    this.apiVersion ??= apiVersion;
    this.refresh();
    return this;
  }

  private refresh(): void {
    const where: string[] = [];
    if (this.apiName !== undefined) where.push(`${this.apiName} v${this.apiVersion}`);
    else if (this.apiKey !== undefined) where.push(`api ${this.apiKey} v${this.apiVersion}`);
    if (this.path) where.push(`field ${this.path}`);
    if (this.offset !== undefined) where.push(`byte ${this.offset}`);
    this.message = where.length ? `${this.detail} (${where.join(', ')})` : this.detail;
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return isKafkaProtocolError(value);
  }

  get [BRAND](): true {
    return true;
  }
}

export function isKafkaProtocolError(value: unknown): value is KafkaProtocolError {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
}

/**
 * Anything thrown inside a decoder or encoder as a KafkaProtocolError. A RangeError or TypeError
 * there would be a bug of ours (or, when encoding, a value of the wrong type from the caller): it
 * is wrapped rather than leaked, so the caller always gets the typed error, with the original as
 * `cause`.
 */
export function toProtocolError(err: unknown): KafkaProtocolError {
  if (isKafkaProtocolError(err)) return err;
  return new KafkaProtocolError(`unexpected ${(err as Error)?.name ?? 'error'}: ${(err as Error)?.message ?? String(err)}`, {
    reason: 'invalid-value',
    cause: err,
  });
}

/** toProtocolError, plus an outer path segment (a field name or an array index). */
export function atPath(err: unknown, segment: string | number): KafkaProtocolError {
  const e = toProtocolError(err);
  return segment === '' ? e : e.under(segment);
}
