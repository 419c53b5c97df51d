/* test_atomic.c — atomic writes replace whole files and leave no temp file;
 * strict number parsing rejects trailing junk. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pitstop/util.h"

static int count_entries(const char *dir) {
  DIR *d = opendir(dir);
  int n = 0;
  struct dirent *de;
  while ((de = readdir(d)))
    if (de->d_name[0] != '.')
      n++;
  closedir(d);
  return n;
}

int main(void) {
  char path[512];
  const char *dir = check_tmpdir();
  snprintf(path, sizeof path, "%s/a.bin", dir);
  struct pit_err e = {0};
  CHECK(pit_file_write_atomic(path, "hello", 5, &e) == 0, "%s", e.msg);
  CHECK(pit_file_write_atomic(path, "bye", 3, &e) == 0, "%s", e.msg);
  FILE *f = fopen(path, "rb");
  char buf[16] = {0};
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  CHECK(n == 3 && memcmp(buf, "bye", 3) == 0, "content replaced");
  struct pit_atomic_file af;
  CHECK(pit_atomic_open(&af, path, &e) == 0, "open");
  fputs("partial", af.fp);
  pit_atomic_abort(&af);
  CHECK(count_entries(dir) == 1, "abort leaves only the old file");
  CHECK(pit_file_write_atomic("/nonexistent-dir/x", "x", 1, &e) == PIT_EIO && strstr(e.msg, "/nonexistent-dir/x"),
        "error names the file: %s", e.msg);
  int64_t i;
  double d;
  CHECK(pit_parse_i64("42", &i) == 0 && i == 42, "i64");
  CHECK(pit_parse_i64("42x", &i) != 0 && pit_parse_i64("", &i) != 0, "i64 junk");
  CHECK(pit_parse_f64("1e-3", &d) == 0 && d == 1e-3, "f64");
  CHECK(pit_parse_f64("nan", &d) != 0 && pit_parse_f64("1.0s", &d) != 0, "f64 junk");
  char sub[600];
  snprintf(sub, sizeof sub, "%s/x/y/z", dir);
  CHECK(pit_mkdir_p(sub, &e) == 0, "mkdir_p: %s", e.msg);
  return check_done();
}
