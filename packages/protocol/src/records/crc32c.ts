import CRC32C from 'crc-32/crc32c.js';

/**
 * CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the record batch checksum, as an unsigned
 * 32-bit number. crc-32 is a slice-by-16 table implementation in plain JavaScript.
 */
export function crc32c(data: Uint8Array, start = 0, end = data.length): number {
  const view = start === 0 && end === data.length ? data : data.subarray(start, end);
  return CRC32C.buf(view, 0) >>> 0;
}
