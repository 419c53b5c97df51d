/* observe.c — what the controller has seen, as the cost and time policies
 * need it: the current generation's step times (steady by pit_steady_check),
 * its ranks' mean compute and wait, each node's compute paired against the
 * others' within the same steps, and the PIT time of every membership the
 * job has run on.
 * Invariants: a membership has at most one entry in meas (its latest
 * generation's measurement replaces an earlier one only when it is steady);
 * nothing here decides — it only fills struct pit_policy_state. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policy/observe.h"
#include "pitstop/analysis.h"
#include "pitstop/predict.h"

void ctl_obs_init(struct ctl_obs *o) {
  memset(o, 0, sizeof *o);
  /* 10%, not the 2-3% of a profile: the policy compares intervals' ends, so a
   * membership needs only to be known well enough for that, and every
   * iteration spent knowing it better on a bad membership is paid for (a
   * 2-rank cnn-wide step with a 40% node spreads 10-20% from step to step: 3%
   * took the 200-iteration cap, 10% takes 50-70; issue 15,
   * tests/control/test_observe.c). Its t_p keeps being refined every
   * CTL_OBS_EVERY iterations afterwards. */
  o->precision = 0.10;
  o->cap_iters = PIT_POLICY_MEASURE_MAX;
}

void ctl_obs_release(struct ctl_obs *o) {
  free(o->steps);
  free(o->pc);
  o->steps = o->pc = NULL;
  o->n = o->cap = o->cappc = 0;
}

void ctl_obs_gen(struct ctl_obs *o) {
  o->n = 0;
  o->nranks = o->nsplit = 0;
  o->steady = 0;
  memset(o->csum, 0, sizeof o->csum);
  memset(o->wsum, 0, sizeof o->wsum);
}

static void set_meas(struct ctl_obs *o, const struct pit_membership *cur, const struct pit_steady *st) {
  int k = 0;
  while (k < o->nmeas && !pit_membership_equal(&o->meas[k].m, cur))
    k++;
  if (k == o->nmeas) {
    if (o->nmeas == PIT_POLICY_MEAS_MAX)
      return;
    o->nmeas++;
  }
  o->meas[k].m = *cur;
  o->meas[k].tp = st->tp.mean;
  o->meas[k].tp_half = st->tp.half;
  o->meas[k].n = (int64_t)(o->n - st->warmup);
}

int ctl_obs_iter(struct ctl_obs *o, const struct pit_membership *cur, const struct pit_record *r,
                 struct pit_err *e) {
  if (!(r->step_s > 0))
    return 0;
  if (r->batch > 0)
    o->batch = r->batch;
  if (o->n == o->cap) {
    size_t cap = o->cap ? 2 * o->cap : 1024;
    double *g = realloc(o->steps, cap * sizeof *g);
    if (!g)
      return pit_err_set(e, PIT_ENOMEM, "out of memory");
    o->steps = g;
    o->cap = cap;
  }
  o->steps[o->n++] = r->step_s;
  if (o->n > CTL_OBS_SKIP && r->nranks > 0 && r->nranks <= PIT_POLICY_NODES_MAX && r->compute_s) {
    if (o->nsplit == 0 || r->nranks != o->nranks) {
      memset(o->csum, 0, sizeof o->csum);
      memset(o->wsum, 0, sizeof o->wsum);
      o->nsplit = 0;
      o->nranks = r->nranks;
    }
    size_t need = ((size_t)o->nsplit + 1) * (size_t)r->nranks;
    if (need > o->cappc) {
      size_t cap = need > 2 * o->cappc ? need : 2 * o->cappc;
      double *g = realloc(o->pc, cap * sizeof *g);
      if (!g)
        return pit_err_set(e, PIT_ENOMEM, "out of memory");
      o->pc = g;
      o->cappc = cap;
    }
    for (int i = 0; i < r->nranks; i++) {
      o->csum[i] += isfinite(r->compute_s[i]) ? r->compute_s[i] : 0;
      o->wsum[i] += r->wait_s && isfinite(r->wait_s[i]) ? r->wait_s[i] : 0;
      o->pc[(size_t)o->nsplit * r->nranks + i] = r->compute_s[i];
    }
    o->nsplit++;
  }
  if (o->n % CTL_OBS_EVERY != 0)
    return 0;
  /* the floor: PIT_POLICY_EARLY_STEPS (10), not pit_steady_check's 50 — a
   * clear pace is known in 10-20 iterations (the batch-means interval, with
   * its t quantile for few batches, says when it is not) and the policy's
   * first decision point is as soon as it is; a noisy one stays "measuring"
   * until its interval is within the precision */
  struct pit_steady_opts so = {o->precision, PIT_POLICY_EARLY_STEPS, o->cap_iters};
  struct pit_steady st;
  int rc = pit_steady_check(o->steps, o->n, &so, &st, e);
  if (rc < 0)
    return rc;
  if (st.state != PIT_STEADY_MORE && st.tp.mean > 0) {
    o->steady = 1;
    set_meas(o, cur, &st);
  }
  return 0;
}

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median, 10th and 90th percentile of the generation's step times past the
 * first CTL_OBS_SKIP (NaN: fewer than PIT_POLICY_PAIRED_MIN of them; only the
 * paired rule uses them, at its cautious ends). */
static void pace(const struct ctl_obs *o, struct pit_policy_state *s) {
  s->pace_s = s->pace_lo_s = s->pace_hi_s = NAN;
  if (o->n < CTL_OBS_SKIP + PIT_POLICY_PAIRED_MIN)
    return;
  size_t n = o->n - CTL_OBS_SKIP;
  double *x = malloc(n * sizeof *x);
  if (!x)
    return; /* out of memory: no pace, so no early decision */
  memcpy(x, o->steps + CTL_OBS_SKIP, n * sizeof *x);
  qsort(x, n, sizeof *x, cmp_dbl);
  s->pace_s = pit_quantile_sorted(x, n, 0.5);
  s->pace_lo_s = pit_quantile_sorted(x, n, 0.1);
  s->pace_hi_s = pit_quantile_sorted(x, n, 0.9);
  free(x);
}

/* A node's compute in split step t: the mean of its slots' ranks (NaN if any is not a positive number). */
static double node_c(const struct ctl_obs *o, int t, int node, int slots) {
  double c = 0;
  for (int k = node * slots; k < (node + 1) * slots; k++) {
    double v = o->pc[(size_t)t * o->nranks + k];
    if (!(v > 0) || !isfinite(v))
      return NAN;
    c += v;
  }
  return c / slots;
}

/* n's paired ratio (ctl_obs_state): log(slowest other / this) per split step, its mean + t·sd/√n. */
static void paired(const struct ctl_obs *o, int node, int nnodes, int slots, struct pit_policy_node *n) {
  double sum = 0, sum2 = 0;
  int64_t m = 0;
  for (int t = 0; t < o->nsplit; t++) {
    double self = node_c(o, t, node, slots), other = 0;
    for (int j = 0; j < nnodes; j++)
      if (j != node) {
        double c = node_c(o, t, j, slots);
        other = c > other || isnan(c) ? c : other;
      }
    if (!(self > 0) || !(other > 0))
      continue;
    double d = log(other / self);
    sum += d;
    sum2 += d * d;
    m++;
  }
  if (m < 2)
    return;
  double mean = sum / m, var = (sum2 - m * mean * mean) / (m - 1);
  n->others_hi = exp(mean + pit_t_quantile(0.975, (int)(m - 1)) * sqrt(var > 0 ? var : 0) / sqrt((double)m));
  n->paired_n = m;
}

void ctl_obs_state(const struct ctl_obs *o, const struct pit_node *nodes, int nnodes, int slots,
                   struct pit_policy_state *s) {
  s->steady = o->steady;
  /* the pace and the paired ratios serve the policy before the pace is steady
   * (at most PIT_POLICY_MEASURE_MAX iterations a generation): each costs
   * O(steps so far), so computing them at every iteration of a long steady
   * generation made it quadratic (a 20000-step simulation took minutes) */
  s->pace_s = s->pace_lo_s = s->pace_hi_s = NAN;
  if (!o->steady)
    pace(o, s);
  s->batch = o->batch;
  s->nmeas = o->nmeas;
  memcpy(s->meas, o->meas, (size_t)o->nmeas * sizeof o->meas[0]);
  s->nnodes = 0;
  if (slots < 1)
    slots = 1;
  for (int i = 0; i < nnodes && i < PIT_POLICY_NODES_MAX; i++) {
    struct pit_policy_node *n = &s->nodes[s->nnodes++];
    memcpy(n->itype, nodes[i].itype, sizeof n->itype);
    n->compute_s = n->wait_s = n->others_hi = NAN;
    n->paired_n = 0;
    if (o->nsplit == 0 || o->nranks != nnodes * slots)
      continue;
    if (!o->steady && nnodes > 1 && nnodes <= PIT_POLICY_NODES_MAX)
      paired(o, i, nnodes, slots, n);
    double c = 0, w = 0;
    for (int k = i * slots; k < (i + 1) * slots; k++) {
      c += o->csum[k];
      w += o->wsum[k];
    }
    n->compute_s = c / (slots * (double)o->nsplit);
    n->wait_s = w / (slots * (double)o->nsplit);
  }
}
