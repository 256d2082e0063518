// TCP segments out of captured packets (Ethernet, Linux cooked v1/v2, BSD loopback, raw IP;
// IPv4 and IPv6), and each direction of a connection put back together: segments ordered by
// sequence number (wrapping at 2^32), retransmitted bytes taken once (the first copy), a hole
// left by a lost packet ends the usable stream there.
import { IPV6_FRAGMENT, type IpDefragmenter } from './ip-fragments.js';
import type { Packet } from './reader.js';

export interface Segment {
  src: string;
  dst: string;
  seq: number;
  syn: boolean;
  ack: boolean;
  fin: boolean;
  rst: boolean;
  payload: Buffer;
  at: number;
  packet: number;
}

const LINKTYPE_NULL = 0;
const LINKTYPE_ETHERNET = 1;
const LINKTYPE_RAW = 101;
const LINKTYPE_RAW_ALT = 12;
const LINKTYPE_LOOP = 108;
const LINKTYPE_LINUX_SLL = 113;
const LINKTYPE_IPV4 = 228;
const LINKTYPE_IPV6 = 229;
const LINKTYPE_LINUX_SLL2 = 276;

/** The IP packet inside a link-layer frame, or undefined for anything else (ARP, ...). */
function ipOf(p: Packet): Buffer | undefined {
  const d = p.data;
  switch (p.linkType) {
    case LINKTYPE_ETHERNET: {
      let at = 12;
      let type = d.length >= 14 ? d.readUInt16BE(12) : 0;
      // 802.1Q / 802.1ad VLAN tags.
      while ((type === 0x8100 || type === 0x88a8) && d.length >= at + 6) {
        at += 4;
        type = d.readUInt16BE(at);
      }
      return type === 0x0800 || type === 0x86dd ? d.subarray(at + 2) : undefined;
    }
    case LINKTYPE_LINUX_SLL:
      return d.length >= 16 && [0x0800, 0x86dd].includes(d.readUInt16BE(14)) ? d.subarray(16) : undefined;
    case LINKTYPE_LINUX_SLL2:
      return d.length >= 20 && [0x0800, 0x86dd].includes(d.readUInt16BE(0)) ? d.subarray(20) : undefined;
    case LINKTYPE_NULL:
    case LINKTYPE_LOOP:
      // A 4-byte address family, in the capturing host's byte order (NULL) or big-endian (LOOP).
      return d.length >= 4 ? d.subarray(4) : undefined;
    case LINKTYPE_RAW:
    case LINKTYPE_RAW_ALT:
    case LINKTYPE_IPV4:
    case LINKTYPE_IPV6:
      return d;
    default:
      return undefined;
  }
}

function ipv6Text(b: Buffer): string {
  const parts: string[] = [];
  for (let i = 0; i < 16; i += 2) parts.push(b.readUInt16BE(i).toString(16));
  return `[${parts.join(':').replace(/(^|:)0(:0)+(:|$)/, '::')}]`;
}

/**
 * The TCP segment of a packet, or undefined (not TCP, cut short by the snap length, or an IP
 * fragment: given `fragments`, the segment of the datagram this fragment completes).
 */
export function tcpSegment(p: Packet, fragments?: IpDefragmenter): Segment | undefined {
  let ip = ipOf(p);
  if (!ip || ip.length < 20) return undefined;
  const version = ip[0]! >> 4;
  let tcp: Buffer;
  let src: string;
  let dst: string;
  if (version === 4) {
    const ihl = (ip[0]! & 0x0f) * 4;
    if (ip[9] !== 6 || ihl < 20 || ip.length < ihl) return undefined;
    // A fragment (more-fragments flag or an offset): the datagram once its last piece is in.
    if ((ip.readUInt16BE(6) & 0x3fff) !== 0) {
      const whole = fragments?.ipv4(ip, ihl, p.index);
      if (whole === undefined) return undefined;
      ip = whole;
    }
    const total = ip.readUInt16BE(2);
    // total length trims Ethernet padding; 0 is what TSO captures may show: then take what is there.
    const end = total === 0 ? ip.length : Math.min(total, ip.length);
    tcp = ip.subarray(ihl, end);
    src = `${ip[12]}.${ip[13]}.${ip[14]}.${ip[15]}`;
    dst = `${ip[16]}.${ip[17]}.${ip[18]}.${ip[19]}`;
  } else if (version === 6) {
    if (ip.length < 40) return undefined;
    let next = ip[6]!;
    let nextAt = 6;
    let at = 40;
    // Skip hop-by-hop, routing and destination options headers; a fragment header waits for the
    // rest of its packet, which comes back without it.
    for (;;) {
      if ((next === 0 || next === 43 || next === 60) && ip.length >= at + 8) {
        nextAt = at;
        next = ip[at]!;
        at += (ip[at + 1]! + 1) * 8;
      } else if (next === IPV6_FRAGMENT && fragments !== undefined) {
        const payloadEnd = ip.readUInt16BE(4) === 0 ? ip.length : Math.min(ip.length, 40 + ip.readUInt16BE(4));
        const whole = fragments.ipv6(ip, nextAt, at, payloadEnd, p.index);
        if (whole === undefined) return undefined;
        ip = whole;
        next = ip[nextAt]!;
      } else break;
    }
    if (next !== 6) return undefined;
    const payloadLength = ip.readUInt16BE(4);
    tcp = ip.subarray(at, payloadLength === 0 ? ip.length : Math.min(ip.length, 40 + payloadLength));
    src = ipv6Text(ip.subarray(8, 24));
    dst = ipv6Text(ip.subarray(24, 40));
  } else {
    return undefined;
  }
  if (tcp.length < 20) return undefined;
  const dataOffset = (tcp[12]! >> 4) * 4;
  if (dataOffset < 20 || dataOffset > tcp.length) return undefined;
  const flags = tcp[13]!;
  return {
    src: `${src}:${tcp.readUInt16BE(0)}`,
    dst: `${dst}:${tcp.readUInt16BE(2)}`,
    seq: tcp.readUInt32BE(4),
    fin: (flags & 0x01) !== 0,
    syn: (flags & 0x02) !== 0,
    rst: (flags & 0x04) !== 0,
    ack: (flags & 0x10) !== 0,
    payload: tcp.subarray(dataOffset),
    at: p.at,
    packet: p.index,
  };
}

/** One direction of a TCP connection, reassembled. */
export interface Reassembled {
  bytes: Buffer;
  /** The capture time of the segment that brought the byte at `offset` and those after it. */
  times: { offset: number; at: number }[];
  /** A SYN was seen: offset 0 is the first byte of the stream. */
  fromStart: boolean;
  /** Segments whose bytes had all been seen already (retransmissions). */
  retransmitted: number;
  /** Segments that arrived after a later part of the stream (reordered). */
  outOfOrder: number;
  /** Where bytes are missing (a lost packet): the usable stream ends there. */
  hole?: { offset: number; bytes: number };
}

/** Signed distance from a to b in 32-bit sequence space. */
function seqDiff(a: number, b: number): number {
  return ((b - a) | 0) as number;
}

export function reassemble(segments: Segment[]): Reassembled {
  const syn = segments.find((s) => s.syn);
  const data = segments.filter((s) => s.payload.length > 0);
  const out: Reassembled = { bytes: Buffer.alloc(0), times: [], fromStart: syn !== undefined, retransmitted: 0, outOfOrder: 0 };
  if (data.length === 0) return out;
  // The stream's first byte: after the SYN, or (mid-connection) the lowest sequence number seen.
  let base = syn ? (syn.seq + 1) >>> 0 : data[0]!.seq;
  if (!syn) for (const s of data) if (seqDiff(base, s.seq) < 0) base = s.seq;
  const placed = data.map((s, i) => ({ s, rel: seqDiff(base, s.seq) >>> 0, i }));
  // Segments before the SYN's sequence number (a stale retransmission) are dropped.
  const usable = placed.filter((p) => seqDiff(base, p.s.seq) >= 0);
  let highest = -1;
  for (const p of usable) {
    if (p.rel < highest) out.outOfOrder++;
    highest = Math.max(highest, p.rel);
  }
  usable.sort((a, b) => a.rel - b.rel || a.i - b.i);
  const chunks: Buffer[] = [];
  let next = 0;
  for (const p of usable) {
    const end = p.rel + p.s.payload.length;
    if (end <= next) {
      out.retransmitted++;
      continue;
    }
    if (p.rel > next) {
      out.hole = { offset: next, bytes: p.rel - next };
      break;
    }
    const fresh = p.s.payload.subarray(next - p.rel);
    out.times.push({ offset: next, at: p.s.at });
    chunks.push(fresh);
    next = end;
  }
  out.bytes = Buffer.concat(chunks);
  return out;
}
