/* observe.h — private to src/policy/ and the controller (src/control), which
 * feeds it: what the cost and time policies observe (observe.c). */
#ifndef PIT_POLICY_OBSERVE_H
#define PIT_POLICY_OBSERVE_H

#include "pitstop/policy.h"

/* What the controller has seen of the workload, for the cost and time
 * policies (observe.c): this generation's step times and per-rank
 * compute/wait, the PIT time of every membership measured in the job.
 * steps is owned (ctl_obs_release). */
#define CTL_OBS_SKIP 5    /* leading iterations of a generation left out of the split */
#define CTL_OBS_EVERY 10  /* steadiness checked every this many iterations */
struct ctl_obs {
  double *steps;
  size_t n, cap;
  double csum[PIT_POLICY_NODES_MAX], wsum[PIT_POLICY_NODES_MAX];
  int nranks, nsplit;
  double *pc;             /* (nsplit, nranks): each split step's per-rank compute, for paired ratios */
  size_t cappc;           /* doubles allocated at pc */
  int64_t batch;
  int steady;
  double precision;       /* P of pit_steady_check (0.10: the policy weighs the interval) */
  int64_t cap_iters;      /* steady anyway after this many (200: the interval says how well) */
  int nmeas;
  struct pit_policy_meas meas[PIT_POLICY_MEAS_MAX];
};
void ctl_obs_init(struct ctl_obs *o);
void ctl_obs_release(struct ctl_obs *o);
/* A generation starts on cur: the series and the split start again. */
void ctl_obs_gen(struct ctl_obs *o);
/* One iteration record of a generation on membership cur. */
int ctl_obs_iter(struct ctl_obs *o, const struct pit_membership *cur, const struct pit_record *r,
                 struct pit_err *e);
/* Fills s's steady, batch, pace, meas and nodes (nodes[i] holds ranks
 * [i·slots, (i+1)·slots), as the launchers place them), with each node's
 * paired ratio: in every split step, the slowest other node's compute over
 * this node's (node compute: the mean of its ranks'), as a 95% upper bound
 * from the mean and spread of its logarithm over the steps (Student t). The
 * ratio pairs ranks within the same steps, so a pace that drifts for the
 * whole machine (load, frequency) cancels out of it. The pace and the
 * paired ratios are given only while the pace is not steady (NaN and 0
 * after): they cost O(steps so far) and only the early rule uses them. */
void ctl_obs_state(const struct ctl_obs *o, const struct pit_node *nodes, int nnodes, int slots,
                   struct pit_policy_state *s);

#endif
