/* ctl_nodes.c — the run's nodes: started and stopped through the provider, each
 * start, ready and stop a node record; their bill; the live nodes reshaped to a
 * membership; the report's lines for each node and generation that ended.
 *
 * Invariants:
 *  - c->nodes holds the live nodes in start order, each with t_start and t_ready
 *    set and t_stop NaN; a node leaves it only through ctl_stop_node_at, which
 *    adds its cost to the run's and writes its report line;
 *  - a node's cost is its price × its billed seconds (the catalog's minimum and
 *    increment; raw seconds for a type the catalog lacks);
 *  - every node this controller started is stopped before pit_run returns
 *    (ctl_stop_all_nodes at tear-down), or said to keep its claim when its stop
 *    cannot reach it (c->stuck: stopped again when a later start fails). */
#define _GNU_SOURCE
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "control/ctl_impl.h"

/* The nodes set aside whose stop failed, stopped again: how many are released now (their hosts free). */
static int release_stuck(struct ctl *c) {
  int k = 0;
  for (int i = c->nstuck - 1; i >= 0; i--) {
    struct pit_err e2 = {0};
    if (c->prov.ops->stop(&c->prov, &c->stuck[i], &e2) < 0)
      continue;
    warn(c, "node %s answers again: stopped, its claim released", c->stuck[i].id);
    memmove(&c->stuck[i], &c->stuck[i + 1], (size_t)(c->nstuck - i - 1) * sizeof c->stuck[0]);
    c->nstuck--;
    k++;
  }
  return k;
}

/* One node of type itype on market mk (a membership entry's); a provider
 * without a spot market is asked for its default. A spot start that fails
 * sets c->spot_failed (no capacity, for the spot policy). */
int ctl_start_node(struct ctl *c, const char *itype, enum pit_market mk, const char *why, struct pit_err *e) {
  if (c->nnodes == MAX_NODES)
    return pit_err_set(e, PIT_EARG, "more than %d nodes", MAX_NODES);
  struct pit_node *n = &c->nodes[c->nnodes];
  double t = now_t(c);
  snprintf(c->prov.zone, sizeof c->prov.zone, "%s", c->zn.on && c->zn.want >= 0 ? c->zn.z[c->zn.want].name : "");
  int rc = c->prov.ops->start(&c->prov, itype, c->prov.ops->spot_market ? mk : PIT_MARKET_DEFAULT, n, e);
  /* a node set aside whose stop could not reach it may hold what this start needs (an ssh host):
   * it is stopped again, and without a spot market to decide instead, waited for up to --lost-wait
   * (a link down for 27.6 s, longer than ssh's ServerAlive, ended a two-host run with "every host is
   * held by this run already"; fault soak over ssh, 2026-11-30) */
  int said = 0;
  for (double t0 = now_t(c); rc < 0 && c->nstuck > 0 && !ctl_stop_signal(c->o->stop);) {
    if (release_stuck(c) > 0) {
      pit_err_clear(e);
      rc = c->prov.ops->start(&c->prov, itype, c->prov.ops->spot_market ? mk : PIT_MARKET_DEFAULT, n, e);
      continue;
    }
    if (c->prov.ops->spot_market || c->o->world || now_t(c) - t0 >= c->o->lost_wait_s)
      break; /* (a simulated world's clock does not move while this sleeps: no wait there) */
    if (!said++)
      warn(c, "no node of type %s can start now (%s): waiting up to %.0f s (--lost-wait) for node %s, set aside, "
              "to answer again",
           itype, e->msg, c->o->lost_wait_s, c->stuck[0].id);
    for (int k = 0; k < 50 && !ctl_stop_signal(c->o->stop); k++) { /* 5 s, a stop signal heard within 0.1 s */
      ctl_status(c, "waiting", 0);
      usleep(100000);
    }
  }
  if (rc < 0) {
    c->spot_failed = mk == PIT_MARKET_SPOT && rc == PIT_ESTATE;
    return rc;
  }
  if (n->spot)
    ctl_spot_up(&c->spot, now_t(c));
  snprintf(n->why, sizeof n->why, "%s", why);
  n->t_start = t;
  n->t_ready = now_t(c);
  n->t_stop = NAN;
  c->nnodes++;
  if (n->spot)
    ctl_zones_spot_up(c, n->zone);
  if ((rc = ctl_node_record(c, n, "start", e)) < 0 || (rc = ctl_node_record(c, n, "ready", e)) < 0)
    return rc;
  return 0;
}

/* A node's bill to until (its stop, if it stopped): the live spend (catalog/cost.c). */
double ctl_node_cost(const struct ctl *c, const struct pit_node *n, double until) {
  const struct pit_itype *t = c->have_cat ? pit_catalog_find(&c->cat, n->itype) : NULL;
  return pit_node_cost(t, n->price_h, (isnan(n->t_stop) ? until : n->t_stop) - n->t_start);
}

/* The report's line for a node that ended. */
static void node_entry(struct ctl *c, const struct pit_node *n, const char *end) {
  struct pit_run_result *res = c->res;
  if (res->nnodes == (int)(sizeof res->nodes / sizeof res->nodes[0]))
    return;
  struct pit_run_node *r = &res->nodes[res->nnodes++];
  memset(r, 0, sizeof *r);
  snprintf(r->id, sizeof r->id, "%s", n->id);
  snprintf(r->itype, sizeof r->itype, "%s", n->itype);
  snprintf(r->end, sizeof r->end, "%s", end);
  snprintf(r->why, sizeof r->why, "%s", n->why[0] ? n->why : "adopted from a previous controller");
  r->spot = n->spot;
  r->t_start = n->t_start;
  r->t_ready = n->t_ready;
  r->t_stop = n->t_stop;
  const struct pit_itype *t = c->have_cat ? pit_catalog_find(&c->cat, n->itype) : NULL;
  double secs = n->t_stop - n->t_start;
  r->billed_s = secs > 0 ? t ? pit_itype_billed_s(t, secs) : secs : 0;
  r->cost = ctl_node_cost(c, n, n->t_stop);
  r->od_cost = t ? pit_node_cost(t, t->price_h, secs) : r->cost;
  r->waste_s = n->waste_s;
}

int ctl_stop_node_at(struct ctl *c, int i, const char *action, struct pit_err *e) {
  struct pit_node *n = &c->nodes[i];
  int rc = c->prov.ops->stop(&c->prov, n, e);
  if (rc < 0 && !strcmp(action, "lost")) {
    /* a node set aside that its stop cannot reach (an ssh host gone silent): out of the membership
     * either way, its claim (node file) kept for `pitstop run --cleanup`; said, and the run goes on
     * (before, 2026-11-30, a host's link taken down ended the run on this error) */
    warn(c, "node %s could not be stopped (%s): its claim stays; `pitstop run --cleanup` tries again", n->id, e->msg);
    pit_err_clear(e);
    rc = 0;
    if (c->nstuck < (int)(sizeof c->stuck / sizeof c->stuck[0]))
      c->stuck[c->nstuck++] = *n; /* stopped again when a start fails (ctl_start_node) */
  }
  n->t_stop = now_t(c);
  c->res->cost += ctl_node_cost(c, n, n->t_stop);
  node_entry(c, n, action);
  int rc2 = ctl_node_record(c, n, action, rc < 0 ? NULL : e);
  memmove(&c->nodes[i], &c->nodes[i + 1], (size_t)(c->nnodes - i - 1) * sizeof *n);
  c->nnodes--;
  return rc < 0 ? rc : rc2;
}

void ctl_stop_all_nodes(struct ctl *c) {
  release_stuck(c); /* a node set aside that answers again by now leaves no claim */
  while (c->nnodes > 0) {
    struct pit_err e2 = {0};
    if (ctl_stop_node_at(c, c->nnodes - 1, "stop", &e2) < 0)
      warn(c, "%s", e2.msg);
  }
}

/* n is a node of membership entry m: the same type, and the entry's market
 * when it names one (DEFAULT takes either). */
int ctl_node_of(const struct pit_node *n, const struct pit_member *m) {
  return strcmp(m->itype, n->itype) == 0 && (m->market == PIT_MARKET_DEFAULT || (m->market == PIT_MARKET_SPOT) == n->spot);
}

/* The nodes the provider is taking back (a notice) stop as lost. */
int ctl_stop_reclaimed(struct ctl *c, struct pit_err *e) {
  int rc;
  for (int r = 0; r < c->nreclaimed; r++)
    for (int i = c->nnodes - 1; i >= 0; i--)
      if (strcmp(c->nodes[i].id, c->reclaimed[r]) == 0 && (rc = ctl_stop_node_at(c, i, "lost", e)) < 0)
        return rc;
  c->nreclaimed = 0;
  return 0;
}

/* Nodes to stop and start so that the live nodes match want: each entry
 * (those naming a market first) claims its nodes from the front of the list,
 * the unclaimed ones stop (from the end), the missing ones start. */
void ctl_claim(const struct ctl *c, const struct pit_membership *want, int *claimed, int *need) {
  memset(claimed, 0, (size_t)c->nnodes * sizeof *claimed);
  for (int pass = 0; pass < 2; pass++)
    for (int k = 0; k < want->n; k++) {
      if ((want->m[k].market == PIT_MARKET_DEFAULT) != pass)
        continue;
      need[k] = want->m[k].nodes;
      for (int i = 0; i < c->nnodes && need[k] > 0; i++)
        if (!claimed[i] && ctl_node_of(&c->nodes[i], &want->m[k]) &&
            (!c->zn.on || c->zn.want < 0 || strcmp(c->nodes[i].zone, c->zn.z[c->zn.want].name) == 0)) {
          claimed[i] = 1;
          need[k]--;
        }
    }
}

int ctl_reshape(struct ctl *c, const struct pit_membership *want, const char *why, struct pit_err *e) {
  int rc;
  /* nodes the provider is taking back go first (they are replaced below) */
  if ((rc = ctl_stop_reclaimed(c, e)) < 0)
    return rc;
  int claimed[MAX_NODES], need[PIT_MEMBERS_MAX];
  ctl_claim(c, want, claimed, need);
  for (int i = c->nnodes - 1; i >= 0; i--)
    if (!claimed[i] && (rc = ctl_stop_node_at(c, i, "stop", e)) < 0)
      return rc;
  for (int k = 0; k < want->n; k++)
    for (; need[k] > 0; need[k]--)
      if ((rc = ctl_start_node(c, want->m[k].itype, want->m[k].market, why, e)) < 0)
        return rc;
  ctl_set_membership(c, want);
  return 0;
}

void ctl_set_membership(struct ctl *c, const struct pit_membership *want) {
  char was[256], to[256];
  pit_membership_format(&c->cur, was, sizeof was);
  pit_membership_format(want, to, sizeof to);
  if (strcmp(was, to) != 0)
    c->nrecent = 0; /* the status line's pace is the new membership's, from its own steps */
  c->cur = *want;
}

double ctl_spent(const struct ctl *c, double t) {
  double usd = c->res->cost;
  for (int i = 0; i < c->nnodes; i++)
    usd += ctl_node_cost(c, &c->nodes[i], t);
  return usd;
}

void ctl_gen_entry(struct ctl *c, const char *end) {
  struct pit_run_result *res = c->res;
  if (res->ngens == (int)(sizeof res->gens / sizeof res->gens[0]))
    return;
  struct pit_run_gen *g = &res->gens[res->ngens++];
  memset(g, 0, sizeof *g);
  g->gen = c->gen;
  pit_membership_format(&c->cur, g->membership, sizeof g->membership);
  g->step0 = c->gen_step0;
  g->step1 = c->step_next;
  g->t0 = c->t_launch;
  g->t_first_iter = c->t_first_iter;
  g->t1 = now_t(c);
  snprintf(g->end, sizeof g->end, "%s", end);
  g->ckpt_s = c->last_ckpt_s;
  g->init_s = c->init_s;
  g->exit_s = NAN;
  g->nodes_s = NAN;
  g->cost = NAN; /* its share of the bills, once every node stopped (pit_run_result_price) */
}
