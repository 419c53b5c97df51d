/* mser.c — MSER-m warm-up truncation (White 1997; Franklin & White 2008).
 * The series is averaged in non-overlapping batches of m (a trailing partial
 * batch is ignored); the truncation point d (in batches, 0 <= d <= k/2) that
 * minimises the squared standard error of the remaining batch means,
 * Σ_{j>d} (Z_j − Z̄_d)² / (k − d)², is chosen; the smallest d wins ties.
 * Invariant: the count dropped is a multiple of m and at most half the
 * series; running out of memory is an error, never "no warm-up" (which
 * would silently change t_p). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "pitstop/analysis.h"

int pit_mser(const double *x, size_t n, size_t m, size_t *drop, struct pit_err *e) {
  *drop = 0;
  if (m == 0)
    m = 1;
  size_t k = n / m;
  if (k < 4)
    return 0;
  /* z[0..k): batch means; mse[0..k]: each candidate's MSER */
  if (k > (SIZE_MAX / sizeof(double) - 1) / 2)
    return pit_err_set(e, PIT_ENOMEM, "out of memory (warm-up truncation of %zu batches)", k);
  double *z = malloc(sizeof(double) * (2 * k + 1));
  if (!z)
    return pit_err_set(e, PIT_ENOMEM, "out of memory (warm-up truncation of %zu batches)", k);
  double *mse = z + k;
  for (size_t j = 0; j < k; j++) {
    double s = 0;
    for (size_t i = 0; i < m; i++)
      s += x[j * m + i];
    z[j] = s / (double)m;
  }
  /* suffix sums give each candidate's mean and sum of squares in O(1):
   * Σ(Z − Z̄)² = Σ Z² − (Σ Z)² / cnt; computed around the overall mean to
   * keep the subtraction well conditioned. */
  double c = 0;
  for (size_t j = 0; j < k; j++)
    c += z[j];
  c /= (double)k;
  double s1 = 0, s2 = 0, best = INFINITY;
  size_t bestd = 0;
  for (size_t j = k; j-- > 0;) {
    double y = z[j] - c;
    s1 += y;
    s2 += y * y;
    size_t cnt = k - j;
    double ss = s2 - s1 * s1 / (double)cnt;
    if (ss < 0)
      ss = 0;
    mse[j] = ss / ((double)cnt * (double)cnt);
  }
  for (size_t d = 0; d <= k / 2; d++) {
    if (mse[d] < best) {
      best = mse[d];
      bestd = d;
    }
  }
  free(z);
  *drop = bestd * m;
  return 0;
}
