// The worker-thread experiment (issue 16: "worker threads only if a measurement on these two cores
// shows a gain"). The same work three ways, as opt-in variants (--clients):
//   split-main        the Fetch loop (split-fetch.ts) and the decode on the main thread;
//   split-worker      the Fetch loop on a worker thread (split-worker.ts), each answer's records
//                     transferred to the main thread, decoded there (CRC checked there);
//   split-worker-crc  the same, with the CRCs checked on the worker.
// The decode is the zero-allocation path's (RecordBatch.cursor(), every value digested by position,
// as kwire-cursor's loop), so the figures compare where the transport runs, nothing else. Order per
// partition is kept: answers arrive and are decoded in the order they were fetched. At most two
// answers are on the main thread at a time (the worker waits for a buffer to come back).
//
// CPU is the whole process's (process.cpuUsage counts every thread), so records per CPU-second
// include the worker's work.
import { Worker } from 'node:worker_threads';
import { BrokerPool } from '@kwire/consumer/internals';
import { readRecordBatches, type RecordCursor } from '@kwire/protocol';
import { connectLeaders } from './ceiling.js';
import { Run, type ClientOptions, type ClientReport } from './common.js';
import { fetchToEnd } from './split-fetch.js';
import type { SplitWorkerData } from './split-worker.js';

export async function splitClient(options: ClientOptions): Promise<ClientReport> {
  const onWorker = options.config?.worker === true;
  const crcOnWorker = onWorker && options.config?.workerCrc === true;
  const run = new Run(onWorker ? (crcOnWorker ? 'split-worker-crc' : 'split-worker') : 'split-main', options);
  const digest = run.digest;
  let cursor: RecordCursor | undefined;
  /** Every record of `records` (whole batches) into the digest; returns how many. */
  const decode = (records: Buffer, checkCrc: boolean): number => {
    let n = 0;
    const reader = readRecordBatches(records, { checkCrc });
    for (let b = reader.next(); b !== null; b = reader.next()) {
      cursor = b.cursor(cursor);
      for (let r = cursor.next(); r !== null; r = cursor.next()) {
        digest.addRange(r.data, r.valueOffset, r.valueLength);
        n++;
      }
      b.release();
    }
    return n;
  };
  run.start();
  let fetched = 0;
  try {
    fetched = onWorker ? await onWorkerThread(run, options, crcOnWorker, decode) : await onMainThread(run, options, decode);
    if (fetched !== options.records) run.error = `fetched ${fetched} records, expected ${options.records}`;
  } catch (err) {
    run.error = `${run.client}: ${(err as Error).message}`;
  }
  return run.report({ checksum: digest.toString(), bytes: digest.bytes });
}

async function onMainThread(run: Run, options: ClientOptions, decode: (records: Buffer, checkCrc: boolean) => number): Promise<number> {
  const pool = new BrokerPool({ bootstrapServers: options.bootstrap, clientId: 'kwire-split' });
  try {
    const { topicId, leaders } = await connectLeaders(pool, options.topic);
    run.ready();
    const counts = await Promise.all(
      leaders.map(({ connection, partitions }) =>
        fetchToEnd(connection, options.topic, topicId, partitions, (parts, lease) => {
          let n = 0;
          try {
            for (const p of parts) n += decode(p.records, true);
          } finally {
            lease.release();
          }
          run.batch(n);
        }),
      ),
    );
    return counts.reduce((a, b) => a + b, 0);
  } finally {
    await pool.close();
  }
}

async function onWorkerThread(run: Run, options: ClientOptions, crcOnWorker: boolean, decode: (records: Buffer, checkCrc: boolean) => number): Promise<number> {
  const workerData: SplitWorkerData = { bootstrap: options.bootstrap, topic: options.topic, checkCrc: crcOnWorker, maxOutstanding: 2 };
  const worker = new Worker(new URL('./split-worker.js', import.meta.url), { workerData });
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  try {
    return await new Promise<number>((resolve, reject) => {
      worker.on('message', (m: { ev: string; buffer?: ArrayBuffer; parts?: number[]; records?: number; message?: string }) => {
        try {
          if (m.ev === 'ready') run.ready();
          else if (m.ev === 'answer') {
            const bytes = Buffer.from(m.buffer!);
            const parts = m.parts!;
            let n = 0;
            for (let i = 0; i < parts.length; i += 3) n += decode(bytes.subarray(parts[i + 1], parts[i + 1]! + parts[i + 2]!), !crcOnWorker);
            // Decoded: the bytes go back to be filled again (nothing here refers to them any more).
            worker.postMessage({ ev: 'return', buffer: m.buffer }, [m.buffer!]);
            run.batch(n);
          } else if (m.ev === 'end') resolve(m.records!);
          else if (m.ev === 'error') reject(new Error(`worker: ${m.message}`));
        } catch (err) {
          reject(err);
        }
      });
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`the worker exited (code ${code}) before the end`)));
    });
  } finally {
    worker.postMessage({ ev: 'stop' });
    const late = setTimeout(() => void worker.terminate(), 5000);
    await exited;
    clearTimeout(late);
  }
}
