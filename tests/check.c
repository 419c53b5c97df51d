/* check.c — see check.h. */
#include "check.h"

#include <stdlib.h>
#include <string.h>

int check_failures = 0;
int check_count = 0;

uint64_t check_rng = 1;

double check_urand(void) {
  check_rng ^= check_rng >> 12;
  check_rng ^= check_rng << 25;
  check_rng ^= check_rng >> 27;
  return (double)((check_rng * 2685821657736338717ULL) >> 11) * (1.0 / 9007199254740992.0);
}

int check_done(void) {
  if (check_failures) {
    fprintf(stderr, "%d of %d checks failed\n", check_failures, check_count);
    return 1;
  }
  if (check_count == 0) {
    fprintf(stderr, "no checks ran\n");
    return 1;
  }
  printf("%d checks passed\n", check_count);
  return 0;
}

const char *check_tmpdir(void) {
  static char dir[256];
  if (!dir[0]) {
    const char *base = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/pit-test-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(dir)) {
      perror("mkdtemp");
      exit(1);
    }
  }
  return dir;
}

char *check_slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  char *b = NULL;
  size_t n = 0, cap = 0, got;
  do {
    if (n + 4096 + 1 > cap) {
      char *nb = realloc(b, cap = 2 * cap + 4096 + 1);
      if (!nb) {
        free(b);
        fclose(f);
        return NULL;
      }
      b = nb;
    }
    got = fread(b + n, 1, cap - n - 1, f);
    n += got;
  } while (got > 0);
  fclose(f);
  b[n] = '\0';
  return b;
}
