// A tcpdump file as Kafka conversations: TCP connections found, both directions reassembled,
// told apart as client and broker, and (for a connection the capture joined mid-way) read from
// the first frame boundary that can be proven.
//
// Which connections are Kafka: one whose server port is a broker port (--port; 9092 by default),
// or one whose client stream (seen from its SYN) starts with an ApiVersions request, which every
// modern client sends first. Which side is the client: the one that sent the SYN; without one,
// the side not on a broker port.
//
// The first provable boundary of a stream joined mid-way: the first offset from which the bytes
// cut into a chain of whole frames that runs to the end of the captured stream (a partial frame
// allowed at the very end, where the capture stopped), every request frame of it decoding with
// the whole protocol, and every response frame answering a request of the chain or one sent
// before the capture began (responses come in request order). Those leading responses cannot be
// decoded (a response does not say its api): they are counted as skipped, with the cut frame
// before the boundary.
import { readFileSync } from 'node:fs';
import { decodeRequestFrame } from '@kwire/protocol';
import { ALL_API_DEFINITIONS } from '@kwire/protocol/all-apis';
import type { Conversation } from '../decode/decoder.js';
import { readPackets } from './reader.js';
import { IpDefragmenter } from './ip-fragments.js';
import { reassemble, type Reassembled, type Segment, tcpSegment } from './tcp.js';

export interface PcapOptions {
  /** Broker ports. Default [9092]. */
  ports?: number[];
}

const DEFAULT_PORTS = [9092];
/** Larger frames than this are taken as misalignment while looking for a boundary. */
const MAX_PLAUSIBLE_FRAME = 256 * 1024 * 1024;

function port(endpoint: string): number {
  return Number(endpoint.slice(endpoint.lastIndexOf(':') + 1));
}

/**
 * The whole frames from `start` to the end (a partial one allowed last, where the capture stopped):
 * the correlation id `idOf` reads from each, and where the last whole one ends. Undefined when
 * there is none, when a size is not plausible (below `minSize`, or huge), or when `idOf` refuses a
 * frame (returns undefined).
 */
function frameChain(bytes: Buffer, start: number, minSize: number, idOf: (at: number, size: number) => number | undefined): { ids: number[]; end: number } | undefined {
  const ids: number[] = [];
  let at = start;
  while (bytes.length - at >= 4) {
    const size = bytes.readInt32BE(at);
    if (size < minSize || size > MAX_PLAUSIBLE_FRAME) return undefined;
    if (bytes.length - at - 4 < size) break;
    const id = idOf(at, size);
    if (id === undefined) return undefined;
    ids.push(id);
    at += 4 + size;
  }
  return ids.length > 0 ? { ids, end: at } : undefined;
}

/** Request frames from `start` to the end: all decode? Returns their correlation ids, or undefined. */
function requestChain(bytes: Buffer, start: number): { ids: number[]; end: number } | undefined {
  return frameChain(bytes, start, 8, (at, size) => {
    try {
      return decodeRequestFrame(bytes.subarray(at, at + 4 + size), ALL_API_DEFINITIONS).correlationId;
    } catch {
      return undefined;
    }
  });
}

/** Response frames from `start` to the end: a chain whose correlation ids fit the requests'. */
function responseChain(bytes: Buffer, start: number, requestIds: number[]): { ids: number[] } | undefined {
  const ids = frameChain(bytes, start, 4, (at) => bytes.readInt32BE(at + 4))?.ids;
  if (ids === undefined) return undefined;
  // Past the answers to requests sent before the capture, the ids follow the requests in order
  // (some requests, acks=0 Produce, get none).
  const first = ids.findIndex((id) => requestIds.includes(id));
  if (first < 0) return requestIds.length === 0 ? { ids } : undefined;
  let r = requestIds.indexOf(ids[first]!);
  for (let i = first; i < ids.length; i++) {
    while (r < requestIds.length && requestIds[r] !== ids[i]) r++;
    if (r === requestIds.length) return undefined;
    r++;
  }
  return { ids };
}

interface Connection {
  key: string;
  first: number;
  sides: Map<string, Segment[]>;
}

function looksLikeApiVersions(bytes: Buffer): boolean {
  return bytes.length >= 8 && bytes.readInt16BE(4) === 18 && bytes.readInt32BE(0) >= 8;
}

export function pcapConversations(path: string, options: PcapOptions = {}): { conversations: Conversation[]; notes: string[] } {
  const { packets, notes } = readPackets(readFileSync(path));
  return conversationsFromPackets(packets, notes, options);
}

export function conversationsFromPackets(packets: ReturnType<typeof readPackets>['packets'], notes: string[], options: PcapOptions = {}): { conversations: Conversation[]; notes: string[] } {
  const ports = options.ports ?? DEFAULT_PORTS;
  const t0 = packets.length > 0 ? Math.min(...packets.map((p) => p.at)) : 0;
  const connections = new Map<string, Connection>();
  const fragments = new IpDefragmenter();
  for (const p of packets) {
    const s = tcpSegment(p, fragments);
    if (!s) continue;
    s.at -= t0;
    const key = [s.src, s.dst].sort().join(' ');
    let c = connections.get(key);
    if (!c) connections.set(key, (c = { key, first: p.index, sides: new Map() }));
    let list = c.sides.get(s.src);
    if (!list) c.sides.set(s.src, (list = []));
    list.push(s);
  }
  notes.push(...fragments.notes());
  const conversations: Conversation[] = [];
  let n = 0;
  for (const c of [...connections.values()].sort((a, b) => a.first - b.first)) {
    const [a, b] = c.key.split(' ') as [string, string];
    const synFrom = [a, b].find((e) => c.sides.get(e)?.some((s) => s.syn && !s.ack));
    let client: string;
    let broker: string;
    if (synFrom !== undefined) {
      client = synFrom;
      broker = synFrom === a ? b : a;
    } else if (ports.includes(port(a)) !== ports.includes(port(b))) {
      broker = ports.includes(port(a)) ? a : b;
      client = broker === a ? b : a;
    } else {
      notes.push(`${a} <-> ${b}: no SYN and no broker port (--port) on either side: not read as Kafka`);
      continue;
    }
    const up = reassemble(c.sides.get(client) ?? []);
    const down = reassemble(c.sides.get(broker) ?? []);
    const kafka = ports.includes(port(broker)) || (up.fromStart && looksLikeApiVersions(up.bytes));
    if (!kafka) {
      if (up.bytes.length > 0) notes.push(`${client} -> ${broker}: not a broker port and no ApiVersions request first: not read as Kafka`);
      continue;
    }
    n++;
    for (const [what, r] of [
      ['client', up],
      ['broker', down],
    ] as const) {
      if (r.hole) notes.push(`conn ${n} (${client} -> ${broker}): ${r.hole.bytes} ${what} bytes missing from the capture at stream byte ${r.hole.offset}; the stream is read up to there`);
    }
    conversations.push(toConversation(n, client, broker, up, down, notes));
  }
  return { conversations, notes };
}

function toConversation(conn: number, client: string, broker: string, up: Reassembled, down: Reassembled, notes: string[]): Conversation {
  const conversation: Conversation = { conn, client, broker, requests: { bytes: up.bytes, times: up.times }, responses: { bytes: down.bytes, times: down.times } };
  if (up.fromStart && down.fromStart) return conversation;
  // Joined mid-way: find the first provable boundary of each direction.
  const skipped = { requests: 0, responses: 0, requestBytes: 0, responseBytes: 0 };
  let requestIds: number[] = [];
  if (!up.fromStart) {
    let found = -1;
    for (let p = 0; p < up.bytes.length - 4; p++) {
      const chain = requestChain(up.bytes, p);
      if (chain) {
        found = p;
        requestIds = chain.ids;
        break;
      }
    }
    if (found < 0) {
      notes.push(`conn ${conn} (${client} -> ${broker}): no provable request frame boundary in ${up.bytes.length} captured bytes`);
      found = up.bytes.length;
    }
    if (found > 0) skipped.requests = 1;
    skipped.requestBytes = found;
    conversation.requests = shift(up, found);
  } else {
    requestIds = requestChain(up.bytes, 0)?.ids ?? [];
  }
  let start = 0;
  if (!down.fromStart) {
    start = -1;
    for (let p = 0; p < down.bytes.length - 4; p++) {
      if (responseChain(down.bytes, p, requestIds)) {
        start = p;
        break;
      }
    }
    if (start < 0) {
      notes.push(`conn ${conn} (${broker} -> ${client}): no provable response frame boundary in ${down.bytes.length} captured bytes`);
      start = down.bytes.length;
    }
    if (start > 0) skipped.responses = 1;
  }
  // Whole responses to requests sent before the capture began: skipped too (not decodable).
  let at = start;
  while (down.bytes.length - at >= 8) {
    const size = down.bytes.readInt32BE(at);
    if (down.bytes.length - at - 4 < size || requestIds.includes(down.bytes.readInt32BE(at + 4))) break;
    skipped.responses++;
    at += 4 + size;
  }
  skipped.responseBytes = at;
  conversation.responses = shift(down, at);
  conversation.skippedAtStart = skipped;
  return conversation;
}

/** The stream from `from` on, offsets renumbered from 0. */
function shift(r: Reassembled, from: number): { bytes: Buffer; times: { offset: number; at: number }[] } {
  const times: { offset: number; at: number }[] = [];
  for (let i = 0; i < r.times.length; i++) {
    const t = r.times[i]!;
    const nextOffset = i + 1 < r.times.length ? r.times[i + 1]!.offset : Infinity;
    if (nextOffset <= from) continue;
    times.push({ offset: Math.max(0, t.offset - from), at: t.at });
  }
  return { bytes: r.bytes.subarray(from), times };
}
