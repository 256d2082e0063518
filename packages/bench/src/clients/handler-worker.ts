// The CPU-bound handler on kwire's worker threads (run({ worker: { module, threads } })): burns
// 1 ms of CPU per record, then tells the main thread what it handled and when, over a
// BroadcastChannel, in small batches (one message per record would cost the main thread more
// than the records do). The main thread (handler-kwire.ts) checks order and counts from these.
import { BroadcastChannel } from 'node:worker_threads';
import { burn, HANDLER_CHANNEL, keyMatches, parseKeySeq, WORKER_FIELDS } from './handler-settings.js';

interface WorkerRecord {
  partition: number;
  offset: bigint;
  timestamp: number;
  key: Uint8Array | null;
  value: Uint8Array | null;
}

const BURN_MS = 1;
const BATCH = 32;
const FLUSH_MS = 10;
const channel = new BroadcastChannel(HANDLER_CHANNEL);
// Let the thread end when the pool terminates it without waiting for the channel.
channel.unref();
let pending = new Float64Array(BATCH * WORKER_FIELDS);
let n = 0;
let timer: NodeJS.Timeout | undefined;

function flush(): void {
  if (timer) clearTimeout(timer);
  timer = undefined;
  if (n === 0) return;
  channel.postMessage(pending.subarray(0, n * WORKER_FIELDS));
  pending = new Float64Array(BATCH * WORKER_FIELDS);
  n = 0;
}

export default function eachMessage(record: WorkerRecord): void {
  const start = performance.timeOrigin + performance.now();
  burn(BURN_MS);
  const end = performance.timeOrigin + performance.now();
  const [k, seq] = parseKeySeq(record.value);
  const o = n * WORKER_FIELDS;
  pending[o] = record.partition;
  pending[o + 1] = Number(record.offset);
  pending[o + 2] = keyMatches(record.key, record.value) ? k : -1;
  pending[o + 3] = seq;
  pending[o + 4] = record.timestamp;
  pending[o + 5] = start;
  pending[o + 6] = end;
  if (++n === BATCH) flush();
  else timer ??= setTimeout(flush, FLUSH_MS);
}
