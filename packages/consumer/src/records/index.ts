// Records and batches as the application receives them, and how they are read. One module each:
// record.ts (ConsumerRecord, KeptRecord), batch.ts (ConsumerBatch and the FINISHED RULE),
// cursor.ts (BatchCursor, CursorRecord), deserializers.ts (RecordContext), spans.ts (where a
// batch's records are), settlement.ts (how a batch reports back).
export { ConsumerBatch, DerivedSettlement } from './batch.js';
export { BatchCursor, CursorRecord, type CursorOwner } from './cursor.js';
export { deserializerFor, deserializesEarly, recordContext, type RecordContext } from './deserializers.js';
export { ConsumedRecord, ConsumerRecord, type KeptRecord } from './record.js';
export type { BatchSettlement } from './settlement.js';
export { RecordSpans, type RecordSpan } from './spans.js';
