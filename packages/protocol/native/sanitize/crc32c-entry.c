/* The harness's door into crc32c.c: the file as the addon compiles it, plus non-static entries. */
#include "../crc32c.c"

/* 1 when the CPU has SSE4.2 (then the tables are built and the two below may be called). */
int kwire_crc32c_init(void) {
  return crc32c_setup() ? 1 : 0;
}

/* What the addon's crc32c runs: the vector path from 256 bytes where the CPU has it. */
uint32_t kwire_crc32c(const uint8_t *p, size_t n) {
#ifdef HAVE_X86
  return crc32c_best(p, n);
#else
  (void)p, (void)n;
  return 0;
#endif
}

/* The CRC32-instruction path alone. */
uint32_t kwire_crc32c_scalar(const uint8_t *p, size_t n) {
#ifdef HAVE_X86
  return crc32c_hw(p, n);
#else
  (void)p, (void)n;
  return 0;
#endif
}

void *kwire_crc32c_unused[] = {(void *)Crc32c, (void *)Crc32cScalar, (void *)Init};
