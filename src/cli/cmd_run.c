/* cmd_run.c — `pitstop run`: the elastic controller (library: pit_run in
 * include/pitstop/control.h) with a live status line and a report at the
 * end; and `pitstop node-exec`, the local provider's node wrapper.
 * Invariant: options + library calls + drawing; the controller does the work. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "pitstop/control.h"
#include "pitstop/report.h"

struct run_opt {
  const char *name;
  int has_arg;
  const char *arg, *help;
};
/* pitstop run's own options; every other option goes to pitstop train. */
static const struct run_opt run_opts[] = {
    {"provider", 1, "NAME", "where nodes come from: local (default)"},
    {"catalog", 1, "FILE", "instance types and prices (default: catalogs/local.tsv of the source tree)"},
    {"nodes", 1, "TYPE:N[+TYPE:N]", "initial membership (default 1 node of --itype)"},
    {"itype", 1, "TYPE", "the type of counts given alone (default local-1)"},
    {"nnodes", 1, "MIN:MAX", "bounds on the node count (default 1:any)"},
    {"ranks-per-node", 1, "R", "ranks on each node (default 1)"},
    {"policy", 1, "fixed|schedule", "who decides the membership (default: schedule if --schedule, else fixed)"},
    {"schedule", 1, "STEP:M,...", "membership M from STEP on: 40:2,80:1 or 40:local-1:1+local-0.4:1"},
    {"launcher", 1, "mpi|per-node", "one mpirun over every node, or the command once per node"},
    {"max-restarts", 1, "N", "failed generations restarted from the last checkpoint (default 3)"},
    {"checkpoint-dir", 1, "DIR", "run directory: checkpoints, state, logs (default runs/RUN)"},
    {"run", 1, "ID", "run id (default run-DATE-PID)"},
    {"db", 1, "PATH", "store every record here (the controller is its only writer)"},
    {"events", 1, "FILE", "JSON Lines of every record (default DIR/events.jsonl)"},
    {"start-timeout", 1, "S", "a generation without an iteration this long has failed (default 120)"},
    {"cleanup", 1, "RUN", "stop every node and process run RUN left, then exit"},
    {"quiet", 0, NULL, "no status line"},
    {"help", 0, NULL, "this text"},
};
#define NRUN ((int)(sizeof run_opts / sizeof run_opts[0]))

static void usage(FILE *f) {
  fprintf(f, "usage: pitstop run [options] [train options] [-- COMMAND ARGS...]\n\n"
             "Runs a training job on nodes that come and go: generation after generation on the\n"
             "membership the policy chooses, checkpointing at each change, nothing lost. Without a\n"
             "COMMAND the workload is `pitstop train` with the train options given (see pitstop\n"
             "train --help); a COMMAND follows docs/protocol.md.\n\n");
  for (int i = 0; i < NRUN; i++) {
    char left[64];
    snprintf(left, sizeof left, "--%s%s%s", run_opts[i].name, run_opts[i].arg ? " " : "",
             run_opts[i].arg ? run_opts[i].arg : "");
    fprintf(f, "  %-30s %s\n", left, run_opts[i].help);
  }
}

static const struct run_opt *find_opt(const char *name, size_t len) {
  for (int i = 0; i < NRUN; i++)
    if (strlen(run_opts[i].name) == len && strncmp(run_opts[i].name, name, len) == 0)
      return &run_opts[i];
  return NULL;
}

struct ui {
  int quiet;
  int tty;
  int drew;
};

static void on_warn(void *ctx, const struct pit_err *w) {
  struct ui *u = ctx;
  if (u->drew) {
    fputs("\r\033[K", stderr);
    u->drew = 0;
  }
  pit_cli_note("%s", w->msg);
}

static void fmt_secs(char *b, size_t n, double s) {
  if (!isfinite(s))
    snprintf(b, n, "?");
  else if (s < 1e-3)
    snprintf(b, n, "%.0f µs", s * 1e6);
  else if (s < 1)
    snprintf(b, n, "%.2f ms", s * 1e3);
  else if (s < 120)
    snprintf(b, n, "%.1f s", s);
  else
    snprintf(b, n, "%.0f min", s / 60);
}

static void on_status(void *ctx, const struct pit_run_status *st) {
  struct ui *u = ctx;
  if (u->quiet)
    return;
  char tp[32], eta[32], steps[64];
  fmt_secs(tp, sizeof tp, st->tp_s);
  fmt_secs(eta, sizeof eta, st->eta_s);
  if (st->total_steps > 0)
    snprintf(steps, sizeof steps, "%lld/%lld", (long long)st->step, (long long)st->total_steps);
  else
    snprintf(steps, sizeof steps, "%lld", (long long)st->step);
  char line[512];
  snprintf(line, sizeof line, "gen %d %-9s %s  step %s  t_p %s  %.0f samples/s  $%.4f spent  %s left", st->gen,
           st->phase, st->membership, steps, tp, isfinite(st->samples_per_s) ? st->samples_per_s : 0.0,
           st->spent, eta);
  if (u->tty) {
    fprintf(stderr, "\r\033[K%s", line);
    u->drew = 1;
  } else if (strcmp(st->phase, "running") != 0) {
    fprintf(stderr, "%s\n", line);
  }
  fflush(stderr);
}

static void report(const struct pit_run_result *r) {
  printf("\n%-4s %-28s %14s %9s %9s %9s %9s\n", "gen", "membership", "steps", "time", "cost $", "end",
         "switch");
  for (int i = 0; i < r->ngens; i++) {
    const struct pit_run_gen *g = &r->gens[i];
    char sw[64] = "";
    if (strcmp(g->end, "resized") == 0 && i + 1 < r->ngens) {
      const struct pit_run_gen *h = &r->gens[i + 1];
      double total = h->t_first_iter - (g->t1 - (isfinite(g->exit_s) ? g->exit_s : 0));
      snprintf(sw, sizeof sw, "%.2f s", total);
    }
    char steps[48];
    snprintf(steps, sizeof steps, "%lld-%lld", (long long)g->step0, (long long)g->step1);
    printf("%-4d %-28s %14s %8.1fs %9.4f %9s %9s\n", g->gen, g->membership, steps, g->t1 - g->t0, g->cost, g->end,
           sw);
  }
  printf("\nresizes: switch = decision to the first iteration of the next generation:\n");
  for (int i = 0; i + 1 < r->ngens; i++) {
    const struct pit_run_gen *g = &r->gens[i], *h = &r->gens[i + 1];
    if (strcmp(g->end, "resized") != 0)
      continue;
    double decided = g->t1 - (isfinite(g->exit_s) ? g->exit_s : 0);
    printf("  gen %d → %d: checkpoint %.3f s, workload exit %.3f s, nodes %.3f s, launch+init %.3f s, total "
           "%.3f s\n",
           g->gen, h->gen, isfinite(g->ckpt_s) ? g->ckpt_s : 0, isfinite(g->exit_s) ? g->exit_s : 0,
           isfinite(g->nodes_s) ? g->nodes_s : 0, h->t_first_iter - h->t0, h->t_first_iter - decided);
  }
  printf("\n%lld steps in %.1f s, %d restart%s (%lld steps redone), cost $%.4f\nrecords: %s\n",
         (long long)r->steps, r->total_s, r->restarts, r->restarts == 1 ? "" : "s", (long long)r->lost_steps,
         r->cost, r->events);
}

static char self_path[4096];

static volatile sig_atomic_t got_signal;
static void on_signal(int sig) { got_signal = sig; }

int pit_cmd_run(int argc, char **argv) {
  struct pit_run_opts o;
  pit_run_opts_init(&o);
  struct ui u = {0, isatty(2), 0};
  const char *nodes = NULL, *nnodes = NULL, *policy = NULL, *schedule = NULL, *cleanup = NULL;
  const char *launcher = NULL, *run = NULL, *dir = NULL;
  char **train = calloc((size_t)argc + 1, sizeof *train);
  if (!train)
    return pit_cli_usage("out of memory");
  int ntrain = 0;
  int64_t max_iters = -1;
  struct pit_err e = {0};
  int i = 1;
  for (; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--") == 0) {
      i++;
      break;
    }
    if (strncmp(a, "--", 2) != 0) {
      free(train);
      return pit_cli_usage("run: unexpected argument '%s' (a command goes after --)", a);
    }
    const char *eq = strchr(a + 2, '=');
    size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
    const struct run_opt *ro = find_opt(a + 2, len);
    if (!ro) { /* a train option: passed on with its value */
      train[ntrain++] = argv[i];
      if (strcmp(a, "--max-iters") == 0 && i + 1 < argc)
        pit_parse_i64(argv[i + 1], &max_iters);
      if (!eq && i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0)
        train[ntrain++] = argv[++i];
      continue;
    }
    const char *val = NULL;
    if (ro->has_arg) {
      if (eq)
        val = eq + 1;
      else if (i + 1 < argc)
        val = argv[++i];
      else {
        free(train);
        return pit_cli_usage("run: --%s needs a value", ro->name);
      }
    }
    const char *n = ro->name;
    int64_t v;
    if (!strcmp(n, "help")) {
      usage(stdout);
      free(train);
      return 0;
    } else if (!strcmp(n, "provider"))
      o.provider = val;
    else if (!strcmp(n, "catalog"))
      o.catalog = val;
    else if (!strcmp(n, "nodes"))
      nodes = val;
    else if (!strcmp(n, "itype"))
      o.deftype = val;
    else if (!strcmp(n, "nnodes"))
      nnodes = val;
    else if (!strcmp(n, "policy"))
      policy = val;
    else if (!strcmp(n, "schedule"))
      schedule = val;
    else if (!strcmp(n, "launcher"))
      launcher = val;
    else if (!strcmp(n, "checkpoint-dir"))
      dir = val;
    else if (!strcmp(n, "run"))
      run = val;
    else if (!strcmp(n, "db"))
      o.db = val;
    else if (!strcmp(n, "events"))
      o.events = val;
    else if (!strcmp(n, "cleanup"))
      cleanup = val;
    else if (!strcmp(n, "quiet"))
      u.quiet = 1;
    else if (!strcmp(n, "ranks-per-node") || !strcmp(n, "max-restarts")) {
      if (pit_parse_i64(val, &v) < 0 || v < (n[0] == 'r' ? 1 : 0) || v > 1000) {
        free(train);
        return pit_cli_usage("run: --%s '%s' is not a valid count", n, val);
      }
      if (n[0] == 'r')
        o.ranks_per_node = (int)v;
      else
        o.max_restarts = (int)v;
    } else if (!strcmp(n, "start-timeout")) {
      if (pit_parse_f64(val, &o.start_timeout_s) < 0 || !(o.start_timeout_s > 0)) {
        free(train);
        return pit_cli_usage("run: --start-timeout '%s' is not a positive number of seconds", val);
      }
    }
  }
  train[ntrain] = NULL;
  if (i < argc)
    o.cmd = argv + i;
  else if (ntrain)
    o.train_argv = train;
  else
    o.train_argv = train;
  if (o.cmd && ntrain) {
    int rc = pit_cli_usage("run: '%s' is not a run option (train options go with the default workload only)",
                           train[0]);
    free(train);
    return rc;
  }
  if (!pit_provider_find(o.provider)) {
    pit_err_set(&e, PIT_EARG, "unknown provider '%s'", o.provider);
    pit_err_hint(&e, "providers: %s", pit_provider_names());
    free(train);
    return pit_cli_fail(&e);
  }
  ssize_t k = readlink("/proc/self/exe", self_path, sizeof self_path - 1);
  if (k <= 0) {
    free(train);
    return pit_cli_usage("run: cannot find this program's own path");
  }
  self_path[k] = 0;
  o.self_exe = self_path;
  static char catalog_default[4200];
  if (!o.catalog) {
    /* the source tree's catalogs/local.tsv (build/pitstop → ../catalogs) */
    char base[4096];
    snprintf(base, sizeof base, "%s", self_path);
    char *slash = strrchr(base, '/');
    if (slash)
      *slash = 0;
    const char *cand[] = {"../catalogs/local.tsv", "../../catalogs/local.tsv", "../share/pitstop/local.tsv"};
    for (size_t c = 0; c < 3 && !o.catalog; c++) {
      snprintf(catalog_default, sizeof catalog_default, "%s/%s", base, cand[c]);
      if (access(catalog_default, R_OK) == 0)
        o.catalog = catalog_default;
    }
    if (!o.catalog && !cleanup) {
      free(train);
      return pit_cli_usage("run: no catalog found beside the program; give --catalog FILE");
    }
  }
  static char runbuf[PIT_NAME_MAX];
  if (cleanup)
    run = cleanup;
  if (!run) {
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    snprintf(runbuf, sizeof runbuf, "run-%04d%02d%02d-%02d%02d%02d-%d", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)getpid());
    run = runbuf;
  }
  o.run = run;
  static char dirbuf[4096];
  if (!dir) {
    snprintf(dirbuf, sizeof dirbuf, "runs/%s", run);
    dir = dirbuf;
  }
  o.run_dir = dir;
  o.warn = on_warn;
  o.status = on_status;
  o.ctx = &u;
  if (cleanup) {
    int stopped = 0;
    int rc = pit_run_cleanup(&o, &stopped, &e);
    free(train);
    if (rc < 0)
      return pit_cli_fail(&e);
    printf("run %s: %d node%s stopped\n", run, stopped, stopped == 1 ? "" : "s");
    return 0;
  }
  int rc = 0;
  if (launcher) {
    if (!strcmp(launcher, "mpi"))
      o.launcher = PIT_LAUNCH_MPI;
    else if (!strcmp(launcher, "per-node"))
      o.launcher = PIT_LAUNCH_PER_NODE;
    else
      rc = pit_err_set(&e, PIT_EARG, "unknown launcher '%s' (mpi, per-node)", launcher);
  } else {
    o.launcher = o.cmd ? PIT_LAUNCH_PER_NODE : PIT_LAUNCH_MPI;
  }
  if (rc == 0)
    rc = pit_run_membership_parse(&o.initial, nodes ? nodes : "1", o.deftype, &e);
  if (rc == 0 && nnodes) {
    int a = 0, b = 0;
    char tail;
    if (sscanf(nnodes, "%d:%d%c", &a, &b, &tail) != 2 || a < 1 || b < 1)
      rc = pit_err_set(&e, PIT_EARG, "--nnodes '%s' is not MIN:MAX", nnodes);
    else if (a > b)
      rc = pit_err_set(&e, PIT_EARG, "--nnodes %s: MIN %d is above MAX %d", nnodes, a, b);
    o.nmin = a;
    o.nmax = b;
  }
  if (rc == 0)
    rc = pit_policy_parse(&o.policy, policy ? policy : schedule ? "schedule" : "fixed", &e);
  if (rc == 0 && schedule)
    rc = pit_schedule_parse(&o.policy, schedule, o.deftype, &e);
  if (rc == 0 && o.policy.kind == PIT_POLICY_SCHEDULE && !schedule)
    rc = pit_err_set(&e, PIT_EARG, "--policy schedule needs --schedule STEP:MEMBERSHIP,...");
  if (rc == 0 && max_iters > 0)
    o.total_steps = max_iters;
  if (rc < 0) {
    free(train);
    return pit_cli_fail(&e);
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);
  struct pit_run_result *res = calloc(1, sizeof *res);
  if (!res) {
    free(train);
    return pit_cli_usage("out of memory");
  }
  rc = pit_run(&o, res, &e);
  if (u.drew)
    fputs("\n", stderr);
  if (rc < 0) {
    pit_cli_fail(&e);
    free(res);
    free(train);
    return 1;
  }
  report(res);
  /* the timeline chart beside the run's records */
  char chart[4200];
  snprintf(chart, sizeof chart, "%s/timeline.png", dir);
  struct pit_plot_opts po;
  pit_plot_opts_init(&po);
  po.out = chart;
  struct pit_err pe = {0};
  if (pit_plot_timeline(res->events, &po, &pe) < 0)
    pit_cli_warn("no timeline chart: %s", pe.msg);
  else
    printf("timeline: %s\n", chart);
  free(res);
  free(train);
  return 0;
}

int pit_cmd_node_exec(int argc, char **argv) {
  const char *cpus = NULL, *cgroup = NULL;
  int i = 1;
  for (; i < argc; i++) {
    if (!strcmp(argv[i], "--")) {
      i++;
      break;
    }
    if (!strcmp(argv[i], "--cpus") && i + 1 < argc)
      cpus = argv[++i];
    else if (!strcmp(argv[i], "--cgroup") && i + 1 < argc)
      cgroup = argv[++i];
    else
      return pit_cli_usage("node-exec: unknown option '%s' (usage: node-exec [--cpus L] [--cgroup DIR] -- CMD...)",
                           argv[i]);
  }
  if (i >= argc)
    return pit_cli_usage("node-exec: no command after --");
  struct pit_err e = {0};
  if (pit_node_enter(cpus, cgroup, &e) < 0)
    return pit_cli_fail(&e);
  execvp(argv[i], argv + i);
  fprintf(stderr, "pitstop: node-exec: cannot run '%s': %s\n", argv[i], strerror(errno));
  return 127;
}
