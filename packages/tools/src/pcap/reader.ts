// pcap and pcapng files as a list of packets (capture time, link type, bytes). Both byte orders,
// microsecond and nanosecond pcap, pcapng's Enhanced, Simple and obsolete Packet Blocks with each
// interface's link type and timestamp resolution. Reads the whole file into memory: captures that
// conformance tests and debugging sessions produce are small.

export interface Packet {
  /** Capture time in milliseconds since the epoch (fractional). */
  at: number;
  linkType: number;
  data: Buffer;
  /** Index in the file, from 0. */
  index: number;
}

export class PcapFormatError extends Error {
  readonly code = 'KWIRE_PCAP_FORMAT';
}

const PCAP_MICRO = 0xa1b2c3d4;
const PCAP_NANO = 0xa1b23c4d;
const PCAPNG_SHB = 0x0a0d0d0a;
const PCAPNG_BYTE_ORDER = 0x1a2b3c4d;

export function isPcap(head: Buffer): boolean {
  if (head.length < 4) return false;
  const be = head.readUInt32BE(0);
  const le = head.readUInt32LE(0);
  return be === PCAPNG_SHB || [PCAP_MICRO, PCAP_NANO].includes(be) || [PCAP_MICRO, PCAP_NANO].includes(le);
}

export function readPackets(file: Buffer): { packets: Packet[]; notes: string[] } {
  if (file.length < 4) throw new PcapFormatError(`${file.length} bytes: not a pcap or pcapng file`);
  if (file.readUInt32BE(0) === PCAPNG_SHB) return readPcapng(file);
  return readPcap(file);
}

function readPcap(file: Buffer): { packets: Packet[]; notes: string[] } {
  const notes: string[] = [];
  let le: boolean;
  const m = file.readUInt32LE(0);
  if (m === PCAP_MICRO || m === PCAP_NANO) le = true;
  else if (file.readUInt32BE(0) === PCAP_MICRO || file.readUInt32BE(0) === PCAP_NANO) le = false;
  else throw new PcapFormatError(`magic 0x${file.readUInt32BE(0).toString(16)}: not a pcap or pcapng file`);
  if (file.length < 24) throw new PcapFormatError('a pcap file shorter than its 24-byte header');
  const u32 = (at: number) => (le ? file.readUInt32LE(at) : file.readUInt32BE(at));
  const nano = u32(0) === PCAP_NANO;
  const linkType = u32(20) & 0x0fffffff;
  const packets: Packet[] = [];
  let at = 24;
  while (at < file.length) {
    if (file.length - at < 16) {
      notes.push(`pcap: ${file.length - at} bytes after the last packet (the file is cut off)`);
      break;
    }
    const sec = u32(at);
    const frac = u32(at + 4);
    const incl = u32(at + 8);
    if (file.length - at - 16 < incl) {
      notes.push(`pcap: packet ${packets.length} is cut off (${incl} bytes declared, ${file.length - at - 16} in the file)`);
      break;
    }
    packets.push({ at: sec * 1000 + (nano ? frac / 1e6 : frac / 1e3), linkType, data: file.subarray(at + 16, at + 16 + incl), index: packets.length });
    at += 16 + incl;
  }
  return { packets, notes };
}

interface Interface {
  linkType: number;
  /** Seconds per timestamp unit. */
  unit: number;
}

function readPcapng(file: Buffer): { packets: Packet[]; notes: string[] } {
  const notes: string[] = [];
  const packets: Packet[] = [];
  let interfaces: Interface[] = [];
  let le = true;
  let at = 0;
  const u32 = (o: number) => (le ? file.readUInt32LE(o) : file.readUInt32BE(o));
  const u16 = (o: number) => (le ? file.readUInt16LE(o) : file.readUInt16BE(o));
  while (at < file.length) {
    if (file.length - at < 12) {
      notes.push(`pcapng: ${file.length - at} bytes after the last block (the file is cut off)`);
      break;
    }
    if (file.readUInt32BE(at) === PCAPNG_SHB) {
      // A section starts: its byte-order magic says how to read everything up to the next one.
      const bom = file.readUInt32LE(at + 8);
      if (bom === PCAPNG_BYTE_ORDER) le = true;
      else if (file.readUInt32BE(at + 8) === PCAPNG_BYTE_ORDER) le = false;
      else throw new PcapFormatError(`pcapng: bad byte-order magic at byte ${at + 8}`);
      interfaces = [];
    }
    const type = u32(at);
    const length = u32(at + 4);
    if (length < 12 || length % 4 !== 0 || at + length > file.length) {
      notes.push(`pcapng: block at byte ${at} declares ${length} bytes (${file.length - at} left): the rest of the file is not read`);
      break;
    }
    const body = at + 8;
    const end = at + length - 4;
    if (type === 1) {
      // Interface Description Block: link type, then options (if_tsresol is option 9).
      const iface: Interface = { linkType: u16(body), unit: 1e-6 };
      let o = body + 8;
      while (o + 4 <= end) {
        const code = u16(o);
        const len = u16(o + 2);
        if (code === 0) break;
        if (code === 9 && len >= 1) {
          const r = file[o + 4]!;
          iface.unit = r & 0x80 ? 2 ** -(r & 0x7f) : 10 ** -(r & 0x7f);
        }
        o += 4 + ((len + 3) & ~3);
      }
      interfaces.push(iface);
    } else if (type === 6 || type === 2) {
      // Enhanced Packet Block (6), or the obsolete Packet Block (2, a 16-bit interface id and drops count).
      const ifId = type === 6 ? u32(body) : u16(body);
      const iface = interfaces[ifId];
      const high = u32(body + 4);
      const low = u32(body + 8);
      const captured = u32(body + 12);
      if (!iface) notes.push(`pcapng: packet for unknown interface ${ifId} at byte ${at}`);
      else if (body + 20 + captured > end) notes.push(`pcapng: packet at byte ${at} overruns its block`);
      else {
        const ticks = high * 2 ** 32 + low;
        packets.push({ at: ticks * iface.unit * 1000, linkType: iface.linkType, data: file.subarray(body + 20, body + 20 + captured), index: packets.length });
      }
    } else if (type === 3) {
      // Simple Packet Block: interface 0, no timestamp.
      const iface = interfaces[0];
      const original = u32(body);
      const captured = Math.min(original, end - body - 4);
      if (iface) packets.push({ at: 0, linkType: iface.linkType, data: file.subarray(body + 4, body + 4 + captured), index: packets.length });
    }
    at += length;
  }
  return { packets, notes };
}
