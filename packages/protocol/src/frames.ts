// The conformance surface: whole frames (int32 size prefix, header, body) in and out, for any API
// kwire models. Tools (the recording proxy, the conformance runner, a fake broker) and tests use
// these; the consumer's connection layer uses the same pieces without the object wrapping.
import { isKafkaProtocolError, KafkaProtocolError, toProtocolError } from './errors.js';
import { API_VERSIONS_KEY, readHeaderTags, readRequestHeaderStart, readResponseHeader, requestHeaderVersion, responseHeaderVersion, writeRequestHeader, writeResponseHeader } from './header.js';
import { API_DEFINITIONS } from './messages/index.js';
import type { ApiDefinition, TaggedField } from './messages/runtime.js';
import { API_KEY_NAMES } from './api-keys.js';
import { Reader } from './primitives/reader.js';
import { Writer } from './primitives/writer.js';

/** UNSUPPORTED_VERSION: the error a broker answers an ApiVersions request of too new a version with. */
const UNSUPPORTED_VERSION = 35;

export interface RequestFrame<B = unknown> {
  apiKey: number;
  apiVersion: number;
  correlationId: number;
  clientId: string | null;
  body: B;
  /** Tagged fields of a v2 request header (normally none). */
  headerTaggedFields?: TaggedField[];
}

export interface ResponseFrame<B = unknown> {
  correlationId: number;
  body: B;
  /**
   * The version the body was decoded with. Equal to the requested version except for an
   * ApiVersions answer with UNSUPPORTED_VERSION, which brokers always write in the v0 format.
   */
  bodyVersion: number;
  headerTaggedFields?: TaggedField[];
}

/**
 * The APIs a frame function may decode, by api key: the consumer's (the default) or, for tools,
 * the whole protocol (ALL_API_DEFINITIONS of '@kwire/protocol/all-apis').
 */
export type ApiDefinitions = ReadonlyMap<number, ApiDefinition>;

/** The API kwire implements for this key, or a KafkaProtocolError ('unknown-api'). */
export function apiDefinition(apiKey: number, definitions: ApiDefinitions = API_DEFINITIONS): ApiDefinition {
  const api = definitions.get(apiKey);
  if (api === undefined) {
    const name = API_KEY_NAMES.get(apiKey);
    throw new KafkaProtocolError(name ? `kwire does not model ${name} (api key ${apiKey})` : `unknown api key ${apiKey}`, { reason: 'unknown-api', apiKey });
  }
  return api;
}

function checkVersion(api: ApiDefinition, version: number): void {
  if (!(version >= api.minVersion && version <= api.maxVersion)) {
    throw new KafkaProtocolError(`${api.name} v${version} is outside what kwire implements (v${api.minVersion}-${api.maxVersion})`, {
      reason: 'unsupported-version',
      apiKey: api.apiKey,
      apiName: api.name,
      apiVersion: version,
    });
  }
}

// Frames never overlap in the writer's slab (see Writer's ownership rule), so one shared writer
// serves every caller that does not bring its own.
const shared = new Writer(64 * 1024);

/**
 * Writes one request frame of `api` (size prefix, header v1 or v2 as the version says, body) and
 * returns it (Writer.finish(): bytes the writer never rewrites). The connection layer calls this
 * with the ApiDefinition it holds; encodeRequestFrame is the same by api key.
 */
export function writeRequestFrame(w: Writer, api: ApiDefinition, apiVersion: number, correlationId: number, clientId: string | null, body: unknown, headerTaggedFields?: TaggedField[]): Buffer {
  checkVersion(api, apiVersion);
  try {
    const at = w.reserve(4);
    writeRequestHeader(w, { apiKey: api.apiKey, apiVersion, correlationId, clientId, taggedFields: headerTaggedFields }, requestHeaderVersion(apiVersion >= api.flexibleFrom));
    api.encodeRequest(w, body as never, apiVersion);
    w.backfillInt32(at, w.length - 4);
    return w.finish();
  } catch (err) {
    w.abandon();
    throw toProtocolError(err).inApi(api.apiKey, `${api.name}Request`, apiVersion);
  }
}

/** Encodes a whole request frame, size prefix included. */
export function encodeRequestFrame(request: RequestFrame, w: Writer = shared, definitions?: ApiDefinitions): Buffer {
  return writeRequestFrame(w, apiDefinition(request.apiKey, definitions), request.apiVersion, request.correlationId, request.clientId, request.body, request.headerTaggedFields);
}

/** Reads the size prefix and checks it against the buffer; returns a reader over the frame's content. */
function frameReader(frame: Buffer): Reader {
  const r = new Reader(frame);
  const size = r.readInt32();
  if (size !== frame.length - 4) r.fail(`frame size prefix says ${size} bytes, ${frame.length - 4} follow`, 'invalid-length', 0);
  return r;
}

/** Decodes a whole request frame, size prefix included. */
export function decodeRequestFrame(frame: Buffer, definitions?: ApiDefinitions): RequestFrame {
  let api: ApiDefinition | undefined;
  let version = -1;
  try {
    const r = frameReader(frame);
    const header = readRequestHeaderStart(r);
    api = apiDefinition(header.apiKey, definitions);
    version = header.apiVersion;
    checkVersion(api, version);
    const flexible = version >= api.flexibleFrom;
    const headerTaggedFields = flexible ? readHeaderTags(r) : undefined;
    const body = api.decodeRequest(r, version);
    r.expectEnd();
    const out: RequestFrame = { apiKey: header.apiKey, apiVersion: version, correlationId: header.correlationId, clientId: header.clientId, body };
    if (headerTaggedFields) out.headerTaggedFields = headerTaggedFields;
    return out;
  } catch (err) {
    const e = toProtocolError(err);
    if (api) e.inApi(api.apiKey, `${api.name}Request`, version);
    throw e;
  }
}

/**
 * The header of a request frame, for any API and version, known or not: what a fake broker or a
 * proxy needs to answer (e.g. UNSUPPORTED_VERSION) or to label a request it cannot decode.
 */
export function decodeRequestHeader(frame: Buffer): { apiKey: number; apiVersion: number; correlationId: number; clientId: string | null } {
  try {
    return readRequestHeaderStart(frameReader(frame));
  } catch (err) {
    throw toProtocolError(err);
  }
}

/**
 * The version an ApiVersions response body is written in: v0 when it reports UNSUPPORTED_VERSION
 * (a broker answering a version it does not know), else the request's.
 */
function apiVersionsBodyVersion(apiVersion: number, errorCode: number): number {
  return errorCode === UNSUPPORTED_VERSION ? 0 : apiVersion;
}

/** Encodes a whole response frame, size prefix included. */
export function encodeResponseFrame(
  apiKey: number,
  apiVersion: number,
  correlationId: number,
  body: unknown,
  w: Writer = shared,
  headerTaggedFields?: TaggedField[],
  definitions?: ApiDefinitions,
): Buffer {
  const api = apiDefinition(apiKey, definitions);
  let bodyVersion = apiVersion;
  if (apiKey === API_VERSIONS_KEY) bodyVersion = apiVersionsBodyVersion(apiVersion, (body as { errorCode?: number }).errorCode ?? 0);
  // An UNSUPPORTED_VERSION answer to ApiVersions is v0, whatever (even unknown) version was asked.
  if (bodyVersion !== 0 || apiKey !== API_VERSIONS_KEY) checkVersion(api, apiVersion);
  const flexible = apiVersion >= api.flexibleFrom;
  try {
    const at = w.reserve(4);
    writeResponseHeader(w, headerTaggedFields ? { correlationId, taggedFields: headerTaggedFields } : { correlationId }, responseHeaderVersion(apiKey, flexible));
    api.encodeResponse(w, body as never, bodyVersion);
    w.backfillInt32(at, w.length - 4);
    return w.finish();
  } catch (err) {
    w.abandon();
    throw toProtocolError(err).inApi(api.apiKey, `${api.name}Response`, bodyVersion);
  }
}

/** Decodes a whole response frame (size prefix included) to a request of `apiKey` v`apiVersion`. */
export function decodeResponseFrame(apiKey: number, apiVersion: number, frame: Buffer, definitions?: ApiDefinitions): ResponseFrame {
  const api = apiDefinition(apiKey, definitions);
  let bodyVersion = apiVersion;
  try {
    const r = frameReader(frame);
    const header = readResponseHeader(r, responseHeaderVersion(apiKey, apiVersion >= api.flexibleFrom));
    if (apiKey === API_VERSIONS_KEY) {
      // The error code is the body's first field in every version: peek at it. An
      // UNSUPPORTED_VERSION answer is v0 whatever version was asked, even one we do not know.
      r.need(2);
      bodyVersion = apiVersionsBodyVersion(apiVersion, r.buf.readInt16BE(r.offset));
    }
    if (bodyVersion !== 0 || apiKey !== API_VERSIONS_KEY) checkVersion(api, apiVersion);
    const body = api.decodeResponse(r, bodyVersion);
    r.expectEnd();
    const out: ResponseFrame = { correlationId: header.correlationId, body, bodyVersion };
    if (header.taggedFields) out.headerTaggedFields = header.taggedFields;
    return out;
  } catch (err) {
    throw toProtocolError(err).inApi(api.apiKey, `${api.name}Response`, bodyVersion);
  }
}

/** The correlation id of a response frame, without decoding anything else (for matching). */
export function peekCorrelationId(frame: Buffer): number {
  if (frame.length < 8) throw new KafkaProtocolError(`a frame of ${frame.length} bytes has no correlation id`, { reason: 'truncated', offset: 0 });
  return frame.readInt32BE(4);
}

export { isKafkaProtocolError };
