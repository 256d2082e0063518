// The consumer's receive hot path end to end: socket -> frame (the socket reader) -> the request
// it answers -> a frame lease -> release(), through a real Connection, as the fetcher uses it
// (requestFrame(Fetch) with several requests in flight).
//
// A server child process answers ApiVersions, then every Fetch request with a response frame of
// the size asked (response header v1, ThrottleTimeMs 0, filler); each client runs in a fresh child
// process, keeps `--depth` Fetch requests in flight, touches both ends of every frame and releases
// it. Sizes: 1 MiB frames (read straight into frame-pool memory) and 1 KiB frames (views of the
// read buffer, copied out for the lease): the large-frame and the per-frame costs.
//
// `--compare DIR` runs a second build of @kwire/consumer (DIR holds its dist: DIR/src/internals.js,
// e.g. a copy of packages/consumer/dist made before a change) in the same run, interleaved with
// this one, and prints this/compare ratios: a refactor of the connection layer shows its cost here.
//
// Reported per variant and size (median of the runs): responses/s, MB/s of frame bytes, client CPU
// (user+sys) in ms per GiB and in µs per response, JS heap allocated per response (V8's GC
// profiler) and frame-pool misses.
//
// Run: node packages/bench/dist/src/micro/connection-read.js [--sizes 1048576,1024] [--mib 512] [--runs 5] [--depth 4] [--compare DIR]
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import v8 from 'node:v8';
import { internalsOf } from './compare-build.js';
import { API_DEFINITIONS, ApiVersions, decodeRequestHeader, encodeResponseFrame, Fetch, FrameSplitter } from '@kwire/protocol';

// ---- server ---------------------------------------------------------------------------------

function server(): void {
  const apiKeys = [...API_DEFINITIONS.values()].map((a) => ({ apiKey: a.apiKey, minVersion: a.minVersion, maxVersion: a.maxVersion }));
  // One body per size, shared by every response (the socket only reads it); the 9-byte header
  // (size, correlation id, no tagged fields) is written per response.
  const bodies = new Map<number, Buffer>();
  const bodyFor = (size: number) => {
    let b = bodies.get(size);
    if (b === undefined) {
      b = Buffer.alloc(size - 9, 0x5a);
      b.writeInt32BE(0, 0); // ThrottleTimeMs
      bodies.set(size, b);
    }
    return b;
  };
  const srv = createServer((socket) => {
    socket.setNoDelay(true);
    socket.on('error', () => {});
    const splitter = new FrameSplitter();
    socket.on('data', (chunk: Buffer) => {
      splitter.push(chunk, (frame) => {
        const h = decodeRequestHeader(frame);
        if (h.apiKey === ApiVersions.apiKey) {
          socket.write(encodeResponseFrame(h.apiKey, h.apiVersion, h.correlationId, { errorCode: 0, apiKeys, throttleTimeMs: 0 }));
          return;
        }
        // The client id says the frame size to answer with: "bench-<bytes>".
        const size = Number(h.clientId!.slice('bench-'.length));
        const head = Buffer.allocUnsafe(9);
        head.writeInt32BE(size - 4, 0);
        head.writeInt32BE(h.correlationId, 4);
        head[8] = 0;
        socket.cork();
        socket.write(head);
        socket.write(bodyFor(size));
        socket.uncork();
      });
    });
  });
  srv.listen(0, '127.0.0.1', () => process.stdout.write(`${(srv.address() as { port: number }).port}\n`));
  process.stdin.on('end', () => process.exit(0));
  process.stdin.resume();
}

// ---- client ---------------------------------------------------------------------------------

interface Result {
  variant: string;
  size: number;
  responses: number;
  seconds: number;
  perSec: number;
  mbPerSec: number;
  cpuMsPerGiB: number;
  cpuUsPerResponse: number;
  heapBytesPerResponse: number;
  poolMisses: number;
}

/** JS heap bytes allocated, from V8's GC profiler: growth between GCs plus the growth since the last. */
function heapMeter(): () => number {
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
    return total + Math.max(0, v8.getHeapStatistics().used_heap_size - prev);
  };
}

async function client(variant: string, modulePath: string, port: number, size: number, count: number, depth: number): Promise<void> {
  const mod = (await import(modulePath)) as typeof import('@kwire/consumer/internals');
  const pool = new mod.SimpleFramePool();
  const c = await mod.Connection.connect({ host: '127.0.0.1', port, clientId: `bench-${size}`, framePool: pool });
  const body = { maxWaitMs: 0, maxBytes: 64 * 1024 * 1024, topics: [] };
  let touch = 0;
  const run = (n: number) =>
    new Promise<void>((resolve, reject) => {
      let sent = 0;
      let done = 0;
      const one = () => {
        if (sent >= n) return;
        sent++;
        c.requestFrame(Fetch, body).then((lease) => {
          // Touch both ends, as a decoder would.
          touch ^= lease.frame[lease.bodyOffset + 4]! ^ lease.frame[lease.frame.length - 1]!;
          lease.release();
          if (++done === n) resolve();
          else one();
        }, reject);
      };
      for (let i = 0; i < depth; i++) one();
    });
  await run(Math.max(50, count >>> 4));
  const misses0 = pool.stats.misses;
  const stopHeap = heapMeter();
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  await run(count);
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  const heap = stopHeap();
  await c.close();
  const cpuMs = (cpu.user + cpu.system) / 1000;
  const bytes = size * count;
  const result: Result = {
    variant,
    size,
    responses: count,
    seconds,
    perSec: count / seconds,
    mbPerSec: bytes / 2 ** 20 / seconds,
    cpuMsPerGiB: cpuMs / (bytes / 2 ** 30),
    cpuUsPerResponse: (cpuMs * 1000) / count,
    heapBytesPerResponse: heap / count,
    poolMisses: pool.stats.misses - misses0 + (touch === -1 ? 1 : 0),
  };
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
      sizes: { type: 'string', default: '1048576,1024' },
      mib: { type: 'string', default: '512' },
      'max-responses': { type: 'string', default: '100000' },
      runs: { type: 'string', default: '5' },
      depth: { type: 'string', default: '4' },
      compare: { type: 'string' },
    },
  });
  const sizes = values.sizes!.split(',').map(Number);
  const runs = Number(values.runs);
  const depth = Number(values.depth);
  const variants: [name: string, module: string][] = [['this', '@kwire/consumer/internals']];
  if (values.compare) variants.push(['compare', internalsOf(values.compare)]);
  const srv = spawn(process.execPath, [fileURLToPath(import.meta.url), 'server'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) => srv.stdout.once('data', (c) => resolve(Number(String(c).trim()))));
  const results = new Map<string, Result[]>();
  try {
    for (let r = 0; r < runs; r++) {
      for (const size of sizes) {
        const count = Math.min(Number(values['max-responses']), Math.ceil((Number(values.mib) * 2 ** 20) / size));
        // Interleaved (and the order flipped every run), so that a slow phase of the machine hits every variant alike.
        const order = r % 2 === 0 ? variants : [...variants].reverse();
        for (const [name, module] of order) {
          const line = await runChild(['client', name, module, String(port), String(size), String(count), String(depth)]);
          const res = JSON.parse(line.trim()) as Result;
          const key = `${name} ${size}`;
          (results.get(key) ?? results.set(key, []).get(key)!).push(res);
        }
      }
    }
  } finally {
    srv.stdin.end();
  }
  console.log(`node ${process.version}: Connection.requestFrame(Fetch) over loopback TCP, ${depth} in flight, median of ${runs} runs`);
  console.log('variant  frame B   responses/s     MB/s  CPU ms/GiB  CPU µs/resp  heap B/resp  pool misses');
  const m = (rs: Result[], f: (r: Result) => number) => median(rs.map(f));
  for (const size of sizes) {
    for (const [name] of variants) {
      const rs = results.get(`${name} ${size}`)!;
      console.log(
        `${name.padEnd(8)} ${String(size).padStart(7)} ${m(rs, (r) => r.perSec)
          .toFixed(0)
          .padStart(13)} ${m(rs, (r) => r.mbPerSec)
          .toFixed(0)
          .padStart(8)} ${m(rs, (r) => r.cpuMsPerGiB)
          .toFixed(0)
          .padStart(11)} ${m(rs, (r) => r.cpuUsPerResponse)
          .toFixed(2)
          .padStart(12)} ${m(rs, (r) => r.heapBytesPerResponse)
          .toFixed(0)
          .padStart(12)} ${m(rs, (r) => r.poolMisses)
          .toFixed(0)
          .padStart(12)}`,
      );
    }
    if (variants.length === 2) {
      const a = results.get(`this ${size}`)!;
      const b = results.get(`compare ${size}`)!;
      const ratio = (f: (r: Result) => number) => (m(a, f) / m(b, f)).toFixed(3);
      console.log(
        `  this/compare at ${size} B: responses/s ${ratio((r) => r.perSec)}, CPU per response ${ratio((r) => r.cpuUsPerResponse)}, heap per response ${ratio((r) => r.heapBytesPerResponse)}`,
      );
    }
  }
}

const [mode, ...rest] = process.argv.slice(2);
if (mode === 'server') server();
else if (mode === 'client') await client(rest[0]!, rest[1]!, Number(rest[2]), Number(rest[3]), Number(rest[4]), Number(rest[5]));
else await main();
