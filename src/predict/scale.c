/* scale.c — the inputs of a job at a rank count nobody measured
 * (pit_predict_scale): the throughput batch / t_p of runs of one configuration
 * at other rank counts, fitted by the Universal Scalability Law (usl.c), gives
 * t_p at the new count with the fit's 95% interval:
 *   X(n) = batch / t_p(n);  t_p = batch / X(to);  [batch / X_hi, batch / X_lo].
 * Each run's t_p interval becomes its point's throughput interval
 * (x_half = batch · tp_half / tp², first order).
 * Invariants: never prints; the runs must share one global batch (strong
 * scaling: the work of an iteration is the same at every count); fewer than 3
 * distinct counts is PIT_ESTATE "too few points" (pit_usl_fit), never a guess. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "pitstop/predict.h"

int pit_predict_scale(const struct pit_predict_in *in, const int *ranks, int n, double to,
                      struct pit_predict_in *out, struct pit_usl *fit, struct pit_err *e) {
  if (n < 1 || !(to >= 1))
    return pit_err_set(e, PIT_EARG, "no runs to scale from, or a rank count below 1");
  struct pit_usl_point *p = calloc((size_t)n, sizeof *p);
  if (!p)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  int rc = 0;
  for (int k = 0; k < n && !rc; k++) {
    if (in[k].batch != in[0].batch || in[k].batch < 1)
      rc = pit_err_set(e, PIT_EARG, "the runs scaled from must share one global batch (%lld and %lld)",
                       (long long)in[0].batch, (long long)in[k].batch);
    else if (ranks[k] < 1)
      rc = pit_err_set(e, PIT_EARG, "a run scaled from does not say its rank count");
    double b = (double)in[k].batch, tp = in[k].tp;
    p[k] = (struct pit_usl_point){ranks[k], b / tp, b * in[k].tp_half / (tp * tp)};
  }
  if (!rc)
    rc = pit_usl_fit(p, n, fit, e);
  free(p);
  if (rc)
    return rc;
  double x, lo, hi, b = (double)in[0].batch;
  pit_usl_predict(fit, to, &x, &lo, &hi);
  if (!(x > 0))
    return pit_err_set(e, PIT_ESTATE, "the scalability fit predicts no throughput at %g ranks", to);
  *out = in[0];
  out->tp = b / x;
  double tlo = hi > 0 ? b / hi : 0, thi = lo > 0 ? b / lo : INFINITY;
  out->tp_half = fmax(out->tp - tlo, thi - out->tp);
  out->drift = NAN; /* nobody measured this count: no drift to extrapolate */
  out->done_iters = 0;
  out->elapsed_s = out->elapsed_untimed = 0;
  out->measured = 0;
  return 0;
}
