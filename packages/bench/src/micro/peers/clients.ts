// The decoders compared by decode-peers.ts, each called the way its client calls it once a whole
// Fetch response frame has been read off the socket: frame header, response body, record batches
// (decompressed with the codec the client uses) and records, then every record's value touched
// (length plus first byte), so that lazy decoders pay for what a user reads.
//
//   kwire records()         decodeResponseFrame (Fetch v18), then readRecordBatches over each
//                           partition's records (default buffer pool, CRC-32C checked, as the
//                           consumer will), batch.records(), record.value, batch.release()
//   kwire cursor            the same with batch.cursor(): one reused Record, no per-record objects
//   kwire records(), no CRC records() with checkCrc: false: neither peer checks CRCs
//   kafkajs                 what Connection#processData and Connection#send do: Decoder over the
//                           frame, size and correlation id read off, then fetch/v11/response
//                           decode() (async) and parse(); messages[].value. lz4 through
//                           @2l/kafkajs-lz4 (lz4-napi), zstd through @sensejs/kafkajs-zstd-support
//                           (zstd-napi), registered in kafkajs.CompressionCodecs as users do
//   platformatic            what Connection#onData does: correlation id read, the header's empty
//                           tagged fields skipped, fetchV17.parseResponse on a Reader over the rest
//                           (records decoded eagerly by readRecordsBatches; lz4 by its wasm codec,
//                           zstd by node:zlib); batches[].records[].value
//
// Not included on any side: what each consumer does after decoding (kafkajs's Batch, with a Long
// per message to filter offsets; platformatic's MessagesStream, with deserializers and a Message
// object per record; kwire's consumer layer).
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as zlib from 'node:zlib';
import * as K from '@kwire/protocol';
import { KWIRE_FETCH_VERSION, PLATFORMATIC_FETCH_VERSION, ValueDigest, type Codec, type DigestResult, type FetchCase } from './frames.js';

const require = createRequire(import.meta.url);

export interface Client {
  id: string;
  label: string;
  /** The frame of `c` this client reads. */
  frame(c: FetchCase): Buffer;
  /** Decodes the frame once touching every value; returns the records decoded. Sync clients. */
  decode?: (frame: Buffer) => number;
  /** The same for clients whose decoding is async (kafkajs). */
  decodeAsync?: (frame: Buffer) => Promise<number>;
  /** Decodes the frame once and digests every record (partition, offset, value), for verification. */
  collect(frame: Buffer): Promise<DigestResult>;
  /** Why this client cannot decode `codec` on this Node, or null. */
  cannot(codec: Codec): string | null;
}

/** Where every touched value goes: kept an int32 so that summing allocates nothing. */
let sink = 0;
export function touched(): number {
  return sink;
}

/* ------------------------------------------------------------------------------------------ kwire */

type KwireMode = 'records' | 'cursor';

function kwireDecode(frame: Buffer, mode: KwireMode, options: K.RecordBatchDecodeOptions | undefined): number {
  const body = K.decodeResponseFrame(K.ApiKey.Fetch, KWIRE_FETCH_VERSION, frame).body as K.FetchResponse;
  let n = 0;
  const topics = body.responses;
  for (let t = 0; t < topics.length; t++) {
    const partitions = topics[t]!.partitions;
    for (let p = 0; p < partitions.length; p++) {
      const records = partitions[p]!.records;
      if (records === null) continue;
      const reader = K.readRecordBatches(records, options);
      for (let batch = reader.next(); batch !== null; batch = reader.next()) {
        if (mode === 'records') {
          const rs = batch.records();
          for (let i = 0; i < rs.length; i++) {
            const v = rs[i]!.value;
            if (v !== null) sink = (sink + v.length + v[0]!) | 0;
          }
          n += rs.length;
        } else {
          const c = batch.cursor();
          for (let r = c.next(); r !== null; r = c.next()) {
            const v = r.value;
            if (v !== null) sink = (sink + v.length + v[0]!) | 0;
            n++;
          }
        }
        batch.release();
      }
    }
  }
  return n;
}

function kwireCollect(frame: Buffer, mode: KwireMode, options: K.RecordBatchDecodeOptions | undefined): DigestResult {
  const d = new ValueDigest();
  const body = K.decodeResponseFrame(K.ApiKey.Fetch, KWIRE_FETCH_VERSION, frame).body as K.FetchResponse;
  for (const topic of body.responses) {
    for (const partition of topic.partitions) {
      if (partition.records === null) continue;
      const reader = K.readRecordBatches(partition.records, options);
      for (let batch = reader.next(); batch !== null; batch = reader.next()) {
        if (mode === 'records') {
          for (const r of batch.records()) d.add(partition.partitionIndex, r.offset, r.value);
        } else {
          const c = batch.cursor();
          for (let r = c.next(); r !== null; r = c.next()) d.add(partition.partitionIndex, r.offset, r.value);
        }
        batch.release();
      }
    }
  }
  return d.result();
}

export function kwireClients(): Client[] {
  const noCrc: K.RecordBatchDecodeOptions = { checkCrc: false };
  const make = (id: string, label: string, mode: KwireMode, options: K.RecordBatchDecodeOptions | undefined): Client => ({
    id,
    label,
    frame: (c) => c.frames.kwire,
    decode: (frame) => kwireDecode(frame, mode, options),
    collect: async (frame) => kwireCollect(frame, mode, options),
    cannot: () => null,
  });
  return [make('kwire', 'kwire records()', 'records', undefined), make('kwire-cursor', 'kwire cursor', 'cursor', undefined), make('kwire-nocrc', 'kwire records(), no CRC', 'records', noCrc)];
}

/* ---------------------------------------------------------------------------------------- kafkajs */

interface KafkajsDecoder {
  readInt32(): number;
  readBytes(n: number): Buffer;
  readAll(): Buffer;
}
interface KafkajsMessage {
  offset: string;
  value: Buffer | null;
}
interface KafkajsFetchData {
  responses: { topicName: string; partitions: { partition: number; messages: KafkajsMessage[] }[] }[];
}
interface KafkajsResponse {
  decode(payload: Buffer): Promise<unknown>;
  parse(decoded: unknown): Promise<KafkajsFetchData>;
}

export function packageVersion(name: string): string {
  // The entry point's folder, then up to the package.json whose name is `name`.
  let dir = dirname(require.resolve(name));
  for (let i = 0; i < 6; i++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === name) return pkg.version ?? '?';
    } catch {
      // not here: go up
    }
    dir = dirname(dir);
  }
  return '?';
}

export async function kafkajsClient(): Promise<Client> {
  const kafkajs = require('kafkajs') as { CompressionTypes: Record<string, number>; CompressionCodecs: Record<number, () => unknown> };
  // Codecs as a kafkajs user registers them.
  const LZ4Codec = require('@2l/kafkajs-lz4') as new () => { codec: () => unknown };
  kafkajs.CompressionCodecs[kafkajs.CompressionTypes.LZ4!] = new LZ4Codec().codec;
  // Its CommonJS build is broken (uses tslib helpers it does not import): load the ES module, which
  // imports the same kafkajs instance and registers its codec there.
  const zstdCodec: string = '@sensejs/kafkajs-zstd-support';
  await import(zstdCodec);
  if (kafkajs.CompressionCodecs[kafkajs.CompressionTypes.ZSTD!]!.name !== 'zstdKafkaCodec') throw new Error('@sensejs/kafkajs-zstd-support did not register its codec');
  const Decoder = require('kafkajs/src/protocol/decoder') as new (b: Buffer) => KafkajsDecoder;
  const response = require('kafkajs/src/protocol/requests/fetch/v11/response') as KafkajsResponse;

  async function fetchData(frame: Buffer): Promise<KafkajsFetchData> {
    // Connection#processData: size, the response's bytes, correlation id, the rest as payload.
    const decoder = new Decoder(frame);
    const size = decoder.readInt32();
    const framed = new Decoder(decoder.readBytes(size));
    framed.readInt32();
    const payload = framed.readAll();
    // Connection#send: response.decode(payload), then response.parse(decoded).
    return response.parse(await response.decode(payload));
  }
  return {
    id: 'kafkajs',
    label: `kafkajs ${packageVersion('kafkajs')}`,
    frame: (c) => c.frames.kafkajs,
    decodeAsync: async (frame) => {
      const data = await fetchData(frame);
      let n = 0;
      const topics = data.responses;
      for (let t = 0; t < topics.length; t++) {
        const partitions = topics[t]!.partitions;
        for (let p = 0; p < partitions.length; p++) {
          const ms = partitions[p]!.messages;
          for (let i = 0; i < ms.length; i++) {
            const v = ms[i]!.value;
            if (v !== null) sink = (sink + v.length + v[0]!) | 0;
          }
          n += ms.length;
        }
      }
      return n;
    },
    collect: async (frame) => {
      const d = new ValueDigest();
      const data = await fetchData(frame);
      for (const topic of data.responses) for (const partition of topic.partitions) for (const m of partition.messages) d.add(partition.partition, m.offset, m.value);
      return d.result();
    },
    cannot: () => null,
  };
}

/* ----------------------------------------------------------------------------------- platformatic */

interface PlatformaticRecord {
  offsetDelta: number;
  value: Buffer | null;
}
interface PlatformaticBatch {
  firstOffset: bigint;
  records: PlatformaticRecord[];
}
interface PlatformaticFetchResponse {
  responses: { topicId: string; partitions: { partitionIndex: number; records?: PlatformaticBatch[] | null }[] }[];
}
interface PlatformaticModule {
  Reader: { from(buffer: Buffer): unknown };
  fetchV17: { parseResponse(correlationId: number, apiKey: number, apiVersion: number, reader: unknown): PlatformaticFetchResponse };
}

/** @platformatic/kafka 2.x declares node >= 22.22 || >= 24.6. */
export function platformaticNodeOk(): boolean {
  const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
  return (major === 22 && minor >= 22) || (major === 24 && minor >= 6) || major > 24;
}

export async function platformaticClient(): Promise<Client> {
  const m = (await import('@platformatic/kafka')) as unknown as PlatformaticModule;
  if (PLATFORMATIC_FETCH_VERSION !== 17) throw new Error('platformatic frames are Fetch v17');
  const { Reader, fetchV17 } = m;

  function parse(frame: Buffer): PlatformaticFetchResponse {
    // Connection#onData: size, correlation id, then (response header v1) the header's tagged
    // fields, skipped as one byte; the parser gets a Reader over the rest of the frame.
    const size = frame.readInt32BE(0);
    const correlationId = frame.readInt32BE(4);
    return fetchV17.parseResponse(correlationId, 1, 17, Reader.from(frame.subarray(9, size + 4)));
  }
  return {
    id: 'platformatic',
    label: `platformatic ${packageVersion('@platformatic/kafka')}`,
    frame: (c) => c.frames.platformatic,
    decode: (frame) => {
      const res = parse(frame);
      let n = 0;
      const topics = res.responses;
      for (let t = 0; t < topics.length; t++) {
        const partitions = topics[t]!.partitions;
        for (let p = 0; p < partitions.length; p++) {
          const batches = partitions[p]!.records;
          if (!batches) continue;
          for (let b = 0; b < batches.length; b++) {
            const rs = batches[b]!.records;
            for (let i = 0; i < rs.length; i++) {
              const v = rs[i]!.value;
              if (v !== null) sink = (sink + v.length + v[0]!) | 0;
            }
            n += rs.length;
          }
        }
      }
      return n;
    },
    collect: async (frame) => {
      const d = new ValueDigest();
      for (const topic of parse(frame).responses) {
        for (const partition of topic.partitions) {
          for (const batch of partition.records ?? []) {
            for (const r of batch.records) d.add(partition.partitionIndex, batch.firstOffset + BigInt(r.offsetDelta), r.value);
          }
        }
      }
      return d.result();
    },
    cannot: (codec) =>
      codec === 'zstd' && typeof (zlib as { zstdDecompressSync?: unknown }).zstdDecompressSync !== 'function' ? `its zstd is node:zlib's, absent on Node ${process.versions.node}` : null,
  };
}
