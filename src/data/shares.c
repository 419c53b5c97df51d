/* shares.c — how a global batch is split between ranks.
 *
 * pit_shares_split: ideal share q_r = count · w_r / Σw. Each rank first gets
 * floor(q_r); the samples left over go one each to the ranks with the largest
 * remainders q_r - floor(q_r) (ties: lower rank first). Then, if count ≥ nranks,
 * each rank left with 0 (lowest rank first) takes one sample from the rank with
 * the largest share (ties: the higher rank gives). Shares always sum to count.
 * Weights that are negative, not finite, or all zero count as equal weights.
 * Only integer arithmetic decides the result apart from q_r, so every rank
 * computing it from the same weights gets the same shares.
 *
 * pit_shares_slice: rank r's samples of a global batch are positions
 * [Σ_{s<r} shares_s, Σ_{s≤r} shares_s): the ranks' slices, in rank order, tile it.
 */
#include <math.h>

#include "pitstop/data.h"

void pit_shares_slice(const int64_t *shares, int nranks, int rank, int64_t *off, int64_t *len) {
  int64_t o = 0;
  for (int r = 0; r < rank && r < nranks; r++)
    o += shares[r];
  *off = o;
  *len = rank >= 0 && rank < nranks ? shares[rank] : 0;
}

/* Ideal share of rank r (equal: weights unusable). */
static double quota(int64_t count, const double *weights, int nranks, double total, int equal,
                    int r) {
  return equal ? (double)count / nranks : (double)count * (weights[r] / total);
}

void pit_shares_split(int64_t count, const double *weights, int nranks, int64_t *shares) {
  if (nranks <= 0)
    return;
  if (count < 0)
    count = 0;
  double total = 0;
  int equal = !weights;
  for (int r = 0; r < nranks && !equal; r++) {
    if (!(weights[r] >= 0) || !isfinite(weights[r]))
      equal = 1;
    else
      total += weights[r];
  }
  if (!(total > 0) || !isfinite(total))
    equal = 1;
  int64_t given = 0;
  for (int r = 0; r < nranks; r++) {
    double f = floor(quota(count, weights, nranks, total, equal, r));
    shares[r] = f < 0 ? 0 : f > (double)count ? count : (int64_t)f;
    given += shares[r];
  }
  while (given > count) { /* only through rounding of q: the largest (higher rank) gives */
    int big = 0;
    for (int r = 1; r < nranks; r++)
      if (shares[r] >= shares[big])
        big = r;
    shares[big]--;
    given--;
  }
  int64_t left = count - given;
  for (int r = 0; r < nranks; r++) /* whole rounds (only if rounding lost that much) */
    shares[r] += left / nranks;
  left %= nranks;
  /* the `left` ranks with the largest remainders (ties: lower rank) get one more */
  if (left > 0) {
    for (int r = 0; r < nranks; r++) {
      double qr = quota(count, weights, nranks, total, equal, r), rr = qr - floor(qr);
      int64_t ahead = 0;
      for (int t = 0; t < nranks && ahead < left; t++) {
        double qt = quota(count, weights, nranks, total, equal, t), rt = qt - floor(qt);
        if (rt > rr || (rt == rr && t < r))
          ahead++;
      }
      if (ahead < left)
        shares[r]++;
    }
  }
  if (count >= nranks) { /* every rank at least one: take from the largest (higher rank) */
    for (int r = 0; r < nranks; r++) {
      if (shares[r] > 0)
        continue;
      int big = 0;
      for (int t = 1; t < nranks; t++)
        if (shares[t] >= shares[big])
          big = t;
      shares[big]--;
      shares[r]++;
    }
  }
}
