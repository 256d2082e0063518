// Seeded randomness for tests: a seed names one run (one chaos schedule, one set of generated
// groups, one way of cutting bytes into chunks), so a failure can be replayed.

/** mulberry32: a tiny, well-mixed 32-bit PRNG; returns floats in [0, 1). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
