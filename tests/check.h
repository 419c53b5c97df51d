/* check.h — the minimal test harness every C test uses: CHECK(cond, ...) records
 * a failure with file:line and continues; check_done() returns the exit status. */
#ifndef PIT_TEST_CHECK_H
#define PIT_TEST_CHECK_H
#include <stdio.h>

extern int check_failures;
extern int check_count;
#define CHECK(cond, ...)                                                   \
  do {                                                                     \
    check_count++;                                                         \
    if (!(cond)) {                                                         \
      check_failures++;                                                    \
      fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                        \
      fputc('\n', stderr);                                                 \
    }                                                                      \
  } while (0)
#define CHECK_NEAR(a, b, tol, what)                                        \
  do {                                                                     \
    double _a = (a), _b = (b);                                             \
    CHECK(fabs(_a - _b) <= (tol), "%s: %.9g vs %.9g (tol %.3g)", what, _a, _b, (double)(tol)); \
  } while (0)
int check_done(void);
/* Seeded uniform [0,1) numbers for tests (xorshift64*): set check_rng, then call. */
#include <stdint.h>
extern uint64_t check_rng;
double check_urand(void);
/* Path of a fresh temporary directory for this test (removed by the OS/CI). */
const char *check_tmpdir(void);
/* The whole file as a NUL-terminated string (free it); NULL if it cannot be read. */
char *check_slurp(const char *path);
#endif
