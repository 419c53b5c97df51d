/* plot.c — charts (PNG or SVG) drawn by gnuplot from summarized runs:
 * steps (one run, step time per iteration by epoch), batch (a time against
 * global batch per configuration), scaling (speedup and efficiency against
 * ranks), cost (samples per dollar per configuration). docs/plot.md.
 * Each chart is made through gp.c (gp_impl.h: a private directory, data
 * files and a script, run by the one gnuplot driver). Invariants: every text
 * taken from the runs (names, models, instance types) or from the user
 * (title) reaches the script only through pit__gp_str; the output is
 * complete or absent. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "report/gp_impl.h"

#define MAX_SERIES 64   /* lines (configurations, epochs) per chart */
#define MAX_POINTS 256  /* distinct x values per chart */

/* The lines of a chart: configurations that differ in the fields the user
 * varied (analysis module's pit_config_varied: a derived field such as
 * threads = cores / ranks that only follows another field splits nothing). */
struct lines {
  const struct pit_config *cfg[MAX_SERIES]; /* each line's first run's */
  int n;
  unsigned split;   /* fields that tell lines apart */
  unsigned legend;  /* fields shown in each line's legend: differ between lines, constant within each */
  unsigned common;  /* fields equal on every run (said once under the title) */
};

/* A readable unit for values up to vmax seconds: factor and name. */
static double time_unit(double vmax, const char **name) {
  if (!(vmax < 1)) {
    *name = "s";
    return 1;
  }
  if (vmax >= 1e-3) {
    *name = "ms";
    return 1e3;
  }
  *name = "µs";
  return 1e6;
}

/* Appends ", " (unless buf is empty) and the formatted text, truncating. */
static void label_add(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void label_add(char *buf, size_t n, const char *fmt, ...) {
  size_t off = strlen(buf);
  if (off && off + 2 < n) {
    memcpy(buf + off, ", ", 3);
    off += 2;
  }
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + off, n - off, fmt, ap);
  va_end(ap);
}

/* The set of key fields named in skip ("batch", "ranks nodes"), by the
 * analysis module's table of configuration fields. */
static unsigned fields_named(const char *skip) {
  unsigned m = 0;
  for (int f = 0; f < PIT_CF_COUNT; f++)
    if (pit_config_field_def(f)->in_key && strstr(skip, pit_config_field_def(f)->name))
      m |= PIT_CF_BIT(f);
  return m;
}

/* The label of the key fields in the set, "cnn, batch 64, 2 ranks, 1 node,
 * c5.xlarge, 4 threads" (absent fields left out). */
static void label_of(const struct pit_config *c, unsigned set, char *buf, size_t n) {
  buf[0] = '\0';
  for (int f = 0; f < PIT_CF_COUNT; f++) {
    char one[PIT_MEMBERSHIP_TEXT_MAX + 16];
    if ((set & PIT_CF_BIT(f)) && pit_config_field_label(c, f, one, sizeof one))
      label_add(buf, n, "%s", one);
  }
  if (!buf[0])
    snprintf(buf, n, "(no configuration recorded)");
}

/* The label of every key field but those named in skip ("itype nodes"). */
static void config_label(const struct pit_config *c, const char *skip, char *buf, size_t n) {
  label_of(c, pit_config_key_fields() & ~fields_named(skip), buf, n);
}

/* Labels the lines: the legend fields go to each line's legend entry, the
 * common fields once under the title; one line keeps its whole label (but
 * skip, the fields on the x axis) in the legend. Fields that change within a
 * line (threads following ranks on the scaling chart) are in neither. */
static void split_labels(struct gp *g, const struct lines *ln, const char *skip, char (*lab)[256]) {
  unsigned shown = pit_config_key_fields() & ~fields_named(skip);
  for (int l = 0; l < ln->n; l++)
    label_of(ln->cfg[l], ln->n > 1 ? ln->legend : shown & (ln->legend | ln->common), lab[l], sizeof lab[l]);
  if (ln->n > 1 && g->own_title) {
    char text[256];
    label_of(ln->cfg[0], ln->common, text, sizeof text);
    if (strcmp(text, "(no configuration recorded)") != 0) {
      snprintf(g->title_now, sizeof g->title_now, "%s\nall lines: %s", g->title, text);
      fputs("set title ", g->f);
      pit__gp_str(g->f, g->title_now);
      fputs(" font ',13'\n", g->f);
    }
  }
}

/* Configurations equal in every key field except those named in skip. */
static int same_config(const struct pit_config *a, const struct pit_config *b, const char *skip) {
  return pit_config_same(a, b, pit_config_key_fields() & ~fields_named(skip));
}

/* ---- steps: one run, step time per iteration, one line per epoch ---- */

#define STEPS_MAX_POINTS 1500  /* per line; beyond, lines show medians of consecutive iterations */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Data file 0 of the steps chart: blocks of "x y" per epoch (or one block),
 * y in the unit f; more iterations in a line than the picture has pixels:
 * each point is the median of *binp consecutive iterations. *xmax: the
 * largest x. */
static int steps_lines(struct gp *g, const struct pit_series *s, const int64_t *epochs, int nep, int byepoch,
                       double f, double *xmax, int64_t *binp, struct pit_err *e) {
  int64_t most = 0;
  for (int k = 0; k < (byepoch ? nep : 1); k++) {
    int64_t c = 0;
    for (int64_t i = 0; i < s->nit; i++)
      c += !(s->it[i].flags & PIT_IT_OTHER_RANK) && !isnan(s->it[i].step_s) && (!byepoch || s->it[i].epoch == epochs[k]);
    most = c > most ? c : most;
  }
  int64_t bin = most > STEPS_MAX_POINTS ? (most + STEPS_MAX_POINTS - 1) / STEPS_MAX_POINTS : 1;
  *binp = bin;
  double *ys = malloc(sizeof *ys * (size_t)bin);
  FILE *d = ys ? pit__gp_data(g, 0, e) : NULL;
  if (!d) {
    free(ys);
    return ys ? PIT_EIO : pit_err_set(e, PIT_ENOMEM, "out of memory");
  }
  /* d0: blocks of "x y" per epoch (or one block); d1: the iterations set aside */
  for (int k = 0; k < (byepoch ? nep : 1); k++) {
    int64_t nb = 0;
    double x0 = 0;
    for (int64_t i = 0; i <= s->nit; i++) {
      const struct pit_series_iter *it = i < s->nit ? &s->it[i] : NULL;
      if (it && ((it->flags & PIT_IT_OTHER_RANK) || isnan(it->step_s) || (byepoch && it->epoch != epochs[k])))
        continue;
      if (it) {
        double x = byepoch ? (double)it->iter : (double)(it->step >= 0 ? it->step : i);
        *xmax = fmax(*xmax, x);
        x0 = nb ? x0 : x;
        ys[nb++] = it->step_s * f;
      }
      if (nb && (nb == bin || !it)) { /* a full bin, or the last partial one */
        qsort(ys, (size_t)nb, sizeof *ys, cmp_double);
        fprintf(d, "%.17g %.9g\n", x0 + (double)(nb - 1) / 2 * (bin > 1), pit_quantile_sorted(ys, (size_t)nb, 0.5));
        nb = 0;
      }
    }
    fputs("\n\n", d);
  }
  free(ys);
  return pit__gp_close_data(d, g, e);
}

static int plot_steps(struct gp *g, const struct pit_runset *rs, struct pit_err *e) {
  const struct pit_report_run *run = &rs->runs[0];
  const struct pit_series *s = &run->series;
  const struct pit_summary *sm = &run->sum;
  int64_t epochs[MAX_SERIES];
  int nep = 0, byepoch = 1;
  double vmax = 0, xmax = 0;
  int64_t nshown = 0;
  for (int64_t i = 0; i < s->nit; i++) {
    const struct pit_series_iter *it = &s->it[i];
    if ((it->flags & PIT_IT_OTHER_RANK) || isnan(it->step_s))
      continue;
    nshown++;
    if (it->step_s > vmax)
      vmax = it->step_s;
    if (it->epoch < 0 || it->iter < 0)
      byepoch = 0;
    int k = 0;
    while (k < nep && epochs[k] != it->epoch)
      k++;
    if (k == nep && nep < MAX_SERIES)
      epochs[nep++] = it->epoch;
  }
  if (nshown == 0)
    return pit_err_set(e, PIT_ENOTFOUND, "run '%s' has no iteration with a step time", run->name);
  if (nep == MAX_SERIES)
    byepoch = 0; /* too many epochs for one line each: plot against the global step */
  const char *unit;
  double f = time_unit(isnan(sm->tp.mean) ? vmax : sm->tp.mean * 2, &unit);
  int64_t bin = 1;
  int rc = steps_lines(g, s, epochs, nep, byepoch, f, &xmax, &bin, e);
  if (rc)
    return rc;
  FILE *d;
  if (!(d = pit__gp_data(g, 1, e)))
    return PIT_EIO;
  int64_t aside = 0;
  for (int64_t i = 0; i < s->nit; i++) {
    const struct pit_series_iter *it = &s->it[i];
    if ((it->flags & PIT_IT_OTHER_RANK) || isnan(it->step_s) || !(it->flags & ~PIT_IT_OTHER_RANK))
      continue;
    double x = byepoch ? (double)it->iter : (double)(it->step >= 0 ? it->step : i);
    fprintf(d, "%.17g %.9g\n", x, it->step_s * f);
    aside++;
  }
  if (aside == 0)
    fputs("NaN NaN\n", d);
  if ((rc = pit__gp_close_data(d, g, e)))
    return rc;

  FILE *o = g->f;
  char lab[256];
  fprintf(o, "set xlabel '%s'\n", byepoch ? "iteration within the epoch" : "iteration (global step)");
  if (bin > 1)
    fprintf(o, "set ylabel 'step time per iteration [%s], median of every %lld iterations'\n", unit, (long long)bin);
  else
    fprintf(o, "set ylabel 'step time per iteration [%s]'\n", unit);
  /* A few slow iterations (the first, a checkpoint) must not flatten the steady
   * state: the y axis stops at 3x the 99th percentile of the steady iterations and
   * a note counts the iterations above it. */
  double ytop = NAN;
  int64_t above = 0;
  {
    int64_t ns = 0;
    double *st = malloc(sizeof *st * (size_t)s->nit);
    for (int64_t i = 0; st && i < s->nit; i++)
      if (s->it[i].flags == 0 && !isnan(s->it[i].step_s))
        st[ns++] = s->it[i].step_s;
    if (st && ns >= 10) {
      qsort(st, (size_t)ns, sizeof *st, cmp_double);
      double cap = 3 * pit_quantile_sorted(st, (size_t)ns, 0.99);
      if (vmax > cap) {
        ytop = cap;
        for (int64_t i = 0; i < s->nit; i++)
          above += !(s->it[i].flags & PIT_IT_OTHER_RANK) && s->it[i].step_s > cap;
      }
    }
    free(st);
  }
  fprintf(o, "set xrange [0:%.17g]\n", xmax > 0 ? xmax : 1);
  if (isnan(ytop)) {
    fputs("set yrange [0:*]\n", o);
  } else {
    fprintf(o, "set yrange [0:%.9g]\n", ytop * f);
    fprintf(o, "set label 1 '%lld iteration%s above the top of the chart (slowest %.4g %s)' at graph 0.01, graph 0.04 left front\n",
            (long long)above, above == 1 ? "" : "s", vmax * f, unit);
  }
  fputs("set key inside right top opaque box\n", o);
  int usepal = byepoch && nep > 10;
  if (usepal) {
    fprintf(o, "set palette defined (0 '#1f77b4', 1 '#2ca02c', 2 '#ff7f0e', 3 '#d62728')\n"
               "set cbrange [%lld:%lld]\nset cblabel 'epoch'\n",
            (long long)epochs[0], (long long)epochs[nep - 1] > (long long)epochs[0] ? (long long)epochs[nep - 1]
                                                                                  : (long long)epochs[0] + 1);
  }
  fputs("plot ", o);
  int first = 1;
  if (!isnan(sm->tp.lo) && !isnan(sm->tp.hi)) {
    fprintf(o, "'+' using 1:(%.9g):(%.9g) with filledcurves fs transparent solid 0.25 noborder lc rgb '#888888' title '95%% interval of t_p', ",
            sm->tp.lo * f, sm->tp.hi * f);
  }
  for (int k = 0; k < (byepoch ? nep : 1); k++) {
    fputs(first ? "" : ", ", o);
    first = 0;
    pit__gp_dataref(g, 0);
    fprintf(o, " index %d using 1:2", k);
    if (usepal && k)
      fprintf(o, ":(%lld) with lines lw 1.5 lc palette notitle", (long long)epochs[k]);
    else if (usepal)
      fprintf(o, ":(%lld) with lines lw 1.5 lc palette title 'epochs %lld to %lld: colour scale at the right'",
              (long long)epochs[k], (long long)epochs[0], (long long)epochs[nep - 1]);
    else if (byepoch)
      fprintf(o, " with lines lw 1.5 title 'epoch %lld'", (long long)epochs[k]);
    else
      fputs(" with lines lw 1.5 lc rgb '#1f77b4' title 'step time'", o);
  }
  fputs(", ", o);
  pit__gp_dataref(g, 1);
  fprintf(o, " using 1:2 with points pt 6 ps 0.8 lc rgb '#000000' title 'set aside (%lld: warm-up, epoch edges, near validation)'",
          (long long)aside);
  if (!isnan(sm->tp.mean)) {
    if (!isnan(sm->tp.half))
      snprintf(lab, sizeof lab, "t_p = %.4g ± %.2g %s (95%%, %lld steady iterations)", sm->tp.mean * f,
               sm->tp.half * f, unit, (long long)sm->tp.n);
    else
      snprintf(lab, sizeof lab, "t_p = %.4g %s (%lld steady iterations)", sm->tp.mean * f, unit, (long long)sm->tp.n);
    fprintf(o, ", %.9g with lines dt 2 lw 2.5 lc rgb '#000000' title ", sm->tp.mean * f);
    pit__gp_str(o, lab);
  }
  fputc('\n', o);
  return 0;
}

/* ---- batch: a time against global batch size, one line per configuration ---- */

static double metric_of(const struct pit_report_run *r, enum pit_plot_metric m) {
  switch (m) {
  case PIT_METRIC_TP:
    return r->sum.tp.mean;
  case PIT_METRIC_SAMPLE:
    return r->cfg.batch > 0 ? r->sum.tp.mean / (double)r->cfg.batch : NAN;
  case PIT_METRIC_TOTAL:
    return r->sum.total_s;
  }
  return NAN;
}

struct point {            /* one x of one line: statistics over its runs (the repeats) */
  int series;
  double x;
  struct pit_stats st;    /* from the analysis module */
  int n;
};

static struct point *point_of(struct point *pts, int *npts, int series, double x) {
  for (int i = 0; i < *npts; i++)
    if (pts[i].series == series && pts[i].x == x)
      return &pts[i];
  if (*npts == MAX_POINTS)
    return NULL;
  struct point *p = &pts[(*npts)++];
  memset(p, 0, sizeof *p);
  p->series = series;
  p->x = x;
  return p;
}

static int cmp_point(const void *a, const void *b) {
  const struct point *p = a, *q = b;
  if (p->series != q->series)
    return p->series - q->series;
  return (p->x > q->x) - (p->x < q->x);
}

static double pt_mean(const struct point *p) { return p->st.mean; }
/* Sample standard deviation over the repeats; 0 for a single run (no bar). */
static double pt_sd(const struct point *p) { return isnan(p->st.sd) ? 0 : p->st.sd; }

/* Groups runs into lines (see struct lines; skip: the fields on the x axis)
 * and points (x from xof) with the statistics of y from yof over each point's
 * runs. Returns the number of runs used, or a negative error: PIT_ENOTFOUND
 * with the message none when no run has both an x and a y. */
static int collect(const struct pit_runset *rs, const char *skip, double (*xof)(const struct pit_report_run *),
                   double (*yof)(const struct pit_report_run *, enum pit_plot_metric), enum pit_plot_metric m,
                   struct lines *ln, struct point *pts, int *npts, const char *none, struct pit_err *e) {
  int used = 0, rc = 0;
  ln->n = *npts = 0;
  double *ys = malloc(sizeof *ys * (size_t)(rs->n + 1)), *vals = malloc(sizeof *vals * (size_t)(rs->n + 1));
  int *at = malloc(sizeof *at * (size_t)(rs->n + 1));  /* point of each run (-1: not used) */
  const struct pit_config **cfgs = malloc(sizeof *cfgs * (size_t)(rs->n + 1)); /* of the runs used */
  if (!ys || !vals || !at || !cfgs)
    rc = pit_err_set(e, PIT_ENOMEM, "out of memory");
  for (int i = 0; i < rs->n && !rc; i++) {
    ys[i] = yof(&rs->runs[i], m);
    at[i] = -1;
    double x = xof(&rs->runs[i]);
    if (x > 0 && !isnan(ys[i]) && !isinf(ys[i]))
      cfgs[used++] = &rs->runs[i].cfg;
  }
  unsigned shown = pit_config_key_fields() & ~fields_named(skip);
  ln->split = rc ? 0 : pit_config_varied(cfgs, used, shown);
  ln->common = shown & ~(rc ? 0 : pit_config_differing(cfgs, used, shown));
  ln->legend = shown & ~ln->common;
  used = 0;
  for (int i = 0; i < rs->n && !rc; i++) {
    const struct pit_report_run *r = &rs->runs[i];
    double x = xof(r);
    if (!(x > 0) || isnan(ys[i]) || isinf(ys[i]))
      continue;
    int l = 0;
    while (l < ln->n && !pit_config_same(ln->cfg[l], &r->cfg, ln->split))
      l++;
    if (l == ln->n) {
      if (l == MAX_SERIES) {
        rc = pit_err_set(e, PIT_EARG, "more than %d configurations for one chart; choose runs with --run", MAX_SERIES);
        break;
      }
      ln->cfg[ln->n++] = &r->cfg;
    }
    /* a field that changes within a line is no name for the line */
    for (int f = 0; f < PIT_CF_COUNT; f++)
      if (!pit_config_field_equal(ln->cfg[l], &r->cfg, f))
        ln->legend &= ~PIT_CF_BIT(f);
    struct point *p = point_of(pts, npts, l, x);
    if (!p) {
      rc = pit_err_set(e, PIT_EARG, "more than %d points for one chart; choose runs with --run", MAX_POINTS);
      break;
    }
    at[i] = (int)(p - pts);
    p->n++;
    used++;
  }
  for (int k = 0; k < *npts && !rc; k++) {
    size_t nv = 0;
    for (int i = 0; i < rs->n; i++)
      if (at[i] == k)
        vals[nv++] = ys[i];
    if (pit_stats_compute(&pts[k].st, vals, nv))
      rc = pit_err_set(e, PIT_ENOMEM, "out of memory");
  }
  free(ys);
  free(vals);
  free(at);
  free(cfgs);
  if (rc)
    return rc;
  if (used == 0)
    return pit_err_set(e, PIT_ENOTFOUND, "%s", none);
  qsort(pts, (size_t)*npts, sizeof *pts, cmp_point);
  return used;
}

static double x_batch(const struct pit_report_run *r) { return (double)r->cfg.batch; }
static double x_ranks(const struct pit_report_run *r) { return (double)r->cfg.ranks; }

/* "set xtics (16, 64, 256)" over the distinct x values; a log2 axis when they span 8x or more. */
static void xtics_of(FILE *o, const struct point *pts, int npts) {
  double xs[MAX_POINTS];
  int nx = 0;
  double lo = INFINITY, hi = 0;
  for (int i = 0; i < npts; i++) {
    int k = 0;
    while (k < nx && xs[k] != pts[i].x)
      k++;
    if (k == nx)
      xs[nx++] = pts[i].x;
    lo = fmin(lo, pts[i].x);
    hi = fmax(hi, pts[i].x);
  }
  if (hi >= 8 * lo) {
    fprintf(o, "set logscale x 2\nset xrange [%.17g:%.17g]\n", lo / 1.25, hi * 1.25);
  } else {
    double pad = hi > lo ? (hi - lo) * 0.08 : (lo > 1 ? 1 : 0.5);
    fprintf(o, "set xrange [%.17g:%.17g]\n", lo - pad, hi + pad);
  }
  if (nx <= 24) {
    fputs("set xtics (", o);
    for (int k = 0; k < nx; k++)
      fprintf(o, "%s%.17g", k ? ", " : "", xs[k]);
    fputs(")\n", o);
  }
}

static int write_points(struct gp *g, const struct point *pts, int npts, int nlines, double f,
                        struct pit_err *e) {
  FILE *d = pit__gp_data(g, 0, e);
  if (!d)
    return PIT_EIO;
  for (int l = 0; l < nlines; l++) {
    for (int i = 0; i < npts; i++)
      if (pts[i].series == l)
        fprintf(d, "%.17g %.9g %.9g %d\n", pts[i].x, pt_mean(&pts[i]) * f, pt_sd(&pts[i]) * f, pts[i].n);
    fputs("\n\n", d);
  }
  return pit__gp_close_data(d, g, e);
}

static int plot_batch(struct gp *g, const struct pit_runset *rs, enum pit_plot_metric m, struct pit_err *e) {
  struct lines ln;
  struct point pts[MAX_POINTS];
  int npts;
  int used = collect(rs, "batch", x_batch, metric_of, m, &ln, pts, &npts,
                     m == PIT_METRIC_TOTAL ? "batch chart: no run has both a batch size and a total time"
                                           : "batch chart: no run has both a batch size and a PIT time "
                                             "(too few iterations?)",
                     e);
  int nlines = ln.n;
  if (used < 0)
    return used;
  double vmax = 0;
  int maxrep = 0;
  for (int i = 0; i < npts; i++) {
    vmax = fmax(vmax, pt_mean(&pts[i]) + pt_sd(&pts[i]));
    maxrep = pts[i].n > maxrep ? pts[i].n : maxrep;
  }
  const char *unit;
  double f = time_unit(vmax, &unit);
  int rc = write_points(g, pts, npts, nlines, f, e);
  if (rc)
    return rc;
  FILE *o = g->f;
  static const char *what[] = {"t_p, steady-state time per iteration", "time per sample (t_p / global batch)",
                               "total run time"};
  fputs("set xlabel 'global batch size [samples per iteration]'\n", o);
  fprintf(o, "set ylabel '%s [%s]'\n", what[m], unit);
  fprintf(o, "set yrange [0:*]\nset offsets 0, 0, graph 0.1, 0\nset key below box\nset bars 2\nset bmargin %d\n",
          5 + (nlines + 1) / 2);
  xtics_of(o, pts, npts);
  char sub[128];
  snprintf(sub, sizeof sub, "%s", maxrep > 1 ? "points: mean over the repeated runs; bars: ±1 sd over the repeats"
                                             : "one run per point (no repeats, so no error bars)");
  fputs("set label 1 ", o);
  pit__gp_str(o, sub);
  fputs(" at graph 0.01, graph 0.97 left front font ',10'\n", o);
  char lab[MAX_SERIES][256];
  split_labels(g, &ln, "batch", lab);
  fputs("plot ", o);
  for (int l = 0; l < nlines; l++) {
    fputs(l ? ", " : "", o);
    pit__gp_dataref(g, 0);
    fprintf(o, " index %d using 1:2:3 with yerrorlines lw 2 pt 7 ps 1.2 title ", l);
    pit__gp_str(o, lab[l]);
  }
  fputc('\n', o);
  return 0;
}

/* ---- scaling: speedup and parallel efficiency against ranks ---- */

/* Throughput of a run: samples (or iterations, without a batch size) per second at t_p. */
static double throughput(const struct pit_report_run *r, enum pit_plot_metric m) {
  (void)m;
  double tp = r->sum.tp.mean;
  if (!(tp > 0))
    return NAN;
  return (r->cfg.batch > 0 ? (double)r->cfg.batch : 1) / tp;
}

static int plot_scaling(struct gp *g, const struct pit_runset *rs, struct pit_err *e) {
  struct lines ln;
  struct point pts[MAX_POINTS];
  int npts;
  int used = collect(rs, "ranks nodes", x_ranks, throughput, PIT_METRIC_TP, &ln, pts, &npts,
                     "scaling chart: no run has both a rank count and a PIT time", e);
  int nlines = ln.n;
  if (used < 0)
    return used;
  FILE *d = pit__gp_data(g, 0, e);
  if (!d)
    return PIT_EIO;
  double base_ranks_first = -1, smax = 1, rmax = 1;
  for (int l = 0; l < nlines; l++) {
    const struct point *base = NULL;
    for (int i = 0; i < npts; i++)
      if (pts[i].series == l && (!base || pts[i].x < base->x))
        base = &pts[i];
    if (base_ranks_first < 0)
      base_ranks_first = base->x;
    for (int i = 0; i < npts; i++) {
      if (pts[i].series != l)
        continue;
      double sp = pt_mean(&pts[i]) / pt_mean(base);
      double eff = 100 * sp / (pts[i].x / base->x);
      smax = fmax(smax, sp);
      rmax = fmax(rmax, pts[i].x);
      fprintf(d, "%.17g %.9g %.9g %.9g %d\n", pts[i].x, sp, eff, pt_mean(&pts[i]), pts[i].n);
    }
    fputs("\n\n", d);
  }
  int rc = pit__gp_close_data(d, g, e);
  if (rc)
    return rc;
  FILE *o = g->f;
  char lab[MAX_SERIES][256];
  split_labels(g, &ln, "ranks nodes", lab); /* may extend the title: read back below */
  fputs("set multiplot layout 1,2 title ", o);
  pit__gp_str(o, g->title_now);
  fprintf(o, " font ',13'\nunset title\nset bmargin %d\n", 5 + nlines + 1);
  fputs("set xlabel 'ranks (processes)'\nset key below box\n", o);
  xtics_of(o, pts, npts);
  if (base_ranks_first > 0)
    fprintf(o, "set ylabel 'speedup over %g rank%s [x]'\n", base_ranks_first, base_ranks_first == 1 ? "" : "s");
  fprintf(o, "set yrange [0:%.9g]\n", fmax(smax, rmax / (base_ranks_first > 0 ? base_ranks_first : 1)) * 1.1);
  fputs("plot ", o);
  for (int l = 0; l < nlines; l++) {
    fputs(l ? ", " : "", o);
    pit__gp_dataref(g, 0);
    fprintf(o, " index %d using 1:2 with linespoints lw 2 pt 7 ps 1.2 lc %d title ", l, l + 1);
    pit__gp_str(o, lab[l]);
  }
  fprintf(o, ", x / %.17g with lines dt 2 lc rgb '#000000' title 'ideal (linear)'\n",
          base_ranks_first > 0 ? base_ranks_first : 1);
  fputs("set ylabel 'parallel efficiency [%]'\nset yrange [0:115]\nset key below box\nplot ", o);
  for (int l = 0; l < nlines; l++) {
    fputs(l ? ", " : "", o);
    pit__gp_dataref(g, 0);
    fprintf(o, " index %d using 1:3 with linespoints lw 2 pt 7 ps 1.2 lc %d notitle", l, l + 1);
  }
  fputs(", 100 with lines dt 2 lc rgb '#000000' title 'ideal (100%)'\nunset multiplot\n", o);
  return 0;
}

/* ---- cost: samples per dollar per configuration ---- */

struct bar {
  char label[256];
  double v, lo, hi;   /* samples per dollar and its range from t_p's interval */
};

static int cmp_bar(const void *a, const void *b) {
  const struct bar *p = a, *q = b;
  return (p->v < q->v) - (p->v > q->v);
}

/* The membership a run is priced as: its own, else --itype on its node count. */
static int cost_members(const struct pit_report_run *r, const struct pit_plot_opts *opt, struct pit_config *c,
                        struct pit_err *e) {
  if (c->members.n == 0) {
    if (!opt->itype) {
      pit_err_set(e, PIT_EARG, "cost chart: run '%s' names no instance type", r->name);
      pit_err_hint(e, "price such runs as one catalog type with --itype NAME (or train with --itype)");
      return PIT_EARG;
    }
    int nodes = c->nodes > 0 ? c->nodes : 1;
    if (strpbrk(opt->itype, ":+")) { /* a whole membership */
      if (pit_membership_parse(&c->members, opt->itype, e))
        return PIT_EARG;
      pit_membership_format(&c->members, c->itype, sizeof c->itype);
    } else if (pit_membership_add(&c->members, opt->itype, nodes,
                                  c->ranks > 0 && c->ranks % nodes == 0 ? c->ranks / nodes : -1, e)) {
      return PIT_EARG;
    } else {
      snprintf(c->itype, sizeof c->itype, "%s", opt->itype);
    }
  }
  for (int i = 0; i < c->members.n; i++)
    if (!pit_catalog_find(opt->catalog, c->members.m[i].itype))
      return pit_err_set(e, PIT_ENOTFOUND, "cost chart: instance type '%s' (run '%s') is not in the catalog",
                         c->members.m[i].itype, r->name);
  return 0;
}

static int plot_cost(struct gp *g, const struct pit_runset *rs, const struct pit_plot_opts *opt, struct pit_err *e) {
  if (!opt->catalog)
    return pit_err_set(e, PIT_EARG, "cost chart: no price catalog given");
  double job_s = opt->job_s > 0 ? opt->job_s : 3600;
  struct pit_series grp[MAX_SERIES];
  struct pit_config cfgs[MAX_SERIES];
  int ng = 0, rc = 0;
  for (int i = 0; i < rs->n && !rc; i++) {
    const struct pit_report_run *r = &rs->runs[i];
    /* an elastic run: each membership's generations priced as that membership */
    for (int part = 0; part < pit_series_parts(&r->series) && !rc; part++) {
      const struct pit_series_seg *seg = pit_series_part(&r->series, part);
      struct pit_config c = seg ? seg->cfg : r->cfg;
      if ((rc = cost_members(r, opt, &c, e)))
        break;
      if (c.batch < 1) {
        rc = pit_err_set(e, PIT_EARG, "cost chart: run '%s' has no global batch size", r->name);
        break;
      }
      int k = 0;
      while (k < ng && !same_config(&cfgs[k], &c, ""))
        k++;
      if (k == ng) {
        if (ng == MAX_SERIES) {
          rc = pit_err_set(e, PIT_EARG, "more than %d configurations for one chart; choose runs with --run",
                           MAX_SERIES);
          break;
        }
        cfgs[ng] = c;
        pit_series_init(&grp[ng++]);
      }
      rc = pit_series_append_part(&grp[k], &r->series, part, e);
    }
  }
  struct bar bars[MAX_SERIES];
  int nb = 0;
  for (int k = 0; k < ng && !rc; k++) {
    struct pit_summary sm;
    memset(&sm, 0, sizeof sm);
    rc = pit_series_summarize(&grp[k], &sm, e);
    if (rc)
      break;
    if (sm.tp.mean > 0) {
      const struct pit_membership *m = &cfgs[k].members;
      double bt = (double)cfgs[k].batch;
      struct bar *b = &bars[nb];
      rc = pit_catalog_samples_per_dollar(opt->catalog, m, sm.tp.mean, bt, job_s, &b->v, e);
      b->lo = b->hi = b->v;
      if (!rc && sm.tp.hi > 0)
        rc = pit_catalog_samples_per_dollar(opt->catalog, m, sm.tp.hi, bt, job_s, &b->lo, e);
      if (!rc && sm.tp.lo > 0)
        rc = pit_catalog_samples_per_dollar(opt->catalog, m, sm.tp.lo, bt, job_s, &b->hi, e);
      char cl[200];
      config_label(&cfgs[k], "itype nodes", cl, sizeof cl);
      if (m->n == 1)
        snprintf(b->label, sizeof b->label, "%s x%d: %s", m->m[0].itype, m->m[0].nodes, cl);
      else
        snprintf(b->label, sizeof b->label, "%s: %s", cfgs[k].itype, cl);
      nb += !rc;
    }
    pit_summary_release(&sm);
  }
  for (int k = 0; k < ng; k++)
    pit_series_release(&grp[k]);
  if (rc)
    return rc;
  if (nb == 0)
    return pit_err_set(e, PIT_ENOTFOUND, "cost chart: no run has a PIT time (too few iterations?)");
  qsort(bars, (size_t)nb, sizeof *bars, cmp_bar);
  /* horizontal bars, the cheapest configuration on top: d0 rows "y value lo hi" */
  FILE *d = pit__gp_data(g, 0, e);
  if (!d)
    return PIT_EIO;
  double vmax = 0;
  for (int k = 0; k < nb; k++) {
    fprintf(d, "%d %.9g %.9g %.9g\n", nb - 1 - k, bars[k].v, bars[k].lo, bars[k].hi);
    vmax = fmax(vmax, bars[k].hi);
  }
  if ((rc = pit__gp_close_data(d, g, e)))
    return rc;
  FILE *o = g->f;
  fputs("set xlabel ", o);
  char xl[300];
  snprintf(xl, sizeof xl,
           "samples per US$ over a %g h job = (job time / t_p) x global batch / cost of the job\n"
           "(cost: nodes x on-demand price x billed seconds; higher is cheaper; black bars: 95%% interval of t_p)",
           job_s / 3600);
  pit__gp_str(o, xl);
  fputs("\nunset key\nset rmargin 6\n", o);
  fprintf(o, "set yrange [-0.6:%.1f]\nset xrange [0:%.9g]\nset format x '%%.1s%%c'\n", nb - 0.4, vmax * 1.2);
  fputs("set style fill solid 0.6 border -1\nset grid xtics noytics\n", o);
  fputs("set ytics nomirror (", o);
  for (int k = 0; k < nb; k++) {
    fputs(k ? ", " : "", o);
    pit__gp_str(o, bars[k].label);
    fprintf(o, " %d", nb - 1 - k);
  }
  fputs(")\nplot ", o);
  pit__gp_dataref(g, 0);
  fputs(" using (0):1:(0):2:($1-0.3):($1+0.3) with boxxyerror lc rgb '#4c72b0' title 'samples per dollar', ", o);
  pit__gp_dataref(g, 0);
  fputs(" using 2:1:3:4 with xerrorbars lc rgb '#000000' pt 0 notitle, ", o);
  pit__gp_dataref(g, 0);
  fputs(" using 4:1:(gprintf('%.1s%c', $2)) with labels left offset 1,0 notitle\n", o);
  return 0;
}

/* *svg from o->out's extension (.svg or .png). */
int pit_plot(const struct pit_runset *rs, const struct pit_plot_opts *o, struct pit_err *e) {
  int svg = 0;
  int rc0 = pit__gp_out_format(o, &svg, e);
  if (rc0)
    return rc0;
  if (rs->n == 0)
    return pit_err_set(e, PIT_ENOTFOUND, "no runs to plot");
  if (o->kind == PIT_PLOT_STEPS && rs->n > 1) {
    char names[200] = "";
    size_t off = 0;
    for (int i = 0; i < rs->n && off < sizeof names - 1; i++)
      off += (size_t)snprintf(names + off, sizeof names - off, "%s'%s'", i ? ", " : "", rs->runs[i].name);
    pit_err_set(e, PIT_EARG, "the steps chart shows one run, and there are %d: %s", rs->n, names);
    pit_err_hint(e, "choose one with --run ID");
    return PIT_EARG;
  }
  char title[512];
  char cl[256];
  switch (o->kind) {
  case PIT_PLOT_STEPS:
    config_label(&rs->runs[0].cfg, "", cl, sizeof cl);
    snprintf(title, sizeof title, "Step time per iteration, run %s\n%s", rs->runs[0].name, cl);
    break;
  case PIT_PLOT_BATCH:
    snprintf(title, sizeof title, "%s against global batch size",
             o->metric == PIT_METRIC_TOTAL ? "Total run time" : o->metric == PIT_METRIC_SAMPLE ? "Time per sample" : "Time per iteration (t_p)");
    break;
  case PIT_PLOT_SCALING:
    snprintf(title, sizeof title, "Scaling with ranks: speedup (left) and parallel efficiency (right)\n"
                                  "throughput = global batch / t_p, relative to the fewest ranks measured");
    break;
  case PIT_PLOT_COST:
    snprintf(title, sizeof title, "Samples per dollar by configuration");
    break;
  }
  struct gp g;
  int rc = pit__gp_open(&g, o, svg, title, e);
  if (!rc) {
    switch (o->kind) {
    case PIT_PLOT_STEPS:
      rc = plot_steps(&g, rs, e);
      break;
    case PIT_PLOT_BATCH:
      rc = plot_batch(&g, rs, o->metric, e);
      break;
    case PIT_PLOT_SCALING:
      rc = plot_scaling(&g, rs, e);
      break;
    case PIT_PLOT_COST:
      rc = plot_cost(&g, rs, o, e);
      break;
    }
  }
  if (!rc)
    rc = pit__gp_run(&g, o, e);
  pit__gp_cleanup(&g);
  return rc;
}

