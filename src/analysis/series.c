/* series.c — struct pit_series: the facts of one or more runs the statistics
 * need, collected record by record (iterations with their per-rank times,
 * durations of init/validation/checkpoint/epoch records, run totals).
 * Invariants: iterations and events stay in arrival order; an iteration next
 * to a validation or checkpoint record of its run is flagged PIT_IT_NEAR_EVENT
 * (both neighbours: which one's step_s holds the pause is not known); arrays
 * are owned and grow geometrically. A run's segments (pit_series_seg) are its
 * generations on one configuration, in order; every record of the run belongs
 * to exactly one (those before its first init with a config, to the first). */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "pitstop/analysis.h"

void pit_series_init(struct pit_series *s) { memset(s, 0, sizeof *s); }

/* Frees what one run owns (its config, its segments and theirs). */
static void run_release(struct pit_series_run *ru) {
  for (int k = 0; k < ru->nsegs; k++)
    free(ru->segs[k].config);
  PIT_FREE_ALL(ru->config, ru->segs);
  ru->nsegs = 0;
  ru->capseg = 0;
}

void pit_series_release(struct pit_series *s) {
  for (int i = 0; i < s->nruns; i++)
    run_release(&s->runs[i]);
  PIT_FREE_ALL(s->runs, s->it, s->compute_s, s->wait_s, s->ev);
  pit_series_init(s);
}

/* The run's last segment, NULL if none (pit_series_last_seg, writable). */
static struct pit_series_seg *last_seg(struct pit_series_run *r) { return r->nsegs > 0 ? &r->segs[r->nsegs - 1] : NULL; }

const struct pit_series_seg *pit_series_last_seg(const struct pit_series_run *r) {
  return last_seg((struct pit_series_run *)r);
}

int pit_series_member_from(const struct pit_series_run *r) { return r->nsegs > 1 ? r->segs[r->nsegs - 1].gen_from : 0; }

/* A new last segment of ru from init record r (its config parsed as c, keyed
 * key); 0 or PIT_ENOMEM (set in e; ru unchanged). */
static int add_seg(struct pit_series_run *ru, const struct pit_record *r, const struct pit_config *c,
                   const char *key, struct pit_err *e) {
  char *config = strdup(r->config);
  if (!config || PIT_GROW(ru->segs, ru->nsegs + 1, ru->capseg)) {
    free(config);
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  }
  struct pit_series_seg *g = &ru->segs[ru->nsegs++];
  memset(g, 0, sizeof *g);
  g->gen_from = r->gen;
  snprintf(g->key, sizeof g->key, "%s", key);
  g->config = config;
  g->cfg = *c;
  g->end_total_s = NAN;
  g->t_from = ru->ended_t;
  g->last_t = NAN;
  return 0;
}

/* Record r's time seen in segment g (none: nothing). */
static void seg_saw(struct pit_series_seg *g, const struct pit_record *r) {
  if (g && isfinite(r->t) && (isnan(g->last_t) || r->t > g->last_t))
    g->last_t = r->t;
}

/* Room for extra more runs in s->runs; 0 or PIT_ENOMEM (set in e). */
static int grow_runs(struct pit_series *s, int extra, struct pit_err *e) {
  if (PIT_GROW(s->runs, s->nruns + extra, s->caprun))
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  return 0;
}

/* Room for need per-rank values in compute_s and wait_s (kept in step). */
static int grow_ranks(struct pit_series *s, int64_t need) {
  return PIT_GROW(s->compute_s, need, s->caprank) || PIT_GROW(s->wait_s, need, s->capwait) ? PIT_ENOMEM : 0;
}

static int run_index(struct pit_series *s, const char *name, struct pit_err *e) {
  if (s->nruns > 0 && strcmp(s->runs[s->nruns - 1].name, name) == 0)
    return s->nruns - 1;
  for (int i = 0; i < s->nruns; i++)
    if (strcmp(s->runs[i].name, name) == 0)
      return i;
  int rc = grow_runs(s, 1, e);
  if (rc)
    return rc;
  struct pit_series_run *r = &s->runs[s->nruns];
  memset(r, 0, sizeof *r);
  snprintf(r->name, sizeof r->name, "%s", name);
  pit_config_clear(&r->cfg);
  r->end_total_s = NAN;
  r->last_t = NAN;
  r->ended_gen = -1;
  r->ended_t = NAN;
  s->pending_event = 0;
  return s->nruns++;
}

static int add_event(struct pit_series *s, const struct pit_record *r, int run, double v, struct pit_err *e) {
  if (PIT_GROW(s->ev, s->nev + 1, s->capev))
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  s->ev[s->nev++] = (struct pit_series_event){r->type, run, r->rank, v, r->rdzv_s, r->epoch, r->gen};
  return 0;
}

/* A batch_shares decision (pitstop train --batch-shares auto): counted, its
 * shares kept as "a/b/...". Other decisions, or details that do not parse, are
 * left alone (a decision carries no duration). */
static void note_shares(struct pit_series_run *ru, const char *detail) {
  struct pit_decision d;
  struct pit_err e;
  pit_decision_init(&d);
  if (!detail || pit_decision_decode(&d, detail, &e) < 0 || strcmp(d.kind, "batch_shares") != 0 ||
      !d.shares) {
    pit_decision_release(&d);
    return;
  }
  ru->rebalances++;
  size_t n = 0;
  ru->shares[0] = 0;
  for (int i = 0; i < d.nshares; i++) {
    int w = snprintf(ru->shares + n, sizeof ru->shares - n, "%s%.0f", n ? "/" : "", (double)d.shares[i]);
    if (w < 0 || (size_t)w >= sizeof ru->shares - n) { /* too many ranks to show */
      snprintf(ru->shares + (sizeof ru->shares - 4), 4, "...");
      break;
    }
    n += (size_t)w;
  }
  pit_decision_release(&d);
}

/* An end record that ends the run, not only its generation: status "done",
 * none (a parsed log's total), or a --until-steady stop (detail reason
 * "steady" or "cap": a profile, measured to be predicted from). "stopped" is
 * otherwise resumable: the run goes on in a later generation. */
static int ends_run(const struct pit_record *r) {
  if (strcmp(r->status, "stopped") != 0)
    return 1;
  cJSON *d = r->detail ? cJSON_Parse(r->detail) : NULL;
  const cJSON *why = cJSON_GetObjectItemCaseSensitive(d, "reason");
  int measured = cJSON_IsString(why) && (!strcmp(why->valuestring, "steady") || !strcmp(why->valuestring, "cap"));
  cJSON_Delete(d);
  return measured;
}

/* 1 for the controller's own "done" end of a workload that wrote no end record
 * (detail "by": "controller"; docs/records.md). */
static int ended_by_controller(const struct pit_record *r) {
  if (strcmp(r->status, "done") != 0 || !r->detail)
    return 0;
  cJSON *d = cJSON_Parse(r->detail);
  const cJSON *by = cJSON_GetObjectItemCaseSensitive(d, "by");
  int ctl = cJSON_IsString(by) && !strcmp(by->valuestring, "controller");
  cJSON_Delete(d);
  return ctl;
}

int pit_series_add(struct pit_series *s, const struct pit_record *r, struct pit_err *e) {
  int run = run_index(s, r->run, e);
  if (run < 0)
    return run;
  struct pit_series_run *ru = &s->runs[run];
  if (isfinite(r->t) && (isnan(ru->last_t) || r->t > ru->last_t))
    ru->last_t = r->t;
  if (r->gen > ru->gen_last)
    ru->gen_last = r->gen;
  struct pit_series_seg *seg = last_seg(ru);
  if (r->type != PIT_REC_INIT) /* an init's time goes to the segment it may start (below) */
    seg_saw(seg, r);
  if (r->type != PIT_REC_END && r->gen > ru->ended_gen && ru->ended_gen >= 0)
    ru->over = ru->ended_ctl = 0; /* a generation after the last end runs */
  switch (r->type) {
  case PIT_REC_ITER: {
    if (PIT_GROW(s->it, s->nit + 1, s->capit) || grow_ranks(s, s->nrank_vals + r->nranks))
      return pit_err_set(e, PIT_ENOMEM, "out of memory");
    s->it[s->nit++] = (struct pit_series_iter){.step = r->step, .epoch = r->epoch, .iter = r->iter, .batch = r->batch,
                                               .gen = r->gen, .rank = r->rank, .run = run,
                                               .flags = s->pending_event ? PIT_IT_NEAR_EVENT : 0,
                                               .step_s = r->step_s, .data_s = r->data_s, .t = r->t,
                                               .nranks = r->nranks, .ranks_off = s->nrank_vals};
    s->pending_event = 0;
    for (int k = 0; k < r->nranks; k++) {
      s->compute_s[s->nrank_vals + k] = r->compute_s[k];
      s->wait_s[s->nrank_vals + k] = r->wait_s[k];
    }
    s->nrank_vals += r->nranks;
    return 0;
  }
  case PIT_REC_INIT: {
    struct pit_config c;
    pit_config_from_record(&c, r);
    if (r->config) { /* a generation on another configuration (an elastic run's resize): a segment */
      char key[sizeof seg->key];
      pit_config_key(&c, key, sizeof key);
      int rc = !seg || strcmp(key, seg->key) != 0 ? add_seg(ru, r, &c, key, e) : 0;
      if (rc)
        return rc;
    }
    seg_saw(last_seg(ru), r);
    if (!ru->config && r->config) {
      if (!(ru->config = strdup(r->config)))
        return pit_err_set(e, PIT_ENOMEM, "out of memory");
      ru->cfg = c;
    } else if (!ru->config && ru->cfg.ranks < 0) {
      ru->cfg = c;
    }
    return add_event(s, r, run, r->init_s, e);
  }
  case PIT_REC_VALIDATION:
  case PIT_REC_CHECKPOINT:
    if (s->nit > 0 && s->it[s->nit - 1].run == run)
      s->it[s->nit - 1].flags |= PIT_IT_NEAR_EVENT;
    s->pending_event = 1;
    return add_event(s, r, run, r->type == PIT_REC_VALIDATION ? r->val_s : r->ckpt_s, e);
  case PIT_REC_EPOCH:
    return add_event(s, r, run, r->epoch_s, e);
  case PIT_REC_END:
    ru->ends++;
    ru->ended_gen = r->gen;
    ru->ended_t = r->t;
    ru->over = ends_run(r);
    ru->ended_ctl = ru->over && ended_by_controller(r);
    if (seg)
      seg->ends++;
    if (isfinite(r->total_s)) {
      ru->end_total_s = isnan(ru->end_total_s) ? r->total_s : ru->end_total_s + r->total_s;
      if (seg)
        seg->end_total_s = isnan(seg->end_total_s) ? r->total_s : seg->end_total_s + r->total_s;
    }
    return 0;
  case PIT_REC_DECISION:
    note_shares(ru, r->detail);
    return 0;
  default:
    return 0; /* node records carry no durations */
  }
}

/* A deep copy of run src into *d (its config and segments duplicated); 0 or
 * PIT_ENOMEM, then *d owns nothing. */
static int run_copy(struct pit_series_run *d, const struct pit_series_run *src) {
  *d = *src;
  d->config = NULL;
  d->segs = NULL;
  d->nsegs = 0;
  d->capseg = 0;
  if ((src->config && !(d->config = strdup(src->config))) ||
      (src->nsegs > 0 && PIT_GROW(d->segs, src->nsegs, d->capseg))) {
    run_release(d);
    return PIT_ENOMEM;
  }
  for (int k = 0; k < src->nsegs; k++) {
    d->segs[k] = src->segs[k];
    if (!(d->segs[k].config = strdup(src->segs[k].config))) {
      run_release(d);
      return PIT_ENOMEM;
    }
    d->nsegs++;
  }
  return 0;
}

/* Appends to d the runs of src with their iterations and events; seg >= 0
 * (src one run: pit_series_parts): only that segment of it. */
static int append_part(struct pit_series *d, const struct pit_series *src, int seg, struct pit_err *e) {
  int base = d->nruns, lo = INT_MIN, hi = INT_MAX;
  if (grow_runs(d, src->nruns, e))
    return PIT_ENOMEM;
  for (int i = 0; i < src->nruns; i++) {
    if (run_copy(&d->runs[d->nruns], &src->runs[i]))
      return pit_err_set(e, PIT_ENOMEM, "out of memory");
    d->nruns++;
  }
  if (seg >= 0 && src->nruns == 1 && seg < src->runs[0].nsegs) { /* the run as its segment */
    const struct pit_series_run *sr = &src->runs[0];
    const struct pit_series_seg *g = &sr->segs[seg];
    struct pit_series_run *dr = &d->runs[base];
    lo = seg > 0 ? g->gen_from : INT_MIN; /* records before the first init with a config: the first segment's */
    hi = seg + 1 < sr->nsegs ? sr->segs[seg + 1].gen_from : INT_MAX;
    char *config = strdup(g->config);
    if (!config)
      return pit_err_set(e, PIT_ENOMEM, "out of memory");
    free(dr->config);
    dr->config = config;
    dr->cfg = g->cfg;
    dr->end_total_s = g->end_total_s;
    dr->ends = g->ends;
    dr->last_t = isfinite(g->t_from) ? g->last_t - g->t_from : g->last_t;
    for (int k = 0; k < dr->nsegs; k++) /* its one segment: this */
      if (k != seg)
        free(dr->segs[k].config);
    dr->segs[0] = dr->segs[seg];
    dr->nsegs = 1;
  }
  if (PIT_GROW(d->it, d->nit + src->nit, d->capit) || PIT_GROW(d->ev, d->nev + src->nev, d->capev) ||
      grow_ranks(d, d->nrank_vals + src->nrank_vals))
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  for (int64_t i = 0; i < src->nit; i++) {
    struct pit_series_iter it = src->it[i];
    if (it.gen < lo || it.gen >= hi)
      continue;
    it.run += base;
    if (it.nranks > 0) {
      memcpy(d->compute_s + d->nrank_vals, src->compute_s + it.ranks_off, sizeof(double) * (size_t)it.nranks);
      memcpy(d->wait_s + d->nrank_vals, src->wait_s + it.ranks_off, sizeof(double) * (size_t)it.nranks);
    }
    it.ranks_off = d->nrank_vals;
    d->nrank_vals += it.nranks;
    d->it[d->nit++] = it;
  }
  for (int64_t i = 0; i < src->nev; i++) {
    struct pit_series_event ev = src->ev[i];
    if (ev.gen < lo || ev.gen >= hi)
      continue;
    ev.run += base;
    d->ev[d->nev++] = ev;
  }
  d->pending_event = 0;
  return 0;
}

int pit_series_append(struct pit_series *d, const struct pit_series *src, struct pit_err *e) {
  return append_part(d, src, -1, e);
}

int pit_series_parts(const struct pit_series *s) {
  return s->nruns == 1 && s->runs[0].nsegs > 1 ? s->runs[0].nsegs : 1;
}

const struct pit_series_seg *pit_series_part(const struct pit_series *s, int k) {
  return pit_series_parts(s) > 1 ? &s->runs[0].segs[k] : NULL;
}

int pit_series_append_part(struct pit_series *d, const struct pit_series *src, int k, struct pit_err *e) {
  return append_part(d, src, pit_series_parts(src) > 1 ? k : -1, e);
}
