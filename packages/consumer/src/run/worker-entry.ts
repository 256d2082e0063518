// run({ worker }): a worker thread's side. piscina loads this module in each thread and calls its
// default export per task; it loads the user's module (workerData.module) once and calls its
// handler with the record as plain data. It imports nothing of the consumer: a thread should not
// load the client it serves.
import { inspect, types } from 'node:util';
import { workerData } from 'node:worker_threads';
import type { LoadTask, RecordTask, TaskOutcome, WorkerEntryData, WorkerHandler, WorkerRecord } from './worker-pool.js';

const { module: href } = workerData as WorkerEntryData;

/** The user's handler, or what is wrong with the module; loaded once per thread. */
let loaded: Promise<WorkerHandler | { problem: string }> | undefined;

function load(): Promise<WorkerHandler | { problem: string }> {
  loaded ??= import(href).then(handlerOf, (err: unknown) => ({ problem: `could not be loaded: ${describe(err)}` }));
  return loaded;
}

/** The default export if it is a function, else an export named eachMessage (also on a CommonJS module's exports object). */
function handlerOf(mod: Record<string, unknown>): WorkerHandler | { problem: string } {
  const fallback = mod.default as Record<string, unknown> | undefined;
  for (const candidate of [mod.default, mod.eachMessage, typeof fallback === 'object' && fallback !== null ? fallback.eachMessage : undefined]) {
    if (typeof candidate === 'function') return candidate as WorkerHandler;
  }
  const found = Object.keys(mod).map((name) => `${name} (${kindOf(mod[name])})`);
  return {
    problem: `has no handler function: export one as default, or as eachMessage; it exports ${found.length ? found.join(', ') : 'nothing'}`,
  };
}

function kindOf(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
}

function describe(err: unknown): string {
  return isError(err) ? `${err.name}: ${err.message}` : inspect(err);
}

/** An Error, also one made in another realm (a vm context of the user's module). */
function isError(value: unknown): value is Error {
  return value instanceof Error || types.isNativeError(value);
}

/** The record's parts as views over its one ArrayBuffer (moved here; nobody else holds it). */
function recordOf(task: RecordTask): WorkerRecord {
  let at = 0;
  const part = (length: number): Buffer | null => {
    if (length < 0) return null;
    const view = Buffer.from(task.bytes, at, length);
    at += length;
    return view;
  };
  const key = part(task.keyLength);
  const value = part(task.valueLength);
  const headers: [string, Buffer | null][] = new Array(task.headerKeys.length);
  for (let i = 0; i < headers.length; i++) headers[i] = [task.headerKeys[i]!, part(task.headerLengths[i]!)];
  return { topic: task.topic, partition: task.partition, offset: task.offset, timestamp: task.timestamp, key, value, headers };
}

/** One task: load the module (LoadTask), or run the handler for one record. Never throws: an error crosses as its parts. */
export default async function runTask(task: RecordTask | LoadTask): Promise<TaskOutcome> {
  const handler = await load();
  if ('load' in task) return typeof handler === 'function' ? undefined : handler;
  // The pool starts only when every thread loaded the module; this is for a thread piscina
  // started again later (after one crashed) whose load failed this time.
  if (typeof handler !== 'function') return { error: { name: 'UsageError', message: `worker module ${href} ${handler.problem}` } };
  try {
    await handler(recordOf(task));
    return undefined;
  } catch (err) {
    if (isError(err)) {
      const code = (err as Error & { code?: unknown }).code;
      return {
        error: {
          name: err.name,
          message: err.message,
          ...(err.stack === undefined ? {} : { stack: err.stack }),
          ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}),
        },
      };
    }
    return { error: { name: 'Error', message: `the worker handler threw a non-Error: ${inspect(err)}` } };
  }
}
