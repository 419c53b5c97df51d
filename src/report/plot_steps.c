/* plot_steps.c — pitstop plot's steps chart: one run's step time per
 * iteration, one line per epoch (or one against the global step), medians of
 * consecutive iterations when a line has more than the picture's pixels, the
 * iterations set aside marked, t_p and its interval drawn. docs/plot.md.
 * Invariants: the y axis is capped at 3x the steady iterations' 99th
 * percentile, with a note counting the iterations above it; texts reach the
 * script only through pit__gp_str. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pitstop/analysis.h"
#include "report/plot_impl.h"

/* ---- steps: one run, step time per iteration, one line per epoch ---- */

#define STEPS_MAX_POINTS 1500  /* per line; beyond, lines show medians of consecutive iterations */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The step chart's lines (data block 0): per epoch (byepoch) or one, x against
 * the step time in the unit of factor f, medians of *bin consecutive iterations
 * when a line has more than STEPS_MAX_POINTS; *xmax the largest x. */
static int steps_lines(struct gp *g, const struct pit_series *s, const int64_t *epochs, int nep, int byepoch,
                       double f, int64_t *binp, double *xmaxp, struct pit_err *e) {
  double xmax = 0;
  /* More iterations in a line than the picture has pixels: each point of the
   * line is the median of `bin` consecutive iterations. */
  int64_t most = 0;
  for (int k = 0; k < (byepoch ? nep : 1); k++) {
    int64_t c = 0;
    for (int64_t i = 0; i < s->nit; i++)
      c += !(s->it[i].flags & PIT_IT_OTHER_RANK) && !isnan(s->it[i].step_s) && (!byepoch || s->it[i].epoch == epochs[k]);
    most = c > most ? c : most;
  }
  int64_t bin = most > STEPS_MAX_POINTS ? (most + STEPS_MAX_POINTS - 1) / STEPS_MAX_POINTS : 1;
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
        xmax = fmax(xmax, x);
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
  *binp = bin;
  *xmaxp = xmax;
  return pit__gp_close_data(d, g, e);
}

/* The iterations set aside (warm-up, epoch edges, near validation; data block 1):
 * *asidep how many. */
static int steps_aside(struct gp *g, const struct pit_series *s, int byepoch, double f, int64_t *asidep,
                       struct pit_err *e) {
  FILE *d = pit__gp_data(g, 1, e);
  if (!d)
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
  *asidep = aside;
  return pit__gp_close_data(d, g, e);
}

/* A few slow iterations (the first, a checkpoint) must not flatten the steady
 * state: the y axis stops at 3x the 99th percentile of the steady iterations
 * (*ytop, NaN: no cap) and *above counts the iterations above it. */
static void steps_ytop(const struct pit_series *s, double vmax, double *ytop, int64_t *above) {
  *ytop = NAN;
  *above = 0;
  int64_t ns = 0;
  double *st = malloc(sizeof *st * (size_t)s->nit);
  for (int64_t i = 0; st && i < s->nit; i++)
    if (s->it[i].flags == 0 && !isnan(s->it[i].step_s))
      st[ns++] = s->it[i].step_s;
  if (st && ns >= 10) {
    qsort(st, (size_t)ns, sizeof *st, cmp_double);
    double cap = 3 * pit_quantile_sorted(st, (size_t)ns, 0.99);
    if (vmax > cap) {
      *ytop = cap;
      for (int64_t i = 0; i < s->nit; i++)
        *above += !(s->it[i].flags & PIT_IT_OTHER_RANK) && s->it[i].step_s > cap;
    }
  }
  free(st);
}

int pit__plot_steps(struct gp *g, const struct pit_runset *rs, struct pit_err *e) {
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
  double f = pit__time_unit(isnan(sm->tp.mean) ? vmax : sm->tp.mean * 2, &unit);
  int64_t bin = 1;
  int rc = steps_lines(g, s, epochs, nep, byepoch, f, &bin, &xmax, e);
  if (rc)
    return rc;
  int64_t aside = 0;
  if ((rc = steps_aside(g, s, byepoch, f, &aside, e)))
    return rc;

  FILE *o = g->f;
  char lab[256];
  fprintf(o, "set xlabel '%s'\n", byepoch ? "iteration within the epoch" : "iteration (global step)");
  if (bin > 1)
    fprintf(o, "set ylabel 'step time per iteration [%s], median of every %lld iterations'\n", unit, (long long)bin);
  else
    fprintf(o, "set ylabel 'step time per iteration [%s]'\n", unit);
  double ytop;
  int64_t above;
  steps_ytop(s, vmax, &ytop, &above);
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
