// Broker addresses in Metadata and FindCoordinator responses, replaced by the proxy's own
// listeners so that a client keeps talking through the proxy after its bootstrap connection.
//
// Versions the codec implements are decoded and re-encoded with it (Metadata v9-13,
// FindCoordinator v3-6). Older versions, which old clients still send, are rewritten by splicing
// the address fields in place: those versions are not flexible and the addresses come first in
// the body, so a small reader of their fixed layout suffices. Every other byte is left as it was.
import { API_DEFINITIONS, ApiKey, decodeResponseFrame, encodeResponseFrame, Reader, Writer } from '@kwire/protocol';

export interface Address {
  host: string;
  port: number;
}

/** Maps a broker's address to the proxy listener that forwards to it (opening one if needed). */
export type AddressMapper = (broker: Address) => Promise<Address>;

export interface Rewritten {
  frame: Buffer;
  addresses: { from: string; to: string }[];
  method: 'codec' | 'splice';
}

/** True for the responses the proxy must hold back and rewrite. */
export function carriesAddresses(apiKey: number): boolean {
  return apiKey === ApiKey.Metadata || apiKey === ApiKey.FindCoordinator;
}

const addr = (a: Address) => `${a.host}:${a.port}`;

/** A real address to map: error answers carry host "" and port -1. */
function mappable(host: string, port: number): boolean {
  return host !== '' && port > 0;
}

/**
 * The response with every broker address mapped, or null when nothing needed a change. Throws
 * when the frame cannot be read; the caller then forwards the original.
 */
export async function rewriteAddresses(apiKey: number, apiVersion: number, frame: Buffer, map: AddressMapper): Promise<Rewritten | null> {
  const api = API_DEFINITIONS.get(apiKey);
  if (api && apiVersion >= api.minVersion && apiVersion <= api.maxVersion) return viaCodec(apiKey, apiVersion, frame, map);
  return splice(apiKey, apiVersion, frame, map);
}

type Entry = { host: string; port: number };

async function viaCodec(apiKey: number, apiVersion: number, frame: Buffer, map: AddressMapper): Promise<Rewritten | null> {
  const decoded = decodeResponseFrame(apiKey, apiVersion, frame);
  const body = decoded.body as { brokers?: Entry[]; coordinators?: Entry[] } & Partial<Entry>;
  const entries: Entry[] = apiKey === ApiKey.Metadata ? body.brokers! : apiVersion < 4 ? [body as Entry] : body.coordinators!;
  const addresses: { from: string; to: string }[] = [];
  for (const e of entries) {
    if (!mappable(e.host, e.port)) continue;
    const to = await map({ host: e.host, port: e.port });
    if (to.host === e.host && to.port === e.port) continue;
    addresses.push({ from: addr(e), to: addr(to) });
    e.host = to.host;
    e.port = to.port;
  }
  if (addresses.length === 0) return null;
  // A writer of its own: the result outlives the next encode on the shared one.
  const out = encodeResponseFrame(apiKey, apiVersion, decoded.correlationId, decoded.body, new Writer(frame.length + 256), decoded.headerTaggedFields);
  return { frame: out, addresses, method: 'codec' };
}

/** Host and port fields of an old, non-flexible response: where they are in the frame. */
interface Field {
  hostAt: number;
  hostEnd: number;
  portAt: number;
  host: string;
  port: number;
}

function oldLayout(apiKey: number, v: number, frame: Buffer): Field[] | undefined {
  const r = new Reader(frame, 8); // size prefix, correlation id (response header v0)
  const fields: Field[] = [];
  const entry = () => {
    const hostAt = r.offset;
    const host = r.readString();
    const hostEnd = r.offset;
    const portAt = r.offset;
    const port = r.readInt32();
    fields.push({ hostAt, hostEnd, portAt, host, port });
  };
  if (apiKey === ApiKey.Metadata && v <= 8) {
    if (v >= 3) r.readInt32(); // throttle_time_ms
    const n = r.readArrayLength(10);
    for (let i = 0; i < n; i++) {
      r.readInt32(); // node_id
      entry();
      if (v >= 1) r.readNullableString(); // rack
    }
    return fields;
  }
  if (apiKey === ApiKey.FindCoordinator && v <= 2) {
    if (v >= 1) r.readInt32(); // throttle_time_ms
    r.readInt16(); // error_code
    if (v >= 1) r.readNullableString(); // error_message
    r.readInt32(); // node_id
    entry();
    return fields;
  }
  return undefined;
}

function splice(apiKey: number, apiVersion: number, frame: Buffer, map: AddressMapper): Promise<Rewritten | null> {
  const fields = oldLayout(apiKey, apiVersion, frame);
  if (fields === undefined) {
    throw new Error(`cannot rewrite addresses in ${apiKey === ApiKey.Metadata ? 'Metadata' : 'FindCoordinator'} v${apiVersion}: a version kwire does not know the layout of`);
  }
  return (async () => {
    const parts: Buffer[] = [];
    const addresses: { from: string; to: string }[] = [];
    let at = 4;
    for (const f of fields) {
      if (!mappable(f.host, f.port)) continue;
      const to = await map({ host: f.host, port: f.port });
      if (to.host === f.host && to.port === f.port) continue;
      addresses.push({ from: addr(f), to: addr(to) });
      parts.push(frame.subarray(at, f.hostAt));
      const host = Buffer.from(to.host, 'utf8');
      const fixed = Buffer.allocUnsafe(2 + host.length + 4);
      fixed.writeInt16BE(host.length, 0);
      host.copy(fixed, 2);
      fixed.writeInt32BE(to.port, 2 + host.length);
      parts.push(fixed);
      at = f.portAt + 4;
    }
    if (addresses.length === 0) return null;
    parts.push(frame.subarray(at));
    const body = Buffer.concat(parts);
    const out = Buffer.allocUnsafe(4 + body.length);
    out.writeInt32BE(body.length, 0);
    body.copy(out, 4);
    return { frame: out, addresses, method: 'splice' as const };
  })();
}
