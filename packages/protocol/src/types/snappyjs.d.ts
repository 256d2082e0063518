// snappyjs 0.7.0 ships no types. Only what kwire uses: raw snappy blocks (no framing).
declare module 'snappyjs' {
  /** One raw snappy block (uncompressed-length varint, then tags) of `input`. */
  export function compress(input: Buffer): Buffer;
  export function compress(input: Uint8Array): Uint8Array;
  /** Decodes one raw snappy block; throws if its declared length exceeds maxLength. */
  export function uncompress(input: Buffer, maxLength?: number): Buffer;
  export function uncompress(input: Uint8Array, maxLength?: number): Uint8Array;
  const snappy: { compress: typeof compress; uncompress: typeof uncompress };
  export default snappy;
}
