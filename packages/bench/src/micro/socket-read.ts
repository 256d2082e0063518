// Reading Kafka-shaped frames off a socket: what the connection layer's reader (Node's `onread`
// with a buffer function, frames read straight into pooled memory) buys over the usual ways.
//
// A server child process streams blocks of 1000 frames of 100 B plus one frame of 1 MiB over
// loopback TCP; each client runs in a fresh child process and touches every frame:
//   naive     socket.on('data'), Buffer.concat of the pending bytes with each chunk (as kafkajs)
//   splitter  socket.on('data') into @kwire/protocol's FrameSplitter (no concat; Node allocates
//             every chunk, split frames are assembled into one exact-size buffer)
//   onread    the connection layer's FrameReader: one reusable 64 KiB read buffer, large frames
//             read directly into a pool buffer that the consumer then releases
//   compare   the same as onread, with the FrameReader of another build of @kwire/consumer
//             (`--compare DIR`, DIR holding its dist: DIR/src/internals.js), to see what a change to the
//             reader costs, in the same run
//
// Reported per variant (median of the runs): MB/s (MiB/s of frame bytes), client CPU (user+sys)
// as ms per GiB and as a share of one core, buffer bytes allocated per GiB (counted: Node's read
// chunks by their backing ArrayBuffer, our concats/assemblies/pool misses), JS heap allocated per
// GiB (from V8's GC profiler), and GC count.
//
// Run: node packages/bench/dist/src/micro/socket-read.js [--gib 1] [--runs 3] [--variants naive,splitter,onread] [--compare DIR]
// Under Node 24: "$(npx -y -p node@24.21.0 node -p process.execPath)" packages/bench/dist/src/micro/socket-read.js
import { spawn } from 'node:child_process';
import { connect, createServer, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import v8 from 'node:v8';
import { FrameSplitter } from '@kwire/protocol';
import { FrameReader, SimpleFramePool } from '@kwire/consumer/internals';
import { internalsOf } from './compare-build.js';

const SMALL = 100;
const LARGE = 1024 * 1024;
const SMALL_PER_BLOCK = 1000;

/** One block of the stream: SMALL_PER_BLOCK frames of 100 B, then one of 1 MiB (sizes include the prefix). */
function block(): Buffer {
  const b = Buffer.allocUnsafe(SMALL_PER_BLOCK * SMALL + LARGE);
  let o = 0;
  for (let i = 0; i < SMALL_PER_BLOCK; i++) {
    b.writeInt32BE(SMALL - 4, o);
    b.fill(i & 0xff, o + 4, o + SMALL);
    o += SMALL;
  }
  b.writeInt32BE(LARGE - 4, o);
  b.fill(0x5a, o + 4, o + LARGE);
  return b;
}

// ---- server ---------------------------------------------------------------------------------

function server(bytes: number): void {
  const data = block();
  const blocks = Math.ceil(bytes / data.length);
  const srv = createServer((socket) => {
    socket.setNoDelay(true);
    let sent = 0;
    const pump = () => {
      while (sent < blocks) {
        sent++;
        if (!socket.write(data)) return void socket.once('drain', pump);
      }
      socket.end();
    };
    socket.on('error', () => {});
    pump();
  });
  srv.listen(0, '127.0.0.1', () => {
    process.stdout.write(`${(srv.address() as { port: number }).port}\n`);
  });
  // Stop with the parent.
  process.stdin.on('end', () => process.exit(0));
  process.stdin.resume();
}

// ---- clients --------------------------------------------------------------------------------

interface Result {
  variant: string;
  node: string;
  frames: number;
  bytes: number;
  seconds: number;
  mbPerSec: number;
  cpuMsPerGiB: number;
  cpuShare: number;
  bufferBytesPerGiB: number;
  heapBytesPerGiB: number;
  gcs: number;
}

/** JS heap bytes allocated, from V8's GC profiler: growth between GCs plus the growth since the last. */
function heapMeter(): () => { bytes: number; gcs: number } {
  const start = v8.getHeapStatistics().used_heap_size;
  const profiler = new v8.GCProfiler();
  profiler.start();
  return () => {
    const stats = profiler.stop().statistics;
    let prev = start;
    let total = 0;
    for (const s of stats) {
      total += Math.max(0, s.beforeGC.heapStatistics.usedHeapSize - prev);
      prev = s.afterGC.heapStatistics.usedHeapSize;
    }
    total += Math.max(0, v8.getHeapStatistics().used_heap_size - prev);
    return { bytes: total, gcs: stats.length };
  };
}

async function client(variant: string, port: number, compare: string | undefined): Promise<void> {
  let frames = 0;
  let frameBytes = 0;
  let touch = 0;
  let bufferBytes = 0;
  // Node's read chunks: counted by their backing store, once each.
  const seen = new WeakSet<ArrayBufferLike>();
  const countChunk = (chunk: Buffer) => {
    if (!seen.has(chunk.buffer)) {
      seen.add(chunk.buffer);
      bufferBytes += chunk.buffer.byteLength;
    }
  };
  const handle = (frame: Buffer) => {
    frames++;
    frameBytes += frame.length;
    // Touch both ends, as a decoder would.
    touch ^= frame[4] ?? 0;
    touch ^= frame[frame.length - 1]!;
  };

  let socket: Socket;
  let framePool: { stats: { misses: number } } | undefined;
  if (variant === 'naive') {
    socket = connect({ host: '127.0.0.1', port });
    let pending: Buffer = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      countChunk(chunk);
      if (pending.length === 0) pending = chunk;
      else {
        pending = Buffer.concat([pending, chunk]);
        bufferBytes += pending.length;
      }
      let o = 0;
      while (pending.length - o >= 4) {
        const size = pending.readInt32BE(o);
        if (pending.length - o < size + 4) break;
        handle(pending.subarray(o, o + size + 4));
        o += size + 4;
      }
      pending = pending.subarray(o);
    });
  } else if (variant === 'splitter') {
    socket = connect({ host: '127.0.0.1', port });
    const splitter = new FrameSplitter();
    let current: Buffer | undefined;
    socket.on('data', (chunk: Buffer) => {
      countChunk(chunk);
      current = chunk;
      splitter.push(chunk, (frame) => {
        // A frame not inside the current chunk was assembled into a buffer of its own.
        if (frame.buffer !== current!.buffer) bufferBytes += frame.length;
        handle(frame);
      });
    });
  } else if (variant === 'onread' || variant === 'compare') {
    const other = compare !== undefined ? ((await import(compare)) as typeof import('@kwire/consumer/internals')) : undefined;
    const mod = variant === 'onread' ? { FrameReader, SimpleFramePool } : other!;
    const pool = new mod.SimpleFramePool();
    const reader = new mod.FrameReader(
      {
        allocate: (size) => pool.acquire(size),
        frame: (frame, backing) => {
          handle(frame);
          // The fetcher decodes and then releases: here at once.
          if (backing) pool.release(backing);
        },
      },
      { readBufferBytes: 64 * 1024 },
    );
    bufferBytes += 64 * 1024;
    socket = connect({ host: '127.0.0.1', port, onread: reader.onread });
    framePool = pool;
  } else {
    throw new Error(`unknown variant ${variant}`);
  }
  socket.setNoDelay(true);

  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  const stopHeap = heapMeter();
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  await new Promise<void>((resolve, reject) => {
    socket.once('close', () => resolve());
    socket.once('error', reject);
  });
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  const heap = stopHeap();
  // Pool misses are the only allocations of the onread path after its read buffer; each miss of a
  // 1 MiB frame is one 1 MiB class buffer (frames here are 100 B or 1 MiB).
  if (framePool) bufferBytes += framePool.stats.misses * LARGE;
  const gib = frameBytes / 2 ** 30;
  const result: Result = {
    variant,
    node: process.version,
    frames,
    bytes: frameBytes,
    seconds,
    mbPerSec: frameBytes / 2 ** 20 / seconds,
    cpuMsPerGiB: (cpu.user + cpu.system) / 1000 / gib,
    cpuShare: (cpu.user + cpu.system) / 1e6 / seconds,
    bufferBytesPerGiB: bufferBytes / gib,
    heapBytesPerGiB: heap.bytes / gib,
    gcs: heap.gcs,
  };
  if (touch === -1) result.frames = -1; // keep `touch` alive
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

// ---- orchestration --------------------------------------------------------------------------

function runChild(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`client ${args.join(' ')} exited with ${code}`))));
  });
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      gib: { type: 'string', default: '1' },
      runs: { type: 'string', default: '3' },
      variants: { type: 'string', default: 'naive,splitter,onread' },
      compare: { type: 'string' },
    },
  });
  const compare = values.compare ? internalsOf(values.compare) : undefined;
  const bytes = Math.round(Number(values.gib) * 2 ** 30);
  const runs = Number(values.runs);
  const variants = values.variants!.split(',');
  if (compare && !variants.includes('compare')) variants.push('compare');
  if (variants.includes('compare') && !compare) throw new Error('the compare variant needs --compare DIR');
  const srv = spawn(process.execPath, [fileURLToPath(import.meta.url), 'server', String(bytes)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) => srv.stdout.once('data', (c) => resolve(Number(String(c).trim()))));
  const results = new Map<string, Result[]>();
  try {
    for (let r = 0; r < runs; r++) {
      // Interleaved, the order reversed every other run, so that a slow phase of the machine (or
      // the server's state after the previous client) hits every variant alike.
      for (const v of r % 2 === 0 ? variants : [...variants].reverse()) {
        // With --compare every client loads the other build too, used or not: the same module
        // graphs in every client, so that start-up garbage (which sizes V8's young generation, and
        // with it the GC count) is alike.
        const line = await runChild(['client', v, String(port), ...(compare ? [compare] : [])]);
        const res = JSON.parse(line.trim()) as Result;
        (results.get(v) ?? results.set(v, []).get(v)!).push(res);
      }
    }
  } finally {
    srv.stdin.end();
  }
  const blockBytes = SMALL_PER_BLOCK * SMALL + LARGE;
  console.log(
    `node ${process.version}: ${(bytes / 2 ** 30).toFixed(2)} GiB per run over loopback TCP, blocks of ${SMALL_PER_BLOCK} x ${SMALL} B + 1 x 1 MiB ` +
      `(${(((SMALL_PER_BLOCK * SMALL) / blockBytes) * 100).toFixed(1)}% of bytes in small frames), median of ${runs}`,
  );
  console.log('variant      MB/s   CPU ms/GiB  CPU share  buffers alloc/GiB  heap alloc/GiB   GCs');
  for (const v of variants) {
    const rs = results.get(v)!;
    const m = (f: (r: Result) => number) => median(rs.map(f));
    console.log(
      `${v.padEnd(9)} ${m((r) => r.mbPerSec)
        .toFixed(0)
        .padStart(7)} ${m((r) => r.cpuMsPerGiB)
        .toFixed(0)
        .padStart(12)} ${(m((r) => r.cpuShare) * 100).toFixed(0).padStart(9)}% ` +
        `${(m((r) => r.bufferBytesPerGiB) / 2 ** 20).toFixed(1).padStart(14)} MiB ${(m((r) => r.heapBytesPerGiB) / 2 ** 20).toFixed(1).padStart(11)} MiB ${m((r) => r.gcs)
          .toFixed(0)
          .padStart(5)}`,
    );
  }
}

const [mode, a1, a2, a3] = process.argv.slice(2);
if (mode === 'server') server(Number(a1));
else if (mode === 'client') await client(a1!, Number(a2), a3);
else await main();
