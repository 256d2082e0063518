// The Fetch loop of the worker-thread experiment (clients/split.ts): the ceiling's requests (one in
// flight per leader, the Java consumer's default sizes), with the next Fetch sent as soon as an
// answer's offsets are known, before the answer is handed on, as kwire's fetcher sends its early
// next Fetch before it decodes. The same function runs on the main thread (split-main) and on the
// worker (split-worker), so the two variants differ only in the thread it runs on.
import type { Connection, ResponseFrameLease } from '@kwire/consumer/internals';
import { Fetch, scanRecordBatches, type FetchRequest } from '@kwire/protocol';
import { fullFetch, partitionsWithRecords } from './ceiling.js';

/** A partition's records bytes in one answer (a view into the answer's frame). */
export interface AnswerPart {
  partition: number;
  records: Buffer;
}

/**
 * Fetches `partitions` of one leader from offset 0 to their high watermarks. Each answer's parts
 * (partitions with whole batches) go to `handle`, which owns the lease from then on and must release
 * it. The next Fetch is sent before `handle` is called (kwire's early Fetch); the one after it waits
 * until `handle`'s promise resolves (its backpressure). Resolves with the records fetched.
 */
export async function fetchToEnd(
  conn: Connection,
  topic: string,
  topicId: string,
  partitions: readonly number[],
  handle: (parts: AnswerPart[], lease: ResponseFrameLease) => void | Promise<void>,
): Promise<number> {
  const offsets = new Map<number, bigint>(partitions.map((p) => [p, 0n]));
  const ends = new Map<number, bigint>();
  const pending = () => partitions.filter((p) => !ends.has(p) || offsets.get(p)! < ends.get(p)!);
  const send = () => conn.requestFrame<FetchRequest>(Fetch, fullFetch(topic, topicId, pending(), offsets), { timeoutMs: 30_500 });
  let records = 0;
  let next: Promise<ResponseFrameLease> | null = send();
  while (next) {
    const lease = await next;
    const parts: AnswerPart[] = [];
    try {
      for (const { partition, records: bytes } of partitionsWithRecords(lease, ends)) {
        const scan = scanRecordBatches(bytes);
        const from = offsets.get(partition)!;
        if (scan.batches === 0 || scan.nextOffset <= from) continue;
        records += Number(scan.nextOffset - from);
        offsets.set(partition, scan.nextOffset);
        parts.push({ partition, records: bytes.subarray(0, scan.wholeBytes) });
      }
    } catch (err) {
      lease.release();
      throw err;
    }
    next = pending().length > 0 ? send() : null;
    try {
      await handle(parts, lease);
    } catch (err) {
      // The Fetch already sent is answered into a pooled frame: give it back.
      next?.then(
        (l) => l.release(),
        () => {},
      );
      throw err;
    }
  }
  return records;
}
