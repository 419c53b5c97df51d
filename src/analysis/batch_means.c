/* batch_means.c — 95% confidence interval for the mean of an autocorrelated
 * series (iteration times) by non-overlapping batch means. Batch means of
 * long enough batches are nearly independent, so a t interval over them holds
 * where the naive interval (which assumes independent iterations) is too
 * narrow. Batches: PIT_BM_BATCHES (20) of floor(n/20) when n >= 40, else
 * floor(n/2) batches of 2; leading leftovers are in no batch (they are the
 * observations closest to the warm-up). See analysis.h. */
#include <math.h>

#include "pitstop/analysis.h"

int pit_batch_means(const double *x, size_t n, struct pit_interval *ci) {
  ci->n = (int64_t)n;
  ci->mean = ci->lo = ci->hi = ci->half = NAN;
  ci->nbatches = 0;
  ci->batch_size = 0;
  if (n == 0)
    return 0;
  double sum = 0;
  for (size_t i = 0; i < n; i++)
    sum += x[i];
  ci->mean = sum / (double)n;
  if (n < 4)
    return 0;
  size_t k, b;
  if (n >= 2 * PIT_BM_BATCHES) {
    k = PIT_BM_BATCHES;
    b = n / k;
  } else {
    k = n / 2;
    b = 2;
  }
  size_t skip = n - k * b;
  double zs = 0, zss = 0;
  double zm[2 * PIT_BM_BATCHES]; /* k <= 2 * PIT_BM_BATCHES - 1 in both cases */
  for (size_t j = 0; j < k; j++) {
    double s = 0;
    for (size_t i = 0; i < b; i++)
      s += x[skip + j * b + i];
    zm[j] = s / (double)b;
    zs += zm[j];
  }
  double zbar = zs / (double)k;
  for (size_t j = 0; j < k; j++)
    zss += (zm[j] - zbar) * (zm[j] - zbar);
  double sd = sqrt(zss / (double)(k - 1));
  double half = pit_t_quantile(0.975, (int)k - 1) * sd / sqrt((double)k);
  ci->half = half;
  ci->lo = ci->mean - half;
  ci->hi = ci->mean + half;
  ci->nbatches = (int)k;
  ci->batch_size = (int64_t)b;
  return 0;
}
