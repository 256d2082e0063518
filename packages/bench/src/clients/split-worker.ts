// The worker thread of the split-worker experiment (clients/split.ts): the transport (BrokerPool,
// sockets, frames, Fetch decoding, the offsets) on this thread; each answer's records go to the
// main thread in an ArrayBuffer it transfers (no copy across threads), and come back the same way
// once decoded, to be filled again.
//
// The copy into the transferred buffer is this thread's: kwire's frames are pooled slabs that
// cannot be transferred. A consumer built this way would read the socket straight into buffers it
// can transfer; the copy is work this experiment does that such a consumer would not, on the
// thread that is not the bottleneck.
//
// Messages to the main thread: { ev: 'ready' }, { ev: 'answer', buffer, parts: [partition, start,
// length, ...] } (buffer transferred), { ev: 'end', records }, { ev: 'error', message }. From it:
// { ev: 'return', buffer } (transferred back), { ev: 'stop' }.
import { parentPort, workerData } from 'node:worker_threads';
import { BrokerPool } from '@kwire/consumer/internals';
import { readRecordBatches } from '@kwire/protocol';
import { connectLeaders } from './ceiling.js';
import { fetchToEnd } from './split-fetch.js';

export interface SplitWorkerData {
  bootstrap: string;
  topic: string;
  /** Check each batch's CRC-32C here (the main thread then decodes with checkCrc: false). */
  checkCrc: boolean;
  /** Answers at most on the main thread (decoded or waiting): the bound on buffered bytes. */
  maxOutstanding: number;
}

const port = parentPort!;
const data = workerData as SplitWorkerData;
/** Buffers the main thread gave back, to be filled again. */
const free: ArrayBuffer[] = [];
let outstanding = 0;
let waiters: (() => void)[] = [];
let stopped = false;

port.on('message', (m: { ev: string; buffer?: ArrayBuffer }) => {
  if (m.ev === 'return') {
    free.push(m.buffer!);
    outstanding--;
  } else if (m.ev === 'stop') stopped = true;
  const w = waiters;
  waiters = [];
  for (const wake of w) wake();
});

/** A free buffer of at least `bytes`, or a new one (not zero-filled: every byte handed on is written first). */
function take(bytes: number): ArrayBuffer {
  for (let i = 0; i < free.length; i++) {
    if (free[i]!.byteLength >= bytes) return free.splice(i, 1)[0]!;
  }
  return Buffer.allocUnsafeSlow(Math.max(bytes, 1_048_576)).buffer as ArrayBuffer;
}

const pool = new BrokerPool({ bootstrapServers: data.bootstrap, clientId: 'kwire-split' });
try {
  const { topicId, leaders } = await connectLeaders(pool, data.topic);
  port.postMessage({ ev: 'ready' });
  const counts = await Promise.all(
    leaders.map(({ connection, partitions }) =>
      fetchToEnd(connection, data.topic, topicId, partitions, async (parts, lease) => {
        let buffer: ArrayBuffer;
        const where: number[] = [];
        try {
          if (data.checkCrc) {
            // next() checks each batch's CRC (and throws on a mismatch); nothing is decompressed.
            for (const p of parts) {
              const reader = readRecordBatches(p.records, { checkCrc: true });
              for (let b = reader.next(); b !== null; b = reader.next()) b.release();
            }
          }
          let bytes = 0;
          for (const p of parts) bytes += p.records.length;
          buffer = take(bytes);
          const into = Buffer.from(buffer);
          let at = 0;
          for (const p of parts) {
            into.set(p.records, at);
            where.push(p.partition, at, p.records.length);
            at += p.records.length;
          }
        } finally {
          lease.release();
        }
        outstanding++;
        port.postMessage({ ev: 'answer', buffer, parts: where }, [buffer]);
        while (outstanding >= data.maxOutstanding && !stopped) await new Promise<void>((resolve) => waiters.push(resolve));
        if (stopped) throw new Error('stopped');
      }),
    ),
  );
  port.postMessage({ ev: 'end', records: counts.reduce((a, b) => a + b, 0) });
} catch (err) {
  if (!stopped) port.postMessage({ ev: 'error', message: (err as Error).message });
} finally {
  await pool.close();
  port.close();
}
