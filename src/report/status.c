/* status.c — an elastic run's status (pitstop status; report.h "a run's status"):
 * the run log's fold of its events file (one reading: the predictor's series are
 * handed the same records, pit_runlog_load_each), its nodes priced on billed seconds
 * (catalog/cost.c: the catalog given, else the run's own from its node records'
 * rows, else the fallback), its t_p and the finish and cost predicted with intervals
 * by the predict module over the same records, written as a table or JSON.
 * The top-level fields, the generations, the nodes and the decisions are each
 * declared once in a field table below, which drives both formats.
 * Invariants: the run directory is only read (the lock is never taken: its pid
 * is read and asked whether it lives); no clock (times are the run's own);
 * nothing but f is written; absent values are JSON null and "-" in tables. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pitstop/report.h"
#include "report/fmt_impl.h"

static int is_file(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}
static int is_dir(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The run directory under runs/ whose events file changed last; 0, or PIT_ENOTFOUND. */
static int newest_run(char *dir, size_t ndir, struct pit_err *e) {
  DIR *d = opendir("runs");
  double best = -1;
  struct dirent *de;
  while (d && (de = readdir(d))) {
    char p[1100];
    struct stat st;
    if (de->d_name[0] == '.' || snprintf(p, sizeof p, "runs/%s/events.jsonl", de->d_name) >= (int)sizeof p ||
        stat(p, &st) != 0)
      continue;
    double m = (double)st.st_mtim.tv_sec + st.st_mtim.tv_nsec * 1e-9;
    if (m > best) {
      best = m;
      snprintf(dir, ndir, "runs/%s", de->d_name);
    }
  }
  if (d)
    closedir(d);
  return best < 0 ? pit_err_set(e, PIT_ENOTFOUND, "no run under runs/ (give RUN, its directory or its events file)")
                  : 0;
}

int pit_status_find(const char *arg, char *dir, size_t ndir, char *events, size_t nevents, struct pit_err *e) {
  dir[0] = events[0] = '\0';
  int rc = 0;
  if (!arg)
    rc = newest_run(dir, ndir, e);
  else if (is_dir(arg))
    snprintf(dir, ndir, "%s", arg);
  else if (is_file(arg)) {
    snprintf(events, nevents, "%s", arg);
    const char *slash = strrchr(arg, '/'); /* its directory, when it is a run's */
    snprintf(dir, ndir, "%.*s", slash ? (int)(slash - arg) : 1, slash ? arg : ".");
    char lock[1100];
    snprintf(lock, sizeof lock, "%s/lock", dir);
    if (!is_file(lock))
      dir[0] = '\0';
    return 0;
  } else if (strchr(arg, '/') == NULL) {
    snprintf(dir, ndir, "runs/%s", arg);
    if (!is_dir(dir))
      return pit_err_set(e, PIT_ENOTFOUND, "no run '%s': neither a directory, an events file nor runs/%s", arg, arg);
  } else {
    return pit_err_set(e, PIT_ENOTFOUND, "'%s': no such run directory or events file", arg);
  }
  if (rc < 0)
    return rc;
  snprintf(events, nevents, "%s/events.jsonl", dir);
  if (!is_file(events))
    return pit_err_set(e, PIT_ENOTFOUND, "'%s' holds no events.jsonl (is it a pitstop run's directory?)", dir);
  return 0;
}

/* The pid in DIR/lock when that process lives; 0 otherwise. */
static int live_controller(const char *dir) {
  if (!dir[0])
    return 0;
  char p[1100], buf[32] = "";
  snprintf(p, sizeof p, "%s/lock", dir);
  FILE *f = fopen(p, "r");
  if (!f)
    return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  long pid = strtol(buf, NULL, 10);
  /* the caller's own pid: pitstop run writing its report.html once its controller returned (the
   * lock file stays until the process exits), so the run is not running any more */
  if (pid <= 0 || pid == (long)getpid() || (kill((pid_t)pid, 0) < 0 && errno != EPERM))
    return 0;
  return (int)pid;
}

static const struct pit_itype *type_of(const struct pit_catalog *cat, const struct pit_runlog_node *n) {
  return cat ? pit_catalog_find(cat, n->base) : NULL;
}

/* One record of the fold's reading, into the predictor's series too. */
static int series_add(void *ctx, const struct pit_record *r, long lineno, struct pit_err *e) {
  (void)lineno;
  return pit_runset_add(ctx, r, e);
}

/* t_p and the rest of the job, predicted over the run's own records (rs: the
 * same records as the fold's, handed over by its one reading, pit_runlog_load_each). */
static void predict(struct pit_status *s, const struct pit_catalog *cat, struct pit_runset *rs) {
  struct pit_err e = {0};
  struct pit_predict_in in;
  struct pit_predict_basis b;
  struct pit_prediction p;
  const struct pit_runlog_gen *g = pit_runlog_current(&s->log);
  /* the predictor's series (iterations by epoch, steady state): the fold keeps the run's model
   * (generations, nodes, money), the series a predictor's inputs, both from one reading */
  if (pit_runset_summarize(rs, &e) < 0 || rs->n < 1 ||
      pit_predict_inputs(&rs->runs[0].series, &rs->runs[0].sum, rs->runs[0].name, 0, &in, &b, &e) < 0) {
    snprintf(s->note, sizeof s->note, "%s", e.msg[0] ? e.msg : "no run in the events file");
    return;
  }
  s->tp = in.tp;
  s->tp_half = in.tp_half;
  if (pit_runlog_finished(&s->log) || (s->steps_total >= 0 && s->steps_done >= s->steps_total)) {
    /* every step done: what is left is the nodes' stop, which the records will show */
    s->finish_s = s->finish_lo = s->finish_hi = s->t;
    s->cost = s->cost_lo = s->cost_hi = s->spend;
    return;
  }
  if (s->steps_total < 0) {
    snprintf(s->note, sizeof s->note, "the job's length is unknown (no planned_iters in its init records)");
    return;
  }
  in.unit = PIT_JOB_ITERS;
  in.size = (double)s->steps_total;
  in.done_iters = s->steps_done < s->steps_total ? s->steps_done : s->steps_total;
  in.elapsed_s = s->t;
  in.resume = g && (g->niters == 0 || g->status[0]); /* between generations: start and init again */
  if (pit_predict(&in, &p, &e) < 0) {
    snprintf(s->note, sizeof s->note, "%s", e.msg);
    return;
  }
  double rem[3] = {p.remaining_s, p.remaining_lo, p.remaining_hi}, *fin[3] = {&s->finish_s, &s->finish_lo,
                                                                              &s->finish_hi},
         *cost[3] = {&s->cost, &s->cost_lo, &s->cost_hi};
  for (int k = 0; k < 3; k++) {
    *fin[k] = s->t + rem[k];
    *cost[k] = s->spend; /* the nodes up now, on until the end: their bill then less their bill now */
    for (int u = 0; u < s->log.nup; u++) {
      const struct pit_runlog_node *n = &s->log.nodes[s->log.up[u]];
      double age = s->t - n->t_start;
      *cost[k] += pit_node_cost(type_of(cat, n), n->price_h, age + rem[k]) - pit_node_cost(type_of(cat, n), n->price_h, age);
    }
  }
}

/* The status of arg into s (zeroed), the fold's records into rs too; on an error s is released. */
static int status_fill(struct pit_status *s, const char *arg, const struct pit_catalog *cat,
                       const struct pit_catalog *fallback, struct pit_runset *rs, struct pit_err *e) {
  pit_runlog_init(&s->log);
  s->tp = s->tp_half = s->finish_s = s->finish_lo = s->finish_hi = s->cost = s->cost_lo = s->cost_hi = NAN;
  int rc = pit_status_find(arg, s->dir, sizeof s->dir, s->events, sizeof s->events, e);
  if (rc == 0)
    rc = pit_runlog_load_each(&s->log, s->events, series_add, rs, e);
  if (rc == 0 && s->log.nrecords == 0)
    rc = pit_err_set(e, PIT_ENOTFOUND, "'%s' holds no record yet", s->events);
  if (rc == 0 && s->log.nnodes &&
      (!(s->node_billed_s = calloc((size_t)s->log.nnodes, sizeof(double))) ||
       !(s->node_cost = calloc((size_t)s->log.nnodes, sizeof(double)))))
    rc = pit_err_set(e, PIT_ENOMEM, "out of memory");
  if (rc < 0) {
    pit_status_release(s);
    return rc;
  }
  /* the prices: the catalog given, else the run's own (every node's record carries its row), else the fallback */
  if (!cat && pit_catalog_from_runlog(&s->own, &s->log, NULL) == 0)
    cat = &s->own;
  else if (!cat)
    cat = fallback;
  s->priced_from = cat == &s->own ? "records" : cat ? "catalog" : NULL;
  s->t = s->log.t_last;
  const struct pit_runlog_gen *g = pit_runlog_current(&s->log);
  if (g && g->have_m)
    s->membership = g->m;
  for (int k = 0; !(g && g->have_m) && k < s->log.nup; k++) /* a generation starting: the nodes up now */
    if ((rc = pit_membership_add_on(&s->membership, s->log.nodes[s->log.up[k]].base, s->log.nodes[s->log.up[k]].market, 1,
                                    -1, e)) < 0) {
      pit_status_release(s);
      return rc;
    }
  s->steps_done = pit_runlog_step(&s->log) + 1;
  s->steps_total = s->log.planned_iters;
  struct pit_runlog_cost bill; /* the one accounting: open nodes billed to now */
  if ((rc = pit_runlog_cost(&s->log, cat, s->t, &bill, e)) < 0) {
    pit_status_release(s);
    return rc;
  }
  for (int i = 0; i < s->log.nnodes; i++) {
    s->unpriced += !type_of(cat, &s->log.nodes[i]);
    s->node_billed_s[i] = bill.nodes[i].billed_s;
    s->node_cost[i] = bill.nodes[i].cost;
  }
  s->spend = bill.total;
  pit_runlog_cost_release(&bill);
  s->controller_pid = live_controller(s->dir);
  s->state = s->controller_pid ? "running" : pit_runlog_finished(&s->log) ? "finished" : "stopped";
  predict(s, cat, rs);
  return 0;
}

int pit_status_load(struct pit_status *s, const char *arg, const struct pit_catalog *cat,
                    const struct pit_catalog *fallback, struct pit_err *e) {
  memset(s, 0, sizeof *s);
  struct pit_runset rs;
  pit_runset_init(&rs);
  int rc = status_fill(s, arg, cat, fallback, &rs, e);
  pit_runset_release(&rs);
  return rc;
}

void pit_status_release(struct pit_status *s) {
  pit_runlog_release(&s->log);
  pit_catalog_release(&s->own);
  PIT_FREE_ALL(s->node_billed_s, s->node_cost);
  memset(s, 0, sizeof *s);
}

/* ---- the field tables ---- */

enum ftype { F_STR, F_CSTR, F_I64, F_INT, F_INT0, F_DBL, F_MEM, F_BOOL, F_MARKET };
struct field {
  const char *key;   /* JSON key */
  const char *label; /* table heading */
  enum ftype type;   /* F_STR: char[]; F_CSTR: const char *; F_INT0: int, 0 → null; F_MEM: membership;
                        F_MARKET: enum pit_market (its name) */
  size_t off;
};

#define ST(m) offsetof(struct pit_status, m)
static const struct field top[] = {
    {"run", "run", F_STR, ST(log.run)},
    {"dir", "directory", F_STR, ST(dir)},
    {"events", "events", F_STR, ST(events)},
    {"state", "state", F_CSTR, ST(state)},
    {"membership", "membership", F_MEM, ST(membership)},
    {"controller_pid", "controller pid", F_INT0, ST(controller_pid)},
    {"t", "run time [s]", F_DBL, ST(t)},
    {"steps_done", "steps done", F_I64, ST(steps_done)},
    {"steps_total", "steps in the job", F_I64, ST(steps_total)},
    {"tp", "t_p [s]", F_DBL, ST(tp)},
    {"tp_half", "t_p 95% half-width [s]", F_DBL, ST(tp_half)},
    {"spend", "spend so far [$, billed]", F_DBL, ST(spend)},
    {"finish_s", "finish at [s, run time]", F_DBL, ST(finish_s)},
    {"finish_lo", "finish, 95% low", F_DBL, ST(finish_lo)},
    {"finish_hi", "finish, 95% high", F_DBL, ST(finish_hi)},
    {"cost", "cost of the run [$]", F_DBL, ST(cost)},
    {"cost_lo", "cost, 95% low", F_DBL, ST(cost_lo)},
    {"cost_hi", "cost, 95% high", F_DBL, ST(cost_hi)},
    {"unpriced_nodes", "nodes not in the catalog", F_INT, ST(unpriced)},
    {"priced_from", "prices from", F_CSTR, ST(priced_from)},
    {"note", "prediction", F_STR, ST(note)},
};
#define G(m) offsetof(struct pit_runlog_gen, m)
static const struct field gen_fields[] = {
    {"gen", "gen", F_INT, G(gen)},
    {"membership", "membership", F_MEM, G(m)},
    {"ranks", "ranks", F_INT, G(ranks)},
    {"step_first", "first", F_I64, G(step_first)},
    {"step_last", "last", F_I64, G(step_last)},
    {"t_first", "from [s]", F_DBL, G(t_first)},
    {"t_first_iter", "1st iter [s]", F_DBL, G(t_first_iter)},
    {"t_end", "end [s]", F_DBL, G(t_end)},
    {"status", "end", F_STR, G(status)},
};
#define N(m) offsetof(struct pit_runlog_node, m)
static const struct field node_fields[] = {
    {"node", "node", F_STR, N(id)},          {"itype", "type", F_STR, N(base)},
    {"market", "market", F_MARKET, N(market)},  {"price_h", "$/h", F_DBL, N(price_h)},
    {"gen", "gen", F_INT, N(gen)},           {"t_start", "start [s]", F_DBL, N(t_start)},
    {"t_ready", "ready [s]", F_DBL, N(t_ready)}, {"t_stop", "stop [s]", F_DBL, N(t_stop)},
    {"lost", "lost", F_BOOL, N(lost)},
};
#define D(m) offsetof(struct pit_runlog_decision, m)
static const struct field dec_fields[] = {
    {"t", "t [s]", F_DBL, D(t)},          {"gen", "gen", F_INT, D(gen)},
    {"step", "step", F_I64, D(d.step)},   {"what", "what", F_STR, D(d.kind)},
    {"policy", "policy", F_STR, D(d.policy)}, {"action", "action", F_STR, D(d.action)},
    {"from", "from", F_MEM, D(d.from)},   {"to", "to", F_MEM, D(d.to)},
};

/* The value of field x of struct p as text ("" absent) into buf; JSON: as JSON. */
static const char *value(const struct field *x, const void *p, int json, char *buf, size_t n) {
  const char *at = (const char *)p + x->off;
  switch (x->type) {
  case F_STR:
  case F_CSTR:
  case F_MARKET: {
    const char *s = x->type == F_STR ? at
                    : x->type == F_MARKET ? pit_market_name(*(const enum pit_market *)at)
                                          : *(const char *const *)at;
    if (!json)
      return s && s[0] ? s : "-";
    char *q = s && s[0] ? pit_json_quote(s) : NULL;
    snprintf(buf, n, "%s", q ? q : "null");
    free(q);
    return buf;
  }
  case F_I64: {
    int64_t v = *(const int64_t *)at;
    snprintf(buf, n, v < 0 ? (json ? "null" : "-") : "%lld", (long long)v);
    return buf;
  }
  case F_INT:
  case F_INT0:
  case F_BOOL: {
    int v = *(const int *)at;
    if (x->type == F_BOOL)
      snprintf(buf, n, json ? (v ? "true" : "false") : (v ? "yes" : "-"));
    else if (v < 0 || (x->type == F_INT0 && v == 0))
      snprintf(buf, n, json ? "null" : "-");
    else
      snprintf(buf, n, "%d", v);
    return buf;
  }
  case F_DBL: {
    double v = *(const double *)at;
    if (isnan(v) || isinf(v))
      snprintf(buf, n, json ? "null" : "-");
    else
      snprintf(buf, n, json ? "%.17g" : "%.6g", v);
    return buf;
  }
  case F_MEM: {
    char m[PIT_MEMBERSHIP_TEXT_MAX];
    pit_membership_format((const struct pit_membership *)at, m, sizeof m);
    snprintf(buf, n, json ? "\"%s\"" : "%s", m[0] ? m : (json ? "" : "-")); /* canonical text: no escapes */
    if (json && !m[0])
      snprintf(buf, n, "null");
    return buf;
  }
  }
  return "";
}

static void json_obj(FILE *f, const struct field *t, int nt, const void *p, const char *extra) {
  char buf[1200];
  fputc('{', f);
  for (int i = 0; i < nt; i++)
    fprintf(f, "%s\"%s\":%s", i ? "," : "", t[i].key, value(&t[i], p, 1, buf, sizeof buf));
  fprintf(f, "%s}", extra ? extra : "");
}

static void table_row(FILE *f, const struct field *t, int nt, const void *p, const int *w) {
  char buf[1200];
  fputs("  ", f);
  for (int i = 0; i < nt; i++)
    fprintf(f, "%-*s ", w[i], value(&t[i], p, 0, buf, sizeof buf));
}
static void table_head(FILE *f, const struct field *t, int nt, const int *w) {
  fputs("  ", f);
  for (int i = 0; i < nt; i++)
    fprintf(f, "%-*s ", w[i], t[i].label);
}

#define NF(t) ((int)(sizeof(t) / sizeof((t)[0])))
/* the tables' column widths, one per field of gen_fields, node_fields, dec_fields */
static const int gw[] = {3, 30, 5, 6, 6, 9, 12, 8, 8}, nw[] = {16, 12, 9, 6, 3, 9, 9, 8, 4},
                 dw[] = {8, 3, 6, 10, 8, 8, 0, 0};

int pit_status_write(FILE *f, const struct pit_status *s, enum pit_summary_format fmt, int ndec, struct pit_err *e) {
  if (fmt == PIT_SUMMARY_CSV)
    return pit_err_set(e, PIT_EARG, "status: formats are table and json");
  const struct pit_runlog *l = &s->log;
  int d0 = ndec < 0 || ndec > l->ndec ? 0 : l->ndec - ndec;
  char buf[1200], extra[256];
  if (fmt == PIT_SUMMARY_JSON) {
    fputc('{', f);
    for (int i = 0; i < NF(top); i++)
      fprintf(f, "%s\"%s\":%s", i ? "," : "", top[i].key, value(&top[i], s, 1, buf, sizeof buf));
    const struct pit_runlog_gen *g = pit_runlog_current(l);
    fprintf(f, ",\"generation\":%d", g ? g->gen : -1);
    fputs(",\"generations\":[", f);
    for (int i = 0; i < l->ngens; i++) {
      fputs(i ? "," : "", f);
      json_obj(f, gen_fields, NF(gen_fields), &l->gens[i], NULL);
    }
    fputs("],\"nodes\":[", f);
    for (int i = 0; i < l->nnodes; i++) {
      fputs(i ? "," : "", f);
      snprintf(extra, sizeof extra, ",\"billed_s\":%.17g,\"cost\":%.17g", s->node_billed_s[i], s->node_cost[i]);
      json_obj(f, node_fields, NF(node_fields), &l->nodes[i], extra);
    }
    fputs("],\"decisions\":[", f);
    for (int i = d0; i < l->ndec; i++) {
      fputs(i > d0 ? "," : "", f);
      char *why = pit_json_quote(l->dec[i].d.reason ? l->dec[i].d.reason : "");
      fputc('{', f);
      for (int k = 0; k < NF(dec_fields); k++)
        fprintf(f, "\"%s\":%s,", dec_fields[k].key, value(&dec_fields[k], &l->dec[i], 1, buf, sizeof buf));
      fprintf(f, "\"why\":%s}", why ? why : "null");
      free(why);
    }
    fputs("]}\n", f);
    return ferror(f) ? pit_err_set(e, PIT_EIO, "status: write failed") : 0;
  }
  /* table: the run in a few lines, then generations, nodes and the last decisions */
  const struct pit_runlog_gen *g = pit_runlog_current(l);
  char m[PIT_MEMBERSHIP_TEXT_MAX] = "-", a[32], b[32], c[32];
  if (s->membership.n)
    pit_membership_format(&s->membership, m, sizeof m);
  fprintf(f, "run %s (%s): %s", l->run, s->events, s->state);
  if (s->controller_pid)
    fprintf(f, " (controller pid %d)", s->controller_pid);
  fprintf(f, "\n  generation %d on %s, run time %.1fs\n", g ? g->gen : -1, m, s->t);
  fprintf(f, "  steps      %lld", (long long)s->steps_done);
  if (s->steps_total > 0)
    fprintf(f, " of %lld (%.0f%%)", (long long)s->steps_total, 100.0 * (double)s->steps_done / (double)s->steps_total);
  fprintf(f, "\n  t_p        %s ± %s (95%%)\n", pit__secs(a, sizeof a, s->tp), pit__secs(b, sizeof b, s->tp_half));
  fprintf(f, "  spend      $%.6f (billed%s%s)\n", s->spend,
          s->priced_from && !strcmp(s->priced_from, "records") ? " as the run's node records' catalog rows bill" : "",
          s->unpriced ? "; some types not in the catalog: raw seconds" : "");
  if (isnan(s->finish_s)) {
    fprintf(f, "  predicted  - (%s)\n", s->note);
  } else {
    fprintf(f, "  finish at  %s [%s, %s] run time\n", pit__secs(a, sizeof a, s->finish_s),
            pit__secs(b, sizeof b, s->finish_lo), pit__secs(c, sizeof c, s->finish_hi));
    fprintf(f, "  cost       $%.6f [%.6f, %.6f]\n", s->cost, s->cost_lo, s->cost_hi);
  }
  fputs("\ngenerations:\n", f);
  table_head(f, gen_fields, NF(gen_fields), gw);
  fputc('\n', f);
  for (int i = 0; i < l->ngens; i++) {
    table_row(f, gen_fields, NF(gen_fields), &l->gens[i], gw);
    fputc('\n', f);
  }
  fputs("\nnodes (billed as the catalog bills each type):\n", f);
  int nwl[NF(nw)]; /* the node column as wide as its longest id (a run's own ids are long) */
  memcpy(nwl, nw, sizeof nwl);
  for (int i = 0; i < l->nnodes; i++)
    if ((int)strlen(l->nodes[i].id) > nwl[0])
      nwl[0] = (int)strlen(l->nodes[i].id);
  table_head(f, node_fields, NF(node_fields), nwl);
  fprintf(f, "%9s %10s\n", "billed", "cost $");
  for (int i = 0; i < l->nnodes; i++) {
    table_row(f, node_fields, NF(node_fields), &l->nodes[i], nwl);
    fprintf(f, "%8.0fs %10.6f\n", s->node_billed_s[i], s->node_cost[i]);
  }
  fprintf(f, "\ndecisions (%s%d of %d):\n", ndec >= 0 && ndec < l->ndec ? "the last " : "", l->ndec - d0, l->ndec);
  for (int i = d0; i < l->ndec; i++) {
    table_row(f, dec_fields, 6, &l->dec[i], dw); /* t gen step what policy action; then from → to: why */
    const struct pit_runlog_decision *x = &l->dec[i];
    if (x->d.from.n || x->d.to.n) {
      char fr[PIT_MEMBERSHIP_TEXT_MAX], to[PIT_MEMBERSHIP_TEXT_MAX];
      pit_membership_format(&x->d.from, fr, sizeof fr);
      pit_membership_format(&x->d.to, to, sizeof to);
      fprintf(f, "%s → %s", fr[0] ? fr : "?", to[0] ? to : "?");
    }
    fprintf(f, ": %s\n", x->d.reason ? x->d.reason : "(no reason recorded)");
  }
  return ferror(f) ? pit_err_set(e, PIT_EIO, "status: write failed") : 0;
}
