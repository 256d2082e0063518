/*
 * CRC-32C (Castagnoli) for record batches, with the x86-64 CRC32 instruction on three interleaved
 * streams.
 *
 * Why this file exists: checking batch CRCs was the largest single cost of consuming large records
 * (39% of kwire's CPU on 10 KB records). @node-rs/crc32 runs one dependent chain of crc32q
 * instructions, about 5 GB/s here: each crc32q has a latency of 3 cycles but a throughput of one per
 * cycle, so three independent chains over three lanes of the buffer keep the unit busy, 19-23 GB/s
 * on the same machine (packages/bench/src/micro/crc-choice.ts).
 *
 * The lanes are joined with the linearity of the CRC register (no pre/post inversion inside):
 *   state(A || B) = shift(state(A), |B|) XOR state_from_zero(B)
 * where shift(s, n) is the register after feeding n zero bytes, a linear map on 32 bits, applied
 * here with four 256-entry tables built once for each of the two lane lengths used.
 *
 * Exports: hardware (boolean: the CPU has SSE4.2), crc32c(data: Uint8Array): number (only when
 * hardware is true; the JavaScript side picks another implementation otherwise).
 */
#include <node_api.h>
#include <stdint.h>
#include <string.h>

#define POLY 0x82f63b78u /* reflected Castagnoli polynomial */

static uint32_t gf2_times(const uint32_t *mat, uint32_t vec) {
  uint32_t sum = 0;
  while (vec) {
    if (vec & 1) sum ^= *mat;
    vec >>= 1;
    mat++;
  }
  return sum;
}

static void gf2_square(uint32_t *square, const uint32_t *mat) {
  for (int n = 0; n < 32; n++) square[n] = gf2_times(mat, mat[n]);
}

/* The operator (32 columns) that feeds `len` zero bytes through the register. */
static void zeros_operator(uint32_t *out, size_t len) {
  uint32_t bit[32], two[32], four[32], byte[32], result[32], tmp[32];
  bit[0] = POLY; /* one zero bit: shift right, fold the polynomial in when the low bit was set */
  for (int n = 1; n < 32; n++) bit[n] = 1u << (n - 1);
  gf2_square(two, bit);
  gf2_square(four, two);
  gf2_square(byte, four);
  for (int n = 0; n < 32; n++) result[n] = 1u << n;
  while (len) {
    if (len & 1) {
      for (int n = 0; n < 32; n++) tmp[n] = gf2_times(byte, result[n]);
      memcpy(result, tmp, sizeof tmp);
    }
    len >>= 1;
    if (len) {
      gf2_square(tmp, byte);
      memcpy(byte, tmp, sizeof tmp);
    }
  }
  memcpy(out, result, sizeof result);
}

static void zeros_table(uint32_t table[4][256], size_t len) {
  uint32_t op[32];
  zeros_operator(op, len);
  for (uint32_t n = 0; n < 256; n++) {
    table[0][n] = gf2_times(op, n);
    table[1][n] = gf2_times(op, n << 8);
    table[2][n] = gf2_times(op, n << 16);
    table[3][n] = gf2_times(op, n << 24);
  }
}

static inline uint32_t shift(const uint32_t table[4][256], uint32_t crc) {
  return table[0][crc & 0xff] ^ table[1][(crc >> 8) & 0xff] ^ table[2][(crc >> 16) & 0xff] ^ table[3][crc >> 24];
}

/* Lane lengths: LONG for big buffers, SHORT so that a 1 KB batch still runs three chains. */
#define LONG 8192
#define SHORT 256
static uint32_t long_shift[4][256];
static uint32_t short_shift[4][256];

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <nmmintrin.h>
#define HAVE_X86 1

static inline uint64_t load64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

__attribute__((target("sse4.2"))) static uint32_t crc32c_hw(const uint8_t *p, size_t n) {
  uint64_t c0 = 0xffffffffu;
  while (n && ((uintptr_t)p & 7)) {
    c0 = _mm_crc32_u8((uint32_t)c0, *p++);
    n--;
  }
  while (n >= 3 * LONG) {
    uint64_t c1 = 0, c2 = 0;
    const uint8_t *end = p + LONG;
    do {
      c0 = _mm_crc32_u64(c0, load64(p));
      c1 = _mm_crc32_u64(c1, load64(p + LONG));
      c2 = _mm_crc32_u64(c2, load64(p + 2 * LONG));
      p += 8;
    } while (p < end);
    c0 = shift(long_shift, (uint32_t)c0) ^ (uint32_t)c1;
    c0 = shift(long_shift, (uint32_t)c0) ^ (uint32_t)c2;
    p += 2 * LONG;
    n -= 3 * LONG;
  }
  while (n >= 3 * SHORT) {
    uint64_t c1 = 0, c2 = 0;
    const uint8_t *end = p + SHORT;
    do {
      c0 = _mm_crc32_u64(c0, load64(p));
      c1 = _mm_crc32_u64(c1, load64(p + SHORT));
      c2 = _mm_crc32_u64(c2, load64(p + 2 * SHORT));
      p += 8;
    } while (p < end);
    c0 = shift(short_shift, (uint32_t)c0) ^ (uint32_t)c1;
    c0 = shift(short_shift, (uint32_t)c0) ^ (uint32_t)c2;
    p += 2 * SHORT;
    n -= 3 * SHORT;
  }
  while (n >= 8) {
    c0 = _mm_crc32_u64(c0, load64(p));
    p += 8;
    n -= 8;
  }
  while (n--) c0 = _mm_crc32_u8((uint32_t)c0, *p++);
  return ~(uint32_t)c0;
}
#endif

static napi_value Crc32c(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  bool is_typed = false;
  if (argc < 1 || napi_is_typedarray(env, argv[0], &is_typed) != napi_ok || !is_typed) {
    napi_throw_type_error(env, NULL, "crc32c expects a Uint8Array");
    return NULL;
  }
  napi_typedarray_type type;
  size_t length;
  void *data;
  if (napi_get_typedarray_info(env, argv[0], &type, &length, &data, NULL, NULL) != napi_ok) return NULL;
  if (type != napi_uint8_array) {
    napi_throw_type_error(env, NULL, "crc32c expects a Uint8Array");
    return NULL;
  }
  uint32_t crc = 0;
#ifdef HAVE_X86
  crc = crc32c_hw((const uint8_t *)data, length);
#endif
  napi_value result;
  napi_create_uint32(env, crc, &result);
  return result;
}

static napi_value Init(napi_env env, napi_value exports) {
  bool hardware = false;
#ifdef HAVE_X86
  __builtin_cpu_init();
  hardware = __builtin_cpu_supports("sse4.2");
#endif
  napi_value flag;
  napi_get_boolean(env, hardware, &flag);
  napi_set_named_property(env, exports, "hardware", flag);
  if (hardware) {
    zeros_table(long_shift, LONG);
    zeros_table(short_shift, SHORT);
    napi_value fn;
    napi_create_function(env, "crc32c", NAPI_AUTO_LENGTH, Crc32c, NULL, &fn);
    napi_set_named_property(env, exports, "crc32c", fn);
  }
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
