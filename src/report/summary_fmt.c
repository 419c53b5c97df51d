/* summary_fmt.c — the summary of runs and groups as a terminal table, CSV or
 * JSON (`pitstop summary --format`; field meanings in docs/analysis.md).
 *
 * Each field is declared once, in fields[] below: its JSON key (and the JSON
 * object holding it), its CSV column, and where the value lives. The JSON
 * printer walks the table in order; the CSV header and rows walk the same
 * table, first the columns pitstop 0.1 had (by their position `v1`, so old
 * column numbers still hold) and then every other field in table order, so a
 * field added here reaches JSON, CSV and the test that compares them at once.
 * Invariants: absent values are JSON null and empty CSV cells; JSON numbers
 * carry 17 significant digits, CSV numbers 9; nothing but f is written. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "pitstop/report.h"
#include "report/fmt_impl.h"

/* One row: a run or a group. */
struct row {
  int is_group;
  const char *name;
  const struct pit_config *cfg;
  const struct pit_summary *s;
  const struct pit_groups *g;        /* groups only */
  const struct pit_report_group *gr; /* groups only */
};

enum ftype {
  F_KIND, F_NAME, F_GROUP,           /* the row itself */
  F_CSTR, F_CI64, F_CINT,            /* struct pit_config: text, int64_t, int; absent "" / -1 → null */
  F_I64, F_INT, F_INT_NEG_NULL,      /* struct pit_summary: int64_t, int, int (-1 → null) */
  F_DBL, F_STATS, F_SHARES, F_RANKS  /* double, struct pit_stats, char[] ("" → null), double * (nranks) */
};

struct field {
  const char *obj;  /* JSON object holding the field, NULL: the row's own object */
  const char *key;  /* JSON key */
  const char *csv;  /* CSV column (a F_STATS field: the prefix of its nine columns) */
  int v1;           /* 1-based column in pitstop 0.1's CSV; 0: appended after those */
  enum ftype type;
  size_t off;       /* in struct pit_config (F_C*) or struct pit_summary */
};

#define S(m) offsetof(struct pit_summary, m)
#define C(m) offsetof(struct pit_config, m)
static const struct field fields[] = {
    {NULL, "kind", "kind", 1, F_KIND, 0},
    {NULL, "name", "name", 2, F_NAME, 0},
    {NULL, "runs", "runs", 3, F_INT, S(nruns)},
    {NULL, "group", "group", 0, F_GROUP, 0},
    {"config", "model", "model", 4, F_CSTR, C(model)},
    {"config", "itype", "itype", 8, F_CSTR, C(itype)},
    {"config", "batch", "batch", 5, F_CI64, C(batch)},
    {"config", "ranks", "ranks", 6, F_CINT, C(ranks)},
    {"config", "nodes", "nodes", 7, F_CINT, C(nodes)},
    {"config", "threads", "threads", 9, F_CINT, C(threads)},
    {NULL, "iters", "iters", 10, F_I64, S(iters)},
    {NULL, "step", "step", 11, F_STATS, S(step)},
    {NULL, "data", "data", 12, F_STATS, S(data)},
    {NULL, "epoch", "epoch", 13, F_STATS, S(epoch)},
    {NULL, "validation", "validation", 14, F_STATS, S(validation)},
    {NULL, "init", "init", 15, F_STATS, S(init)},
    {NULL, "rdzv", "rdzv", 16, F_STATS, S(rdzv)},
    {NULL, "checkpoint", "checkpoint", 17, F_STATS, S(checkpoint)},
    {NULL, "non_paramount", "non_paramount", 18, F_I64, S(non_paramount)},
    {NULL, "warmup", "warmup", 19, F_I64, S(warmup)},
    {NULL, "drift", "drift", 0, F_DBL, S(drift)},
    {"tp", "mean", "tp_mean", 20, F_DBL, S(tp.mean)},
    {"tp", "lo", "tp_lo", 21, F_DBL, S(tp.lo)},
    {"tp", "hi", "tp_hi", 22, F_DBL, S(tp.hi)},
    {"tp", "half", "tp_half", 0, F_DBL, S(tp.half)},
    {"tp", "n", "tp_n", 23, F_I64, S(tp.n)},
    {"tp", "batches", "tp_batches", 24, F_INT, S(tp.nbatches)},
    {"tp", "batch_size", "tp_batch_size", 0, F_I64, S(tp.batch_size)},
    {NULL, "iters_per_epoch", "iters_per_epoch", 25, F_DBL, S(iters_per_epoch)},
    {NULL, "epoch_edge_extra_s", "epoch_edge_extra_s", 26, F_DBL, S(epoch_edge_extra_s)},
    {NULL, "nranks", "nranks", 27, F_INT, S(nranks)},
    {NULL, "slow_rank", "slow_rank", 28, F_INT_NEG_NULL, S(slow_rank)},
    {NULL, "slow_compute_s", "slow_compute_s", 29, F_DBL, S(slow_compute_s)},
    {NULL, "median_rank_compute_s", "median_rank_compute_s", 0, F_DBL, S(median_rank_compute_s)},
    {NULL, "slow_excess", "slow_excess", 30, F_DBL, S(slow_excess)},
    {NULL, "wait_share", "wait_share", 31, F_DBL, S(wait_share)},
    {NULL, "rebalances", "rebalances", 37, F_INT, S(rebalances)},
    {NULL, "batch_shares", "batch_shares", 38, F_SHARES, S(shares)},
    {NULL, "rank_compute_s", "rank_compute_s", 0, F_RANKS, S(rank_compute_s)},
    {NULL, "rank_wait_s", "rank_wait_s", 0, F_RANKS, S(rank_wait_s)},
    {NULL, "total_s", "total_s", 32, F_DBL, S(total_s)},
    {NULL, "init_total_s", "init_total_s", 0, F_DBL, S(init_total_s)},
    {NULL, "epoch_total_s", "epoch_total_s", 0, F_DBL, S(epoch_total_s)},
    {NULL, "validation_total_s", "validation_total_s", 0, F_DBL, S(validation_total_s)},
    {NULL, "checkpoint_total_s", "checkpoint_total_s", 0, F_DBL, S(checkpoint_total_s)},
    {NULL, "init_share", "init_share", 33, F_DBL, S(init_share)},
    {NULL, "epoch_share", "epoch_share", 34, F_DBL, S(epoch_share)},
    {NULL, "validation_share", "validation_share", 35, F_DBL, S(validation_share)},
    {NULL, "checkpoint_share", "checkpoint_share", 36, F_DBL, S(checkpoint_share)},
};
#define NFIELDS ((int)(sizeof fields / sizeof fields[0]))

/* The members of a statistics object, the same way (v1: order in 0.1's CSV). */
static const struct field stat_fields[] = {
    {NULL, "n", "n", 1, F_I64, offsetof(struct pit_stats, n)},
    {NULL, "sum", "sum", 9, F_DBL, offsetof(struct pit_stats, sum)},
    {NULL, "mean", "mean", 2, F_DBL, offsetof(struct pit_stats, mean)},
    {NULL, "median", "median", 3, F_DBL, offsetof(struct pit_stats, median)},
    {NULL, "sd", "sd", 4, F_DBL, offsetof(struct pit_stats, sd)},
    {NULL, "min", "min", 5, F_DBL, offsetof(struct pit_stats, min)},
    {NULL, "max", "max", 6, F_DBL, offsetof(struct pit_stats, max)},
    {NULL, "p5", "p5", 7, F_DBL, offsetof(struct pit_stats, p5)},
    {NULL, "p95", "p95", 8, F_DBL, offsetof(struct pit_stats, p95)},
};
#define NSTAT ((int)(sizeof stat_fields / sizeof stat_fields[0]))

/* The i-th of n table entries in CSV order: the 0.1 columns by v1, then the rest. */
static const struct field *csv_nth(const struct field *t, int n, int i) {
  int nv1 = 0;
  for (int k = 0; k < n; k++)
    nv1 += t[k].v1 > 0;
  for (int k = 0, later = nv1; k < n; k++) {
    if (i < nv1 && t[k].v1 == i + 1)
      return &t[k];
    if (t[k].v1 == 0 && later++ == i)
      return &t[k];
  }
  return NULL;
}

int pit_summary_format_parse(const char *s, enum pit_summary_format *f) {
  static const char *const names[] = {"table", "csv", "json"};
  int i = pit_parse_name(s, names, 3);
  if (i >= 0)
    *f = (enum pit_summary_format)i;
  return i < 0 ? PIT_EARG : 0;
}

/* ---- values ---- */

static const void *at(const struct row *r, const struct field *fl) {
  const char *base = fl->type == F_CSTR || fl->type == F_CI64 || fl->type == F_CINT ? (const char *)r->cfg
                                                                                    : (const char *)r->s;
  return base + fl->off;
}

/* An integer field's value; *null when it is absent (JSON null). */
static long long int_value(const void *p, enum ftype t, int *null) {
  long long v = t == F_I64 || t == F_CI64 ? (long long)*(const int64_t *)p : (long long)*(const int *)p;
  *null = (t == F_CI64 || t == F_CINT || t == F_INT_NEG_NULL) && v < 0;
  return v;
}

/* ---- one value, in JSON (json) or CSV ---- */

static void value(FILE *f, int json, const struct row *r, const struct field *fl, const void *p) {
  int null;
  switch (fl->type) {
  case F_KIND:
    fputs(json ? (r->is_group ? "\"group\"" : "\"run\"") : (r->is_group ? "group" : "run"), f);
    break;
  case F_NAME:
  case F_CSTR:
    if (json && fl->type == F_CSTR && !*(const char *)p)
      fputs("null", f);
    else
      (json ? pit__jstr : pit__csv_text)(f, fl->type == F_NAME ? r->name : p);
    break;
  case F_GROUP: /* JSON: {"field":"value",...}; CSV: the group's name */
    if (!json && r->is_group)
      pit__csv_text(f, r->name);
    for (int k = 0; json && k <= r->g->nfields; k++) {
      fputs(k ? (k < r->g->nfields ? "," : "}") : "{", f);
      if (k < r->g->nfields) {
        pit__jstr(f, r->g->fields[k]);
        fputc(':', f);
        pit__jstr(f, r->gr->vals[k]);
      }
    }
    if (json && r->g->nfields == 0)
      fputc('}', f);
    break;
  case F_SHARES: /* digits and '/' only */
    fprintf(f, json ? (*(const char *)p ? "\"%s\"" : "null") : "%s", (const char *)p);
    break;
  case F_CI64:
  case F_CINT:
  case F_I64:
  case F_INT:
  case F_INT_NEG_NULL: { /* CSV: an absent count is -1, as in 0.1 */
    long long v = int_value(p, fl->type, &null);
    json && null ? (void)fputs("null", f) : (void)fprintf(f, "%lld", v);
    break;
  }
  case F_DBL:
    (json ? pit__jdbl : pit__cdbl)(f, *(const double *)p);
    break;
  case F_STATS: /* JSON: an object in table order; CSV: nine columns in 0.1's order */
    fputs(json ? "{" : "", f);
    for (int k = 0; k < NSTAT; k++) {
      const struct field *sf = json ? &stat_fields[k] : csv_nth(stat_fields, NSTAT, k);
      fputs(k ? "," : "", f);
      if (json)
        fprintf(f, "\"%s\":", sf->key);
      value(f, json, r, sf, (const char *)p + sf->off);
    }
    fputs(json ? "}" : "", f);
    break;
  case F_RANKS: { /* JSON: an array; CSV: "0.1/0.12" */
    const double *v = *(const double *const *)p;
    fputs(json ? "[" : "", f);
    for (int k = 0; k < r->s->nranks && v; k++) {
      fputs(k ? (json ? "," : "/") : "", f);
      (json ? pit__jdbl : pit__cdbl)(f, v[k]);
    }
    fputs(json ? "]" : "", f);
    break;
  }
  }
}

static void json_row(FILE *f, const struct row *r) {
  const char *open = NULL; /* the nested object being written */
  fputc('{', f);
  for (int i = 0, first = 1; i < NFIELDS; i++) {
    const struct field *fl = &fields[i];
    if (fl->type == F_GROUP && !r->is_group)
      continue;
    pit__jkey(f, &open, &first, fl->obj, fl->key);
    value(f, 1, r, fl, at(r, fl));
  }
  pit__jclose(f, open);
}

const char *pit_summary_csv_column(int i, char *name, size_t n) {
  for (int k = 0; k < NFIELDS; k++) {
    const struct field *fl = csv_nth(fields, NFIELDS, k);
    int cols = fl->type == F_STATS ? NSTAT : 1;
    if (i < cols) {
      if (fl->type != F_STATS)
        return fl->csv;
      snprintf(name, n, "%s_%s", fl->csv, csv_nth(stat_fields, NSTAT, i)->csv);
      return name;
    }
    i -= cols;
  }
  return NULL;
}

static void csv_row(FILE *f, const struct row *r) {
  for (int k = 0; k < NFIELDS; k++) {
    const struct field *fl = csv_nth(fields, NFIELDS, k);
    fputs(k ? "," : "", f);
    value(f, 0, r, fl, at(r, fl));
  }
  fputc('\n', f);
}

/* ---- the terminal table ---- */

static const char *pct(char *buf, size_t n, double v) {
  if (isnan(v))
    snprintf(buf, n, "-");
  else
    snprintf(buf, n, "%.1f%%", 100 * v);
  return buf;
}

/* "4 rebalances" */
static const char *rebal(char *b, size_t n, int k) {
  snprintf(b, n, "%d rebalance%s", k, k == 1 ? "" : "s");
  return b;
}

static void table(FILE *f, const struct row *rows, int n, const char *title) {
  int w = 4;
  for (int i = 0; i < n; i++)
    if ((int)strlen(rows[i].name) > w)
      w = (int)strlen(rows[i].name);
  if (w > 60)
    w = 60;
  char b[9][32];
  fprintf(f, "%s — step time per iteration\n", title);
  fprintf(f, "%-*s %6s %9s %9s %9s %9s %9s %9s %9s %6s  %s\n", w, "", "iters", "mean", "median", "sd", "min", "max",
          "p5", "p95", "warmup", "t_p [95% interval]");
  for (int i = 0; i < n; i++) {
    const struct pit_summary *s = rows[i].s;
    char tp[160];
    if (isnan(s->tp.mean))
      snprintf(tp, sizeof tp, "-");
    else if (isnan(s->tp.lo))
      snprintf(tp, sizeof tp, "%s (too few iterations for an interval)", pit__secs(b[8], 32, s->tp.mean));
    else {
      char lo[32], hi[32];
      snprintf(tp, sizeof tp, "%s [%s, %s] (n=%lld)", pit__secs(b[8], 32, s->tp.mean), pit__secs(lo, 32, s->tp.lo),
               pit__secs(hi, 32, s->tp.hi), (long long)s->tp.n);
    }
    fprintf(f, "%-*.*s %6lld %9s %9s %9s %9s %9s %9s %9s %6lld  %s\n", w, w, rows[i].name, (long long)s->iters,
            pit__secs(b[0], 32, s->step.mean), pit__secs(b[1], 32, s->step.median), pit__secs(b[2], 32, s->step.sd),
            pit__secs(b[3], 32, s->step.min), pit__secs(b[4], 32, s->step.max), pit__secs(b[5], 32, s->step.p5),
            pit__secs(b[6], 32, s->step.p95), (long long)s->warmup, tp);
  }
  fprintf(f, "\n%s — other times: mean (count); run time and its shares\n", title);
  fprintf(f, "%-*s %16s %16s %16s %9s %6s %6s %6s  %s\n", w, "", "epoch", "validation", "init", "total", "init",
          "epochs", "valid.", "slowest rank (compute)");
  for (int i = 0; i < n; i++) {
    const struct pit_summary *s = rows[i].s;
    char ep[64], va[64], in[64], slow[256];
    snprintf(ep, sizeof ep, "%s (%lld)", pit__secs(b[0], 32, s->epoch.mean), (long long)s->epoch.n);
    snprintf(va, sizeof va, "%s (%lld)", pit__secs(b[1], 32, s->validation.mean), (long long)s->validation.n);
    snprintf(in, sizeof in, "%s (%lld)", pit__secs(b[2], 32, s->init.mean), (long long)s->init.n);
    if (s->slow_rank < 0)
      snprintf(slow, sizeof slow, "-");
    else if (s->nranks == 1)
      snprintf(slow, sizeof slow, "one rank");
    else
      snprintf(slow, sizeof slow, "rank %d: %s, +%.1f%% over the fastest; wait %s%s%s%s%s", s->slow_rank,
               pit__secs(b[3], 32, s->slow_compute_s), 100 * s->slow_excess, pct(b[4], 32, s->wait_share),
               s->shares[0] ? "; shares " : "", s->shares, s->shares[0] ? " after " : "",
               s->shares[0] ? rebal(b[5], 32, s->rebalances) : "");
    fprintf(f, "%-*.*s %16s %16s %16s %9s %6s %6s %6s  %s\n", w, w, rows[i].name, ep, va, in,
            pit__secs(b[5], 32, s->total_s), pct(b[6], 32, s->init_share), pct(b[7], 32, s->epoch_share),
            pct(b[8], 32, s->validation_share), slow);
  }
  fputc('\n', f);
}

/* ---- all rows ---- */

int pit_summary_write(FILE *f, enum pit_summary_format fmt, const struct pit_runset *rs,
                      const struct pit_groups *g, const char *title, struct pit_err *e) {
  int n = rs->n + g->n;
  struct row *rows = calloc((size_t)(n ? n : 1), sizeof *rows);
  if (!rows)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  for (int i = 0; i < rs->n; i++)
    rows[i] = (struct row){0, rs->runs[i].name, &rs->runs[i].cfg, &rs->runs[i].sum, g, NULL};
  for (int i = 0; i < g->n; i++)
    rows[rs->n + i] = (struct row){1, g->g[i].name, &g->g[i].cfg, &g->g[i].sum, g, &g->g[i]};
  if (fmt == PIT_SUMMARY_JSON) {
    fputs("[\n", f);
    for (int i = 0; i < n; i++) {
      json_row(f, &rows[i]);
      fputs(i + 1 < n ? ",\n" : "\n", f);
    }
    fputs("]\n", f);
  } else if (fmt == PIT_SUMMARY_CSV) {
    const char *col;
    char buf[64];
    for (int i = 0; (col = pit_summary_csv_column(i, buf, sizeof buf)) != NULL; i++)
      fprintf(f, "%s%s", i ? "," : "", col);
    fputc('\n', f);
    for (int i = 0; i < n; i++)
      csv_row(f, &rows[i]);
  } else {
    table(f, rows, rs->n, "runs");
    table(f, rows + rs->n, g->n, title);
  }
  free(rows);
  if (fflush(f) != 0 || ferror(f))
    return pit_err_set(e, PIT_EIO, "cannot write the summary");
  return 0;
}
