/*
 * LZ4 block decoding for lz4-compressed record batches.
 *
 * Why this file exists: on 10 KB records compressed with lz4, kwire's JavaScript block decoder was
 * the largest cost after the CRC (about a sixth of the consumer's CPU). Java's ProducerPerformance
 * values, like most real payloads, compress poorly: blocks are long literal runs (134 B on
 * average) between short matches, and in JavaScript every run is a Buffer.copy call (argument
 * checks, about 100 ns) or a byte loop. Here a run is one memcpy.
 *
 * Only the block format is decoded here; the frame (magic, descriptor, header checksum, block
 * sizes, block and content checksums, output bounds) stays in src/compression/lz4.ts, which calls
 * this once per compressed block.
 *
 * Safety: every read is checked against the block's end and every write against the output limit
 * the caller gives; over-long copies (16-byte literal copies, 8-byte match steps) are only used
 * where both sides have that much room. On anything malformed this returns -2 without saying why:
 * the JavaScript decoder then decodes the same block again and words the error (byte offset
 * included), so both implementations fail identically.
 *
 * Export: decodeBlock(src, s, end, dst, d, dEnd, frameStart): the new output position, -1 when the
 * output would pass dEnd, -2 when the block is malformed.
 */
#include <node_api.h>
#include <stdint.h>
#include <string.h>

#define OVERFLOW -1
#define MALFORMED -2

/* A length of 15 (or 19) goes on in bytes of 255 and ends at the first byte below; 0 when the block ends first. */
static inline int extend(const uint8_t *src, size_t *s, size_t end, size_t *length) {
  unsigned b;
  do {
    if (*s >= end) return 0;
    b = src[(*s)++];
    *length += b;
  } while (b == 255);
  return 1;
}

static int64_t decode_block(const uint8_t *src, size_t s, size_t end, uint8_t *dst, size_t d, size_t d_end, size_t frame_start) {
  for (;;) {
    if (s >= end) return MALFORMED;
    const unsigned token = src[s++];
    size_t literals = token >> 4;
    if (literals == 15 && !extend(src, &s, end, &literals)) return MALFORMED;
    if (literals > end - s) return MALFORMED;
    if (literals > d_end - d) return OVERFLOW;
    if (literals <= 16 && end - s >= 16 && d_end - d >= 16) {
      memcpy(dst + d, src + s, 16); /* bytes past the run are overwritten by what follows */
    } else {
      memcpy(dst + d, src + s, literals);
    }
    s += literals;
    d += literals;
    /* The last sequence of a block is literals only. */
    if (s == end) return (int64_t)d;
    if (end - s < 2) return MALFORMED;
    const size_t offset = (size_t)src[s] | ((size_t)src[s + 1] << 8);
    s += 2;
    if (offset == 0 || offset > d - frame_start) return MALFORMED;
    size_t length = (token & 15) + 4;
    if (length == 19 && !extend(src, &s, end, &length)) return MALFORMED;
    if (length > d_end - d) return OVERFLOW;
    uint8_t *out = dst + d;
    const uint8_t *from = out - offset;
    if (offset >= length) {
      memcpy(out, from, length); /* source ends at or before the destination: no overlap */
    } else if (offset >= 8 && d_end - d >= length + 8) {
      /* Overlapping, but each 8-byte step reads only bytes already written. */
      for (size_t i = 0; i < length; i += 8) memcpy(out + i, from + i, 8);
    } else {
      /* A short period (a run of one byte, say): repeat it byte by byte. */
      for (size_t i = 0; i < length; i++) out[i] = from[i];
    }
    d += length;
    if (s >= end) return MALFORMED; /* a block must end with literals */
  }
}

static int bytes_of(napi_env env, napi_value v, uint8_t **data, size_t *length) {
  bool is_typed = false;
  if (napi_is_typedarray(env, v, &is_typed) != napi_ok || !is_typed) return 0;
  napi_typedarray_type type;
  void *p;
  if (napi_get_typedarray_info(env, v, &type, length, &p, NULL, NULL) != napi_ok || type != napi_uint8_array) return 0;
  *data = (uint8_t *)p;
  return 1;
}

static int index_of(napi_env env, napi_value v, int64_t *out) {
  return napi_get_value_int64(env, v, out) == napi_ok;
}

static napi_value DecodeBlock(napi_env env, napi_callback_info info) {
  size_t argc = 7;
  napi_value argv[7];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  uint8_t *src, *dst;
  size_t src_len, dst_len;
  int64_t s, end, d, d_end, frame_start;
  if (argc < 7 || !bytes_of(env, argv[0], &src, &src_len) || !bytes_of(env, argv[3], &dst, &dst_len) || !index_of(env, argv[1], &s) ||
      !index_of(env, argv[2], &end) || !index_of(env, argv[4], &d) || !index_of(env, argv[5], &d_end) || !index_of(env, argv[6], &frame_start)) {
    napi_throw_type_error(env, NULL, "decodeBlock(src: Uint8Array, s, end, dst: Uint8Array, d, dEnd, frameStart)");
    return NULL;
  }
  /* The caller's ranges must lie inside the two buffers: a wrong call is refused, never followed. */
  if (s < 0 || s > end || (uint64_t)end > src_len || frame_start < 0 || frame_start > d || d > d_end || (uint64_t)d_end > dst_len) {
    napi_throw_range_error(env, NULL, "decodeBlock: ranges outside the buffers");
    return NULL;
  }
  int64_t r = decode_block(src, (size_t)s, (size_t)end, dst, (size_t)d, (size_t)d_end, (size_t)frame_start);
  napi_value result;
  napi_create_int64(env, r, &result);
  return result;
}

static napi_value Init(napi_env env, napi_value exports) {
  napi_value fn;
  napi_create_function(env, "decodeBlock", NAPI_AUTO_LENGTH, DecodeBlock, NULL, &fn);
  napi_set_named_property(env, exports, "decodeBlock", fn);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
