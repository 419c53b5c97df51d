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
#include <signal.h>

#include "pitstop/record.h"
#include "pitstop/catalog.h"
#include "pitstop/predict.h"
#include "pitstop/report.h"
#include "pitstop/util.h"

/* ---------------- 1. membership ---------------- */

/* struct pit_membership (record.h) as `pitstop run` takes it: TYPE:N entries
 * joined by '+', and a count alone meaning N nodes of deftype ("2",
 * "local-1:1+local-0.4:1", "3+local-0.4:1"). */
int pit_run_membership_parse(struct pit_membership *m, const char *text, const char *deftype, struct pit_err *e);
/* Nodes of type itype in m (0 if none). */
int pit_membership_count(const struct pit_membership *m, const char *itype);
/* A node's market is a field of its membership entry (enum pit_market,
 * record.h; DEFAULT: the provider's, the command provider's "spot" list, else
 * on-demand). m with the markets dropped (entries of one type merged): what the
 * cost and time policies, the observer and the store see. */
void pit_membership_bare(const struct pit_membership *m, struct pit_membership *out);
/* bare with every entry on market mk (DEFAULT: the provider's); with cat, a
 * type cat gives no spot price stays on-demand. */
int pit_membership_on_market(const struct pit_membership *bare, enum pit_market mk, const struct pit_catalog *cat,
                             struct pit_membership *out, struct pit_err *e);
/* `--nnodes MIN:MAX` (1 <= MIN <= MAX). */
int pit_nnodes_parse(const char *text, int *nmin, int *nmax, struct pit_err *e);

/* ---------------- 2. providers ---------------- */

enum pit_launcher { PIT_LAUNCH_MPI = 0, PIT_LAUNCH_PER_NODE };

enum pit_node_state { PIT_NODE_READY = 0, PIT_NODE_STOPPED, PIT_NODE_LOST };

struct pit_node {
  char id[PIT_NAME_MAX];     /* unique within the provider, e.g. "r1.local-1.0" */
  char itype[PIT_NAME_MAX];
  char host[128];            /* where ranks run ("localhost" for the local provider) */
  char cpus[64];             /* local: CPU list the node's ranks are pinned to ("0", "1") */
  double cpu_quota;          /* local: its cgroup's CPU limit in cores' worth (0.4; 1 for local-1); 0: no cgroup */
  char cgroup[256];          /* local: cgroup directory, "" when quotas are unavailable */
  int slots;                 /* ranks it holds */
  enum pit_node_state state;
  double price_h;            /* from the catalog */
  double t_start, t_ready, t_stop; /* run seconds (monotonic, controller clock); NaN: not yet */
  int spot;                  /* started on the spot market (price_h is then the spot price) */
  double waste_s;            /* seconds billed by failed or hung start attempts before this node came up */
  char why[96];              /* why the controller started it (for the report) */
};

/* What a provider's poll reports about a node of the run. */
enum pit_node_event_kind { PIT_NODE_NOTICE = 1, /* about to be reclaimed (a spot notice) */
                           PIT_NODE_GONE };     /* no longer exists (reclaimed, terminated) */
struct pit_node_event {
  char id[PIT_NAME_MAX];
  enum pit_node_event_kind kind;
  double grace_s;            /* NOTICE: seconds until the node goes */
};

struct pit_provider_conf {
  const char *run;                  /* run id: nodes are named and tagged with it */
  const char *state_dir;            /* the provider keeps what it must remember here */
  const struct pit_catalog *catalog;
  const char *self_exe;             /* this pitstop binary (the local provider's node-exec) */
  int slots;                        /* ranks per node */
  pit_warn_fn warn;                 /* may be NULL */
  void *warn_ctx;
  enum pit_launcher launcher;       /* how ranks start (ssh: mpirun reaches the hosts itself) */
  const char *exe;                  /* the workload's program, which a host must have (NULL: self_exe) */
  const char *hostfile;             /* ssh: Open MPI-style "HOST slots=N [itype=T]" lines */
  const char *ssh_opts;             /* ssh: options of every ssh call, split at blanks (NULL: $PITSTOP_SSH_OPTS) */
  const char *partition;            /* slurm: partition of every allocation (NULL: the type's name when
                                       Slurm has a partition of that name, else its default) */
  double timeout_s;                 /* ssh/slurm: bound on one start, check or stop (0: 20 s) */
  const char *config;               /* the provider's own config file (--provider-config); NULL: none */
};
/* All strings in pit_provider_conf are borrowed: they outlive the provider. */

#define PIT_WRAP_MAX 64
struct pit_provider;
struct pit_provider_ops {
  const char *name;
  const char *help;
  int (*open)(struct pit_provider *p, struct pit_err *e);
  /* Starts one node of type itype on market mk (DEFAULT: the provider's; a
   * provider without spot_market is only asked for DEFAULT) and fills n
   * (state READY when it returns 0). */
  int (*start)(struct pit_provider *p, const char *itype, enum pit_market mk, struct pit_node *n,
               struct pit_err *e);
  /* Stops n and everything running on it. Stopping a node that is gone is not an error. */
  int (*stop)(struct pit_provider *p, const struct pit_node *n, struct pit_err *e);
  /* The run's nodes that exist now (malloc'd array, caller frees). */
  int (*list)(struct pit_provider *p, struct pit_node **nodes, int *n, struct pit_err *e);
  /* 0 when n can run ranks. */
  int (*health)(struct pit_provider *p, const struct pit_node *n, struct pit_err *e);
  /* The argv prefix that runs a command on n (NULL-terminated, static strings
   * or strings owned by the provider until the next call); *n_out entries;
   * the caller gives cap >= PIT_WRAP_MAX (ssh: its prefix and every ssh option). */
  int (*wrap)(struct pit_provider *p, const struct pit_node *n, const char **argv, int cap, int *n_out,
              struct pit_err *e);
  void (*close)(struct pit_provider *p);
  /* Optional (NULL: none): options mpirun needs to reach the nodes (ssh:
   * plm_rsh_agent), owned as wrap's. */
  int (*mpi_args)(struct pit_provider *p, const char **argv, int cap, int *n_out, struct pit_err *e);
  /* 1: the wrap runs the command through a remote shell that does not carry
   * the environment (ssh): the launcher appends `env NAME=value...` and the
   * command, each word quoted for that shell. */
  int wrap_remote_shell;
  /* May be NULL. Called at every turn of the controller's loop (the provider
   * limits how often it asks its cloud): fills up to cap events about the
   * run's nodes, each reported once. */
  int (*poll)(struct pit_provider *p, struct pit_node_event *ev, int cap, int *nev, struct pit_err *e);
  /* May be NULL (the run's processes on a node die with the controller's
   * process groups). Kills what the run left running on n (a killed
   * controller's workload) and keeps n: called before a restarted controller
   * adopts n, so no generation runs there twice. */
  int (*clear)(struct pit_provider *p, const struct pit_node *n, struct pit_err *e);
  /* 1: the provider has a spot market (start takes PIT_MARKET_SPOT and
   * PIT_MARKET_ON_DEMAND); 0: the controller refuses a spot entry before any
   * node starts and asks for DEFAULT. */
  int spot_market;
};

struct pit_provider {
  const struct pit_provider_ops *ops;
  struct pit_provider_conf conf;
  void *impl;                       /* owned by the implementation */
  double waste_s, waste_usd;        /* billed by start attempts that failed or hung (the provider adds) */
};

/* The provider registry: "local" (this machine's CPUs, cgroup quotas),
 * "ssh" (a pool of hosts from a hostfile), "slurm" (one allocation per node),
 * "command" (any cloud CLI through argv templates; presets aws and clap). */
const struct pit_provider_ops *pit_provider_find(const char *name);
/* Names of every provider, ", "-separated, for messages, into buf (n bytes;
 * cut to fit); returns buf. */
const char *pit_provider_names(char *buf, size_t n);
int pit_provider_open(struct pit_provider *p, const char *name, const struct pit_provider_conf *conf,
                      struct pit_err *e);
void pit_provider_close(struct pit_provider *p);

/* ---------------- 3. policies ---------------- */

#define PIT_SCHEDULE_MAX 32
enum pit_policy_kind { PIT_POLICY_FIXED = 0, PIT_POLICY_SCHEDULE, PIT_POLICY_COST, PIT_POLICY_TIME };
struct pit_policy {
  enum pit_policy_kind kind;
  int nsched;
  struct {
    int64_t step;                   /* from this step on ... */
    struct pit_membership to;          /* ... this membership */
  } sched[PIT_SCHEDULE_MAX];        /* ascending steps */
  /* cost and time (pit_policy_parse sets the defaults) */
  double deadline_s;                /* the job must end by this many run seconds; NaN: none */
  double budget;                    /* US$ the whole job may cost; NaN: none */
  double margin;                    /* act when the cautious saving > (1 + margin) × switching cost (0.2) */
  int64_t every;                    /* decide every this many iterations once steady (50); before the
                                       first of them, every PIT_POLICY_EARLY_STEPS once steady */
};
/* "fixed" | "schedule" | "cost" | "time" (cost and time: policy_cost.c). */
int pit_policy_parse(struct pit_policy *p, const char *name, struct pit_err *e);
/* The policy's name, as pit_policy_parse takes it. */
const char *pit_policy_name(const struct pit_policy *p);
/* "40:2,80:1" or "40:local-1:1+local-0.4:1,80:local-1:1"; counts alone are
 * nodes of deftype. Steps must rise. */
int pit_schedule_parse(struct pit_policy *p, const char *text, const char *deftype, struct pit_err *e);

#define PIT_POLICY_MEAS_MAX 32
#define PIT_POLICY_TYPES_MAX 16
#define PIT_POLICY_NODES_MAX 64
#define PIT_POLICY_ALTS_MAX 24
/* A membership measured in this job (or by `pitstop profile`): its PIT time. */
struct pit_policy_meas {
  struct pit_membership m;
  double tp, tp_half;               /* s per iteration and its 95% half-width */
  int64_t n;                        /* steady iterations behind it */
};
/* An instance type the policy may use (from the catalog). */
struct pit_policy_type {
  char itype[PIT_NAME_MAX];
  double price_h;                   /* US$ per hour per node */
  double speed;                     /* relative compute speed per node (catalog: cpus × quota); NaN unknown */
};
/* One node of the current membership, in rank order, with its ranks' mean
 * compute and wait per iteration over the recent steady iterations. */
struct pit_policy_node {
  char itype[PIT_NAME_MAX];
  double compute_s, wait_s;         /* NaN: the records carry no per-rank split */
  double others_hi;                 /* paired: 95% upper bound of (slowest other node's compute / this
                                       node's) within the same steps; NaN: unknown (one node, no split) */
  int64_t paired_n;                 /* steps behind others_hi */
};

/* What a policy sees. Pure data: a replay, the simulator or a test builds it
 * by hand; the controller fills it from what it has seen (ctl_policy_state). */
struct pit_policy_state {
  int gen;
  int64_t step;                     /* iterations done so far (the next step's index) */
  int64_t total_steps;              /* the job's length; -1 unknown */
  struct pit_membership cur;
  int nmin, nmax;                   /* bounds on the node count */
  int resizable;                    /* 0: the workload cannot checkpoint (only recommend) */
  /* for cost and time (fixed and schedule ignore them) */
  double t;                         /* run seconds so far */
  double spent;                     /* US$ billed so far */
  int64_t batch;                    /* global batch (samples per iteration); 0 unknown */
  int steady;                       /* 1: cur's PIT time is steady (meas holds it) */
  double pace_s, pace_lo_s, pace_hi_s; /* cur's step times so far, before it is steady: median, 10th and
                                       90th percentile (past the first CTL_OBS_SKIP); NaN: none yet */
  int64_t since_change;             /* iterations done on cur since the last change */
  double switch_s;                  /* seconds one resize costs in this job (checkpoint + stop + boot +
                                       launch + init), measured; NaN: not measured yet */
  int nmeas;
  struct pit_policy_meas meas[PIT_POLICY_MEAS_MAX];  /* cur included once steady */
  int ntypes;
  struct pit_policy_type types[PIT_POLICY_TYPES_MAX];
  int nnodes;
  struct pit_policy_node nodes[PIT_POLICY_NODES_MAX];
};
enum pit_action { PIT_ACT_KEEP = 0, PIT_ACT_RESIZE };
/* One alternative weighed: the rest of the job on membership m. */
struct pit_policy_alt {
  struct pit_membership m;
  char kind[16];                    /* "keep", "add", "remove", "switch" */
  char model[48];                   /* where t_p came from: "measured", "slowest rank removed", "USL", ... */
  double tp, tp_lo, tp_hi;          /* predicted s per iteration, 95% interval */
  double rest_s, rest_lo, rest_hi;  /* the rest of the job, switching included */
  double cost, cost_hi;             /* its cost (US$) at rest_s and rest_hi */
  int feasible;                     /* meets the deadline and the budget */
};
struct pit_choice {
  enum pit_action act;
  struct pit_membership to;            /* RESIZE: the membership wanted */
  char reason[1536];
  char kind[16];                    /* "keep", "add", "remove", "switch" (schedule: "resize") */
  int decided;                      /* 1: a decision point (alternatives weighed; write a record) */
  int nalts;
  struct pit_policy_alt alts[PIT_POLICY_ALTS_MAX]; /* alts[0] is keep */
};
/* Pure: the same state always gives the same choice.
 *
 * cost / time: at a decision point (cur steady, `every` iterations since the
 * last check or change, or earlier as soon as cur is steady: see
 * pit_policy_decision_point) the policy builds the alternatives — keep; add one
 * node of each type; remove one node of the type whose rank computes longest
 * (it makes the others wait); switch every node to another type — with a
 * predicted t_p each (measured when meas has it; else from the per-node
 * compute/wait split with equal shares, the USL fit of one type's measured
 * counts, or the catalog's relative speed, each with a wider interval), and
 * the rest of the job's time and cost. `cost` minimises cost among those
 * meeting the deadline and budget (the fastest when none meets the
 * deadline), `time` minimises time within the budget. It moves only when the
 * cautious saving (keep at its interval's low end, the candidate at its high
 * end) exceeds (1 + margin) × the switching cost: never-measured candidates
 * pay their interval, and noise in two measured memberships cannot make it
 * flap between them. */
int pit_policy_decide(const struct pit_policy *p, const struct pit_policy_state *s, struct pit_choice *c,
                      struct pit_err *e);
/* The fewest iterations a membership is measured before it is judged steady
 * (the observer's floor, observe.c) and the spacing of the decision points
 * before the first `every` iterations on it. */
#define PIT_POLICY_EARLY_STEPS 10
/* The most iterations the observer measures a membership before it reports
 * it steady anyway (its interval then says how well it is known): the
 * longest a trial can take before its first decision point. */
#define PIT_POLICY_MEASURE_MAX 200
/* 1 when since_change iterations on the current membership make a decision
 * point (cur steady assumed): multiples of PIT_POLICY_EARLY_STEPS below
 * `every`, then multiples of `every`. */
int pit_policy_decision_point(int64_t since_change, int64_t every);
/* The cost/time policy's part of pit_policy_decide (policy_cost.c). */
int pit_policy_decide_cost(const struct pit_policy *p, const struct pit_policy_state *s, struct pit_choice *c,
                           struct pit_err *e);
/* A type's relative speed by the catalog: CPUs (or vCPUs) × the CPU quota. */
struct pit_itype;
double pit_policy_itype_speed(const struct pit_itype *it);
/* The policy's types from the catalog: list is ','-separated type names
 * (each must be in cat; catalog_name names it in the error). speed = CPUs ×
 * quota. *n types filled, at most PIT_POLICY_TYPES_MAX. */
int pit_policy_types(const struct pit_catalog *cat, const char *catalog_name, const char *list,
                     struct pit_policy_type *types, int *n, struct pit_err *e);
/* Σ nodes × price_h of m from the state's types (NaN if a type is missing). */
double pit_policy_price_h(const struct pit_policy_state *s, const struct pit_membership *m);

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
  int restarts;
  int64_t lost_steps;               /* iterations redone after failures */
  int lost_checkpoints;             /* damaged checkpoint files skipped on resume */
  int already_done;                 /* the run had finished before: nothing was run */
  int resizable;                    /* 0: the workload spoke no protocol: never resized, only advised */
  int recommended;                  /* decisions only recommended (the workload could not be resized) */
  double total_s, cost;
  char events[1100];                /* the run's events file */
  /* stopped by the user's signal (struct pit_run_stop): which, how, and where */
  int interrupted;                  /* the signal (SIGINT, SIGTERM); 0: not stopped by one */
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
  double start_timeout_s;           /* no record this long after a launch: the generation failed */
  double stop_timeout_s;            /* a stop request not honoured this long: killed */
  double hang_timeout_s;            /* a workload past its first iteration that prints nothing this long (and
                                       100 of its steps) has hung: the generation failed (default 1800; <= 0: never) */
  const char *ckpt_mirror;          /* every checkpoint also copied here (NULL: none) */
  int on_lost_fail;                 /* every checkpoint damaged: 1 fail, 0 start again from step 0 */
  int (*ckpt_check)(const char *path, struct pit_err *e); /* judges a file of pitstop's own checkpoint
                                       format (the CLI: pit_ckpt_check); NULL: only its presence */
  const struct pit_run_stop *stop;  /* the user's stop (NULL: none); borrowed */
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

/* ---------------- 5. profiles: measured memberships ranked ---------------- */

/* Which stored runs, and the job to rank them for. */
struct pit_profile_query {
  const char *model;                /* the init config's model; NULL: any */
  int64_t batch;                    /* global batch; 0: any */
  enum pit_job_unit unit;           /* the job (predict.h): epochs, iterations or samples */
  double size;                      /* <= 0: no job (no predicted total; ranked by samples per dollar or /s) */
  enum pit_policy_kind objective;   /* PIT_POLICY_COST or PIT_POLICY_TIME */
  double deadline_s, budget;        /* NaN: none */
};
/* One measured membership (the run of it with the most steady iterations). */
struct pit_profile_row {
  char run[PIT_NAME_MAX], model[PIT_NAME_MAX];
  int64_t batch;
  struct pit_membership m;
  double tp, tp_half;               /* PIT time and its 95% half-width */
  int64_t n;                        /* iterations measured */
  double sps;                       /* samples per second: batch / t_p */
  double price_h;                   /* Σ nodes × price (NaN: a type not in the catalog) */
  double spd;                       /* samples per dollar: sps × 3600 / price_h */
  double job_s, job_lo, job_hi;     /* the job's predicted time and 95% interval (NaN: no job) */
  double cost, cost_lo, cost_hi;    /* and its cost */
  int fits;                         /* meets the deadline and the budget */
  int chosen;                       /* the row the objective picks */
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

/* ---------------- elastic simulation: the policy on a simulated clock ----------------
 *
 * pit_elastic_run drives a job step by step on a simulated clock with the same
 * policy code (pit_policy_decide) and the same observation code the controller
 * uses (its iteration records through the controller's observer): a workload
 * model gives each iteration (its step time and per-rank compute/wait) on a
 * membership, and the overheads around each generation (stop: checkpoint and
 * exit after the last step; start: nodes, launch and init before the first).
 * A resize ends the generation at the model's stop step; the nodes change as
 * the controller's reshape changes them (surplus nodes of a type go from the
 * end of the node list, missing ones are appended); the next generation pays
 * the start overhead; the policy sees the simulated time, spend (Σ nodes ×
 * price_h, per second) and switching time (decision → the next first
 * iteration, mean over the resizes so far). Two models: a recorded run
 * (pit_replay_events) and any caller's (bench/ondemand-grid: USL fits). */
struct pit_replay_opts {
  struct pit_policy policy;          /* cost or time, with deadline/budget/margin/every as run had */
  int nmin, nmax;                    /* --nnodes */
  int ranks_per_node;                /* >= 1 */
  int ntypes;
  struct pit_policy_type types[PIT_POLICY_TYPES_MAX];
  const struct pit_catalog *catalog; /* the run's, borrowed: its node records and each fixed membership
                                        priced on billed seconds; NULL: raw seconds (a forecast) */
};
/* One iteration as the model gives it. */
struct pit_elastic_iter {
  double step_s;                     /* the record's step time (what the policy measures) */
  double dt;                         /* simulated seconds it takes (>= step_s: checkpoints, epoch ends) */
  int64_t batch;                     /* global batch */
  int nranks;                        /* 0: no per-rank split */
  double compute_s[PIT_POLICY_NODES_MAX], wait_s[PIT_POLICY_NODES_MAX]; /* rank order */
};
/* The model; ctx is the caller's. nodes: the itypes in rank order (nnodes). */
struct pit_elastic_model {
  void *ctx;
  /* 1: *it filled; 0: no model for m (the run stops: diverged); < 0: error in e. */
  int (*iter)(void *ctx, const struct pit_membership *m, const char (*nodes)[PIT_NAME_MAX], int nnodes, int64_t step,
              struct pit_elastic_iter *it, struct pit_err *e);
  /* The generation's last step + 1 after a resize decided before step `decided`. */
  int64_t (*stop_step)(void *ctx, int64_t decided, const struct pit_membership *to);
  /* Seconds before generation gen's first step (on m), after its last (last: the job's end). */
  double (*start_s)(void *ctx, int gen, int64_t step, const struct pit_membership *m);
  double (*stop_s)(void *ctx, int gen, int64_t step, const struct pit_membership *m, int last);
};
struct pit_elastic_job {
  struct pit_membership initial;
  char nodes[PIT_POLICY_NODES_MAX][PIT_NAME_MAX]; /* initial's itypes in rank order (nnodes 0: in
                                                      initial's order) */
  int nnodes;
  int64_t step0, total;              /* first step, the job's iterations */
};
/* A resize: the membership changed at a step (what the replay compares; the
 * record of a decision is struct pit_decision, record.h). */
struct pit_resize {
  int64_t step;                      /* the step the decision was taken at (step_next) */
  double t;                          /* run seconds (live: the record's; replay: simulated) */
  struct pit_membership from, to;
};
/* dec: malloc'd, owned (pit_elastic_result_release). */
struct pit_elastic_result {
  int ndec;
  struct pit_resize *dec;   /* resize decisions, in order */
  int diverged;                      /* 1: a membership without a model was chosen (stopped there) */
  int decisions;                     /* decision points weighed (keep included) */
  int64_t steps_done;
  double cost, time_s;               /* US$: each simulated node billed from its start to its stop through
                                        o->catalog (none: raw seconds); s from start to the last stop */
};
void pit_elastic_result_release(struct pit_elastic_result *r);
/* Errors: a membership with a type not in o->types, the model's, out of memory. */
int pit_elastic_run(const struct pit_elastic_model *mdl, const struct pit_replay_opts *o,
                    const struct pit_elastic_job *job, struct pit_elastic_result *r, struct pit_err *e);

/* ---------------- replay: a recorded run driven again by the policy ----------------
 *
 * pit_replay_events reads a run's events file (`pitstop run`'s events.jsonl)
 * and runs pit_elastic_run over a model made of the run's own records: step s
 * on membership M takes the recorded iteration s when the live run ran it on
 * M, else M's recorded iterations in turn; each generation's start and stop
 * overheads are the live ones (a generation the live run did not have: the
 * live mean); a resize at a step the live run resized at stops where the live
 * one stopped, else after the live runs' mean lag. It reports the resize
 * decisions of both (step, from, to) and the cost of both: live from the node
 * records (price × start..stop), the replay's from the simulated clock. A
 * membership the live run never ran has no records: the replay stops there
 * (diverged). */
/* live, sim: malloc'd arrays owned by the result (pit_replay_release). */
struct pit_replay {
  int nlive, nsim;
  struct pit_resize *live, *sim; /* resize decisions, in order */
  int same;                          /* 1: same count, same steps, same from and to */
  int diverged;                      /* 1: the replay chose a membership without records */
  int64_t steps;                     /* the job's iterations */
  double cost_live, cost_sim;        /* US$: the node records billed (pit_runlog_cost); the replay's
                                        simulated nodes billed the same way (pit_elastic_run) */
  double time_live, time_sim;        /* s, run start to the last node's stop */
  int decisions_sim;                 /* decision points the replay's policy weighed (keep included) */
  /* Every membership the live run ran, the whole job replayed on it alone
   * (--policy fixed) over the run's own records: what each fixed membership
   * would have cost by this run's measurements. Memberships the run never ran
   * have no records and are not here. best_fixed: the cheapest among those
   * that meet the policy's deadline (time policy: the fastest within its
   * budget); -1 when none does. */
  int nfixed, best_fixed;
  struct pit_replay_fixed {
    struct pit_membership m;
    double cost, time_s;             /* US$: each node billed time_s (pit_elastic_run), s */
    int complete;                    /* 0: its replay stopped early (diverged) */
  } fixed[PIT_POLICY_MEAS_MAX];
};
void pit_replay_release(struct pit_replay *r);
/* Errors name the file (and line): unreadable, malformed, no iteration. */
int pit_replay_events(const char *path, const struct pit_replay_opts *o, struct pit_replay *r, struct pit_err *e);
/* The same on the run's fold (record.h, the run log), loaded by the caller; path names it in messages. */
int pit_replay_log(const struct pit_runlog *log, const char *path, const struct pit_replay_opts *o,
                   struct pit_replay *r, struct pit_err *e);
/* A replay as `pitstop simulate --replay` prints it (src/control/replay_fmt.c):
 * one JSON object on a line (PIT_EIO when f cannot take it), or the table's
 * head: both sides' resize decisions, whether they agree, the two costs. */
int pit_replay_write_json(FILE *f, const char *events, const struct pit_replay *r, struct pit_err *e);
void pit_replay_write_head(FILE *f, const char *events, const char *policy, const char *types,
                           const struct pit_replay *r);

/* The local provider's node wrapper (pitstop node-exec): pins the calling
 * process to cpus, joins cgroup (if not ""), then the caller execs. */
int pit_node_enter(const char *cpus, const char *cgroup, struct pit_err *e);

/* The ssh provider's host side (pitstop node-check, run on the host over
 * ssh). pit_node_check: 0 when this CPU has every instruction-set extension
 * the binary was compiled to use outside run-time dispatch (a -march=native
 * build copied to an older CPU would die of SIGILL: "pitstop cannot run there"),
 * dir has at least min_free_mb MiB free and exe (a path, or a name looked up in
 * PATH) can be run; otherwise the reason in e.
 * pit_node_release: kills (TERM, then KILL after grace_s) every process of
 * this network namespace whose environment holds PITSTOP_RUN=run; *killed:
 * how many. */
int pit_node_check(const char *dir, const char *exe, double min_free_mb, struct pit_err *e);
int pit_node_release(const char *run, double grace_s, int *killed, struct pit_err *e);

#endif
