/* parse_path.c — what a log's path says about its job: the instance type named
 * by a path component (`…/m4.xlarge/rank0.out`, `cluster-t2.small-2x/…`, seed
 * 004's `result-p2-8-256-e0.txt` for p2.8xlarge) and the run of a directory of
 * per-rank files (`--job-per-dir`).
 *
 * Invariant: a type is reported only when it is one of the names given (a
 * catalog's types); nothing is guessed. Components are searched from the file
 * name upwards, the first that names a type wins.
 */
#include <stdio.h>
#include <string.h>

#include "record/parse_impl.h"

static int known(const char *cand, const char *const *names, int n) {
  for (int i = 0; i < n; i++)
    if (strcmp(cand, names[i]) == 0)
      return i;
  return -1;
}

static int all_digits(const char *s) {
  if (!*s)
    return 0;
  for (; *s; s++)
    if (*s < '0' || *s > '9')
      return 0;
  return 1;
}

/* One path component (len bytes): the whole of it, a token of it between '-'
 * or '_', or two adjacent tokens "a" "b" read as "a.b" (t2_small) or, for a
 * number b, seed 004's "a.<b>xlarge" ("a.xlarge" for 1: p2-1 is p2.xlarge). */
static int from_component(const char *c, size_t len, const char *const *names, int n) {
  char buf[PIT_NAME_MAX], tok[16][PIT_NAME_MAX], cand[2 * PIT_NAME_MAX + 16];
  if (len == 0 || len >= sizeof buf)
    return -1;
  memcpy(buf, c, len);
  buf[len] = 0;
  int k = known(buf, names, n);
  if (k >= 0)
    return k;
  static const char *const ext[] = {".txt", ".out", ".log", ".err", ".csv", ".jsonl"};
  char *dot = strrchr(buf, '.'); /* a log file's extension is no part of a type */
  for (size_t i = 0; dot && i < sizeof ext / sizeof *ext; i++)
    if (strcmp(dot, ext[i]) == 0)
      *dot = 0;
  int nt = 0;
  for (char *s = buf, *save = NULL, *t; nt < 16 && (t = strtok_r(s, "-_", &save)); s = NULL)
    snprintf(tok[nt++], PIT_NAME_MAX, "%s", t);
  for (int i = 0; i < nt; i++) {
    if ((k = known(tok[i], names, n)) >= 0)
      return k;
    if (i + 1 >= nt)
      break;
    snprintf(cand, sizeof cand, "%.63s.%.63s", tok[i], tok[i + 1]);
    if ((k = known(cand, names, n)) >= 0)
      return k;
    if (all_digits(tok[i + 1])) {
      if (strcmp(tok[i + 1], "1") == 0)
        snprintf(cand, sizeof cand, "%.63s.xlarge", tok[i]);
      else
        snprintf(cand, sizeof cand, "%.63s.%.63sxlarge", tok[i], tok[i + 1]);
      if ((k = known(cand, names, n)) >= 0)
        return k;
    }
  }
  return -1;
}

int pit_parse_itype_from_path(const char *path, const char *const *names, int n, char *out, size_t cap) {
  if (cap)
    out[0] = 0;
  const char *end = path + strlen(path);
  while (end > path) {
    const char *b = end;
    while (b > path && b[-1] != '/')
      b--;
    int k = from_component(b, (size_t)(end - b), names, n);
    if (k >= 0) {
      snprintf(out, cap, "%s", names[k]);
      return 1;
    }
    end = b > path ? b - 1 : path;
    while (end > path && end[-1] == '/')
      end--;
  }
  return 0;
}

void pit_parse_dir_run_name(const char *path, char *out, size_t cap) {
  const char *slash = strrchr(path, '/');
  if (!slash) { /* stdin, or a file of the working directory: its own name */
    pit_parse_run_name(path, out, cap);
    return;
  }
  const char *e = slash;
  while (e > path && e[-1] == '/')
    e--;
  const char *b = e;
  while (b > path && b[-1] != '/')
    b--;
  size_t n = (size_t)(e - b);
  if (n == 0) { /* a file in / */
    pit_parse_run_name(path, out, cap);
    return;
  }
  pl_copy_name(out, cap, b, n);
}
