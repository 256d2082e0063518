import { RecordView, type RecordBatch } from '@kwire/protocol';

/**
 * The view records, batches and cursors decode a record into when they need more than they keep
 * (a key, a timestamp, headers, a first offset): one for the whole process, used synchronously and
 * never handed out, so that reading those costs no object per record.
 */
export const scratch = new RecordView(null as unknown as RecordBatch);
