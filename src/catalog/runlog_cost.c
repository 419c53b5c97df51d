/* runlog_cost.c — an elastic run's fold priced on billed seconds
 * (pit_runlog_cost, catalog.h): every node of the run log billed through
 * pit_node_cost, and each generation's share of those bills; and the run's
 * catalog rebuilt from its node records' rows (pit_catalog_from_runlog).
 * Invariants: the fold is only read; money comes only from pit_node_cost
 * (cost.c), never from raw seconds × price here; Σ gen_cost == total (up to
 * rounding) because the generations' spans cover the whole time line. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pitstop/catalog.h"

void pit_runlog_cost_release(struct pit_runlog_cost *c) {
  PIT_FREE_ALL(c->nodes, c->gen_cost);
  memset(c, 0, sizeof *c);
}

/* Where generation k's span begins: its first record (never before the one before it's); k 0: -inf. */
static double span_start(const struct pit_runlog *log, int k) {
  double b = -INFINITY;
  for (int i = 1; i <= k; i++)
    if (log->gens[i].t_first > b)
      b = log->gens[i].t_first;
  return b;
}

int pit_runlog_cost(const struct pit_runlog *log, const struct pit_catalog *cat, double until,
                    struct pit_runlog_cost *c, struct pit_err *e) {
  memset(c, 0, sizeof *c);
  if (isnan(until))
    until = log->t_last;
  c->nodes = calloc((size_t)log->nnodes + 1, sizeof *c->nodes);
  c->gen_cost = calloc((size_t)log->ngens + 1, sizeof *c->gen_cost);
  if (!c->nodes || !c->gen_cost) {
    pit_runlog_cost_release(c);
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  }
  c->nnodes = log->nnodes;
  c->ngens = log->ngens;
  for (int i = 0; i < log->nnodes; i++) {
    const struct pit_runlog_node *n = &log->nodes[i];
    struct pit_runlog_node_cost *x = &c->nodes[i];
    const struct pit_itype *t = cat ? pit_catalog_find(cat, n->base) : NULL;
    double t1 = isnan(n->t_stop) ? until : n->t_stop;
    double price = isnan(n->price_h) && t ? t->price_h : n->price_h;
    x->secs = t1 > n->t_start ? t1 - n->t_start : 0;
    x->billed_s = x->secs > 0 ? t ? pit_itype_billed_s(t, x->secs) : x->secs : 0;
    x->cost = pit_node_cost(t, price, x->secs);
    x->od_cost = t ? pit_node_cost(t, t->price_h, x->secs) : x->cost;
    c->total += x->cost;
    if (!(x->secs > 0))
      continue;
    for (int k = 0; k < log->ngens; k++) { /* its bill shared by the generations it ran in */
      double a = fmax(span_start(log, k), n->t_start);
      double b = fmin(k + 1 < log->ngens ? span_start(log, k + 1) : INFINITY, t1);
      if (b > a)
        c->gen_cost[k] += x->cost * ((b - a) / x->secs);
    }
  }
  return 0;
}

int pit_catalog_from_runlog(struct pit_catalog *c, const struct pit_runlog *log, struct pit_err *e) {
  memset(c, 0, sizeof *c);
  if (log->nnodes == 0)
    return pit_err_set(e, PIT_ENOTFOUND, "the run has no node record");
  c->types = calloc((size_t)log->nnodes, sizeof *c->types);
  if (!c->types)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  for (int i = 0; i < log->nnodes; i++) {
    const struct pit_runlog_node *n = &log->nodes[i];
    if (!n->row.have) {
      pit_catalog_release(c);
      return pit_err_set(e, PIT_ENOTFOUND, "node %s's record carries no catalog row", n->id);
    }
    if (pit_catalog_find(c, n->base))
      continue;
    struct pit_itype *t = &c->types[c->n++];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", n->base);
    t->vcpus = n->row.vcpus;
    t->cpus = n->row.cpus;
    t->gpus = -1;
    t->price_h = n->row.price_h;
    t->spot_price_h = n->row.spot_price_h;
    t->billing_s = n->row.billing_s;
    t->min_s = n->row.min_s;
    t->cpu_quota = n->row.cpu_quota;
    t->memory_gib = t->boot_s = t->egress_usd_gb = t->net_gbps = NAN;
  }
  return 0;
}
