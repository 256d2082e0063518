// run({ worker }): the handler on worker threads, the main thread's side. Fetching, heartbeats,
// ordering and commits stay on the main thread; a worker gets one record's bytes and says when its
// handler is done. The pool is piscina's (restarts a crashed thread, queues, terminates).
//
// How a record crosses: its bytes are copied once, synchronously inside handle(), into one fresh
// ArrayBuffer that is moved (transferList, no second copy) to the worker. The record's own memory
// is pooled and reused once its batch is released, which may be as soon as handle()'s caller moves
// on, so nothing may point into it. Measured (test/probes/worker-handoff.ts; 2 shared cores, Node
// 20.20, piscina 5.3.2, 2 threads, 64 in flight, medians of 3 interleaved rounds): CPU per round
// trip with a no-op handler, all threads, at 100 B / 10 KB values: structured clone of copies
// 30.6 / 36.3 us, this transfer 28.8 / 29.9 us, a SharedArrayBuffer frame pool 25.5 / 29.7 us; a
// hand-written pool (no piscina) 7.0 / 10.6 us. With a 1 ms CPU handler every way ran within noise
// of the others: 1,750-1,900 records/s in the calmer runs, of 2 threads x 1,000/s at most on 2
// cores that the main thread shares (it spends ~40 us of CPU a record here, ~27 us with the
// hand-written pool). The frame pool saves ~10% of a no-op hand-off at the price of a slot lifetime
// rule in the worker and a size cap, and nothing a CPU-bound handler notices; piscina's own
// per-task cost (~20 us) is the larger part, and ~2% of a 1 ms handler.
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Piscina } from 'piscina';
import { RecordView, type RecordBatch } from '@kwire/protocol';
import { ClosedError, UsageError } from '../errors.js';
import { defaultLogger, type Logger } from '../logger.js';
import type { ConsumerRecord } from '../records/index.js';

/** run({ worker }): where the handler is, and how many threads run it. */
export interface WorkerOptions {
  /** A module (path or file: URL) whose default export (or export named `eachMessage`) is called per record. */
  module: string | URL;
  /** Worker threads (default: os.availableParallelism() - 1, at least 1). */
  threads?: number;
}

/** What the worker's handler receives: plain data, no ConsumerRecord (it does not cross threads). */
export interface WorkerRecord {
  topic: string;
  partition: number;
  offset: bigint;
  /** Milliseconds since the epoch (create time, or log-append time when the topic says so). */
  timestamp: number;
  /** Key, value and header values are Buffers over one ArrayBuffer that this record owns (kept as long as the handler likes). */
  key: Uint8Array | null;
  /** The value's bytes (null for a tombstone). */
  value: Uint8Array | null;
  /** The headers, in order, as [name, value] pairs. */
  headers: [string, Uint8Array | null][];
}

/** The function a worker module exports (default, or as `eachMessage`). */
export type WorkerHandler = (record: WorkerRecord) => void | Promise<void>;

export interface WorkerPool {
  /** Runs the handler on a worker for this record; resolves when it resolves there; rejects with the worker's error (an Error with its name, message and stack; a non-Error thrown is wrapped). */
  handle(record: ConsumerRecord): Promise<void>;
  /** Stops the threads: waits up to timeoutMs for tasks under way, then terminates. */
  close(timeoutMs: number): Promise<void>;
  readonly threads: number;
}

/**
 * One record as it crosses to a worker: its key, value and header values laid end to end in
 * `bytes` (moved, not copied), with their lengths (-1 for null).
 * @internal Between worker-pool.ts and worker-entry.ts only.
 */
export interface RecordTask {
  topic: string;
  partition: number;
  offset: bigint;
  timestamp: number;
  bytes: ArrayBuffer;
  keyLength: number;
  valueLength: number;
  headerKeys: string[];
  headerLengths: number[];
}

/** @internal The task each thread runs first: load the user's module and find its handler. */
export interface LoadTask {
  load: true;
}

/**
 * @internal What a task answers: nothing when the handler resolved; the error's parts when it
 * threw or rejected (piscina's own structured clone of an Error keeps the name of the built-in
 * ones only, so the worker sends the parts and the pool makes the Error again); a problem with
 * the module for a LoadTask.
 */
export type TaskOutcome = undefined | { error: { name: string; message: string; stack?: string; code?: string | number } } | { problem: string };

/** @internal What every thread gets as workerData. */
export interface WorkerEntryData {
  /** The user's module as a file: URL. */
  module: string;
}

/** Starts the pool; rejects with a UsageError (src/errors.ts) when the module cannot be loaded or has no handler function. */
export async function startWorkerPool(options: WorkerOptions, log: Logger = defaultLogger): Promise<WorkerPool> {
  const href = moduleHref(options.module);
  const threads = options.threads ?? Math.max(1, availableParallelism() - 1);
  if (!Number.isInteger(threads) || threads < 1) throw new UsageError(`worker.threads must be a whole number of at least 1, got ${String(threads)}`);

  // Loaded here, not with the package: only run({ worker }) needs it.
  const { Piscina } = await import('piscina');
  const pool = new Piscina<RecordTask | LoadTask, TaskOutcome>({
    filename: fileURLToPath(new URL('./worker-entry.js', import.meta.url)),
    minThreads: threads,
    maxThreads: threads,
    // One task at a time per thread: a slow record holds one thread, never records queued behind
    // it on the same thread while another thread is free.
    concurrentTasksPerWorker: 1,
    // Between tasks a thread waits with Atomics.waitAsync, not Atomics.wait, so that the user's
    // module can keep timers and sockets of its own (a connection pool's keep-alive) running.
    atomics: 'async',
    workerData: { module: href } satisfies WorkerEntryData,
  });
  // A thread that fails with no task of ours on it (an exception from a stray timer of the user's
  // module): piscina replaces the thread and emits 'error', which would end the process unheard.
  pool.on('error', (err: unknown) => log.error('a worker thread failed outside a record; piscina replaces it', { module: href, error: String(err) }));

  // Every thread loads the module before the first record: a module that does not load is the
  // caller's mistake, said at start (not at the first record), and the first record does not wait
  // for an import.
  let outcomes: TaskOutcome[];
  try {
    outcomes = await Promise.all(Array.from({ length: threads }, () => pool.run({ load: true })));
  } catch (err) {
    await pool.destroy();
    throw new UsageError(`worker module ${href}: its worker thread failed while loading it: ${describe(err)}`);
  }
  const problem = outcomes.find((o) => o !== undefined && 'problem' in o) as { problem: string } | undefined;
  if (problem) {
    await pool.destroy();
    throw new UsageError(`worker module ${href} ${problem.problem}`);
  }
  return new PiscinaWorkerPool(pool, threads);
}

/** The user's module as a file: URL: a file: URL (string or URL) as given, a path resolved against the working directory. */
function moduleHref(module: string | URL): string {
  let url: URL;
  if (module instanceof URL) url = module;
  else if (typeof module === 'string' && module.startsWith('file:')) url = new URL(module);
  else if (typeof module === 'string' && module !== '') url = pathToFileURL(resolve(module));
  else throw new UsageError(`worker.module must be a path or a file: URL, got ${typeof module === 'string' ? 'an empty string' : typeof module}`);
  if (url.protocol !== 'file:') throw new UsageError(`worker.module must be a path or a file: URL, got ${url.href}`);
  // Said here, before threads start, in the words a user recognizes.
  if (!existsSync(fileURLToPath(url))) throw new UsageError(`worker module ${url.href} does not exist (worker.module is a path, relative to the working directory ${process.cwd()}, or a file: URL)`);
  return url.href;
}

function describe(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

/** Reads records' raw parts from their batch's bytes: one view, reused (synchronous use only). */
let place: RecordView | undefined;

/** The record's bytes copied into one fresh ArrayBuffer, with its other fields: taken synchronously, while the record is valid. */
function taskOf(record: ConsumerRecord): RecordTask {
  const batch: RecordBatch = record.wireBatch;
  const p = (place ??= new RecordView(batch));
  batch.readRecordAt(record.position, p);
  const data = p.data;
  const n = p.headerCount;
  // Header values, as views for their lengths; the key and value are read by place from `data`.
  const headers = n === 0 ? [] : p.headers;
  let size = Math.max(p.keyLength, 0) + Math.max(p.valueLength, 0);
  for (const h of headers) size += h.value?.length ?? 0;
  const bytes = new ArrayBuffer(size);
  const into = new Uint8Array(bytes);
  let at = 0;
  if (p.keyLength > 0) {
    into.set(data.subarray(p.keyOffset, p.keyOffset + p.keyLength), at);
    at += p.keyLength;
  }
  if (p.valueLength > 0) {
    into.set(data.subarray(p.valueOffset, p.valueOffset + p.valueLength), at);
    at += p.valueLength;
  }
  const headerKeys = new Array<string>(n);
  const headerLengths = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    const h = headers[i]!;
    headerKeys[i] = h.key;
    if (h.value === null) headerLengths[i] = -1;
    else {
      into.set(h.value, at);
      at += h.value.length;
      headerLengths[i] = h.value.length;
    }
  }
  return {
    topic: record.topic,
    partition: record.partition,
    offset: record.offset,
    timestamp: record.timestamp,
    bytes,
    keyLength: p.keyLength,
    valueLength: p.valueLength,
    headerKeys,
    headerLengths,
  };
}

/** The Error a worker's handler failed with, made again on this thread. */
function errorFrom(parts: { name: string; message: string; stack?: string; code?: string | number }): Error {
  const err = new Error(parts.message);
  err.name = parts.name;
  if (parts.stack !== undefined) err.stack = parts.stack;
  if (parts.code !== undefined) (err as Error & { code?: string | number }).code = parts.code;
  return err;
}

class PiscinaWorkerPool implements WorkerPool {
  /** Tasks under way (what close() waits for). */
  private readonly running = new Set<Promise<unknown>>();
  private closing: Promise<void> | null = null;
  /** close() ran out of its time (ms) and terminates the threads: tasks still running fail for that reason. */
  private terminatedAfter: number | null = null;

  constructor(
    private readonly pool: Piscina<RecordTask | LoadTask, TaskOutcome>,
    readonly threads: number,
  ) {}

  handle(record: ConsumerRecord): Promise<void> {
    if (this.closing) return Promise.reject(new ClosedError('the worker pool'));
    let task: RecordTask;
    try {
      task = taskOf(record);
    } catch (err) {
      // A released record, a timestamp out of range: the caller's promise says so, never a throw.
      return Promise.reject(err);
    }
    const settled = this.pool.run(task, { transferList: [task.bytes] });
    this.running.add(settled);
    return settled.then(
      (outcome) => {
        this.running.delete(settled);
        if (outcome !== undefined && 'error' in outcome) throw errorFrom(outcome.error);
      },
      (err: unknown) => {
        this.running.delete(settled);
        // piscina says "Terminating worker thread"; say why instead.
        if (this.terminatedAfter !== null) throw new ClosedError(`the worker pool, which terminated this handler's thread after close() waited ${this.terminatedAfter} ms,`);
        throw err;
      },
    );
  }

  close(timeoutMs: number): Promise<void> {
    this.closing ??= (async () => {
      if (this.running.size > 0) {
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<void>((done) => {
          timer = setTimeout(done, Math.max(0, timeoutMs));
        });
        await Promise.race([Promise.allSettled(this.running), timeout]);
        clearTimeout(timer);
      }
      if (this.running.size > 0) this.terminatedAfter = timeoutMs;
      await this.pool.destroy();
    })();
    return this.closing;
  }
}
