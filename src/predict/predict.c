/* predict.c — the job-time formula of DESIGN.md as one plain function, with
 * its 95% interval and the remaining time of a run in progress (the cost of
 * a predicted time is pit_catalog_cost's, catalog.h).
 *
 *   T = T_start + T_init + N_iter·t_p + N_epoch·(T_val + T_epoch_edge) + N_ckpt·T_ckpt
 *
 * Counts: N_iter = ⌈epochs·ipe⌉, ⌈iters⌉ or ⌈samples/batch⌉; N_epoch = the
 * epochs asked for, else ⌈N_iter/ipe⌉ (0 without ipe); N_ckpt =
 * ⌊N_iter/ckpt_every⌋; validations: N_epoch when val_every_epoch, else 0.
 *
 * Interval (docs/predict.md): every term's error is systematic (the same t_p
 * error repeats in every iteration), so half-widths add linearly, not in
 * quadrature: half = N_rem·(t_p_half + r·t_p) + Σ count·term_half, where
 * N_rem are the iterations not done yet and r, the drift allowance, is
 * drift_allow + d·(measured + N_rem)/2 (drift_allow for iterations nobody
 * has timed; d the measured drift beyond its noise, max(0, |drift| −
 * 2·drift_se), extrapolated linearly from the middle of the measured span to
 * the middle of the rest). The centre is not moved by the drift: a slope
 * from a short series is mostly noise. Unless the epoch edge has an
 * interval, the lower ends also allow each remaining epoch's last iteration,
 * a partial batch, to take no time (last_short: − t_p per epoch end). Lower
 * ends are clamped at 0.
 *
 * Drift the interval cannot vouch for (drift_bound, drift_want): a drift
 * within 2·drift_se of the estimate cannot be ruled out, and over a long rest
 * it may exceed what r allows — 1% over 100 measured iterations is 20% over an
 * epoch of 2000. The centre and interval stay; the prediction says the
 * measurement is too short for the horizon and how many more iterations it
 * wants (se ∝ n^-3/2, so n' = m·(se/se_needed)^(2/3)).
 *
 * T_epoch_edge is epoch_edge plus, when a caller learnt it from earlier runs
 * of the same script (pit_predict_untimed_prior), untimed: the time per
 * epoch no step timed, each with its own half-width. T_init includes
 * first_iter, the one-off excess of a run's first iteration (warm-up: paid
 * by a job not started, and in epoch_s, one epoch from scratch); epochs after
 * the job's first may pay an epoch-start cost again that only that first
 * iteration showed: edge_repeat_hi per such epoch raises the upper end.
 *
 * A run in progress: T = elapsed_s + remaining, where remaining
 * counts the iterations, epoch ends and checkpoints not done yet (start and
 * init only when nothing is done, or when the run is stopped between
 * generations, resume: the next one starts again; of the epoch in progress, the edge less
 * what it already spent, edge_done); elapsed_s is exact unless elapsed_untimed
 * says how much more it may have been (the upper end grows by that much).
 *
 * Worked example (tests/predict/test_predict.c checks it):
 *   t_p = 0.300 s ± 0.006, 200 measured, drift unknown, drift_allow 0.05,
 *   500 iterations per epoch, 3 epochs, validation 4 s ± 0.4 each epoch,
 *   epoch edge 0.5 s ± 0.1, init 10 s ± 1, no start, checkpoint every 1000
 *   iterations 2 s ± 0.2:
 *   N_iter = 1500, N_epoch = 3, N_ckpt = 1;
 *   T = 10 + 1500·0.3 + 3·(4 + 0.5) + 1·2 = 475.5 s;
 *   half = 1500·(0.006 + 0.05·0.3) + 3·(0.4 + 0.1) + 0.2 + 1 = 34.2 s
 *   → [441.3, 509.7]; one epoch = 500·0.3 + 0.5 = 150.5 s ± 10.6.
 *   After 700 iterations and 230 s: remaining = 800·0.3 + 2·4.5 + 1·2 = 251 s
 *   ± (800·0.021 + 2·0.5 + 0.2) = 18 s; T = 481 s [463, 499].
 *   On two nodes at $0.17/h billed per second (minimum 60 s), pit_catalog_cost
 *   of 475.5 s = 2 · 0.17 · 476 / 3600 = $0.04496.
 */
#include <math.h>
#include <string.h>

#include "pitstop/predict.h"

static double val0(double v) { return isfinite(v) ? v : 0; }
static double tmean(struct pit_term t) { return val0(t.mean); }
static double thalf(struct pit_term t) { return isfinite(t.mean) ? val0(t.half) : 0; }

/* drift_bound and drift_want of out (see the comment at the top): m
 * measured, nrem to do, d the extrapolated drift, r the allowance used. */
static void drift_check(const struct pit_predict_in *in, double m, double nrem, double d, double r,
                        struct pit_prediction *out) {
  out->drift_bound = NAN;
  out->drift_want = 0;
  if (!isfinite(in->drift) || !(in->drift_se >= 0) || !(nrem > 0) || !(m > 0))
    return;
  double h = (m + nrem) / 2, a = fabs(in->drift);
  out->drift_bound = (a + 2 * in->drift_se) * h;
  if (out->drift_bound <= r)
    return;
  /* the allowance holds once (a + 2·se')·h <= allow + max(0, a − 2·se')·h:
   * se' <= (allow/h − a)/2 while the drift is not significant, se' <=
   * allow/(4h) once it is; the larger bound is the nearer goal */
  double allow = r - d * h, se1 = (allow / h - a) / 2, se2 = allow / (4 * h);
  double need = se1 > se2 ? se1 : se2;
  double want = need > 0 ? m * pow(in->drift_se / need, 2.0 / 3.0) - m : m;
  out->drift_want = want >= 1 ? (int64_t)ceil(want) : 1;
}

/* How much shorter than t_p an epoch's last iteration may be: it holds what
 * is left of the data, from one sample to a full batch, so it may take from
 * about nothing to a full step (SerodioJ's 20- and 40-iteration epochs end
 * with 2.6–3.7 s steps among 4.7 s ones). When the epoch-edge term has an
 * interval of its own, that carries it; when it has none (pit_predict_inputs
 * gives the summary's mean only, taken as exact), the lower ends allow it:
 * − t_p per epoch end. */
static double last_short(const struct pit_predict_in *in) {
  return isfinite(in->epoch_edge.mean) && in->epoch_edge.half > 0 ? 0 : in->tp;
}

void pit_predict_in_init(struct pit_predict_in *in) {
  memset(in, 0, sizeof *in);
  struct pit_term none = {NAN, NAN};
  in->tp = in->tp_half = in->drift = in->drift_se = in->drift_allow = in->iters_per_epoch = in->edge_done = NAN;
  in->start = in->init = in->val = in->epoch_edge = in->ckpt = in->untimed = in->first_iter = none;
  in->unit = PIT_JOB_EPOCHS;
}

int pit_predict(const struct pit_predict_in *in, struct pit_prediction *out, struct pit_err *e) {
  memset(out, 0, sizeof *out);
  out->epoch_s = out->epoch_lo = out->epoch_hi = NAN;
  if (!(in->tp > 0))
    return pit_err_set(e, PIT_EARG, "no PIT time to predict from (too few iterations)");
  if (!(in->size > 0) || !isfinite(in->size))
    return pit_err_set(e, PIT_EARG, "job size must be positive");
  double ipe = in->iters_per_epoch;
  int have_ipe = ipe >= 1 && isfinite(ipe);
  switch (in->unit) {
  case PIT_JOB_EPOCHS:
    if (!have_ipe)
      return pit_err_set(e, PIT_EARG, "a job sized in epochs needs the iterations per epoch");
    out->n_iter = (int64_t)ceil(in->size * ipe - 1e-9);
    out->n_epoch = (int64_t)ceil(in->size - 1e-9);
    break;
  case PIT_JOB_SAMPLES:
    if (in->batch <= 0)
      return pit_err_set(e, PIT_EARG, "a job sized in samples needs the global batch");
    out->n_iter = (int64_t)ceil(in->size / (double)in->batch - 1e-9);
    break;
  case PIT_JOB_ITERS:
    out->n_iter = (int64_t)ceil(in->size - 1e-9);
    break;
  }
  if (in->unit != PIT_JOB_EPOCHS)
    out->n_epoch = have_ipe ? (int64_t)ceil((double)out->n_iter / ipe - 1e-9) : 0;
  out->n_ckpt = in->ckpt_every > 0 ? out->n_iter / in->ckpt_every : 0;
  if (in->done_iters < 0 || in->done_iters > out->n_iter)
    return pit_err_set(e, PIT_EARG, "%lld iterations done, beyond the job's %lld", (long long)in->done_iters,
                       (long long)out->n_iter);

  double allow = isfinite(in->drift_allow) ? in->drift_allow : PIT_PREDICT_DRIFT_ALLOW;
  double d = isfinite(in->drift) ? fabs(in->drift) - 2 * val0(in->drift_se) : 0, m = (double)(in->measured > 0 ? in->measured : 0);
  if (d < 0)
    d = 0;
  double tp = in->tp, tph = val0(in->tp_half);
  /* T_epoch_edge: the measured edge and the untimed time learnt from earlier runs */
  double edge_m = tmean(in->epoch_edge) + tmean(in->untimed), edge_h = thalf(in->epoch_edge) + thalf(in->untimed);
  /* one epoch on its own */
  if (have_ipe) {
    double r = allow + d * (m + ipe) / 2;
    out->epoch_s = ipe * tp + edge_m + tmean(in->first_iter);
    double h = ipe * (tph + r * tp) + edge_h + thalf(in->first_iter);
    out->epoch_lo = out->epoch_s - h - last_short(in) > 0 ? out->epoch_s - h - last_short(in) : 0;
    out->epoch_hi = out->epoch_s + h;
  }
  /* what remains */
  int64_t nrem = out->n_iter - in->done_iters;
  int64_t ep_done = have_ipe ? (int64_t)floor((double)in->done_iters / ipe + 1e-9) : 0;
  int64_t ck_done = in->ckpt_every > 0 ? in->done_iters / in->ckpt_every : 0;
  double ep_rem = (double)(out->n_epoch > ep_done ? out->n_epoch - ep_done : 0);
  double ck_rem = (double)(out->n_ckpt - ck_done);
  double nval = in->val_every_epoch ? ep_rem : 0;
  int started = in->done_iters > 0 || in->elapsed_s > 0;
  double r = nrem > 0 ? allow + d * (m + (double)nrem) / 2 : 0;
  out->drift_rel = r;
  drift_check(in, m, (double)nrem, d, r, out);
  double rem = (double)nrem * tp + nval * tmean(in->val) + ep_rem * edge_m + ck_rem * tmean(in->ckpt);
  double half = (double)nrem * (tph + r * tp) + nval * thalf(in->val) + ep_rem * edge_h + ck_rem * thalf(in->ckpt);
  int in_epoch = have_ipe && (double)in->done_iters > (double)ep_done * ipe; /* an epoch started, not over */
  /* the epoch in progress has spent part of its edge (its first iteration) */
  if (ep_rem > 0 && in_epoch && isfinite(in->edge_done))
    rem -= in->edge_done;
  if (!started || in->resume) {
    rem += tmean(in->start) + tmean(in->init) + tmean(in->first_iter);
    half += thalf(in->start) + thalf(in->init) + thalf(in->first_iter);
  }
  /* epochs after the job's first may pay again an epoch-start cost seen only once */
  double later = ep_rem > 0 && (ep_done == 0 || in_epoch) ? ep_rem - 1 : ep_rem;
  double repeat = in->edge_repeat_hi > 0 ? later * in->edge_repeat_hi : 0;
  out->remaining_s = rem;
  double lo_more = have_ipe ? ep_rem * last_short(in) : 0;
  out->remaining_lo = rem - half - lo_more > 0 ? rem - half - lo_more : 0;
  out->remaining_hi = rem + half + repeat;
  double el = val0(in->elapsed_s);
  out->total_s = el + rem;
  out->lo = el + out->remaining_lo;
  out->hi = el + out->remaining_hi + (in->elapsed_untimed > 0 ? in->elapsed_untimed : 0);
  return 0;
}
