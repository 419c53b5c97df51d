/* profile.c — measured memberships ranked for a job (pitstop profile, and the
 * prior a cost/time run starts from): per (membership, model, global batch)
 * the stored run with the most steady iterations, its t_p, samples per second
 * and per dollar, and the job's predicted time and cost with 95% intervals.
 * An elastic run that changed membership gives one row per part (its
 * generations on one membership), never one for the whole run.
 * A command's runs (pitstop run -- CMD: one argv, matched by the init
 * config's "command") have no batch: they are ranked per step.
 * Invariants: only measured figures (no row is extrapolated); a row whose
 * price is unknown is kept but never chosen by cost; the order is total
 * (ties broken by membership text), so the same store gives the same table. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pitstop/control.h"

static int fits(const struct pit_profile_query *q, const struct pit_profile_row *r) {
  return (isnan(q->deadline_s) || (r->job_s <= q->deadline_s)) && (isnan(q->budget) || (r->cost <= q->budget));
}

/* Smaller is better: the objective's value (NaN and infinite last). */
static double key(const struct pit_profile_query *q, const struct pit_profile_row *r) {
  double v;
  if (q->size > 0)
    v = q->objective == PIT_POLICY_TIME ? r->job_s : r->cost;
  else if (r->batch <= 0) /* a command's runs (one argv, so one batch, unknown): per step */
    v = q->objective == PIT_POLICY_TIME ? r->tp : r->price_h * r->tp; /* forecast: per step, the measured t_p */
  else
    v = q->objective == PIT_POLICY_TIME ? -r->sps : -r->spd;
  return isfinite(v) ? v : INFINITY;
}

static const struct pit_profile_query *sort_q;
static int cmp_rows(const void *a, const void *b) {
  const struct pit_profile_row *x = a, *y = b;
  if (x->fits != y->fits)
    return y->fits - x->fits;
  double kx = key(sort_q, x), ky = key(sort_q, y);
  if (kx != ky)
    return kx < ky ? -1 : 1;
  /* a tie: the cheaper per step (then the faster) */
  double cx = x->price_h * x->tp, cy = y->price_h * y->tp; /* forecast: per step, the measured t_p */
  if (isfinite(cx) && isfinite(cy) && cx != cy)
    return cx < cy ? -1 : 1;
  if (x->tp != y->tp)
    return x->tp < y->tp ? -1 : 1;
  char tx[PIT_MEMBERSHIP_TEXT_MAX], ty[PIT_MEMBERSHIP_TEXT_MAX];
  pit_membership_format(&x->m, tx, sizeof tx);
  pit_membership_format(&y->m, ty, sizeof ty);
  int c = strcmp(tx, ty);
  return c ? c : strcmp(x->run, y->run);
}

static int row_of(const struct pit_report_run *rr, const struct pit_catalog *cat, const struct pit_profile_query *q,
                  struct pit_profile_row *r, struct pit_err *e) {
  memset(r, 0, sizeof *r);
  snprintf(r->run, sizeof r->run, "%s", rr->name);
  snprintf(r->model, sizeof r->model, "%s", rr->cfg.model);
  r->batch = rr->cfg.batch;
  r->m = rr->cfg.members;
  r->tp = rr->sum.tp.mean;
  r->tp_half = rr->sum.tp.half;
  r->n = rr->sum.tp.n;
  r->sps = r->batch > 0 ? (double)r->batch / r->tp : NAN; /* a command's batch is unknown */
  r->price_h = NAN;
  if (cat && pit_catalog_cost(cat, &r->m, 3600, &r->price_h, e) < 0)
    r->price_h = NAN; /* a type the catalog lacks */
  r->spd = r->price_h > 0 ? r->sps * 3600 / r->price_h : NAN;
  r->steps_pd = r->price_h > 0 ? 3600 / (r->price_h * r->tp) : NAN; /* forecast: per dollar at the measured t_p */
  r->job_s = r->job_lo = r->job_hi = r->cost = r->cost_lo = r->cost_hi = NAN;
  if (q->size > 0) {
    struct pit_predict_in in;
    pit_predict_in_init(&in);
    in.tp = r->tp;
    in.tp_half = r->tp_half;
    in.drift = rr->sum.drift;
    in.drift_se = rr->sum.drift_se;
    in.measured = r->n;
    in.iters_per_epoch = rr->sum.iters_per_epoch;
    in.batch = r->batch;
    in.init = (struct pit_term){rr->sum.init.n ? rr->sum.init.mean : NAN, NAN};
    in.unit = q->unit;
    in.size = q->size;
    struct pit_prediction pr;
    struct pit_err e2 = {0};
    if (pit_predict(&in, &pr, &e2) == 0) {
      r->job_s = pr.total_s;
      r->job_lo = pr.lo;
      r->job_hi = pr.hi;
      if (cat && pit_catalog_cost(cat, &r->m, pr.total_s, &r->cost, &e2) == 0) {
        pit_catalog_cost(cat, &r->m, pr.lo, &r->cost_lo, &e2);
        pit_catalog_cost(cat, &r->m, pr.hi, &r->cost_hi, &e2);
      }
    }
  }
  r->fits = fits(q, r) && (q->objective == PIT_POLICY_TIME || !isnan(r->price_h));
  pit_err_clear(e);
  return 0;
}

/* r's row into out[0..*k) when it is of the query's model and batch: one row
 * per (membership, model, batch), the most measured. */
static void add_row(struct pit_profile_row *out, int *k, const struct pit_report_run *rr, const struct pit_catalog *cat,
                    const struct pit_profile_query *q, struct pit_err *e) {
  char differs[sizeof out->differs] = "";
  if (q->command) { /* a command's own runs: the same argv (but its length, output, seed), whatever batch it
                       has (unknown to pitstop) */
    char cmd[4096];
    pit_config_field(&rr->cfg, rr->config, "command", cmd, sizeof cmd);
    if (!cmd[0] || !pit_command_same(cmd, q->command, q->vary, differs, sizeof differs) || rr->cfg.members.n == 0 ||
        !(rr->sum.tp.mean > 0))
      return;
  } else if (rr->cfg.members.n == 0 || rr->cfg.batch <= 0 || !(rr->sum.tp.mean > 0))
    return;
  if ((q->model && strcmp(q->model, rr->cfg.model) != 0) || (q->batch > 0 && q->batch != rr->cfg.batch))
    return;
  struct pit_profile_row r;
  row_of(rr, cat, q, &r, e);
  snprintf(r.differs, sizeof r.differs, "%s", differs);
  int j = 0;
  while (j < *k && !(pit_membership_equal(&out[j].m, &r.m) && out[j].batch == r.batch &&
                     strcmp(out[j].model, r.model) == 0))
    j++;
  if (j == *k)
    out[(*k)++] = r;
  else if (r.n > out[j].n)
    out[j] = r;
}

/* Part `part` of an elastic run (its generations on one membership) as a run of
 * its own, summarized: a measurement of that membership. */
static int part_run(const struct pit_report_run *rr, int part, struct pit_report_run *pr, struct pit_err *e) {
  const struct pit_series_seg *seg = pit_series_part(&rr->series, part);
  memset(pr, 0, sizeof *pr);
  pit_series_init(&pr->series);
  if (!seg)
    return pit_err_set(e, PIT_EARG, "run %s: no part %d", rr->name, part);
  snprintf(pr->name, sizeof pr->name, "%.*s@gen%d", (int)sizeof pr->name - 16, rr->name, seg->gen_from);
  pr->cfg = seg->cfg;
  pr->config = seg->config;
  int rc = pit_series_append_part(&pr->series, &rr->series, part, e);
  return rc ? rc : pit_series_summarize(&pr->series, &pr->sum, e);
}

int pit_profile_rank(const struct pit_runset *rs, const struct pit_catalog *cat, const struct pit_profile_query *q,
                     struct pit_profile_row **rows, int *n, int *best, struct pit_err *e) {
  *rows = NULL;
  *n = 0;
  *best = -1;
  size_t cap = 1;
  for (int i = 0; i < rs->n; i++)
    cap += (size_t)pit_series_parts(&rs->runs[i].series);
  struct pit_profile_row *out = calloc(cap, sizeof *out);
  if (!out)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  int k = 0;
  for (int i = 0; i < rs->n; i++) {
    const struct pit_report_run *rr = &rs->runs[i];
    /* an elastic run that changed membership: each of its parts measures its own membership; its summary
     * over every generation measures none (it would give the first membership the last one's pace) */
    int nparts = pit_series_parts(&rr->series);
    if (nparts <= 1) {
      add_row(out, &k, rr, cat, q, e);
      continue;
    }
    for (int part = 0; part < nparts; part++) {
      struct pit_report_run pr;
      int rc = part_run(rr, part, &pr, e);
      if (rc == 0)
        add_row(out, &k, &pr, cat, q, e);
      pit_summary_release(&pr.sum);
      pit_series_release(&pr.series);
      if (rc) {
        free(out);
        return rc;
      }
    }
  }
  sort_q = q;
  qsort(out, (size_t)k, sizeof *out, cmp_rows);
  if (k && out[0].fits) {
    out[0].chosen = 1;
    *best = 0;
  }
  *rows = out;
  *n = k;
  return 0;
}
