/* steady.c — knowing when to stop measuring (pit_steady_check): a series of
 * paramount step times is steady when, after its warm-up (pit_warmup), the
 * batch-means 95% half-width of t_p is at most P·t_p AND the drift over the
 * retained iterations beyond its noise, (|pit_drift| − 2·se) · their count,
 * is at most P, with at least min_iters step times; at max_iters the answer
 * is "cap" whatever the rest.
 *
 * Why beyond its noise: on a noisy series the slope's estimate itself
 * wanders; |drift| · n is then a random number several times P (step times
 * under a CPU quota have a coefficient of variation near 1, and the drift
 * over 400 of them has a standard error near 6%), so the test passed or
 * failed by chance, on whichever check the estimate happened to be near
 * zero. Drift within 2·se of zero is noise as far as these values can tell
 * (as pit_predict's drift allowance counts it, max(0, |drift| − 2·se)); what
 * it could still hide over a long job is pit_predict's horizon check
 * (drift_bound), which knows the job's length.
 *
 * How many more (want): the half-width shrinks as 1/√n, so from n_r retained
 * values at relative half-width h, n_r·(h/P)² are needed: want = that − n_r
 * (at least the floor's remainder). When the drift is what fails, no count
 * can be promised; want = the iterations measured so far (doubling the span
 * tells whether the slope was noise). Invariant: never prints; PIT_EARG only
 * for a precision <= 0; state, warmup, tp and why are always filled. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pitstop/predict.h"

#define STEADY_MIN_DEFAULT 50

int pit_steady_check(const double *x, size_t n, const struct pit_steady_opts *o, struct pit_steady *st,
                     struct pit_err *e) {
  memset(st, 0, sizeof *st);
  st->drift = NAN;
  if (!(o->precision > 0))
    return pit_err_set(e, PIT_EARG, "precision must be positive (e.g. 0.02)");
  int64_t floor_n = o->min_iters > 0 ? o->min_iters : STEADY_MIN_DEFAULT;
  if (pit_warmup(x, n, &st->warmup))
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  size_t nr = n - st->warmup;
  pit_batch_means(x + st->warmup, nr, &st->tp);
  double se = NAN;
  if (pit_drift(x + st->warmup, nr, &st->drift, &se))
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  double P = o->precision;
  double rel = st->tp.mean > 0 ? st->tp.half / st->tp.mean : NAN;
  /* the drift over the retained values beyond its noise (2·se) */
  double drift_span = isfinite(st->drift) && isfinite(se) ? fmax(0, fabs(st->drift) - 2 * se) * (double)nr : NAN;
  int capped = o->max_iters > 0 && (int64_t)n >= o->max_iters;
  if ((int64_t)n < floor_n || !isfinite(rel) || !isfinite(drift_span)) {
    st->want = (int64_t)n < floor_n ? floor_n - (int64_t)n : 1;
    snprintf(st->why, sizeof st->why, "%zu iterations, fewer than the %lld needed", n, (long long)floor_n);
  } else if (rel > P) {
    double need = (double)nr * (rel / P) * (rel / P);
    st->want = (int64_t)ceil(need) - (int64_t)nr;
    if (st->want < 1)
      st->want = 1;
    snprintf(st->why, sizeof st->why, "t_p half-width %.2f%% > %.2f%% after %zu iterations (warm-up %zu)", 100 * rel,
             100 * P, n, st->warmup);
  } else if (drift_span > P) {
    st->want = (int64_t)n;
    snprintf(st->why, sizeof st->why, "step time drifts %+.2f%% over %zu iterations (beyond its noise %.2f%% > %.2f%%)",
             100 * st->drift * (double)nr, nr, 100 * drift_span, 100 * P);
  } else {
    st->state = PIT_STEADY_OK;
    snprintf(st->why, sizeof st->why, "t_p half-width %.2f%% <= %.2f%% after %zu iterations (warm-up %zu)", 100 * rel,
             100 * P, n, st->warmup);
    return 0;
  }
  if (capped) {
    st->state = PIT_STEADY_CAP;
    char tmp[sizeof st->why];
    snprintf(tmp, sizeof tmp, "%s", st->why);
    snprintf(st->why, sizeof st->why, "cap of %lld iterations reached: %.120s", (long long)o->max_iters, tmp);
    st->want = 0;
  }
  return 0;
}
