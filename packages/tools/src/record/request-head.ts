// What the proxy needs from the first bytes of a request frame: the header (to match the response
// and label the exchange), the client's software name (ApiVersions v3+) and Produce's acks (acks=0
// gets no response). Read from a copy of the frame's head, for any version, known or not.
import { API_DEFINITIONS, ApiKey, readHeaderTags, readRequestHeaderStart, Reader } from '@kwire/protocol';

export interface RequestHead {
  apiKey: number;
  apiVersion: number;
  correlationId: number;
  clientId: string | null;
  /** ApiVersions v3+: ClientSoftwareName and ClientSoftwareVersion. */
  software?: { name: string; version: string };
  /** Produce: the acks field (0 means the broker sends no response). */
  acks?: number;
}

/** Kafka's first flexible version per API, for APIs the proxy looks into beyond the header. */
function flexibleFrom(apiKey: number): number {
  if (apiKey === ApiKey.ApiVersions) return 3;
  if (apiKey === ApiKey.Produce) return 9;
  return API_DEFINITIONS.get(apiKey)?.flexibleFrom ?? Infinity;
}

/**
 * Parses the head of a request frame (size prefix included; it may be only the first bytes of a
 * longer frame). Throws when even the header cannot be read.
 */
export function parseRequestHead(head: Buffer): RequestHead {
  const r = new Reader(head, 4);
  const h = readRequestHeaderStart(r);
  if (h.apiKey < 0 || h.apiVersion < 0) throw new Error(`api key ${h.apiKey} version ${h.apiVersion} is not a Kafka request header`);
  const out: RequestHead = { apiKey: h.apiKey, apiVersion: h.apiVersion, correlationId: h.correlationId, clientId: h.clientId };
  try {
    if (h.apiKey === ApiKey.ApiVersions && h.apiVersion >= 3) {
      readHeaderTags(r);
      out.software = { name: r.readCompactString(), version: r.readCompactString() };
    } else if (h.apiKey === ApiKey.Produce) {
      const v = h.apiVersion;
      if (v >= flexibleFrom(ApiKey.Produce)) {
        readHeaderTags(r);
        r.readCompactNullableString(); // transactional_id
      } else if (v >= 3) {
        r.readNullableString(); // transactional_id
      }
      out.acks = r.readInt16();
    }
  } catch {
    // The body is not what this version should hold, or the head was cut short: the header is
    // enough to record the exchange; acks then counts as "a response comes".
  }
  return out;
}
