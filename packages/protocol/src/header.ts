import type { Reader } from './primitives/reader.js';
import type { Writer } from './primitives/writer.js';
import { type TaggedField, writeTaggedFields, readTagHeader } from './messages/runtime.js';

/**
 * Request header v1:  api_key int16, api_version int16, correlation_id int32, client_id nullable string
 * Request header v2:  the same, then a tagged-fields section (used when the request version is flexible)
 * Response header v0: correlation_id int32
 * Response header v1: correlation_id int32, then a tagged-fields section (flexible response
 *                     versions, except ApiVersions, which always answers with v0 so that any
 *                     client can read the answer to a version it does not know).
 *
 * client_id keeps its int16 length even in header v2: it is never a compact string.
 */
export interface RequestHeader {
  apiKey: number;
  apiVersion: number;
  correlationId: number;
  clientId: string | null;
  /** Tagged fields of a v2 header, kept for byte-exact round trips (normally none). */
  taggedFields?: TaggedField[];
}

export interface ResponseHeader {
  correlationId: number;
  taggedFields?: TaggedField[];
}

export const API_VERSIONS_KEY = 18;

export function requestHeaderVersion(flexible: boolean): 1 | 2 {
  return flexible ? 2 : 1;
}

export function responseHeaderVersion(apiKey: number, flexible: boolean): 0 | 1 {
  return flexible && apiKey !== API_VERSIONS_KEY ? 1 : 0;
}

export function writeRequestHeader(w: Writer, h: RequestHeader, headerVersion: 1 | 2): void {
  w.writeInt16(h.apiKey);
  w.writeInt16(h.apiVersion);
  w.writeInt32(h.correlationId);
  w.writeNullableString(h.clientId);
  if (headerVersion === 2) writeTaggedFields(w, null, h.taggedFields);
}

/** Reads the fixed part of a request header; the caller decides from it whether tags follow. */
export function readRequestHeaderStart(r: Reader): RequestHeader {
  const apiKey = r.readInt16();
  const apiVersion = r.readInt16();
  const correlationId = r.readInt32();
  const clientId = r.readNullableString();
  return { apiKey, apiVersion, correlationId, clientId };
}

export function readHeaderTags(r: Reader): TaggedField[] | undefined {
  let tags: TaggedField[] | undefined;
  const count = r.readUVarint();
  let previous = -1;
  for (let i = 0; i < count; i++) {
    const [tag, end] = readTagHeader(r, previous);
    previous = tag;
    (tags ??= []).push({ tag, data: r.readRaw(end - r.offset) });
  }
  return tags;
}

export function writeResponseHeader(w: Writer, h: ResponseHeader, headerVersion: 0 | 1): void {
  w.writeInt32(h.correlationId);
  if (headerVersion === 1) writeTaggedFields(w, null, h.taggedFields);
}

export function readResponseHeader(r: Reader, headerVersion: 0 | 1): ResponseHeader {
  const correlationId = r.readInt32();
  if (headerVersion === 0) return { correlationId };
  const taggedFields = readHeaderTags(r);
  return taggedFields ? { correlationId, taggedFields } : { correlationId };
}
