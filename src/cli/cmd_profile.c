/* cmd_profile.c — `pitstop profile`: measure candidate memberships (each a
 * short `pitstop run` with a fixed membership and `pitstop train
 * --until-steady P`), store them, and rank them for a job like SkyPilot's
 * optimizer, but with measured figures; `--from-db` ranks what a store holds.
 * Invariant: options + library calls (pit_run, pit_profile_rank) + drawing. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "pitstop/control.h"

static const struct pit_cli_opt popts[] = {
    {"from-db", 1, 0, "DB", "rank the runs DB holds (no new measurement)"},
    {"db", 1, 0, "DB", "store the candidates' runs here (required to measure)"},
    {"catalog", 1, 0, "FILE", "instance types and prices (default: local.tsv, installed or of the source tree: docs/catalog.md)"},
    {"candidates", 1, 0, "M1,M2", "memberships to measure (default: every --types type × 1..--max-nodes nodes)"},
    {"types", 1, 0, "T1,T2", "types of the default candidates (default: every type of the catalog)"},
    {"max-nodes", 1, 0, "N", "largest node count of the default candidates (default 2)"},
    {"until-steady", 1, 0, "P", "each candidate runs until t_p is known to P (default 0.02)"},
    {"cap", 1, 0, "N", "and at most N iterations (default 1000)"},
    {"epochs", 1, 0, "N", "the job to rank for: N epochs"},
    {"iters", 1, 0, "N", "the job to rank for: N iterations"},
    {"objective", 1, 0, "cost|time", "what the chosen row minimises (default cost)"},
    {"deadline", 1, 0, "S", "the job must take at most S seconds"},
    {"budget", 1, 0, "USD", "the job may cost at most USD"},
    {"model", 1, 0, "M", "the candidates train model M; ranked: only runs of it"},
    {"batch-size", 1, 0, "B", "the candidates' global batch; ranked: only runs of it"},
    {"help", 0, 0, NULL, "this text"},
};
#define NPOPT ((int)(sizeof popts / sizeof popts[0]))

static void usage(FILE *f) {
  fprintf(f, "usage: pitstop profile [options] [train options]\n"
             "       pitstop profile --from-db DB [--catalog F] [--epochs N | --iters N] [--objective cost|time]\n\n"
             "Measures each candidate membership until its PIT time is steady, then ranks them for the job:\n"
             "t_p, samples/s, samples per dollar, the job's predicted time and cost (95%%), '*' on the chosen\n"
             "row. Candidates that measured ones show to be dominated are skipped and listed (docs/decide.md).\n\n");
  pit_cli_opts_print(f, popts, NPOPT, 26);
}

static void fmt_iv(char *b, size_t n, double v, double lo, double hi, const char *unit, int dollars) {
  if (!isfinite(v))
    snprintf(b, n, "-");
  else if (dollars)
    snprintf(b, n, "$%.4g [%.4g, %.4g]", v, lo, hi);
  else
    snprintf(b, n, "%.4g%s [%.4g, %.4g]", v, unit, lo, hi);
}

static void table(const struct pit_profile_row *r, int n, const struct pit_profile_query *q) {
  printf("  %-26s %-20s %10s %12s %6s %-28s %-28s\n", "membership", "t_p ± 95%", "samples/s", "samples/$", "batch",
         q->size > 0 ? "job time [95%]" : "job time", q->size > 0 ? "job cost [95%]" : "job cost");
  for (int i = 0; i < n; i++) {
    char m[PIT_MEMBERSHIP_TEXT_MAX], tp[48], js[64], jc[64], spd[24];
    pit_membership_format(&r[i].m, m, sizeof m);
    snprintf(tp, sizeof tp, "%.4g ± %.2g s", r[i].tp, r[i].tp_half);
    fmt_iv(js, sizeof js, r[i].job_s, r[i].job_lo, r[i].job_hi, " s", 0);
    fmt_iv(jc, sizeof jc, r[i].cost, r[i].cost_lo, r[i].cost_hi, "", 1);
    if (isfinite(r[i].spd))
      snprintf(spd, sizeof spd, "%.4g", r[i].spd);
    else
      snprintf(spd, sizeof spd, "no price");
    printf("%c %-26s %-20s %10.4g %12s %6lld %-28s %-28s%s\n", r[i].chosen ? '*' : ' ', m, tp, r[i].sps, spd,
           (long long)r[i].batch, js, jc, r[i].fits ? "" : "  (does not fit)");
  }
}

/* Says which runs a per-sample ranking cannot use because their batch is
 * unknown (a log that does not record it, parsed without --batch-size), and,
 * for a job in epochs, which runs time only the start of their epoch: a
 * recorded epoch more than twice its iterations per epoch × t_p (andrefz's
 * times.yaml: 11 iterations of a ~1575-iteration epoch) would be predicted as
 * those few iterations. */
static void say_unusable(const struct pit_runset *rs, const struct pit_profile_query *q) {
  for (int i = 0; i < rs->n; i++) {
    const struct pit_report_run *rr = &rs->runs[i];
    if (rr->cfg.members.n == 0 || !(rr->sum.tp.mean > 0) || (q->model && strcmp(q->model, rr->cfg.model) != 0))
      continue;
    if (rr->cfg.batch <= 0)
      pit_cli_warn("profile: batch size unknown for run '%s': give --batch-size N (per rank) to pitstop parse; "
                   "not ranked", rr->name);
    else if (q->size > 0 && q->unit == PIT_JOB_EPOCHS && rr->sum.epoch.n > 0 &&
             rr->sum.epoch.mean > 2 * rr->sum.iters_per_epoch * rr->sum.tp.mean)
      pit_cli_warn("profile: run '%s' times %.0f iterations of a %.0f s epoch (%.0f × t_p): its iterations per "
                   "epoch are not recorded, so its job figures are of %.0f iterations an epoch; give the job "
                   "in --iters",
                   rr->name, rr->sum.iters_per_epoch, rr->sum.epoch.mean,
                   rr->sum.epoch.mean / rr->sum.tp.mean, rr->sum.iters_per_epoch);
  }
}

/* The store's rows for q, ranked (pit_profile_rank); *rows malloc'd. say: name
 * the runs left out for an unknown batch. */
static int load_rows(const char *db, const struct pit_catalog *cat, const struct pit_profile_query *q, int say,
                     struct pit_profile_row **rows, int *n, int *best, struct pit_err *e) {
  struct pit_runset rs;
  pit_runset_init(&rs);
  int rc = pit_runset_load_store(&rs, db, NULL, 0, e);
  if (rc == 0)
    rc = pit_runset_summarize(&rs, e);
  if (rc == 0 && say)
    say_unusable(&rs, q);
  if (rc == 0)
    rc = pit_profile_rank(&rs, cat, q, rows, n, best, e);
  pit_runset_release(&rs);
  return rc;
}

/* Ranks the runs of db; prints the table; 1 when nothing fits. */
static int rank_db(const char *db, const struct pit_catalog *cat, const struct pit_profile_query *q) {
  struct pit_err e = {0};
  struct pit_profile_row *rows = NULL;
  int n = 0, best = -1;
  if (load_rows(db, cat, q, 1, &rows, &n, &best, &e) < 0)
    return pit_cli_fail(&e);
  if (n == 0) {
    free(rows);
    return pit_cli_error("profile: '%s' holds no run with a membership, a batch and a steady t_p%s%s", db,
                         q->model ? " of model " : "", q->model ? q->model : "");
  }
  table(rows, n, q);
  if (best < 0) {
    double tmin = INFINITY, cmin = INFINITY;
    for (int i = 0; i < n; i++) {
      tmin = fmin(tmin, rows[i].job_s);
      cmin = fmin(cmin, rows[i].cost);
    }
    char asked[128] = "";
    if (!isnan(q->deadline_s))
      snprintf(asked, sizeof asked, "a deadline of %.0f s", q->deadline_s);
    if (!isnan(q->budget))
      snprintf(asked + strlen(asked), sizeof asked - strlen(asked), "%sa budget of $%.4g", asked[0] ? " and " : "",
               q->budget);
    free(rows);
    return pit_cli_error("profile: nothing fits %s: the fastest measured takes %.0f s, the cheapest costs $%.4g",
                         asked[0] ? asked : "(no price for any membership)", tmin, cmin);
  }
  free(rows);
  return 0;
}


/* Σ nodes × the catalog's speed of m, and Σ nodes × price (NaN: a type not in cat). */
static double speed_of(const struct pit_catalog *cat, const struct pit_membership *m, double *price_h) {
  double sp = 0;
  *price_h = 0;
  for (int i = 0; i < m->n; i++) {
    const struct pit_itype *it = pit_catalog_find(cat, m->m[i].itype);
    if (!it) {
      *price_h = NAN;
      return NAN;
    }
    sp += m->m[i].nodes * pit_policy_itype_speed(it);
    *price_h += m->m[i].nodes * it->price_h;
  }
  return sp;
}

/* The catalog's figure of merit of m for the objective: speed per price (cost) or speed (time). */
static double merit(const struct pit_catalog *cat, const struct pit_membership *m, int cost) {
  double price, sp = speed_of(cat, m, &price);
  return cost ? sp / price : sp;
}

/* Cost, no deadline: is candidate c dominated by what the store measured?
 * Its samples per dollar, scaled from a measured membership of no more nodes
 * by the catalog's speeds (at best linear in speed), even at twice that (the
 * policy's ±50% on a catalog-speed t_p), below the best measured: 1, with
 * the row it loses to and its optimistic figure. */
static int dominated(const char *db, const struct pit_catalog *cat, const struct pit_profile_query *q,
                     const struct pit_membership *c, char *by, size_t nby, double *spd_hi, double *spd_best) {
  struct pit_profile_row *rows = NULL;
  int n = 0, best = -1, dom = 0;
  struct pit_err e = {0};
  double price_c, sp_c = speed_of(cat, c, &price_c);
  if (!(sp_c > 0) || !(price_c > 0) || load_rows(db, cat, q, 0, &rows, &n, &best, &e) < 0 || n == 0) {
    free(rows);
    return 0;
  }
  int top = 0;
  for (int i = 1; i < n; i++)
    if (rows[i].spd > rows[top].spd)
      top = i;
  double hi = -INFINITY;
  for (int i = 0; i < n; i++) {
    double price_r, sp_r = speed_of(cat, &rows[i].m, &price_r);
    if (sp_r > 0 && rows[i].sps > 0 && pit_membership_nodes(&rows[i].m) <= pit_membership_nodes(c))
      hi = fmax(hi, 2 * rows[i].sps * sp_c / sp_r * 3600 / price_c);
  }
  if (isfinite(hi) && hi < rows[top].spd) {
    dom = 1;
    pit_membership_format(&rows[top].m, by, nby);
    *spd_hi = hi;
    *spd_best = rows[top].spd;
  }
  free(rows);
  return dom;
}

int pit_cmd_profile(int argc, char **argv) {
  const char *from_db = NULL, *db = NULL, *catalog = NULL, *candidates = NULL, *types = NULL, *objective = "cost";
  double precision = 0.02, deadline = NAN, budget = NAN, size = 0;
  int64_t cap = 1000, max_nodes = 2, batch = 0;
  const char *model = NULL;
  enum pit_job_unit unit = PIT_JOB_ITERS;
  char **train = calloc(2 * (size_t)argc + 5, sizeof *train); /* --model=M: 2 entries */
  if (!train)
    return pit_cli_usage("out of memory");
  int ntrain = 0, rc = 0;
  for (int i = 1; i < argc && rc == 0; i++) {
    const char *a = argv[i];
    if (strncmp(a, "--", 2) != 0) {
      rc = pit_cli_usage("profile: unexpected argument '%s'", a);
      break;
    }
    const char *eq = strchr(a + 2, '=');
    size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
    const struct pit_cli_opt *po = pit_cli_opt_find(popts, NPOPT, a + 2, len);
    if (!po) { /* a train option, passed on */
      train[ntrain++] = argv[i];
      if (!eq && i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0)
        train[ntrain++] = argv[++i];
      continue;
    }
    if (!strcmp(po->name, "help")) {
      usage(stdout);
      free(train);
      return 0;
    }
    const char *val = eq ? eq + 1 : i + 1 < argc ? argv[++i] : NULL;
    if (!val) {
      rc = pit_cli_usage("profile: --%s needs a value", po->name);
      break;
    }
    const char *n = po->name;
    double d = 0;
    int64_t v = 0;
    if (!strcmp(n, "from-db"))
      from_db = val;
    else if (!strcmp(n, "db"))
      db = val;
    else if (!strcmp(n, "catalog"))
      catalog = val;
    else if (!strcmp(n, "candidates"))
      candidates = val;
    else if (!strcmp(n, "types"))
      types = val;
    else if (!strcmp(n, "model")) {
      model = val; /* the candidates train it too */
      train[ntrain++] = "--model";
      train[ntrain++] = (char *)val;
    } else if (!strcmp(n, "objective")) {
      objective = val;
      if (strcmp(val, "cost") && strcmp(val, "time"))
        rc = pit_cli_usage("profile: --objective '%s': cost or time", val);
    } else if (!strcmp(n, "until-steady") || !strcmp(n, "deadline") || !strcmp(n, "budget")) {
      if (pit_parse_f64(val, &d) < 0 || !(d > 0))
        rc = pit_cli_usage("profile: --%s '%s' is not a positive number", n, val);
      *(n[0] == 'u' ? &precision : n[0] == 'd' ? &deadline : &budget) = d;
    } else {
      if (pit_parse_i64(val, &v) < 0 || v <= 0)
        rc = pit_cli_usage("profile: --%s '%s' is not a positive count", n, val);
      if (!strcmp(n, "cap"))
        cap = v;
      else if (!strcmp(n, "max-nodes"))
        max_nodes = v;
      else if (!strcmp(n, "batch-size")) {
        batch = v; /* the candidates train with it too */
        train[ntrain++] = "--batch-size";
        train[ntrain++] = (char *)val;
      } else {
        unit = n[0] == 'e' ? PIT_JOB_EPOCHS : PIT_JOB_ITERS;
        size = (double)v;
      }
    }
  }
  if (rc) {
    free(train);
    return rc;
  }
  struct pit_err e = {0};
  const char *self = pit_cli_self_exe();
  if (!self) {
    free(train);
    return pit_cli_usage("profile: cannot find this program's own path");
  }
  if (!catalog && !(catalog = pit_cli_catalog("local.tsv", &e))) {
    free(train);
    return pit_cli_fail(&e);
  }
  struct pit_catalog cat;
  if (pit_catalog_load(&cat, catalog, &e) < 0) {
    free(train);
    return pit_cli_fail(&e);
  }
  if (cat.n == 0) {
    pit_catalog_release(&cat);
    free(train);
    return pit_cli_error("profile: the catalog '%s' has no instance type", catalog);
  }
  struct pit_profile_query q = {model, batch, unit, size,
                                strcmp(objective, "time") ? PIT_POLICY_COST : PIT_POLICY_TIME, deadline, budget};
  if (from_db) {
    rc = rank_db(from_db, &cat, &q);
    pit_catalog_release(&cat);
    free(train);
    return rc;
  }
  if (!db) {
    pit_catalog_release(&cat);
    free(train);
    return pit_cli_usage("profile: give --db DB to store the candidates' runs (or --from-db DB to rank stored ones)");
  }
  /* the candidates */
  struct pit_membership cand[64];
  int ncand = 0;
  if (candidates) {
    char buf[2048];
    snprintf(buf, sizeof buf, "%s", candidates);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t && rc == 0 && ncand < 64; t = strtok_r(NULL, ",", &save))
      if (pit_run_membership_parse(&cand[ncand++], t, "local-1", &e) < 0)
        rc = pit_cli_fail(&e);
  } else {
    for (int64_t nn = 1; nn <= max_nodes; nn++)
      for (int t = 0; t < cat.n && ncand < 64; t++) {
        char want[256];
        snprintf(want, sizeof want, ",%s,", types ? types : "");
        char name[PIT_NAME_MAX + 2];
        snprintf(name, sizeof name, ",%s,", cat.types[t].name);
        if (types && !strstr(want, name))
          continue;
        pit_membership_clear(&cand[ncand]);
        if (pit_membership_add(&cand[ncand], cat.types[t].name, (int)nn, -1, &e) == 0)
          ncand++;
      }
  }
  if (rc == 0 && ncand == 0)
    rc = pit_cli_error("profile: no candidate (the catalog '%s' has none of --types %s)", catalog, types);
  char steady[32], capv[32];
  snprintf(steady, sizeof steady, "%g", precision);
  snprintf(capv, sizeof capv, "%lld", (long long)cap);
  train[ntrain++] = "--until-steady";
  train[ntrain++] = steady;
  train[ntrain++] = "--max-iters";
  train[ntrain++] = capv;
  train[ntrain] = NULL;
  /* the most promising by the catalog first (stable), so that what it measures can show the rest dominated */
  int cost_obj = q.objective == PIT_POLICY_COST;
  for (int i = 1; i < ncand; i++)
    for (int j = i; j > 0 && merit(&cat, &cand[j], cost_obj) > merit(&cat, &cand[j - 1], cost_obj); j--) {
      struct pit_membership t = cand[j];
      cand[j] = cand[j - 1];
      cand[j - 1] = t;
    }
  double prof_s = 0, prof_usd = 0;
  int measured = 0, failed = 0;
  struct pit_membership done[64];
  for (int c = 0; c < ncand && rc == 0; c++) {
    char mt[PIT_MEMBERSHIP_TEXT_MAX];
    pit_membership_format(&cand[c], mt, sizeof mt);
    /* dominated: more nodes of one type cannot raise samples per dollar above fewer nodes of it
     * (scaling is at best linear), so with cost as the objective and no deadline they are skipped */
    if (q.objective == PIT_POLICY_COST && isnan(deadline) && cand[c].n == 1 && cand[c].m[0].nodes > 1) {
      int dom = -1;
      for (int j = 0; j < measured && dom < 0; j++)
        if (done[j].n == 1 && !strcmp(done[j].m[0].itype, cand[c].m[0].itype) &&
            done[j].m[0].nodes < cand[c].m[0].nodes)
          dom = j;
      if (dom >= 0) {
        char dt[PIT_MEMBERSHIP_TEXT_MAX];
        pit_membership_format(&done[dom], dt, sizeof dt);
        printf("skipped %s: dominated by %s (more nodes of one type cannot raise samples per dollar)\n", mt, dt);
        continue;
      }
    }
    char by[PIT_MEMBERSHIP_TEXT_MAX];
    double hi = NAN, top = NAN;
    if (cost_obj && isnan(deadline) && measured > 0 && dominated(db, &cat, &q, &cand[c], by, sizeof by, &hi, &top)) {
      printf("skipped %s: dominated by %s (by the catalog's speeds at most %.4g samples per dollar even at twice "
             "the predicted speed, against %.4g measured)\n",
             mt, by, hi, top);
      continue;
    }
    struct pit_run_opts o;
    pit_run_opts_init(&o);
    char run[PIT_NAME_MAX], dir[4200];
    snprintf(run, sizeof run, "profile-%d-%d", (int)getpid(), c);
    snprintf(dir, sizeof dir, "runs/%s", run);
    o.run = run;
    o.run_dir = dir;
    o.catalog = catalog;
    o.deftype = cand[c].m[0].itype;
    o.initial = cand[c];
    o.db = db;
    o.self_exe = self;
    o.train_argv = train;
    o.max_restarts = 0;
    pit_policy_parse(&o.policy, "fixed", &e);
    struct pit_run_result *res = calloc(1, sizeof *res);
    if (!res) {
      rc = pit_cli_usage("out of memory");
      break;
    }
    struct pit_err e2 = {0};
    if (pit_run(&o, res, &e2) < 0) {
      pit_cli_warn("profile: candidate %s failed: %s (left out)", mt, e2.msg);
      failed++;
    } else {
      printf("measured %s: %lld iterations, %.1f s, $%.5f (run %s)\n", mt, (long long)res->steps, res->total_s,
             res->cost, run);
      done[measured++] = cand[c];
    }
    prof_s += res->total_s;
    prof_usd += res->cost;
    free(res);
    fflush(stdout);
  }
  if (rc == 0 && measured == 0)
    rc = pit_cli_error("profile: no candidate could be measured (%d failed)", failed);
  if (rc == 0) {
    printf("\nprofiling took %.1f s and cost $%.5f (%d measured, %d failed)\n\n", prof_s, prof_usd, measured, failed);
    rc = rank_db(db, &cat, &q);
  }
  pit_catalog_release(&cat);
  free(train);
  return rc;
}
