// The handler-bound family's settings and the pieces its worker module needs too (no imports, so
// that a worker thread loads nothing else): how a row drives its client, the record layout
// "key-NNNN|seq|..." and the CPU burn.
import type { ClientOptions } from './common.js';

/** How a handler-bound row drives its client (ClientOptions.settings). */
export interface HandlerSettings {
  /** 'sleep': the handler awaits workMs (I/O-bound); 'burn': it spins workMs of CPU. */
  work: 'sleep' | 'burn';
  workMs: number;
  /** Distinct keys in the topic. */
  keys: number;
  /** Stop this long after the first handler started, short of the records if need be. */
  timeLimitMs: number;
  /** kwire: run()'s options. */
  maxConcurrency?: number;
  ordering?: 'key' | 'partition' | 'unordered';
  workerThreads?: number;
  /** kafkajs: run()'s partitionsConsumedConcurrently. */
  partitionsConsumedConcurrently?: number;
  /** @platformatic/kafka: hwp forEach's concurrency. */
  concurrency?: number;
}

export function handlerSettings(options: ClientOptions): HandlerSettings {
  const s = options.settings as Partial<HandlerSettings> | undefined;
  return { work: s?.work ?? 'sleep', workMs: s?.workMs ?? 5, keys: s?.keys ?? 2000, timeLimitMs: s?.timeLimitMs ?? 30_000, ...s };
}

/** The BroadcastChannel a worker thread reports its handled records on. */
export const HANDLER_CHANNEL = 'kwire-bench-handler';
/** Per record on that channel: partition, offset, key number, seq, CreateTime, start, end (epoch ms). */
export const WORKER_FIELDS = 7;

const SEP = 0x7c; // '|'

/** Reads "key-NNNN|seq|": the key's number and seq, or -1 for the key when the bytes are not that. */
export function parseKeySeq(value: Uint8Array | null): [key: number, seq: number] {
  if (value === null || value.length < 10 || value[8] !== SEP) return [-1, 0];
  let k = 0;
  for (let i = 4; i < 8; i++) k = k * 10 + value[i]! - 48;
  let s = 0;
  for (let i = 9; i < value.length && value[i] !== SEP; i++) s = s * 10 + value[i]! - 48;
  return [k, s];
}

/** The record's key is the one its value names ("key-NNNN", its first 8 bytes). */
export function keyMatches(key: Uint8Array | null, value: Uint8Array | null): boolean {
  if (key === null || value === null || key.length !== 8 || value.length < 8) return false;
  for (let i = 0; i < 8; i++) if (key[i] !== value[i]) return false;
  return true;
}

/** Spins on the clock for `ms` milliseconds: a CPU-bound handler's work. */
export function burn(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy: the point is to hold the CPU
  }
}
