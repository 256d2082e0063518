// Which field of a frame holds a given byte: for reporting where a re-encoded frame differs.
//
// How: the frame is decoded again with a reader that throws as soon as a read covers the byte. The
// generated decoders add the field name and array index to an error on its way out (`atPath`), so
// the error that reaches us carries the full path, e.g. "topics/0/partitions/2/fetchOffset". No
// tracing code in the decoders, and nothing to keep in step with the generator.
import { KafkaProtocolError, isKafkaProtocolError, readHeaderTags, readResponseHeader, responseHeaderVersion, Reader, type ApiDefinition, type DataDefinition } from '@kwire/protocol';

const TRAPPED = 'kwire.conformance.trapped';

class TrapReader extends Reader {
  trap = -1;
}

// Every read method checks, after reading, whether it consumed the trapped byte. Wrapping the
// prototype's methods (rather than listing them) keeps this right when the Reader gains one.
for (const name of Object.getOwnPropertyNames(Reader.prototype)) {
  if (!(name.startsWith('read') || name === 'skip')) continue;
  const descriptor = Object.getOwnPropertyDescriptor(Reader.prototype, name);
  if (typeof descriptor?.value !== 'function') continue;
  const original = descriptor.value as (this: Reader, ...args: unknown[]) => unknown;
  Object.defineProperty(TrapReader.prototype, name, {
    value: function (this: TrapReader, ...args: unknown[]): unknown {
      const start = this.offset;
      const value = original.apply(this, args);
      if (start <= this.trap && this.trap < this.offset) {
        throw new KafkaProtocolError(TRAPPED, { reason: 'invalid-value', offset: start });
      }
      return value;
    },
    writable: true,
    configurable: true,
  });
}

/** Where a byte lies: the field path and the offset at which that field starts. */
export interface FieldLocation {
  path: string;
  /** First byte of the field (or of the read that covers the byte). */
  fieldOffset: number;
}

function trapped(err: unknown): FieldLocation | undefined {
  if (isKafkaProtocolError(err) && err.detail === TRAPPED) return { path: err.path, fieldOffset: err.offset ?? -1 };
  return undefined;
}

function run(frame: Buffer, offset: number, decode: (r: TrapReader) => void): FieldLocation {
  if (offset >= frame.length) return { path: '(after the last field)', fieldOffset: frame.length };
  if (offset < 4) return { path: 'size', fieldOffset: 0 };
  const r = new TrapReader(frame);
  r.trap = offset;
  try {
    r.offset = 4;
    decode(r);
  } catch (err) {
    const hit = trapped(err);
    if (hit) return hit;
    return { path: `(not decodable: ${(err as Error).message})`, fieldOffset: -1 };
  }
  return { path: '(after the last field)', fieldOffset: r.offset };
}

/** The field of a request frame (size prefix included) that holds byte `offset`. */
export function requestFieldAt(api: ApiDefinition, frame: Buffer, offset: number): FieldLocation {
  return run(frame, offset, (r) => {
    const names = ['header/apiKey', 'header/apiVersion', 'header/correlationId', 'header/clientId'] as const;
    const reads = [() => r.readInt16(), () => r.readInt16(), () => r.readInt32(), () => r.readNullableString()];
    let version = 0;
    for (let i = 0; i < reads.length; i++) {
      try {
        const v = reads[i]!();
        if (i === 1) version = v as number;
      } catch (err) {
        if (trapped(err)) throw new KafkaProtocolError(TRAPPED, { reason: 'invalid-value', offset: (err as KafkaProtocolError).offset, path: names[i] });
        throw err;
      }
    }
    if (version >= api.flexibleFrom) {
      try {
        readHeaderTags(r);
      } catch (err) {
        if (trapped(err)) throw new KafkaProtocolError(TRAPPED, { reason: 'invalid-value', offset: (err as KafkaProtocolError).offset, path: 'header/taggedFields' });
        throw err;
      }
    }
    api.decodeRequest(r, version);
  });
}

/** The field of a response frame (size prefix included) that holds byte `offset`. */
export function responseFieldAt(api: ApiDefinition, requestVersion: number, bodyVersion: number, frame: Buffer, offset: number): FieldLocation {
  return run(frame, offset, (r) => {
    try {
      readResponseHeader(r, responseHeaderVersion(api.apiKey, requestVersion >= api.flexibleFrom));
    } catch (err) {
      if (trapped(err)) throw new KafkaProtocolError(TRAPPED, { reason: 'invalid-value', offset: (err as KafkaProtocolError).offset, path: 'header' });
      throw err;
    }
    api.decodeResponse(r, bodyVersion);
  });
}

/** The field of an embedded structure (int16 version, then the body) that holds byte `offset`. */
export function dataFieldAt(data: DataDefinition, bytes: Buffer, offset: number): FieldLocation {
  if (offset < 2) return { path: 'version', fieldOffset: 0 };
  if (offset >= bytes.length) return { path: '(after the last field)', fieldOffset: bytes.length };
  const r = new TrapReader(bytes);
  r.trap = offset;
  try {
    const version = r.readInt16();
    data.decode(r, version);
  } catch (err) {
    const hit = trapped(err);
    if (hit) return hit;
    return { path: `(not decodable: ${(err as Error).message})`, fieldOffset: -1 };
  }
  return { path: '(after the last field)', fieldOffset: r.offset };
}

/** The first offset where two byte strings differ, or -1 when they are equal. */
export function firstDifference(a: Buffer, b: Buffer, from = 0): number {
  const n = Math.min(a.length, b.length);
  for (let i = from; i < n; i++) if (a[i] !== b[i]) return i;
  return a.length === b.length ? -1 : n;
}
