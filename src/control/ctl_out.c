/* ctl_out.c — what the controller writes: records to the run's events file and
 * store, iteration records held back until a checkpoint covers them, node and
 * decision records, and the status line handed to the caller.
 *
 * Invariants:
 *  - the controller is the only writer of the store and of the events file, and
 *    every record goes out through ctl_out_record: a step the events file holds
 *    already (done again after a lost checkpoint) is not written twice;
 *  - iteration records are held (ctl_hold) until a checkpoint (or the workload's
 *    end) covers them: a failure drops exactly the steps that will be redone, so
 *    the stored steps stay contiguous; node records are written through at once;
 *  - a decision record holds the chosen membership first, then the others weighed. */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "control/ctl_impl.h"
#include "pitstop/analysis.h"

int ctl_out_record(struct ctl *c, const struct pit_record *r, struct pit_err *e) {
  int rc = 0;
  if (r->type == PIT_REC_ITER && r->step >= 0) {
    if (r->step < c->step_written)
      return 0; /* done again after its checkpoint was lost: the events file has it */
    c->step_written = r->step + 1;
  }
  /* with a world (world.h) each record is an effect of its own, in the file at once */
  int fx = c->ev_open ? ctl_fx(c, "write record") : 0;
  if (fx < 0)
    return pit_err_set(e, PIT_EIO, "cannot write '%s': %s", c->events_path, strerror(-fx));
  if (fx == CTL_EFFECT_DEAD)
    return 0;
  if (c->ev_open && (rc = pit_events_write(&c->ev, r, e)) < 0)
    return rc;
  if (c->ev_open && c->o->world && (rc = pit_events_flush(&c->ev, e)) < 0)
    return rc;
  if (c->store && (rc = pit_store_add(c->store, r, e)) < 0)
    return rc;
  return 0;
}

int ctl_out_flush(struct ctl *c, struct pit_err *e) {
  int rc = 0;
  if (c->ev_open && (rc = pit_events_flush(&c->ev, e)) < 0)
    return rc;
  if (c->store && (rc = pit_store_commit(c->store, e)) < 0)
    return rc;
  return 0;
}

/* Writes the held records with step < upto (all when upto < 0). */
int ctl_release_held(struct ctl *c, int64_t upto, struct pit_err *e) {
  int k = 0, rc = 0;
  for (int i = 0; i < c->nheld; i++) {
    struct pit_record *r = &c->held[i];
    if (rc == 0 && (upto < 0 || r->type != PIT_REC_ITER || r->step < upto)) {
      rc = ctl_out_record(c, r, e);
      pit_record_release(r);
    } else if (rc == 0) {
      if (k != i) {
        c->held[k] = c->held[i];
        pit_record_init(&c->held[i]);
      }
      k++;
    } else {
      pit_record_release(r);
    }
  }
  c->nheld = rc == 0 ? k : 0;
  return rc;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Drops the held records; returns the steps they held, each counted once
 * (the lines of several ranks read from a log are one record per rank and
 * step; records without a step count one each). */
int64_t ctl_drop_held(struct ctl *c) {
  int64_t lost = 0, *steps = malloc((size_t)(c->nheld > 0 ? c->nheld : 1) * sizeof *steps);
  int ns = 0;
  for (int i = 0; i < c->nheld; i++) {
    if (c->held[i].type == PIT_REC_ITER) {
      if (steps && c->held[i].step >= 0)
        steps[ns++] = c->held[i].step;
      else
        lost++;
    }
    pit_record_release(&c->held[i]);
  }
  c->nheld = 0;
  if (steps)
    qsort(steps, (size_t)ns, sizeof *steps, cmp_i64);
  for (int i = 0; i < ns; i++)
    lost += i == 0 || steps[i] != steps[i - 1];
  free(steps);
  return lost;
}

int ctl_hold(struct ctl *c, const struct pit_record *r, struct pit_err *e) {
  if (c->o->world && c->o->world->broken_held) /* test only (world.h): the rule broken on purpose */
    return ctl_out_record(c, r, e);
  if (PIT_GROW(c->held, c->nheld + 1, c->capheld))
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  pit_record_init(&c->held[c->nheld]);
  int rc = pit_record_copy(&c->held[c->nheld], r);
  if (rc < 0)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  c->nheld++;
  return 0;
}

void ctl_base_record(const struct ctl *c, struct pit_record *r, enum pit_rec_type t) {
  pit_record_init(r);
  r->type = t;
  snprintf(r->run, sizeof r->run, "%s", c->o->run);
  r->gen = c->gen;
  r->t = now_t(c);
}

int ctl_node_record(struct ctl *c, const struct pit_node *n, const char *action, struct pit_err *e) {
  struct pit_record r;
  ctl_base_record(c, &r, PIT_REC_NODE);
  snprintf(r.action, sizeof r.action, "%s", action);
  snprintf(r.node, sizeof r.node, "%s", n->id);
  snprintf(r.itype, sizeof r.itype, "%s", n->itype);
  r.price_h = n->price_h;
  /* its market where the provider has one (else absent: local, ssh, slurm), and its zone when named */
  r.market = n->spot ? PIT_MARKET_SPOT
             : c->prov.ops && c->prov.ops->spot_market ? PIT_MARKET_ON_DEMAND : PIT_MARKET_DEFAULT;
  snprintf(r.zone, sizeof r.zone, "%s", n->zone);
  r.continued = c->continued_gen > 0 && c->gen == c->continued_gen; /* a run taken over: its first generation */
  if (strcmp(action, "start") == 0 && isfinite(n->t_start)) /* billed from its start, as the provider bills */
    r.t = n->t_start;
  /* its type's catalog row on its start record: a replay prices and bills the run from the records */
  const struct pit_itype *t = c->have_cat && strcmp(action, "start") == 0 ? pit_catalog_find(&c->cat, n->itype) : NULL;
  if (t)
    r.row = (struct pit_rec_itype){1,          t->vcpus,   t->cpus,  t->price_h, t->spot_price_h,
                                   t->billing_s, t->min_s, t->cpu_quota};
  /* written through at once: a restarted controller's reconciliation and the bill rest on it */
  int rc = ctl_out_record(c, &r, e);
  if (rc == 0)
    rc = ctl_out_flush(c, e);
  pit_record_release(&r);
  return rc;
}

/* A decision record (struct pit_decision, filled whole and encoded once): what =
 * the policy's kind of move ("add", "remove", "switch"; "resize" for a schedule),
 * "keep" at a cost/time decision point, "recommend" when the workload cannot be
 * resized; the policy, the action, the membership before and the one decided;
 * the chosen membership is the first alternative (the timeline labels it), then
 * the others weighed with the rest of the job's predicted time and cost, t_p,
 * their intervals, the model behind them and whether each fits the deadline and
 * budget (or the membership kept, when the policy weighed none). */
int ctl_decision_record(struct ctl *c, const struct pit_choice *ch, const char *policy,
                        struct pit_err *e) {
  struct pit_decision d;
  pit_decision_init(&d);
  int keep = pit_membership_equal(&ch->to, &c->cur);
  /* the spot layer's change of market is no resize of the cost policy's (replays leave it out) */
  int zones = strcmp(policy, "zones") == 0; /* a change of zone or market, never a resize of the cost policy's */
  const char *action = zones ? (ch->act == PIT_ACT_RESIZE ? "market" : "keep")
                       : keep ? (ch->act == PIT_ACT_RESIZE ? "resize" : "keep")
                       : strcmp(policy, "spot") == 0 ? "market" : ch->act == PIT_ACT_RESIZE ? "resize" : "recommend";
  snprintf(d.kind, sizeof d.kind, "%s", ch->act == PIT_ACT_RESIZE && ch->kind[0] ? ch->kind : action);
  snprintf(d.policy, sizeof d.policy, "%s", policy);
  snprintf(d.action, sizeof d.action, "%s", action);
  d.from = c->cur;
  d.to = ch->to;
  d.step = c->step_next;
  int rc = asprintf(&d.reason, "%s (policy %s)", ch->reason, policy) < 0 ? PIT_ENOMEM : 0;
  if (rc < 0)
    d.reason = NULL;
  snprintf(d.zone, sizeof d.zone, "%s", ch->zone);
  snprintf(d.spot_mode, sizeof d.spot_mode, "%s", ch->spot_mode);
  if (rc == 0 && ch->inputs[0] && !(d.inputs = strdup(ch->inputs)))
    rc = PIT_ENOMEM;
  if (!strcmp(policy, "cost") || !strcmp(policy, "time")) { /* its settings: a replay weighs as it did */
    d.set_deadline_s = c->o->policy.deadline_s;
    d.set_budget = c->o->policy.budget;
    d.set_nmin = c->o->nmin > 0 ? c->o->nmin : 1;
    d.set_nmax = c->o->nmax > 0 ? c->o->nmax : 0;
    for (int i = 0; i < c->ntypes; i++) {
      size_t used = strlen(d.set_types), room = sizeof d.set_types - used;
      if (snprintf(d.set_types + used, room, "%s%s", i ? "," : "", c->types[i].itype) >= (int)room) {
        d.set_types[0] = '\0'; /* too many to record whole: none (a replay then takes the first generation's) */
        break;
      }
    }
  }
  /* alternatives: the chosen first */
  int order[PIT_POLICY_ALTS_MAX + 1], nord = 0;
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < ch->nalts; i++)
      if (pit_membership_equal(&ch->alts[i].m, &ch->to) == (pass == 0))
        order[nord++] = i;
  if (rc == 0 && (nord == 0 || !pit_membership_equal(&ch->alts[order[0]].m, &ch->to))) {
    if (!pit_decision_add_alt(&d, &ch->to) || (ch->nalts == 0 && !keep && !pit_decision_add_alt(&d, &c->cur)))
      rc = PIT_ENOMEM;
  }
  for (int k = 0; rc == 0 && k < nord; k++) {
    const struct pit_policy_alt *a = &ch->alts[order[k]];
    struct pit_decision_alt *x = pit_decision_add_alt(&d, &a->m);
    if (!x) {
      rc = PIT_ENOMEM;
      break;
    }
    x->predicted_s = a->rest_s;
    x->cost = a->cost;
    snprintf(x->what, sizeof x->what, "%s", a->kind);
    snprintf(x->model, sizeof x->model, "%s", a->model);
    x->pit_s = a->tp;
    x->pit_lo = a->tp_lo;
    x->pit_hi = a->tp_hi;
    x->predicted_lo = a->rest_lo;
    x->predicted_hi = a->rest_hi;
    x->fits = a->feasible != 0;
  }
  struct pit_record r;
  ctl_base_record(c, &r, PIT_REC_DECISION);
  r.step = c->step_next;
  if (rc < 0)
    rc = pit_err_set(e, PIT_ENOMEM, "out of memory");
  else
    rc = pit_decision_encode(&d, &r.detail, e);
  pit_decision_release(&d);
  if (rc == 0)
    rc = ctl_out_record(c, &r, e);
  pit_record_release(&r);
  return rc;
}

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double ctl_recent_median(const struct ctl *c) {
  if (c->nrecent == 0)
    return NAN;
  double v[RECENT];
  int n = c->nrecent < RECENT ? c->nrecent : RECENT;
  memcpy(v, c->recent, (size_t)n * sizeof *v);
  qsort(v, (size_t)n, sizeof *v, cmp_dbl);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The rest of the job's time and cost with 95% intervals: remaining steps ×
 * the recent step times' mean ± its half-width (t quantile × sd / √n; a
 * span of steps timed by one progress line counts once), the cost as spent +
 * the live nodes' bills grown by that time (pit_node_cost: billed seconds). The point (eta_s) is the
 * same mean's, so it lies inside its interval; with fewer than two
 * measurements there is a point (the one measured) and no interval. */
static void eta_interval(const struct ctl *c, struct pit_run_status *st) {
  st->eta_lo = st->eta_hi = st->cost_end = st->cost_lo = st->cost_hi = NAN;
  int n = c->nrecent < RECENT ? c->nrecent : RECENT, i;
  if (!(c->total_steps > 0) || n < 2)
    return;
  double sum = 0, ss = 0;
  for (i = 0; i < n; i++)
    sum += c->recent[i];
  double mean = sum / n;
  for (i = 0; i < n; i++)
    ss += (c->recent[i] - mean) * (c->recent[i] - mean);
  double half = pit_t_quantile(0.975, n - 1) * sqrt(ss / (n - 1)) / sqrt((double)n);
  double left = (double)(c->total_steps > c->step_next ? c->total_steps - c->step_next : 0);
  st->eta_s = left * mean;
  st->eta_lo = left * (mean - half > 0 ? mean - half : 0);
  st->eta_hi = left * (mean + half);
  double *cost[3] = {&st->cost_end, &st->cost_lo, &st->cost_hi}, rest[3] = {st->eta_s, st->eta_lo, st->eta_hi};
  for (int k = 0; k < 3; k++) /* the nodes up now, on until the end: their bill then less their bill now */
    for (*cost[k] = st->spent, i = 0; i < c->nnodes; i++)
      *cost[k] += ctl_node_cost(c, &c->nodes[i], st->t + rest[k]) - ctl_node_cost(c, &c->nodes[i], st->t);
}

void ctl_status(struct ctl *c, const char *phase, int force) {
  double t = now_t(c);
  if (!c->o->status || (!force && t - c->last_status < 0.5))
    return;
  c->last_status = t;
  char mem[256];
  pit_membership_format(&c->cur, mem, sizeof mem);
  struct pit_run_status st;
  memset(&st, 0, sizeof st);
  st.gen = c->gen;
  st.membership = mem;
  st.step = c->step_next;
  st.total_steps = c->total_steps;
  st.t = t;
  st.tp_s = ctl_recent_median(c);
  st.samples_per_s = c->recent_batch > 0 && st.tp_s > 0 ? (double)c->recent_batch / st.tp_s : NAN;
  st.spent = ctl_spent(c, t);
  st.eta_s = c->total_steps > 0 && st.tp_s > 0 ? (double)(c->total_steps - c->step_next) * st.tp_s : NAN;
  eta_interval(c, &st);
  st.phase = phase;
  st.resizable = c->resizable || !c->o->cmd || c->o->resume_by_restart;
  c->o->status(c->o->ctx, &st);
}
