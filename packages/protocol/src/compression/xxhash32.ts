/**
 * xxHash32 (seed 0 by default), for the LZ4 frame's header checksum and its optional block and
 * content checksums. Written from the published algorithm; little-endian lanes.
 */
const P1 = 0x9e3779b1;
const P2 = 0x85ebca77;
const P3 = 0xc2b2ae3d;
const P4 = 0x27d4eb2f;
const P5 = 0x165667b1;

function rotl(x: number, r: number): number {
  return (x << r) | (x >>> (32 - r));
}

function lane(b: Uint8Array, i: number): number {
  return b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24);
}

function round(acc: number, input: number): number {
  return Math.imul(rotl((acc + Math.imul(input, P2)) | 0, 13), P1);
}

export function xxhash32(b: Uint8Array, start = 0, end = b.length, seed = 0): number {
  let i = start;
  let h: number;
  if (end - start >= 16) {
    let v1 = (seed + P1 + P2) | 0;
    let v2 = (seed + P2) | 0;
    let v3 = seed | 0;
    let v4 = (seed - P1) | 0;
    for (const limit = end - 16; i <= limit; i += 16) {
      v1 = round(v1, lane(b, i));
      v2 = round(v2, lane(b, i + 4));
      v3 = round(v3, lane(b, i + 8));
      v4 = round(v4, lane(b, i + 12));
    }
    h = (rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18)) | 0;
  } else {
    h = (seed + P5) | 0;
  }
  h = (h + (end - start)) | 0;
  for (; i + 4 <= end; i += 4) h = Math.imul(rotl((h + Math.imul(lane(b, i), P3)) | 0, 17), P4);
  for (; i < end; i++) h = Math.imul(rotl((h + Math.imul(b[i]!, P5)) | 0, 11), P1);
  h = Math.imul(h ^ (h >>> 15), P2);
  h = Math.imul(h ^ (h >>> 13), P3);
  return (h ^ (h >>> 16)) >>> 0;
}
