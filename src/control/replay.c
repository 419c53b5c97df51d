/* replay.c — a recorded run driven again by the same policy on a simulated
 * clock (include/pitstop/control.h, "replay"; docs/simulate.md "Live meets
 * simulated").
 *
 * The events file gives, per live generation: its nodes (node records, in
 * the controller's order: appended on start, removed on stop/lost), its
 * iteration records, and its start and stop overheads (first iteration's
 * record time − its step time − the previous generation's end; end − last
 * iteration). The replay then runs the job step by step: each iteration
 * advances the simulated clock by its recorded step time and is fed to the
 * controller's observation code (ctl_obs_iter), then pit_policy_decide sees
 * the state the controller would build (policy_state in controller.c). A
 * resize stops the generation where the live one stopped when the live run
 * resized at the same step (the workload's agreed checkpoint step), else at
 * the decision step plus the live runs' mean lag; the nodes change as the
 * controller's reshape changes them; the next generation pays the live
 * overheads.
 * Invariants: nothing printed; the events file is only read; the records
 * replayed are the live ones, so a replay that decides as the live run did
 * sees exactly the live observations.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

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

/* Reads the events file into l. */
static int read_live(const char *path, struct live *l, struct pit_err *e) {
  struct pit_record_reader rd;
  struct pit_record r;
  int rc = pit_record_reader_open(&rd, path, e);
  if (rc < 0)
    return rc;
  pit_record_init(&r);
  char cur[PIT_POLICY_NODES_MAX][PIT_NAME_MAX];
  int ncur = 0;
  struct { char id[PIT_NAME_MAX]; double t, price; } open[PIT_POLICY_NODES_MAX];
  int nopen = 0;
  for (int i = 0; i < MAXG; i++)
    l->g[i].t_end = NAN;
  while ((rc = pit_record_reader_next(&rd, &r, e)) == 1) {
    if (r.gen < 0 || r.gen >= MAXG) {
      rc = pit_err_set(e, PIT_EFORMAT, "%s:%ld: generation %d out of range", path, rd.lineno, r.gen);
      break;
    }
    struct lgen *g = &l->g[r.gen];
    if (r.gen >= l->ng)
      l->ng = r.gen + 1;
    if (r.type == PIT_REC_NODE) {
      if (strcmp(r.action, "start") == 0 && ncur < PIT_POLICY_NODES_MAX && nopen < PIT_POLICY_NODES_MAX) {
        snprintf(cur[ncur++], PIT_NAME_MAX, "%s", r.itype);
        snprintf(open[nopen].id, PIT_NAME_MAX, "%s", r.node);
        open[nopen].t = r.t;
        open[nopen++].price = r.price_h;
      } else if (strcmp(r.action, "stop") == 0 || strcmp(r.action, "lost") == 0) {
        for (int k = 0; k < nopen; k++)
          if (strcmp(open[k].id, r.node) == 0) { /* cur and open are parallel: the controller's list */
            l->cost += open[k].price * (r.t - open[k].t) / 3600.0;
            if (r.t > l->t_last_stop)
              l->t_last_stop = r.t;
            memmove(cur[k], cur[k + 1], (size_t)(ncur - k - 1) * PIT_NAME_MAX);
            memmove(&open[k], &open[k + 1], (size_t)(nopen - k - 1) * sizeof open[0]);
            ncur--;
            nopen--;
            break;
          }
      }
    } else if (r.type == PIT_REC_INIT || (r.type == PIT_REC_ITER && !g->have_nodes)) {
      if (!g->have_nodes) {
        memcpy(g->nodes, cur, sizeof cur);
        g->nnodes = ncur;
        g->have_nodes = 1;
        if ((rc = membership_of(cur, ncur, &g->m, e)) < 0)
          break;
      }
      if (r.type == PIT_REC_INIT && r.config && l->total < 0) {
        const char *p = strstr(r.config, "\"planned_iters\":");
        if (p)
          l->total = strtoll(p + 16, NULL, 10);
      }
    }
    if (r.type == PIT_REC_ITER && r.step >= 0) {
      if (r.gen + 1 < l->ng) {
        rc = pit_err_set(e, PIT_EFORMAT, "%s:%ld: an iteration of generation %d after generation %d's", path,
                         rd.lineno, r.gen, l->ng - 1);
        break;
      }
      if (l->nits == l->cap && PIT_GROW(l->its, l->nits + 1, l->cap)) {
        rc = pit_err_set(e, PIT_ENOMEM, "out of memory");
        break;
      }
      struct it *x = &l->its[l->nits];
      memset(x, 0, sizeof *x);
      x->step = r.step;
      x->batch = r.batch;
      x->t = r.t;
      x->step_s = r.step_s;
      x->nranks = r.compute_s && r.nranks <= PIT_POLICY_NODES_MAX ? r.nranks : 0;
      for (int k = 0; k < x->nranks; k++) {
        x->compute[k] = r.compute_s[k];
        x->wait[k] = r.wait_s ? r.wait_s[k] : NAN;
      }
      x->dt = g->n > 0 && r.t > l->its[l->nits - 1].t ? r.t - l->its[l->nits - 1].t : r.step_s;
      if (g->n == 0)
        g->first = l->nits;
      g->n++;
      l->nits++;
    } else if (r.type == PIT_REC_END) {
      g->t_end = r.t;
    } else if (r.type == PIT_REC_DECISION && r.detail) {
      const char *a = strstr(r.detail, "\"action\":\"resize\"");
      const char *to = strstr(r.detail, "\"to\":\""), *from = strstr(r.detail, "\"from\":\"");
      if (a && to && from) {
        struct pit_replay_decision d = {.step = r.step, .t = r.t};
        char buf[PIT_MEMBERSHIP_TEXT_MAX];
        struct pit_err e2 = {0};
        snprintf(buf, sizeof buf, "%.*s", (int)strcspn(to + 6, "\""), to + 6);
        int bad = pit_membership_parse(&d.to, buf, &e2) < 0;
        snprintf(buf, sizeof buf, "%.*s", (int)strcspn(from + 8, "\""), from + 8);
        bad = bad || pit_membership_parse(&d.from, buf, &e2) < 0;
        if (bad) {
          rc = pit_err_set(e, PIT_EFORMAT, "%s:%ld: decision: %s", path, rd.lineno, e2.msg);
          break;
        }
        if (PIT_GROW(l->dec, l->ndec + 1, l->deccap)) {
          rc = pit_err_set(e, PIT_ENOMEM, "out of memory");
          break;
        }
        l->dec[l->ndec++] = d;
      }
    }
    pit_record_release(&r);
  }
  pit_record_release(&r);
  pit_record_reader_release(&rd);
  if (rc < 0)
    return rc;
  if (l->nits == 0)
    return pit_err_set(e, PIT_EFORMAT, "%s: no iteration record to replay", path);
  if (nopen > 0)
    return pit_err_set(e, PIT_EFORMAT, "%s: %d node(s) without a stop record (the run did not end)", path, nopen);
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

/* The controller's reshape on a list of itypes: surplus nodes of a type go
 * from the end, missing ones are appended. */
static void reshape(char nodes[][PIT_NAME_MAX], int *n, const struct pit_membership *want) {
  for (int i = *n - 1; i >= 0; i--) {
    int have = 0;
    for (int j = 0; j < *n; j++)
      have += strcmp(nodes[j], nodes[i]) == 0;
    if (have > pit_membership_count(want, nodes[i])) {
      memmove(nodes[i], nodes[i + 1], (size_t)(*n - i - 1) * PIT_NAME_MAX);
      (*n)--;
    }
  }
  for (int k = 0; k < want->n; k++) {
    int have = 0;
    for (int j = 0; j < *n; j++)
      have += strcmp(nodes[j], want->m[k].itype) == 0;
    for (; have < want->m[k].nodes && *n < PIT_POLICY_NODES_MAX; have++)
      snprintf(nodes[(*n)++], PIT_NAME_MAX, "%s", want->m[k].itype);
  }
}

/* Σ nodes × price_h of m from o's types (NaN if a type is missing). */
static double price_of(const struct pit_replay_opts *o, const struct pit_membership *m) {
  static struct pit_policy_state ps;
  ps.ntypes = o->ntypes;
  memcpy(ps.types, o->types, sizeof ps.types);
  return pit_policy_price_h(&ps, m);
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

int pit_replay_events(const char *path, const struct pit_replay_opts *o, struct pit_replay *r, struct pit_err *e) {
  memset(r, 0, sizeof *r);
  static struct live l; /* large; replays are not concurrent */
  static struct pit_policy_state s;
  static struct pit_choice ch;
  memset(&l, 0, sizeof l);
  l.total = -1;
  int rpn = o->ranks_per_node > 0 ? o->ranks_per_node : 1;
  struct ctl_obs obs;
  ctl_obs_init(&obs);
  size_t simcap = 0;
  int rc = read_live(path, &l, e);
  if (rc < 0)
    goto out;
  /* the live lag from a resize decision to the generation's last step */
  double lag = 0;
  int nlag = 0;
  for (int i = 0; i < l.ndec; i++) {
    int g = live_gen_of(&l, l.dec[i].step - 1);
    if (g >= 0)
      lag += (double)(l.its[l.g[g].first + l.g[g].n - 1].step + 1 - l.dec[i].step), nlag++;
  }
  int64_t mean_lag = nlag ? (int64_t)llround(lag / nlag) : 0;

  struct pit_node nodes[PIT_POLICY_NODES_MAX];
  char names[PIT_POLICY_NODES_MAX][PIT_NAME_MAX];
  int nn = l.g[0].nnodes;
  memcpy(names, l.g[0].nodes, sizeof names);
  struct pit_membership cur = l.g[0].m;
  double T = 0, spent = 0, sw_sum = 0, t_dec = NAN;
  int nsw = 0, gen = 0;
  int64_t step = l.its[l.g[0].first].step, stop_at = -1;
  size_t cursor = 0;
  T += start_overhead(&l, 0);
  spent += price_of(o, &cur) * T / 3600.0; /* NaN for a type without a price: reported below */
  while (step < l.total) {
    int64_t gen_step0 = step;
    int stop_requested = 0, first = 1;
    double price = price_of(o, &cur);
    if (!isfinite(price)) {
      char m[PIT_MEMBERSHIP_TEXT_MAX];
      pit_membership_format(&cur, m, sizeof m);
      rc = pit_err_set(e, PIT_ENOTFOUND, "%s: membership %s has a type without a price (--types, the catalog)",
                       path, m);
      goto out;
    }
    ctl_obs_gen(&obs);
    memset(nodes, 0, sizeof nodes);
    for (int i = 0; i < nn; i++)
      memcpy(nodes[i].itype, names[i], sizeof nodes[i].itype);
    for (; step < l.total && (!stop_requested || step < stop_at); step++) {
      const struct it *x = model_iter(&l, &cur, step, &cursor);
      if (!x) {
        r->diverged = 1;
        goto done;
      }
      T += x->dt;
      spent += price * x->dt / 3600.0;
      if (first && isfinite(t_dec)) { /* decision → this generation's first iteration */
        sw_sum += T - t_dec;
        nsw++;
        first = 0;
      }
      struct pit_record rec;
      pit_record_init(&rec);
      rec.type = PIT_REC_ITER;
      rec.step = step;
      rec.batch = x->batch;
      rec.step_s = x->step_s;
      rec.nranks = x->nranks;
      rec.compute_s = (double *)x->compute;
      rec.wait_s = (double *)x->wait;
      rc = ctl_obs_iter(&obs, &cur, &rec, e);
      if (rc < 0)
        goto out;
      if (stop_requested)
        continue;
      memset(&s, 0, sizeof s);
      s.gen = gen;
      s.step = step + 1;
      s.total_steps = l.total;
      s.cur = cur;
      s.nmin = o->nmin;
      s.nmax = o->nmax;
      s.resizable = 1;
      s.t = T;
      s.spent = spent;
      s.since_change = step + 1 - gen_step0;
      s.switch_s = nsw ? sw_sum / nsw : NAN;
      ctl_obs_state(&obs, nodes, nn, rpn, &s);
      s.ntypes = o->ntypes;
      memcpy(s.types, o->types, (size_t)o->ntypes * sizeof o->types[0]);
      rc = pit_policy_decide(&o->policy, &s, &ch, e);
      if (rc < 0)
        goto out;
      r->decisions_sim += ch.decided;
      if (ch.act != PIT_ACT_RESIZE)
        continue;
      if (PIT_GROW(r->sim, r->nsim + 1, simcap)) {
        rc = pit_err_set(e, PIT_ENOMEM, "out of memory");
        goto out;
      }
      r->sim[r->nsim++] = (struct pit_replay_decision){.step = step + 1, .t = T, .from = cur, .to = ch.to};
      stop_requested = 1;
      t_dec = T;
      stop_at = step + 1 + mean_lag;
      for (int i = 0; i < l.ndec; i++) /* the live run resized here: it stopped where it stopped */
        if (l.dec[i].step == step + 1 && pit_membership_equal(&l.dec[i].to, &ch.to)) {
          int g = live_gen_of(&l, step);
          if (g >= 0)
            stop_at = l.its[l.g[g].first + l.g[g].n - 1].step + 1;
        }
    }
    /* the generation ends: its stop overhead; the next one's start */
    int g = live_gen_of(&l, step - 1);
    double so = g >= 0 ? stop_overhead(&l, g) : mean_overhead(&l, 0);
    T += so;
    spent += price * so / 3600.0;
    if (step >= l.total || !stop_requested)
      break;
    cur = r->sim[r->nsim - 1].to;
    reshape(names, &nn, &cur);
    gen++;
    int lg = live_gen_of(&l, step);
    double st = lg > 0 && pit_membership_equal(&l.g[lg].m, &cur) ? start_overhead(&l, lg) : mean_overhead(&l, 1);
    double np = price_of(o, &cur);
    T += st;
    spent += (isfinite(np) ? np : 0) * st / 3600.0;
  }
done:
  r->cost_sim = spent;
  r->time_sim = T;
  r->cost_live = l.cost;
  r->time_live = isfinite(l.g[l.ng - 1].t_end) ? l.g[l.ng - 1].t_end : l.its[l.nits - 1].t;
  if (l.t_last_stop > r->time_live)
    r->time_live = l.t_last_stop;
  r->steps = l.total;
  r->nlive = l.ndec;
  if (l.ndec) {
    r->live = malloc((size_t)l.ndec * sizeof *r->live);
    if (!r->live) {
      rc = pit_err_set(e, PIT_ENOMEM, "out of memory");
      goto out;
    }
    memcpy(r->live, l.dec, (size_t)l.ndec * sizeof *r->live);
  }
  r->same = !r->diverged && same_decisions(r);
  rc = 0;
out:
  ctl_obs_release(&obs);
  free(l.its);
  free(l.dec);
  if (rc < 0)
    pit_replay_release(r);
  return rc;
}
