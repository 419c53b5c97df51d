/* predict_fmt.c — a run's prediction as a terminal table, CSV or JSON
 * (`pitstop predict --format`; field meanings in docs/predict.md).
 *
 * Each field is declared once, in fields[] below: its JSON key (and the JSON
 * object holding it), its CSV column, its label in the table, how the table
 * shows it, and where the value lives in struct pit_predict_report. The JSON
 * printer, the CSV header and rows and the table all walk this one table, as
 * the summary's printers walk theirs (summary_fmt.c).
 * Invariants: absent values are JSON null, empty CSV cells and "-" in the
 * table; an interval [lo, hi] is a JSON array of two, two CSV columns
 * (<csv>_lo, <csv>_hi) and "[lo, hi]" in the table; JSON is one object per
 * report, one a line; nothing but f is written. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "pitstop/report.h"
#include "report/fmt_impl.h"

enum ftype {
  F_STR,      /* const char * (NULL → absent) */
  F_DBL,      /* double */
  F_I64,      /* int64_t */
  F_I64_POS,  /* int64_t, absent when <= 0 */
  F_I64_NEG,  /* int64_t, absent when < 0 */
  F_PAIR      /* two doubles: lo at off, hi right after it */
};
enum show { SHOW_PLAIN, SHOW_SECS, SHOW_USD, SHOW_PCT };

struct field {
  const char *obj;   /* JSON object holding the field, NULL: the report's own object */
  const char *key;   /* JSON key */
  const char *csv;   /* CSV column (F_PAIR: the prefix of its two) */
  const char *label; /* the table's label */
  enum ftype type;
  enum show show;
  size_t off;        /* in struct pit_predict_report */
};

#define R(m) offsetof(struct pit_predict_report, m)
static const struct field fields[] = {
    {NULL, "run", "run", "run", F_STR, SHOW_PLAIN, R(run)},
    {NULL, "pit_s", "pit_s", "t_p (PIT time)", F_DBL, SHOW_SECS, R(in.tp)},
    {NULL, "pit_interval_s", "pit", "  95% interval", F_PAIR, SHOW_SECS, R(tp_lo)},
    {NULL, "time_basis", "time_basis", "  taken from", F_STR, SHOW_PLAIN, R(time_basis)},
    {NULL, "warmup", "warmup", "warm-up (iterations left out)", F_I64, SHOW_PLAIN, R(warmup)},
    {NULL, "drift", "drift", "drift (relative, per iteration)", F_DBL, SHOW_PLAIN, R(in.drift)},
    {NULL, "steady", "steady", "steady", F_STR, SHOW_PLAIN, R(steady)},
    {NULL, "want_iters", "want_iters", "  more iterations wanted", F_I64, SHOW_PLAIN, R(want_iters)},
    {NULL, "iters_per_epoch", "iters_per_epoch", "iterations per epoch", F_DBL, SHOW_PLAIN, R(in.iters_per_epoch)},
    {NULL, "predicted_epoch_s", "predicted_epoch_s", "one epoch (without validation)", F_DBL, SHOW_SECS,
     R(p.epoch_s)},
    {NULL, "predicted_epoch_interval_s", "predicted_epoch", "  95% interval", F_PAIR, SHOW_SECS, R(p.epoch_lo)},
    {NULL, "predicted_s", "predicted_s", "the whole job", F_DBL, SHOW_SECS, R(p.total_s)},
    {NULL, "predicted_interval_s", "predicted", "  95% interval", F_PAIR, SHOW_SECS, R(p.lo)},
    {NULL, "remaining_s", "remaining_s", "remaining", F_DBL, SHOW_SECS, R(p.remaining_s)},
    {NULL, "remaining_interval_s", "remaining", "  95% interval", F_PAIR, SHOW_SECS, R(p.remaining_lo)},
    {NULL, "drift_allowance", "drift_allowance", "drift allowed for untimed iterations", F_DBL, SHOW_PCT,
     R(p.drift_rel)},
    {NULL, "predicted_cost", "predicted_cost", "cost (US$)", F_DBL, SHOW_USD, R(cost)},
    {NULL, "predicted_cost_interval", "predicted_cost", "  95% interval", F_PAIR, SHOW_USD, R(cost_lo)},
    {NULL, "remaining_cost", "remaining_cost", "cost still to pay (US$)", F_DBL, SHOW_USD, R(rcost)},
    {NULL, "remaining_cost_interval", "remaining_cost", "  95% interval", F_PAIR, SHOW_USD, R(rcost_lo)},
    {NULL, "samples_per_dollar", "samples_per_dollar", "samples per US$", F_DBL, SHOW_PLAIN, R(samples_per_dollar)},
    {NULL, "model", "model", "model", F_STR, SHOW_PLAIN, R(model)},
    {"inputs", "unit", "job_unit", "job sized in", F_STR, SHOW_PLAIN, R(unit)},
    {"inputs", "size", "job_size", "job size", F_DBL, SHOW_PLAIN, R(in.size)},
    {"inputs", "size_from", "job_size_from", "  from", F_STR, SHOW_PLAIN, R(size_from)},
    {"inputs", "iters", "job_iters", "iterations", F_I64, SHOW_PLAIN, R(p.n_iter)},
    {"inputs", "epochs", "job_epochs", "epochs", F_I64, SHOW_PLAIN, R(p.n_epoch)},
    {"inputs", "checkpoints", "job_checkpoints", "checkpoints", F_I64, SHOW_PLAIN, R(p.n_ckpt)},
    {"inputs", "done_iters", "done_iters", "iterations done", F_I64, SHOW_PLAIN, R(in.done_iters)},
    {"inputs", "elapsed_s", "elapsed_s", "elapsed", F_DBL, SHOW_SECS, R(in.elapsed_s)},
    {"inputs", "measured_iters", "measured_iters", "steady iterations measured", F_I64, SHOW_PLAIN, R(in.measured)},
    {"inputs", "batch", "batch", "global batch", F_I64_POS, SHOW_PLAIN, R(in.batch)},
    {"inputs", "init_s", "init_s", "init", F_DBL, SHOW_SECS, R(in.init.mean)},
    {"inputs", "val_s", "val_s", "one validation", F_DBL, SHOW_SECS, R(in.val.mean)},
    {"inputs", "val_samples", "val_samples", "samples of one validation", F_I64_NEG, SHOW_PLAIN, R(val_samples)},
    {"inputs", "epoch_edge_s", "epoch_edge_s", "epoch edge (extra per epoch)", F_DBL, SHOW_SECS, R(in.epoch_edge.mean)},
    {"inputs", "first_iter_s", "first_iter_s", "first iteration (one-off extra)", F_DBL, SHOW_SECS, R(in.first_iter.mean)},
    {"inputs", "untimed_s", "untimed_s", "untimed per epoch (earlier runs)", F_DBL, SHOW_SECS, R(in.untimed.mean)},
    {"inputs", "untimed_half_s", "untimed_half_s", "  95% half-width", F_DBL, SHOW_SECS, R(in.untimed.half)},
    {"inputs", "untimed_from", "untimed_from", "  learnt from", F_STR, SHOW_PLAIN, R(untimed_from)},
    {"inputs", "itype", "itype", "membership priced", F_STR, SHOW_PLAIN, R(itype)},
    {"inputs", "price_h", "price_h", "price of it (US$/h)", F_DBL, SHOW_PLAIN, R(price_h)},
};
#define NFIELDS ((int)(sizeof fields / sizeof fields[0]))

static const void *at(const struct pit_predict_report *r, const struct field *fl) {
  return (const char *)r + fl->off;
}

/* An integer field's value; *absent when the type says so. */
static long long int_value(const struct pit_predict_report *r, const struct field *fl, int *absent) {
  long long v = (long long)*(const int64_t *)at(r, fl);
  *absent = (fl->type == F_I64_POS && v <= 0) || (fl->type == F_I64_NEG && v < 0);
  return v;
}

static void json_value(FILE *f, const struct pit_predict_report *r, const struct field *fl) {
  const double *d = at(r, fl);
  int absent;
  long long v;
  switch (fl->type) {
  case F_STR: pit__jstr(f, *(const char *const *)at(r, fl)); break;
  case F_DBL: pit__jdbl(f, d[0]); break;
  case F_PAIR:
    fputc('[', f);
    pit__jdbl(f, d[0]);
    fputc(',', f);
    pit__jdbl(f, d[1]);
    fputc(']', f);
    break;
  default:
    v = int_value(r, fl, &absent);
    absent ? (void)fputs("null", f) : (void)fprintf(f, "%lld", v);
  }
}

static void json_report(FILE *f, const struct pit_predict_report *r) {
  const char *open = NULL; /* the nested object being written */
  fputc('{', f);
  for (int i = 0, first = 1; i < NFIELDS; i++) {
    const struct field *fl = &fields[i];
    pit__jkey(f, &open, &first, fl->obj, fl->key);
    json_value(f, r, fl);
  }
  pit__jclose(f, open);
  fputc('\n', f);
}

static void csv_value(FILE *f, const struct pit_predict_report *r, const struct field *fl) {
  const double *d = at(r, fl);
  int absent;
  long long v;
  const char *s;
  switch (fl->type) {
  case F_STR:
    s = *(const char *const *)at(r, fl);
    pit__csv_text(f, s ? s : "");
    break;
  case F_DBL: pit__cdbl(f, d[0]); break;
  case F_PAIR:
    pit__cdbl(f, d[0]);
    fputc(',', f);
    pit__cdbl(f, d[1]);
    break;
  default:
    v = int_value(r, fl, &absent);
    if (!absent)
      fprintf(f, "%lld", v);
  }
}

/* A value as the table shows it: seconds, dollars, a percentage or plain. */
static const char *shown(char *buf, size_t n, enum show sh, double v) {
  if (isnan(v) || isinf(v))
    snprintf(buf, n, "-");
  else if (sh == SHOW_SECS)
    pit__secs(buf, n, v);
  else if (sh == SHOW_USD)
    snprintf(buf, n, "%.4g", v);
  else if (sh == SHOW_PCT)
    snprintf(buf, n, "%.2f%%", 100 * v);
  else
    snprintf(buf, n, "%.6g", v);
  return buf;
}

static void table_report(FILE *f, const struct pit_predict_report *r) {
  int w = 0;
  for (int i = 0; i < NFIELDS; i++)
    if ((int)strlen(fields[i].label) > w)
      w = (int)strlen(fields[i].label);
  for (int i = 0; i < NFIELDS; i++) {
    const struct field *fl = &fields[i];
    const double *d = at(r, fl);
    char a[64], b[64], v[600];
    int absent;
    long long iv;
    const char *s;
    if (i > 0 && fl->obj && !fields[i - 1].obj)
      fprintf(f, "inputs:\n");
    switch (fl->type) {
    case F_STR:
      s = *(const char *const *)at(r, fl);
      snprintf(v, sizeof v, "%s", s && s[0] ? s : "-");
      break;
    case F_DBL: shown(v, sizeof v, fl->show, d[0]); break;
    case F_PAIR:
      snprintf(v, sizeof v, "[%s, %s]", shown(a, sizeof a, fl->show, d[0]), shown(b, sizeof b, fl->show, d[1]));
      break;
    default:
      iv = int_value(r, fl, &absent);
      snprintf(v, sizeof v, absent ? "-" : "%lld", iv);
    }
    fprintf(f, "%s%-*s  %s\n", fl->obj ? "  " : "", w, fl->label, v);
  }
}

int pit_predict_write(FILE *f, enum pit_summary_format fmt, const struct pit_predict_report *r, int n,
                      struct pit_err *e) {
  if (fmt == PIT_SUMMARY_CSV) {
    for (int i = 0; i < NFIELDS; i++) {
      const struct field *fl = &fields[i];
      if (fl->type == F_PAIR)
        fprintf(f, "%s%s_lo,%s_hi", i ? "," : "", fl->csv, fl->csv);
      else
        fprintf(f, "%s%s", i ? "," : "", fl->csv);
    }
    fputc('\n', f);
  }
  for (int k = 0; k < n; k++) {
    if (fmt == PIT_SUMMARY_JSON)
      json_report(f, &r[k]);
    else if (fmt == PIT_SUMMARY_CSV)
      for (int i = 0; i < NFIELDS; i++) {
        fputs(i ? "," : "", f);
        csv_value(f, &r[k], &fields[i]);
        fputs(i + 1 == NFIELDS ? "\n" : "", f);
      }
    else {
      fputs(k ? "\n" : "", f);
      table_report(f, &r[k]);
    }
  }
  if (fflush(f) != 0 || ferror(f))
    return pit_err_set(e, PIT_EIO, "cannot write the prediction");
  return 0;
}
