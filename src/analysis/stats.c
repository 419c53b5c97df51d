/* stats.c — descriptive statistics: count, sum, mean, median, sample standard
 * deviation, min, max, p5, p95. Quantiles are Hyndman & Fan type 7 (linear
 * interpolation between order statistics; R's and NumPy's default).
 * Invariant: NaN and infinite inputs are skipped (a time of inf is garbage); the input array is never modified. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pitstop/analysis.h"

double pit_quantile_sorted(const double *x, size_t n, double p) {
  if (n == 0)
    return NAN;
  if (p <= 0)
    return x[0];
  if (p >= 1)
    return x[n - 1];
  double h = (double)(n - 1) * p;
  size_t lo = (size_t)floor(h);
  if (lo + 1 >= n)
    return x[n - 1];
  return x[lo] + (h - (double)lo) * (x[lo + 1] - x[lo]);
}

void pit_stats_clear(struct pit_stats *st) {
  st->n = 0;
  st->sum = st->mean = st->median = st->sd = st->min = st->max = st->p5 = st->p95 = NAN;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int pit_stats_compute(struct pit_stats *st, const double *x, size_t n) {
  pit_stats_clear(st);
  double *v = malloc(sizeof(double) * (n ? n : 1));
  if (!v)
    return PIT_ENOMEM;
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    if (isfinite(x[i]))
      v[m++] = x[i];
  if (m > 0) {
    qsort(v, m, sizeof *v, cmp_double);
    /* two-pass mean and variance (no cancellation for times of similar size) */
    double sum = 0;
    for (size_t i = 0; i < m; i++)
      sum += v[i];
    double mean = sum / (double)m;
    st->n = (int64_t)m;
    st->sum = sum;
    st->mean = mean;
    st->min = v[0];
    st->max = v[m - 1];
    st->median = pit_quantile_sorted(v, m, 0.5);
    st->p5 = pit_quantile_sorted(v, m, 0.05);
    st->p95 = pit_quantile_sorted(v, m, 0.95);
    if (m > 1) {
      double ss = 0;
      for (size_t i = 0; i < m; i++)
        ss += (v[i] - mean) * (v[i] - mean);
      st->sd = sqrt(ss / (double)(m - 1));
    }
  }
  free(v);
  return 0;
}
