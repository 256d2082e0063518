import { DeserializationError } from './errors.js';
import { ConsumerBatch, DerivedSettlement } from './records/index.js';

export interface Decoded {
  /** What to deliver (null: nothing of this batch). */
  batch: ConsumerBatch | null;
  /** Under 'stop': the failure the stream reports after `batch` (at once when batch is null). */
  failure?: DeserializationError;
}

/**
 * Runs a batch's early deserializers (JSON, functions, async ones awaited in order) before it is
 * delivered. A failure under 'stop' cuts the batch before the record: the records before it are
 * delivered, the record and what follows stay undelivered (and uncommitted), and the failure comes
 * next. Under 'skip' the record is left out (`skipped` hears of it) and the rest goes on.
 */
export async function decodeBatch(batch: ConsumerBatch, policy: 'stop' | 'skip', skipped: (err: DeserializationError) => void): Promise<Decoded> {
  let records: typeof batch.records;
  try {
    records = batch.records;
  } catch (err) {
    // Corrupt records (found as the records are made): the batch goes back undelivered.
    batch.giveBack();
    throw err;
  }
  let dropped: Set<number> | undefined;
  for (let i = 0; i < records.length; i++) {
    try {
      const pending = records[i]!.decode();
      if (pending) await pending;
    } catch (err) {
      if (!(err instanceof DeserializationError)) throw err;
      if (policy === 'skip') {
        skipped(err);
        (dropped ??= new Set()).add(i);
        continue;
      }
      if (i === 0) {
        batch.giveBack();
        return { batch: null, failure: err };
      }
      return { batch: batch.cutBefore(i), failure: err };
    }
  }
  if (dropped === undefined) return { batch };
  const kept = records.filter((_, i) => !dropped!.has(i));
  if (kept.length === 0) {
    // Every record skipped: finished, as far as commits go.
    batch.release();
    return { batch: null };
  }
  return { batch: new ConsumerBatch(batch.topic, batch.partition, kept, batch.highWatermark, batch.lastStableOffset, batch.nextOffset, new DerivedSettlement(batch), batch.fetchedAt) };
}
