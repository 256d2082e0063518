// The consumer's hot path against the other Node.js clients (issue 3): the same Fetch responses
// decoded by kwire, by kafkajs's decoder and by @platformatic/kafka's decoder, in one run, on one
// core. For 100 B and 1 KB records, uncompressed, lz4 and zstd, it prints records/s, MB/s of
// values, and heap (and native) bytes allocated per record, with the ratios kwire/kafkajs and
// kwire/platformatic. Target (issue 3): on uncompressed 100 B records, kwire at least 3x kafkajs
// and 1.5x @platformatic/kafka in records/s.
//
// What is decoded: see peers/frames.ts (Java-producer-like batches of 1,000 records in Fetch
// response frames, each client's own Fetch version, the same batch bytes for all). How each
// client is called: see peers/clients.ts (each as its client does after reading a frame off the
// socket: header, body, batches, records, and every value touched).
//
// Verification: before timing, every client decodes each case once and must return every record
// with the right partition, offset and value (count, value bytes and a sha1 over them). A client
// that decodes wrong is marked FAILED and not timed, and the run exits non-zero. A client that
// cannot decode a codec on this Node (platformatic's zstd needs node:zlib's, Node >= 22.15) is
// marked n/a, and @platformatic/kafka is skipped with a line on Node versions its engines field
// excludes (< 22.22, or 24 < 24.6).
//
// How it is measured: the script runs two child processes of the same Node, pinned to one CPU with
// taskset when it exists (GC and libuv's threadpool share that core too):
//   rate   default V8 settings (plus --expose-gc). Per case, each client is warmed up, then the
//          clients take turns (the order rotating every round) decoding the case's frame for a
//          window of --window-ms, each window starting after a full GC (so that nobody pays for
//          the previous client's garbage), over --rounds rounds; records/s is the median of a
//          client's rounds.
//   alloc  --expose-gc and a large young generation, the method of decode-records.ts: force a
//          full GC, read v8's used_heap_size, decode a few frames, read it again, and keep the
//          window only if no GC event fell inside it (else retry with fewer frames); the smallest
//          of three windows (heap noise only adds). Native: process.memoryUsage().external over the same window (memory
//          outside the JS heap that V8 is told about: new Buffers, e.g. decompression output that
//          no pool served, including native addons' external buffers, which .arrayBuffers misses);
//          the largest of the three windows (a finalizer freeing memory inside one lowers it).
//
// Run (all three clients need Node >= 22.22 or >= 24.6; see README):
//   "$(npx -y -p node@24.21.0 node -p process.execPath)" packages/bench/dist/src/micro/decode-peers.js
// Options: --clients kwire,kwire-cursor,kwire-nocrc,kafkajs,platformatic  --sizes 100,1024
//          --codecs none,lz4,zstd  --rounds 9  --window-ms 200  --no-pin  --no-alloc  --json
//          --cpu-prof-dir DIR (profile the rate child: e.g. with --clients kwire --sizes 100 --codecs none)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { getHeapStatistics } from 'node:v8';
import { buildCase, KAFKAJS_FETCH_VERSION, KWIRE_FETCH_VERSION, PLATFORMATIC_FETCH_VERSION, sameDigest, type Codec, type FetchCase } from './peers/frames.js';
import { kafkajsClient, kwireClients, packageVersion, platformaticClient, platformaticNodeOk, touched, type Client } from './peers/clients.js';

const ALL_CLIENTS = ['kwire', 'kwire-cursor', 'kwire-nocrc', 'kafkajs', 'platformatic'];

const { values: opts } = parseArgs({
  options: {
    phase: { type: 'string' },
    out: { type: 'string' },
    clients: { type: 'string', default: ALL_CLIENTS.join(',') },
    sizes: { type: 'string', default: '100,1024' },
    codecs: { type: 'string', default: 'none,lz4,zstd' },
    rounds: { type: 'string', default: '9' },
    'window-ms': { type: 'string', default: '200' },
    'no-pin': { type: 'boolean', default: false },
    'no-alloc': { type: 'boolean', default: false },
    'cpu-prof-dir': { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});

const wanted = opts.clients!.split(',').filter(Boolean);
const sizes = opts.sizes!.split(',').map(Number);
const codecs = opts.codecs!.split(',') as Codec[];
const ROUNDS = Number(opts.rounds);
const WINDOW_MS = Number(opts['window-ms']);

type Status = 'ok' | 'FAILED' | 'n/a';
interface ClientRate {
  status: Status;
  reason?: string;
  rates: number[];
  median: number;
}
interface CaseRate {
  valueSize: number;
  codec: Codec;
  recordCount: number;
  batchCount: number;
  partitions: number;
  batchBytes: number;
  frameBytes: { kwire: number; platformatic: number; kafkajs: number };
  clients: Record<string, ClientRate>;
}
interface RatePhase {
  node: string;
  labels: Record<string, string>;
  skipped: { id: string; reason: string }[];
  cases: CaseRate[];
}
interface AllocPhase {
  cases: { valueSize: number; codec: Codec; clients: Record<string, { heap: number; native: number }> }[];
}

function caseName(valueSize: number, codec: string): string {
  return `${valueSize === 1024 ? '1 KB' : `${valueSize} B`} ${codec}`;
}

function median(xs: number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** The clients asked for that load on this Node; the others as skipped lines. */
async function loadClients(): Promise<{ clients: Client[]; skipped: { id: string; reason: string }[] }> {
  const clients: Client[] = [];
  const skipped: { id: string; reason: string }[] = [];
  for (const c of kwireClients()) if (wanted.includes(c.id)) clients.push(c);
  if (wanted.includes('kafkajs')) {
    try {
      clients.push(await kafkajsClient());
    } catch (err) {
      skipped.push({ id: 'kafkajs', reason: `kafkajs did not load: ${(err as Error).message}` });
    }
  }
  if (wanted.includes('platformatic')) {
    if (!platformaticNodeOk()) {
      skipped.push({
        id: 'platformatic',
        reason: `@platformatic/kafka ${packageVersion('@platformatic/kafka')} needs Node >= 22.22 or >= 24.6 (its engines); skipped on Node ${process.versions.node}`,
      });
    } else {
      try {
        clients.push(await platformaticClient());
      } catch (err) {
        skipped.push({ id: 'platformatic', reason: `@platformatic/kafka did not load: ${(err as Error).message}` });
      }
    }
  }
  return { clients, skipped };
}

async function decodeOnce(client: Client, frame: Buffer): Promise<number> {
  return client.decode ? client.decode(frame) : client.decodeAsync!(frame);
}

/** Verifies `client` on `c`: null when it decoded every record right, else what went wrong. */
async function verify(client: Client, c: FetchCase): Promise<{ status: Status; reason?: string }> {
  const cannot = client.cannot(c.codec);
  if (cannot !== null) return { status: 'n/a', reason: cannot };
  try {
    const got = await client.collect(client.frame(c));
    if (!sameDigest(got, c.expected)) {
      return {
        status: 'FAILED',
        reason: `decoded ${got.records} records / ${got.valueBytes} value bytes / sha1 ${got.sha1.slice(0, 12)}, expected ${c.expected.records} / ${c.expected.valueBytes} / ${c.expected.sha1.slice(0, 12)}`,
      };
    }
    const n = await decodeOnce(client, client.frame(c));
    if (n !== c.recordCount) return { status: 'FAILED', reason: `the timed path decoded ${n} records, expected ${c.recordCount}` };
    return { status: 'ok' };
  } catch (err) {
    return { status: 'FAILED', reason: `threw ${(err as Error).name}: ${(err as Error).message}` };
  }
}

/**
 * Records/s of `client` decoding `frame` over about `ms` (at least two frames). The window starts
 * on a collected heap (when gc is exposed), so that no client pays for the garbage of the one
 * timed before it; a client's own collections inside its window count.
 */
async function rateWindow(client: Client, frame: Buffer, ms: number): Promise<number> {
  (globalThis as unknown as { gc?: () => void }).gc?.();
  let records = 0;
  let frames = 0;
  const started = process.hrtime.bigint();
  let elapsed = 0;
  if (client.decode) {
    const decode = client.decode;
    do {
      records += decode(frame);
      frames++;
      elapsed = Number(process.hrtime.bigint() - started) / 1e6;
    } while (elapsed < ms || frames < 2);
  } else {
    const decode = client.decodeAsync!;
    do {
      records += await decode(frame);
      frames++;
      elapsed = Number(process.hrtime.bigint() - started) / 1e6;
    } while (elapsed < ms || frames < 2);
  }
  return (records / elapsed) * 1e3;
}

async function ratePhase(): Promise<RatePhase> {
  const { clients, skipped } = await loadClients();
  for (const s of skipped) console.log(`  skipped: ${s.reason}`);
  const out: RatePhase = { node: process.versions.node, labels: Object.fromEntries(clients.map((c) => [c.id, c.label])), skipped, cases: [] };
  for (const valueSize of sizes) {
    for (const codec of codecs) {
      const c = buildCase(valueSize, codec);
      const rate: CaseRate = {
        valueSize,
        codec,
        recordCount: c.recordCount,
        batchCount: c.batchCount,
        partitions: c.partitions.length,
        batchBytes: c.batchBytes,
        frameBytes: { kwire: c.frames.kwire.length, platformatic: c.frames.platformatic.length, kafkajs: c.frames.kafkajs.length },
        clients: {},
      };
      const timed: Client[] = [];
      for (const client of clients) {
        const v = await verify(client, c);
        rate.clients[client.id] = { ...v, rates: [], median: Number.NaN };
        if (v.status === 'ok') timed.push(client);
        else console.log(`  ${caseName(valueSize, codec).padEnd(10)} ${client.label}: ${v.status}: ${v.reason}`);
      }
      for (const client of timed) await rateWindow(client, client.frame(c), WINDOW_MS);
      for (let round = 0; round < ROUNDS; round++) {
        for (let k = 0; k < timed.length; k++) {
          const client = timed[(k + round) % timed.length]!;
          rate.clients[client.id]!.rates.push(await rateWindow(client, client.frame(c), WINDOW_MS));
        }
      }
      for (const client of timed) {
        const r = rate.clients[client.id]!;
        r.median = median(r.rates);
      }
      console.log(`  ${caseName(valueSize, codec).padEnd(10)} verified and timed: ${timed.map((t) => `${t.id} ${Math.round(rate.clients[t.id]!.median).toLocaleString('en-US')}/s`).join(', ')}`);
      out.cases.push(rate);
    }
  }
  if (touched() === 42) console.log('');
  return out;
}

async function allocPhase(): Promise<AllocPhase> {
  const gc = (globalThis as unknown as { gc?: () => void }).gc;
  if (typeof gc !== 'function') throw new Error('the alloc phase needs --expose-gc');
  const { clients } = await loadClients();
  let gcEvents: number[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcEvents.push(e.startTime);
  });
  observer.observe({ entryTypes: ['gc'] });
  const out: AllocPhase = { cases: [] };
  for (const valueSize of sizes) {
    for (const codec of codecs) {
      const c = buildCase(valueSize, codec);
      const row: AllocPhase['cases'][number] = { valueSize, codec, clients: {} };
      for (const client of clients) {
        if ((await verify(client, c)).status !== 'ok') continue;
        const frame = client.frame(c);
        await rateWindow(client, frame, 150);
        // Heap noise only adds (code and feedback for late-optimised functions): keep the smallest.
        // External noise can also subtract (a native buffer whose finalizer ran in the window): keep
        // the largest.
        let heapMin = Number.POSITIVE_INFINITY;
        let nativeMax = Number.NEGATIVE_INFINITY;
        for (let attempt = 0; attempt < 3; attempt++) {
          for (let frames = 8; frames >= 1; frames >>= 1) {
            gc();
            await new Promise((r) => setImmediate(r));
            gc();
            await new Promise((r) => setImmediate(r));
            gcEvents = [];
            const t0 = performance.now();
            const heap0 = getHeapStatistics().used_heap_size;
            const native0 = process.memoryUsage().external;
            let records = 0;
            for (let i = 0; i < frames; i++) records += await decodeOnce(client, frame);
            const heap1 = getHeapStatistics().used_heap_size;
            const native1 = process.memoryUsage().external;
            const t1 = performance.now();
            await new Promise((r) => setTimeout(r, 10));
            if (gcEvents.some((t) => t >= t0 && t <= t1)) continue;
            heapMin = Math.min(heapMin, (heap1 - heap0) / records);
            nativeMax = Math.max(nativeMax, (native1 - native0) / records);
            break;
          }
        }
        row.clients[client.id] = Number.isFinite(heapMin) ? { heap: heapMin, native: nativeMax } : { heap: Number.NaN, native: Number.NaN };
      }
      console.log(`  ${caseName(valueSize, codec).padEnd(10)} allocation measured`);
      out.cases.push(row);
    }
  }
  observer.disconnect();
  return out;
}

/* ------------------------------------------------------------------------------- the parent run */

function child(phase: 'rate' | 'alloc', cpu: number | null): { ok: boolean; result: unknown } {
  const dir = mkdtempSync(join(tmpdir(), 'decode-peers-'));
  const outFile = join(dir, `${phase}.json`);
  const nodeFlags = phase === 'alloc' ? ['--expose-gc', '--min-semi-space-size=128', '--max-semi-space-size=256'] : ['--expose-gc'];
  if (phase === 'rate' && opts['cpu-prof-dir']) nodeFlags.push('--cpu-prof', `--cpu-prof-dir=${opts['cpu-prof-dir']}`);
  const args = [...nodeFlags, process.argv[1]!, '--phase', phase, '--out', outFile, '--clients', opts.clients!, '--sizes', opts.sizes!, '--codecs', opts.codecs!];
  args.push('--rounds', opts.rounds!, '--window-ms', opts['window-ms']!);
  const [cmd, argv] = cpu === null ? [process.execPath, args] : ['taskset', ['-c', String(cpu), process.execPath, ...args]];
  const r = spawnSync(cmd, argv, { stdio: 'inherit' });
  let result: unknown = null;
  try {
    result = JSON.parse(readFileSync(outFile, 'utf8'));
  } catch {
    // no result: the child failed
  }
  rmSync(dir, { recursive: true, force: true });
  return { ok: r.status === 0 && result !== null, result };
}

function fmtInt(n: number): string {
  return Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '-';
}
function fmt(n: number, digits: number): string {
  return Number.isFinite(n) ? n.toFixed(digits) : '-';
}
function ratio(a: number | undefined, b: number | undefined): string {
  return a !== undefined && b !== undefined && Number.isFinite(a) && Number.isFinite(b) && b > 0 ? `${(a / b).toFixed(2)}x` : '-';
}

/** (max - min) / median of the rounds, in percent. */
function spread(rates: number[]): string {
  if (rates.length < 2) return '-';
  return `${(((Math.max(...rates) - Math.min(...rates)) / median(rates)) * 100).toFixed(0)}%`;
}

function hasTaskset(): boolean {
  return spawnSync('taskset', ['-c', '0', 'true']).status === 0;
}

async function parent(): Promise<number> {
  const cpu = !opts['no-pin'] && hasTaskset() ? availableParallelism() - 1 : null;
  console.log(
    `decode-peers: node ${process.versions.node} (${process.execPath}), ${cpu === null ? 'not pinned' : `pinned to CPU ${cpu} with taskset`}; ` +
      `${ROUNDS} rounds of ${WINDOW_MS} ms per client and case, medians`,
  );
  console.log(`Fetch frames: kwire v${KWIRE_FETCH_VERSION}, @platformatic/kafka v${PLATFORMATIC_FETCH_VERSION}, kafkajs v${KAFKAJS_FETCH_VERSION}, the same record batches in each`);
  console.log('rate phase (default V8 settings, a full GC before each window):');
  const rate = child('rate', cpu);
  if (!rate.ok) {
    console.error('decode-peers: the rate phase failed');
    return 1;
  }
  const r = rate.result as RatePhase;
  let alloc: AllocPhase | null = null;
  if (!opts['no-alloc']) {
    console.log('alloc phase (--expose-gc, 128-256 MiB semi-spaces, GC-free windows):');
    const a = child('alloc', cpu);
    if (!a.ok) console.error('decode-peers: the alloc phase failed; allocation columns left empty');
    else alloc = a.result as AllocPhase;
  }

  console.log('');
  console.log(`node ${r.node}; records of random A-Z values, null keys, no headers, batches of 1,000 records`);
  console.log('records/s: median of the rounds; spread: (max - min) / median over the rounds; MB/s: value bytes; B/rec: allocated per record');
  for (const s of r.skipped) console.log(`skipped: ${s.reason}`);
  const head = `${'case'.padEnd(10)} ${'client'.padEnd(24)} ${'records/s'.padStart(12)} ${'spread'.padStart(7)} ${'MB/s'.padStart(7)} ${'heap B/rec'.padStart(11)} ${'native B/rec'.padStart(13)} ${'vs kafkajs'.padStart(11)} ${'vs platf.'.padStart(10)}`;
  let failed = false;
  for (const c of r.cases) {
    console.log('');
    console.log(
      `${caseName(c.valueSize, c.codec)}: ${c.partitions} partitions x ${c.batchCount / c.partitions} batches = ${c.recordCount.toLocaleString('en-US')} records, ` +
        `${(c.batchBytes / 1e6).toFixed(2)} MB of batches per frame`,
    );
    console.log(head);
    const allocRow = alloc?.cases.find((a) => a.valueSize === c.valueSize && a.codec === c.codec);
    const kafkajs = c.clients.kafkajs?.median;
    const platformatic = c.clients.platformatic?.median;
    for (const [id, cr] of Object.entries(c.clients)) {
      const label = r.labels[id] ?? id;
      if (cr.status !== 'ok') {
        if (cr.status === 'FAILED') failed = true;
        console.log(`${caseName(c.valueSize, c.codec).padEnd(10)} ${label.padEnd(24)} ${cr.status}: ${cr.reason}`);
        continue;
      }
      const a = allocRow?.clients[id];
      const isKwire = id.startsWith('kwire');
      console.log(
        `${caseName(c.valueSize, c.codec).padEnd(10)} ${label.padEnd(24)} ${fmtInt(cr.median).padStart(12)} ${spread(cr.rates).padStart(7)} ${fmtInt((cr.median * c.valueSize) / 1e6).padStart(7)} ` +
          `${fmt(a?.heap ?? Number.NaN, 1).padStart(11)} ${fmt(a?.native ?? Number.NaN, 1).padStart(13)} ` +
          `${(isKwire ? ratio(cr.median, kafkajs) : '').padStart(11)} ${(isKwire ? ratio(cr.median, platformatic) : '').padStart(10)}`,
      );
    }
  }
  const target = r.cases.find((c) => c.valueSize === 100 && c.codec === 'none');
  if (target?.clients.kwire?.status === 'ok') {
    const k = target.clients.kwire.median;
    const parts: string[] = [];
    const j = target.clients.kafkajs;
    const p = target.clients.platformatic;
    if (j?.status === 'ok') parts.push(`kwire/kafkajs ${ratio(k, j.median)} (target 3x: ${k / j.median >= 3 ? 'met' : 'MISSED'})`);
    if (p?.status === 'ok') parts.push(`kwire/platformatic ${ratio(k, p.median)} (target 1.5x: ${k / p.median >= 1.5 ? 'met' : 'MISSED'})`);
    if (parts.length) {
      console.log('');
      console.log(`issue 3 target, 100 B none, kwire records(): ${parts.join('; ')}`);
    }
  }
  if (opts.json) console.log(JSON.stringify({ rate: r, alloc }));
  if (failed) {
    console.error('decode-peers: a client failed verification (see FAILED above)');
    return 1;
  }
  return 0;
}

if (opts.phase === 'rate' || opts.phase === 'alloc') {
  const result = opts.phase === 'rate' ? await ratePhase() : await allocPhase();
  writeFileSync(opts.out!, JSON.stringify(result));
} else {
  process.exitCode = await parent();
}
