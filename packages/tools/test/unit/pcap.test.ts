// pcap and pcapng input, with capture files built in the test (test/unit/pcap-builder.ts) around
// the real byte streams of test-fixtures/ captures: the frames decoded from the pcap must be the
// frames decoded from the capture folder, whatever the packets went through (reordering,
// retransmission, a sequence number wrapping past 2^32, a capture begun mid-connection).
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { captureConversations, conversationsFromPackets, decodeConversation, type DecodedFrame, readPackets, reassemble, tcpSegment } from '../../src/index.js';
import { connection, ethernet, fragmentIpv4, fragmentIpv6, pcapFile, pcapngFile, rawIpv6, rawPcapFile, type TcpPacket } from './pcap-builder.js';

const fixtures = resolve(dirname(fileURLToPath(import.meta.url)), '../../../../../test-fixtures');

/** The client and broker streams of connection `conn` of a recorded capture. */
function streams(capture: string, conn: number): { up: Buffer; down: Buffer; frames: DecodedFrame[] } {
  const c = captureConversations(join(fixtures, capture)).conversations.find((x) => x.conn === conn)!;
  return { up: c.requests.bytes, down: c.responses.bytes, frames: [...decodeConversation(c)] };
}

/** What matters of a decoded frame, without its position and times (which the transport changes). */
const essence = (f: DecodedFrame) => ({ direction: f.direction, correlationId: f.correlationId, api: f.api, apiVersion: f.apiVersion, body: f.body, error: f.error });

function decodePcap(file: Buffer, ports?: number[]) {
  const { packets, notes } = readPackets(file);
  const { conversations, notes: more } = conversationsFromPackets(packets, notes, ports ? { ports } : {});
  return { conversations, notes: more, frames: conversations.flatMap((c) => [...decodeConversation(c)]) };
}

// java-4.4.0/console conn 6: the consumer's fetch connection (ApiVersions, Fetch with records...).
const real = streams('java-4.4.0/console', 6);
const client: [string, number] = ['127.0.0.1', 51234];
const broker: [string, number] = ['127.0.0.1', 9092];

test('pcap, in order: every frame as decoded from the recorded capture; times from the packets', () => {
  assert.ok(real.frames.length >= 6 && real.frames.every((f) => f.error === undefined));
  const file = pcapFile(connection({ client, broker, up: real.up, down: real.down, mss: 200 }));
  const { conversations, frames, notes } = decodePcap(file);
  assert.equal(notes, []);
  assert.is(conversations.length, 1);
  assert.is(conversations[0]!.client, '127.0.0.1:51234');
  assert.is(conversations[0]!.broker, '127.0.0.1:9092');
  assert.ok(conversations[0]!.requests.bytes.equals(real.up) && conversations[0]!.responses.bytes.equals(real.down));
  assert.equal(frames.map(essence), real.frames.map(essence));
  assert.ok(frames.every((f) => typeof f.at === 'number' && f.at >= 0));
});

test('pcapng (nanosecond timestamps, Linux cooked v2), both byte orders', () => {
  for (const bigEndian of [false, true]) {
    const packets = connection({ client, broker, up: real.up, down: real.down, mss: 333 });
    const { frames } = decodePcap(pcapngFile(packets, bigEndian));
    assert.equal(frames.map(essence), real.frames.map(essence), bigEndian ? 'big-endian' : 'little-endian');
    // Nanosecond resolution: the times are the packets' (1 ms apart), not rounded to seconds.
    const t = frames.map((f) => f.at!);
    assert.ok(t[1]! - t[0]! >= 1 && t[1]! - t[0]! < 1000, `${t[0]} ${t[1]}`);
  }
});

test('reordered and retransmitted segments, and a sequence number wrapping past 2^32', () => {
  const packets = connection({ client, broker, up: real.up, down: real.down, mss: 97, isnBroker: 0xffffff00 });
  const data = packets.slice(3);
  // Swap neighbours here and there, and send some segments twice (a retransmission after a lost ACK).
  const shuffled: TcpPacket[] = [packets[0]!, packets[1]!, packets[2]!];
  for (let i = 0; i < data.length; i++) {
    if (i % 5 === 0 && i + 1 < data.length) {
      shuffled.push(data[i + 1]!, data[i]!);
      i++;
    } else shuffled.push(data[i]!);
    if (i % 7 === 3) shuffled.push(data[i]!);
  }
  // One retransmission that covers two earlier segments at once (a repacketized resend).
  const ups = data.filter((p) => p.src === client);
  shuffled.push({ ...ups[1]!, payload: Buffer.concat([ups[1]!.payload!, ups[2]!.payload!]) });
  const { conversations, frames } = decodePcap(pcapFile(shuffled));
  assert.ok(conversations[0]!.requests.bytes.equals(real.up), 'client stream reassembled');
  assert.ok(conversations[0]!.responses.bytes.equals(real.down), 'broker stream reassembled across the wrap');
  assert.equal(frames.map(essence), real.frames.map(essence));
  const segs = shuffled.map((p, index) => tcpSegment({ at: p.at, linkType: 1, data: readPackets(pcapFile([p])).packets[0]!.data, index })!);
  const r = reassemble(segs.filter((s) => s.src === '127.0.0.1:9092'));
  assert.ok(r.retransmitted > 0 && r.outOfOrder > 0, `${r.retransmitted} retransmitted, ${r.outOfOrder} out of order`);
});

test('a capture begun mid-connection: read from the first provable frame boundary, the frames before it counted as skipped', () => {
  const packets = connection({ client, broker, up: real.up, down: real.down, mss: 50 });
  // Drop the handshake and the first part of both streams: the capture starts inside a frame.
  const cutAt = 9;
  const { conversations, frames, notes } = decodePcap(pcapFile(packets.slice(cutAt)));
  assert.equal(notes, []);
  const c = conversations[0]!;
  const skipped = c.skippedAtStart!;
  assert.ok(skipped.requestBytes > 0, 'the client stream began inside a frame');
  // The boundary found is a real one: the remaining client bytes are a suffix of the real stream
  // starting exactly at one of its frame boundaries, and so for the broker's.
  const upStart = real.up.length - c.requests.bytes.length;
  const downStart = real.down.length - c.responses.bytes.length;
  const requestOffsets = real.frames.filter((f) => f.direction === 'request').map((f) => f.offset);
  const responseOffsets = real.frames.filter((f) => f.direction === 'response').map((f) => f.offset);
  assert.ok(requestOffsets.includes(upStart), `client stream resumes at ${upStart}`);
  assert.ok(responseOffsets.includes(downStart), `broker stream resumes at ${downStart}`);
  // The frames decoded are exactly the real ones from those boundaries on, none in error.
  const expected = real.frames.filter((f) => (f.direction === 'request' ? f.offset >= upStart : f.offset >= downStart));
  const expectedPaired = expected.filter((f) => f.direction === 'request' || expected.some((q) => q.direction === 'request' && q.correlationId === f.correlationId));
  assert.equal(frames.map(essence), expectedPaired.map(essence));
  assert.ok(frames.every((f) => f.error === undefined));
  // Skipped: the cut request frame, and the responses whose requests came before the capture.
  const lostRequests = requestOffsets.filter((o) => o < upStart).length;
  assert.is(skipped.requests, 1);
  // At least the answers to the lost requests that were captured whole, at most one per real
  // response before the boundary plus the cut one.
  const responsesBefore = responseOffsets.filter((o) => o < downStart).length;
  assert.ok(skipped.responses >= 1 && skipped.responses <= responsesBefore + 1, `${skipped.responses} responses skipped of ${responsesBefore} before the boundary`);
  assert.ok(lostRequests >= 1 && responsesBefore >= lostRequests - 1, `${lostRequests} requests lost`);
  assert.ok(expected.length < real.frames.length);
});

test('Kafka found by an ApiVersions request at a stream start on any port; other connections left out', () => {
  const kafka = connection({ client: ['10.0.0.1', 40000], broker: ['10.0.0.2', 19093], up: real.up, down: real.down, t0: 1_700_000_000_000 });
  const http = connection({
    client: ['10.0.0.1', 40001],
    broker: ['10.0.0.2', 8080],
    up: Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'),
    down: Buffer.from('HTTP/1.1 200 OK\r\n\r\n'),
    t0: 1_700_000_000_500,
  });
  const { conversations, frames, notes } = decodePcap(pcapFile([...kafka, ...http].sort((a, b) => a.at - b.at)));
  assert.is(conversations.length, 1);
  assert.is(conversations[0]!.broker, '10.0.0.2:19093');
  assert.equal(frames.map(essence), real.frames.map(essence));
  assert.ok(
    notes.some((n) => n.includes('10.0.0.2:8080') && n.includes('not read as Kafka')),
    notes.join('\n'),
  );
  // Mid-connection on a port nobody named: not provable as Kafka without --port.
  const cut = kafka.slice(5);
  assert.is(decodePcap(pcapFile(cut)).conversations.length, 0);
  assert.is(decodePcap(pcapFile(cut), [19093]).conversations.length, 1);
});

test('a lost packet ends the stream at the hole, with a note; a damaged file is reported, not thrown', () => {
  const packets = connection({ client, broker, up: real.up, down: real.down, mss: 100 });
  const lost = packets.findIndex((p, i) => i > 6 && p.src === broker);
  const { conversations, notes } = decodePcap(pcapFile(packets.filter((_, i) => i !== lost)));
  assert.ok(
    notes.some((n) => /100 broker bytes missing from the capture at stream byte \d+/.test(n)),
    notes.join('\n'),
  );
  assert.ok(conversations[0]!.responses.bytes.length < real.down.length);
  const file = pcapFile(packets);
  const cut = readPackets(file.subarray(0, file.length - 30));
  assert.ok(cut.notes.some((n) => n.includes('cut off')));
  assert.throws(() => readPackets(Buffer.from('not a capture file')), /not a pcap or pcapng file/);
});

/** Each packet of more than `over` payload bytes as fragments, in the order `order` gives. */
function fragmented(packets: TcpPacket[], frame: (p: TcpPacket) => Buffer, cut: (b: Buffer, i: number) => Buffer[], over: number, order: (pieces: Buffer[]) => Buffer[]) {
  const out: { at: number; data: Buffer }[] = [];
  let cutCount = 0;
  let pieces = 0;
  packets.forEach((p) => {
    const b = frame(p);
    if ((p.payload?.length ?? 0) <= over) out.push({ at: p.at, data: b });
    else {
      const all = cut(b, cutCount++);
      pieces += all.length;
      for (const piece of order(all)) out.push({ at: p.at, data: piece });
    }
  });
  return { frames: out, datagrams: cutCount, pieces };
}

test('IPv4 fragments put back together: out of order and duplicated, the same frames as unfragmented', () => {
  const packets = connection({ client, broker, up: real.up, down: real.down, mss: 600 });
  const whole = decodePcap(pcapFile(packets));
  // Three pieces each (128, 128, the rest), the last first, the first twice.
  const { frames, datagrams, pieces } = fragmented(
    packets,
    ethernet,
    (b, i) => fragmentIpv4(b, [128, 128], 0x1000 + i),
    300,
    (all) => [...all.slice(1).reverse(), all[0]!, all[0]!],
  );
  assert.ok(datagrams >= 3, `${datagrams} datagrams fragmented`);
  const { frames: got, notes } = decodePcap(rawPcapFile(frames, 1));
  assert.equal(got.map(essence), whole.frames.map(essence));
  assert.ok(notes.includes(`pcap: ${datagrams} fragmented IP datagrams put back together from ${pieces} fragments`), notes.join('\n'));
  assert.ok(notes.includes(`pcap: ${datagrams} copies of fragments of datagrams already put together, left out`), notes.join('\n'));
  assert.ok(!notes.some((n) => /missing|never/.test(n)), notes.join('\n'));
});

test('IPv6 fragments (fragment headers) put back together: the same frames as unfragmented', () => {
  const v6client: [string, number] = ['::1', 51234];
  const v6broker: [string, number] = ['::1', 9092];
  const packets = connection({ client: v6client, broker: v6broker, up: real.up, down: real.down, mss: 600 });
  const plain = decodePcap(
    rawPcapFile(
      packets.map((p) => ({ at: p.at, data: rawIpv6(p) })),
      101,
    ),
  );
  assert.ok(plain.frames.length > 3, 'the IPv6 capture decodes');
  const { frames, datagrams, pieces } = fragmented(
    packets,
    rawIpv6,
    (b, i) => fragmentIpv6(b, [200, 200], 0x10000 + i),
    300,
    (all) => [...all].reverse(),
  );
  assert.ok(datagrams >= 3, `${datagrams} datagrams fragmented`);
  const { frames: got, notes } = decodePcap(rawPcapFile(frames, 101));
  assert.equal(got.map(essence), plain.frames.map(essence));
  assert.ok(notes.includes(`pcap: ${datagrams} fragmented IP datagrams put back together from ${pieces} fragments`), notes.join('\n'));
});

test('a fragment missing: the datagram is named as never completed and the stream ends at the hole; a fragment past 65,535 bytes is refused', () => {
  const packets = connection({ client, broker, up: real.up, down: real.down, mss: 600 });
  // The second datagram cut loses its middle fragment.
  let seen = 0;
  const { frames } = fragmented(
    packets,
    ethernet,
    (b, i) => fragmentIpv4(b, [128, 128], 0x2000 + i),
    300,
    (all) => (seen++ === 1 ? [all[0]!, all[2]!] : all),
  );
  // And a fragment whose offset puts its end past what an IP datagram can hold.
  const far = Buffer.from(frames[frames.length - 1]!.data);
  far.writeUInt16BE(0x2000 | 8190, 20);
  far.writeUInt16BE(0x7777, 18);
  frames.push({ at: frames[frames.length - 1]!.at + 1, data: far });
  const { conversations, notes } = decodePcap(rawPcapFile(frames, 1));
  assert.ok(
    notes.some((n) => /an IP datagram from packet \d+ never completed \(2 fragments, \d+ bytes; a middle fragment is not in the capture\)/.test(n)),
    notes.join('\n'),
  );
  assert.ok(
    notes.some((n) => /bytes missing from the capture at stream byte/.test(n)),
    notes.join('\n'),
  );
  assert.ok(
    notes.some((n) => /an IP fragment reaching byte \d+, past the 65535 a datagram can hold: left out/.test(n)),
    notes.join('\n'),
  );
  assert.is(conversations.length, 1);
});

test('a real pcap of the committed fixture parses as tcpdump wrote it', () => {
  const pcap = join(fixtures, 'tcpdump-java-4.4.0', 'console', 'console.pcap');
  let file: Buffer;
  try {
    file = readFileSync(pcap);
  } catch {
    console.log('  (no tcpdump fixture committed)');
    return;
  }
  const { frames } = decodePcap(file);
  assert.ok(frames.length > 20 && frames.every((f) => f.error === undefined), `${frames.length} frames`);
});

test.run();
