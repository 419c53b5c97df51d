/* shares.c — how the global batch is split among ranks (--batch-shares).
 *
 *   equal      every rank the same share (±1 sample);
 *   w1,w2,...  fixed relative weights, one per rank;
 *   auto       starts equal; every K iterations each rank's speed is measured as
 *              samples / compute seconds over the last K iterations and the
 *              weights become those speeds, so every rank finishes its part at
 *              about the same time.
 * Invariant: every rank computes the same shares — the inputs (weights, every
 * rank's compute time from the gradient reduction) are identical on all ranks,
 * and pit_shares_split is deterministic. Shares always sum to the global batch.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "train/train_impl.h"

int tr_shares_init(struct trainer *t, struct pit_err *e) {
  int n = t->d->size;
  t->weights = calloc((size_t)n, sizeof(double));
  t->shares = calloc((size_t)n, sizeof(int64_t));
  t->win_c = calloc((size_t)n, sizeof(double));
  t->win_n = calloc((size_t)n, sizeof(double));
  if (!t->weights || !t->shares || !t->win_c || !t->win_n)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  for (int r = 0; r < n; r++)
    t->weights[r] = 1.0;
  const char *s = t->o->batch_shares ? t->o->batch_shares : "equal";
  if (strcmp(s, "equal") == 0)
    return 0;
  if (strcmp(s, "auto") == 0) {
    t->auto_shares = 1;
    return 0;
  }
  /* list of weights */
  int k = 0;
  const char *p = s;
  while (*p) {
    char *end;
    double w = strtod(p, &end);
    if (end == p || !(w > 0) || !isfinite(w))
      return pit_err_set(e, PIT_EARG,
                         "--batch-shares '%s': expected equal, auto or positive weights w1,w2,...", s);
    if (k < n)
      t->weights[k] = w;
    k++;
    p = end;
    if (*p == ',')
      p++;
    else if (*p)
      return pit_err_set(e, PIT_EARG, "--batch-shares '%s': weights are separated by commas", s);
  }
  if (k != n) {
    pit_err_set(e, PIT_EARG, "--batch-shares '%s' gives %d weight(s) for %d rank(s)", s, k, n);
    pit_err_hint(e, "give one weight per rank (mpirun -np), or use equal or auto");
    return PIT_EARG;
  }
  return 0;
}

void tr_shares_for(struct trainer *t, int64_t count) {
  pit_shares_split(count, t->weights, t->d->size, t->shares);
}

void tr_shares_observe(struct trainer *t, const double *all_compute) {
  if (!t->auto_shares || t->d->size < 2)
    return;
  int n = t->d->size;
  for (int r = 0; r < n; r++) {
    t->win_c[r] += all_compute[r];
    t->win_n[r] += (double)t->shares[r];
  }
  if (++t->win_k < (t->o->rebalance_every > 0 ? t->o->rebalance_every : 10))
    return;
  double total = 0;
  for (int r = 0; r < n; r++)
    if (t->win_c[r] > 0 && t->win_n[r] > 0)
      total += t->win_n[r] / t->win_c[r];
  if (total > 0)
    for (int r = 0; r < n; r++)
      if (t->win_c[r] > 0 && t->win_n[r] > 0)
        t->weights[r] = (t->win_n[r] / t->win_c[r]) / total;
  memset(t->win_c, 0, sizeof(double) * (size_t)n);
  memset(t->win_n, 0, sizeof(double) * (size_t)n);
  t->win_k = 0;
}
