/* parse.c — strict number parsing, option words and hashing shared by every module. */
#include "pitstop/util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int pit_parse_i64(const char *s, int64_t *out) {
  if (!s || !*s)
    return PIT_EARG;
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || *end)
    return PIT_EARG;
  *out = (int64_t)v;
  return 0;
}

int pit_parse_f64(const char *s, double *out) {
  if (!s || !*s)
    return PIT_EARG;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || *end || !isfinite(v))
    return PIT_EARG;
  *out = v;
  return 0;
}

uint64_t pit_hash64(const void *data, size_t n, uint64_t seed) {
  const unsigned char *p = data;
  uint64_t h = 1469598103934665603ULL ^ seed;
  for (size_t i = 0; i < n; i++) {
    h ^= p[i];
    h *= 1099511628211ULL;
  }
  return h;
}

int pit_parse_name(const char *s, const char *const *names, int n) {
  for (int i = 0; i < n; i++)
    if (strcmp(s, names[i]) == 0)
      return i;
  return -1;
}
