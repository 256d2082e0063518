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
 * Where the CPU also has AVX-512 with VPCLMULQDQ, buffers of 256 bytes and more are folded with
 * carry-less multiplication instead (crc32c_vector below), bound by the caches rather than by the
 * CRC unit (crc-choice measures both paths).
 *
 * Exports: hardware (boolean: the CPU has SSE4.2), vector (boolean: crc32c folds long buffers),
 * crc32c(data: Uint8Array): number and crc32cScalar(data), the CRC32-instruction path alone (both
 * only when hardware is true; the JavaScript side picks another implementation otherwise).
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
/* Whether the CPU (and the OS, for the 512-bit state) has what crc32c_vector needs. */
static bool vector = false;

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

/*
 * The same CRC with carry-less multiplication (VPCLMULQDQ on 512-bit registers), where the CPU has
 * it: the CRC32 instruction retires 8 bytes a cycle at best, folding 256 bytes a step runs at what
 * the caches deliver. Why it is right: the CRC of a message M is M(x)*x^32 mod P, and a 128-bit part
 * A that lies D bits before the rest can be replaced by any R = A*x^D (mod P) of degree < 128
 * without changing it. With A = A_hi*x^64 + A_lo, R = A_hi*(x^(D+64) mod P) + A_lo*(x^D mod P):
 * two 64x32-bit carry-less products. In the reflected bit order of CRC-32C a product comes out
 * one bit short (the reversed product of 64-bit halves has 127 bits), so the constants are taken one
 * power lower: rev64(x^(D+63) mod P) for the low (first) half and rev64(x^(D-1) mod P) for the high.
 * What is left, 128 bits, is two steps of the CRC32 instruction from a zero register (which computes
 * S*x^64 + data*x^32 mod P), and the bytes after the last whole 64 go through it as before.
 */
#include <immintrin.h>

/* rev64(x^n mod P): P = x^32 + 0x1EDC6F41 in the usual order; its remainders have degree < 32. */
static uint64_t fold_constant(unsigned n) {
  uint32_t r = 1;
  while (n--) r = (r << 1) ^ ((r & 0x80000000u) ? 0x1edc6f41u : 0);
  uint32_t reversed = 0;
  for (int i = 0; i < 32; i++) reversed |= ((r >> i) & 1u) << (31 - i);
  return (uint64_t)reversed << 32;
}

/* Per 128-bit lane: the low half's constant, then the high half's, to move a lane D bits on. */
typedef struct {
  uint64_t lo, hi;
} fold_pair;
static fold_pair fold_2048, fold_1536, fold_1024, fold_512, fold_384, fold_256, fold_128;

static fold_pair fold_pair_for(unsigned d) {
  fold_pair k = {fold_constant(d + 63), fold_constant(d - 1)};
  return k;
}

#define VECTOR_TARGET __attribute__((target("avx512f,avx512vl,avx512bw,vpclmulqdq,pclmul,sse4.2")))

VECTOR_TARGET static inline __m512i k512(fold_pair k) {
  return _mm512_broadcast_i32x4(_mm_set_epi64x((long long)k.hi, (long long)k.lo));
}

/* x moved on by the distance k was made for, XOR b (0x96: the XOR of three). */
VECTOR_TARGET static inline __m512i fold512(__m512i x, __m512i k, __m512i b) {
  return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00), _mm512_clmulepi64_epi128(x, k, 0x11), b, 0x96);
}

VECTOR_TARGET static inline __m128i fold128(__m128i x, fold_pair k, __m128i b) {
  __m128i kk = _mm_set_epi64x((long long)k.hi, (long long)k.lo);
  return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, kk, 0x00), _mm_clmulepi64_si128(x, kk, 0x11)), b);
}

/* n >= 256. */
VECTOR_TARGET static uint32_t crc32c_vector(const uint8_t *p, size_t n) {
  /* The register's starting value (all ones) goes into the first 32 bits of the message. */
  __m512i a0 = _mm512_xor_si512(_mm512_loadu_si512(p), _mm512_set_epi32(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1));
  __m512i a1 = _mm512_loadu_si512(p + 64), a2 = _mm512_loadu_si512(p + 128), a3 = _mm512_loadu_si512(p + 192);
  p += 256;
  n -= 256;
  const __m512i k2048 = k512(fold_2048);
  while (n >= 256) {
    a0 = fold512(a0, k2048, _mm512_loadu_si512(p));
    a1 = fold512(a1, k2048, _mm512_loadu_si512(p + 64));
    a2 = fold512(a2, k2048, _mm512_loadu_si512(p + 128));
    a3 = fold512(a3, k2048, _mm512_loadu_si512(p + 192));
    p += 256;
    n -= 256;
  }
  /* Four registers into one (each 64 bytes after the one before), then whole 64-byte blocks. */
  __m512i a = fold512(a0, k512(fold_1536), fold512(a1, k512(fold_1024), fold512(a2, k512(fold_512), a3)));
  const __m512i k512b = k512(fold_512);
  while (n >= 64) {
    a = fold512(a, k512b, _mm512_loadu_si512(p));
    p += 64;
    n -= 64;
  }
  /* Four lanes of the register into one: lane i lies (3 - i) * 128 bits before the last. */
  __m128i x = _mm512_extracti32x4_epi32(a, 3);
  x = fold128(_mm512_extracti32x4_epi32(a, 2), fold_128, x);
  x = fold128(_mm512_extracti32x4_epi32(a, 1), fold_256, x);
  x = fold128(_mm512_castsi512_si128(a), fold_384, x);
  uint64_t c = _mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(x));
  c = _mm_crc32_u64(c, (uint64_t)_mm_extract_epi64(x, 1));
  while (n >= 8) {
    c = _mm_crc32_u64(c, load64(p));
    p += 8;
    n -= 8;
  }
  while (n--) c = _mm_crc32_u8((uint32_t)c, *p++);
  return ~(uint32_t)c;
}

static uint32_t crc32c_best(const uint8_t *p, size_t n) {
  return vector && n >= 256 ? crc32c_vector(p, n) : crc32c_hw(p, n);
}
#endif

/* Finds what the CPU has and builds the tables and constants; false without the CRC32 instruction. */
static bool crc32c_setup(void) {
#ifdef HAVE_X86
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("sse4.2")) return false;
  zeros_table(long_shift, LONG);
  zeros_table(short_shift, SHORT);
  vector = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("vpclmulqdq");
  if (vector) {
    fold_2048 = fold_pair_for(2048);
    fold_1536 = fold_pair_for(1536);
    fold_1024 = fold_pair_for(1024);
    fold_512 = fold_pair_for(512);
    fold_384 = fold_pair_for(384);
    fold_256 = fold_pair_for(256);
    fold_128 = fold_pair_for(128);
  }
  return true;
#else
  return false;
#endif
}

/* The bytes of argv[0], a Uint8Array; false (a TypeError thrown) for anything else. */
static bool bytes_of(napi_env env, napi_callback_info info, const uint8_t **data, size_t *length) {
  size_t argc = 1;
  napi_value argv[1];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return false;
  bool is_typed = false;
  if (argc < 1 || napi_is_typedarray(env, argv[0], &is_typed) != napi_ok || !is_typed) {
    napi_throw_type_error(env, NULL, "crc32c expects a Uint8Array");
    return false;
  }
  napi_typedarray_type type;
  void *raw;
  if (napi_get_typedarray_info(env, argv[0], &type, length, &raw, NULL, NULL) != napi_ok) return false;
  if (type != napi_uint8_array) {
    napi_throw_type_error(env, NULL, "crc32c expects a Uint8Array");
    return false;
  }
  *data = (const uint8_t *)raw;
  return true;
}

static napi_value uint32_value(napi_env env, uint32_t v) {
  napi_value result;
  napi_create_uint32(env, v, &result);
  return result;
}

static napi_value Crc32c(napi_env env, napi_callback_info info) {
  const uint8_t *data;
  size_t length;
  if (!bytes_of(env, info, &data, &length)) return NULL;
  uint32_t crc = 0;
#ifdef HAVE_X86
  crc = crc32c_best(data, length);
#endif
  return uint32_value(env, crc);
}

/* The CRC32-instruction path alone, whatever the length (for tests and the benchmark). */
static napi_value Crc32cScalar(napi_env env, napi_callback_info info) {
  const uint8_t *data;
  size_t length;
  if (!bytes_of(env, info, &data, &length)) return NULL;
  uint32_t crc = 0;
#ifdef HAVE_X86
  crc = crc32c_hw(data, length);
#endif
  return uint32_value(env, crc);
}

static napi_value Init(napi_env env, napi_value exports) {
  bool hardware = crc32c_setup();
  napi_value flag;
  napi_get_boolean(env, hardware, &flag);
  napi_set_named_property(env, exports, "hardware", flag);
  if (hardware) {
    napi_value fn;
    napi_create_function(env, "crc32c", NAPI_AUTO_LENGTH, Crc32c, NULL, &fn);
    napi_set_named_property(env, exports, "crc32c", fn);
    napi_create_function(env, "crc32cScalar", NAPI_AUTO_LENGTH, Crc32cScalar, NULL, &fn);
    napi_set_named_property(env, exports, "crc32cScalar", fn);
  }
  napi_value vflag;
  napi_get_boolean(env, vector, &vflag);
  napi_set_named_property(env, exports, "vector", vflag);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
