/* cmd_run.c — `pitstop run`: the elastic controller (library: pit_run in
 * include/pitstop/control.h) with a live status line and a report at the
 * end (`pitstop node-exec` and `node-check`, run on the nodes: cmd_node.c).
 * Invariant: options + library calls + drawing; the controller does the work. */
#define _GNU_SOURCE
#include <stddef.h>
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
#include "pitstop/train.h"
#include "pitstop/trainopts.h"

/* The values of pitstop run's own options, as given (parsed after the loop). */
struct run_args {
  const char *provider, *provider_config, *hostfile, *ssh_opts, *partition, *catalog, *nodes, *itype, *nnodes;
  const char *ranks;
  const char *policy, *schedule, *launcher, *restarts, *dir, *run, *db, *events, *start_timeout, *cleanup,
      *lost_wait;
  const char *deadline, *budget, *types;
  const char *mirror, *on_lost; /* checkpoints that cannot all be lost */
  const char *grace, *iters, *samples, *restart, *snapshot, *vary;
  const char *quiet, *help; /* flags: non-NULL when given */
};
/* pitstop run's own options; every other option goes to pitstop train. val:
 * the offset of the option's slot in struct run_args. */
#define A(m) ((int)offsetof(struct run_args, m))
static const struct pit_cli_opt run_opts[] = {
    {"provider", 1, A(provider), "NAME", "where nodes come from: local (default), ssh, slurm, command"},
    {"provider-config", 1, A(provider_config), "FILE",
     "command: its config, JSON templates or a preset (docs/providers.md)"},
    {"hostfile", 1, A(hostfile), "FILE", "ssh: the pool of hosts, lines \"HOST slots=N [itype=TYPE]\""},
    {"ssh-opts", 1, A(ssh_opts), "OPTS",
     "ssh: options of every ssh call, e.g. \"-i KEY -p 2222\" (default $PITSTOP_SSH_OPTS)"},
    {"partition", 1, A(partition), "P",
     "slurm: partition of every allocation (default: the type's name if a partition)"},
    {"catalog", 1, A(catalog), "FILE", "instance types and prices (default: local.tsv, installed\n"
                                       "or of the source tree: docs/catalog.md)"},
    {"nodes", 1, A(nodes), "TYPE:N[+TYPE:N]",
     "initial membership (default 1 node of --itype); TYPE@spot / TYPE@on-demand: the node's market"},
    {"itype", 1, A(itype), "TYPE", "the type of counts given alone (default local-1)"},
    {"nnodes", 1, A(nnodes), "MIN:MAX", "bounds on the node count (default 1:any)"},
    {"ranks-per-node", 1, A(ranks), "R", "ranks on each node (default 1)"},
    {"policy", 1, A(policy), "fixed|schedule|cost|time", 
     "who decides the membership (default: schedule if --schedule, else fixed); cost: the cheapest that meets "
     "--deadline and --budget, time: the fastest within --budget (docs/decide.md)"},
    {"deadline", 1, A(deadline), "S",
     "cost/time: the job must end within S seconds of its start (cost, spot prices, provider command: "
     "the spot policy chooses each generation's market, docs/run.md)"},
    {"budget", 1, A(budget), "USD", "cost/time: what the whole job may cost"},
    {"types", 1, A(types), "T1,T2",
     "cost/time: instance types the policy may use (default: the initial membership's)"},
    {"schedule", 1, A(schedule), "STEP:M,...", "membership M from STEP on: 40:2,80:1 or 40:local-1:1+local-0.4:1"},
    {"launcher", 1, A(launcher), "mpi|per-node", "one mpirun over every node, or the command once per node"},
    {"max-restarts", 1, A(restarts), "N", "failed generations restarted from the last checkpoint (default 3)"},
    {"checkpoint-dir", 1, A(dir), "DIR", "run directory: checkpoints, state, logs (default runs/RUN)"},
    {"checkpoint-mirror", 1, A(mirror), "DIR",
     "every checkpoint also copied here (atomically), used when the run directory's are damaged or gone"},
    {"on-lost-checkpoints", 1, A(on_lost), "restart|fail",
     "every checkpoint damaged: start the job again from step 0 (default), or end with an error"},
    {"run", 1, A(run), "ID", "run id (default run-DATE-PID)"},
    {"db", 1, A(db), "PATH", "store every record here (the controller is its only writer)"},
    {"events", 1, A(events), "FILE", "JSON Lines of every record (default DIR/events.jsonl)"},
    {"start-timeout", 1, A(start_timeout), "S",
     "a generation without an iteration this long has failed (default 120)"},
    {"lost-wait", 1, A(lost_wait), "S",
     "a node set aside that its stop could not reach (an ssh host gone silent) is waited for this long to "
     "answer again when no other node can start (default 120)"},
    {"iters", 1, A(iters), "N",
     "-- COMMAND: the job is N iterations (also --epochs E, or --samples S; steps per epoch and samples per step "
     "come from its progress lines)"},
    {"samples", 1, A(samples), "S", "-- COMMAND: the job is S samples"},
    {"resume-by-restart", 0, A(restart), NULL,
     "-- COMMAND resumes from its own snapshot when started again: a resize restarts it right after a save "
     "(docs/own-script.md)"},
    {"snapshot", 1, A(snapshot), "PATH",
     "with --resume-by-restart: the snapshot file, watched (default: its \"snapshot saved at PATH\" lines)"},
    {"vary", 1, A(vary), "OPT,...",
     "-- COMMAND with --db: options of the command that do not change a step's cost; its stored runs that differ "
     "only in them (and in its length, output and seed: --epochs, --niter, --max-steps, --outf, --seed, ...) are "
     "its profile"},
    {"grace", 1, A(grace), "S",
     "after Ctrl-C or SIGTERM: the workload is killed S seconds after it was asked to stop (default 30; a "
     "second Ctrl-C kills at once)"},
    {"cleanup", 1, A(cleanup), "RUN", "stop every node and process run RUN left, then exit"},
    {"quiet", 0, A(quiet), NULL, "no status line"},
    {"help", 0, A(help), NULL, "this text"},
};
#undef A
#define NRUN ((int)(sizeof run_opts / sizeof run_opts[0]))

static void usage(FILE *f) {
  fprintf(f, "usage: pitstop run [options] [train options] [-- COMMAND ARGS...]\n\n"
             "Runs a training job on nodes that come and go: generation after generation on the\n"
             "membership the policy chooses, checkpointing at each change, nothing lost. Without a\n"
             "COMMAND the workload is `pitstop train` with the train options given (see pitstop\n"
             "train --help); a COMMAND follows docs/protocol.md.\n\n");
  pit_cli_opts_print(f, run_opts, NRUN, 30);
}

struct ui {
  int quiet;
  int tty;
  int drew;
  char phase[16];  /* the last status line's phase */
  int64_t decile;  /* and the tenth of the job it was in (-1: length unknown) */
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
  char fin[160] = "";
  if (st->total_steps > 0 && st->step >= st->total_steps && isfinite(st->cost_end)) { /* all steps done */
    snprintf(fin, sizeof fin, "  all steps done, job $%.4f", st->cost_end);
  } else if (isfinite(st->eta_s) && isfinite(st->eta_lo) && isfinite(st->cost_end)) { /* predicted finish and cost */
    char lo[32], hi[32];
    fmt_secs(lo, sizeof lo, st->eta_lo);
    fmt_secs(hi, sizeof hi, st->eta_hi);
    snprintf(fin, sizeof fin, "  finish in %s [%s, %s], job $%.4f [%.4f, %.4f]", eta, lo, hi, st->cost_end,
             st->cost_lo, st->cost_hi);
  } else {
    snprintf(fin, sizeof fin, "  %s left", eta);
  }
  char rate[32] = "?"; /* a log without batch sizes (DCGAN's lines) gives steps, not samples */
  if (st->samples_per_s > 0 && isfinite(st->samples_per_s))
    snprintf(rate, sizeof rate, "%.0f", st->samples_per_s);
  char line[640];
  snprintf(line, sizeof line, "gen %d %-9s %s  step %s  t_p %s  %s samples/s  $%.4f spent%s%s", st->gen, st->phase,
           st->membership, steps, tp, rate, st->spent, fin, st->resizable ? "" : "  (read from its log: not resizable)");
  if (u->tty) {
    fprintf(stderr, "\r\033[K%s", line);
    u->drew = 1;
  } else if (strcmp(st->phase, "running") != 0 || strcmp(st->phase, u->phase) != 0 ||
             (st->total_steps > 0 && st->step * 10 / st->total_steps != u->decile)) {
    fprintf(stderr, "%s\n", line); /* not a terminal: each phase, and each tenth of a job of known length */
  }
  snprintf(u->phase, sizeof u->phase, "%s", st->phase);
  u->decile = st->total_steps > 0 ? st->step * 10 / st->total_steps : -1;
  fflush(stderr);
}

/* The job's length as an earlier run of the same model, data and batch planned
 * it (its iterations per epoch × --epochs, capped at --max-iters, as pitstop
 * train plans it); -1: none, or data whose size is its directory's (images). */
static int64_t steps_from_store(const struct pit_runset *rs, const struct pit_train_opts *t, int64_t batch) {
  if (t->epochs <= 0 || !t->data || strcmp(t->data, "images") == 0 || t->data_dir)
    return -1;
  for (int i = 0; i < rs->n; i++) {
    const struct pit_report_run *rr = &rs->runs[i];
    double per = pit_config_num(&rr->cfg, rr->config, "iters_per_epoch");
    if (strcmp(rr->cfg.model, t->model) != 0 || strcmp(rr->cfg.data, t->data) != 0 || rr->cfg.batch != batch ||
        !(per > 0))
      continue;
    int64_t planned = t->epochs * (int64_t)per;
    return t->max_iters > 0 && t->max_iters < planned ? t->max_iters : planned;
  }
  return -1;
}

/* --policy cost|time with --db: the memberships the store has measured for
 * this workload (pitstop train's model and global batch; a command's runs of
 * the same argv) become the policy's prior, and o->start_steps the job's length
 * an earlier run planned; none: the policy measures online. Returns how many. */
static int prior_from_store(struct pit_run_opts *o, const struct pit_train_opts *t, const char *const *vary,
                            struct pit_policy_meas *prior, int cap, char *differs, size_t ndiff) {
  const struct pit_train_model *md = o->cmd ? NULL : pit_train_model_find(t->model);
  int64_t batch = o->cmd ? 0 : t->batch > 0 ? t->batch : md ? md->batch : 0;
  char key[4096]; /* a command: its earlier runs, the same argv */
  if (!o->db || access(o->db, R_OK) != 0 || (o->cmd ? pit_command_key(o->cmd, key, sizeof key) < 0 : batch <= 0))
    return 0;
  struct pit_err e = {0};
  struct pit_runset rs;
  pit_runset_init(&rs);
  struct pit_catalog cat;
  int have_cat = pit_catalog_load(&cat, o->catalog, &e) == 0;
  struct pit_profile_query q = {o->cmd ? NULL : t->model, batch, PIT_JOB_ITERS, 0, o->policy.kind, NAN, NAN,
                                o->cmd ? key : NULL, vary};
  struct pit_profile_row *rows = NULL;
  int n = 0, best, k = 0;
  if (pit_runset_load_store(&rs, o->db, NULL, 0, &e) == 0 && pit_runset_summarize(&rs, &e) == 0 &&
      pit_profile_rank(&rs, have_cat ? &cat : NULL, &q, &rows, &n, &best, &e) == 0)
    for (int i = 0; i < n && k < cap; i++) {
      prior[k].m = rows[i].m;
      prior[k].tp = rows[i].tp;
      prior[k].tp_half = rows[i].tp_half;
      prior[k++].n = rows[i].n;
      for (const char *d = rows[i].differs; *d; d += strspn(d, ", ")) { /* each option named once */
        size_t len = strcspn(d, ",");
        pit_command_diff_add(differs, ndiff, d, len);
        d += len;
      }
    }
  if (k > 0 && o->total_steps <= 0 && !o->cmd)
    o->start_steps = steps_from_store(&rs, t, batch);
  if (e.msg[0])
    pit_cli_note("the store's profile is not used: %s", e.msg);
  free(rows);
  pit_runset_release(&rs);
  if (have_cat)
    pit_catalog_release(&cat);
  return k;
}

/* cost/time: each decision with its reason, and the run's cost beside each
 * membership it ran as a fixed one for the whole job (by its own records). */
/* 1: x holds the replay (for report.html; the caller releases it), 0: released. */
static int policy_report(const struct pit_run_opts *o, const struct run_args *ra, const char *events,
                         struct pit_cli_replay *x) {
  struct pit_err e = {0};
  int rc = pit_cli_replay_load(events, o->catalog, ra->types, ra->nnodes, pit_policy_name(&o->policy),
                               o->policy.deadline_s, o->policy.budget, o->ranks_per_node, x, &e);
  if (x->have_log)
    pit_cli_print_decisions(&x->log);
  if (rc < 0) {
    pit_cli_warn("no comparison with fixed memberships: %s", e.msg);
    pit_cli_replay_release(x);
    return 0;
  }
  pit_cli_print_fixed(&x->r, x->r.cost_live, x->r.time_live);
  return 1;
}

/* Ctrl-C / SIGTERM: counted for the controller, which stops the run (src/control/stop.c). */
static struct pit_run_stop user_stop;
static void on_signal(int sig) {
  if (user_stop.sig == 0)
    user_stop.sig = sig;
  user_stop.count++;
}

/* The train options given to pitstop run (the default workload's, or a -- COMMAND's job length). */
struct train_args {
  struct pit_train_opts t;
  int n, epochs_set, maxiters_set;
};

/* argv into ra (pitstop run's own options) and ta (train's); *cmd_at: the index after "--". */
static int parse_argv(int argc, char **argv, struct run_args *ra, struct train_args *ta, int *cmd_at) {
  struct pit_err e = {0};
  int i = 1;
  for (; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--") == 0) {
      i++;
      break;
    }
    if (strncmp(a, "--", 2) != 0)
      return pit_cli_usage("run: unexpected argument '%s' (a command goes after --)", a);
    const char *eq = strchr(a + 2, '=');
    size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)(len < 63 ? len : 63), a + 2);
    const struct pit_cli_opt *ro = pit_cli_opt_find(run_opts, NRUN, a + 2, len);
    const struct pit_train_optdef *d = ro ? NULL : pit_train_opt_find(name);
    if (!ro && !d)
      return pit_cli_usage("run: unknown option '%s' (see pitstop run --help and pitstop train --help)", a);
    const char *v = "";
    if (ro ? ro->has_arg : d->arg != NULL) {
      if (eq)
        v = eq + 1;
      else if (i + 1 < argc)
        v = argv[++i];
      else
        return pit_cli_usage("run: --%s needs a value", name);
    } else if (eq) {
      return pit_cli_usage("run: --%s takes no value", name);
    }
    if (ro) {
      *(const char **)((char *)ra + ro->val) = v;
      continue;
    }
    /* a train option (the shared table): checked here, passed on as argv */
    static const char *const owned[] = {"run", "events", "out", "db", "resume"};
    for (size_t k = 0; k < sizeof owned / sizeof owned[0]; k++)
      if (strcmp(name, owned[k]) == 0)
        return pit_cli_usage("run: --%s is pitstop run's own (the controller sets it for train)", name);
    if (pit_train_opt_set(&ta->t, d, d->arg ? v : NULL, &e) < 0)
      return pit_cli_fail(&e);
    ta->epochs_set |= strcmp(name, "epochs") == 0;
    ta->maxiters_set |= strcmp(name, "max-iters") == 0;
    ta->n++;
  }
  *cmd_at = i;
  return 0;
}

/* The options of the job and its workload into o: counts, times, checkpoints, the
 * -- COMMAND and its length, or train's argv (*targv, to free). */
static int job_opts(struct pit_run_opts *o, const struct run_args *ra, struct train_args *ta, char **cmd,
                    char ***targv) {
  struct pit_err e = {0};
  struct {
    const char *val, *name;
    int *to, min;
  } counts[] = {{ra->ranks, "ranks-per-node", &o->ranks_per_node, 1},
                {ra->restarts, "max-restarts", &o->max_restarts, 0}};
  for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
    int64_t c;
    if (!counts[k].val)
      continue;
    if (pit_parse_i64(counts[k].val, &c) < 0 || c < counts[k].min || c > 1000)
      return pit_cli_usage("run: --%s '%s' is not a valid count", counts[k].name, counts[k].val);
    *counts[k].to = (int)c;
  }
  if (ra->grace && (pit_parse_f64(ra->grace, &o->grace_s) < 0 || !(o->grace_s >= 0)))
    return pit_cli_usage("run: --grace '%s' is not a number of seconds >= 0", ra->grace);
  if (ra->start_timeout && (pit_parse_f64(ra->start_timeout, &o->start_timeout_s) < 0 || !(o->start_timeout_s > 0)))
    return pit_cli_usage("run: --start-timeout '%s' is not a positive number of seconds", ra->start_timeout);
  if (ra->lost_wait && (pit_parse_f64(ra->lost_wait, &o->lost_wait_s) < 0 || !(o->lost_wait_s >= 0)))
    return pit_cli_usage("run: --lost-wait '%s' is not a number of seconds >= 0", ra->lost_wait);
  o->ckpt_mirror = ra->mirror;
  o->ckpt_check = pit_ckpt_check; /* the controller checks a checkpoint before it resumes from it */
  if (ra->on_lost && strcmp(ra->on_lost, "restart") != 0 && strcmp(ra->on_lost, "fail") != 0)
    return pit_cli_usage("run: --on-lost-checkpoints '%s': restart or fail", ra->on_lost);
  o->on_lost_fail = ra->on_lost && strcmp(ra->on_lost, "fail") == 0;
  o->cmd = cmd;
  if (o->cmd && ta->n > ta->epochs_set + ta->maxiters_set)
    return pit_cli_usage("run: train options go with the default workload only (not with -- COMMAND; its job "
                         "length: --epochs, --iters, --samples)");
  if (!o->cmd && (ra->iters || ra->samples))
    return pit_cli_usage("run: --iters and --samples size a -- COMMAND's job (pitstop train: --max-iters)");
  if (o->cmd && ta->epochs_set)
    o->job_epochs = ta->t.epochs;
  if ((ra->restart || ra->snapshot) && !o->cmd)
    return pit_cli_usage("run: --resume-by-restart and --snapshot go with a -- COMMAND (pitstop train checkpoints "
                         "at an agreed step)");
  if (ra->snapshot && !ra->restart)
    return pit_cli_usage("run: --snapshot goes with --resume-by-restart");
  o->resume_by_restart = ra->restart != NULL;
  o->snapshot = ra->snapshot;
  struct {
    const char *val, *name;
    int64_t *to;
  } sizes[] = {{ra->iters, "iters", &o->total_steps}, {ra->samples, "samples", &o->job_samples}};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
    if (sizes[k].val && (pit_parse_i64(sizes[k].val, sizes[k].to) < 0 || *sizes[k].to <= 0))
      return pit_cli_usage("run: --%s '%s' is not a positive count", sizes[k].name, sizes[k].val);
  if (o->cmd && (!!o->job_epochs + !!ra->iters + !!ra->samples + ta->maxiters_set) > 1)
    return pit_cli_usage("run: give the job's length once: --epochs, --iters or --samples");
  if (o->cmd)
    return 0;
  if (ta->t.max_iters > 0 && !ta->epochs_set)
    ta->t.epochs = 0; /* --max-iters alone: as many epochs as it takes (as pitstop train) */
  ta->t.out = "(the run's checkpoint directory)"; /* the controller passes --out */
  if (pit_train_check(&ta->t, &e) < 0)
    return pit_cli_fail(&e);
  ta->t.out = NULL;
  int targc = 0;
  if (pit_train_opts_argv(&ta->t, targv, &targc, &e) < 0)
    return pit_cli_fail(&e);
  o->train_argv = *targv;
  return 0;
}

/* Where the run happens into o: its provider, this program, the catalog, the run id and directory. */
static int where_opts(struct pit_run_opts *o, const struct run_args *ra) {
  struct pit_err e = {0};
  static char runbuf[PIT_NAME_MAX], dirbuf[4096];
  if (ra->provider)
    o->provider = ra->provider;
  if (ra->itype)
    o->deftype = ra->itype;
  if (!pit_provider_find(o->provider)) {
    pit_err_set(&e, PIT_EARG, "unknown provider '%s'", o->provider);
    char names[256];
    pit_err_hint(&e, "providers: %s", pit_provider_names(names, sizeof names));
    return pit_cli_fail(&e);
  }
  o->self_exe = pit_cli_self_exe();
  if (!o->self_exe)
    return pit_cli_usage("run: cannot find this program's own path");
  if (!o->catalog) {
    o->catalog = pit_cli_catalog("local.tsv", &e);
    if (!o->catalog && !ra->cleanup)
      return pit_cli_fail(&e);
  }
  o->run = ra->cleanup ? ra->cleanup : ra->run;
  if (!o->run) {
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    snprintf(runbuf, sizeof runbuf, "run-%04d%02d%02d-%02d%02d%02d-%d", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)getpid());
    o->run = runbuf;
  }
  o->run_dir = ra->dir;
  if (!o->run_dir) {
    snprintf(dirbuf, sizeof dirbuf, "runs/%s", o->run);
    o->run_dir = dirbuf;
  }
  return 0;
}

/* pit_cli_vary (cli.h): --vary's comma-separated option names. */
int pit_cli_vary(const char *arg, char *buf, size_t n, const char **out, int max) {
  int k = 0;
  out[0] = NULL;
  if (!arg)
    return 0;
  if (snprintf(buf, n, "%s", arg) >= (int)n)
    return pit_cli_usage("--vary '%s' is too long", arg), -1;
  char *save = NULL;
  for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    if (k == max - 1)
      return pit_cli_usage("--vary names more than %d options", max - 1), -1;
    out[k++] = tok;
  }
  out[k] = NULL;
  if (k == 0 || strstr(arg, ",,") || arg[strlen(arg) - 1] == ',' || arg[0] == ',')
    return pit_cli_usage("--vary '%s': give option names, comma-separated (--vary --niter,--outf)", arg), -1;
  return k;
}

/* A command run once per node (on up to `most` nodes) that names no $PITSTOP_* variable (torchrun's
 * --nnodes, --node_rank, --master_addr) has nothing telling its copies to share the work: on several
 * nodes each copy may do the whole job, billed on every node. Said, not refused: a script may read them from its
 * environment itself (python/pitstop.py). */
void pit_cli_warn_copies(char *const *cmd, int most, const char *one_node) {
  for (int i = 0; cmd[i]; i++)
    if (strstr(cmd[i], "$PITSTOP_") || strstr(cmd[i], "${PITSTOP_"))
      return;
  if (most > 1)
    pit_cli_warn("the command runs once per node (up to %d here), and none of its arguments names a $PITSTOP_ "
                 "variable: unless the script reads them itself, each copy does the whole job, billed on every "
                 "node (hint: a single-process script wants one node, %s; across nodes, torchrun as in "
                 "docs/own-script.md)",
                 most, one_node);
}

/* Who decides into o: the launcher, the initial membership, the node bounds, the
 * policy (its schedule, deadline, budget, types) and the job's length in steps. */
static int policy_opts(struct pit_run_opts *o, const struct run_args *ra, const struct pit_train_opts *t) {
  struct pit_err e = {0};
  int rc = 0;
  if (ra->launcher) {
    if (!strcmp(ra->launcher, "mpi"))
      o->launcher = PIT_LAUNCH_MPI;
    else if (!strcmp(ra->launcher, "per-node"))
      o->launcher = PIT_LAUNCH_PER_NODE;
    else
      rc = pit_err_set(&e, PIT_EARG, "unknown launcher '%s' (mpi, per-node)", ra->launcher);
  } else {
    o->launcher = o->cmd ? PIT_LAUNCH_PER_NODE : PIT_LAUNCH_MPI;
  }
  if (rc == 0)
    rc = pit_run_membership_parse(&o->initial, ra->nodes ? ra->nodes : "1", o->deftype, &e);
  if (rc == 0 && ra->nnodes)
    rc = pit_nnodes_parse(ra->nnodes, &o->nmin, &o->nmax, &e);
  if (rc == 0)
    rc = pit_policy_parse(&o->policy, ra->policy ? ra->policy : ra->schedule ? "schedule" : "fixed", &e);
  if (rc == 0 && ra->schedule)
    rc = pit_schedule_parse(&o->policy, ra->schedule, o->deftype, &e);
  if (rc == 0 && o->policy.kind == PIT_POLICY_SCHEDULE && !ra->schedule)
    rc = pit_err_set(&e, PIT_EARG, "--policy schedule needs --schedule STEP:MEMBERSHIP,...");
  if (rc == 0 && t->max_iters > 0)
    o->total_steps = t->max_iters;
  if (rc == 0 && o->cmd && o->launcher == PIT_LAUNCH_PER_NODE)
    pit_cli_warn_copies(o->cmd,
                        o->nmax > pit_membership_nodes(&o->initial) ? o->nmax : pit_membership_nodes(&o->initial),
                        "--nodes TYPE:1");
  int weighs = o->policy.kind == PIT_POLICY_COST || o->policy.kind == PIT_POLICY_TIME;
  o->types = ra->types;
  if (rc == 0 && !weighs && (ra->deadline || ra->budget || ra->types))
    rc = pit_err_set(&e, PIT_EARG, "--deadline, --budget and --types go with --policy cost or time");
  const char *lim[] = {ra->deadline, ra->budget};
  double *limv[] = {&o->policy.deadline_s, &o->policy.budget};
  for (int k = 0; rc == 0 && weighs && k < 2; k++)
    if (lim[k] && (pit_parse_f64(lim[k], limv[k]) < 0 || !(*limv[k] > 0)))
      rc = pit_err_set(&e, PIT_EARG, "--%s '%s' is not a positive number", k ? "budget" : "deadline", lim[k]);
  return rc < 0 ? pit_cli_fail(&e) : 0;
}

/* After the run: what it did (or why nothing ran), the policy's account, the timeline chart and report.html. */
static int after(const struct pit_run_result *res, const struct pit_run_opts *o, const struct run_args *ra,
                 int weighs) {
  if (res->already_done) /* said by the controller; nothing ran */
    return 0;
  if (res->no_progress) {
    printf("\nno progress: the command exited 0 after %.1f s, but none of its %lld line%s of output was an "
           "iteration or progress line pitstop reads, so nothing was measured or predicted.\n"
           "Its output is in %s/gen-0.log; docs/own-script.md says which lines are read.\n",
           res->total_s, (long long)res->out_lines, res->out_lines == 1 ? "" : "s", o->run_dir);
    return 0;
  }
  pit_run_result_write(stdout, res, o->run, o->run_dir);
  struct pit_cli_replay x;
  int have_x = weighs && policy_report(o, ra, res->events, &x);
  /* the timeline chart beside the run's records */
  char chart[4200];
  snprintf(chart, sizeof chart, "%s/timeline.png", o->run_dir);
  struct pit_err pe = {0};
  int have_png = pit_cli_timeline(res->events, chart, &pe) == 0;
  if (!have_png)
    pit_cli_warn("no timeline chart: %s", pe.msg);
  else
    printf("timeline: %s\n", chart);
  /* and the whole run on one page beside it, billed with the run's catalog (as pitstop status --html) */
  char page[4200];
  snprintf(page, sizeof page, "%s/report.html", o->run_dir);
  struct pit_catalog cat;
  int have_cat = pit_catalog_load(&cat, o->catalog, &pe) == 0;
  if (pit_cli_report_html(o->run_dir, have_cat ? &cat : NULL, NULL, o->catalog, have_png ? chart : NULL,
                          have_x ? &x : NULL, page, &pe) < 0)
    pit_cli_warn("no report.html: %s", pe.msg);
  else
    printf("report: %s\n", page);
  if (have_cat)
    pit_catalog_release(&cat);
  if (have_x)
    pit_cli_replay_release(&x);
  return res->interrupted ? 128 + res->interrupted : 0;
}

int pit_cmd_run(int argc, char **argv) {
  struct pit_run_opts o;
  pit_run_opts_init(&o);
  struct ui u = {0, isatty(2), 0, "", -1};
  struct run_args ra;
  memset(&ra, 0, sizeof ra);
  struct train_args ta = {.n = 0};
  pit_train_opts_init(&ta.t);
  char **targv = NULL;
  struct pit_err e = {0};
  int at = argc, rc = parse_argv(argc, argv, &ra, &ta, &at);
  if (rc)
    return rc;
  if (ra.help) {
    usage(stdout);
    return 0;
  }
  u.quiet = ra.quiet != NULL;
  o.catalog = ra.catalog;
  o.hostfile = ra.hostfile;
  o.provider_config = ra.provider_config;
  o.ssh_opts = ra.ssh_opts;
  o.partition = ra.partition;
  o.db = ra.db;
  o.events = ra.events;
  if ((rc = job_opts(&o, &ra, &ta, at < argc ? argv + at : NULL, &targv)) || (rc = where_opts(&o, &ra)))
    return rc;
  o.warn = on_warn;
  o.status = on_status;
  o.ctx = &u;
  if (ra.cleanup) {
    int stopped = 0;
    if (pit_run_cleanup(&o, &stopped, &e) < 0)
      return pit_cli_fail(&e);
    printf("run %s: %d node%s stopped\n", o.run, stopped, stopped == 1 ? "" : "s");
    return 0;
  }
  if ((rc = policy_opts(&o, &ra, &ta.t)))
    return rc;
  static struct pit_policy_meas prior[PIT_POLICY_MEAS_MAX];
  int weighs = o.policy.kind == PIT_POLICY_COST || o.policy.kind == PIT_POLICY_TIME;
  char vbuf[512], differs[256] = "";
  const char *vary[17];
  if (ra.vary && !o.cmd)
    return pit_cli_usage("run: --vary names options of a command: give it after --");
  if (pit_cli_vary(ra.vary, vbuf, sizeof vbuf, vary, 17) < 0)
    return 2;
  if (weighs) {
    o.prior = prior;
    o.nprior = prior_from_store(&o, &ta.t, vary, prior, PIT_POLICY_MEAS_MAX, differs, sizeof differs);
    if (!u.quiet)
      pit_cli_note("policy %s: %d membership%s measured before (store %s%s%s); the rest are measured online",
                   pit_policy_name(&o.policy), o.nprior, o.nprior == 1 ? "" : "s", o.db ? o.db : "none",
                   differs[0] ? ", runs of this command with other " : "", differs);
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  o.stop = &user_stop;
  signal(SIGPIPE, SIG_IGN);
  struct pit_run_result *res = calloc(1, sizeof *res);
  if (!res)
    return pit_cli_usage("out of memory");
  rc = pit_run(&o, res, &e);
  if (u.drew)
    fputs("\n", stderr);
  pit_train_argv_free(targv);
  rc = rc < 0 ? pit_cli_fail(&e) : after(res, &o, &ra, weighs);
  free(res);
  return rc;
}
