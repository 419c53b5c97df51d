/* warmup.c — the warm-up pitstop reports (pit_warmup) and the slow drift of
 * the steady state (pit_drift); definitions in docs/analysis.md.
 *
 * Why not MSER-5 alone: MSER minimises the standard error of what is left, so
 * on a long noisy run a few isolated spikes (an OS hiccup, the iterations
 * after a validation) or a slow level change make it cut up to half the run
 * (a 22,500-iteration cnn run was cut at 7,500–9,190 iterations although only
 * its first handful were slow). Here warm-up means: leading iterations that
 * are slower than the steady state's own spread. Spikes and drift are not.
 *
 * Rule (m = PIT_MSER_BATCH = 5): batch medians z_0..z_{k-1} of m consecutive
 * values (robust to single spikes); the reference is the second half of the
 * batches, z_{k/2..k-1}: its median M and robust spread s = 1.4826 · median
 * |z − M| (the sd for normal noise). The warm-up ends at the first batch j
 * (j <= k/2) with z_j <= M + 3s and median(z_j..z_{j+3}) <= M + 1.5s (the
 * batch, and the next few together, look steady: a steady batch fails either
 * test with probability under 1%); m·j values are dropped. k < 4: nothing is
 * dropped.
 *
 * Drift: ordinary least squares of the batch medians on the index of their
 * middle value (5j + 2), slope / mean of x — the relative change of the step
 * time per iteration — and the slope's standard error (residual variance /
 * Σ(dx)², over the mean too). Fewer than 4 batches: NaN.
 *
 * Invariants: pit_warmup returns a multiple of m that is at most m·(k/2);
 * neither function modifies x; allocation failure is reported, never hidden. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pitstop/analysis.h"

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median_of(const double *v, size_t n, double *tmp) {
  memcpy(tmp, v, sizeof(double) * n);
  qsort(tmp, n, sizeof(double), cmp_d);
  return pit_quantile_sorted(tmp, n, 0.5);
}

/* z[j] = median of x[m j .. m j + m). Returns k, or -1 on allocation failure. */
static long batch_medians(const double *x, size_t n, size_t m, double **z) {
  size_t k = n / m;
  *z = malloc(sizeof(double) * (k ? k : 1));
  double *tmp = malloc(sizeof(double) * m);
  if (!*z || !tmp) {
    free(*z);
    free(tmp);
    *z = NULL;
    return -1;
  }
  for (size_t j = 0; j < k; j++)
    (*z)[j] = median_of(x + j * m, m, tmp);
  free(tmp);
  return (long)k;
}

#define WARMUP_AHEAD 4 /* batches that must look steady together */

int pit_warmup(const double *x, size_t n, size_t *drop) {
  const size_t m = PIT_MSER_BATCH;
  *drop = 0;
  double *z;
  long kk = batch_medians(x, n, m, &z);
  if (kk < 0)
    return PIT_ENOMEM;
  size_t k = (size_t)kk;
  if (k < 4) {
    free(z);
    return 0;
  }
  size_t h = k / 2, nt = k - h;
  /* tail: scratch for medians; dev: |z - M| of the second half */
  double *tail = malloc(sizeof(double) * (nt > WARMUP_AHEAD ? nt : WARMUP_AHEAD)), *dev = malloc(sizeof(double) * nt);
  if (!tail || !dev) {
    free(tail);
    free(dev);
    free(z);
    return PIT_ENOMEM;
  }
  double mid = median_of(z + h, nt, tail);
  for (size_t i = 0; i < nt; i++)
    dev[i] = fabs(z[h + i] - mid);
  double spread = 1.4826 * median_of(dev, nt, tail);
  double one = mid + 3 * spread, ahead = mid + 1.5 * spread;
  size_t j = 0;
  for (; j < h; j++) {
    if (z[j] > one)
      continue;
    size_t w = k - j < WARMUP_AHEAD ? k - j : WARMUP_AHEAD;
    if (median_of(z + j, w, tail) <= ahead)
      break;
  }
  *drop = j * m;
  free(dev);
  free(tail);
  free(z);
  return 0;
}

int pit_drift(const double *x, size_t n, double *drift, double *se) {
  const size_t m = PIT_MSER_BATCH;
  *drift = NAN;
  if (se)
    *se = NAN;
  double *z;
  long kk = batch_medians(x, n, m, &z);
  if (kk < 0)
    return PIT_ENOMEM;
  size_t k = (size_t)kk;
  if (k >= 4) {
    double sx = 0, sy = 0, mean = 0;
    for (size_t j = 0; j < k; j++) {
      sx += (double)(m * j + 2);
      sy += z[j];
    }
    for (size_t i = 0; i < n; i++)
      mean += x[i];
    mean /= (double)n;
    double xb = sx / (double)k, yb = sy / (double)k, sxy = 0, sxx = 0;
    for (size_t j = 0; j < k; j++) {
      double dx = (double)(m * j + 2) - xb;
      sxy += dx * (z[j] - yb);
      sxx += dx * dx;
    }
    if (mean > 0) {
      double b = sxy / sxx, rss = 0;
      for (size_t j = 0; j < k; j++) {
        double r = z[j] - yb - b * ((double)(m * j + 2) - xb);
        rss += r * r;
      }
      *drift = b / mean;
      /* widened by t(k−2)/z: the callers' "2·se" is then a 95% half-width
       * even for a few batches (4 batches: t(2) = 4.30, not 1.96) */
      if (se)
        *se = sqrt(rss / (double)(k - 2) / sxx) / mean * pit_t_quantile(0.975, (int)k - 2) / 1.959964;
    }
  }
  free(z);
  return 0;
}
