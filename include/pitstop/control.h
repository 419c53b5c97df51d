/* pitstop/control.h — the elastic controller (`pitstop run`): nodes from a
 * provider, a workload launched on them generation after generation, its
 * records read live, and a policy that decides when the membership changes.
 * docs/run.md describes it; docs/protocol.md the workload's side.
 *
 * Pieces, each usable alone:
 *  1. membership: a list of {instance type, nodes} (the run's text form
 *     "local-1:2+local-0.4:1");
 *  2. providers (vtable): start one node of a type, stop it, list the run's
 *     nodes that exist, check one, and say how to run a command on it;
 *  3. policies: pure functions state → decision (keep, or a new membership,
 *     with the reason), so the same code serves live runs, replays and tests;
 *  4. the controller: pit_run() — lock the run directory, reconcile with the
 *     provider, then generations until the job is done.
 *
 * Invariants: the library never prints (status and warnings reach the caller
 * through callbacks); children start from argv, never a shell line; every
 * node the controller started is stopped when pit_run returns (success or
 * failure), and a restarted controller adopts or stops what a crashed one left.
 */
#ifndef PITSTOP_CONTROL_H
#define PITSTOP_CONTROL_H

#include <stdint.h>

#include "pitstop/record.h"
#include "pitstop/catalog.h"
#include "pitstop/util.h"

/* ---------------- 1. membership ---------------- */

/* struct pit_membership (record.h) as `pitstop run` takes it: TYPE:N entries
 * joined by '+', and a count alone meaning N nodes of deftype ("2",
 * "local-1:1+local-0.4:1", "3+local-0.4:1"). */
int pit_run_membership_parse(struct pit_membership *m, const char *text, const char *deftype, struct pit_err *e);
/* Nodes of type itype in m (0 if none). */
int pit_membership_count(const struct pit_membership *m, const char *itype);

/* ---------------- 2. providers ---------------- */

enum pit_node_state { PIT_NODE_READY = 0, PIT_NODE_STOPPED, PIT_NODE_LOST };

struct pit_node {
  char id[PIT_NAME_MAX];     /* unique within the provider, e.g. "r1.local-1.0" */
  char itype[PIT_NAME_MAX];
  char host[128];            /* where ranks run ("localhost" for the local provider) */
  char cpus[64];             /* local: CPU list the node's ranks are pinned to ("0", "1") */
  double cpu_quota;          /* local: cores' worth of CPU time (0.4); 0: no quota */
  char cgroup[256];          /* local: cgroup directory, "" when quotas are unavailable */
  int slots;                 /* ranks it holds */
  enum pit_node_state state;
  double price_h;            /* from the catalog */
  double t_start, t_ready, t_stop; /* run seconds (monotonic, controller clock); NaN: not yet */
};

struct pit_provider_conf {
  const char *run;                  /* run id: nodes are named and tagged with it */
  const char *state_dir;            /* the provider keeps what it must remember here */
  const struct pit_catalog *catalog;
  const char *self_exe;             /* this pitstop binary (the local provider's node-exec) */
  int slots;                        /* ranks per node */
  pit_warn_fn warn;                 /* may be NULL */
  void *warn_ctx;
};

struct pit_provider;
struct pit_provider_ops {
  const char *name;
  const char *help;
  int (*open)(struct pit_provider *p, struct pit_err *e);
  /* Starts one node of type itype and fills n (state READY when it returns 0). */
  int (*start)(struct pit_provider *p, const char *itype, struct pit_node *n, struct pit_err *e);
  /* Stops n and everything running on it. Stopping a node that is gone is not an error. */
  int (*stop)(struct pit_provider *p, const struct pit_node *n, struct pit_err *e);
  /* The run's nodes that exist now (malloc'd array, caller frees). */
  int (*list)(struct pit_provider *p, struct pit_node **nodes, int *n, struct pit_err *e);
  /* 0 when n can run ranks. */
  int (*health)(struct pit_provider *p, const struct pit_node *n, struct pit_err *e);
  /* The argv prefix that runs a command on n (NULL-terminated, static strings
   * or strings owned by the provider until the next call); *n_out entries. */
  int (*wrap)(struct pit_provider *p, const struct pit_node *n, const char **argv, int cap, int *n_out,
              struct pit_err *e);
  void (*close)(struct pit_provider *p);
};

struct pit_provider {
  const struct pit_provider_ops *ops;
  struct pit_provider_conf conf;
  void *impl;                       /* owned by the implementation */
};

/* The provider registry: "local" (this machine's CPUs, cgroup quotas). */
const struct pit_provider_ops *pit_provider_find(const char *name);
/* Names of every provider, ", "-separated, for messages. */
const char *pit_provider_names(void);
int pit_provider_open(struct pit_provider *p, const char *name, const struct pit_provider_conf *conf,
                      struct pit_err *e);
void pit_provider_close(struct pit_provider *p);

/* ---------------- 3. policies ---------------- */

#define PIT_SCHEDULE_MAX 32
enum pit_policy_kind { PIT_POLICY_FIXED = 0, PIT_POLICY_SCHEDULE };
struct pit_policy {
  enum pit_policy_kind kind;
  int nsched;
  struct {
    int64_t step;                   /* from this step on ... */
    struct pit_membership to;          /* ... this membership */
  } sched[PIT_SCHEDULE_MAX];        /* ascending steps */
};
/* "fixed" | "schedule". */
int pit_policy_parse(struct pit_policy *p, const char *name, struct pit_err *e);
/* "40:2,80:1" or "40:local-1:1+local-0.4:1,80:local-1:1"; counts alone are
 * nodes of deftype. Steps must rise. */
int pit_schedule_parse(struct pit_policy *p, const char *text, const char *deftype, struct pit_err *e);

/* What a policy sees. Pure data: a replay or a test builds it by hand. */
struct pit_policy_state {
  int gen;
  int64_t step;                     /* iterations done so far (the next step's index) */
  int64_t total_steps;              /* the job's length; -1 unknown */
  struct pit_membership cur;
  int nmin, nmax;                   /* bounds on the node count */
  int resizable;                    /* 0: the workload cannot checkpoint (only recommend) */
};
enum pit_action { PIT_ACT_KEEP = 0, PIT_ACT_RESIZE };
struct pit_choice {
  enum pit_action act;
  struct pit_membership to;            /* RESIZE: the membership wanted */
  char reason[512];
};
/* Pure: the same state always gives the same choice. */
int pit_policy_decide(const struct pit_policy *p, const struct pit_policy_state *s, struct pit_choice *c,
                      struct pit_err *e);

/* ---------------- 4. the controller ---------------- */

enum pit_launcher { PIT_LAUNCH_MPI = 0, PIT_LAUNCH_PER_NODE };

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
  const char *phase;                /* "starting", "running", "resizing", "restarting", "done" */
};

struct pit_run_gen {                /* one generation, for the report */
  int gen;
  char membership[128];
  int64_t step0, step1;             /* steps [step0, step1) done in it */
  double t0, t_first_iter, t1;      /* run seconds: launched, first iteration, ended */
  double cost;                      /* its share of the nodes' billed cost */
  char end[16];                     /* "done", "resized", "failed", "restarted" */
  /* the switch that ended it (resized): decision → workload exited → nodes changed */
  double ckpt_s, exit_s, nodes_s, init_s;
};

struct pit_run_result {
  int ngens;
  struct pit_run_gen gens[256];
  int64_t steps;
  int restarts;
  int64_t lost_steps;               /* iterations redone after failures */
  double total_s, cost;
  char events[1100];                /* the run's events file */
};

struct pit_run_opts {
  const char *run;                  /* run id (required) */
  const char *run_dir;              /* lock, state, checkpoints, logs (required) */
  const char *provider;             /* "local" */
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
  double start_timeout_s;           /* no record this long after a launch: the generation failed */
  double stop_timeout_s;            /* a stop request not honoured this long: killed */
  void (*status)(void *ctx, const struct pit_run_status *st);
  pit_warn_fn warn;
  void *ctx;
};
void pit_run_opts_init(struct pit_run_opts *o);
int pit_run(const struct pit_run_opts *o, struct pit_run_result *res, struct pit_err *e);
/* Stops every node a run left (a crashed controller's), from its run directory. */
int pit_run_cleanup(const struct pit_run_opts *o, int *stopped, struct pit_err *e);

/* The local provider's node wrapper (pitstop node-exec): pins the calling
 * process to cpus, joins cgroup (if not ""), then the caller execs. */
int pit_node_enter(const char *cpus, const char *cgroup, struct pit_err *e);

#endif
