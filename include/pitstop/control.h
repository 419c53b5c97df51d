/* pitstop/control.h — the elastic controller (`pitstop run`): nodes from a
 * provider, a workload launched on them generation after generation, its
 * records read live, and a policy that decides when the membership changes.
 * docs/run.md describes it; docs/protocol.md the workload's side.
 *
 * It stands on two modules with headers of their own: pitstop/provider.h
 * (memberships, and the providers that start and stop nodes) and
 * pitstop/policy.h (the policies: pure functions state → decision, with the
 * elastic simulation and replay that drive them). Here:
 *  4. the controller: pit_run() — lock the run directory, reconcile with the
 *     provider, then generations until the job is done;
 *  5. profiles: measured memberships ranked.
 *
 * Invariants: the library never prints (status and warnings reach the caller
 * through callbacks); children start from argv, never a shell line; every
 * node the controller started is stopped when pit_run returns (success or
 * failure), and a restarted controller adopts or stops what a crashed one left.
 */
#ifndef PITSTOP_CONTROL_H
#define PITSTOP_CONTROL_H

#include <stdint.h>
#include <signal.h>

#include "pitstop/record.h"
#include "pitstop/catalog.h"
#include "pitstop/predict.h"
#include "pitstop/provider.h"
#include "pitstop/policy.h"
#include "pitstop/store.h"
#include "pitstop/util.h"

/* ---------------- 4. the controller ---------------- */

/* What the status callback sees, about twice a second and at each change. */
struct pit_run_status {
  int gen;
  const char *membership;           /* text form */
  int64_t step, total_steps;        /* total -1: unknown */
  double t;                         /* run seconds */
  double tp_s;                      /* recent median step time (NaN before the first iterations) */
  double samples_per_s;
  double spent;                     /* US$ billed so far (nodes × billed seconds) */
  double eta_s;                     /* predicted remaining seconds (NaN: unknown) */
  double eta_lo, eta_hi;            /* its 95% interval (from the recent step times' mean; NaN: unknown) */
  double cost_end, cost_lo, cost_hi; /* the whole job's predicted cost: spent + the nodes' bills over eta */
  const char *phase;                /* "starting", "running", "resizing", "restarting", "done" */
  int resizable;                    /* 0: the workload speaks no protocol (records read from its log) */
};

struct pit_run_gen {                /* one generation, for the report */
  int gen;
  char membership[128];
  int64_t step0, step1;             /* steps [step0, step1) done in it */
  double t0, t_first_iter, t1;      /* run seconds: launched, first iteration, ended */
  double cost;                      /* its share of the nodes' billed cost (pit_runlog_cost) */
  char end[16];                     /* "done", "resized", "failed", "restarted" */
  /* the switch that ended it (resized): decision → workload exited → nodes changed */
  double ckpt_s, exit_s, nodes_s, init_s;
  double idle_s;                    /* of nodes_s: no node held, waiting for spot capacity (spot policy idle) */
  int in_place;                     /* resized in place: the next generation is the same processes, fewer
                                       ranks (exit_s: decision → their new init record; no launch) */
};

struct pit_run_node {               /* one node the run started, for the report */
  char id[PIT_NAME_MAX], itype[PIT_NAME_MAX];
  int spot;
  char end[16];                     /* "stop", or "lost" (reclaimed, gone, set aside) */
  double t_start, t_ready, t_stop;  /* run seconds */
  double billed_s, cost;            /* by the type's billing granularity and minimum */
  double od_cost;                   /* the same billed seconds at the on-demand price */
  double waste_s;                   /* billed by failed or hung start attempts before it */
  char why[96];
};

struct pit_run_result {
  int ngens;
  struct pit_run_gen gens[256];
  int nnodes;
  struct pit_run_node nodes[256];
  int reclaims;                     /* nodes the provider took back (a notice, or gone) */
  double waste_s, waste_usd;        /* billed by start attempts that failed or hung */
  int64_t steps;
  int restarts;                     /* generations restarted after a failure, node_restarts included */
  int node_restarts;                /* of them, after a node was lost past a checkpoint of its generation:
                                       not counted against --max-restarts */
  int continued;                    /* controller stops (killed, or stopped by a signal) the run was
                                       continued across by the same command again: DIR/state's count,
                                       one more for each controller that took a stopped run over;
                                       0: one controller ran it */
  int64_t lost_steps;               /* iterations redone after failures and controller stops */
  int lost_checkpoints;             /* damaged checkpoint files skipped on resume */
  int already_done;                 /* the run had finished before: nothing was run */
  int resizable;                    /* 0: the workload spoke no protocol: never resized, only advised */
  int recommended;                  /* decisions only recommended (the workload could not be resized) */
  double total_s, cost;
  char events[1100];                /* the run's events file */
  /* stopped by the user's signal (struct pit_run_stop): which, how, and where */
  int interrupted;                  /* the signal (SIGINT, SIGTERM); 0: not stopped by one */
  int measured;                     /* stopped because it measured what it was asked to (until_steady,
                                       until_iters; not an interruption: interrupted 0); stop_how as above */
  char stop_how[24];                /* "checkpoint" (agreed step), "sigterm" (exited within the grace), "killed" */
  double stop_s;                    /* seconds from the signal to every process gone */
  int64_t stop_ckpt_step;           /* the step the run continues from (-1: none, from step 0) */
  int no_progress;                  /* the workload ended without one iteration pitstop could read */
  int by_restart;                   /* resizable by restart (--resume-by-restart), not by the protocol */
  int refused;                      /* resizes by restart refused: the next snapshot not due before the end */
  int64_t out_lines;                /* then: the lines it printed on stdout (all in the generation's log) */
};

/* The user's stop, filled by a signal handler (volatile sig_atomic_t only):
 * sig the first signal, count how many arrived. The controller reads it in
 * its loop: a protocol workload checkpoints at an agreed step, anything else
 * gets SIGTERM; SIGKILL after grace_s or at a second signal. */
struct pit_run_stop {
  volatile sig_atomic_t sig;
  volatile sig_atomic_t count;
};

struct ctl_world;
struct pit_run_opts {
  const char *run;                  /* run id (required) */
  const char *run_dir;              /* lock, state, checkpoints, logs (required) */
  const char *provider;             /* "local", "ssh", "slurm", "command" */
  const char *hostfile;             /* ssh: the pool of hosts */
  const char *ssh_opts;             /* ssh: options of every ssh call (NULL: $PITSTOP_SSH_OPTS) */
  const char *partition;            /* slurm: partition of every allocation (NULL: by type) */
  const char *provider_config;      /* command: its config file (templates or a preset, docs/providers.md) */
  const char *catalog;              /* path; NULL: catalogs/local.tsv beside the binary's source, or built-in */
  const char *deftype;              /* instance type of counts given alone */
  struct pit_membership initial;
  int nmin, nmax;
  int ranks_per_node;
  struct pit_policy policy;
  int max_restarts;
  enum pit_launcher launcher;
  const char *db;                   /* store (may be NULL) */
  const char *events;               /* JSON Lines of every record (NULL: run_dir/events.jsonl) */
  const char *self_exe;             /* this binary */
  char **cmd;                       /* the workload (argv, NULL-terminated); NULL: pitstop train */
  char **train_argv;                /* with cmd NULL: the options passed to pitstop train */
  int64_t total_steps;              /* known job length (-1 unknown) */
  int resume_by_restart;            /* the command resumes from its own snapshot when started again */
  const char *snapshot;             /* that snapshot, watched (NULL: "snapshot saved at PATH" lines) */
  int64_t job_epochs, job_samples;  /* a command's job length in epochs or samples (0: not given); the steps
                                       per epoch and samples per step come from its progress lines */
  const char *types;                /* cost/time: types the policy may use, ","-separated (NULL: the
                                       initial membership's) */
  const struct pit_policy_meas *prior; /* cost/time: memberships measured before (a profile), borrowed */
  int nprior;
  int64_t start_steps;              /* with a prior and no total_steps: the job's length an earlier run of the
                                       same model, data and batch planned, for the choice at the start (-1 none) */
  double start_timeout_s;           /* no record this long after a launch: the generation failed */
  double lost_wait_s;               /* a start that fails waits this long for a node set aside whose stop could
                                     * not reach it to answer again (its host the one left) */
  double stop_timeout_s;            /* a stop request not honoured this long: killed */
  double hang_timeout_s;            /* a workload past its first iteration that prints nothing this long (and
                                       100 of its steps) has hung: the generation failed (default 1800; <= 0: never) */
  const char *ckpt_mirror;          /* every checkpoint also copied here (NULL: none) */
  int on_lost_fail;                 /* every checkpoint damaged: 1 fail, 0 start again from step 0 */
  int (*ckpt_check)(const char *path, struct pit_err *e); /* judges a file of pitstop's own checkpoint
                                       format (the CLI: pit_ckpt_check); NULL: only its presence */
  const struct pit_run_stop *stop;  /* the user's stop (NULL: none); borrowed */
  double until_steady;              /* a measurement (pitstop profile -- CMD): the run stops, as a user's stop
                                       does, once its membership's t_p is known to this relative 95% half-width
                                       (0: never) ... */
  int64_t until_iters;              /* ... or after this many iterations (0: never); result.measured says so */
  double grace_s;                   /* after a stop signal: SIGKILL this long after it (default 30) */
  void (*status)(void *ctx, const struct pit_run_status *st);
  pit_warn_fn warn;
  void *ctx;
  struct ctl_world *world;          /* tests and the deterministic simulation only (src/control/world.h,
                                       docs/dst.md): its clock, workload and provider; NULL: the real ones */
};
void pit_run_opts_init(struct pit_run_opts *o);
int pit_run(const struct pit_run_opts *o, struct pit_run_result *res, struct pit_err *e);
/* The result as `pitstop run` prints it at the end (src/control/run_fmt.c): run
 * and dir name the run and its directory in a stop's "continue with" line. */
void pit_run_result_write(FILE *f, const struct pit_run_result *r, const char *run, const char *dir);
/* The run's bill from its records (run_cost.c): r->events' fold priced by
 * pit_runlog_cost on cat (NULL: raw seconds), into each node's billed seconds
 * and costs, each generation's cost (its share of the bills) and r->cost (Σ of
 * r's nodes; failed starts' waste is the caller's to add). Nodes and
 * generations in the file that are not r's (an earlier controller's) are left
 * out. On an error r is unchanged. */
int pit_run_result_price(struct pit_run_result *r, const struct pit_catalog *cat, struct pit_err *e);
/* Stops every node a run left (a crashed controller's), from its run directory. */
int pit_run_cleanup(const struct pit_run_opts *o, int *stopped, struct pit_err *e);
/* A command's key in the store: its argv as JSON text (["python3","main.py","--epochs","3"]), which
 * the controller writes as the init config's "command" and pit_profile_query.command matches.
 * Returns 0, or -1 when it does not fit in n (buf then ""). */
int pit_command_key(char *const *argv, char *buf, size_t n);
/* 1 when the command keys a and b name the same work per step: equal once the
 * options that set only a run's length, output or seed (epochs, iterations,
 * steps, output folders, seeds, in the field's spellings: command_key.c) and
 * those of vary (NULL-terminated option names, "--opt" or "opt"; NULL: none)
 * are left out with their values. diff (NULL: not wanted) gets the options
 * whose values differ ("--niter, --outf"; "" when the keys are equal). */
int pit_command_same(const char *a, const char *b, const char *const *vary, char *diff, size_t ndiff);
/* Adds name[0, len) to list, a ", "-separated list of option names of capacity n,
 * unless it is there already or does not fit whole. */
void pit_command_diff_add(char *list, size_t n, const char *name, size_t len);

/* ---------------- 5. profiles: measured memberships ranked ---------------- */

/* Which stored runs, and the job to rank them for. */
struct pit_profile_query {
  const char *model;                /* the init config's model; NULL: any */
  int64_t batch;                    /* global batch; 0: any */
  enum pit_job_unit unit;           /* the job (predict.h): epochs, iterations or samples */
  double size;                      /* <= 0: no job (no predicted total; ranked by samples per dollar or /s) */
  enum pit_policy_kind objective;   /* PIT_POLICY_COST or PIT_POLICY_TIME */
  double deadline_s, budget;        /* NaN: none */
  const char *command;              /* a command's runs only: its init config's "command" (the argv as JSON
                                       text, written by the controller), batch then not needed; NULL: any.
                                       Runs of another argv match when pit_command_same says so */
  const char *const *vary;          /* with command: options of it that do not change a step's cost, besides
                                       the built-in ones (pit_command_same); NULL: none */
};
/* One measured membership (the run of it with the most steady iterations). */
struct pit_profile_row {
  char run[PIT_NAME_MAX], model[PIT_NAME_MAX];
  int64_t batch;
  struct pit_membership m;
  double tp, tp_half;               /* PIT time and its 95% half-width */
  int64_t n;                        /* iterations measured */
  double sps;                       /* samples per second: batch / t_p (NaN: batch unknown, a command's) */
  double price_h;                   /* Σ nodes × price (NaN: a type not in the catalog) */
  double spd;                       /* samples per dollar: sps × 3600 / price_h */
  double steps_pd;                  /* steps per dollar: 3600 / (price_h × t_p); a command's runs are ranked
                                       by it (their batch is unknown, the same for every run of the argv) */
  double job_s, job_lo, job_hi;     /* the job's predicted time and 95% interval (NaN: no job) */
  double cost, cost_lo, cost_hi;    /* and its cost */
  int fits;                         /* meets the deadline and the budget */
  int chosen;                       /* the row the objective picks */
  char differs[128];                /* a command's run of another argv: the options whose values differ
                                       ("--niter, --outf"); "": the same argv, or not a command's */
};
/* The rows of the summarized runs rs that match q, best first: those that
 * fit, by cost (or time, or without a job by samples per dollar or per
 * second), then the rest. Runs without a membership, a batch or a steady t_p
 * are left out. *rows is malloc'd (caller frees); *best the chosen index or
 * -1 when none fits. */
int pit_profile_rank(const struct pit_runset *rs, const struct pit_catalog *cat, const struct pit_profile_query *q,
                     struct pit_profile_row **rows, int *n, int *best, struct pit_err *e);
/* The ranked rows r[0..n-1] for q as pitstop profile prints them (src/control/profile_fmt.c). */
void pit_profile_write(FILE *f, const struct pit_profile_row *r, int n, const struct pit_profile_query *q);
/* What pitstop profile measures (src/control/profile_plan.c; docs/decide.md). */
/* The candidates into cand[0..*n-1] (cap at most): list ("M1,M2", memberships
 * of local-1 by default), else every type of cat named in types (NULL: all)
 * × 1..max_nodes nodes. */
int pit_profile_candidates(const struct pit_catalog *cat, const char *list, const char *types, int64_t max_nodes,
                           struct pit_membership *cand, int cap, int *n, struct pit_err *e);
/* cand ordered (stably) most promising first by the catalog: speed per price
 * (objective cost) or speed (time). */
void pit_profile_order(const struct pit_catalog *cat, struct pit_membership *cand, int n,
                       enum pit_policy_kind objective);
/* c, more nodes of one type than a measured done[j] of that type (scaling is at
 * best linear: it cannot raise samples per dollar): j; else -1. */
int pit_profile_fewer_nodes(const struct pit_membership *done, int ndone, const struct pit_membership *c);
/* c dominated by the ranked rows[0..n-1]: its samples per dollar, scaled from
 * a measured membership of no more nodes by the catalog's speeds, even at twice
 * that, below the best measured: 1, with by (that row's membership), *spd_hi
 * (c's optimistic figure) and *spd_best; else 0. */
int pit_profile_dominated(const struct pit_profile_row *rows, int n, const struct pit_catalog *cat,
                          const struct pit_membership *c, char *by, size_t nby, double *spd_hi, double *spd_best);
/* Why no row of rows[0..n-1] fits q (deadline, budget): the fastest and the cheapest, into out. */
void pit_profile_why_none(const struct pit_profile_row *rows, int n, const struct pit_profile_query *q, char *out,
                          size_t cap);

#endif
