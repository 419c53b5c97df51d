/* parse_csv.c — seed 002's experiment CSV (docs/parse.md): a header
 *   total,t0,t1,...,tN
 * then one row per repeat: the total time measured by the script (may be empty),
 * then each process's time for epoch 0. Row k (from 1) becomes run "<run>.<k>":
 * one epoch record (epoch 0, rank i, epoch_s = ti) per process and an end record
 * (total_s) when the total is present.
 *
 * Invariant: a row is checked whole before any of its records is emitted.
 */
#include <stdio.h>

#include "record/parse_impl.h"

#define CSV_MAX_COLS 1025

static int header(struct pit_parser *p, const char *s, const char *end) {
  if (!PL_LIT(&s, end, "total"))
    return PL_UNKNOWN;
  int cols = 1;
  while (s < end && *s == ',') {
    s++;
    int64_t k;
    if (!PL_LIT(&s, end, "t") || !pl_i64(&s, end, &k) || k != cols - 1 || cols >= CSV_MAX_COLS)
      return PL_UNKNOWN;
    cols++;
  }
  pl_ws(&s, end);
  if (s != end || cols < 2)
    return PL_UNKNOWN;
  p->csv_cols = cols;
  p->csv_row = 0;
  return PL_INFO;
}

static int row(struct pit_parser *p, const char *s, const char *end, struct pit_err *e) {
  double v[CSV_MAX_COLS];
  int n = 0, dig;
  while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
    end--;
  for (;;) {
    if (n >= p->csv_cols)
      return pit_pl_bad(p, "row (more columns than the header)", s, end);
    if (n == 0 && (s == end || *s == ',')) {
      v[n++] = NAN; /* no total */
    } else {
      const char *at = s;
      if (!pl_time(&s, end, &v[n], &dig))
        return pit_pl_bad(p, n == 0 ? "total" : "process time", at, end);
      n++;
    }
    if (s == end)
      break;
    if (*s != ',')
      return pit_pl_bad(p, "separator", s, end);
    s++;
    if (s == end && n == p->csv_cols) /* a trailing comma */
      break;
  }
  if (n != p->csv_cols)
    return pit_pl_bad(p, "row (fewer columns than the header)", NULL, end);
  int rc = pit_pl_flush(p, e);
  long k = ++p->csv_row;
  for (int i = 1; i < n && !rc; i++) {
    pit_pl_new(p, PIT_REC_EPOCH, i - 1);
    snprintf(p->cur->run, sizeof p->cur->run, "%.42s.%ld", p->run, k);
    p->cur->epoch = 0;
    p->cur->epoch_s = v[i];
    rc = pit_pl_emit(p, p->cur, e);
  }
  if (!rc && !isnan(v[0])) {
    pit_pl_new(p, PIT_REC_END, -1);
    snprintf(p->cur->run, sizeof p->cur->run, "%.42s.%ld", p->run, k);
    p->cur->total_s = v[0];
    rc = pit_pl_emit(p, p->cur, e);
  }
  return rc ? rc : PL_RECORD;
}

int pit_pl_csv(struct pit_parser *p, const char *s, const char *end, struct pit_err *e) {
  if (*s == 't')
    return header(p, s, end);
  if (p->csv_cols == 0 || !(pl_isdigit(*s) || *s == ',' || *s == '.'))
    return PL_UNKNOWN;
  /* a row: no blanks inside, as many commas as the header (or one more, trailing) */
  const char *e2 = end;
  while (e2 > s && (e2[-1] == ' ' || e2[-1] == '\t'))
    e2--;
  int commas = 0;
  for (const char *q = s; q < e2; q++) {
    if (*q == ' ' || *q == '\t')
      return PL_UNKNOWN;
    commas += *q == ',';
  }
  if (commas != p->csv_cols - 1 && commas != p->csv_cols)
    return PL_UNKNOWN;
  return row(p, s, end, e);
}
