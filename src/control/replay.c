/* replay.c — a recorded run driven again by the same policy on a simulated
 * clock (include/pitstop/control.h, "replay"; docs/simulate.md "Live meets
 * simulated"): the workload model of pit_elastic_run (elastic.c) made of the
 * run's own records.
 *
 * The events file gives, per live generation: its nodes (node records, in
 * the controller's order: appended on start, removed on stop/lost), its
 * iteration records, and its start and stop overheads (first iteration's
 * record time − its step time − the previous generation's end; end − last
 * iteration; the last generation: to the last node's stop). A step on a
 * membership takes the live record of that step when the live run ran it on
 * that membership, else that membership's records in turn. A resize stops the
 * generation where the live one stopped when the live run resized at the same
 * step to the same membership (the workload's agreed checkpoint step), else
 * at the decision step plus the live runs' mean lag.
 * Invariants: nothing printed; the events file is only read; the records
 * replayed are the live ones, so a replay that decides as the live run did
 * sees exactly the live observations.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "control/control_impl.h"

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
  int nnodes, have_nodes;
  size_t first, n;                                 /* its iterations: its[first .. first+n) */
  double t_end;                                    /* its end record (NaN: none) */
};

struct live {
  struct it *its;
  size_t nits, cap;
  struct lgen g[MAXG];
  int ng;
  int64_t total;
  struct pit_replay_decision *dec;
  int ndec;
  size_t deccap;
  double cost;
  double t_last_stop;  /* the last node stop record (the run's billing ends there) */
};

void pit_replay_release(struct pit_replay *r) {
  free(r->live);
  free(r->sim);
  memset(r, 0, sizeof *r);
}

/* The membership of a node list, as `pitstop run` writes it (ranks per node unknown). */
static int membership_of(char nodes[][PIT_NAME_MAX], int n, struct pit_membership *m, struct pit_err *e) {
  pit_membership_clear(m);
  for (int i = 0; i < n; i++)
    if (pit_membership_add(m, nodes[i], 1, -1, e) < 0)
      return PIT_EARG;
  return 0;
}

/* read_live's state between records: the nodes up now, in the controller's order. */
struct live_read {
  const char *path;
  struct live *l;
  char cur[PIT_POLICY_NODES_MAX][PIT_NAME_MAX];
  int ncur;
  struct { char id[PIT_NAME_MAX]; double t, price; } open[PIT_POLICY_NODES_MAX];
  int nopen;
};

static int live_record(void *ctx, const struct pit_record *r, long lineno, struct pit_err *e) {
  struct live_read *st = ctx;
  if (r->gen < 0 || r->gen >= MAXG) {
    return pit_err_set(e, PIT_EFORMAT, "%s:%ld: generation %d out of range", st->path, lineno, r->gen);
  }
  struct lgen *g = &st->l->g[r->gen];
  if (r->gen >= st->l->ng)
    st->l->ng = r->gen + 1;
  if (r->type == PIT_REC_NODE) {
    if (strcmp(r->action, "start") == 0 && st->ncur < PIT_POLICY_NODES_MAX && st->nopen < PIT_POLICY_NODES_MAX) {
      snprintf(st->cur[st->ncur++], PIT_NAME_MAX, "%s", r->itype);
      snprintf(st->open[st->nopen].id, PIT_NAME_MAX, "%s", r->node);
      st->open[st->nopen].t = r->t;
      st->open[st->nopen++].price = r->price_h;
    } else if (strcmp(r->action, "stop") == 0 || strcmp(r->action, "lost") == 0) {
      for (int k = 0; k < st->nopen; k++)
        if (strcmp(st->open[k].id, r->node) == 0) { /* st->cur and st->open are parallel: the controller's list */
          st->l->cost += st->open[k].price * (r->t - st->open[k].t) / 3600.0;
          if (r->t > st->l->t_last_stop)
            st->l->t_last_stop = r->t;
          memmove(st->cur[k], st->cur[k + 1], (size_t)(st->ncur - k - 1) * PIT_NAME_MAX);
          memmove(&st->open[k], &st->open[k + 1], (size_t)(st->nopen - k - 1) * sizeof st->open[0]);
          st->ncur--;
          st->nopen--;
          break;
        }
    }
  } else if (r->type == PIT_REC_INIT || (r->type == PIT_REC_ITER && !g->have_nodes)) {
    if (!g->have_nodes) {
      memcpy(g->nodes, st->cur, sizeof st->cur);
      g->nnodes = st->ncur;
      g->have_nodes = 1;
      if (membership_of(st->cur, st->ncur, &g->m, e) < 0)
        return PIT_EARG;
    }
    if (r->type == PIT_REC_INIT && r->config && st->l->total < 0) {
      const char *p = strstr(r->config, "\"planned_iters\":");
      if (p)
        st->l->total = strtoll(p + 16, NULL, 10);
    }
  }
  if (r->type == PIT_REC_ITER && r->step >= 0) {
    if (r->gen + 1 < st->l->ng) {
      return pit_err_set(e, PIT_EFORMAT, "%s:%ld: an iteration of generation %d after generation %d's", st->path,
                       lineno, r->gen, st->l->ng - 1);
    }
    if (st->l->nits == st->l->cap && PIT_GROW(st->l->its, st->l->nits + 1, st->l->cap)) {
      return pit_err_set(e, PIT_ENOMEM, "out of memory");
    }
    struct it *x = &st->l->its[st->l->nits];
    memset(x, 0, sizeof *x);
    x->step = r->step;
    x->batch = r->batch;
    x->t = r->t;
    x->step_s = r->step_s;
    x->nranks = r->compute_s && r->nranks <= PIT_POLICY_NODES_MAX ? r->nranks : 0;
    for (int k = 0; k < x->nranks; k++) {
      x->compute[k] = r->compute_s[k];
      x->wait[k] = r->wait_s ? r->wait_s[k] : NAN;
    }
    x->dt = g->n > 0 && r->t > st->l->its[st->l->nits - 1].t ? r->t - st->l->its[st->l->nits - 1].t : r->step_s;
    if (g->n == 0)
      g->first = st->l->nits;
    g->n++;
    st->l->nits++;
  } else if (r->type == PIT_REC_END) {
    g->t_end = r->t;
  } else if (r->type == PIT_REC_DECISION && r->detail) {
    /* the controller's keys of the detail: "action" (keep | resize | recommend), "from", "to" */
    cJSON *j = cJSON_Parse(r->detail);
    const char *a = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "action"));
    const char *to = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "to"));
    const char *from = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "from"));
    int resize = a && strcmp(a, "resize") == 0;
    struct pit_replay_decision d = {.step = r->step, .t = r->t};
    struct pit_err e2 = {0};
    int bad = resize && (!to || !from || pit_membership_parse(&d.to, to, &e2) < 0 ||
                         pit_membership_parse(&d.from, from, &e2) < 0);
    cJSON_Delete(j);
    if (bad) {
      return pit_err_set(e, PIT_EFORMAT, "%s:%ld: resize decision: %s", st->path, lineno,
                       e2.msg[0] ? e2.msg : "no \"from\" or \"to\" membership");
    }
    if (resize) {
      pit_membership_bare(&d.to, &d.to); /* a spot run's markets (TYPE@spot): the replay weighs types */
      pit_membership_bare(&d.from, &d.from);
      if (PIT_GROW(st->l->dec, st->l->ndec + 1, st->l->deccap)) {
        return pit_err_set(e, PIT_ENOMEM, "out of memory");
      }
      st->l->dec[st->l->ndec++] = d;
    }
  }
  return 0;
}

/* Reads the events file into l. */
static int read_live(const char *path, struct live *l, struct pit_err *e) {
  struct live_read st = {.path = path, .l = l};
  for (int i = 0; i < MAXG; i++)
    l->g[i].t_end = NAN;
  int rc = pit_record_each(path, live_record, &st, e);
  if (rc < 0)
    return rc;
  if (l->nits == 0)
    return pit_err_set(e, PIT_EFORMAT, "%s: no iteration record to replay", path);
  if (st.nopen > 0)
    return pit_err_set(e, PIT_EFORMAT, "%s: %d node(s) without a stop record (the run did not end)", path, st.nopen);
  for (int i = 0; i < l->ng; i++)
    if (!l->g[i].have_nodes)
      return pit_err_set(e, PIT_EFORMAT, "%s: generation %d has no nodes", path, i);
  if (l->total < 0)
    l->total = l->its[l->nits - 1].step + 1;
  return 0;
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
  if (g >= 0 && pit_membership_equal(&l->g[g].m, m)) {
    const struct lgen *lg = &l->g[g];
    size_t k = (size_t)(s - l->its[lg->first].step);
    if (k < lg->n && l->its[lg->first + k].step == s)
      return &l->its[lg->first + k];
  }
  size_t tot = 0;
  for (int i = 0; i < l->ng; i++)
    if (pit_membership_equal(&l->g[i].m, m))
      tot += l->g[i].n;
  if (tot == 0)
    return NULL;
  size_t want = (*cursor)++ % tot;
  for (int i = 0; i < l->ng; i++)
    if (pit_membership_equal(&l->g[i].m, m)) {
      if (want < l->g[i].n)
        return &l->its[l->g[i].first + want];
      want -= l->g[i].n;
    }
  return NULL;
}

/* Overheads of live generation i: before its first iteration (from the
 * previous generation's end, or the run's start), after its last (to its end
 * record; the last generation: to the last node's stop, where billing ends). */
static double start_overhead(const struct live *l, int i) {
  const struct lgen *g = &l->g[i];
  double prev = i == 0 ? 0 : isfinite(l->g[i - 1].t_end) ? l->g[i - 1].t_end : 0;
  double o = g->n ? l->its[g->first].t - l->its[g->first].step_s - prev : 0;
  return o > 0 ? o : 0;
}
static double stop_overhead(const struct live *l, int i) {
  const struct lgen *g = &l->g[i];
  double end = i == l->ng - 1 && l->t_last_stop > g->t_end ? l->t_last_stop : g->t_end;
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
    if (l->dec[i].step == decided && pit_membership_equal(&l->dec[i].to, to)) {
      int g = live_gen_of(l, decided - 1);
      if (g >= 0)
        at = l->its[l->g[g].first + l->g[g].n - 1].step + 1;
    }
  return at;
}
/* A generation's start on m: the live one's where the live run started m at that step; the
 * first generation (a fixed replay's only start): the start the live run measured for m — its
 * first generation on m, from the end of the one before (nodes, launch, init) — so a fixed
 * membership pays its own start, not the live run's first one's. */
static double r_start_s(void *ctx, int gen, int64_t step, const struct pit_membership *m) {
  const struct live *l = ((const struct rmodel *)ctx)->l;
  if (gen == 0) {
    for (int i = 0; i < l->ng; i++)
      if (pit_membership_equal(&l->g[i].m, m) && l->g[i].n > 0)
        return start_overhead(l, i);
    return start_overhead(l, 0);
  }
  int lg = live_gen_of(l, step);
  return lg > 0 && pit_membership_equal(&l->g[lg].m, m) ? start_overhead(l, lg) : mean_overhead(l, 1);
}
static double r_stop_s(void *ctx, int gen, int64_t step, const struct pit_membership *m, int last) {
  (void)gen, (void)m, (void)last;
  const struct live *l = ((const struct rmodel *)ctx)->l;
  int g = live_gen_of(l, step - 1);
  return g >= 0 ? stop_overhead(l, g) : mean_overhead(l, 0);
}

static int same_decisions(const struct pit_replay *r) {
  if (r->nlive != r->nsim)
    return 0;
  for (int i = 0; i < r->nlive; i++)
    if (r->live[i].step != r->sim[i].step || !pit_membership_equal(&r->live[i].to, &r->sim[i].to) ||
        !pit_membership_equal(&r->live[i].from, &r->sim[i].from))
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
    f->cost = er.cost;
    f->time_s = er.time_s;
    f->complete = !er.diverged && er.steps_done == job->total - job->step0;
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
  memset(r, 0, sizeof *r);
  struct live *L = calloc(1, sizeof *L); /* large: 256 generations of up to PIT_POLICY_NODES_MAX nodes */
  if (!L)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  L->total = -1;
  struct pit_elastic_result er = {0};
  int rc = read_live(path, L, e);
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
  struct pit_elastic_model mdl = {&rm, r_iter, r_stop_step, r_start_s, r_stop_s};
  struct pit_elastic_job job;
  memset(&job, 0, sizeof job);
  job.initial = L->g[0].m;
  job.nnodes = L->g[0].nnodes;
  memcpy(job.nodes, L->g[0].nodes, sizeof job.nodes);
  job.step0 = L->its[L->g[0].first].step;
  job.total = L->total;
  if ((rc = pit_elastic_run(&mdl, o, &job, &er, e)) < 0) {
    char msg[sizeof e->msg];
    snprintf(msg, sizeof msg, "%s", e->msg);
    rc = pit_err_set(e, e->code, "%s: %s", path, msg);
    goto out;
  }
  r->nsim = er.ndec;
  r->sim = er.dec;
  er.dec = NULL;
  r->diverged = er.diverged;
  r->decisions_sim = er.decisions;
  r->cost_sim = er.cost;
  r->time_sim = er.time_s;
  r->cost_live = L->cost;
  r->time_live = isfinite(L->g[L->ng - 1].t_end) ? L->g[L->ng - 1].t_end : L->its[L->nits - 1].t;
  if (L->t_last_stop > r->time_live)
    r->time_live = L->t_last_stop;
  r->steps = L->total;
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
