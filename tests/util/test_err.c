/* test_err.c — PIT_BUG returns an error naming file:line (and never aborts);
 * PIT_GROW grows an array, and on failure leaves it intact and says PIT_ENOMEM. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pitstop/util.h"

enum mode { MODE_A, MODE_B };

/* What library code does with an enum value it does not know. */
static int describe(int m, const char **name, struct pit_err *e) {
  switch (m) {
  case MODE_A:
    *name = "a";
    return 0;
  case MODE_B:
    *name = "b";
    return 0;
  }
  return PIT_BUG(e, "unknown mode %d", m);
}

int main(void) {
  struct pit_err e = {0};
  const char *name = NULL;
  CHECK(describe(MODE_B, &name, &e) == 0 && strcmp(name, "b") == 0, "known value");
  int line = __LINE__ + 1;
  int rc = PIT_BUG(&e, "state %s", "x");
  char where[64];
  snprintf(where, sizeof where, "test_err.c:%d: state x", line);
  CHECK(rc == PIT_EBUG && e.code == PIT_EBUG, "PIT_EBUG returned: %d", rc);
  CHECK(strstr(e.msg, where) != NULL, "names file:line: '%s' in '%s'", where, e.msg);
  CHECK(e.hint[0] != '\0', "says it is a defect");
  CHECK(describe(42, &name, &e) == PIT_EBUG && strstr(e.msg, "unknown mode 42"), "unknown enum: %s", e.msg);
  CHECK(PIT_BUG(NULL, "no err struct") == PIT_EBUG, "NULL err accepted");

  int *a = NULL;
  size_t cap = 0;
  for (int i = 0; i < 1000; i++) {
    CHECK(PIT_GROW(a, i + 1, cap) == 0, "grow to %d", i + 1);
    a[i] = i;
  }
  CHECK(cap >= 1000 && cap < 4000, "capacity doubles: %zu", cap);
  long sum = 0;
  for (int i = 0; i < 1000; i++)
    sum += a[i];
  CHECK(sum == 999L * 1000 / 2, "contents kept across growth");
  int *before = a;
  size_t cap_before = cap;
  CHECK(PIT_GROW(a, SIZE_MAX / 2, cap) == PIT_ENOMEM, "impossible size: PIT_ENOMEM");
  CHECK(a == before && cap == cap_before && a[999] == 999, "array intact after failure");
  CHECK(PIT_GROW(a, 10, cap) == 0 && cap == cap_before, "no growth when room left");
  free(a);
  return check_done();
}
