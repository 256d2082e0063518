// The capture format that `kwire record` writes (writer.ts beside this file) and `kwire
// conformance` and `kwire decode` read (here; documented for people in test-fixtures/README.md).
// One folder per capture:
//
//   capture.json              CaptureInfo: format version, target, listeners, start/stop times
//   index.jsonl               one IndexLine per line: connections, exchanges, closes, listeners
//   conn-0001.client.bin      every byte the client sent on connection 1, as sent (Kafka request frames)
//   conn-0001.broker.bin      every byte the broker sent on connection 1, as sent (response frames)
//   conn-0001.rewritten.bin   the Metadata/FindCoordinator frames as the proxy rewrote them (only if any)
//   manifest.json             optional CaptureManifest: who talked, and the facts the scenario knows
//
// Why two raw streams per connection rather than a file of records: Kafka frames delimit
// themselves (int32 size prefix), so the streams are the exact bytes on the wire, written as they
// arrive with no framing of ours; the index only points into them. A proxy killed mid-frame
// leaves valid files (a cut-off tail), and a test can compare a stream with what a client sent.
import { closeSync, existsSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { CompressionType } from '@kwire/protocol';

export const CAPTURE_FORMAT = 'kwire-capture';
export const CAPTURE_FORMAT_VERSION = 1;
export const CAPTURE_INFO_FILE = 'capture.json';
export const INDEX_FILE = 'index.jsonl';
export const MANIFEST_FILE = 'manifest.json';
/** In a folder of captures: settings for the whole suite (see SuiteSettings). */
export const SUITE_FILE = 'conformance.json';

/** client: bytes from the client; broker: bytes from the broker; rewritten: frames the proxy changed. */
export type StreamKind = 'client' | 'broker' | 'rewritten';

export function streamFileName(conn: number, kind: StreamKind): string {
  return `conn-${String(conn).padStart(4, '0')}.${kind}.bin`;
}

/** capture.json */
export interface CaptureInfo {
  format: typeof CAPTURE_FORMAT;
  formatVersion: number;
  /** What wrote it, e.g. "kwire record 0.1.0". */
  recorder: string;
  /** ISO time of the first listener; `at` fields in the index count milliseconds from here. */
  startedAt: string;
  stoppedAt?: string;
  /** The broker the first listener forwards to. */
  target: string;
  /** The first listener. */
  listen: string;
}

/** A frame inside one of a connection's streams. */
export interface FrameRef {
  /** Byte offset of the frame (its size prefix) in the stream file. */
  offset: number;
  /** Whole frame, size prefix included. */
  length: number;
  /** When its first byte arrived, ms since startedAt. */
  at: number;
  /** When its last byte arrived. */
  end: number;
}

export interface RewriteRef {
  /** Byte offset of the rewritten frame in conn-N.rewritten.bin. */
  offset: number;
  length: number;
  /** Broker addresses replaced by proxy listeners, host:port to host:port. */
  addresses: { from: string; to: string }[];
  /** 'codec': decoded and re-encoded by @kwire/protocol; 'splice': a version outside the codec's scope, address fields replaced in place. */
  method: 'codec' | 'splice';
}

export interface ConnectionLine {
  type: 'connection';
  conn: number;
  at: number;
  /** The client's address. */
  client: string;
  /** The proxy listener it connected to. */
  listener: string;
  /** The broker the listener forwards to. */
  broker: string;
}

export interface ListenerLine {
  type: 'listener';
  at: number;
  listen: string;
  broker: string;
}

export interface ExchangeLine {
  type: 'exchange';
  conn: number;
  apiKey: number;
  /** Kafka's name for the key (null for a key Kafka does not define). */
  apiName: string | null;
  apiVersion: number;
  correlationId: number;
  clientId: string | null;
  /** ClientSoftwareName/Version from the connection's ApiVersions v3+ request, once sent. */
  software?: { name: string; version: string };
  request: FrameRef;
  /** null when no response came: Produce with acks=0, or the connection closed first. */
  response: FrameRef | null;
  noResponse?: 'acks=0' | 'unanswered';
  /** The frame the client actually received, when the proxy rewrote broker addresses in it. */
  rewritten?: RewriteRef;
  note?: string;
}

export interface CloseLine {
  type: 'close';
  conn: number;
  at: number;
  /** Who closed first; 'proxy' when the recorder was stopped. */
  by: 'client' | 'broker' | 'proxy';
  /** Bytes in conn-N.client.bin and conn-N.broker.bin. */
  clientBytes: number;
  brokerBytes: number;
  error?: string;
}

/**
 * The proxy stopped parsing one direction of a connection (bytes it could not frame, a response
 * it could not match, SASL v0 raw tokens): it still forwarded and recorded every byte, but indexed
 * no exchange after `offset` of that stream.
 */
export interface BlindLine {
  type: 'blind';
  conn: number;
  at: number;
  stream: 'client' | 'broker';
  offset: number;
  reason: string;
}

export type IndexLine = ConnectionLine | ListenerLine | ExchangeLine | CloseLine | BlindLine;

/* ------------------------------------------------------------------------------------------------
 * manifest.json: written by whoever ran the scenario (the fixture capture script), never by the
 * proxy. Facts are what the scenario knows without our decoder: what it created and wrote, which
 * clients it ran, the errors it provoked. `kwire conformance` checks the decoded frames against them.
 * --------------------------------------------------------------------------------------------- */

export interface CaptureManifest {
  /** Short id, e.g. "java-4.4.0/console". */
  scenario: string;
  description: string;
  /** 'peer': a real client sent the requests. 'kwire': kwire's own requests (for versions no peer sends), the broker's responses. */
  origin: 'peer' | 'kwire';
  client: { name: string; version: string; tools?: string[] };
  broker: { version: string; nodes: number };
  capturedAt?: string;
  facts?: ScenarioFacts;
  notes?: string[];
}

export interface ScenarioFacts {
  /** Every ApiVersions v3+ request names one of these, and each of them appears. */
  clientSoftware?: { name: string; version: string }[];
  /** Topics the scenario created: a Metadata or CreateTopics response lists each with this many partitions. */
  topics?: { name: string; partitions: number }[];
  records?: TopicRecordsFact[];
  groups?: GroupFact[];
  /** Error answers the scenario provokes: some response (of `api`, when given) carries the code. */
  errors?: { api?: string; error: string }[];
}

/** A record as a scenario wrote it: UTF-8 key and value (null: none / tombstone), headers in order. */
export interface RecordFact {
  key?: string | null;
  value: string | null;
  headers?: [string, string | null][];
}

export interface TopicRecordsFact {
  topic: string;
  /** Data records the scenario wrote (transactional ones included; control records are not data). */
  count: number;
  /** Every record, in any order (compared as a multiset). */
  records?: RecordFact[];
  /** Instead of `records`: every value has this many bytes (ProducerPerformance writes random ones). */
  valueBytes?: number;
  /** The producer's codec: every data batch of the topic in Produce and Fetch uses it. */
  compression?: CompressionType;
  /** The capture's Produce requests carry exactly these records. */
  produced?: boolean;
  /** Fetch responses carry every record ('all'), or only known ones and at least one ('some'). */
  fetched?: 'all' | 'some';
  /** Transaction markers the topic holds and the records of aborted transactions. */
  transactions?: {
    commitMarkers: number;
    abortMarkers: number;
    abortedRecords?: RecordFact[];
    /** A read_committed Fetch response names the aborted transactions' producer. */
    readCommitted?: boolean;
  };
}

export interface GroupFact {
  groupId: string;
  /** 'classic': JoinGroup/SyncGroup; 'consumer': KIP-848 ConsumerGroupHeartbeat. */
  protocol: 'classic' | 'consumer';
  /** Members at the group's largest: the leader's JoinGroup response lists them (classic), or this many member ids heartbeat (consumer). */
  members: number;
  /** Every partition of these topics is assigned to exactly one member (the leader's SyncGroup, or the heartbeat assignments). */
  topics?: string[];
}

/** conformance.json in a folder of captures. */
export interface SuiteSettings {
  /** Fail unless every API and version in the codec's scope passed as a request and as a response. */
  requireFullCoverage?: boolean;
  description?: string;
}

/* ------------------------------------------------------------------------------------------------
 * Reading
 * --------------------------------------------------------------------------------------------- */

/** A capture folder, read and checked for shape; problems are collected, never thrown. */
export interface Capture {
  dir: string;
  info: CaptureInfo | undefined;
  manifest: CaptureManifest | undefined;
  lines: IndexLine[];
  /** Damage found while reading: a missing or unreadable file, a line that is not a valid index line. */
  errors: string[];
}

function readJson(file: string, errors: string[], name: string): unknown {
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    errors.push(`${name}: ${(err as Error).message}`);
    return undefined;
  }
}

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v);
const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

function validFrameRef(v: unknown): v is FrameRef {
  const f = v as FrameRef;
  return typeof f === 'object' && f !== null && isInt(f.offset) && f.offset >= 0 && isInt(f.length) && f.length >= 4 && isNum(f.at) && isNum(f.end);
}

/** Why a parsed JSON value is not an index line, or undefined when it is one. */
function invalidLine(v: unknown): string | undefined {
  if (typeof v !== 'object' || v === null) return 'not an object';
  const l = v as IndexLine;
  switch (l.type) {
    case 'connection':
      return isInt(l.conn) && isNum(l.at) ? undefined : 'connection line without conn/at';
    case 'listener':
      return typeof l.listen === 'string' && typeof l.broker === 'string' ? undefined : 'listener line without listen/broker';
    case 'close':
      return isInt(l.conn) ? undefined : 'close line without conn';
    case 'blind':
      return isInt(l.conn) && isInt(l.offset) ? undefined : 'blind line without conn/offset';
    case 'exchange': {
      if (!isInt(l.conn) || !isInt(l.apiKey) || !isInt(l.apiVersion) || !isInt(l.correlationId)) return 'exchange line without conn/apiKey/apiVersion/correlationId';
      if (!validFrameRef(l.request)) return 'exchange line with a bad request reference';
      if (l.response !== null && !validFrameRef(l.response)) return 'exchange line with a bad response reference';
      if (l.rewritten !== undefined && !(isInt(l.rewritten.offset) && isInt(l.rewritten.length) && Array.isArray(l.rewritten.addresses))) {
        return 'exchange line with a bad rewritten reference';
      }
      return undefined;
    }
    default:
      return `unknown line type ${JSON.stringify((l as { type?: unknown }).type)}`;
  }
}

/** Reads capture.json, manifest.json and index.jsonl of one capture folder. Never throws. */
export function readCapture(dir: string): Capture {
  const errors: string[] = [];
  const info = readJson(join(dir, CAPTURE_INFO_FILE), errors, CAPTURE_INFO_FILE) as CaptureInfo | undefined;
  if (info !== undefined && (info.format !== CAPTURE_FORMAT || !isInt(info.formatVersion))) {
    errors.push(`${CAPTURE_INFO_FILE}: not a ${CAPTURE_FORMAT} file`);
  } else if (info !== undefined && info.formatVersion > CAPTURE_FORMAT_VERSION) {
    errors.push(`${CAPTURE_INFO_FILE}: format version ${info.formatVersion} is newer than this reader (${CAPTURE_FORMAT_VERSION})`);
  }
  const manifest = readJson(join(dir, MANIFEST_FILE), errors, MANIFEST_FILE) as CaptureManifest | undefined;
  const lines: IndexLine[] = [];
  const indexFile = join(dir, INDEX_FILE);
  let text: string | undefined;
  try {
    text = readFileSync(indexFile, 'utf8');
  } catch (err) {
    errors.push(`${INDEX_FILE}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'missing' : (err as Error).message}`);
  }
  if (text !== undefined) {
    const raw = text.split('\n');
    // A recorder killed mid-write leaves a last line without its newline: reported like any other bad line.
    for (let i = 0; i < raw.length; i++) {
      const s = raw[i]!.trim();
      if (s === '') continue;
      let v: unknown;
      try {
        v = JSON.parse(s);
      } catch (err) {
        errors.push(`${INDEX_FILE} line ${i + 1}: not JSON (${(err as Error).message})`);
        continue;
      }
      const why = invalidLine(v);
      if (why !== undefined) errors.push(`${INDEX_FILE} line ${i + 1}: ${why}`);
      else lines.push(v as IndexLine);
    }
  }
  return { dir, info, manifest, lines, errors };
}

/**
 * Positional reads from one stream file, opened on first use. Frames are read one at a time, so a
 * capture of gigabytes is checked in the memory of its largest frame.
 */
export class StreamFile {
  readonly path: string;
  readonly name: string;
  private fd: number | undefined;
  private size = -1;
  private openError: string | undefined;

  constructor(dir: string, conn: number, kind: StreamKind) {
    this.name = streamFileName(conn, kind);
    this.path = join(dir, this.name);
  }

  /** The bytes [offset, offset + length), or a sentence saying why they cannot be read. */
  read(offset: number, length: number): Buffer | string {
    if (this.fd === undefined && this.openError === undefined) {
      try {
        this.fd = openSync(this.path, 'r');
        this.size = statSync(this.path).size;
      } catch (err) {
        this.openError = (err as NodeJS.ErrnoException).code === 'ENOENT' ? `${this.name} is missing` : `${this.name}: ${(err as Error).message}`;
      }
    }
    if (this.openError !== undefined) return this.openError;
    if (offset + length > this.size) {
      return `${this.name} ends at byte ${this.size}, but the index puts a ${length}-byte frame at byte ${offset} (the file is cut off or the index does not belong to it)`;
    }
    const out = Buffer.allocUnsafe(length);
    let done = 0;
    while (done < length) {
      const n = readSync(this.fd!, out, done, length - done, offset + done);
      if (n === 0) return `${this.name}: unexpected end of file at byte ${offset + done}`;
      done += n;
    }
    return out;
  }

  get bytes(): number {
    return this.size;
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
