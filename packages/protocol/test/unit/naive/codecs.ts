// The production codec of each scoped message, looked up by name, so that tests can drive every
// API and data structure the same way. (This file imports src/ on purpose: it is the thing under
// test, not part of the naive encoder.)
import { API_DEFINITIONS, ConsumerProtocolAssignmentData, ConsumerProtocolSubscriptionData, Reader, Writer } from '../../../src/index.js';
import type { ScopedMessage } from './schema.js';

export interface BodyCodec {
  encode(w: Writer, body: unknown, version: number): void;
  decode(r: Reader, version: number): unknown;
}

export function codecFor(s: ScopedMessage): BodyCodec {
  if (s.kind === 'data') {
    const d = s.api === 'ConsumerProtocolSubscription' ? ConsumerProtocolSubscriptionData : s.api === 'ConsumerProtocolAssignment' ? ConsumerProtocolAssignmentData : undefined;
    if (!d) throw new Error(`no data definition for ${s.api}`);
    return { encode: (w, b, v) => d.encode(w, b as never, v), decode: (r, v) => d.decode(r, v) };
  }
  const api = API_DEFINITIONS.get(s.apiKey!);
  if (!api) throw new Error(`no API definition for ${s.api} (${s.apiKey})`);
  return s.kind === 'request'
    ? { encode: (w, b, v) => api.encodeRequest(w, b as never, v), decode: (r, v) => api.decodeRequest(r, v) }
    : { encode: (w, b, v) => api.encodeResponse(w, b as never, v), decode: (r, v) => api.decodeResponse(r, v) };
}

const writer = new Writer();

/** Encodes with the production encoder; the bytes are owned by the caller (Writer ownership rule). */
export function prodEncode(c: BodyCodec, body: unknown, version: number): Buffer {
  try {
    c.encode(writer, body, version);
  } catch (e) {
    writer.abandon();
    throw e;
  }
  return writer.finish();
}

/** Decodes with the production decoder and checks that it used every byte. */
export function prodDecode(c: BodyCodec, bytes: Buffer, version: number): unknown {
  const r = new Reader(bytes);
  const out = c.decode(r, version);
  if (r.offset !== bytes.length) throw new Error(`decoder stopped at byte ${r.offset} of ${bytes.length}`);
  return out;
}
