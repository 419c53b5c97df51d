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
 *     uniform_progress (Can't Be Late, NSDI '24);
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

#include "pitstop/catalog.h"
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
/* The AWS/GCP instance type of a Can't Be Late kind in a path ("v100_1" →
 * "p3.2xlarge", "k80_8" → "p2.8xlarge", "intel_64" → "r5.16xlarge", "c3-88" →
 * "c3-highcpu-88"); NULL when none is known. */
const char *pit_trace_kind_itype(const char *path);
/* Mean count and the share of ticks with a count > 0. */
void pit_trace_stats(const struct pit_trace *t, double *mean, double *avail_frac);

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
 * among the least-cost schedules; with keep_path (and at most 2^26 states) the
 * schedule itself is rebuilt into changes/done_at/mode_at. A case on-demand
 * cannot meet: r->deadline_met 0, cost INFINITY. */
int pit_sim_optimum(const struct pit_sim_case *c, int keep_path, struct pit_sim_result *r, struct pit_err *e);

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

#endif
