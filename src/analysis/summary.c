/* summary.c — from a struct pit_series to a struct pit_summary: descriptive
 * statistics, the steady state and the PIT time, per-rank imbalance, totals
 * and shares (definitions in docs/analysis.md).
 *
 * Steady state, in this order:
 *  1. the series' rank: iterations of rank -1 (records covering all ranks);
 *     if there are none (one-line-per-rank foreign logs), the smallest rank;
 *     the other ranks' iterations are PIT_IT_OTHER_RANK and only feed the
 *     imbalance figures;
 *  2. non-paramount: first and last iteration of every (run, gen, epoch)
 *     (epoch edges), iterations next to a validation/checkpoint record, the
 *     first iteration of every generation > 0 (after a resume);
 *  3. warm-up: pit_warmup on each (run, gen)'s remaining step times, in
 *     order; the drift of what is left (pit_drift), weighted over segments;
 *  4. t_p = mean of what is left (all runs of the series together), with the
 *     batch-means 95% interval.
 * Invariant: pit_series_summarize recomputes every flag except
 * PIT_IT_NEAR_EVENT (set while the records arrived), so it may be called again. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pitstop/analysis.h"

void pit_summary_release(struct pit_summary *sm) {
  free(sm->rank_compute_s);
  free(sm->rank_wait_s);
  memset(sm, 0, sizeof *sm);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double nan_div(double a, double b) { return (isnan(a) || isnan(b) || b <= 0) ? NAN : a / b; }

/* Marks epoch edges and resumes among the series-rank iterations. */
static void mark_structure(struct pit_series *s, int series_rank) {
  int64_t prev = -1; /* previous series-rank iteration */
  for (int64_t i = 0; i < s->nit; i++) {
    struct pit_series_iter *it = &s->it[i];
    it->flags &= PIT_IT_NEAR_EVENT;
    if (it->rank != series_rank) {
      it->flags |= PIT_IT_OTHER_RANK;
      continue;
    }
    int new_gen = prev < 0 || s->it[prev].run != it->run || s->it[prev].gen != it->gen;
    int new_epoch = new_gen || s->it[prev].epoch != it->epoch;
    if (new_epoch) {
      it->flags |= PIT_IT_EPOCH_EDGE;
      if (prev >= 0)
        s->it[prev].flags |= PIT_IT_EPOCH_EDGE;
    }
    if (new_gen && it->gen > 0)
      it->flags |= PIT_IT_RESUME;
    prev = i;
  }
  if (prev >= 0)
    s->it[prev].flags |= PIT_IT_EPOCH_EDGE;
}

/* pit_warmup per (run, gen) over the paramount candidates; fills keep[] with
 * the retained step times in order, *warm with the number dropped as warm-up
 * and *drift with the retained segments' drift weighted by their sizes. */
static int mark_warmup(struct pit_series *s, double *keep, int64_t *nkeep, int64_t *idx, int64_t *warm,
                       double *drift, double *drift_se, struct pit_err *e) {
  double dsum = 0, dw = 0, vsum = 0;
  *warm = 0;
  *nkeep = 0;
  int64_t i = 0;
  while (i < s->nit) {
    /* one (run, gen) segment: collect candidates */
    int run = s->it[i].run, gen = s->it[i].gen;
    int64_t n = 0, j = i;
    double *seg = keep + *nkeep;
    for (; j < s->nit && s->it[j].run == run && s->it[j].gen == gen; j++) {
      const struct pit_series_iter *it = &s->it[j];
      if (it->flags || !isfinite(it->step_s))
        continue;
      idx[n] = j;
      seg[n++] = it->step_s;
    }
    size_t d;
    double dr, se;
    if (pit_warmup(seg, (size_t)n, &d) || pit_drift(seg + d, (size_t)n - d, &dr, &se))
      return pit_err_set(e, PIT_ENOMEM, "out of memory finding the warm-up");
    for (size_t k = 0; k < d; k++)
      s->it[idx[k]].flags |= PIT_IT_WARMUP;
    memmove(seg, seg + d, sizeof(double) * (size_t)(n - (int64_t)d));
    *nkeep += n - (int64_t)d;
    *warm += (int64_t)d;
    if (isfinite(dr)) {
      double w = (double)(n - (int64_t)d);
      dsum += dr * w;
      vsum += se * se * w * w;
      dw += w;
    }
    i = j;
  }
  *drift = dw > 0 ? dsum / dw : NAN;
  *drift_se = dw > 0 ? sqrt(vsum) / dw : NAN;
  return 0;
}

static int imbalance(const struct pit_series *s, struct pit_summary *sm) {
  int nr = 0, from_arrays = 0;
  for (int64_t i = 0; i < s->nit; i++) {
    const struct pit_series_iter *it = &s->it[i];
    if (!(it->flags & PIT_IT_OTHER_RANK) && it->nranks > 0) {
      from_arrays = 1;
      if (it->nranks > nr)
        nr = it->nranks;
    }
  }
  if (!from_arrays) /* one-line-per-rank records: each rank's own step times */
    for (int64_t i = 0; i < s->nit; i++)
      if (s->it[i].rank + 1 > nr)
        nr = s->it[i].rank + 1;
  sm->nranks = nr;
  sm->slow_rank = -1;
  sm->slow_compute_s = sm->median_rank_compute_s = sm->slow_excess = sm->wait_share = NAN;
  if (nr <= 0)
    return 0;
  double *sc = calloc((size_t)nr, sizeof(double)), *sw = calloc((size_t)nr, sizeof(double));
  int64_t *nc = calloc((size_t)nr, sizeof(int64_t)), *nw = calloc((size_t)nr, sizeof(int64_t));
  sm->rank_compute_s = malloc(sizeof(double) * (size_t)nr);
  sm->rank_wait_s = malloc(sizeof(double) * (size_t)nr);
  if (!sc || !sw || !nc || !nw || !sm->rank_compute_s || !sm->rank_wait_s) {
    free(sc);
    free(sw);
    free(nc);
    free(nw);
    return PIT_ENOMEM;
  }
  double tot_c = 0, tot_w = 0;
  for (int64_t i = 0; i < s->nit; i++) {
    const struct pit_series_iter *it = &s->it[i];
    if (from_arrays) {
      /* steady state only: warm-up and non-paramount iterations distort it */
      if (it->flags)
        continue;
      for (int k = 0; k < it->nranks; k++) {
        double c = s->compute_s[it->ranks_off + k], w = s->wait_s[it->ranks_off + k];
        if (isfinite(c)) {
          sc[k] += c;
          nc[k]++;
        }
        if (isfinite(w)) {
          sw[k] += w;
          nw[k]++;
        }
        if (isfinite(c) && isfinite(w)) {
          tot_c += c;
          tot_w += w;
        }
      }
    } else if (it->rank >= 0 && isfinite(it->step_s) &&
               !(it->flags & (PIT_IT_EPOCH_EDGE | PIT_IT_NEAR_EVENT | PIT_IT_RESUME))) {
      sc[it->rank] += it->step_s;
      nc[it->rank]++;
    }
  }
  int fast = -1, have = 0;
  double *means = malloc(sizeof(double) * (size_t)nr);
  for (int k = 0; k < nr; k++) {
    sm->rank_compute_s[k] = nc[k] ? sc[k] / (double)nc[k] : NAN;
    sm->rank_wait_s[k] = nw[k] ? sw[k] / (double)nw[k] : NAN;
    if (isnan(sm->rank_compute_s[k]))
      continue;
    if (means)
      means[have] = sm->rank_compute_s[k];
    have++;
    if (sm->slow_rank < 0 || sm->rank_compute_s[k] > sm->rank_compute_s[sm->slow_rank])
      sm->slow_rank = k;
    if (fast < 0 || sm->rank_compute_s[k] < sm->rank_compute_s[fast])
      fast = k;
  }
  if (sm->slow_rank >= 0) {
    sm->slow_compute_s = sm->rank_compute_s[sm->slow_rank];
    sm->slow_excess = nan_div(sm->slow_compute_s, sm->rank_compute_s[fast]) - 1;
    if (means) {
      qsort(means, (size_t)have, sizeof *means, cmp_double);
      sm->median_rank_compute_s = pit_quantile_sorted(means, (size_t)have, 0.5);
    }
  }
  if (from_arrays && tot_c + tot_w > 0)
    sm->wait_share = tot_w / (tot_c + tot_w);
  PIT_FREE_ALL(means, sc, sw, nc, nw);
  return 0;
}

int pit_series_summarize(struct pit_series *s, struct pit_summary *sm, struct pit_err *e) {
  memset(sm, 0, sizeof *sm);
  sm->nruns = s->nruns;
  if (s->nruns == 0)
    return pit_err_set(e, PIT_ENOTFOUND, "no records to summarize");
  for (int i = 0; i < s->nruns; i++) { /* batch shares: how often auto moved them, the last */
    sm->rebalances += s->runs[i].rebalances;
    if (s->runs[i].shares[0])
      snprintf(sm->shares, sizeof sm->shares, "%s", s->runs[i].shares);
  }
  /* 1. the series' rank */
  int series_rank = -2;
  for (int64_t i = 0; i < s->nit && series_rank != -1; i++)
    if (series_rank == -2 || s->it[i].rank < series_rank)
      series_rank = s->it[i].rank;
  mark_structure(s, series_rank);

  int64_t n = s->nit > 0 ? s->nit : 1;
  double *a = malloc(sizeof(double) * (size_t)n), *b = malloc(sizeof(double) * (size_t)n);
  int64_t *idx = malloc(sizeof(int64_t) * (size_t)n);
  if (!a || !b || !idx) {
    free(a);
    free(b);
    free(idx);
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  }
  int rc = 0;
  /* descriptive statistics of every series-rank iteration */
  int64_t m = 0, edges = 0;
  double edge_sum = 0;
  sm->iters_per_epoch = NAN;
  for (int64_t i = 0; i < s->nit; i++) {
    const struct pit_series_iter *it = &s->it[i];
    if (it->flags & PIT_IT_OTHER_RANK)
      continue;
    a[m] = it->step_s;
    b[m++] = it->data_s;
    if (it->flags)
      sm->non_paramount++;
    if ((it->flags & PIT_IT_EPOCH_EDGE) && isfinite(it->step_s)) {
      edge_sum += it->step_s;
      edges++;
    }
    if (it->epoch >= 0 && it->iter >= 0 && (isnan(sm->iters_per_epoch) || it->iter + 1 > sm->iters_per_epoch))
      sm->iters_per_epoch = (double)(it->iter + 1);
  }
  /* a log that says its epoch's length ("iteration: i/L", pitstop parse puts L
   * into the init record's config) predicts a whole epoch from a part of it */
  for (int i = 0; i < s->nruns; i++) {
    double L = pit_config_num(&s->runs[i].cfg, s->runs[i].config, "iters_per_epoch");
    if (L >= 1 && (isnan(sm->iters_per_epoch) || L > sm->iters_per_epoch))
      sm->iters_per_epoch = L;
  }
  sm->iters = m;
  if ((rc = pit_stats_compute(&sm->step, a, (size_t)m)) || (rc = pit_stats_compute(&sm->data, b, (size_t)m)))
    goto out;
  /* steady state and t_p */
  int64_t nkeep;
  if ((rc = mark_warmup(s, a, &nkeep, idx, &sm->warmup, &sm->drift, &sm->drift_se, e)) ||
      (rc = pit_batch_means(a, (size_t)nkeep, &sm->tp)))
    goto out;
  sm->epoch_edge_extra_s = edges ? edge_sum / (double)edges - sm->tp.mean : NAN;
  /* other durations */
  enum pit_rec_type kinds[4] = {PIT_REC_INIT, PIT_REC_EPOCH, PIT_REC_VALIDATION, PIT_REC_CHECKPOINT};
  struct pit_stats *st[4] = {&sm->init, &sm->epoch, &sm->validation, &sm->checkpoint};
  double *tot[4] = {&sm->init_total_s, &sm->epoch_total_s, &sm->validation_total_s, &sm->checkpoint_total_s};
  double *vals = malloc(sizeof(double) * (size_t)(s->nev ? s->nev : 1));
  if (!vals) {
    rc = PIT_ENOMEM;
    goto out;
  }
  for (int k = 0; k < 4 && !rc; k++) {
    int64_t c = 0;
    double sum = 0;
    int any = 0;
    for (int64_t i = 0; i < s->nev; i++) {
      if (s->ev[i].type != kinds[k])
        continue;
      vals[c++] = s->ev[i].v;
      if (s->ev[i].rank <= 0 && isfinite(s->ev[i].v)) {
        sum += s->ev[i].v;
        any = 1;
      }
    }
    rc = pit_stats_compute(st[k], vals, (size_t)c);
    *tot[k] = any ? sum : 0;
  }
  if (!rc) {
    int64_t c = 0;
    for (int64_t i = 0; i < s->nev; i++)
      if (s->ev[i].type == PIT_REC_INIT)
        vals[c++] = s->ev[i].rdzv_s;
    rc = pit_stats_compute(&sm->rdzv, vals, (size_t)c);
  }
  free(vals);
  if (rc)
    goto out;
  /* totals and shares */
  sm->total_s = 0;
  for (int i = 0; i < s->nruns; i++) {
    double t = !isnan(s->runs[i].end_total_s) ? s->runs[i].end_total_s : s->runs[i].last_t;
    if (isnan(t)) {
      sm->total_s = NAN;
      break;
    }
    sm->total_s += t;
  }
  sm->init_share = nan_div(sm->init_total_s, sm->total_s);
  sm->epoch_share = nan_div(sm->epoch_total_s, sm->total_s);
  sm->validation_share = nan_div(sm->validation_total_s, sm->total_s);
  sm->checkpoint_share = nan_div(sm->checkpoint_total_s, sm->total_s);
  rc = imbalance(s, sm);
out:
  free(a);
  free(b);
  free(idx);
  if (rc) {
    pit_summary_release(sm);
    return pit_err_set(e, rc, "out of memory");
  }
  return 0;
}
