/*
 * A stand-in for Node-API's header, for the sanitizer harness only: lz4.c and crc32c.c are
 * compiled a second time, outside Node, with -fsanitize=address,undefined. Their decoding code
 * uses no Node-API at all; their small wrappers do, and compile against these stubs, which are
 * never called (the harness calls the decoders directly).
 */
#ifndef KWIRE_SANITIZE_NODE_API_H
#define KWIRE_SANITIZE_NODE_API_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct napi_env__ *napi_env;
typedef struct napi_value__ *napi_value;
typedef struct napi_callback_info__ *napi_callback_info;
typedef enum { napi_ok, napi_invalid_arg } napi_status;
typedef enum { napi_int8_array, napi_uint8_array } napi_typedarray_type;
typedef napi_value (*napi_callback)(napi_env, napi_callback_info);
#define NAPI_AUTO_LENGTH ((size_t)-1)
#define NAPI_MODULE(name, init)

static inline napi_status napi_get_cb_info(napi_env e, napi_callback_info i, size_t *c, napi_value *v, napi_value *t, void **d) {
  (void)e, (void)i, (void)c, (void)v, (void)t, (void)d;
  return napi_invalid_arg;
}
static inline napi_status napi_is_typedarray(napi_env e, napi_value v, bool *r) {
  (void)e, (void)v, (void)r;
  return napi_invalid_arg;
}
static inline napi_status napi_get_typedarray_info(napi_env e, napi_value v, napi_typedarray_type *t, size_t *l, void **d, napi_value *b, size_t *o) {
  (void)e, (void)v, (void)t, (void)l, (void)d, (void)b, (void)o;
  return napi_invalid_arg;
}
static inline napi_status napi_get_value_int64(napi_env e, napi_value v, int64_t *r) {
  (void)e, (void)v, (void)r;
  return napi_invalid_arg;
}
static inline napi_status napi_create_int64(napi_env e, int64_t x, napi_value *r) {
  (void)e, (void)x, (void)r;
  return napi_invalid_arg;
}
static inline napi_status napi_create_uint32(napi_env e, uint32_t x, napi_value *r) {
  (void)e, (void)x, (void)r;
  return napi_invalid_arg;
}
static inline napi_status napi_get_boolean(napi_env e, bool x, napi_value *r) {
  (void)e, (void)x, (void)r;
  return napi_invalid_arg;
}
static inline napi_status napi_create_function(napi_env e, const char *n, size_t l, napi_callback c, void *d, napi_value *r) {
  (void)e, (void)n, (void)l, (void)c, (void)d, (void)r;
  return napi_invalid_arg;
}
static inline napi_status napi_set_named_property(napi_env e, napi_value o, const char *n, napi_value v) {
  (void)e, (void)o, (void)n, (void)v;
  return napi_invalid_arg;
}
static inline napi_status napi_throw_type_error(napi_env e, const char *c, const char *m) {
  (void)e, (void)c, (void)m;
  return napi_invalid_arg;
}
static inline napi_status napi_throw_range_error(napi_env e, const char *c, const char *m) {
  (void)e, (void)c, (void)m;
  return napi_invalid_arg;
}
#endif
