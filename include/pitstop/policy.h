/* pitstop/policy.h — decision policies as pure functions, and what drives them
 * off the live run: state → decision (keep, or a new membership, with the
 * reason), so the same code serves live runs (src/control), replays, the
 * simulators (src/sim) and tests.
 *
 * Pieces:
 *  3. the elastic policies: fixed, schedule, cost and time;
 *  the elastic simulation: those policies on a simulated clock over a workload
 *  model, and the replay: a recorded run driven again by the policy;
 *  the spot policies (spot, on-demand or idle for one job) and the fleet
 *  policies (pools × markets × node counts) that `pitstop simulate` judges and
 *  `pitstop run`'s market layer asks live.
 *
 * Invariants: no clock, no I/O in a policy, no globals — the same state gives
 * the same choice; the library never prints.
 */
#ifndef PITSTOP_POLICY_H
#define PITSTOP_POLICY_H

#include <stdint.h>
#include <stdio.h>

#include "pitstop/record.h"
#include "pitstop/catalog.h"
#include "pitstop/predict.h"
#include "pitstop/provider.h"
#include "pitstop/util.h"

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
  double price_h;                   /* US$ per hour per node, on-demand (and a bare TYPE: the default market) */
  double spot_price_h;              /* US$ per hour per node on spot; NaN or <= 0: not offered */
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
  int at_start;                     /* 1: nothing has started yet: cur is the membership asked for, meas
                                       what earlier runs measured (the store, --db); the policy chooses the
                                       first membership, and a change costs nothing over starting cur (with
                                       total_steps unknown, no deadline and no budget: weighed over
                                       PIT_POLICY_START_STEPS, the cheaper per step being the cheaper job) */
  double pace_s, pace_lo_s, pace_hi_s; /* cur's step times so far, before it is steady: median, 10th and
                                       90th percentile (past the first CTL_OBS_SKIP); NaN: none yet */
  int64_t since_change;             /* iterations done on cur since the last change */
  double switch_s;                  /* seconds one resize by relaunch costs in this job (checkpoint + stop +
                                       boot + launch + init), measured; NaN: not measured yet */
  double shrink_s;                  /* seconds one removal carried out in place cost in this job (checkpoint,
                                       the leaving ranks gone, the others set up again: docs/run.md 5b),
                                       measured; NaN: none yet (a removal is then priced as a relaunch) */
  double restart_s;                 /* before one is measured: the job's first start (nodes, launch, init)
                                       plus its last checkpoint's time; NaN or 0: not known yet */
  int nmeas;
  struct pit_policy_meas meas[PIT_POLICY_MEAS_MAX];  /* cur included once steady */
  int ntypes;
  struct pit_policy_type types[PIT_POLICY_TYPES_MAX];
  int nnodes;
  struct pit_policy_node nodes[PIT_POLICY_NODES_MAX];
};
#define PIT_POLICY_START_STEPS 1000
enum pit_action { PIT_ACT_KEEP = 0, PIT_ACT_RESIZE };
/* One alternative weighed: the rest of the job on membership m. */
struct pit_policy_alt {
  struct pit_membership m;
  char kind[16];                    /* "keep", "add", "remove", "switch" */
  char model[48];                   /* where t_p came from: "measured", "slowest rank removed", "USL", ... */
  double tp, tp_lo, tp_hi;          /* predicted s per iteration, 95% interval */
  double rest_s, rest_lo, rest_hi;  /* the rest of the job, switching included */
  double switch_s;                  /* the change to m: seconds (0: kept) */
  const char *switch_src;           /* where switch_s came from ("measured", "measured in place", ...) */
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
  char zone[PIT_ZONE_MAX];          /* a zone decision's zone ("": none) */
  char inputs[3072];                /* a zone or spot decision's inputs (pit_zone_in_json, pit_spot_in_json;
                                       "": none) */
  char spot_mode[16];               /* the spot market layer's choice (pit_spot_mode_name; "": none) */
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
/* The fewest steps of ranks compared within the same steps (past the
 * observer's first CTL_OBS_SKIP) on which the cost policy's paired rule acts,
 * and the spacing of its decision points: its 95% bound (Student t with n−1
 * degrees of freedom) is what says whether they suffice, not a count. */
#define PIT_POLICY_PAIRED_MIN 5
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
/* Σ nodes × the price of m's entries at their market from the state's types:
 * spot_price_h for a TYPE@spot entry, price_h for TYPE@on-demand and a bare
 * TYPE (the provider's default). NaN if a type is missing, or is on spot
 * without a spot price. */
double pit_policy_price_h(const struct pit_policy_state *s, const struct pit_membership *m);

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
  int count_held;                    /* the node count is another layer's (the zone layer's, with a node
                                        range): the policy is asked with nmin = nmax = the count held */
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
/* A restart of the recorded run's own that the simulation follows (a replay):
 * the nodes that stay, the next generation's membership with its markets, and
 * the seconds of its start during which the run held no node (an idle wait
 * for spot), which no node is billed for. */
struct pit_elastic_restart {
  struct pit_membership kept, to;
  double idle_s;
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
  /* Optional (NULL: none): 1 when the recorded run began a generation at step,
   * from one on from's types to one on to's types, filling *f. Asked between
   * two steps of a generation (from = to = the membership: a reclaim, another
   * market or zone, which is no decision of the policy's: the simulation
   * restarts there as the run did) and at a resize (to = the policy's choice:
   * the nodes that stayed, and the markets the run put the new nodes on). */
  int (*restart)(void *ctx, int64_t step, const struct pit_membership *from, const struct pit_membership *to,
                 struct pit_elastic_restart *f);
  /* Optional (NULL: never): 1 when the generation on m that begins at step
   * after a resize begins in place (the recorded run's did, on m's types:
   * docs/run.md 5b), so its switch is a removal in place (the policy's
   * shrink_s), not a relaunch. */
  int (*in_place)(void *ctx, int64_t step, const struct pit_membership *m);
};
struct pit_elastic_job {
  struct pit_membership initial;
  char nodes[PIT_POLICY_NODES_MAX][PIT_NAME_MAX]; /* initial's itypes in rank order (nnodes 0: in
                                                      initial's order) */
  int nnodes;
  int64_t step0, total;              /* first step, the job's iterations */
  int64_t end;                       /* the step it stops before (a recorded run stopped early: its
                                        last step + 1; the policy still weighs total); 0: total */
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
  int restarts;                      /* the recorded run's own restarts followed (mdl->restart) */
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
 * records (price × start..stop), the replay's from the simulated clock, each
 * node at its market's price (the node records' "market"). The run's own
 * restarts on the same types (a reclaim, a change of market or zone) are
 * followed at the same steps, onto the markets the run chose. A
 * membership the live run never ran has no records: the replay stops there
 * (diverged). */
/* live, sim: malloc'd arrays owned by the result (pit_replay_release). */
struct pit_replay {
  int nlive, nsim;
  struct pit_resize *live, *sim; /* resize decisions, in order */
  int same;                          /* 1: same count, same steps, same from and to */
  int diverged;                      /* 1: the replay chose a membership without records */
  int64_t steps;                     /* the job's iterations */
  int64_t steps_run;                 /* the steps the run made: < steps when it was stopped early
                                        (Ctrl-C, a controller stop); every replay stops there too, so
                                        the costs compared are of the same steps */
  double cost_live, cost_sim;        /* US$: the node records billed (pit_runlog_cost); the replay's
                                        simulated nodes billed the same way (pit_elastic_run) */
  double time_live, time_sim;        /* s, run start to the last node's stop */
  int decisions_sim;                 /* decision points the replay's policy weighed (keep included) */
  int restarts;                      /* the live run's own restarts the replay followed (a reclaim,
                                        a change of market or zone: not the policy's decisions) */
  int zone_decisions, zone_same;     /* a run across zones: its zone decisions, and those the zone
                                        policy decided again the same (pit_replay_zones; the caller's) */
  struct pit_spot_replay *spot;      /* the spot market layer's decisions decided again or followed
                                        (pit_replay_spot; the caller's, borrowed; NULL: not asked) */
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
/* A replay as `pitstop simulate --replay` prints it (src/policy/replay_fmt.c):
 * one JSON object on a line (PIT_EIO when f cannot take it), or the table's
 * head: both sides' resize decisions, whether they agree, the two costs. */
int pit_replay_write_json(FILE *f, const char *events, const struct pit_replay *r, struct pit_err *e);
void pit_replay_write_head(FILE *f, const char *events, const char *policy, const char *types,
                           const struct pit_replay *r);

/* ---------------- 2. spot policies ---------------- */

enum pit_spot_mode { PIT_SPOT_IDLE = 0, PIT_SPOT_SPOT, PIT_SPOT_OD };
const char *pit_spot_mode_name(enum pit_spot_mode m); /* "idle" "spot" "on_demand" */

/* What a spot policy sees at the start of a tick. Pure data; times in hours,
 * already on the model's tick grid. */
struct pit_spot_state {
  double t_h;                 /* elapsed since the job was submitted */
  double done_h;              /* compute done */
  double job_h;               /* compute the job needs */
  double deadline_h;          /* from submission */
  double restart_h;           /* overhead of every instance start */
  double tick_h;              /* decision granularity */
  int spot_avail;             /* a spot instance can be had (or kept) this tick */
  enum pit_spot_mode mode;    /* what the job holds now (spot already dropped if reclaimed) */
  double overhead_left_h;     /* of the current instance's start, still to pass */
  double price_h, spot_price_h;
  double avail_seen;          /* share of the ticks so far with spot available (0.5 before any) */
  double run_seen_h;          /* mean length of the spans of spot availability seen so far, the
                                 current one included (0: none seen yet) */
  double spot_share;          /* share of the job's nodes spot would hold now (many nodes: the trace's
                                 count / nodes, at most 1); 0 is read as 1 (one node) */
  double avail_for_h;         /* how long spot has been available without a break, this tick included
                                 (0: away); NaN: not known (live, while no spot node is held) */
};

enum pit_spot_policy {
  PIT_SPOT_PITSTOP = 0,       /* pitstop's deadline-aware policy */
  PIT_SPOT_ON_DEMAND,         /* on-demand from start to end */
  PIT_SPOT_GREEDY,            /* spot while available, idle while the slack lasts, then on-demand */
  PIT_SPOT_UNIFORM,           /* uniform progress (Can't Be Late, NSDI '24) with its restart rules */
  PIT_SPOT_NPOLICIES
};
const char *pit_spot_policy_name(enum pit_spot_policy p); /* "pitstop" "on_demand" "greedy" "uniform_progress" */

/* Pure: the same state always gives the same choice; never chooses spot
 * when s->spot_avail is 0. */
enum pit_spot_mode pit_spot_decide(enum pit_spot_policy p, const struct pit_spot_state *s);
/* ---- the spot market live and replayed (`pitstop run`'s market layer; policy_spot_replay.c) ----
 * What the market layer of a live run asked the spot policy on: the state, the
 * policy, and whether the job was running then (a decision point with the nodes
 * up: a running job is never made idle, on-demand instead). Recorded with each
 * decision it took (the record's "inputs"), so `pitstop simulate --replay`
 * decides it again. */
struct pit_spot_in {
  enum pit_spot_policy policy;
  int running;
  struct pit_spot_state s;
};
/* Pure: pit_spot_decide on in->s, idle turned to on-demand while running; what
 * the live market layer and its replay both ask. */
enum pit_spot_mode pit_spot_in_decide(const struct pit_spot_in *in);
/* in as one JSON object into buf (n bytes): every field, numbers with 17
 * significant digits (read back exactly), NaN as null; PIT_EARG when it does not
 * fit or a number is infinite. */
int pit_spot_in_json(const struct pit_spot_in *in, char *buf, size_t n, struct pit_err *e);
/* The inverse: every key required (PIT_EFORMAT naming the key). */
int pit_spot_in_parse(struct pit_spot_in *in, const char *json, struct pit_err *e);
/* The spot market layer's decisions of a run (policy "spot", or any with a
 * "spot_mode"): those recorded with their inputs decided again (again, same:
 * those choosing what the run chose), the rest followed (recorded before the
 * inputs were, or not the policy's: before anything was measured, on-demand
 * after 16 failed spot starts). diff: the first PIT_SPOT_DIFF_MAX that differ. */
#define PIT_SPOT_DIFF_MAX 8
struct pit_spot_replay {
  int n, again, same, followed, ndiff;
  struct pit_spot_diff {
    int64_t step;
    double t;
    enum pit_spot_mode recorded, again;
  } diff[PIT_SPOT_DIFF_MAX];
};
/* Errors: a decision whose inputs or spot_mode are malformed (naming events, the
 * step and the key). */
int pit_replay_spot(const struct pit_runlog *log, const char *events, struct pit_spot_replay *r, struct pit_err *e);
/* The share of ticks with spot seen after t_h hours, drawn toward 1/2 by a prior worth
 * half of slack0_h (the slack at submission) in ticks; seen as is when either is <= 0. */
double pit_spot_prior_seen(double seen, double t_h, double slack0_h, double tick_h);

/* ---------------- fleet policies (the fleet model: section 6 of pitstop/sim.h) ---------------- */

/* A membership: spot + od nodes of pool (idle: spot + od == 0). */
struct pit_sim_member { int pool, spot, od; };

/* What a fleet policy sees at the start of a tick (after reclaims). Arrays of
 * npools, owned by the simulator. Hours on the tick grid; done_h and job_h in
 * hours of the job on `nodes` nodes. */
struct pit_fleet_view {
  double t_h, done_h, job_h, deadline_h, restart_h, tick_h;
  int npools, nodes, nmin, nmax;
  double sigma, kappa;
  const int *count;               /* spot nodes each pool can give now */
  const double *price_h, *spot_price_h;
  const double *avail_seen;       /* share of the ticks so far with count >= 1 (0.5 before any) */
  const double *span_seen_h;      /* mean span of availability seen (0: none) */
  const double *avail_for_h;      /* how long each pool's spot has been available without a break (0: away) */
  const double *fall_gap_h;       /* time so far / (falls of each pool's spot count + 1): how long a count
                                     lasts there, for growing within nmin..nmax (NULL: not known) */
  const double *count_for_h;      /* how long each pool's spot count has held its value (NULL: not known) */
  double any_seen;                /* share of the ticks so far with spot in some pool (0.5 before any) */
  const double *move_h;           /* time a move out of pool p adds (transfer) */
  const double *move_usd;         /* egress of a move out of pool p */
  struct pit_sim_member cur;      /* what the job holds (survivors of a reclaim) */
  int reclaimed;                  /* nodes reclaimed at this tick */
  int ckpt_pool;                  /* where the checkpoint is (-1: nowhere yet) */
  double overhead_left_h;
  uint64_t seed;
  int fixed_pool, fixed_spot;     /* PIT_FLEET_FIXED: the membership held (fixed_spot of nodes on spot) */
};

enum pit_fleet_policy {
  PIT_FLEET_PITSTOP = 0,          /* pitstop: zones, markets, when to move and wait (policy_fleet.c) */
  PIT_FLEET_ON_DEMAND,            /* `nodes` on-demand in the cheapest pool */
  PIT_FLEET_GREEDY,               /* the single-node greedy on the whole job, one pool */
  PIT_FLEET_UNIFORM,              /* uniform progress on the whole job, one pool */
  PIT_FLEET_SKYNOMAD,             /* multi-zone, in the manner of SkyNomad (arXiv 2601.06520) */
  PIT_FLEET_ROSS,                 /* randomized, in the manner of ROSS (arXiv 2601.14612) */
  PIT_FLEET_FIXED,                /* one membership held whenever the trace allows (best fixed) */
  PIT_FLEET_NPOLICIES
};
const char *pit_fleet_policy_name(enum pit_fleet_policy p);
/* Pure: the same view gives the same membership. Never more spot nodes than
 * count[pool]; nodes within nmin..nmax or idle. */
struct pit_sim_member pit_fleet_decide(enum pit_fleet_policy p, const struct pit_fleet_view *v);

/* ---------------- zones live (pitstop run across zones; policy_zones.c) ----------------
 * What `pitstop run` has seen of each zone of one instance type, and the fleet
 * policy asked on it (pit_zone_decide builds the pit_fleet_view and asks
 * PIT_FLEET_PITSTOP). A zone never tried is taken to give spot to every node,
 * available since the run began (its span: the run so far); a zone where a spot
 * start failed or a node was reclaimed gives what it held then (known). The
 * checkpoint is on storage every zone reaches: a move costs a restart, no transfer. */
struct pit_zone_obs {
  char name[PIT_ZONE_MAX];
  int known;                  /* a spot start failed there or a reclaim came: cap is what it gave */
  int cap;                    /* spot nodes it gives (known) */
  double up_s;                /* seconds of spot held there, its spans' total (the current one included) */
  int nup;                    /* those spans */
  double price_h, spot_price_h;
};
struct pit_zone_in {
  double t_s, deadline_s;     /* run seconds now; the deadline */
  double tp_s, restart_s, tick_s; /* measured PIT time (the membership's), restart, decision spacing */
  int64_t step, total_steps;
  int measured;               /* 0: nothing measured yet (PIT time, job length): spot first, the rest on-demand */
  int running;                /* the job runs (a decision point): never idle it */
  double any_seen;            /* share of the run with spot held in some zone (0.5: none seen) */
  int nodes, nzones;          /* nodes: the job's count (job length and tp_s on it) */
  int nmin, nmax;             /* the count chosen within (pitstop run --nnodes MIN:MAX with the zone layer
                                 owning the count); nmin == nmax == nodes: the job's count, not chosen */
  int tp_nodes;               /* the count tp_s was measured on (nodes: the job's own) */
  double sigma, kappa;        /* the scaling fit X(n) = n / (1 + sigma (n-1) + kappa n (n-1)) (0, 0: linear) */
  struct pit_zone_obs z[PIT_ZONES_MAX];
  struct pit_sim_member cur;  /* what the job holds: zone index, spot and on-demand nodes (none: 0, 0, 0) */
  int ckpt_zone;              /* the zone of the checkpoint's last generation (-1: none yet) */
  int reclaimed;              /* spot nodes reclaimed (a notice, or lost) since the previous zone decision;
                                 cur then holds the survivors: the fleet rule's reclaim, as the simulator's */
};
/* Pure: the same inputs give the same membership (zone, spot, on-demand), of
 * nmin..nmax nodes (the fleet policy's count rule) or, nothing measured yet, nodes. */
struct pit_sim_member pit_zone_decide(const struct pit_zone_in *in);
/* X(n) / X(N) under the scaling fit (sigma, kappa; 0, 0: n / N): the share of N nodes' rate n give. */
double pit_usl_share(double sigma, double kappa, int n, int N);
/* The decision in words (one line, the zones weighed). */
void pit_zone_reason(const struct pit_zone_in *in, struct pit_sim_member to, char *buf, size_t n);
/* in as one JSON object into buf (n bytes); PIT_EARG when it does not fit. */
int pit_zone_in_json(const struct pit_zone_in *in, char *buf, size_t n, struct pit_err *e);
/* The inverse (every key required but nmin, nmax, tp_nodes: nodes when absent, and sigma, kappa:
 * 0: the records written before the count was chosen); PIT_EFORMAT naming the key. */
int pit_zone_in_parse(struct pit_zone_in *in, const char *json, struct pit_err *e);
/* simulate --replay of a run across zones: every zone decision of the events
 * file decided again from its inputs; *n decisions, *same of them the same
 * (zone, spot and on-demand nodes); first: the first that differs, in words. */
int pit_replay_zones(const char *events, int *n, int *same, char *first, size_t nfirst, struct pit_err *e);

#endif
