// Support shared by the generated message modules (src/messages/*.ts, "generated, do not edit").
import { KafkaProtocolError } from '../errors.js';
import type { Reader } from '../primitives/reader.js';
import { Writer } from '../primitives/writer.js';

/**
 * Tagged fields that a decoder did not know (a newer peer's): kept on the decoded struct under
 * this symbol and written back by the encoder, so that a decode/encode round trip is byte-exact.
 * A symbol rather than a property so that it stays out of JSON, deep-equality and spreads.
 */
export const unknownTaggedFields: unique symbol = Symbol.for('kwire.unknownTaggedFields') as never;

export interface TaggedField {
  readonly tag: number;
  /** The field's bytes, a view into the decoded buffer. */
  readonly data: Buffer;
}

export interface WithUnknownTags {
  [unknownTaggedFields]?: TaggedField[];
}

/**
 * What an encoder accepts for a message type T: every field optional (a missing field takes the
 * schema default for the version being written), int64 fields as bigint or safe-integer number.
 */
export type Input<T> = T extends Buffer
  ? T | Uint8Array
  : T extends bigint
    ? bigint | number
    : T extends string | number | boolean | null | undefined
      ? T
      : T extends readonly (infer E)[]
        ? readonly Input<E>[]
        : { [K in keyof T]?: Input<T[K]> };

/** An API as the generated modules describe it: our implemented version range and the four codecs. */
export interface ApiDefinition<Req = unknown, Res = unknown> {
  readonly apiKey: number;
  readonly name: string;
  /** The versions kwire implements (and can negotiate). */
  readonly minVersion: number;
  readonly maxVersion: number;
  /** First flexible version (KIP-482), or Infinity for an API that never is. */
  readonly flexibleFrom: number;
  readonly encodeRequest: (w: Writer, body: Input<Req>, version: number) => void;
  readonly decodeRequest: (r: Reader, version: number) => Req;
  readonly encodeResponse: (w: Writer, body: Input<Res>, version: number) => void;
  readonly decodeResponse: (r: Reader, version: number) => Res;
}

/** A versioned structure that is not an API message (the consumer's embedded protocol). */
export interface DataDefinition<T = unknown> {
  readonly name: string;
  readonly minVersion: number;
  readonly maxVersion: number;
  readonly encode: (w: Writer, body: Input<T>, version: number) => void;
  readonly decode: (r: Reader, version: number) => T;
}

export const EMPTY_BYTES: Buffer = Buffer.alloc(0);

/** Writes one tagged field's value: called with a scratch writer to learn its size first. */
export type TaggedWrite = [tag: number, write: (w: Writer) => void];

/**
 * Writes a tagged-fields section: the known fields that differ from their defaults and the unknown
 * ones kept from a decode, in increasing tag order (readers may reject any other order).
 */
export function writeTaggedFields(w: Writer, known: TaggedWrite[] | null, unknown: readonly TaggedField[] | undefined): void {
  const knownCount = known === null ? 0 : known.length;
  const unknownCount = unknown === undefined ? 0 : unknown.length;
  if (knownCount + unknownCount === 0) {
    w.writeUVarint(0);
    return;
  }
  const entries: { tag: number; data: Buffer }[] = [];
  for (let i = 0; i < knownCount; i++) {
    const [tag, write] = known![i]!;
    // Tagged fields are rare and small: a fresh scratch writer keeps nested tagged structs safe.
    const scratch = new Writer(64);
    write(scratch);
    entries.push({ tag, data: scratch.finish() });
  }
  for (let i = 0; i < unknownCount; i++) entries.push(unknown![i]!);
  entries.sort((a, b) => a.tag - b.tag);
  for (let i = 1; i < entries.length; i++) {
    if (entries[i]!.tag === entries[i - 1]!.tag) {
      throw new KafkaProtocolError(`tagged field ${entries[i]!.tag} given twice`, { reason: 'invalid-value' });
    }
  }
  w.writeUVarint(entries.length);
  for (const e of entries) {
    w.writeUVarint(e.tag);
    w.writeUVarint(e.data.length);
    w.writeRaw(e.data);
  }
}

/**
 * Reads a tagged field's header: its tag and the end offset of its value (checked to fit). Tags
 * must come in strictly increasing order (KIP-482, and what every writer does): a repeated or
 * out-of-order tag is refused, which also keeps every decoded message re-encodable byte for byte.
 */
export function readTagHeader(r: Reader, previous: number): [tag: number, end: number] {
  const start = r.offset;
  const tag = r.readUVarint();
  if (tag <= previous) r.fail(`tagged field ${tag} after tag ${previous}: tags must be strictly increasing`, 'invalid-value', start);
  const at = r.offset;
  const size = r.readUVarint();
  if (size > r.remaining) r.fail(`tagged field ${tag} of ${size} bytes, ${r.remaining} left`, 'invalid-length', at);
  return [tag, r.offset + size];
}

/** After a known tagged field's value: it must have used exactly its declared size. */
export function endTag(r: Reader, tag: number, end: number, outerEnd: number): void {
  if (r.offset !== end) r.fail(`tagged field ${tag} declared ${end - r.offset} bytes more than its value used`, 'invalid-length');
  r.end = outerEnd;
}

export function nullNotAllowed(field: string, version: number): never {
  throw new KafkaProtocolError(`${field} is null, which version ${version} does not allow`, { reason: 'invalid-value' });
}
