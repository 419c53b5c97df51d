/* bench/spot-scale/oracle.h — what a single-node spot policy could reach if it knew
 * more than it can, to tell how much of its gap to the optimum any online policy
 * could close (docs/spot-limits.md, "How far an online policy can get"):
 *  - the Bayes oracle: the policy that minimises the expected cost under a
 *    semi-Markov model of the trace (spans of availability and of absence drawn
 *    independently from the trace's own span lengths, its whole length known),
 *    solved exactly by DP over (tick, work, held instance and its restart left,
 *    availability, its age in ticks up to ORACLE_AGE); it keeps the safety rules
 *    of pitstop's policy (pit_sim_optimum_safe), so it never misses;
 *  - the model's world: a trace redrawn from that model, where the oracle is the
 *    best online policy there is.
 * Bench code, not the library: it prints nothing and exits nowhere. */
#ifndef BENCH_SPOT_ORACLE_H
#define BENCH_SPOT_ORACLE_H

#include <stdint.h>

#include "pitstop/sim.h"

#define ORACLE_AGE 100

/* p[a][b][j]: the chance that a span of availability a (0 away, 1 there) that has
 * lasted j ticks lasts one more (j = ORACLE_AGE: any older, geometric with the
 * mean residual of the spans that long), given b, the bucket of the previous
 * span of the same kind (nb 2: 1 when it lasted at least th[a] ticks, the median
 * span of that kind capped at ORACLE_AGE; nb 1: one bucket, spans independent). */
struct oracle_model {
  int nb, th[2];
  double p[2][2][ORACLE_AGE + 1];
};

/* Fits the model to every completed span of t (the first and last, cut by the
 * trace's ends, are left out); prev_bucket: two buckets by the previous span of
 * the kind (the spans' dependence on the one before), else one. -1 when t has no
 * span of one kind. */
int oracle_fit(struct oracle_model *m, const struct pit_trace *t, int prev_bucket);

/* Runs case c (one node) under the Bayes oracle of model m, in pit_sim_run's
 * model; the age of the availability at the start is read from the trace before
 * the case's offset (wrapped, as every trace is). *cost, *met as pit_sim_run's;
 * *segments: how many segments the choices were computed in (1: all at once).
 * Returns 0; 1 when the DP has more than max_cells states or needs more than
 * max_bytes even with checkpoints (nothing run); -1 out of memory. */
int oracle_run(const struct pit_sim_case *c, const struct oracle_model *m, double max_cells, double max_bytes,
               double *cost, int *met, int *segments);

/* t's counts redrawn in place: spans alternate from a random kind, each length
 * drawn from t's own spans of that kind (with replacement), seeded. 1 when t has
 * no completed span of one kind (t left as it is), -1 out of memory. */
int oracle_synth(struct pit_trace *t, uint64_t seed);

#endif
