/* The harness's door into lz4.c: the file as the addon compiles it, plus one non-static entry. */
#include "../lz4.c"

int64_t kwire_lz4_decode_block(const uint8_t *src, size_t s, size_t end, uint8_t *dst, size_t d, size_t d_end, size_t frame_start) {
  return decode_block(src, s, end, dst, d, d_end, frame_start);
}

/* Keeps the (unused) Node-API wrappers from warnings as unused statics. */
void *kwire_lz4_unused[] = {(void *)DecodeBlock, (void *)Init};
