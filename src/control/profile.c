/* profile.c — measured memberships ranked for a job (pitstop profile, and the
 * prior a cost/time run starts from): per (membership, model, global batch)
 * the stored run with the most steady iterations, its t_p, samples per second
 * and per dollar, and the job's predicted time and cost with 95% intervals.
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
  r->sps = (double)r->batch / r->tp;
  r->price_h = NAN;
  if (cat && pit_catalog_cost(cat, &r->m, 3600, &r->price_h, e) < 0)
    r->price_h = NAN; /* a type the catalog lacks */
  r->spd = r->price_h > 0 ? r->sps * 3600 / r->price_h : NAN;
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

int pit_profile_rank(const struct pit_runset *rs, const struct pit_catalog *cat, const struct pit_profile_query *q,
                     struct pit_profile_row **rows, int *n, int *best, struct pit_err *e) {
  *rows = NULL;
  *n = 0;
  *best = -1;
  struct pit_profile_row *out = calloc((size_t)rs->n + 1, sizeof *out);
  if (!out)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  int k = 0;
  for (int i = 0; i < rs->n; i++) {
    const struct pit_report_run *rr = &rs->runs[i];
    if (rr->cfg.members.n == 0 || rr->cfg.batch <= 0 || !(rr->sum.tp.mean > 0))
      continue;
    if ((q->model && strcmp(q->model, rr->cfg.model) != 0) || (q->batch > 0 && q->batch != rr->cfg.batch))
      continue;
    struct pit_profile_row r;
    row_of(rr, cat, q, &r, e);
    int j = 0; /* one row per (membership, model, batch): the most measured */
    while (j < k && !(pit_membership_equal(&out[j].m, &r.m) && out[j].batch == r.batch &&
                      strcmp(out[j].model, r.model) == 0))
      j++;
    if (j == k)
      out[k++] = r;
    else if (r.n > out[j].n)
      out[j] = r;
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
