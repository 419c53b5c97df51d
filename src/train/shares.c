/* shares.c — how the global batch is split among ranks (--batch-shares).
 *
 *   equal      every rank the same share (±1 sample);
 *   w1,w2,...  fixed relative weights, one per rank;
 *   auto       starts equal; every K iterations each rank's speed is estimated as
 *              samples / compute seconds, summed over the last window of K
 *              iterations plus half the sums before it (older windows fade by half
 *              each time, rebalanced or not), and the shares proportional to those speeds are taken
 *              only if they shorten the predicted step (max over ranks of share /
 *              speed) by at least PIT_SHARES_MIN_GAIN. Why the damping: a step on a
 *              new local batch size builds new oneDNN primitives (measured: 50–65 ms
 *              extra on a half-core rank with a 30 ms step; the run's first step, which
 *              builds them all, took 53 / 198 ms against 5 ms later), so chasing measurement
 *              noise with ±2-sample changes every K iterations cost more than it won.
 *              The run's first step and the first step on new shares are left out
 *              of the estimate (they hold those builds).
 * Invariant: every rank computes the same shares — the inputs (weights, every
 * rank's compute time from the gradient reduction) are identical on all ranks,
 * and pit_shares_split is deterministic. Shares always sum to the global batch.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>


#include "train/train_impl.h"

/* auto: a rebalance must shorten the predicted step by this fraction to be taken */
#define PIT_SHARES_MIN_GAIN 0.03

int tr_shares_init(struct trainer *t, struct pit_err *e) {
  int n = t->d->size;
  t->weights = calloc((size_t)n, sizeof(double));
  t->shares = calloc((size_t)n, sizeof(int64_t));
  t->win_c = calloc((size_t)n, sizeof(double));
  t->win_n = calloc((size_t)n, sizeof(double));
  t->cand = calloc(2 * (size_t)n, sizeof(int64_t)); /* new shares, then the current ones */
  t->speed = calloc((size_t)n, sizeof(double));
  if (!t->weights || !t->shares || !t->win_c || !t->win_n || !t->cand || !t->speed)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  for (int r = 0; r < n; r++)
    t->weights[r] = 1.0;
  const char *s = t->o->batch_shares ? t->o->batch_shares : "equal";
  if (strcmp(s, "equal") == 0)
    return 0;
  if (strcmp(s, "auto") == 0) {
    t->auto_shares = 1;
    t->win_skip = 1; /* the first step builds every primitive: not a speed */
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

/* Predicted compute time of a step: the slowest rank's share / speed. */
static double predicted_step(const int64_t *shares, const double *speed, int n) {
  double worst = 0;
  for (int r = 0; r < n; r++) {
    double c = (double)shares[r] / speed[r];
    if (c > worst)
      worst = c;
  }
  return worst;
}

/* The decision record of a rebalance (rank 0; written after the pending iter
 * record). t->cand holds the new shares, then the old ones; times in seconds. */
static void note_decision(struct trainer *t, double t_old, double t_new, int n) {
  struct pit_decision d;
  pit_decision_init(&d);
  char why[160];
  snprintf(why, sizeof why,
           "auto: shares proportional to the measured speeds predict a %.1f%% shorter step (threshold %.0f%%)",
           100 * (1 - t_new / t_old), 100 * PIT_SHARES_MIN_GAIN);
  char *detail = NULL;
  if (pit_decision_set_ranks(&d, n, 1) == 0 && (d.reason = strdup(why))) {
    snprintf(d.kind, sizeof d.kind, "batch_shares");
    d.step = t->step;
    for (int r = 0; r < n; r++) {
      d.shares[r] = t->cand[r];
      d.previous[r] = t->cand[n + r];
      d.speed_sps[r] = round(t->win_n[r] / t->win_c[r] * 10) / 10;
    }
    d.predicted_step_s = round(t_new * 1e6) / 1e6;
    d.previous_predicted_step_s = round(t_old * 1e6) / 1e6;
    struct pit_err e;
    if (pit_decision_encode(&d, &detail, &e) < 0)
      detail = NULL;
  }
  pit_decision_release(&d);
  if (!detail)
    return; /* out of memory: the record is lost, training goes on */
  free(t->dec_detail);
  t->dec_detail = detail;
  t->dec_t = tr_time(t);
}

void tr_shares_observe(struct trainer *t, const double *all_compute) {
  if (!t->auto_shares || t->d->size < 2)
    return;
  int n = t->d->size;
  if (t->win_skip) {
    t->win_skip = 0;
    return;
  }
  for (int r = 0; r < n; r++) {
    t->win_c[r] += all_compute[r];
    t->win_n[r] += (double)t->shares[r];
  }
  if (++t->win_k < (t->o->rebalance_every > 0 ? t->o->rebalance_every : 10))
    return;
  t->win_k = 0;
  double *sp = t->speed, total = 0; /* allocated up front: every rank must take every rebalance */
  int ok = 1;
  for (int r = 0; r < n; r++) {
    ok &= t->win_c[r] > 0 && t->win_n[r] > 0;
    sp[r] = ok ? t->win_n[r] / t->win_c[r] : 0;
    total += sp[r];
  }
  if (ok && total > 0) {
    for (int r = 0; r < n; r++)
      sp[r] /= total; /* relative speeds: the weights a rebalance would set */
    pit_shares_split(t->B, sp, n, t->cand);
    pit_shares_split(t->B, t->weights, n, t->cand + n);
    double t_new = predicted_step(t->cand, sp, n), t_old = predicted_step(t->cand + n, sp, n);
    if (t_new < (1 - PIT_SHARES_MIN_GAIN) * t_old) {
      memcpy(t->weights, sp, sizeof(double) * (size_t)n);
      t->win_skip = 1;
      if (t->d->rank == 0)
        note_decision(t, t_old / total, t_new / total, n);
    }
  }
  for (int r = 0; r < n; r++) { /* older windows fade */
    t->win_c[r] *= 0.5;
    t->win_n[r] *= 0.5;
  }
}
