// The CRC-32C as the bytes arrive, against one pass over the finished frame, on a real loopback
// socket: a server writes frames of FRAME_MIB continuously; the client reads them with `onread`
// straight into a frame buffer (as kwire's receiver does for large frames), and either
//   after:   runs crc32c over the whole frame in 240 KiB slices (about a 1 KB batch) once it is in, or
//   arrival: runs crc32c over each BLOCK-byte block as soon as the reads have filled it.
// Prints the CRC's rate (bytes / time inside crc32c). Usage, from the repository's root after the build:
//   node packages/bench/results/crc-ab/arrival.mjs FRAME_MIB ROUNDS after|arrival [BLOCK]
import net from 'node:net';
import { crc32cImplementation, crc32cImplementations } from '@kwire/protocol';

const crc = crc32cImplementations[crc32cImplementation];
const frameBytes = Number(process.argv[2] ?? 1) << 20;
const rounds = Number(process.argv[3] ?? 480);
const mode = process.argv[4] ?? 'after';
const block = Number(process.argv[5] ?? 4096);
const slice = 240 << 10;

const source = Buffer.allocUnsafe(frameBytes);
for (let i = 0; i < frameBytes; i += 4) source.writeUInt32LE((i * 2654435761) >>> 0, i);
const server = net.createServer((s) => {
  let sent = 0;
  const go = () => {
    while (sent < rounds) {
      sent++;
      if (!s.write(source)) return s.once('drain', go);
    }
    s.end();
  };
  go();
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));

const frames = [Buffer.allocUnsafe(frameBytes), Buffer.allocUnsafe(frameBytes)];
let which = 0;
let filled = 0;
let crcMs = 0;
let crcBytes = 0;
let received = 0;
let blockAt = 0;
const timed = (frame, from, to, step) => {
  const t = performance.now();
  for (let o = from; o < to; o += step) crc(frame.subarray(o, Math.min(to, o + step)));
  crcMs += performance.now() - t;
  crcBytes += to - from;
};
const socket = net.connect({
  port: server.address().port,
  host: '127.0.0.1',
  onread: {
    buffer: () => frames[which].subarray(filled),
    callback: (n) => {
      filled += n;
      if (mode === 'arrival') {
        const end = filled - (filled % block);
        if (end > blockAt) timed(frames[which], blockAt, end, block);
        blockAt = Math.max(blockAt, end);
      }
      if (filled === frameBytes) {
        if (mode === 'after') timed(frames[which], 0, frameBytes, slice);
        received++;
        filled = 0;
        blockAt = 0;
        which ^= 1;
      }
      return true;
    },
  },
});
socket.on('end', () => {
  const how = mode === 'arrival' ? `arrival, ${block} B blocks` : 'after the frame, 240 KiB slices';
  console.log(`${frameBytes >> 20} MiB frames, ${how}: ${received} frames, crc32c (${crc32cImplementation}) at ${(crcBytes / 1e6 / crcMs).toFixed(2)} GB/s`);
  server.close();
});
