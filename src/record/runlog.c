/* runlog.c — the run log: one fold of an elastic run's records (record.h,
 * "the run log"). pit_runlog_add takes the records in file order and keeps
 * the run as every reader sees it: generations, nodes, decisions, checkpoints
 * and the iterations' progress; pit_runlog_load feeds it an events file through
 * the follower, so a live file's half-written last line waits for a later load.
 * Invariants: no clock, no printing, no pricing; the fold of a prefix of the
 * records is the fold the whole file had at that point (a live run's status and
 * its final report read the same fold); arrays only grow. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "pitstop/record.h"

enum { MAX_GEN_JUMP = 4096 };

void pit_runlog_init(struct pit_runlog *log) {
  memset(log, 0, sizeof *log);
  log->planned_iters = -1;
}

void pit_runlog_release(struct pit_runlog *log) {
  for (int i = 0; i < log->ndec; i++)
    pit_decision_release(&log->dec[i].d);
  PIT_FREE_ALL(log->gens, log->nodes, log->dec, log->ckpt, log->iters, log->up, log->rank_s, log->gen_nodes);
  pit_runlog_init(log);
}

static void gen_init(struct pit_runlog_gen *g, int gen, double t) {
  memset(g, 0, sizeof *g);
  g->gen = gen;
  g->step_first = g->step_last = -1;
  g->ranks = -1;
  g->t_first = t;
  g->t_init = g->init_s = g->t_first_iter = g->t_last_iter = g->t_end = g->total_s = NAN;
  g->iter0 = -1;
}

/* The generation gen, made (with any before it) when first seen. */
static struct pit_runlog_gen *gen_at(struct pit_runlog *log, int gen, double t, struct pit_err *e) {
  if (gen < 0 || gen > log->ngens + MAX_GEN_JUMP) {
    pit_err_set(e, PIT_EFORMAT, "generation %d out of range", gen);
    return NULL;
  }
  if (gen >= log->ngens) {
    if (PIT_GROW(log->gens, gen + 1, log->capgens)) {
      pit_err_set(e, PIT_ENOMEM, "out of memory");
      return NULL;
    }
    for (int k = log->ngens; k <= gen; k++)
      gen_init(&log->gens[k], k, t);
    log->ngens = gen + 1;
  }
  return &log->gens[gen];
}

/* The node up now with id, as an index into log->up; -1 if none. */
static int up_find(const struct pit_runlog *log, const char *id) {
  for (int k = log->nup - 1; k >= 0; k--)
    if (strcmp(log->nodes[log->up[k]].id, id) == 0)
      return k;
  return -1;
}

static int add_node(struct pit_runlog *log, const struct pit_record *r, struct pit_err *e) {
  if (strcmp(r->action, "start") == 0) {
    if (PIT_GROW(log->nodes, log->nnodes + 1, log->capnodes) || PIT_GROW(log->up, log->nup + 1, log->capup))
      return pit_err_set(e, PIT_ENOMEM, "out of memory");
    struct pit_runlog_node *n = &log->nodes[log->nnodes];
    memset(n, 0, sizeof *n);
    snprintf(n->id, sizeof n->id, "%s", r->node);
    snprintf(n->itype, sizeof n->itype, "%s", r->itype);
    /* the record's type (TYPE, or an old file's TYPE@market) read at the edge; a name that is not
     * one stays whole; its "market" field, when written, names the market */
    if (pit_itype_market_parse(r->itype, n->base, sizeof n->base, &n->market, NULL) < 0) {
      snprintf(n->base, sizeof n->base, "%s", r->itype);
      n->market = PIT_MARKET_DEFAULT;
    }
    if (r->market != PIT_MARKET_DEFAULT)
      n->market = r->market;
    snprintf(n->zone, sizeof n->zone, "%s", r->zone);
    n->price_h = r->price_h;
    n->row = r->row;
    n->gen = r->gen;
    n->adopted_gen = -1;
    n->t_start = r->t;
    n->t_ready = n->t_stop = NAN;
    log->up[log->nup++] = log->nnodes++;
    return 0;
  }
  int k = up_find(log, r->node);
  if (k < 0) /* a node the fold never saw start (a file cut at its head): nothing to end */
    return 0;
  struct pit_runlog_node *n = &log->nodes[log->up[k]];
  if (strcmp(r->action, "ready") == 0) {
    if (!isnan(n->t_ready) && r->gen > n->gen) /* ready again, in a later generation: adopted */
      n->adopted_gen = r->gen;
    n->t_ready = r->t;
  } else if (strcmp(r->action, "stop") == 0 || strcmp(r->action, "lost") == 0) {
    n->t_stop = r->t;
    n->lost = r->action[0] == 'l';
    if (r->t > log->t_last_stop)
      log->t_last_stop = r->t;
    memmove(&log->up[k], &log->up[k + 1], (size_t)(log->nup - k - 1) * sizeof *log->up);
    log->nup--;
  }
  return 0;
}

/* The nodes up now, each once, as a membership. */
static int up_membership(const struct pit_runlog *log, struct pit_membership *m, struct pit_err *e) {
  pit_membership_clear(m);
  for (int k = 0; k < log->nup; k++) {
    const struct pit_runlog_node *n = &log->nodes[log->up[k]];
    if (pit_membership_add_on(m, n->base, n->market, 1, -1, e) < 0)
      return PIT_EFORMAT;
  }
  return 0;
}

/* A generation's membership: the nodes up now (each once), else its config's. */
static int take_membership(struct pit_runlog *log, struct pit_runlog_gen *g, const struct pit_record *r,
                           struct pit_err *e) {
  if (g->have_m)
    return 0;
  if (PIT_GROW(log->gen_nodes, log->ngen_nodes + (size_t)log->nup, log->capgen_nodes))
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  g->node0 = (int64_t)log->ngen_nodes;
  g->nnodes = log->nup;
  for (int k = 0; k < log->nup; k++)
    log->gen_nodes[log->ngen_nodes++] = log->up[k];
  if (up_membership(log, &g->m, e) < 0)
    return PIT_EFORMAT;
  if (g->m.n == 0 && r->config && pit_membership_from_config(&g->m, r->config, e) < 0)
    return PIT_EFORMAT;
  g->have_m = 1;
  g->m_nodes = 0;
  return 0;
}

static void take_planned(struct pit_runlog *log, const char *config) {
  if (log->planned_iters >= 0 || !config)
    return;
  cJSON *j = cJSON_Parse(config);
  const cJSON *p = cJSON_GetObjectItemCaseSensitive(j, "planned_iters");
  if (cJSON_IsNumber(p) && p->valuedouble >= 0)
    log->planned_iters = (int64_t)p->valuedouble;
  cJSON_Delete(j);
}

/* 1 when config (an init record's) says key: true. */
static int config_true(const char *config, const char *key) {
  if (!config)
    return 0;
  cJSON *j = cJSON_Parse(config);
  int v = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, key));
  cJSON_Delete(j);
  return v;
}

static int add_decision(struct pit_runlog *log, const struct pit_record *r, struct pit_err *e) {
  if (PIT_GROW(log->dec, log->ndec + 1, log->capdec))
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  struct pit_runlog_decision *x = &log->dec[log->ndec];
  memset(x, 0, sizeof *x);
  x->gen = r->gen;
  x->t = r->t;
  pit_decision_init(&x->d);
  x->d.step = r->step;
  if (!r->detail) { /* a decision without its detail: when, and nothing more */
    log->ndec++;
    return 0;
  }
  int rc = pit_decision_decode(&x->d, r->detail, e);
  if (rc < 0)
    return rc;
  if (x->d.step < 0)
    x->d.step = r->step;
  if (x->d.to.n == 0 && !x->d.policy[0] && x->d.nalts > 0) /* no "to" written: the chosen alternative */
    x->d.to = x->d.alts[0].m;
  log->ndec++;
  return 0;
}

/* An iteration record, with its per-rank compute and wait times (the replay's model). */
static int add_iter(struct pit_runlog *log, const struct pit_record *r, struct pit_err *e) {
  int nr = r->compute_s && r->nranks > 0 ? r->nranks : 0;
  if (PIT_GROW(log->iters, log->niters + 1, log->capiters) ||
      PIT_GROW(log->rank_s, log->nrank_s + 2 * (size_t)nr, log->caprank_s))
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  log->iters[log->niters++] =
      (struct pit_runlog_iter){r->gen, r->t, r->step_s, r->step, r->batch, nr, (int64_t)log->nrank_s, "", r->loss};
  snprintf(log->iters[log->niters - 1].samples, sizeof log->iters[0].samples, "%s", r->samples);
  for (int k = 0; k < nr; k++) {
    log->rank_s[log->nrank_s + (size_t)k] = r->compute_s[k];
    log->rank_s[log->nrank_s + (size_t)(nr + k)] = r->wait_s ? r->wait_s[k] : NAN;
  }
  log->nrank_s += 2 * (size_t)nr;
  return 0;
}

int pit_runlog_add(struct pit_runlog *log, const struct pit_record *r, struct pit_err *e) {
  struct pit_runlog_gen *g = gen_at(log, r->gen, r->t, e);
  if (!g)
    return e ? e->code : PIT_EFORMAT;
  if (log->nrecords++ == 0)
    snprintf(log->run, sizeof log->run, "%s", r->run);
  if (r->t > log->t_last)
    log->t_last = r->t;
  int rc = 0;
  /* before its init or iteration records (which may never come), a generation's membership is the
   * nodes its records leave up (record.h, pit_runlog_gen's m); its first lost record settles it */
  if (!g->have_m && g->m_nodes != 2 && r->type == PIT_REC_NODE && strcmp(r->action, "lost") == 0) {
    if (g->m_nodes == 0 && (rc = up_membership(log, &g->m, e)) < 0) /* its first record: the nodes before it */
      return rc;
    g->m_nodes = 2;
  }
  switch (r->type) {
  case PIT_REC_NODE:
    if (r->continued)
      g->continued = 1;
    rc = add_node(log, r, e);
    break;
  case PIT_REC_INIT:
    g->t_init = r->t;
    g->init_s = r->init_s;
    g->ranks = r->ranks;
    take_planned(log, r->config);
    g->in_place = config_true(r->config, "in_place");
    rc = take_membership(log, g, r, e);
    break;
  case PIT_REC_ITER:
    if (r->step < 0)
      break;
    if ((rc = take_membership(log, g, r, e)) < 0)
      break;
    if ((rc = add_iter(log, r, e)) < 0)
      return rc;
    if (g->niters++ == 0) {
      g->iter0 = log->niters - 1;
      g->step_first = r->step;
      g->t_first_iter = r->t;
    }
    g->step_last = r->step;
    g->t_last_iter = r->t;
    break;
  case PIT_REC_CHECKPOINT:
    if (PIT_GROW(log->ckpt, log->nckpt + 1, log->capckpt))
      return pit_err_set(e, PIT_ENOMEM, "out of memory");
    log->ckpt[log->nckpt] = (struct pit_runlog_ckpt){r->gen, r->t, r->ckpt_s, r->step, r->bytes, ""};
    snprintf(log->ckpt[log->nckpt].path, sizeof log->ckpt[0].path, "%s", r->path ? r->path : "");
    log->nckpt++;
    break;
  case PIT_REC_END:
    g->t_end = r->t;
    g->total_s = r->total_s;
    snprintf(g->status, sizeof g->status, "%s", r->status);
    g->end_reason[0] = '\0';
    if (r->detail) {
      cJSON *j = cJSON_Parse(r->detail);
      const char *why = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "reason"));
      snprintf(g->end_reason, sizeof g->end_reason, "%s", why ? why : "");
      cJSON_Delete(j);
    }
    break;
  case PIT_REC_DECISION:
    rc = add_decision(log, r, e);
    break;
  default:
    break;
  }
  if (rc >= 0 && !g->have_m && g->m_nodes != 2) {
    rc = up_membership(log, &g->m, e);
    g->m_nodes = 1;
  }
  return rc < 0 ? rc : 0;
}

int pit_runlog_load(struct pit_runlog *log, const char *path, struct pit_err *e) {
  return pit_runlog_load_each(log, path, NULL, NULL, e);
}

int pit_runlog_load_each(struct pit_runlog *log, const char *path, pit_record_fn fn, void *ctx, struct pit_err *e) {
  struct pit_follower f;
  int rc = pit_follower_open(&f, path, 0, e);
  if (rc < 0)
    return rc;
  struct pit_record r;
  pit_record_init(&r);
  log->truncated = 0;
  long lineno = 0;
  const char *line;
  size_t n;
  while ((rc = pit_follower_line(&f, &line, &n, e)) == PIT_FOLLOW_RECORD) {
    lineno++;
    size_t k = 0;
    while (k < n && (line[k] == ' ' || line[k] == '\t' || line[k] == '\r'))
      k++;
    if (k == n)
      continue;
    struct pit_err e2 = {0};
    rc = pit_record_parse(&r, line, n, &e2);
    if (rc == 0)
      rc = pit_runlog_add(log, &r, &e2);
    if (rc == 0 && fn)
      rc = fn(ctx, &r, lineno, &e2);
    pit_record_release(&r);
    if (rc < 0) {
      rc = pit_err_set(e, rc, "%s:%ld: %s", path, lineno, e2.msg);
      break;
    }
  }
  if (rc == PIT_FOLLOW_PARTIAL)
    log->truncated = 1;
  if (rc > 0 || rc == PIT_FOLLOW_AGAIN)
    rc = 0;
  pit_record_release(&r);
  pit_follower_release(&f);
  return rc;
}

const struct pit_runlog_gen *pit_runlog_current(const struct pit_runlog *log) {
  return log->ngens > 0 ? &log->gens[log->ngens - 1] : NULL;
}

int pit_runlog_finished(const struct pit_runlog *log) {
  const struct pit_runlog_gen *g = pit_runlog_current(log);
  return g && strcmp(g->status, "done") == 0 && log->nup == 0;
}

int64_t pit_runlog_step(const struct pit_runlog *log) {
  int64_t s = -1;
  for (int i = 0; i < log->ngens; i++)
    if (log->gens[i].step_last > s)
      s = log->gens[i].step_last;
  return s;
}

int pit_runlog_job_done(const struct pit_runlog *log) {
  for (int i = log->ngens - 1; i >= 0; i--) {
    const struct pit_runlog_gen *g = &log->gens[i];
    if (isnan(g->t_init) && g->niters == 0 && isnan(g->t_end))
      continue; /* node or decision records only */
    if (isnan(g->t_end) || g->t_last_iter > g->t_end || g->t_init > g->t_end)
      return 0;
    return strcmp(g->status, "done") == 0 || g->status[0] == '\0' ||
           (strcmp(g->status, "stopped") == 0 &&
            (strcmp(g->end_reason, "steady") == 0 || strcmp(g->end_reason, "cap") == 0));
  }
  return 0;
}

const struct pit_runlog_ckpt *pit_runlog_last_ckpt(const struct pit_runlog *log) {
  const struct pit_runlog_ckpt *best = NULL;
  for (int i = 0; i < log->nckpt; i++)
    if (log->ckpt[i].path[0] && (!best || log->ckpt[i].step > best->step))
      best = &log->ckpt[i];
  return best;
}
