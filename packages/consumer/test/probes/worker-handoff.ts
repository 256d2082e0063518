// Worker hand-off probe (issue 31, item 6): what it costs to hand a record to a worker thread and
// hear back, by the ways a record's bytes can cross (no broker):
//
//   node packages/consumer/dist/test/probes/worker-handoff.js [--seconds 3] [--threads 2]
//        [--inflight 64] [--sizes 100,10000] [--handlers noop,cpu1ms] [--ways clone,transfer,shared,raw,kwire]
//        [--atomics sync|async] [--per-worker 1] [--nice 0] [--rounds 1]
//
// Ways, each a round trip of one record of a real ConsumerRecord (read from its batch's bytes as
// the pool does) to a worker that calls a handler with its key, value and headers and answers:
//  - clone: piscina, a plain object whose key/value/header values are fresh copies, structured
//    clone copies them again into the worker;
//  - transfer: piscina, the bytes copied once into one fresh ArrayBuffer moved with transferList;
//  - shared: piscina, the bytes copied into a slot of a SharedArrayBuffer frame pool (workerData);
//    only the slot's place and lengths cross, the worker reads the bytes in place;
//  - raw: no piscina, our own Workers and postMessage with the transfer way (what piscina costs);
//  - kwire: src/run/worker-pool.ts itself (the transfer way, piscina with its settings there) and a
//    user's module written to a temporary file.
// `--inflight` records are kept in flight (the runner's maxConcurrency); the handler is a no-op
// (reads one byte of the value) or burns 1 ms of CPU. Per run: round trips/s, CPU time per round
// trip (the main thread's, and all threads'; with the no-op handler that is the hand-off's whole
// cost, and it moves far less with the machine's other load than the rate does), the main thread's
// event-loop utilization (what the hand-off costs the thread that fetches and heartbeats) and a
// 1 ms timer's p99 tick there; with --rounds > 1, each way's median over the rounds at the end
// (rounds interleave the ways, so that the machine's other load falls on all of them alike).
//
// Measured here (2 shared cores, Node 20.20, piscina 5.3.2, 2 threads, 64 in flight): see
// src/run/worker-pool.ts for the figures and the choice.
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { Piscina } from 'piscina';
import { RecordView, encodeRecordBatch, type RecordBatch } from '@kwire/protocol';
import { silentLogger } from '../../src/logger.js';
import type { ConsumerRecord } from '../../src/records/index.js';
import { startWorkerPool, type WorkerRecord } from '../../src/run/worker-pool.js';

type Way = 'clone' | 'transfer' | 'shared' | 'raw' | 'kwire';
type Handler = 'noop' | 'cpu1ms';

interface ProbeData {
  way: Way;
  handler: Handler;
  /** The shared way's frame pool. */
  frames?: SharedArrayBuffer;
}

/** A record as the clone way sends it: what the handler gets (WorkerRecord), cloned whole. */
type CloneTask = WorkerRecord;

/** A record as the transfer and shared ways send it: lengths of the parts laid end to end in `bytes` (or at `at` of the frame pool). */
interface PackedTask {
  topic: string;
  partition: number;
  offset: bigint;
  timestamp: number;
  bytes: ArrayBuffer | null;
  at: number;
  keyLength: number;
  valueLength: number;
  /** Header keys and value lengths (-1 for null). */
  headers: (string | number)[];
}

const SLOT = 16 * 1024;

// ---- the worker side ----------------------------------------------------------------------------

function burn(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

let sink = 0;

function handle(handler: Handler, key: Uint8Array | null, value: Uint8Array | null, headers: [string, Uint8Array | null][]): void {
  if (handler === 'cpu1ms') burn(1);
  sink ^= (value?.[0] ?? 0) ^ (key?.length ?? 0) ^ headers.length;
}

function unpack(t: PackedTask, frames: SharedArrayBuffer | undefined): [Uint8Array | null, Uint8Array | null, [string, Uint8Array | null][]] {
  const memory = t.bytes ?? frames!;
  let at = t.bytes ? 0 : t.at;
  const part = (length: number) => {
    if (length < 0) return null;
    const view = new Uint8Array(memory, at, length);
    at += length;
    return view;
  };
  const key = part(t.keyLength);
  const value = part(t.valueLength);
  const headers: [string, Uint8Array | null][] = [];
  for (let i = 0; i < t.headers.length; i += 2) headers.push([t.headers[i] as string, part(t.headers[i + 1] as number)]);
  return [key, value, headers];
}

/** piscina's task function in the worker. */
export default function task(t: CloneTask | PackedTask): number {
  const data = workerData as ProbeData;
  if (data.way === 'clone') {
    const c = t as CloneTask;
    handle(data.handler, c.key, c.value, c.headers);
  } else {
    const [key, value, headers] = unpack(t as PackedTask, data.frames);
    handle(data.handler, key, value, headers);
  }
  return sink & 1;
}

if (!isMainThread && (workerData as ProbeData | undefined)?.way === 'raw') {
  const data = workerData as ProbeData;
  parentPort!.on('message', (m: { id: number; task: PackedTask }) => {
    const [key, value, headers] = unpack(m.task, undefined);
    handle(data.handler, key, value, headers);
    parentPort!.postMessage(m.id);
  });
}

// ---- the main side ------------------------------------------------------------------------------

/** Reads a record's raw parts from its batch's bytes, as the pool does (one RecordView, reused). */
const place = new RecordView(null as unknown as RecordBatch);

function partsOf(r: ConsumerRecord): { key: Buffer | null; value: Buffer | null; headers: [string, Buffer | null][] } {
  place.batch = r.wireBatch;
  r.wireBatch.readRecordAt(r.position, place);
  return { key: place.key, value: place.value, headers: place.headers.map((h) => [h.key, h.value]) };
}

function cloneTask(r: ConsumerRecord): CloneTask {
  const { key, value, headers } = partsOf(r);
  // Copies first: structured clone of a view sends its whole ArrayBuffer (the fetch frame).
  const copy = (b: Buffer | null) => (b === null ? null : new Uint8Array(b));
  return { topic: r.topic, partition: r.partition, offset: r.offset, timestamp: r.timestamp, key: copy(key), value: copy(value), headers: headers.map(([k, v]) => [k, copy(v)]) };
}

/** The packed task with its bytes written at `at` of `into` (a fresh ArrayBuffer, or the frame pool). */
function packedTask(r: ConsumerRecord, into: (size: number) => [Uint8Array, number, ArrayBuffer | null]): PackedTask {
  const { key, value, headers } = partsOf(r);
  let size = (key?.length ?? 0) + (value?.length ?? 0);
  for (const [, v] of headers) size += v?.length ?? 0;
  const [memory, at, bytes] = into(size);
  let p = at;
  const put = (b: Buffer | null) => {
    if (b === null) return -1;
    memory.set(b, p);
    p += b.length;
    return b.length;
  };
  const keyLength = put(key);
  const valueLength = put(value);
  const hs: (string | number)[] = [];
  for (const [k, v] of headers) hs.push(k, put(v));
  return { topic: r.topic, partition: r.partition, offset: r.offset, timestamp: r.timestamp, bytes, at, keyLength, valueLength, headers: hs };
}

function fresh(size: number): [Uint8Array, number, ArrayBuffer] {
  const b = new ArrayBuffer(size);
  return [new Uint8Array(b), 0, b];
}

interface Result {
  rate: number;
  /** The main thread's event-loop utilization. */
  elu: number;
  /** p99 of a 1 ms timer's ticks on the main thread (its loop delay; 1 ms on an idle loop). */
  tickP99: number;
  /** CPU time per round trip, µs: the main thread's, and the process's (every thread). Other load on the machine changes them far less than it changes the rate. */
  mainCpu: number;
  processCpu: number;
}

/** The main thread's CPU time so far, ns (Linux: its schedstat; NaN elsewhere). */
function mainThreadCpuNs(): number {
  try {
    return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]);
  } catch {
    return Number.NaN;
  }
}

/** Keeps `inflight` round trips going for `seconds`, with a 1 ms timer ticking on the main thread. */
async function drive(send: (r: ConsumerRecord) => Promise<unknown>, records: ConsumerRecord[], inflight: number, seconds: number): Promise<Result> {
  // Warm-up, then the measured span.
  let n = 0;
  let i = 0;
  let stopAt = performance.now() + 300;
  const loop = async () => {
    while (performance.now() < stopAt) {
      await send(records[i++ % records.length]!);
      n++;
    }
  };
  await Promise.all(Array.from({ length: inflight }, loop));
  n = 0;
  const ticks: number[] = [];
  let last = performance.now();
  const timer = setInterval(() => {
    const t = performance.now();
    ticks.push(t - last);
    last = t;
  }, 1);
  const elu0 = performance.eventLoopUtilization();
  const main0 = mainThreadCpuNs();
  const process0 = process.cpuUsage();
  const t0 = performance.now();
  stopAt = t0 + seconds * 1000;
  await Promise.all(Array.from({ length: inflight }, loop));
  const elapsed = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(process0);
  const mainCpu = (mainThreadCpuNs() - main0) / 1000 / n;
  clearInterval(timer);
  ticks.sort((a, b) => a - b);
  return {
    rate: n / elapsed,
    elu: performance.eventLoopUtilization(elu0).utilization,
    tickP99: ticks[Math.floor(ticks.length * 0.99)] ?? Number.NaN,
    mainCpu,
    processCpu: (cpu.user + cpu.system) / n,
  };
}

async function run(
  way: Way,
  handler: Handler,
  records: ConsumerRecord[],
  o: { threads: number; inflight: number; seconds: number; atomics: 'sync' | 'async'; perWorker: number; nice: number },
): Promise<Result> {
  const filename = fileURLToPath(import.meta.url);
  if (way === 'raw') {
    const workers = Array.from({ length: o.threads }, () => new Worker(filename, { workerData: { way, handler } satisfies ProbeData }));
    const busy = workers.map(() => 0);
    const waiting = new Map<number, () => void>();
    let id = 0;
    for (const [k, w] of workers.entries()) {
      w.on('message', (m: number) => {
        busy[k]!--;
        waiting.get(m)!();
        waiting.delete(m);
      });
    }
    const send = (r: ConsumerRecord) => {
      let k = 0;
      for (let j = 1; j < workers.length; j++) if (busy[j]! < busy[k]!) k = j;
      busy[k]!++;
      const t = packedTask(r, fresh);
      const m = { id: id++, task: t };
      return new Promise<void>((resolve) => {
        waiting.set(m.id, resolve);
        workers[k]!.postMessage(m, [t.bytes!]);
      });
    };
    const result = await drive(send, records, o.inflight, o.seconds);
    await Promise.all(workers.map((w) => w.terminate()));
    return result;
  }
  if (way === 'kwire') {
    const dir = mkdtempSync(join(tmpdir(), 'kwire-handoff-'));
    const module = join(dir, 'handler.mjs');
    writeFileSync(
      module,
      handler === 'cpu1ms' ? 'export default () => { const end = performance.now() + 1; while (performance.now() < end); };\n' : 'let sink = 0;\nexport default (r) => { sink ^= r.value[0]; };\n',
    );
    const pool = await startWorkerPool({ module, threads: o.threads }, silentLogger);
    const result = await drive((r) => pool.handle(r), records, o.inflight, o.seconds);
    await pool.close(1000);
    rmSync(dir, { recursive: true, force: true });
    return result;
  }
  const frames = way === 'shared' ? new SharedArrayBuffer(SLOT * o.inflight) : undefined;
  const pool = new Piscina({
    filename,
    minThreads: o.threads,
    maxThreads: o.threads,
    atomics: o.atomics,
    concurrentTasksPerWorker: o.perWorker,
    niceIncrement: o.nice,
    workerData: { way, handler, frames } satisfies ProbeData,
  });
  const free = Array.from({ length: o.inflight }, (_, k) => k);
  const shared = frames ? new Uint8Array(frames) : undefined;
  const send =
    way === 'clone'
      ? (r: ConsumerRecord) => pool.run(cloneTask(r))
      : way === 'transfer'
        ? (r: ConsumerRecord) => {
            const t = packedTask(r, fresh);
            return pool.run(t, { transferList: [t.bytes!] });
          }
        : async (r: ConsumerRecord) => {
            const slot = free.pop()!;
            try {
              await pool.run(packedTask(r, () => [shared!, slot * SLOT, null]));
            } finally {
              free.push(slot);
            }
          };
  const result = await drive(send, records, o.inflight, o.seconds);
  await pool.destroy();
  return result;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      seconds: { type: 'string', default: '3' },
      threads: { type: 'string', default: '2' },
      inflight: { type: 'string', default: '64' },
      sizes: { type: 'string', default: '100,10000' },
      handlers: { type: 'string', default: 'noop,cpu1ms' },
      ways: { type: 'string', default: 'clone,transfer,shared,raw,kwire' },
      atomics: { type: 'string', default: 'sync' },
      'per-worker': { type: 'string', default: '1' },
      nice: { type: 'string', default: '0' },
      rounds: { type: 'string', default: '1' },
    },
  });
  const { fetchedFrom } = await import('../unit/fetched-fixture.js');
  const o = {
    threads: Number(values.threads),
    inflight: Number(values.inflight),
    seconds: Number(values.seconds),
    atomics: values.atomics as 'sync' | 'async',
    perWorker: Number(values['per-worker']),
    nice: Number(values.nice),
  };
  console.log(`node ${process.version}, piscina ${Piscina.version}, ${JSON.stringify(o)}`);
  /** Each run's figures by `size handler way`. */
  const runs = new Map<string, Result[]>();
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const size of values.sizes!.split(',').map(Number)) {
      // 1,000 records of `size`-byte values, 8-byte keys, one 16-byte header, as fetched.
      const value = Buffer.alloc(size, 0x61);
      const bytes = encodeRecordBatch(
        Array.from({ length: 1000 }, (_, k) => ({ key: `key-${String(k % 1000).padStart(4, '0')}`, value, headers: [{ key: 'trace', value: Buffer.alloc(16, 0x62) }] })),
        { baseOffset: 0 },
      );
      const { data } = fetchedFrom(bytes, { highWatermark: 1000n });
      const batch = data.next(1000)!;
      const records = batch.records as ConsumerRecord[];
      for (const handler of values.handlers!.split(',') as Handler[]) {
        for (const way of values.ways!.split(',') as Way[]) {
          const result = await run(way, handler, records, o);
          const name = `${String(size).padStart(6)} B ${handler.padEnd(6)} ${way.padEnd(8)}`;
          console.log(`${name} ${line(result)}`);
          runs.set(name, [...(runs.get(name) ?? []), result]);
        }
      }
      batch.release();
    }
  }
  if (Number(values.rounds) > 1) {
    console.log('medians:');
    for (const [name, results] of runs) {
      const median = (f: (r: Result) => number) => results.map(f).sort((a, b) => a - b)[Math.floor(results.length / 2)]!;
      const m = { rate: median((r) => r.rate), elu: median((r) => r.elu), tickP99: median((r) => r.tickP99), mainCpu: median((r) => r.mainCpu), processCpu: median((r) => r.processCpu) };
      console.log(`${name} ${line(m)}  (rates ${results.map((r) => Math.round(r.rate)).join(', ')})`);
    }
  }
}

function line(r: Result): string {
  return `${Math.round(r.rate).toString().padStart(7)} round trips/s  CPU/record main ${r.mainCpu.toFixed(1).padStart(5)} µs, all ${r.processCpu.toFixed(1).padStart(6)} µs  main ELU ${(r.elu * 100).toFixed(0).padStart(3)}%  1 ms timer p99 ${r.tickP99.toFixed(1)} ms`;
}

if (isMainThread) await main();
