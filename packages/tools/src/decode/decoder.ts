// One Kafka connection's two byte streams as decoded frames: the client's stream is cut into
// request frames (size prefix, header, body), the broker's into responses, each response decoded
// with the api and version of the request that has its correlation id (a response carries
// neither). Every API and version of the protocol decodes (ALL_API_DEFINITIONS); the rest shows
// up with an error saying why, and never stops the stream.
import {
  ConsumerProtocolAssignmentData,
  ConsumerProtocolSubscriptionData,
  decodeRequestHeader,
  decodeResponseFrame,
  decodeRequestFrame,
  API_KEY_NAMES,
  Reader,
  toProtocolError,
  type DataDefinition,
} from '@kwire/protocol';
import { ALL_API_DEFINITIONS, FIELD_VERSIONS, type FieldVersions } from '@kwire/protocol/all-apis';
import { type Json, toJson } from '../json.js';
import { recordsJson } from './records.js';

/** One direction of a connection, from its first byte (or from a proven frame boundary). */
export interface StreamBytes {
  bytes: Buffer;
  /** Capture times: `at` (ms) of the byte at `offset` onwards, ascending by offset. */
  times?: { offset: number; at: number }[];
}

export interface Conversation {
  conn: number;
  /** host:port of each side. */
  client: string;
  broker: string;
  /** Client to broker: request frames. */
  requests: StreamBytes;
  /** Broker to client: response frames. */
  responses: StreamBytes;
  /** Frames before the first provable boundary (a capture that began mid-connection), per direction. */
  skippedAtStart?: { requests: number; responses: number; requestBytes: number; responseBytes: number };
}

export interface DecodedFrame {
  conn: number;
  direction: 'request' | 'response';
  /** Byte offset of the frame's size prefix in its stream. */
  offset: number;
  /** The whole frame, size prefix included. */
  size: number;
  at?: number;
  correlationId: number;
  apiKey?: number;
  api?: string;
  apiVersion?: number;
  clientId?: string | null;
  header?: Json;
  body?: Json;
  /** Why the frame, or part of it, could not be decoded. */
  error?: string;
}

export interface DecodeOptions {
  /** Only frames of this API (its name, case-insensitive, or its key). */
  api?: string;
}

/** Frames cut from a stream: whole ones, and the bytes of a partial last frame. */
export function splitFrames(bytes: Buffer): { frames: { offset: number; frame: Buffer }[]; trailing: number } {
  const frames: { offset: number; frame: Buffer }[] = [];
  let at = 0;
  while (bytes.length - at >= 4) {
    const size = bytes.readInt32BE(at);
    if (size < 0 || bytes.length - at - 4 < size) break;
    frames.push({ offset: at, frame: bytes.subarray(at, at + 4 + size) });
    at += 4 + size;
  }
  return { frames, trailing: bytes.length - at };
}

function timeAt(s: StreamBytes, offset: number): number | undefined {
  if (!s.times || s.times.length === 0) return undefined;
  let lo = 0;
  let hi = s.times.length - 1;
  if (s.times[0]!.offset > offset) return undefined;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (s.times[mid]!.offset <= offset) lo = mid;
    else hi = mid - 1;
  }
  return s.times[lo]!.at;
}

const CONSUMER_PROTOCOL = 'consumer';

/** The consumer's embedded protocol (JoinGroup metadata, SyncGroup assignments) as JSON, or undefined. */
function embedded(data: DataDefinition, b: Buffer): Json | undefined {
  if (b.length < 2) return undefined;
  const version = b.readInt16BE(0);
  if (version < data.minVersion) return undefined;
  try {
    const r = new Reader(b, 2);
    // A newer version reads as the newest known (its extra fields are tagged or trailing).
    const body = data.decode(r, Math.min(version, data.maxVersion));
    return { [data.name]: { version, ...(toJson(body) as Record<string, Json>) } };
  } catch {
    return undefined;
  }
}

function bytesFieldFor(apiKey: number, protocolType: string | null) {
  return (key: string, b: Buffer): Json | undefined => {
    if (key === 'records') return recordsJson(b);
    // JoinGroup (11) metadata and SyncGroup (14) assignment(s), when the group is a consumer group.
    if (protocolType !== null && protocolType !== CONSUMER_PROTOCOL) return undefined;
    if (apiKey === 11 && key === 'metadata') return embedded(ConsumerProtocolSubscriptionData, b);
    if (apiKey === 14 && key === 'assignment') return embedded(ConsumerProtocolAssignmentData, b);
    return undefined;
  };
}

function matchesApi(filter: string | undefined, apiKey: number | undefined, name: string | undefined): boolean {
  if (filter === undefined) return true;
  if (/^\d+$/.test(filter)) return apiKey === Number(filter);
  return name !== undefined && name.toLowerCase() === filter.toLowerCase();
}

/**
 * The decoded body without the fields its version does not have: decoders fill every field of the
 * newest schema (a Produce v7 body would show a topicId), a dissector shows what was on the wire.
 * Works on the decoded objects, before bytes become JSON, so that records are never mistaken for
 * structs. Unknown tagged fields (a symbol) are kept.
 */
export function onlyVersionFields(body: unknown, fields: FieldVersions | undefined, version: number): unknown {
  if (fields === undefined || body === null || typeof body !== 'object' || Buffer.isBuffer(body)) return body;
  if (Array.isArray(body)) return body.map((e) => onlyVersionFields(e, fields, version));
  const source = body as Record<string | symbol, unknown>;
  const out: Record<string | symbol, unknown> = {};
  for (const k of Object.keys(source)) {
    const f = fields[k];
    if (f === undefined) out[k] = source[k];
    else if (version >= f[0] && version <= f[1]) out[k] = f[2] ? onlyVersionFields(source[k], f[2], version) : source[k];
  }
  for (const sym of Object.getOwnPropertySymbols(source)) out[sym] = source[sym];
  return out;
}

/** What a response needs from its request to be decoded. */
interface Pending {
  apiKey: number;
  apiVersion: number;
  /** protocolType of the JoinGroup/SyncGroup, when the request says. */
  protocolType: string | null;
}

/** The frames of one conversation, each request followed by its response. */
export function* decodeConversation(c: Conversation, options: DecodeOptions = {}): Generator<DecodedFrame> {
  const requests = splitFrames(c.requests.bytes);
  const responses = splitFrames(c.responses.bytes);
  const responseByCorrelation = new Map<number, { offset: number; frame: Buffer }[]>();
  for (const r of responses.frames) {
    if (r.frame.length < 8) continue;
    const id = r.frame.readInt32BE(4);
    let list = responseByCorrelation.get(id);
    if (!list) responseByCorrelation.set(id, (list = []));
    list.push(r);
  }
  const used = new Set<number>();
  const groupTypes = new Map<string, string>();

  for (const { offset, frame } of requests.frames) {
    const out: DecodedFrame = { conn: c.conn, direction: 'request', offset, size: frame.length, correlationId: -1 };
    const at = timeAt(c.requests, offset);
    if (at !== undefined) out.at = at;
    let header;
    try {
      header = decodeRequestHeader(frame);
    } catch (err) {
      out.error = `the request header does not decode: ${toProtocolError(err).message}`;
      yield out;
      continue;
    }
    const def = ALL_API_DEFINITIONS.get(header.apiKey);
    out.correlationId = header.correlationId;
    out.apiKey = header.apiKey;
    out.api = def?.name ?? API_KEY_NAMES.get(header.apiKey) ?? `api ${header.apiKey}`;
    out.apiVersion = header.apiVersion;
    out.clientId = header.clientId;
    const flexible = def !== undefined && header.apiVersion >= def.flexibleFrom;
    out.header = { apiKey: header.apiKey, apiVersion: header.apiVersion, correlationId: header.correlationId, clientId: header.clientId, headerVersion: flexible ? 2 : 1 };
    let protocolType: string | null = null;
    try {
      const decoded = decodeRequestFrame(frame, ALL_API_DEFINITIONS);
      const body = decoded.body as { protocolType?: string; groupId?: string };
      if (header.apiKey === 11 && typeof body.protocolType === 'string' && body.groupId !== undefined) groupTypes.set(body.groupId, body.protocolType);
      if (header.apiKey === 11 || header.apiKey === 14) protocolType = body.protocolType ?? (body.groupId !== undefined ? (groupTypes.get(body.groupId) ?? null) : null);
      if (decoded.headerTaggedFields) (out.header as Record<string, Json>).taggedFields = decoded.headerTaggedFields.map((t) => ({ tag: t.tag, hex: t.data.toString('hex') }));
      out.body = toJson(onlyVersionFields(decoded.body, def && FIELD_VERSIONS[`${def.name}Request`], header.apiVersion), bytesFieldFor(header.apiKey, protocolType));
    } catch (err) {
      out.error = `the request does not decode: ${toProtocolError(err).message}`;
    }
    if (matchesApi(options.api, out.apiKey, out.api)) yield out;

    // The response, right after its request. Correlation ids may repeat on a long connection: take
    // the first response with this id at or after the previous one used.
    const candidates = responseByCorrelation.get(header.correlationId);
    const response = candidates?.find((r) => !used.has(r.offset));
    if (response === undefined) continue;
    used.add(response.offset);
    const res = decodeResponse(c, response, { apiKey: header.apiKey, apiVersion: header.apiVersion, protocolType });
    if (matchesApi(options.api, res.apiKey, res.api)) yield res;
  }
  // Responses to requests the capture does not hold (it began after they were sent).
  for (const r of responses.frames) {
    if (used.has(r.offset)) continue;
    const out: DecodedFrame = { conn: c.conn, direction: 'response', offset: r.offset, size: r.frame.length, correlationId: r.frame.length >= 8 ? r.frame.readInt32BE(4) : -1 };
    out.error = 'no request with this correlation id in the capture: the response cannot be decoded (it carries no api key)';
    if (options.api === undefined) yield out;
  }
}

function decodeResponse(c: Conversation, r: { offset: number; frame: Buffer }, p: Pending): DecodedFrame {
  const def = ALL_API_DEFINITIONS.get(p.apiKey);
  const out: DecodedFrame = {
    conn: c.conn,
    direction: 'response',
    offset: r.offset,
    size: r.frame.length,
    correlationId: r.frame.readInt32BE(4),
    apiKey: p.apiKey,
    api: def?.name ?? API_KEY_NAMES.get(p.apiKey) ?? `api ${p.apiKey}`,
    apiVersion: p.apiVersion,
  };
  const at = timeAt(c.responses, r.offset);
  if (at !== undefined) out.at = at;
  const flexible = def !== undefined && p.apiVersion >= def.flexibleFrom && p.apiKey !== 18;
  out.header = { correlationId: out.correlationId, headerVersion: flexible ? 1 : 0 };
  try {
    const decoded = decodeResponseFrame(p.apiKey, p.apiVersion, r.frame, ALL_API_DEFINITIONS);
    if (decoded.bodyVersion !== p.apiVersion) (out.header as Record<string, Json>).bodyVersion = decoded.bodyVersion;
    if (decoded.headerTaggedFields) (out.header as Record<string, Json>).taggedFields = decoded.headerTaggedFields.map((t) => ({ tag: t.tag, hex: t.data.toString('hex') }));
    const body = decoded.body as { protocolType?: string | null };
    const protocolType = p.protocolType ?? (typeof body.protocolType === 'string' ? body.protocolType : null);
    out.body = toJson(onlyVersionFields(decoded.body, def && FIELD_VERSIONS[`${def.name}Response`], decoded.bodyVersion), bytesFieldFor(p.apiKey, protocolType));
  } catch (err) {
    out.error = `the response does not decode: ${toProtocolError(err).message}`;
  }
  return out;
}

export interface DecodeSummary {
  connections: number;
  requests: number;
  responses: number;
  /** Frames with an error (undecodable header or body, response without its request). */
  errors: number;
  /** Frames before the first provable frame boundary of connections captured mid-way. */
  skippedAtStart: number;
}

export function summarize(conversations: Conversation[], frames: DecodedFrame[]): DecodeSummary {
  return {
    connections: conversations.length,
    requests: frames.filter((f) => f.direction === 'request').length,
    responses: frames.filter((f) => f.direction === 'response').length,
    errors: frames.filter((f) => f.error !== undefined).length,
    skippedAtStart: conversations.reduce((n, c) => n + (c.skippedAtStart ? c.skippedAtStart.requests + c.skippedAtStart.responses : 0), 0),
  };
}
