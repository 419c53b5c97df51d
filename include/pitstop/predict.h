/* pitstop/predict.h — from measured iterations to the whole job: its time
 * and cost with 95% intervals, when enough has been measured, how throughput
 * scales with the node count, and a membership of several instance types
 * (docs/predict.md has the definitions and the worked examples).
 *
 * Layers, each usable alone:
 *  1. pit_predict: T = T_start + T_init + N_iter·t_p + N_epoch·(T_val +
 *     T_epoch_edge) + N_ckpt·T_ckpt for a job sized by epochs, iterations or
 *     samples, and the part of a run in progress that remains (cost of a
 *     predicted time: pit_catalog_cost and pit_catalog_samples_per_dollar in
 *     pitstop/catalog.h);
 *  2. pit_steady_check: has a series of step times reached a steady t_p known
 *     to a relative precision P (a controller applies it to any workload);
 *  3. pit_usl_fit / pit_usl_predict: Universal Scalability Law over node
 *     counts of one type, with the fit's uncertainty;
 *  4. pit_hetero_step: the step time of a mixed membership from per-type
 *     measurements (equal or speed-proportional batch shares).
 *
 * Invariants: functions never print or exit; absent values are NaN; every
 * pointer in these structs is borrowed (the caller owns it and keeps it
 * alive during the call); no function keeps a pointer after it returns.
 */
#ifndef PITSTOP_PREDICT_H
#define PITSTOP_PREDICT_H

#include <stddef.h>
#include <stdint.h>

#include "pitstop/analysis.h"
#include "pitstop/catalog.h"
#include "pitstop/util.h"

/* ---------------- 1. job time and cost ---------------- */

/* One duration and the half-width of its 95% interval (half NaN or 0: taken
 * as exact; mean NaN: the term is absent, counted as 0). */
struct pit_term {
  double mean, half;
};

enum pit_job_unit { PIT_JOB_EPOCHS, PIT_JOB_ITERS, PIT_JOB_SAMPLES };

/* Relative change of the mean step time over the iterations not measured
 * yet that the interval admits even when no drift is measured (5%): the
 * course logs' iteration times changed by up to ~5% between the first 20
 * iterations of an epoch and the rest (docs/predict.md). */
#define PIT_PREDICT_DRIFT_ALLOW 0.05

struct pit_predict_in {
  /* measured */
  double tp, tp_half;        /* PIT time and its 95% half-width, seconds */
  double drift;              /* relative change of the step time per iteration (pit_drift); NaN: unknown */
  double drift_se;           /* its standard error; only |drift| − 2·drift_se (if > 0) is extrapolated */
  int64_t measured;          /* steady iterations t_p and drift came from */
  double drift_allow;        /* see PIT_PREDICT_DRIFT_ALLOW; NaN: the default */
  double iters_per_epoch;    /* iterations in one epoch (required for PIT_JOB_EPOCHS and epoch terms) */
  int64_t batch;             /* global batch, samples per iteration (required for PIT_JOB_SAMPLES) */
  struct pit_term start;     /* node start (boot) time, once */
  struct pit_term init;      /* process start to first iteration, once */
  struct pit_term val;       /* one validation, after every epoch when val_every_epoch */
  struct pit_term epoch_edge;/* per-epoch extra: an epoch's first and last iterations' excess over t_p
                                (loader restart, a partial last batch), summed per epoch */
  struct pit_term ckpt;      /* one checkpoint, every ckpt_every iterations */
  struct pit_term first_iter;/* one-off: the excess of a run's very first iteration over t_p and the
                                per-epoch edge (framework warm-up: primitives created, memory first
                                touched); paid once by a job not started, and by epoch_s */
  double edge_repeat_hi;     /* per epoch after the job's first, how much more the edge may be: an
                                epoch-start cost seen only in the run's first iteration may or may not
                                come again with every epoch (no later epoch seen); raises hi only */
  struct pit_term untimed;   /* per-epoch time no step timed, from earlier runs of the same script
                                (pit_predict_untimed_prior, pit_predict_use_prior); counted like
                                epoch_edge, with its own interval; absent (NaN) unless set */
  int val_every_epoch;
  int64_t ckpt_every;        /* 0: no checkpoints */
  /* the job */
  enum pit_job_unit unit;
  double size;               /* epochs, iterations or samples; > 0 */
  /* a run in progress (both 0 for a job not started) */
  int64_t done_iters;        /* iterations already done */
  double elapsed_s;          /* wall time already spent (its start and init included) */
  double edge_done;          /* of the epoch in progress, the part of epoch_edge already spent (its
                                first iteration's excess): in elapsed_s, not predicted again */
  double elapsed_untimed;    /* how much more elapsed_s may really be (records without a clock
                                show only step times, not the time between them); raises hi only */
  int resume;                /* stopped between generations (a resumable stop, an elastic run's
                                resize): the next generation pays start, init and first_iter again */
};
/* Defaults: everything absent (NaN terms), drift unknown, no progress. */
void pit_predict_in_init(struct pit_predict_in *in);

struct pit_prediction {
  int64_t n_iter, n_epoch, n_ckpt;  /* the job's counts (epochs rounded up) */
  double epoch_s, epoch_lo, epoch_hi;            /* one epoch from scratch: ipe·t_p + T_epoch_edge +
                                                    first_iter (NaN without ipe) */
  double total_s, lo, hi;                        /* the whole job (elapsed_s + remaining when in progress) */
  double remaining_s, remaining_lo, remaining_hi;/* what is left of it */
  double drift_rel;          /* relative allowance used for the unmeasured iterations */
  /* Is the interval's allowance enough? The change of the mean step time over
   * the iterations still to do that the measured drift's 95% interval cannot
   * rule out, (|drift| + 2·drift_se)·(measured + N_rem)/2 (drift_bound, NaN
   * when drift or drift_se is unknown or nothing remains). When it exceeds
   * drift_rel, the measurement is too short for the job (a slow drift hides in
   * the noise of a short series and grows over a long horizon): drift_want is
   * how many more iterations would bound it (the drift's standard error
   * shrinks as n^-3/2), or as many as were measured when the drift itself is
   * beyond the allowance; 0 when the allowance holds or drift is unknown. */
  double drift_bound;
  int64_t drift_want;
};
/* The prediction. PIT_EARG (message says which) for a size <= 0, t_p not
 * positive, epochs without iters_per_epoch, samples without a batch, or done
 * iterations beyond the job. See predict.c for the worked example. */
int pit_predict(const struct pit_predict_in *in, struct pit_prediction *out, struct pit_err *e);

/* ---------------- 2. when to stop measuring ---------------- */

struct pit_steady_opts {
  double precision;          /* P: stop when half-width <= P · t_p (e.g. 0.02) */
  int64_t min_iters;         /* floor: never steady before this many step times (default 50) */
  int64_t max_iters;         /* cap: stop anyway at this many (0: none) */
};
enum pit_steady_state {
  PIT_STEADY_MORE = 0,       /* keep measuring: `want` more iterations estimated */
  PIT_STEADY_OK = 1,         /* steady: t_p known to P, drift beyond its noise within P over the series */
  PIT_STEADY_CAP = 2         /* cap reached without being steady */
};
struct pit_steady {
  enum pit_steady_state state;
  size_t warmup;             /* pit_warmup of the series */
  struct pit_interval tp;    /* batch means over the rest */
  double drift;              /* pit_drift of the rest (per iteration) */
  int64_t want;              /* estimated further iterations (MORE), else 0 */
  char why[160];             /* one line: why this state ("half-width 1.2% <= 2% after 340 iterations") */
};
/* x[0..n-1]: the paramount step times in order (epoch edges and iterations
 * next to validation/checkpoint left out by the caller). PIT_EARG for a
 * precision <= 0; PIT_ENOMEM. */
int pit_steady_check(const double *x, size_t n, const struct pit_steady_opts *o, struct pit_steady *st,
                     struct pit_err *e);

/* ---------------- 2b. a run's records as the inputs of pit_predict ---------------- */

/* What pit_predict_inputs based the inputs on. */
struct pit_predict_basis {
  int wall;                  /* 1: the time of one iteration is the interval between consecutive
                                iteration records' clocks (t): the step and what runs between steps;
                                0: the logged step times (records without a clock) */
  struct pit_steady steady;  /* pit_steady_check of those times: warm-up, t_p interval, "not steady yet" */
  int64_t val_samples;       /* samples of one validation pass (config "val_samples"); -1 unknown */
  int64_t untimed_epochs;    /* records without a clock: epochs of this run with an epoch time, whose
                                untimed time (epoch time less its steps') is in epoch_edge already */
};
/* Fills in (everything but the job: unit, size, drift_allow) from one run's
 * summarized series s and its summary sm (pit_series_summarize): t_p, its
 * interval and drift from the per-iteration times after their warm-up (see
 * src/predict/inputs.c), iterations per epoch (config iters_per_epoch, else
 * samples / batch, else the largest seen), batch, init, validation and
 * epoch-edge terms, and done_iters / elapsed_s when the run has no end record
 * (in progress). precision: the steadiness check's P (<= 0: 0.02). name: the
 * run, in messages. PIT_ESTATE "run 'x': too few iterations to predict ..."
 * when t_p has no interval; PIT_ENOMEM. */
int pit_predict_inputs(const struct pit_series *s, const struct pit_summary *sm, const char *name,
                       double precision, struct pit_predict_in *in, struct pit_predict_basis *b,
                       struct pit_err *e);

/* The time per epoch that no step timed, learnt from earlier runs of the
 * same training script: for every epoch of runs[0..n-1] with an epoch time
 * and step times, epoch time less the sum of its steps (the data loader's
 * start before the first step, epoch-end work: what a log without a clock
 * cannot show until its first epoch ends). *out: their mean, and the 95%
 * prediction half-width for one more epoch, t·sd·√(1 + 1/m) over the m
 * values (m = 1: the value itself, i.e. [0, 2·value]); *m_out: m.
 * PIT_ESTATE "no epoch ... to learn from" naming the runs' count when m = 0;
 * PIT_ENOMEM. */
int pit_predict_untimed_prior(const struct pit_series *const *runs, int n, struct pit_term *out, int64_t *m_out,
                              struct pit_err *e);
/* Applies a prior from pit_predict_untimed_prior to inputs from
 * pit_predict_inputs when they need it — the records have no clock (basis
 * wall 0) and no epoch of the run's own has an epoch time (untimed_epochs 0):
 * in->untimed = *prior. Returns 1 when applied, 0 when not (a run with a
 * clock or with its own epochs knows better). */
int pit_predict_use_prior(struct pit_predict_in *in, const struct pit_predict_basis *b,
                          const struct pit_term *prior);

/* ---------------- 3. scaling over node counts ---------------- */

/* X(n) = λn / (1 + σ(n−1) + κn(n−1)). Fitted as the linear model
 * n/X = a + b(n−1) + c·n(n−1) (a = 1/λ, b = σ/λ, c = κ/λ) by weighted least
 * squares, weights from each point's interval; the parameters' covariance
 * (linearised) is scaled by the reduced χ² when there are spare points.
 * κ >= 0: a fit with κ < 0 is redone with κ = 0 (src/predict/usl.c). */
struct pit_usl_point {
  double n;                  /* nodes (or ranks) */
  double x;                  /* throughput (samples or iterations per second) */
  double x_half;             /* 95% half-width of x (NaN: 2% of x assumed) */
};
struct pit_usl {
  double lambda, sigma, kappa;
  double cov[3][3];          /* covariance of (a, b, c) */
  int npoints, ndistinct, dof;
  double chi2;
};
/* PIT_ESTATE "too few points" with fewer than 3 distinct node counts. */
int pit_usl_fit(const struct pit_usl_point *p, int np, struct pit_usl *fit, struct pit_err *e);
/* Throughput at n nodes and its 95% interval. */
void pit_usl_predict(const struct pit_usl *fit, double n, double *x, double *lo, double *hi);
/* The inputs of a job at `to` ranks from n runs of one configuration at other
 * rank counts (in[k] from pit_predict_inputs, ranks[k] its ranks): *out is a
 * copy of in[0] (init, validation, iterations per epoch...) with t_p and its
 * half-width from the USL fit of the runs' throughput batch / t_p (*fit), no
 * drift and no progress (a job not started). PIT_EARG: runs of different
 * global batches or without a rank count; PIT_ESTATE "too few points" with
 * fewer than 3 distinct counts (src/predict/scale.c). */
int pit_predict_scale(const struct pit_predict_in *in, const int *ranks, int n, double to,
                      struct pit_predict_in *out, struct pit_usl *fit, struct pit_err *e);

/* ---------------- 4. mixed memberships ---------------- */

enum pit_share_mode { PIT_SHARES_EQUAL, PIT_SHARES_AUTO };
/* One instance type of a membership, measured alone. */
struct pit_hetero_type {
  int ranks;                 /* ranks of this type in the membership */
  double compute_per_sample; /* seconds of compute per sample on one rank (compute_s / local batch) */
};
/* Step time of a membership of nt types sharing a global batch, plus comm_s
 * (the collective's time when nobody waits). Equal shares: every rank takes
 * batch/R samples and the slowest rank sets the pace; auto shares: each rank
 * takes samples in proportion to its speed, so the speeds add:
 * step = batch / Σ_ranks (1 / compute_per_sample) + comm_s.
 * *model names the model used ("equal shares: slowest rank sets the pace").
 * PIT_EARG for no ranks or a non-positive compute time. */
int pit_hetero_step(const struct pit_hetero_type *t, int nt, int64_t batch, double comm_s, enum pit_share_mode mode,
                    double *step_s, const char **model, struct pit_err *e);

#endif
