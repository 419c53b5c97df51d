/* cmd_profile.c — `pitstop profile`: measure candidate memberships (each a
 * short `pitstop run` with a fixed membership and `pitstop train
 * --until-steady P`), store them, and rank them for a job like SkyPilot's
 * optimizer, but with measured figures; `--from-db` ranks what a store holds.
 * Invariant: options + library calls (pit_run, pit_profile_rank, and the
 * candidates, their order and the skip rules of src/control/profile_plan.c) + drawing. */
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
    {"launcher", 1, 0, "mpi|per-node",
     "-- COMMAND: each candidate starts it once per node (per-node, default, as pitstop run -- CMD) or under one "
     "mpirun over every node (mpi)"},
    {"vary", 1, 0, "OPT,...",
     "-- COMMAND: its options that do not change a step's cost; stored runs that differ only in them (and in its "
     "length, output and seed: --epochs, --niter, --max-steps, --outf, --seed, ...) are its runs"},
    {"help", 0, 0, NULL, "this text"},
};
#define NPOPT ((int)(sizeof popts / sizeof popts[0]))

static void usage(FILE *f) {
  fprintf(f, "usage: pitstop profile [options] [train options]\n"
             "       pitstop profile --from-db DB [--catalog F] [--epochs N | --iters N] [--objective cost|time]\n"
             "       pitstop profile --from-db DB [options] -- COMMAND [ARGS...]   (a command's runs, per step)\n\n"
             "Measures each candidate membership until its PIT time is steady, then ranks them for the job:\n"
             "t_p, samples/s, samples per dollar, the job's predicted time and cost (95%%), '*' on the chosen\n"
             "row. Candidates that measured ones show to be dominated are skipped and listed (docs/decide.md).\n\n");
  pit_cli_opts_print(f, popts, NPOPT, 26);
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
    char cmd[4096] = "";
    pit_config_field(&rr->cfg, rr->config, "command", cmd, sizeof cmd);
    if (rr->cfg.batch <= 0 && cmd[0] && strcmp(cmd, "-") != 0 && !q->command) /* ("-": no command field) */
      pit_cli_warn("profile: run '%s' is of a command (%s): its batch is unknown; rank its runs with --from-db DB "
                   "-- COMMAND (per step)", rr->name, cmd);
    else if (rr->cfg.batch <= 0 && !q->command) /* a command's runs are matched by argv, ranked per step */
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
    if (q->command)
      return pit_cli_error("profile: '%s' holds no run of this command with a steady t_p (runs are matched by the "
                           "command's argv but for its length, output and seed options: %s)\n  hint: pitstop run "
                           "--db %s --nodes M -- COMMAND stores one; --vary OPT names an option that does not "
                           "change a step's cost",
                           db, q->command, db);
    return pit_cli_error("profile: '%s' holds no run with a membership, a batch and a steady t_p%s%s", db,
                         q->model ? " of model " : "", q->model ? q->model : "");
  }
  pit_profile_write(stdout, rows, n, q);
  if (best < 0) {
    char why[300];
    pit_profile_why_none(rows, n, q, why, sizeof why);
    free(rows);
    return pit_cli_error("profile: %s", why);
  }
  free(rows);
  return 0;
}


/* Cost, no deadline: is candidate c dominated by what the store measured?
 * (pit_profile_dominated over the store's ranked rows) */
static int dominated(const char *db, const struct pit_catalog *cat, const struct pit_profile_query *q,
                     const struct pit_membership *c, char *by, size_t nby, double *spd_hi, double *spd_best) {
  struct pit_profile_row *rows = NULL;
  int n = 0, best = -1, dom = 0;
  struct pit_err e = {0};
  if (load_rows(db, cat, q, 0, &rows, &n, &best, &e) == 0)
    dom = pit_profile_dominated(rows, n, cat, c, by, nby, spd_hi, spd_best);
  free(rows);
  return dom;
}

/* pitstop profile's options, as given and parsed; train: the options passed on to the candidates' train */
struct prof_args {
  const char *from_db, *db, *catalog, *candidates, *types, *objective, *model, *vary, *launcher;
  double precision, deadline, budget, size;
  int64_t cap, max_nodes, batch;
  enum pit_job_unit unit;
  char **train;
  int ntrain;
  char **cmd; /* after "--": a command's own runs (argv[ncmd] is NULL) */
  int ncmd;
};

/* One of pitstop profile's own options, --n val, into a. */
static int set_opt(struct prof_args *a, const char *n, const char *val) {
  double d = 0;
  int64_t v = 0;
  const char **strs[] = {&a->from_db, &a->db, &a->catalog, &a->candidates, &a->types, &a->vary, &a->launcher};
  static const char *const snames[] = {"from-db", "db", "catalog", "candidates", "types", "vary", "launcher"};
  for (size_t k = 0; k < sizeof snames / sizeof snames[0]; k++)
    if (!strcmp(n, snames[k])) {
      *strs[k] = val;
      if (strs[k] == &a->launcher && strcmp(val, "mpi") != 0 && strcmp(val, "per-node") != 0)
        return pit_cli_usage("profile: --launcher '%s': mpi or per-node", val);
      return 0;
    }
  if (!strcmp(n, "model")) {
    a->model = val; /* the candidates train it too */
    a->train[a->ntrain++] = "--model";
    a->train[a->ntrain++] = (char *)val;
  } else if (!strcmp(n, "objective")) {
    a->objective = val;
    if (strcmp(val, "cost") && strcmp(val, "time"))
      return pit_cli_usage("profile: --objective '%s': cost or time", val);
  } else if (!strcmp(n, "until-steady") || !strcmp(n, "deadline") || !strcmp(n, "budget")) {
    int rc = 0;
    if (pit_parse_f64(val, &d) < 0 || !(d > 0))
      rc = pit_cli_usage("profile: --%s '%s' is not a positive number", n, val);
    *(n[0] == 'u' ? &a->precision : n[0] == 'd' ? &a->deadline : &a->budget) = d;
    return rc;
  } else {
    if (pit_parse_i64(val, &v) < 0 || v <= 0)
      return pit_cli_usage("profile: --%s '%s' is not a positive count", n, val);
    if (!strcmp(n, "cap"))
      a->cap = v;
    else if (!strcmp(n, "max-nodes"))
      a->max_nodes = v;
    else if (!strcmp(n, "batch-size")) {
      a->batch = v; /* the candidates train with it too */
      a->train[a->ntrain++] = "--batch-size";
      a->train[a->ntrain++] = (char *)val;
    } else {
      a->unit = n[0] == 'e' ? PIT_JOB_EPOCHS : PIT_JOB_ITERS;
      a->size = (double)v;
    }
  }
  return 0;
}

/* argv into a: pitstop profile's own options, every other passed on to train; -1: --help printed. */
static int parse_args(int argc, char **argv, struct prof_args *a) {
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    if (!strcmp(arg, "--")) { /* a user's own command: its runs in the store, matched by argv */
      if (i + 1 >= argc)
        return pit_cli_usage("profile: '--' and no command after it");
      a->cmd = &argv[i + 1];
      a->ncmd = argc - i - 1;
      return 0;
    }
    if (strncmp(arg, "--", 2) != 0)
      return pit_cli_usage("profile: unexpected argument '%s'", arg);
    const char *eq = strchr(arg + 2, '=');
    size_t len = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
    const struct pit_cli_opt *po = pit_cli_opt_find(popts, NPOPT, arg + 2, len);
    if (!po) { /* a train option, passed on */
      a->train[a->ntrain++] = argv[i];
      if (!eq && i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0)
        a->train[a->ntrain++] = argv[++i];
      continue;
    }
    if (!strcmp(po->name, "help")) {
      usage(stdout);
      return -1;
    }
    const char *val = eq ? eq + 1 : i + 1 < argc ? argv[++i] : NULL;
    if (!val)
      return pit_cli_usage("profile: --%s needs a value", po->name);
    int rc = set_opt(a, po->name, val);
    if (rc)
      return rc;
  }
  return 0;
}

/* Candidate c skipped for a measured one (done[0..measured-1], or the store's rows)
 * that shows it dominated: says so, 1; else 0. */
static int skipped(const struct prof_args *a, const struct pit_catalog *cat, const struct pit_profile_query *q,
                   const struct pit_membership *done, int measured, const struct pit_membership *c, const char *mt) {
  int dom = q->objective == PIT_POLICY_COST && isnan(a->deadline) ? pit_profile_fewer_nodes(done, measured, c) : -1;
  if (dom >= 0) {
    char dt[PIT_MEMBERSHIP_TEXT_MAX];
    pit_membership_format(&done[dom], dt, sizeof dt);
    printf("skipped %s: dominated by %s (more nodes of one type cannot raise samples per dollar)\n", mt, dt);
    return 1;
  }
  char by[PIT_MEMBERSHIP_TEXT_MAX];
  double hi = NAN, top = NAN;
  if (q->objective == PIT_POLICY_COST && isnan(a->deadline) && measured > 0 &&
      dominated(a->db, cat, q, c, by, sizeof by, &hi, &top)) {
    printf("skipped %s: dominated by %s (by the catalog's speeds at most %.4g samples per dollar even at twice "
           "the predicted speed, against %.4g measured)\n",
           mt, by, hi, top);
    return 1;
  }
  return 0;
}

/* A command candidate's run: why it stopped (ctl_measure.c: "measured (WHY): ...") kept for the
 * candidate's line; every other warning (a command run once per node, a node lost) said as the run
 * says it, naming the candidate. */
struct cand_ctx {
  const char *name;
  char why[256];
};
static void on_measured(void *ctx, const struct pit_err *w) {
  struct cand_ctx *x = ctx;
  const char *p = strncmp(w->msg, "measured (", 10) == 0 ? w->msg + 10 : NULL;
  const char *q = p ? strstr(p, "): ") : NULL;
  if (q)
    snprintf(x->why, sizeof x->why, "%.*s", (int)(q - p), p);
  else if (strncmp(w->msg, "measured: ", 10) != 0) /* (not the stop's own steps: stop.c) */
    pit_cli_note("profile: candidate %s: %s", x->name, w->msg);
}

/* Candidate c (number k) measured: a short fixed run of it stored in a->db; *res its result (to free). */
static int measure(const struct prof_args *a, const char *catalog, const char *self, const struct pit_membership *c,
                   int k, const char *mt, struct pit_run_result **res) {
  struct pit_run_opts o;
  pit_run_opts_init(&o);
  char run[PIT_NAME_MAX], dir[4200];
  snprintf(run, sizeof run, "profile-%d-%d", (int)getpid(), k);
  snprintf(dir, sizeof dir, "runs/%s", run);
  o.run = run;
  o.run_dir = dir;
  o.catalog = catalog;
  o.deftype = c->m[0].itype;
  o.initial = *c;
  o.db = a->db;
  o.self_exe = self;
  struct cand_ctx cx = {mt, ""};
  const char *why = cx.why;
  if (a->cmd) { /* a user's own command: the controller stops it once measured (ctl_measure.c) */
    o.cmd = a->cmd;
    /* as pitstop run -- CMD starts it: once per node, unless --launcher mpi */
    o.launcher = a->launcher && !strcmp(a->launcher, "mpi") ? PIT_LAUNCH_MPI : PIT_LAUNCH_PER_NODE;
    o.until_steady = a->precision;
    o.until_iters = a->cap;
    o.warn = on_measured;
    o.ctx = &cx;
  } else {
    o.train_argv = a->train;
  }
  o.max_restarts = 0;
  struct pit_err e = {0};
  pit_policy_parse(&o.policy, "fixed", &e);
  if (!(*res = calloc(1, sizeof **res)))
    return pit_cli_usage("out of memory");
  struct pit_err e2 = {0};
  if (pit_run(&o, *res, &e2) < 0) {
    pit_cli_warn("profile: candidate %s failed: %s (left out)", mt, e2.msg);
    return -1;
  }
  char ended[96] = "";
  if (a->cmd && !(*res)->measured)
    snprintf(ended, sizeof ended, "; the command ended before its pace was steady to %g%%", 100 * a->precision);
  printf("measured %s: %lld iterations, %.1f s, $%.5f (run %s)%s%s%s\n", mt, (long long)(*res)->steps,
         (*res)->total_s, (*res)->cost, run, why[0] ? "; stopped: " : "", why, ended);
  return 0;
}

/* Every candidate in turn, measured unless skipped; then the ranking of db. */
static int profile(const struct prof_args *a, const struct pit_catalog *cat, const char *catalog, const char *self,
                   const struct pit_profile_query *q, struct pit_membership *cand, int ncand) {
  double prof_s = 0, prof_usd = 0;
  int measured = 0, failed = 0, rc = 0, most = 0;
  struct pit_membership done[64];
  pit_profile_order(cat, cand, ncand, q->objective);
  for (int c = 0; c < ncand && a->cmd; c++)
    if (pit_membership_nodes(&cand[c]) > most)
      most = pit_membership_nodes(&cand[c]);
  if (a->cmd && !(a->launcher && !strcmp(a->launcher, "mpi")))
    pit_cli_warn_copies(a->cmd, most, "--candidates TYPE:1,TYPE2:1");
  for (int c = 0; c < ncand && rc == 0; c++) {
    char mt[PIT_MEMBERSHIP_TEXT_MAX];
    pit_membership_format(&cand[c], mt, sizeof mt);
    if (skipped(a, cat, q, done, measured, &cand[c], mt))
      continue;
    struct pit_run_result *res = NULL;
    int m = measure(a, catalog, self, &cand[c], c, mt, &res);
    if (!res) {
      rc = m;
      break;
    }
    if (m < 0)
      failed++;
    else
      done[measured++] = cand[c];
    prof_s += res->total_s;
    prof_usd += res->cost;
    free(res);
    fflush(stdout);
  }
  if (rc == 0 && measured == 0)
    rc = pit_cli_error("profile: no candidate could be measured (%d failed)", failed);
  if (rc == 0) {
    printf("\nprofiling took %.1f s and cost $%.5f (%d measured, %d failed)\n\n", prof_s, prof_usd, measured, failed);
    rc = rank_db(a->db, cat, q);
  }
  return rc;
}

/* The catalog (given, or the installed local one) loaded into cat; its path into *catalog. */
static int load_catalog(const char **catalog, struct pit_catalog *cat) {
  struct pit_err e = {0};
  if (!*catalog && !(*catalog = pit_cli_catalog("local.tsv", &e)))
    return pit_cli_fail(&e);
  if (pit_catalog_load(cat, *catalog, &e) < 0)
    return pit_cli_fail(&e);
  if (cat->n == 0) {
    pit_catalog_release(cat);
    return pit_cli_error("profile: the catalog '%s' has no instance type", *catalog);
  }
  return 0;
}

int pit_cmd_profile(int argc, char **argv) {
  struct prof_args a = {.objective = "cost", .precision = 0.02, .deadline = NAN, .budget = NAN, .cap = 1000,
                        .max_nodes = 2, .unit = PIT_JOB_ITERS};
  a.train = calloc(2 * (size_t)argc + 5, sizeof *a.train); /* --model=M: 2 entries */
  if (!a.train)
    return pit_cli_usage("out of memory");
  int rc = parse_args(argc, argv, &a);
  const char *self = rc ? NULL : pit_cli_self_exe();
  if (!rc && !self)
    rc = pit_cli_usage("profile: cannot find this program's own path");
  const char *catalog = a.catalog;
  struct pit_catalog cat;
  if (rc || (rc = load_catalog(&catalog, &cat))) {
    free(a.train);
    return rc < 0 ? 0 : rc;
  }
  struct pit_profile_query q = {a.model, a.batch, a.unit, a.size,
                                strcmp(a.objective, "time") ? PIT_POLICY_COST : PIT_POLICY_TIME, a.deadline, a.budget, NULL,
                                NULL};
  char vbuf[512];
  const char *vary[17];
  if (!rc && a.vary && !a.cmd)
    rc = pit_cli_usage("profile: --vary names options of a command: give it after --");
  if (!rc && a.launcher && (!a.cmd || a.from_db))
    rc = pit_cli_usage("profile: --launcher starts a command's candidates: give -- COMMAND (and --db, not --from-db)");
  if (!rc && pit_cli_vary(a.vary, vbuf, sizeof vbuf, vary, 17) < 0)
    rc = 2;
  q.vary = vary;
  struct pit_membership cand[64];
  int ncand = 0;
  struct pit_err e = {0};
  char key[4096] = "";
  q.command = a.cmd ? key : NULL; /* filled just below */
  if (rc)
    ; /* --vary said why */
  else if (a.cmd && pit_command_key(a.cmd, key, sizeof key) < 0)
    rc = pit_cli_usage("profile: the command is too long to be matched in a store (%zu bytes of argv at most)",
                       sizeof key);
  else if (a.cmd && a.ntrain > 0)
    rc = pit_cli_usage("profile: '%s' does not apply to a command (its own options go after --)", a.train[0]);
  else if (a.from_db)
    rc = rank_db(a.from_db, &cat, &q);
  else if (!a.db)
    rc = pit_cli_usage("profile: give --db DB to store the candidates' runs (or --from-db DB to rank stored ones)");
  else if (pit_profile_candidates(&cat, a.candidates, a.types, a.max_nodes, cand, 64, &ncand, &e) < 0)
    rc = pit_cli_fail(&e);
  else if (ncand == 0)
    rc = pit_cli_error("profile: no candidate (the catalog '%s' has none of --types %s)", catalog, a.types);
  if (!rc && !a.from_db) {
    char steady[32], capv[32];
    snprintf(steady, sizeof steady, "%g", a.precision);
    snprintf(capv, sizeof capv, "%lld", (long long)a.cap);
    a.train[a.ntrain++] = "--until-steady";
    a.train[a.ntrain++] = steady;
    a.train[a.ntrain++] = "--max-iters";
    a.train[a.ntrain++] = capv;
    a.train[a.ntrain] = NULL;
    rc = profile(&a, &cat, catalog, self, &q, cand, ncand);
  }
  pit_catalog_release(&cat);
  free(a.train);
  return rc;
}
