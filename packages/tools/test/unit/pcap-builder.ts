// Builds pcap and pcapng files in memory for the tests: Ethernet (or Linux cooked v2) + IPv4 +
// TCP packets, with the checksums left zero (capture files of loopback traffic often have them
// unfilled, and nothing here checks them). Written from the file format specifications, sharing
// no code with src/pcap.

export interface TcpPacket {
  src: [string, number];
  dst: [string, number];
  seq: number;
  ack?: number;
  flags: { syn?: boolean; ack?: boolean; fin?: boolean; psh?: boolean };
  payload?: Buffer;
  /** Milliseconds since the epoch. */
  at: number;
}

function ip4(text: string): Buffer {
  return Buffer.from(text.split('.').map(Number));
}

function tcpIp(p: TcpPacket): Buffer {
  const payload = p.payload ?? Buffer.alloc(0);
  const tcp = Buffer.alloc(20);
  tcp.writeUInt16BE(p.src[1], 0);
  tcp.writeUInt16BE(p.dst[1], 2);
  tcp.writeUInt32BE(p.seq >>> 0, 4);
  tcp.writeUInt32BE((p.ack ?? 0) >>> 0, 8);
  tcp[12] = 5 << 4;
  tcp[13] = (p.flags.fin ? 1 : 0) | (p.flags.syn ? 2 : 0) | (p.flags.psh ? 8 : 0) | (p.flags.ack ? 16 : 0);
  tcp.writeUInt16BE(65535, 14);
  const ip = Buffer.alloc(20);
  ip[0] = 0x45;
  ip.writeUInt16BE(20 + 20 + payload.length, 2);
  ip.writeUInt16BE(0x4000, 6); // don't fragment
  ip[8] = 64;
  ip[9] = 6;
  ip4(p.src[0]).copy(ip, 12);
  ip4(p.dst[0]).copy(ip, 16);
  return Buffer.concat([ip, tcp, payload]);
}

export function ethernet(p: TcpPacket): Buffer {
  const eth = Buffer.alloc(14);
  eth.writeUInt16BE(0x0800, 12);
  return Buffer.concat([eth, tcpIp(p)]);
}

export function sll2(p: TcpPacket): Buffer {
  const h = Buffer.alloc(20);
  h.writeUInt16BE(0x0800, 0);
  return Buffer.concat([h, tcpIp(p)]);
}

/** A classic pcap file (little-endian, microseconds) of link type 1 (Ethernet). */
export function pcapFile(packets: TcpPacket[]): Buffer {
  const head = Buffer.alloc(24);
  head.writeUInt32LE(0xa1b2c3d4, 0);
  head.writeUInt16LE(2, 4);
  head.writeUInt16LE(4, 6);
  head.writeUInt32LE(262144, 16);
  head.writeUInt32LE(1, 20);
  const parts: Buffer[] = [head];
  for (const p of packets) {
    const frame = ethernet(p);
    const rec = Buffer.alloc(16);
    rec.writeUInt32LE(Math.floor(p.at / 1000), 0);
    rec.writeUInt32LE(Math.round((p.at % 1000) * 1000), 4);
    rec.writeUInt32LE(frame.length, 8);
    rec.writeUInt32LE(frame.length, 12);
    parts.push(rec, frame);
  }
  return Buffer.concat(parts);
}

function block(type: number, body: Buffer, bigEndian: boolean): Buffer {
  const padded = Buffer.concat([body, Buffer.alloc((4 - (body.length % 4)) % 4)]);
  const len = 12 + padded.length;
  const b = Buffer.alloc(len);
  const w = (v: number, at: number) => (bigEndian ? b.writeUInt32BE(v, at) : b.writeUInt32LE(v, at));
  w(type, 0);
  w(len, 4);
  padded.copy(b, 8);
  w(len, len - 4);
  return b;
}

/** A pcapng file: one section, one interface of link type 276 (Linux cooked v2), nanosecond timestamps. */
export function pcapngFile(packets: TcpPacket[], bigEndian = false): Buffer {
  const u32 = (v: number) => {
    const b = Buffer.alloc(4);
    if (bigEndian) b.writeUInt32BE(v >>> 0);
    else b.writeUInt32LE(v >>> 0);
    return b;
  };
  const u16 = (v: number) => {
    const b = Buffer.alloc(2);
    if (bigEndian) b.writeUInt16BE(v);
    else b.writeUInt16LE(v);
    return b;
  };
  const shb = block(0x0a0d0d0a, Buffer.concat([u32(0x1a2b3c4d), u16(1), u16(0), Buffer.alloc(8, 0xff)]), bigEndian);
  // if_tsresol (option 9) = 9: nanoseconds; then opt_endofopt.
  const idb = block(1, Buffer.concat([u16(276), u16(0), u32(262144), u16(9), u16(1), Buffer.from([9, 0, 0, 0]), u16(0), u16(0)]), bigEndian);
  const parts: Buffer[] = [shb, idb];
  for (const p of packets) {
    const frame = sll2(p);
    const ns = BigInt(Math.round(p.at * 1e6));
    parts.push(block(6, Buffer.concat([u32(0), u32(Number(ns >> 32n)), u32(Number(ns & 0xffffffffn)), u32(frame.length), u32(frame.length), frame]), bigEndian));
  }
  return Buffer.concat(parts);
}

/**
 * The packets of one TCP connection carrying `up` (client to broker) and `down`: a handshake
 * (unless `handshake` is false), then the bytes in segments of at most `mss`, alternating
 * directions roughly as a conversation would.
 */
export function connection(opts: {
  client: [string, number];
  broker: [string, number];
  up: Buffer;
  down: Buffer;
  mss?: number;
  handshake?: boolean;
  isnClient?: number;
  isnBroker?: number;
  t0?: number;
}): TcpPacket[] {
  const mss = opts.mss ?? 1000;
  const isnC = opts.isnClient ?? 1_000_000;
  const isnB = opts.isnBroker ?? 4_294_960_000; // wraps past 2^32 within the stream
  let t = opts.t0 ?? 1_700_000_000_000;
  const out: TcpPacket[] = [];
  if (opts.handshake !== false) {
    out.push({ src: opts.client, dst: opts.broker, seq: isnC, flags: { syn: true }, at: t++ });
    out.push({ src: opts.broker, dst: opts.client, seq: isnB, ack: isnC + 1, flags: { syn: true, ack: true }, at: t++ });
    out.push({ src: opts.client, dst: opts.broker, seq: isnC + 1, ack: isnB + 1, flags: { ack: true }, at: t++ });
  }
  let u = 0;
  let d = 0;
  while (u < opts.up.length || d < opts.down.length) {
    if (u < opts.up.length) {
      const n = Math.min(mss, opts.up.length - u);
      out.push({ src: opts.client, dst: opts.broker, seq: (isnC + 1 + u) >>> 0, ack: (isnB + 1 + d) >>> 0, flags: { ack: true, psh: true }, payload: opts.up.subarray(u, u + n), at: t++ });
      u += n;
    }
    if (d < opts.down.length) {
      const n = Math.min(mss, opts.down.length - d);
      out.push({ src: opts.broker, dst: opts.client, seq: (isnB + 1 + d) >>> 0, ack: (isnC + 1 + u) >>> 0, flags: { ack: true, psh: true }, payload: opts.down.subarray(d, d + n), at: t++ });
      d += n;
    }
  }
  return out;
}

/** A classic pcap file of already framed packets (e.g. some of a real capture's). */
export function rawPcapFile(packets: { at: number; data: Buffer }[], linkType: number): Buffer {
  const head = Buffer.alloc(24);
  head.writeUInt32LE(0xa1b2c3d4, 0);
  head.writeUInt16LE(2, 4);
  head.writeUInt16LE(4, 6);
  head.writeUInt32LE(262144, 16);
  head.writeUInt32LE(linkType, 20);
  const parts: Buffer[] = [head];
  for (const p of packets) {
    const rec = Buffer.alloc(16);
    rec.writeUInt32LE(Math.floor(p.at / 1000), 0);
    rec.writeUInt32LE(Math.round((p.at % 1000) * 1000) % 1_000_000, 4);
    rec.writeUInt32LE(p.data.length, 8);
    rec.writeUInt32LE(p.data.length, 12);
    parts.push(rec, p.data);
  }
  return Buffer.concat(parts);
}

/**
 * An Ethernet frame's IPv4 packet (as ethernet() builds it) cut into fragments: the IP payload in
 * pieces of `sizes` bytes (multiples of 8 but the last; what is left after them goes in a final
 * piece), each an Ethernet frame with the IP header's flags, fragment offset and length set.
 */
export function fragmentIpv4(frame: Buffer, sizes: number[], id = 0x1234): Buffer[] {
  const eth = frame.subarray(0, 14);
  const header = frame.subarray(14, 34);
  return pieces(frame.subarray(34), sizes).map(({ offset, data, more }) => {
    const h = Buffer.from(header);
    h.writeUInt16BE(20 + data.length, 2);
    h.writeUInt16BE(id, 4);
    h.writeUInt16BE((more ? 0x2000 : 0) | (offset / 8), 6);
    return Buffer.concat([eth, h, data]);
  });
}

/** `payload` in pieces of `sizes` bytes (what is left after them in a last one). */
function pieces(payload: Buffer, sizes: number[]): { offset: number; data: Buffer; more: boolean }[] {
  const out: { offset: number; data: Buffer; more: boolean }[] = [];
  for (let offset = 0, i = 0; offset < payload.length; i++) {
    const n = Math.min(sizes[i] ?? payload.length, payload.length - offset);
    out.push({ offset, data: payload.subarray(offset, offset + n), more: offset + n < payload.length });
    offset += n;
  }
  return out;
}

function ip6(text: string): Buffer {
  // Only the forms the tests use: '::1' or a full eight-group address.
  if (text === '::1') return Buffer.concat([Buffer.alloc(15), Buffer.from([1])]);
  return Buffer.from(text.split(':').flatMap((g) => [Number.parseInt(g, 16) >> 8, Number.parseInt(g, 16) & 0xff]));
}

/** A raw IPv6 packet (link type 101) of a TCP segment: the fixed header, then TCP. */
export function rawIpv6(p: TcpPacket): Buffer {
  const v4 = tcpIp(p);
  const tcpAndPayload = v4.subarray(20);
  const h = Buffer.alloc(40);
  h.writeUInt32BE(0x60000000, 0);
  h.writeUInt16BE(tcpAndPayload.length, 4);
  h[6] = 6;
  h[7] = 64;
  ip6(p.src[0]).copy(h, 8);
  ip6(p.dst[0]).copy(h, 24);
  return Buffer.concat([h, tcpAndPayload]);
}

/** A raw IPv6 packet (as rawIpv6() builds it) cut into fragments with a fragment header each (RFC 8200 4.5). */
export function fragmentIpv6(packet: Buffer, sizes: number[], id = 0xabcdef): Buffer[] {
  const header = packet.subarray(0, 40);
  return pieces(packet.subarray(40), sizes).map(({ offset, data, more }) => {
    const h = Buffer.from(header);
    h[6] = 44;
    h.writeUInt16BE(8 + data.length, 4);
    const frag = Buffer.alloc(8);
    frag[0] = header[6]!;
    frag.writeUInt16BE(offset | (more ? 1 : 0), 2);
    frag.writeUInt32BE(id, 4);
    return Buffer.concat([h, frag, data]);
  });
}
