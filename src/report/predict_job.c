/* predict_job.c — a prediction's report set up from a run (`pitstop predict`):
 * the job it is for when none is given (the job the run planned), a job the
 * run already did in full (a run finished by the controller's end: what it
 * ran), the membership priced, the costs of the predicted
 * time and of what is still to pay, and the steadiness line. The command
 * parses options and loads runs; this file decides (docs/predict.md).
 * Invariants: nothing is printed; catalog costs go through catalog/cost.c
 * (pit_catalog_cost: billing granularity and minimum); text goes only into
 * the buffers given. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pitstop/report.h"

/* No --epochs, --iters or --samples: the job the run itself planned, as its
 * config states it (pitstop train's planned_iters: whole epochs when it is a
 * multiple of iters_per_epoch; a course log's N of "[epoch: e/N]"), else the
 * epochs the run has reached (begun), else one epoch. A run in progress is
 * then predicted to its own end, and one past its first epoch is not taken for
 * a new 1-epoch job. */
void pit_predict_own_job(const struct pit_report_run *r, const struct pit_predict_in *in, enum pit_job_unit *unit,
                         double *size, char *from, size_t cap) {
  const struct pit_series_run *ru = r->series.nruns > 0 ? &r->series.runs[0] : NULL;
  if (ru && ru->over && ru->ended_ctl && in->done_iters > 0) {
    /* finished by the controller's end (the script exited 0): the job was what it ran, whole
     * epochs when that is a multiple of the epoch, whatever it had planned */
    double ipe = in->iters_per_epoch, n = (double)in->done_iters;
    int whole = isfinite(ipe) && ipe >= 1 && fmod(n, ipe) == 0;
    *unit = whole ? PIT_JOB_EPOCHS : PIT_JOB_ITERS;
    *size = whole ? n / ipe : n;
    snprintf(from, cap, "the run finished (the script exited 0): the %.0f %s it ran", *size,
             whole ? (*size == 1 ? "epoch" : "epochs") : "iterations");
    return;
  }
  double planned = pit_config_num(&r->cfg, r->config, "planned_iters");
  if (planned >= 1) {
    double ipe = in->iters_per_epoch;
    if (isfinite(ipe) && ipe >= 1 && fmod(planned, ipe) == 0) {
      *unit = PIT_JOB_EPOCHS;
      *size = planned / ipe;
    } else {
      *unit = PIT_JOB_ITERS;
      *size = planned;
    }
    snprintf(from, cap, "the run's config (planned_iters %.0f)", planned);
    return;
  }
  double epochs = pit_config_num(&r->cfg, r->config, "epochs"); /* a log's "[epoch: e/N]" */
  if (epochs >= 1) {
    *unit = PIT_JOB_EPOCHS;
    *size = epochs;
    snprintf(from, cap, "the run's config (epochs %.0f)", epochs);
    return;
  }
  double ipe = in->iters_per_epoch;
  if (in->done_iters > 0 && isfinite(ipe) && ipe >= 1 && (double)in->done_iters > ipe) {
    *unit = PIT_JOB_EPOCHS; /* past its first epoch: not taken for a 1-epoch job */
    *size = ceil((double)in->done_iters / ipe - 1e-9);
    snprintf(from, cap, "default (the %.0f epochs the run reached; it states no planned_iters or epochs)", *size);
    return;
  }
  snprintf(from, cap, "default (1 epoch; the run states no planned_iters or epochs)");
}

/* A job no larger than what the run has done (--epochs 1 on a stored 3-epoch
 * run): the run did the whole job, so its first n iterations are what is done
 * (n the job's), the time it took them is the elapsed time — the run time of
 * the last record of step n-1 where the records have a clock (a step redone
 * after a failure counts where it was last done), else the step times of
 * steps 0..n-1 and the init — and nothing remains; from says so. */
void pit_predict_job_done_in_run(const struct pit_series *s, char *from, size_t cap, struct pit_predict_in *in) {
  double ipe = in->iters_per_epoch;
  double n = in->unit == PIT_JOB_EPOCHS  ? in->size * ipe
             : in->unit == PIT_JOB_ITERS ? in->size
             : in->batch > 0             ? in->size / (double)in->batch
                                         : NAN;
  if (!(in->done_iters > 0) || !isfinite(n) || in->done_iters <= (int64_t)ceil(n - 1e-9))
    return;
  int64_t job = (int64_t)ceil(n - 1e-9);
  double t = NAN, steps = 0;
  int clock = 1;
  for (int64_t i = 0; i < s->nit; i++) {
    const struct pit_series_iter *it = &s->it[i];
    if (it->step >= job || (it->flags & PIT_IT_OTHER_RANK))
      continue;
    clock = clock && isfinite(it->t);
    if (it->step == job - 1 && isfinite(it->t) && !(it->t <= t))
      t = it->t;
    if (isfinite(it->step_s))
      steps += it->step_s;
  }
  double init = isfinite(in->init.mean) ? in->init.mean : 0;
  size_t k = strlen(from);
  snprintf(from + k, cap - k, " (the run did %lld iterations, more than the job's %lld: done in it)",
           (long long)in->done_iters, (long long)job);
  in->done_iters = job;
  in->edge_done = 0;
  if (clock && isfinite(t)) {
    in->elapsed_s = t;
    in->elapsed_untimed = 0;
  } else {
    in->elapsed_s = steps + init;
    in->elapsed_untimed = PIT_PREDICT_DRIFT_ALLOW * in->elapsed_s;
  }
}

/* The membership priced: --itype (with --nodes for one type), else the run's
 * own; every type must be in the catalog. */
int pit_predict_priced_membership(const struct pit_catalog *cat, const char *catalog, const char *itype,
                                   double nodes, const struct pit_report_run *r, struct pit_membership *m, struct pit_err *e) {
  const struct pit_series_seg *now = r->series.nruns > 0 ? pit_series_last_seg(&r->series.runs[0]) : NULL;
  if (itype) {
    if (pit_membership_parse(m, itype, e))
      return pit_err_hint(e, "--itype takes a type or a membership such as c5.xlarge:2+m5.large:1"), PIT_EARG;
    if (m->n == 1 && nodes > 0)
      m->m[0].nodes = (int)nodes;
  } else if (now && now->cfg.members.n > 0) {
    *m = now->cfg.members; /* the membership its last generation runs on */
  } else if (r->cfg.members.n > 0) {
    *m = r->cfg.members;
  } else {
    pit_err_set(e, PIT_EARG, "run '%s' names no instance type to price", r->name);
    pit_err_hint(e, "give --itype T (one of the types in '%s')", catalog);
    return PIT_EARG;
  }
  for (int i = 0; i < m->n; i++)
    if (!pit_catalog_find(cat, m->m[i].itype))
      return pit_err_set(e, PIT_ENOTFOUND, "instance type '%s' is not in '%s'", m->m[i].itype, catalog);
  return 0;
}

int pit_predict_report_cost(struct pit_predict_report *rep, const struct pit_catalog *cat,
                            const struct pit_membership *mem, struct pit_err *e) {
  /* US$ still to pay: the bill for the elapsed time plus what remains, less the
   * bill for the elapsed time (billing runs from the start: its granularity and
   * minimum count once); its interval is the remaining time's — the elapsed
   * time's own uncertainty (a log without a clock) is in what was paid, not in
   * what is still to pay, so a finished run has exactly 0 left */
  const struct pit_predict_in *in = &rep->in;
  double el = in->elapsed_s > 0 ? in->elapsed_s : 0, spent = 0, until[3] = {NAN, NAN, NAN};
  int rc = 0;
  if (pit_catalog_cost(cat, mem, rep->p.total_s, &rep->cost, e) ||
      pit_catalog_cost(cat, mem, rep->p.lo, &rep->cost_lo, e) ||
      pit_catalog_cost(cat, mem, rep->p.hi, &rep->cost_hi, e) ||
      (el > 0 && pit_catalog_cost(cat, mem, el, &spent, e)) || /* not started: nothing paid */
      pit_catalog_cost(cat, mem, el + rep->p.remaining_s, &until[0], e) ||
      pit_catalog_cost(cat, mem, el + rep->p.remaining_lo, &until[1], e) ||
      pit_catalog_cost(cat, mem, el + rep->p.remaining_hi, &until[2], e) ||
      (in->batch > 0 && pit_catalog_samples_per_dollar(cat, mem, in->tp, (double)in->batch, rep->p.total_s,
                                                        &rep->samples_per_dollar, e)))
    rc = e->code ? e->code : PIT_EARG;
  rep->rcost = until[0] - spent;
  rep->rcost_lo = until[1] - spent > 0 ? until[1] - spent : 0;
  rep->rcost_hi = until[2] - spent;
  rep->price_h = 0;
  for (int i = 0; !rc && i < mem->n; i++)
    rep->price_h += mem->m[i].nodes * pit_catalog_find(cat, mem->m[i].itype)->price_h;
  return rc;
}

void pit_predict_report_steady(struct pit_predict_report *rep, const struct pit_predict_basis *basis, double scale_to,
                               char *steady, size_t cap) {
  const struct pit_predict_in *in = &rep->in;
  snprintf(steady, cap, "%s: %s", basis->steady.state == PIT_STEADY_OK ? "steady" : "not steady yet",
           basis->steady.why);
  rep->want_iters = basis->steady.state == PIT_STEADY_OK ? 0 : basis->steady.want;
  if (rep->p.drift_want > 0) { /* steady over what was measured, too short for what is predicted */
    if (basis->steady.state == PIT_STEADY_OK)
      snprintf(steady, cap,
               "not steady yet: a drift of %.1f%% over the rest cannot be ruled out from %lld iterations "
               "(the interval allows %.1f%%)",
               100 * rep->p.drift_bound, (long long)in->measured, 100 * rep->p.drift_rel);
    if (rep->p.drift_want > rep->want_iters)
      rep->want_iters = rep->p.drift_want;
  }
  rep->steady = steady;
  rep->warmup = (int64_t)basis->steady.warmup;
  rep->tp_lo = basis->steady.tp.lo;
  rep->tp_hi = basis->steady.tp.hi;
  if (isfinite(scale_to)) { /* nothing measured at this count: t_p is the fit's */
    snprintf(steady, cap, "not measured at %g ranks: t_p from the scaling fit", scale_to);
    rep->want_iters = rep->warmup = 0;
    rep->tp_lo = in->tp - in->tp_half;
    rep->tp_hi = in->tp + in->tp_half;
  }
  rep->val_samples = basis->val_samples;
  rep->time_basis = basis->wall ? "wall clock between iteration records" : "logged step times";
}
