/* pitstop/sim.h — `pitstop simulate`: a job on spot and on-demand nodes driven
 * by a simulated clock over a trace of spot availability, judged against
 * baselines and the exact optimum (docs/simulate.md).
 *
 * Pieces, each usable alone:
 *  1. traces: the Can't Be Late JSON traces as they are ({"metadata":
 *     {"gap_seconds": G}, "data": [count, ...]}) and a CSV of users' own
 *     traces (time_s,itype,zone,available,spot_price_h);
 *  2. spot policies: pure functions state → choice (idle, spot, on-demand):
 *     pitstop's deadline-aware policy and the baselines on_demand, greedy and
 *     uniform_progress (Can't Be Late, NSDI '24), declared in pitstop/policy.h
 *     (src/policy: `pitstop run` asks the same code live);
 *  3. the simulator: one job replayed tick by tick under a policy;
 *  4. the optimum: the whole trace known in advance, solved exactly by
 *     dynamic programming over ticks × work done;
 *  5. many nodes (N nodes, the trace's count caps the spot ones) and charts.
 *
 * The model (the same for every policy and the optimum, so the optimum is the
 * exact lower bound of every online policy): time runs in ticks of the trace's
 * gap; the job needs ceil(job_h / tick) ticks of compute and must finish by
 * floor(deadline_h / tick) ticks; every start of an instance (the first, a
 * switch, a restart after a reclaim) spends ceil(restart_h / tick) paid ticks
 * without progress; a spot instance is reclaimed at the first tick the trace
 * says 0 (the progress made stays: the job checkpoints, the restart overhead
 * models what is redone); on-demand is always available. Cost: price × ticks
 * held, per-second billing (no minimum per start).
 *
 * Invariants: functions never print; a loaded trace has n >= 1 ticks, gap_s
 * > 0, counts >= 0.
 */
#ifndef PITSTOP_SIM_H
#define PITSTOP_SIM_H

#include <stdint.h>
#include <stdio.h>

#include "pitstop/catalog.h"
#include "pitstop/policy.h"
#include "pitstop/util.h"

/* ---------------- 1. traces ---------------- */

/* counts and price: malloc'd arrays of n, owned by the trace (pit_trace_release). */
struct pit_trace {
  char path[512];
  char itype[PIT_NAME_MAX];   /* instance type ("" unknown): from the CSV, or the JSON path's kind */
  char zone[PIT_NAME_MAX];    /* "" unknown */
  double gap_s;               /* seconds per tick, > 0 */
  int n;                      /* ticks */
  int *count;                 /* spot instances available at each tick, >= 0 */
  double *spot_price_h;       /* CSV only: spot US$/h per tick (NaN: not given); NULL for JSON */
};
void pit_trace_init(struct pit_trace *t);
void pit_trace_release(struct pit_trace *t);
/* Loads a trace: JSON (first non-blank byte '{') or CSV. Errors name the file
 * (and line for CSV): truncated or malformed file, gap <= 0, a negative count,
 * no tick, CSV times not rising by one constant gap, several types or zones
 * in one CSV. */
int pit_trace_load(struct pit_trace *t, const char *path, struct pit_err *e);
/* Every trace of a file: a JSON file is one; a CSV may hold several zones or
 * types (a region), one trace per (itype, zone) in the order first seen, each
 * with its own constant gap. *out: malloc'd array of *n (each released with
 * pit_trace_release, then the array freed). Errors as pit_trace_load's. */
int pit_trace_load_all(const char *path, struct pit_trace **out, int *n, struct pit_err *e);
/* The AWS/GCP instance type of a Can't Be Late kind in a path ("v100_1" →
 * "p3.2xlarge", "k80_8" → "p2.8xlarge", "intel_64" → "r5.16xlarge", "c3-88" →
 * "c3-highcpu-88"); NULL when none is known. */
const char *pit_trace_kind_itype(const char *path);
/* Mean count and the share of ticks with a count > 0. */
void pit_trace_stats(const struct pit_trace *t, double *mean, double *avail_frac);
/* The largest count of t (0 for a trace that never has spot). */
int pit_trace_max(const struct pit_trace *t);
/* Every count of t × mul / div (mul, div >= 1): the capacity read at another
 * scale (a count of one request read as mul nodes; div 2: a zone gives half), an
 * ASSUMPTION the caller states. 0, or PIT_EARG (t unchanged) when a count would
 * pass 10^6 nodes. */
int pit_trace_scale(struct pit_trace *t, int mul, int div, struct pit_err *e);

/* ---------------- 3. the simulator ---------------- */

struct pit_sim_case {
  const struct pit_trace *trace;
  int offset;                 /* tick of the trace the job starts at (the trace wraps around) */
  double job_h, deadline_h, restart_h;
  double price_h, spot_price_h; /* US$ per hour per node */
  int nodes;                  /* 1: single node; > 1: see pit_sim_multi */
};

/* The discrete model of a case (see the top of this file). */
struct pit_sim_grid {
  double tick_h;
  int64_t work, deadline, restart; /* ticks */
};
int pit_sim_grid(const struct pit_sim_case *c, struct pit_sim_grid *g, struct pit_err *e);
/* Spot available at tick t of the case (the trace wrapped). */
int pit_sim_avail(const struct pit_sim_case *c, int64_t t);

struct pit_sim_change { double t_h; enum pit_spot_mode to; };

/* A simulated job. changes, done_at, mode_at: malloc'd, owned (pit_sim_result_release). */
struct pit_sim_result {
  double cost;                /* US$ */
  double finish_h;            /* INFINITY: not finished */
  int deadline_met;
  double spot_h, od_h;        /* instance hours held */
  int preemptions;            /* spot reclaims suffered */
  int nchanges;               /* decisions that changed what the job holds */
  struct pit_sim_change *changes;
  int nticks;                 /* ticks simulated (for charts) */
  float *done_at;             /* compute done (h) after each tick; NULL if not kept */
  unsigned char *mode_at;     /* enum pit_spot_mode of each tick; NULL if not kept */
};
void pit_sim_result_init(struct pit_sim_result *r);
void pit_sim_result_release(struct pit_sim_result *r);

/* Replays case c under policy p. keep_path: fill done_at/mode_at. */
int pit_sim_run(const struct pit_sim_case *c, enum pit_spot_policy p, int keep_path, struct pit_sim_result *r,
                struct pit_err *e);

/* ---------------- 4. the optimum ---------------- */

/* The least cost of any sequence of choices that finishes by the deadline,
 * knowing the whole trace: DP over (tick, work done, held mode), O(ticks ×
 * work) time, O(restart × work) memory. r->finish_h is the earliest finish
 * among the least-cost schedules; with at most 2^26 states the schedule is
 * rebuilt (spot_h, od_h, changes; done_at/mode_at kept with keep_path), else
 * spot_h and od_h are NaN. A case on-demand
 * cannot meet: r->deadline_met 0, cost INFINITY. */
int pit_sim_optimum(const struct pit_sim_case *c, int keep_path, struct pit_sim_result *r, struct pit_err *e);
/* The safe optimum: the least cost of a schedule that, at every tick, could still
 * finish on on-demand if spot went away for good (held spot: slack >= one restart;
 * after a tick idle: the same; a spot start: two). Every policy that meets the
 * deadline on every trace keeps that, so none costs less (pitstop's and greedy's
 * guards are these rules); pit_sim_optimum <= this. Same outputs as pit_sim_optimum. */
int pit_sim_optimum_safe(const struct pit_sim_case *c, int keep_path, struct pit_sim_result *r, struct pit_err *e);

/* ---------------- 5. many nodes, charts ---------------- */

/* N = c->nodes nodes each needing the job's compute in lock-step
 * (data-parallel): each tick the policy is asked once for the whole job
 * (spot "available" when the trace counts >= 1); the trace's count caps the
 * spot nodes and the rest of the N run on-demand when the choice is spot (a
 * mixed membership). A reclaim (count below the spot nodes held) or any
 * change of membership restarts the job (restart overhead, all nodes paid).
 * spot_h/od_h are node-hours. O(ticks) time whatever N; the throughput does
 * not depend on the membership (no scaling fit: not done). With nodes = 1 it
 * is pit_sim_run. *peak_bytes (may be NULL): the bytes the simulation held,
 * trace included. */
int pit_sim_multi(const struct pit_sim_case *c, enum pit_spot_policy p, struct pit_sim_result *r,
                  size_t *peak_bytes, struct pit_err *e);

/* A chart (PNG or SVG by out's suffix) of work done over time against the
 * deadline line, each result's spot/on-demand use as shaded bands; gnuplot
 * through pit_child_run (PIT_GNUPLOT or "gnuplot"). names[i] labels res[i]. */
int pit_sim_chart(const struct pit_sim_case *c, const struct pit_sim_result *res, const char *const *names, int n,
                  const char *out, struct pit_err *e);

/* ---------------- 6. fleets: many nodes, zones and types ---------------- */
/* A study: several pools (one trace each: a zone × an instance type, with its
 * own prices), a data-parallel job of job_h hours on `nodes` nodes at the
 * scaling fit's rate, and memberships the policy chooses tick by tick.
 * The model (src/sim/fleet.c; the same for every policy and for the limit):
 *  - a membership is spot + od nodes of ONE pool (a job does not span zones:
 *    a change of pool is a move of the whole job); each node is listed with
 *    its pool, market and state (booting, running, reclaimed, stopped);
 *  - a membership of n nodes does X(n) / X(nodes) ticks of the job's work per
 *    tick, X(n) = n / (1 + sigma (n − 1) + kappa n (n − 1)) (USL; linear with
 *    sigma = kappa = 0);
 *  - a pool's spot count below the spot nodes held reclaims the excess (the
 *    newest first) at the start of the tick; the job goes on with the
 *    survivors and whatever the policy adds, after a restart;
 *  - every change of membership (start, growth, shrink, reclaim, move) costs
 *    restart ticks without progress, every node held paid; a move to another
 *    pool also waits ckpt_gb × 8 / net_gbps of the pool left (rounded up to
 *    ticks) and pays ckpt_gb × its egress_usd_gb;
 *  - each node is billed once, when it stops, through pit_itype_billed_s
 *    (billed seconds of its type: billing granularity and minimum), at its
 *    market's price. Time O(ticks × (pools + nodes changed)).
 * Invariants: functions never print; all pools have the trace gap of pools[0]. */

struct pit_sim_pool {
  const struct pit_trace *trace;
  const struct pit_itype *itype;  /* billing rule; NULL: per second, no minimum */
  double price_h, spot_price_h;   /* US$ per node-hour */
  int spot_assumed;               /* spot_price_h = 0.3 x on-demand: no spot price given or in the installed catalog */
  int count_scale;                /* the trace's counts were read × this (an assumption; 0 or 1: as they are) */
  double egress_usd_gb;           /* a checkpoint leaving this pool's zone, US$/GB (0: free) */
  double net_gbps;                /* its bandwidth out (<= 0 or NaN: the move takes no time) */
  char zone[PIT_NAME_MAX];
};

struct pit_sim_study {
  const struct pit_sim_pool *pools;
  int npools;
  int offset;                     /* tick the job starts at (every trace wraps) */
  double job_h;                   /* hours of compute on `nodes` nodes */
  double deadline_h, restart_h;
  int nodes, nmin, nmax;          /* the job's size and the node counts a policy may use */
  double sigma, kappa;            /* USL fit (0, 0: linear) */
  double ckpt_gb;                 /* checkpoint moved on a change of pool */
  uint64_t seed;                  /* randomized policies (ROSS) */
};

enum pit_simnode_state { PIT_SNODE_BOOTING = 0, PIT_SNODE_RUNNING, PIT_SNODE_RECLAIMED, PIT_SNODE_STOPPED };
struct pit_sim_node { int pool; unsigned char spot, state; int64_t start; /* tick */ };

struct pit_fleet_change { double t_h; struct pit_sim_member to; int reclaimed; };
struct pit_fleet_count { int nodes; double h; }; /* hours held at a node count */
struct pit_fleet_result {
  double cost, finish_h;          /* finish_h INFINITY: not finished */
  int deadline_met;
  double spot_h, od_h;            /* node-hours */
  double egress_usd;
  int reclaimed, moves, nchanges; /* nodes reclaimed, changes of pool, changes of membership */
  struct pit_fleet_change *changes;
  struct pit_fleet_count *counts; /* hours held at each node count held (> 0), by count rising */
  int ncounts;
  int nticks;                     /* with keep_path: done_at and member_at of each tick */
  float *done_at;
  struct pit_sim_member *member_at;
  size_t peak_bytes;              /* bytes the simulation held (node lists, per-pool state, path) */
  int peak_nodes;
};
void pit_fleet_result_init(struct pit_fleet_result *r);
void pit_fleet_result_release(struct pit_fleet_result *r);

/* Checks a study (pools, one tick, prices, node counts); messages name the trace's file. */
int pit_fleet_check(const struct pit_sim_study *s, struct pit_err *e);
int pit_fleet_run(const struct pit_sim_study *s, enum pit_fleet_policy p, int fixed_pool, int fixed_spot,
                  int keep_path, struct pit_fleet_result *r, struct pit_err *e);
/* The cheapest fixed membership (pool, spot share 0, 1/4, .., 1 of `nodes`) that meets the deadline. */
int pit_fleet_best_fixed(const struct pit_sim_study *s, struct pit_fleet_result *r, int *pool, int *spot,
                         struct pit_err *e);

/* The limit (src/sim/limit.c). kind: "exact" (DP over ticks × work × memberships,
 * when the study is small: every membership's work per tick an integer number of
 * units — linear throughput, or one node count — and at most max_cells states)
 * or "bound" (a relaxation solved exactly: no policy in the model costs less;
 * the proof is in docs/simulate.md). */
int pit_fleet_exact(const struct pit_sim_study *s, double max_cells, double *cost, int *done, struct pit_err *e);
/* The same DP; every_share 0 (pit_fleet_exact) keeps only the spot shares that can be
 * optimal (0 and the counts the trace takes, limit.c says why), 1 every share 0..n. */
int pit_fleet_exact_shares(const struct pit_sim_study *s, double max_cells, int every_share, double *cost, int *done,
                           struct pit_err *e);
int pit_fleet_bound(const struct pit_sim_study *s, double *cost, struct pit_err *e);
int pit_fleet_limit(const struct pit_sim_study *s, double max_cells, double *cost, const char **kind,
                    struct pit_err *e);
/* A chart of fleet results (kept paths): work done against the deadline, and
 * the first result's nodes by market and the zone held over time (gnuplot, as
 * pit_sim_chart: out whole or untouched, .png or .svg). */
int pit_fleet_chart(const struct pit_sim_study *s, const struct pit_fleet_result *res, const char *const *names, int n,
                    const char *out, struct pit_err *e);
/* X(n) / X(nodes): a membership of n nodes' ticks of work per tick. */
double pit_fleet_rate(const struct pit_sim_study *s, int n);

/* ---------------- 6. a study as pitstop simulate prints it (src/sim/sim_fmt.c) ---------------- */

/* One node: the case c, where its trace and prices come from, and every result:
 * res[0] the policy, then the baselines, res[n-1] the optimum (cost NaN when
 * multi: several nodes, no optimum; its row is then left out and the limit's
 * kind is "none"). names[i] names res[i]. */
struct pit_sim_report {
  const struct pit_sim_case *c;
  const char *trace, *itype;      /* the trace's path as given; its type ("": unknown) */
  double tick_s;
  int64_t restart_ticks;
  const char *prices_from;
  const struct pit_sim_result *res;
  const char *const *names;
  int n, multi;
};
/* A fleet: the study s, its limit (kind "exact" or "bound"), every result:
 * res[0] the policy, then the baselines, res[n-1] the best fixed membership
 * (fixed_pool, -1: none, with fixed_spot of its nodes on spot). */
struct pit_fleet_report {
  const struct pit_sim_study *s;
  double limit;
  const char *limit_kind;
  const struct pit_fleet_result *res;
  const char *const *names;
  int n, fixed_pool, fixed_spot;
};
/* The table (json 0) or one JSON object on a line (docs/simulate.md) to f;
 * PIT_EIO when f cannot take the JSON. */
int pit_sim_report_write(FILE *f, const struct pit_sim_report *r, int json, struct pit_err *e);
int pit_fleet_report_write(FILE *f, const struct pit_fleet_report *r, int json, struct pit_err *e);

/* ---------------- 7. a whole study (src/sim/study.c) ---------------- */

/* The mean of a CSV trace's own spot prices; NaN when it has none. */
double pit_trace_mean_spot(const struct pit_trace *t);
/* The prices of a one-node case into *price and *spot (NaN: not given) and
 * what they come from into *from (static text): the trace's mean spot price
 * over all; catalog (itype's row, else the trace's type); without catalog and
 * without given prices, installed (a path, or NULL) when it holds the trace's
 * type (spot 0.3 x on-demand where it has none); else 1 and 0.3 x on-demand.
 * Errors name the trace and the catalog. */
int pit_sim_case_prices(const struct pit_trace *tr, const char *catalog, const char *installed, const char *itype,
                        double *price, double *spot, const char **from, struct pit_err *e);
/* pitstop's policy, the baselines on_demand, greedy, uniform_progress and the
 * optimum over c, into res[0..4] (initialised by the caller): kept paths with
 * keep; several nodes (pit_sim_multi): no optimum (its cost and finish NaN),
 * *bytes what the policy's simulation held. */
#define PIT_SIM_NCOMPARE 5
int pit_sim_compare(const struct pit_sim_case *c, int keep, struct pit_sim_result res[PIT_SIM_NCOMPARE],
                    size_t *bytes, struct pit_err *e);

/* A fleet's inputs: trace files, each with its zone and type ("": from the trace). */
#define PIT_STUDY_MAX_TRACES 64
struct pit_study_in {
  int n;
  char path[PIT_STUDY_MAX_TRACES][1024], zone[PIT_STUDY_MAX_TRACES][PIT_NAME_MAX],
      itype[PIT_STUDY_MAX_TRACES][PIT_NAME_MAX];
};
/* A study file (one trace a line, PATH [ZONE [ITYPE]], '#' comments, paths
 * relative to the file) appended to in; errors name the file and line. */
int pit_study_read(const char *file, struct pit_study_in *in, struct pit_err *e);
/* How a fleet's pools are priced: cat (loaded from catpath, NULL: none; catalog:
 * the one given, whose missing types are errors), the type to price (NULL: each
 * trace's), prices given (NaN: the catalog's). */
struct pit_fleet_prices {
  const struct pit_catalog *cat;
  const char *catpath, *catalog, *itype;
  double price_h, spot_price_h;
};
/* Every trace of every file of in (a CSV may hold several zones) into
 * tr[0..*nt-1] (PIT_STUDY_MAX_TRACES at most) and one pool each: its zone (the
 * input's, the trace's, or its file name's up to '_'), type and prices (a
 * trace's own spot prices win). The caller releases tr[0..*nt-1]. */
int pit_fleet_pools(const struct pit_study_in *in, const struct pit_fleet_prices *fp, struct pit_trace *tr,
                    struct pit_sim_pool *pool, int *nt, struct pit_err *e);
/* The study checked, then pitstop's fleet policy, the baselines on_demand,
 * greedy, uniform_progress, skynomad, ross and the best fixed membership into
 * res[0..6] (initialised by the caller), and the limit; r (names aside) says it all. */
#define PIT_FLEET_NCOMPARE 7
int pit_fleet_compare(const struct pit_sim_study *st, struct pit_fleet_report *r,
                      struct pit_fleet_result res[PIT_FLEET_NCOMPARE], struct pit_err *e);

#endif
