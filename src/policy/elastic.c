/* elastic.c — a job driven step by step on a simulated clock by the same
 * policy code the controller runs (include/pitstop/policy.h, "elastic
 * simulation"; docs/simulate.md "Live meets simulated", "On-demand only").
 *
 * Each step: the model gives the iteration on the current membership; the
 * clock advances by its dt and the spend the policy sees by Σ price_h × dt
 * (raw seconds: a forecast); the result's cost bills each simulated node from
 * its start to its stop through catalog/cost.c (o->catalog), at its market's
 * price (pit_policy_price_h: a TYPE@spot node at the type's spot price), as the
 * policy prices it; the iteration is fed to the controller's observer
 * (ctl_obs_iter, observe.c, on the membership's types) as the record the
 * live workload would write; pit_policy_decide then sees the state the
 * controller builds (policy_state() in ctl_policy.c: step, time, spend, steps
 * since the change, switching time, the observer's steadiness, measurements
 * and per-node split). A resize lets the generation run to the model's stop
 * step (the live workload's agreed checkpoint step), pays the stop overhead on
 * the old membership and the start overhead on the new one, and changes the
 * node list as the controller's reshape does. A model that follows a recorded
 * run (mdl->restart) also restarts where the run did without a decision of the
 * policy's (a reclaim, another market, another zone): the generation ends
 * there, the nodes the run replaced stop and the new ones start on the run's
 * markets after the time it held none, and a resize to the run's types at its
 * step takes the run's markets.
 * Invariants: nothing printed; the policy never sees anything the controller
 * would not (no look-ahead); the clock only moves forward.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policy/observe.h"

void pit_elastic_result_release(struct pit_elastic_result *r) {
  free(r->dec);
  memset(r, 0, sizeof *r);
}

/* The simulated nodes: their itypes in rank order, their markets and when each started. */
struct simnodes {
  char names[PIT_POLICY_NODES_MAX][PIT_NAME_MAX];
  enum pit_market mk[PIT_POLICY_NODES_MAX];
  double t0[PIT_POLICY_NODES_MAX];
  int n;
  double billed;                     /* US$ of the nodes stopped so far */
};

static double price_of(const struct pit_replay_opts *o, const struct pit_membership *m);

/* One node's bill for secs seconds: its type's price on its market from o's
 * types, billed as o's catalog bills the type (catalog/cost.c; no catalog: raw seconds). */
static double node_bill(const struct pit_replay_opts *o, const char *itype, enum pit_market mk, double secs) {
  struct pit_membership one;
  pit_membership_clear(&one);
  if (pit_membership_add_on(&one, itype, mk, 1, -1, NULL) < 0)
    return NAN;
  const struct pit_itype *t = o->catalog ? pit_catalog_find(o->catalog, itype) : NULL;
  return pit_node_cost(t, price_of(o, &one), secs);
}

/* Nodes of itype on market mk in want. */
static int count_on(const struct pit_membership *want, const char *itype, enum pit_market mk) {
  int k = 0;
  for (int i = 0; i < want->n; i++)
    if (want->m[i].market == mk && strcmp(want->m[i].itype, itype) == 0)
      k += want->m[i].nodes;
  return k;
}

/* The controller's reshape on the node list at time t: surplus nodes of a
 * type and market go from the end (billed to t), missing ones are appended
 * (started at t). */
static void reshape(struct simnodes *sn, const struct pit_membership *want, const struct pit_replay_opts *o,
                    double t) {
  for (int i = sn->n - 1; i >= 0; i--) {
    int have = 0;
    for (int j = 0; j < sn->n; j++)
      have += strcmp(sn->names[j], sn->names[i]) == 0 && sn->mk[j] == sn->mk[i];
    if (have > count_on(want, sn->names[i], sn->mk[i])) {
      sn->billed += node_bill(o, sn->names[i], sn->mk[i], t - sn->t0[i]);
      memmove(sn->names[i], sn->names[i + 1], (size_t)(sn->n - i - 1) * PIT_NAME_MAX);
      memmove(&sn->mk[i], &sn->mk[i + 1], (size_t)(sn->n - i - 1) * sizeof sn->mk[0]);
      memmove(&sn->t0[i], &sn->t0[i + 1], (size_t)(sn->n - i - 1) * sizeof sn->t0[0]);
      sn->n--;
    }
  }
  for (int k = 0; k < want->n; k++) {
    int have = 0;
    for (int j = 0; j < sn->n; j++)
      have += strcmp(sn->names[j], want->m[k].itype) == 0 && sn->mk[j] == want->m[k].market;
    for (; have < want->m[k].nodes && sn->n < PIT_POLICY_NODES_MAX; have++) {
      sn->t0[sn->n] = t;
      sn->mk[sn->n] = want->m[k].market;
      snprintf(sn->names[sn->n++], PIT_NAME_MAX, "%s", want->m[k].itype);
    }
  }
}

/* The job's initial nodes (itypes in rank order) on initial's markets: each
 * type's nodes take its entries' markets in turn. */
static void initial_markets(struct simnodes *sn, const struct pit_membership *initial) {
  int used[PIT_MEMBERS_MAX] = {0};
  for (int i = 0; i < sn->n; i++) {
    sn->mk[i] = PIT_MARKET_DEFAULT;
    for (int k = 0; k < initial->n; k++)
      if (strcmp(initial->m[k].itype, sn->names[i]) == 0 && used[k] < initial->m[k].nodes) {
        sn->mk[i] = initial->m[k].market;
        used[k]++;
        break;
      }
  }
}

/* Σ nodes × price_h of m from o's types (NaN if a type is missing). */
static double price_of(const struct pit_replay_opts *o, const struct pit_membership *m) {
  struct pit_policy_state ps = {0};
  ps.ntypes = o->ntypes;
  memcpy(ps.types, o->types, sizeof ps.types);
  return pit_policy_price_h(&ps, m);
}

static int priced(const struct pit_replay_opts *o, const struct pit_membership *m, double *price, struct pit_err *e) {
  *price = price_of(o, m);
  if (isfinite(*price))
    return 0;
  char t[PIT_MEMBERSHIP_TEXT_MAX];
  pit_membership_format(m, t, sizeof t);
  return pit_err_set(e, PIT_ENOTFOUND, "membership %s has a type without a price (--types, the catalog)", t);
}

int pit_elastic_run(const struct pit_elastic_model *mdl, const struct pit_replay_opts *o,
                    const struct pit_elastic_job *job, struct pit_elastic_result *r, struct pit_err *e) {
  memset(r, 0, sizeof *r);
  struct pit_policy_state s = {0};
  struct pit_choice ch = {0};
  struct pit_elastic_iter x = {0};
  int rpn = o->ranks_per_node > 0 ? o->ranks_per_node : 1;
  struct ctl_obs obs;
  ctl_obs_init(&obs);
  size_t cap = 0;
  struct pit_node nodes[PIT_POLICY_NODES_MAX];
  struct simnodes sn = {0}; /* started at 0: the first start overhead holds their start */
  if (job->nnodes > 0) {
    sn.n = job->nnodes;
    memcpy(sn.names, job->nodes, sizeof sn.names);
    initial_markets(&sn, &job->initial);
  } else {
    reshape(&sn, &job->initial, o, 0);
  }
  struct pit_membership cur = job->initial;
  /* the switches so far, by relaunch [0] and in place [1], as the controller's ctl_switch_seconds */
  double price = NAN, T = 0, spent = 0, sw_sum[2] = {0, 0}, t_dec = NAN, t_first = NAN;
  int nsw[2] = {0, 0}, gen = 0, in_place = 0, rc = priced(o, &cur, &price, e);
  int64_t step = job->step0, stop_at = -1;
  struct pit_elastic_restart fr;
  if (rc < 0)
    goto out;
  int64_t end = job->end > 0 && job->end < job->total ? job->end : job->total;
  T = mdl->start_s(mdl->ctx, 0, step, &cur);
  spent = price * T / 3600.0; /* forecast: simulated clock */
  while (step < end) {
    int64_t gen_step0 = step;
    int stop_requested = 0, first = 1, restarted = 0;
    ctl_obs_gen(&obs);
    memset(nodes, 0, sizeof nodes);
    for (int i = 0; i < sn.n; i++)
      memcpy(nodes[i].itype, sn.names[i], sizeof nodes[i].itype);
    for (; step < end && (!stop_requested || step < stop_at); step++) {
      if (step > gen_step0 && !stop_requested && mdl->restart && mdl->restart(mdl->ctx, step, &cur, &cur, &fr) == 1) {
        restarted = 1; /* the run restarted here on its own (reclaim, market, zone): so does this one */
        break;
      }
      int got = mdl->iter(mdl->ctx, &cur, (const char(*)[PIT_NAME_MAX])sn.names, sn.n, step, &x, e);
      if (got < 0) {
        rc = got;
        goto out;
      }
      if (got == 0) {
        r->diverged = 1;
        goto done;
      }
      T += x.dt;
      spent += price * x.dt / 3600.0; /* forecast: simulated clock */
      r->steps_done++;
      if (isnan(t_first))
        t_first = T; /* the run's first start, as the controller's first_iter_t */
      if (first && isfinite(t_dec)) { /* decision → this generation's first iteration */
        sw_sum[in_place] += T - t_dec;
        nsw[in_place]++;
      }
      first = 0; /* (the iteration after a decision, before the stop, is not a switch) */
      struct pit_record rec;
      pit_record_init(&rec);
      rec.type = PIT_REC_ITER;
      rec.step = step;
      rec.batch = x.batch;
      rec.step_s = x.step_s;
      rec.nranks = x.nranks;
      rec.compute_s = x.compute_s;
      rec.wait_s = x.wait_s;
      struct pit_membership bare; /* the observer measures types, as the controller's (ctl_handlers.c) */
      pit_membership_bare(&cur, &bare);
      rc = ctl_obs_iter(&obs, &bare, &rec, e);
      if (rc < 0)
        goto out;
      if (stop_requested)
        continue;
      memset(&s, 0, sizeof s);
      s.gen = gen;
      s.step = step + 1;
      s.total_steps = job->total;
      s.cur = cur;
      s.nmin = o->nmin;
      s.nmax = o->nmax;
      if (o->count_held) /* another layer's count (the zone layer's): kept, as live (ctl_policy.c) */
        s.nmin = s.nmax = pit_membership_nodes(&cur);
      s.resizable = 1;
      s.t = T;
      s.spent = spent;
      s.since_change = step + 1 - gen_step0;
      s.switch_s = nsw[0] ? sw_sum[0] / nsw[0] : NAN;
      s.shrink_s = nsw[1] ? sw_sum[1] / nsw[1] : NAN;
      s.restart_s = t_first;
      ctl_obs_state(&obs, nodes, sn.n, rpn, &s);
      s.ntypes = o->ntypes;
      memcpy(s.types, o->types, (size_t)o->ntypes * sizeof o->types[0]);
      rc = pit_policy_decide(&o->policy, &s, &ch, e);
      if (rc < 0)
        goto out;
      r->decisions += ch.decided;
      if (ch.act != PIT_ACT_RESIZE)
        continue;
      if (PIT_GROW(r->dec, r->ndec + 1, cap)) {
        rc = pit_err_set(e, PIT_ENOMEM, "out of memory");
        goto out;
      }
      r->dec[r->ndec++] = (struct pit_resize){.step = step + 1, .t = T, .from = cur, .to = ch.to};
      stop_requested = 1;
      t_dec = T;
      stop_at = mdl->stop_step(mdl->ctx, step + 1, &ch.to);
    }
    /* the generation ends: its stop overhead; the next one's start */
    int last = step >= end || (!stop_requested && !restarted);
    double so = mdl->stop_s(mdl->ctx, gen, step, &cur, last);
    T += so;
    spent += price * so / 3600.0; /* forecast: simulated clock */
    if (last)
      break;
    struct pit_membership from = cur;
    cur = restarted ? cur : r->dec[r->ndec - 1].to;
    double idle = 0;
    r->restarts += restarted;
    if (restarted)
      t_dec = NAN; /* no decision of the policy's: its first step is no switch sample */
    if (restarted || (mdl->restart && mdl->restart(mdl->ctx, step, &from, &cur, &fr) == 1)) {
      reshape(&sn, &fr.kept, o, T); /* the run's: the nodes it replaced stop, its markets */
      cur = fr.to;
      idle = fr.idle_s > 0 ? fr.idle_s : 0;
    }
    gen++;
    in_place = !restarted && mdl->in_place && mdl->in_place(mdl->ctx, step, &cur) == 1;
    if ((rc = priced(o, &cur, &price, e)) < 0)
      goto out;
    double st = mdl->start_s(mdl->ctx, gen, step, &cur);
    if (idle > st)
      idle = st;
    reshape(&sn, &cur, o, T + idle); /* after the old generation's stop (and no node held), before the start */
    T += st;
    spent += price * (st - idle) / 3600.0; /* forecast: simulated clock */
  }
done:
  for (int i = 0; i < sn.n; i++) /* the nodes still up stop at the end */
    sn.billed += node_bill(o, sn.names[i], sn.mk[i], T - sn.t0[i]);
  r->cost = sn.billed;
  r->time_s = T;
  rc = 0;
out:
  ctl_obs_release(&obs);
  if (rc < 0)
    pit_elastic_result_release(r);
  return rc;
}
