// Buffer views of record bytes, made faster than Buffer.prototype.subarray makes them.
//
// subarray reads `buffer` and `byteOffset` off the parent Buffer and checks its arguments on every
// call: 60-90 ns a view here, against 20-30 ns for a typed-array construction from an ArrayBuffer
// and an offset held by the record's batch (RecordBatch.viewOf). On the default record path that
// is one view per record (`record.value`), the largest single cost after decoding at 100 B.
//
// The views are Buffers in every way code can tell: Buffer.prototype is in their prototype chain
// (Buffer.isBuffer, instanceof Buffer, every Buffer method, util.inspect, toJSON) and their
// constructor is Buffer, as it is for the views Node makes itself (its internal FastBuffer class
// is built the same way).
class RecordBytes extends Uint8Array {}
Object.setPrototypeOf(RecordBytes.prototype, Buffer.prototype);
Object.defineProperty(RecordBytes.prototype, 'constructor', { value: Buffer, writable: true, configurable: true });

/** A Buffer over arrayBuffer[byteOffset, byteOffset + length), the bytes shared (no copy). */
export function bufferView(arrayBuffer: ArrayBuffer, byteOffset: number, length: number): Buffer {
  return new RecordBytes(arrayBuffer, byteOffset, length) as unknown as Buffer;
}
