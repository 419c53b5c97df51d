/* replay.c — a recorded run driven again by the same policy on a simulated
 * clock (include/pitstop/policy.h, "replay"; docs/simulate.md "Live meets
 * simulated"): the workload model of pit_elastic_run (elastic.c) made of the
 * run's own records.
 *
 * The events file gives, per live generation: its nodes (node records, in
 * the controller's order: appended on start, removed on stop/lost), its
 * iteration records, and its start and stop overheads (first iteration's
 * record time − its step time − the previous generation's node change; its
 * node change − last iteration, the node change being its end record or a
 * later stop of its removed nodes before the next generation's first step;
 * the last generation: to the last node's stop). A step on a
 * membership takes the live record of that step when the live run ran it on
 * that membership, else that membership's records in turn. A resize stops the
 * generation where the live one stopped when the live run resized at the same
 * step to the same membership (the workload's agreed checkpoint step), else
 * at the decision step plus the live runs' mean lag. Memberships are matched
 * by type (markets dropped: a spot and an on-demand node compute alike, and the
 * resizes compared are bare, as the live run's market layer re-chooses the
 * market); the replay's nodes are priced at their own markets (elastic.c), the
 * node records' (their "market"): the first generation's as the live run held
 * them, and the replay follows the live run's own restarts on the same types
 * (a reclaim, a change of market or zone, a count the zone layer chose: no
 * decision of the cost policy's; r_restart): it restarts at the same step, the nodes the live run replaced
 * stop and the new ones start on the live markets after the time the live run
 * held no node, so a spot run is billed on spot where it ran on spot. The
 * fixed memberships are replayed alone on their own markets, without restarts.
 * Invariants: nothing printed; the events file is only read; the records
 * replayed are the live ones, so a replay that decides as the live run did
 * sees exactly the live observations.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "policy/observe.h"

#define MAXG 256 /* live generations */

struct it { /* one recorded iteration */
  int64_t step, batch;
  double t, step_s;
  double dt;           /* the time it took in the run: from the previous iteration's record (its
                          generation's first: step_s), so checkpoints and epoch ends are counted */
  int nranks;
  double compute[PIT_POLICY_NODES_MAX], wait[PIT_POLICY_NODES_MAX];
};

struct lgen { /* one live generation */
  struct pit_membership m;
  char nodes[PIT_POLICY_NODES_MAX][PIT_NAME_MAX]; /* itypes in rank order */
  int idx[PIT_POLICY_NODES_MAX];                   /* the same nodes: indexes into the fold's nodes */
  int nnodes, have_nodes;
  size_t first, n;                                 /* its iterations: its[first .. first+n) */
  double t_end;                                    /* its end record (NaN: none) */
  int in_place;                                    /* it began in place: no launch (docs/run.md 5b) */
  double t_change;                                 /* its nodes changed for the next one: the last node
                                                      stop after its end record and before the next
                                                      one's first step (else t_end); NaN: none */
};

struct live {
  const struct pit_runlog *log;  /* the fold read (its nodes: start times, markets) */
  struct it *its;
  size_t nits, cap;
  struct lgen g[MAXG];
  int ng;
  int64_t total;
  int64_t end;                                     /* the last recorded step + 1 */
  struct pit_resize *dec;
  int ndec;
  size_t deccap;
  double cost;
  double t_last_stop;  /* the last node stop record (the run's billing ends there) */
  int zone_count;      /* the run's zone layer chose the node count (a zone decision with a node range):
                          its count changes are the run's own restarts, the policy keeps the count held */
};

/* A zone decision whose inputs give a node range: the zone layer chose the count. */
static int zone_counts(const struct pit_decision *d) {
  struct pit_zone_in in;
  struct pit_err e2 = {0};
  return strcmp(d->policy, "zones") == 0 && d->inputs && pit_zone_in_parse(&in, d->inputs, &e2) == 0 &&
         in.nmin < in.nmax;
}

void pit_replay_release(struct pit_replay *r) {
  free(r->live);
  free(r->sim);
  memset(r, 0, sizeof *r);
}

/* The live decisions the replay compares: the fold's resizes (action
 * "resize"), their memberships without markets (the replay weighs types);
 * one to the same types (a reclaimed node replaced) is none: the replay
 * follows it as one of the run's own restarts (r_restart). */
static int live_decisions(const char *path, const struct pit_runlog *log, struct live *l, struct pit_err *e) {
  for (int i = 0; i < log->ndec; i++) {
    const struct pit_runlog_decision *x = &log->dec[i];
    if (zone_counts(&x->d))
      l->zone_count = 1;
    if (strcmp(x->d.action, "resize") != 0 || zone_counts(&x->d)) /* the zone layer's count: the run's own */
      continue;
    if (x->d.from.n == 0 || x->d.to.n == 0)
      return pit_err_set(e, PIT_EFORMAT, "%s: resize decision at step %lld: no \"from\" or \"to\" membership", path,
                         (long long)x->d.step);
    struct pit_resize d = {.step = x->d.step, .t = x->t};
    pit_membership_bare(&x->d.to, &d.to);
    pit_membership_bare(&x->d.from, &d.from);
    if (pit_membership_equal(&d.to, &d.from)) /* a reclaim's replacement: a restart the replay follows */
      continue;
    if (PIT_GROW(l->dec, l->ndec + 1, l->deccap))
      return pit_err_set(e, PIT_ENOMEM, "out of memory");
    l->dec[l->ndec++] = d;
  }
  return 0;
}

/* Generation i's iterations from the fold into l->its (each with the time it
 * took: from the previous iteration's record, its first: its step time). */
static int live_iters(const char *path, const struct pit_runlog *log, int i, struct live *l, struct pit_err *e) {
  const struct pit_runlog_gen *lg = &log->gens[i];
  struct lgen *g = &l->g[i];
  g->first = l->nits;
  if (lg->niters && PIT_GROW(l->its, l->nits + (size_t)lg->niters, l->cap))
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  for (int64_t k = 0; k < lg->niters; k++) {
    const struct pit_runlog_iter *r = &log->iters[lg->iter0 + k];
    if (lg->iter0 + k >= log->niters || r->gen != i)
      return pit_err_set(e, PIT_EFORMAT, "%s: an iteration of generation %d after a later generation's", path, i);
    struct it *x = &l->its[l->nits];
    memset(x, 0, sizeof *x);
    x->step = r->step;
    x->batch = r->batch;
    x->t = r->t;
    /* a step the log did not time (an arrival-timed script's first line: nothing before it to time it
     * from) counts in the generation's start overhead, up to its record's t */
    x->step_s = isfinite(r->step_s) ? r->step_s : 0;
    x->nranks = r->nranks <= PIT_POLICY_NODES_MAX ? r->nranks : 0;
    for (int q = 0; q < x->nranks; q++) {
      x->compute[q] = log->rank_s[r->rank0 + q];
      x->wait[q] = log->rank_s[r->rank0 + r->nranks + q];
    }
    x->dt = g->n > 0 && r->t > l->its[l->nits - 1].t ? r->t - l->its[l->nits - 1].t : x->step_s;
    g->n++;
    l->nits++;
  }
  return 0;
}

/* The fold of the events file (record/runlog.c) as the replay reads it. */
static int read_live(const char *path, const struct pit_runlog *log, struct live *l, struct pit_err *e) {
  if (log->ngens > MAXG)
    return pit_err_set(e, PIT_EFORMAT, "%s: generation %d out of range", path, log->ngens - 1);
  l->ng = log->ngens;
  for (int i = 0; i < l->ng; i++) {
    const struct pit_runlog_gen *lg = &log->gens[i];
    struct lgen *g = &l->g[i];
    g->t_end = lg->t_end;
    g->in_place = lg->in_place;
    if (!lg->have_m && lg->niters == 0) { /* a controller killed before its generation's first record:
                                             only node records (billed through them), nothing to replay */
      g->first = l->nits;
      continue;
    }
    if (!lg->have_m)
      return pit_err_set(e, PIT_EFORMAT, "%s: generation %d has no nodes", path, i);
    g->have_nodes = 1;
    g->m = lg->m;
    g->nnodes = lg->nnodes < PIT_POLICY_NODES_MAX ? lg->nnodes : PIT_POLICY_NODES_MAX;
    for (int k = 0; k < g->nnodes; k++) {
      g->idx[k] = log->gen_nodes[lg->node0 + k];
      snprintf(g->nodes[k], PIT_NAME_MAX, "%s", log->nodes[g->idx[k]].base); /* weighed by type */
    }
    int rc = live_iters(path, log, i, l, e);
    if (rc < 0)
      return rc;
  }
  if (l->nits == 0)
    return pit_err_set(e, PIT_EFORMAT, "%s: no iteration record to replay", path);
  l->log = log;
  for (int i = 0; i + 1 < l->ng; i++) { /* a resize's removed nodes bill until they stop */
    struct lgen *g = &l->g[i], *h = &l->g[i + 1];
    double next = h->n ? l->its[h->first].t - l->its[h->first].step_s : INFINITY;
    /* its end record; a generation that ended without one (a node lost): its last iteration */
    g->t_change = isfinite(g->t_end) ? g->t_end : g->n ? l->its[g->first + g->n - 1].t : NAN;
    for (int k = 0; isfinite(g->t_change) && k < log->nnodes; k++)
      if (log->nodes[k].t_stop > g->t_change && log->nodes[k].t_stop <= next)
        g->t_change = log->nodes[k].t_stop;
  }
  if (log->nup > 0)
    return pit_err_set(e, PIT_EFORMAT, "%s: %d node(s) without a stop record (the run did not end)", path, log->nup);
  l->t_last_stop = log->t_last_stop;
  for (size_t i = 0; i < l->nits; i++)
    if (l->its[i].step + 1 > l->end)
      l->end = l->its[i].step + 1;
  l->total = log->planned_iters >= 0 ? log->planned_iters : l->end;
  return live_decisions(path, log, l, e);
}

/* a and b of the same types and counts (markets dropped). */
static int same_types(const struct pit_membership *a, const struct pit_membership *b) {
  struct pit_membership x, y;
  pit_membership_bare(a, &x);
  pit_membership_bare(b, &y);
  return pit_membership_equal(&x, &y);
}

/* The live generation that ran step s (the last one, if redone), or -1. */
static int live_gen_of(const struct live *l, int64_t s) {
  for (int i = l->ng - 1; i >= 0; i--) {
    const struct lgen *g = &l->g[i];
    if (g->n && l->its[g->first].step <= s && s <= l->its[g->first + g->n - 1].step)
      return i;
  }
  return -1;
}

/* The recorded iteration step s on membership m: the live one when the live
 * run ran s on m, else m's iterations in turn (*cursor); NULL if m never ran. */
static const struct it *model_iter(const struct live *l, const struct pit_membership *m, int64_t s, size_t *cursor) {
  int g = live_gen_of(l, s);
  if (g >= 0 && same_types(&l->g[g].m, m)) {
    const struct lgen *lg = &l->g[g];
    size_t k = (size_t)(s - l->its[lg->first].step);
    if (k < lg->n && l->its[lg->first + k].step == s)
      return &l->its[lg->first + k];
  }
  size_t tot = 0;
  for (int i = 0; i < l->ng; i++)
    if (same_types(&l->g[i].m, m))
      tot += l->g[i].n;
  if (tot == 0)
    return NULL;
  size_t want = (*cursor)++ % tot;
  for (int i = 0; i < l->ng; i++)
    if (same_types(&l->g[i].m, m)) {
      if (want < l->g[i].n)
        return &l->its[l->g[i].first + want];
      want -= l->g[i].n;
    }
  return NULL;
}

/* The live run's last node change before generation i began (0: the run's start). */
static double change_before(const struct live *l, int i) {
  for (int k = i - 1; k >= 0; k--)
    if (isfinite(l->g[k].t_change))
      return l->g[k].t_change;
  return 0;
}

/* Overheads of live generation i: before its first iteration (from the
 * previous generation's node change, or the run's start), after its last (to
 * its node change: its end record, or the last node it stopped before the next
 * generation began, where those nodes' bills end; the last generation: to the
 * last node's stop, where billing ends). */
static double start_overhead(const struct live *l, int i) {
  const struct lgen *g = &l->g[i];
  double prev = change_before(l, i);
  double o = g->n ? l->its[g->first].t - l->its[g->first].step_s - prev : 0;
  return o > 0 ? o : 0;
}
static double stop_overhead(const struct live *l, int i) {
  const struct lgen *g = &l->g[i];
  double end = i == l->ng - 1 ? (l->t_last_stop > g->t_end ? l->t_last_stop : g->t_end) : g->t_change;
  double o = g->n && isfinite(end) ? end - l->its[g->first + g->n - 1].t : 0;
  return o > 0 ? o : 0;
}
static double mean_overhead(const struct live *l, int start) {
  double s = 0;
  int n = 0;
  for (int i = start ? 1 : 0; i < l->ng; i++, n++)
    s += start ? start_overhead(l, i) : stop_overhead(l, i);
  return n ? s / n : 0;
}

/* pit_elastic_model over the live records */
struct rmodel {
  const struct live *l;
  size_t cursor;
  int64_t mean_lag;
};
static int r_iter(void *ctx, const struct pit_membership *m, const char (*nodes)[PIT_NAME_MAX], int nnodes,
                  int64_t step, struct pit_elastic_iter *it, struct pit_err *e) {
  (void)nodes, (void)nnodes, (void)e;
  struct rmodel *rm = ctx;
  const struct it *x = model_iter(rm->l, m, step, &rm->cursor);
  if (!x)
    return 0;
  it->step_s = x->step_s;
  it->dt = x->dt;
  it->batch = x->batch;
  it->nranks = x->nranks;
  memcpy(it->compute_s, x->compute, sizeof it->compute_s);
  memcpy(it->wait_s, x->wait, sizeof it->wait_s);
  return 1;
}
static int64_t r_stop_step(void *ctx, int64_t decided, const struct pit_membership *to) {
  const struct rmodel *rm = ctx;
  const struct live *l = rm->l;
  int64_t at = decided + rm->mean_lag;
  for (int i = 0; i < l->ndec; i++) /* the live run resized here: it stopped where it stopped */
    if (l->dec[i].step == decided && same_types(&l->dec[i].to, to)) {
      int g = live_gen_of(l, decided - 1);
      if (g >= 0)
        at = l->its[l->g[g].first + l->g[g].n - 1].step + 1;
    }
  return at;
}
/* A generation's start on m: the live one's where the live run started m at that step; the
 * first generation (a fixed replay's only start): the start the live run measured for m — its
 * first generation launched on m, from the end of the one before (nodes, launch, init) — so a
 * fixed membership pays its own start, not the live run's first one's (one that began in place
 * launched nothing: its start is no launch's, and the run's first start stands in). */
static double r_start_s(void *ctx, int gen, int64_t step, const struct pit_membership *m) {
  const struct live *l = ((const struct rmodel *)ctx)->l;
  if (gen == 0) {
    for (int i = 0; i < l->ng; i++)
      if (same_types(&l->g[i].m, m) && l->g[i].n > 0 && !l->g[i].in_place)
        return start_overhead(l, i);
    return start_overhead(l, 0);
  }
  int lg = live_gen_of(l, step);
  return lg > 0 && same_types(&l->g[lg].m, m) ? start_overhead(l, lg) : mean_overhead(l, 1);
}
/* The live run began a generation on m's types at step in place (its init record's "in_place"). */
static int r_in_place(void *ctx, int64_t step, const struct pit_membership *m) {
  const struct live *l = ((const struct rmodel *)ctx)->l;
  int lg = live_gen_of(l, step);
  return lg > 0 && l->g[lg].in_place && l->g[lg].n > 0 && l->its[l->g[lg].first].step == step &&
         same_types(&l->g[lg].m, m);
}
static double r_stop_s(void *ctx, int gen, int64_t step, const struct pit_membership *m, int last) {
  (void)gen, (void)m, (void)last;
  const struct live *l = ((const struct rmodel *)ctx)->l;
  int g = live_gen_of(l, step - 1);
  return g >= 0 ? stop_overhead(l, g) : mean_overhead(l, 0);
}

/* The live run began generation j at step from one on from's types to one on
 * to's (a restart of its own where from and to are the simulation's
 * membership; the new generation of a resize otherwise): the nodes both
 * generations held, j's membership with its markets, and the time from the
 * last node change to j's first new node, when the live run held none of them. */
static int r_restart(void *ctx, int64_t step, const struct pit_membership *from, const struct pit_membership *to,
                     struct pit_elastic_restart *f) {
  const struct live *l = ((const struct rmodel *)ctx)->l;
  for (int j = 1; j < l->ng; j++) {
    const struct lgen *h = &l->g[j];
    if (!h->n || l->its[h->first].step != step)
      continue;
    int i = j - 1;
    while (i >= 0 && l->g[i].n == 0) /* a generation that failed before its first step */
      i--;
    /* (a run whose zone layer chose the count: a restart of its own may change the count) */
    if (i < 0 || !same_types(&l->g[i].m, from) || (!same_types(&h->m, to) && !(l->zone_count && from == to)))
      return 0;
    pit_membership_clear(&f->kept);
    double first_new = INFINITY;
    for (int k = 0; k < h->nnodes; k++) {
      const struct pit_runlog_node *n = &l->log->nodes[h->idx[k]];
      int stayed = 0;
      for (int q = 0; q < l->g[i].nnodes && !stayed; q++)
        stayed = l->g[i].idx[q] == h->idx[k];
      if (!stayed && n->t_start < first_new)
        first_new = n->t_start;
      if (stayed && pit_membership_add_on(&f->kept, n->base, n->market, 1, -1, NULL) < 0)
        return 0;
    }
    f->to = h->m;
    double prev = change_before(l, j);
    f->idle_s = isfinite(first_new) && first_new > prev ? first_new - prev : 0;
    return 1;
  }
  return 0;
}

static int same_decisions(const struct pit_replay *r) {
  if (r->nlive != r->nsim)
    return 0;
  for (int i = 0; i < r->nlive; i++)
    if (r->live[i].step != r->sim[i].step || !same_types(&r->live[i].to, &r->sim[i].to) ||
        !same_types(&r->live[i].from, &r->sim[i].from))
      return 0;
  return 1;
}

/* r->fixed: the job replayed on each membership the live run ran, alone
 * (the policy fixed; its nodes in the order of the live generation that ran
 * it), and the best of them under the policy's deadline (cost) or budget
 * (time). */
static int replay_fixed(const struct live *l, const struct pit_elastic_model *mdl, struct rmodel *rm,
                        const struct pit_replay_opts *o,
                        const struct pit_elastic_job *job, struct pit_replay *r, struct pit_err *e) {
  struct pit_replay_opts fo = *o;
  struct pit_elastic_job fj;
  struct pit_elastic_model alone = *mdl; /* a fixed membership follows none of the live run's restarts */
  alone.restart = NULL;
  alone.in_place = NULL;
  mdl = &alone;
  fo.policy.kind = PIT_POLICY_FIXED;
  r->best_fixed = -1;
  for (int g = 0; g < l->ng && r->nfixed < PIT_POLICY_MEAS_MAX; g++) {
    int seen = !l->g[g].have_nodes || l->g[g].n == 0;
    for (int k = 0; k < r->nfixed && !seen; k++)
      seen = pit_membership_equal(&r->fixed[k].m, &l->g[g].m);
    if (seen)
      continue;
    fj = *job;
    fj.initial = l->g[g].m;
    fj.nnodes = l->g[g].nnodes;
    memcpy(fj.nodes, l->g[g].nodes, sizeof fj.nodes);
    rm->cursor = 0;
    struct pit_elastic_result er = {0};
    int rc = pit_elastic_run(mdl, &fo, &fj, &er, e);
    if (rc < 0)
      return rc;
    struct pit_replay_fixed *f = &r->fixed[r->nfixed++];
    f->m = l->g[g].m;
    f->cost = er.cost; /* every node of the membership billed for the whole replayed job */
    f->time_s = er.time_s;
    /* a replay without a time (a step the records never timed) is no membership to compare with */
    int64_t upto = job->end > 0 ? job->end : job->total; /* a stopped run: the steps it made */
    f->complete = !er.diverged && er.steps_done == upto - job->step0 && isfinite(er.time_s) && er.time_s > 0;
    pit_elastic_result_release(&er);
  }
  for (int k = 0; k < r->nfixed; k++) {
    const struct pit_replay_fixed *f = &r->fixed[k], *b = r->best_fixed >= 0 ? &r->fixed[r->best_fixed] : NULL;
    int fits = f->complete && (o->policy.kind == PIT_POLICY_TIME ? !(f->cost > o->policy.budget)
                                                                 : !(f->time_s > o->policy.deadline_s));
    if (fits && (!b || (o->policy.kind == PIT_POLICY_TIME ? f->time_s < b->time_s : f->cost < b->cost)))
      r->best_fixed = k;
  }
  return 0;
}

int pit_replay_events(const char *path, const struct pit_replay_opts *o, struct pit_replay *r, struct pit_err *e) {
  struct pit_runlog log;
  pit_runlog_init(&log);
  int rc = pit_runlog_load(&log, path, e);
  if (rc == 0)
    rc = pit_replay_log(&log, path, o, r, e);
  else
    memset(r, 0, sizeof *r);
  pit_runlog_release(&log);
  return rc;
}

int pit_replay_log(const struct pit_runlog *log, const char *path, const struct pit_replay_opts *o,
                   struct pit_replay *r, struct pit_err *e) {
  memset(r, 0, sizeof *r);
  struct live *L = calloc(1, sizeof *L); /* large: 256 generations of up to PIT_POLICY_NODES_MAX nodes */
  if (!L)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  L->total = -1;
  struct pit_elastic_result er = {0};
  struct pit_runlog_cost bill = {0};
  int rc = read_live(path, log, L, e);
  if (rc == 0 && (rc = pit_runlog_cost(log, o->catalog, NAN, &bill, e)) == 0)
    L->cost = bill.total; /* the one accounting: the node records on billed seconds */
  pit_runlog_cost_release(&bill);
  if (rc < 0)
    goto out;
  /* the live lag from a resize decision to the generation's last step */
  double lag = 0;
  int nlag = 0;
  for (int i = 0; i < L->ndec; i++) {
    int g = live_gen_of(L, L->dec[i].step - 1);
    if (g >= 0)
      lag += (double)(L->its[L->g[g].first + L->g[g].n - 1].step + 1 - L->dec[i].step), nlag++;
  }
  struct rmodel rm = {.l = L, .mean_lag = nlag ? (int64_t)llround(lag / nlag) : 0};
  struct pit_elastic_model mdl = {&rm, r_iter, r_stop_step, r_start_s, r_stop_s, r_restart, r_in_place};
  struct pit_replay_opts oc = *o; /* the zone layer chose the count: the policy keeps it, as live */
  oc.count_held = oc.count_held || L->zone_count;
  o = &oc;
  struct pit_elastic_job job;
  memset(&job, 0, sizeof job);
  int g0 = 0; /* the first generation that ran on nodes (one killed before its first record did not) */
  while (g0 + 1 < L->ng && !L->g[g0].have_nodes)
    g0++;
  job.initial = L->g[g0].m;
  job.nnodes = L->g[g0].nnodes;
  memcpy(job.nodes, L->g[g0].nodes, sizeof job.nodes);
  job.step0 = L->its[L->g[g0].first].step;
  job.total = L->total;
  job.end = L->end < L->total ? L->end : 0; /* stopped early: every replay stops there too */
  if ((rc = pit_elastic_run(&mdl, o, &job, &er, e)) < 0) {
    char msg[sizeof e->msg];
    snprintf(msg, sizeof msg, "%s", e->msg);
    rc = pit_err_set(e, e->code, "%s: %s", path, msg);
    goto out;
  }
  r->nsim = er.ndec;
  r->sim = er.dec;
  er.dec = NULL;
  for (int i = 0; i < r->nsim; i++) { /* compared and shown as the live ones: bare */
    pit_membership_bare(&r->sim[i].from, &r->sim[i].from);
    pit_membership_bare(&r->sim[i].to, &r->sim[i].to);
  }
  r->diverged = er.diverged;
  r->decisions_sim = er.decisions;
  r->restarts = er.restarts;
  r->cost_sim = er.cost;
  r->time_sim = er.time_s;
  r->cost_live = L->cost;
  r->time_live = isfinite(L->g[L->ng - 1].t_end) ? L->g[L->ng - 1].t_end : L->its[L->nits - 1].t;
  if (L->t_last_stop > r->time_live)
    r->time_live = L->t_last_stop;
  r->steps = L->total;
  r->steps_run = job.end > 0 ? job.end : L->total;
  r->nlive = L->ndec;
  if (L->ndec) {
    r->live = malloc((size_t)L->ndec * sizeof *r->live);
    if (!r->live) {
      rc = pit_err_set(e, PIT_ENOMEM, "out of memory");
      goto out;
    }
    memcpy(r->live, L->dec, (size_t)L->ndec * sizeof *r->live);
  }
  r->same = !r->diverged && same_decisions(r);
  rc = replay_fixed(L, &mdl, &rm, o, &job, r, e);
out:
  pit_elastic_result_release(&er);
  free(L->its);
  free(L->dec);
  free(L);
  if (rc < 0)
    pit_replay_release(r);
  return rc;
}
