/* test_parse_file.c — pit_parse_file on awkward files: CRLF line ends, a last
 * line without '\n' (complete and truncated), a 10 MB line between good lines,
 * NUL bytes, lines split across the 4 MiB read blocks, a missing file, a directory. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pitstop/parse.h"

struct col {
  long n;
  double sum_step;
  char warn[512];
  long nwarn;
};

static int emit(void *ctx, const struct pit_record *r, struct pit_err *e) {
  (void)e;
  struct col *c = ctx;
  c->n++;
  if (!isnan(r->step_s))
    c->sum_step += r->step_s;
  return 0;
}

static void warn(void *ctx, const struct pit_err *w) {
  struct col *c = ctx;
  if (c->nwarn++ == 0)
    snprintf(c->warn, sizeof c->warn, "%s", w->msg);
}

static const char *write_file(const char *name, const void *data, size_t n) {
  static char path[4096];
  snprintf(path, sizeof path, "%s/%s", check_tmpdir(), name);
  FILE *f = fopen(path, "wb");
  CHECK(f && fwrite(data, 1, n, f) == n, "write %s", path);
  if (f)
    fclose(f);
  return path;
}

static struct pit_parse_stats run(const char *path, struct col *c, int *rc) {
  struct pit_parse_stats st = {0};
  struct pit_err e = {0};
  memset(c, 0, sizeof *c);
  *rc = pit_parse_file(path, PIT_PARSE_AUTO, NULL, 0, emit, warn, c, &st, &e);
  if (*rc)
    snprintf(c->warn, sizeof c->warn, "%s", e.msg);
  return st;
}

int main(void) {
  struct col c;
  int rc;
  const char crlf[] = "Rank,0,Epoch,0,Iteration,0,It. time,1.5,Elapsed time,1.5\r\n"
                      "Rank,0,Epoch,0,Iteration,1,It. time,2.25,Elapsed time,3.75\r\n"
                      "Rank,0,Epoch,0,Iteration,2,It. time,0.25,Elapsed time,4";
  struct pit_parse_stats st = run(write_file("crlf.log", crlf, sizeof crlf - 1), &c, &rc);
  CHECK(rc == 0 && st.lines == 3 && c.n == 3 && st.malformed == 0, "crlf: rc %d lines %ld n %ld", rc,
        st.lines, c.n);
  CHECK(c.sum_step == 4.0, "crlf sum %g", c.sum_step);

  const char trunc[] = "Rank,0,Epoch,0,Iteration,0,It. time,1.5,Elapsed time,1.5\n[epoch: 0/1][iteration: 2/782][ra";
  st = run(write_file("trunc.log", trunc, sizeof trunc - 1), &c, &rc);
  CHECK(rc == 0 && st.lines == 2 && c.n == 1 && st.malformed == 1, "trunc: lines %ld n %ld bad %ld",
        st.lines, c.n, st.malformed);
  CHECK(strstr(c.warn, "trunc.log:2: ") && strstr(c.warn, "truncated"), "trunc warn: %s", c.warn);

  /* 10 MB line (no newline inside) between two good lines, crossing read blocks */
  size_t big = 10u << 20;
  const char good[] = "Rank: 1, Epoch: 0, iteration: 5/40, It. time: 0.5s, Elapsed time: 12.5 s\n";
  size_t gl = sizeof good - 1;
  char *buf = malloc(big + 2 * gl + 1);
  memcpy(buf, good, gl);
  memset(buf + gl, 'x', big);
  memcpy(buf + gl, "[epoch: 0/1]", 12); /* a known prefix: malformed, not a crash */
  buf[gl + big - 1] = '\n';
  memcpy(buf + gl + big, good, gl);
  st = run(write_file("big.log", buf, big + 2 * gl), &c, &rc);
  CHECK(rc == 0 && st.lines == 3 && c.n == 2 && st.malformed == 1, "big: rc %d lines %ld n %ld bad %ld", rc,
        st.lines, c.n, st.malformed);

  /* many lines: some straddle the 4 MiB block boundaries */
  size_t nl = 120000, at = 0;
  char *many = malloc(nl * gl);
  for (size_t i = 0; i < nl; i++, at += gl)
    memcpy(many + at, good, gl);
  st = run(write_file("many.log", many, at), &c, &rc);
  CHECK(rc == 0 && st.lines == (long)nl && c.n == (long)nl, "many: lines %ld n %ld", st.lines, c.n);
  free(many);

  /* NUL bytes inside lines and a binary blob */
  const char nul[] = "Rank: 1, Epoch: 0, iteration: 5/40, It. time: 0.5s\0junk\nab\0\0\xff\xfe\n\0\0\0";
  st = run(write_file("nul.log", nul, sizeof nul - 1), &c, &rc);
  CHECK(rc == 0 && st.lines == 3 && st.nul_lines == 3 && c.n == 1, "nul: lines %ld nul %ld n %ld", st.lines,
        st.nul_lines, c.n);
  for (size_t i = 0; i < big; i++)
    buf[i] = (char)(i * 2654435761u >> 13);
  st = run(write_file("blob.bin", buf, big), &c, &rc);
  CHECK(rc == 0 && st.nul_lines > 0 && st.known == c.n, "blob: known %ld n %ld", st.known, c.n);
  free(buf);

  st = run(write_file("empty.log", "", 0), &c, &rc);
  CHECK(rc == 0 && st.lines == 0 && c.n == 0, "empty");
  st = run("/nonexistent/dir/x.log", &c, &rc);
  CHECK(rc == PIT_ENOTFOUND && strstr(c.warn, "cannot open '/nonexistent/dir/x.log'"), "missing: %d %s", rc,
        c.warn);
  st = run(check_tmpdir(), &c, &rc);
  CHECK(rc == PIT_EIO && strstr(c.warn, "directory"), "dir: %d %s", rc, c.warn);
  return check_done();
}
