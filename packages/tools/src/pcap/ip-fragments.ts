// IP fragments put back together (RFC 791 for IPv4, RFC 8200 section 4.5 for IPv6), so that a TCP
// segment a router or a tunnel fragmented reaches reassembly whole rather than as a hole. A
// datagram is complete once its last fragment has come and its bytes from 0 to there are all
// there. Where fragments overlap, the bytes come from the one with the lower offset (the earlier
// of two at the same offset), as TCP reassembly (tcp.ts) places segments.
//
// Bounded: a datagram is at most 65,535 bytes, its header included (a fragment past that is
// refused: the length field of the rebuilt packet could not say more), and
// the incomplete ones together hold at most MAX_PENDING_BYTES (the oldest is given up first).
// What could not be completed is said in notes(), as is how many datagrams were put together.

/** The IPv4 flags and fragment offset field: the more-fragments flag and the offset in 8-byte units. */
const IPV4_MF = 0x2000;
const IPV4_OFFSET = 0x1fff;
/** The IPv6 fragment extension header's next-header number. */
export const IPV6_FRAGMENT = 44;
const MAX_DATAGRAM = 65_535;
const MAX_PENDING_BYTES = 64 * 1024 * 1024;
/** Datagrams remembered as complete, so that a copy of one of their fragments is not taken for a new datagram. */
const REMEMBERED = 4096;

interface Pending {
  /** The header to put in front of the payload, taken from the fragment at offset 0. */
  header: Buffer | undefined;
  /** Fragments by offset (bytes), in arrival order. */
  parts: { offset: number; data: Buffer }[];
  /** The payload length, known once the last fragment (more-fragments clear) has come. */
  total: number;
  bytes: number;
  /** Fragments seen (for the note on a datagram never completed). */
  fragments: number;
  firstPacket: number;
}

export class IpDefragmenter {
  private readonly pending = new Map<string, Pending>();
  private pendingBytes = 0;
  private reassembled = 0;
  private fragmentsUsed = 0;
  private duplicates = 0;
  private givenUp: string[] = [];
  /** Keys of the datagrams completed last (oldest first). */
  private readonly completed = new Set<string>();

  /**
   * An IPv4 packet whose flags say it is a fragment (`ihl` header bytes): the whole datagram
   * (its header with the fragment fields cleared and the total length set) once this fragment
   * completes it, undefined until then.
   */
  ipv4(ip: Buffer, ihl: number, packet: number): Buffer | undefined {
    const field = ip.readUInt16BE(6);
    const total = ip.readUInt16BE(2);
    const end = total === 0 ? ip.length : Math.min(total, ip.length);
    const data = ip.subarray(ihl, end);
    const key = `4 ${ip.subarray(12, 20).toString('hex')} ${ip[9]} ${ip.readUInt16BE(4)}`;
    const whole = this.add(key, ihl, (field & IPV4_OFFSET) * 8, data, (field & IPV4_MF) !== 0, (field & IPV4_OFFSET) === 0 ? ip.subarray(0, ihl) : undefined, packet);
    if (whole === undefined) return undefined;
    const header = Buffer.from(whole.header);
    header.writeUInt16BE(header.readUInt16BE(6) & ~(IPV4_MF | IPV4_OFFSET), 6);
    header.writeUInt16BE(header.length + whole.payload.length, 2);
    return Buffer.concat([header, whole.payload]);
  }

  /**
   * An IPv6 packet with a fragment header at `at`, announced by the next-header byte at `nextAt`:
   * the whole packet, without the fragment header (its next header put in that byte and the
   * payload length set), once this fragment completes it; undefined until then.
   */
  ipv6(ip: Buffer, nextAt: number, at: number, end: number, packet: number): Buffer | undefined {
    if (end < at + 8) return undefined;
    const field = ip.readUInt16BE(at + 2);
    const offset = field & 0xfff8;
    const more = (field & 1) !== 0;
    const key = `6 ${ip.subarray(8, 40).toString('hex')} ${ip.readUInt32BE(at + 4)}`;
    // The unfragmentable part (the fixed header and the extension headers before this one), with
    // the fragment header's next header already in place of 44.
    let header: Buffer | undefined;
    if (offset === 0) {
      header = Buffer.from(ip.subarray(0, at));
      header[nextAt] = ip[at]!;
    }
    // The payload length field counts from the end of the fixed header: the extension headers
    // before the fragment header are part of what it must hold.
    const whole = this.add(key, at - 40, offset, ip.subarray(at + 8, end), more, header, packet);
    if (whole === undefined) return undefined;
    const out = Buffer.concat([whole.header, whole.payload]);
    out.writeUInt16BE(out.length - 40, 4);
    return out;
  }

  /** `before`: the bytes in front of the payload that the rebuilt packet's length field also counts. */
  private add(key: string, before: number, offset: number, data: Buffer, more: boolean, header: Buffer | undefined, packet: number): { header: Buffer; payload: Buffer } | undefined {
    if (before + offset + data.length > MAX_DATAGRAM) {
      this.givenUp.push(`packet ${packet}: an IP fragment reaching byte ${before + offset + data.length}, past the ${MAX_DATAGRAM} a datagram can hold: left out`);
      return undefined;
    }
    if (this.completed.has(key)) {
      // A copy of a fragment of a datagram already put together (a packet captured twice).
      this.duplicates++;
      return undefined;
    }
    let d = this.pending.get(key);
    if (!d) this.pending.set(key, (d = { header: undefined, parts: [], total: -1, bytes: 0, fragments: 0, firstPacket: packet }));
    d.fragments++;
    if (header !== undefined && d.header === undefined) d.header = header;
    if (!more && d.total < 0) d.total = offset + data.length;
    // Copied: the packet's bytes belong to the capture file's buffer, kept as long as the datagram waits.
    d.parts.push({ offset, data: Buffer.from(data) });
    d.bytes += data.length;
    this.pendingBytes += data.length;
    this.bound(key);
    const payload = d.header !== undefined && d.total >= 0 ? contiguous(d.parts, d.total) : undefined;
    if (payload === undefined) return undefined;
    this.pending.delete(key);
    this.pendingBytes -= d.bytes;
    this.completed.add(key);
    if (this.completed.size > REMEMBERED) this.completed.delete(this.completed.values().next().value!);
    this.reassembled++;
    this.fragmentsUsed += d.fragments;
    return { header: d.header!, payload };
  }

  /** Gives up the oldest incomplete datagrams while they hold more than MAX_PENDING_BYTES. */
  private bound(keep: string): void {
    for (const [key, d] of this.pending) {
      if (this.pendingBytes <= MAX_PENDING_BYTES) return;
      if (key === keep) continue;
      this.pending.delete(key);
      this.pendingBytes -= d.bytes;
      this.givenUp.push(`an IP datagram from packet ${d.firstPacket} (${d.fragments} fragments, ${d.bytes} bytes) given up: more than ${MAX_PENDING_BYTES} bytes of fragments were waiting`);
    }
  }

  /** What was put together, and what could not be (its bytes are missing from the streams). */
  notes(): string[] {
    const out: string[] = [];
    if (this.reassembled > 0) out.push(`pcap: ${this.reassembled} fragmented IP datagrams put back together from ${this.fragmentsUsed} fragments`);
    if (this.duplicates > 0) out.push(`pcap: ${this.duplicates} copies of fragments of datagrams already put together, left out`);
    out.push(...this.givenUp);
    for (const d of this.pending.values()) {
      const why = d.header === undefined ? 'its first fragment' : d.total < 0 ? 'its last fragment' : 'a middle fragment';
      out.push(`pcap: an IP datagram from packet ${d.firstPacket} never completed (${d.fragments} fragments, ${d.bytes} bytes; ${why} is not in the capture): its bytes are missing from the stream`);
    }
    return out;
  }
}

/** The payload [0, total) from the parts when they cover all of it (overlaps from the lower offset, as the file's header says), else undefined. */
function contiguous(parts: { offset: number; data: Buffer }[], total: number): Buffer | undefined {
  const sorted = parts.map((p, i) => ({ ...p, i })).sort((a, b) => a.offset - b.offset || a.i - b.i);
  const chunks: Buffer[] = [];
  let next = 0;
  for (const p of sorted) {
    if (next >= total) break;
    const end = Math.min(total, p.offset + p.data.length);
    if (end <= next) continue;
    if (p.offset > next) return undefined;
    chunks.push(p.data.subarray(next - p.offset, end - p.offset));
    next = end;
  }
  return next >= total ? Buffer.concat(chunks) : undefined;
}
