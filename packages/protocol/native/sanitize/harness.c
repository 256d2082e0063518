/*
 * Sanitizer harness for the two addon sources (native/lz4.c, native/crc32c.c), built outside
 * Node with -fsanitize=address,undefined by test/unit/native-sanitize.test.ts and run over a
 * corpus file that test writes: valid LZ4 blocks with their decoded bytes (from lz4-napi and the
 * fuzz payloads), and raw inputs (the captured fixtures' stream files, record batches).
 *
 * For each LZ4 block: decoded into an output of exactly its size it must give back the original;
 * then `mutations` seeded mutations of it (bit flips, truncation, random bytes, inserted bytes,
 * inflated lengths) are decoded into outputs of random sizes and offsets, after a prefix that
 * back-references may reach. Every input and output lives in its own malloc of exactly its size,
 * so AddressSanitizer sees any read or write one byte past either. Raw inputs are decoded as
 * blocks too (hostile bytes). CRC-32C, both the SSE4.2 lanes and (where the CPU has it) the
 * VPCLMULQDQ folding, is checked against a bytewise reference on random slices (every alignment,
 * lengths across the lane and block thresholds).
 *
 * Usage: harness CORPUS SEED MUTATIONS. Prints one line of counts; exit 0 when all held (a
 * sanitizer report aborts with a non-zero status first).
 *
 * Corpus file: records of u32le kind, then kind 1: u32le n, n block bytes, u32le m, m decoded
 * bytes; kind 2: u32le n, n raw bytes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int64_t kwire_lz4_decode_block(const uint8_t *src, size_t s, size_t end, uint8_t *dst, size_t d, size_t d_end, size_t frame_start);
int kwire_crc32c_init(void);
uint32_t kwire_crc32c(const uint8_t *p, size_t n);
uint32_t kwire_crc32c_scalar(const uint8_t *p, size_t n);

static uint64_t rng_state;
static uint64_t next(void) {
  /* xorshift64* */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717ull;
}
static size_t below(size_t n) { return n == 0 ? 0 : (size_t)(next() % n); }

static uint32_t crc_reference(const uint8_t *p, size_t n) {
  uint32_t c = 0xffffffffu;
  for (size_t i = 0; i < n; i++) {
    c ^= p[i];
    for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1u)));
  }
  return ~c;
}

static uint8_t *copy_of(const uint8_t *p, size_t n) {
  uint8_t *b = malloc(n == 0 ? 1 : n);
  if (!b) abort();
  if (n) memcpy(b, p, n);
  return b;
}

static long lz4_cases = 0, lz4_decoded = 0, crc_cases = 0, failures = 0;

/* One decode of src[0, n) into a fresh output of `cap` bytes, starting at `d` after a prefix. */
static void decode_into(const uint8_t *src, size_t n, size_t cap, size_t d) {
  uint8_t *in = copy_of(src, n);
  uint8_t *out = malloc(cap == 0 ? 1 : cap);
  if (!out) abort();
  for (size_t i = 0; i < d && i < cap; i++) out[i] = (uint8_t)i;
  int64_t r = kwire_lz4_decode_block(in, 0, n, out, d > cap ? cap : d, cap, 0);
  lz4_cases++;
  if (r >= 0) {
    lz4_decoded++;
    if ((size_t)r > cap || (size_t)r < (d > cap ? cap : d)) {
      fprintf(stderr, "decode_block returned %lld outside [%zu, %zu]\n", (long long)r, d, cap);
      failures++;
    }
  } else if (r != -1 && r != -2) {
    fprintf(stderr, "decode_block returned %lld\n", (long long)r);
    failures++;
  }
  free(in);
  free(out);
}

static void mutate_and_decode(const uint8_t *block, size_t n, size_t decoded, long mutations) {
  for (long m = 0; m < mutations; m++) {
    size_t len = n + 8;
    uint8_t *b = malloc(len);
    if (!b) abort();
    memcpy(b, block, n);
    len = n;
    int steps = 1 + (int)below(3);
    for (int s = 0; s < steps; s++) {
      switch (below(6)) {
        case 0: if (len) b[below(len)] ^= (uint8_t)(1u << below(8)); break;
        case 1: len = below(len + 1); break;
        case 2: for (int k = 0; k < 8 && len; k++) b[below(len)] = (uint8_t)next(); break;
        case 3: if (len) b[below(len)] = below(2) ? 0xff : 0xf0; break; /* lengths of 15 + 255... */
        case 4: if (len >= 2) { size_t p = below(len - 1); b[p] = 0; b[p + 1] = 0; } break; /* offset 0 */
        default: { size_t extra = 1 + below(8); if (len + extra <= n + 8) { for (size_t k = 0; k < extra; k++) b[len + k] = (uint8_t)next(); len += extra; } }
      }
    }
    size_t cap = below(2 * decoded + 64);
    size_t d = below(2) ? 0 : below(cap + 1);
    decode_into(b, len, cap, d);
    free(b);
  }
}

static void crc_slices(const uint8_t *p, size_t n, int rounds) {
  for (int r = 0; r < rounds && n > 0; r++) {
    size_t from = below(n);
    size_t len = below(n - from + 1);
    uint8_t *slice = copy_of(p + from, len);
    crc_cases++;
    uint32_t expected = crc_reference(slice, len);
    if (kwire_crc32c(slice, len) != expected || kwire_crc32c_scalar(slice, len) != expected) {
      fprintf(stderr, "crc32c mismatch on %zu bytes at %zu\n", len, from);
      failures++;
    }
    free(slice);
  }
}

static uint32_t u32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: harness CORPUS SEED MUTATIONS\n");
    return 2;
  }
  rng_state = strtoull(argv[2], NULL, 0) | 1;
  long mutations = strtol(argv[3], NULL, 10);
  FILE *f = fopen(argv[1], "rb");
  if (!f) {
    perror(argv[1]);
    return 2;
  }
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *all = malloc((size_t)size + 1);
  if (!all || fread(all, 1, (size_t)size, f) != (size_t)size) return 2;
  fclose(f);
  int hw = kwire_crc32c_init();
  clock_t t0 = clock();
  long blocks = 0, raws = 0;
  size_t o = 0;
  while (o + 8 <= (size_t)size) {
    uint32_t kind = u32(all + o), n = u32(all + o + 4);
    o += 8;
    if (o + n > (size_t)size) return 2;
    const uint8_t *data = all + o;
    o += n;
    if (kind == 1) {
      uint32_t m = u32(all + o);
      const uint8_t *orig = all + o + 4;
      o += 4 + m;
      blocks++;
      uint8_t *in = copy_of(data, n);
      uint8_t *out = malloc(m == 0 ? 1 : m);
      int64_t r = kwire_lz4_decode_block(in, 0, n, out, 0, m, 0);
      lz4_cases++;
      if (r != (int64_t)m || memcmp(out, orig, m) != 0) {
        fprintf(stderr, "valid block %ld (%u bytes) decoded to %lld, expected %u\n", blocks, n, (long long)r, m);
        failures++;
      } else {
        lz4_decoded++;
      }
      free(in);
      free(out);
      mutate_and_decode(data, n, m, mutations);
      if (hw) crc_slices(orig, m, 20);
    } else {
      raws++;
      decode_into(data, n, n * 4 + 64, 0);
      mutate_and_decode(data, n > 4096 ? 4096 : n, n * 2, mutations / 8);
      if (hw) crc_slices(data, n, 20);
    }
  }
  double ms = (double)(clock() - t0) * 1000.0 / CLOCKS_PER_SEC;
  printf("sanitizer harness: seed %s, %ld valid blocks and %ld raw inputs, %ld lz4 decodes (%ld produced output), %ld crc32c slices%s, %ld failures, %.0f ms\n",
         argv[2], blocks, raws, lz4_cases, lz4_decoded, crc_cases, hw ? "" : " (no SSE4.2: crc not run)", failures, ms);
  free(all);
  return failures == 0 ? 0 : 1;
}
