/* grow.c — pit_grow, behind PIT_GROW: the one way arrays grow; and
 * pit_free_many, behind PIT_FREE_ALL: the one way a struct's buffers are freed.
 * Invariant: on failure the array and its capacity are unchanged, so the
 * caller still owns (and frees) a valid array. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pitstop/util.h"

int pit_grow(void *ptr, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap)
    return 0;
  size_t ncap = *cap < 8 ? 16 : *cap * 2;
  if (ncap < need)
    ncap = need;
  if (elem && ncap > SIZE_MAX / elem)
    return PIT_ENOMEM;
  void *old;
  memcpy(&old, ptr, sizeof old);
  void *p = realloc(old, ncap * elem);
  if (!p)
    return PIT_ENOMEM;
  memcpy(ptr, &p, sizeof p);
  *cap = ncap;
  return 0;
}

void pit_free_many(void *const *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    free(p[i]);
}
