/* gnuplot.c — the one gnuplot driver (charts of plot, simulate and the run
 * report): gnuplot (prog, else $PIT_GNUPLOT, else "gnuplot", started from
 * argv through pit_child_run) runs a script that writes its picture to a
 * private path; the picture is then copied to out through
 * pit_file_write_atomic (written, fsync'd, renamed), so out is whole or
 * untouched.
 *
 * Invariants: every error names out; a failing gnuplot's last message line
 * is kept; a missing or empty picture is an error, never an empty out. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pitstop/util.h"

#define PIT_GNUPLOT_TIMEOUT_S 120.0 /* a chart takes under a second; a hung gnuplot is killed */

int pit_gnuplot_draw(const char *prog, const char *script, const char *picture, const char *out,
                     struct pit_err *e) {
  if (!prog || !*prog)
    prog = getenv("PIT_GNUPLOT");
  if (!prog || !*prog)
    prog = "gnuplot";
  char *argv[] = {(char *)prog, (char *)script, NULL};
  char tail[1024];
  int status = 0;
  int rc = pit_child_capture(argv, PIT_GNUPLOT_TIMEOUT_S, NULL, 0, tail, sizeof tail, &status, e);
  if (rc == PIT_ENOTFOUND) {
    pit_err_hint(e, "charts are drawn by gnuplot: install it (Debian: apt-get install gnuplot-nox) or set PIT_GNUPLOT");
    return rc;
  }
  if (rc)
    return rc;
  /* the last non-empty line of gnuplot's messages */
  size_t len = strlen(tail);
  while (len && (tail[len - 1] == '\n' || tail[len - 1] == '\r' || tail[len - 1] == ' '))
    tail[--len] = '\0';
  const char *last = strrchr(tail, '\n');
  last = last ? last + 1 : tail;
  if (status != 0)
    return pit_err_set(e, PIT_ELIB, "chart '%s': gnuplot failed (exit status %d)%s%.300s", out, status,
                       *last ? ": " : "", last);
  FILE *f = fopen(picture, "rb");
  if (!f)
    return pit_err_set(e, PIT_ELIB, "chart '%s': gnuplot wrote no picture%s%.300s", out, *last ? ": " : "", last);
  char *data = NULL;
  size_t n = 0, cap = 0;
  for (;;) {
    if (PIT_GROW(data, n + (1 << 16), cap)) { /* room for a 64 KiB read at least */
      free(data);
      fclose(f);
      return pit_err_set(e, PIT_ENOMEM, "out of memory");
    }
    size_t k = fread(data + n, 1, cap - n, f);
    n += k;
    if (k == 0)
      break;
  }
  fclose(f);
  if (n == 0)
    rc = pit_err_set(e, PIT_ELIB, "chart '%s': gnuplot wrote no picture%s%.300s", out, *last ? ": " : "", last);
  else
    rc = pit_file_write_atomic(out, data, n, e);
  free(data);
  return rc;
}
