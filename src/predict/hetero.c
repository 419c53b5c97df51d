/* hetero.c — the step time of a membership of several instance types from
 * each type's measured compute time per sample, using the compute/wait split
 * the records carry (compute_s is the work; wait_s is time lost to slower
 * ranks and the collective):
 *   equal shares: every rank takes batch/R samples, and in synchronous data
 *     parallelism the slowest rank sets the pace:
 *       step = max_type(compute_per_sample) · batch / R + comm_s;
 *   auto shares: each rank's share is proportional to its speed, so all ranks
 *     finish together and the speeds add:
 *       step = batch / Σ_ranks (1 / compute_per_sample) + comm_s.
 * Example: 2 ranks at 1 ms/sample and 2 at 2 ms/sample, batch 64, comm 5 ms:
 *   equal: 2 ms · 16 + 5 = 37 ms; auto: 64 / (2/1 + 2/2) ms + 5 = 26.3 ms.
 * Invariant: never prints; *model is a static string. */
#include <math.h>

#include "pitstop/predict.h"

int pit_hetero_step(const struct pit_hetero_type *t, int nt, int64_t batch, double comm_s, enum pit_share_mode mode,
                    double *step_s, const char **model, struct pit_err *e) {
  *step_s = NAN;
  *model = "";
  int ranks = 0;
  double slowest = 0, speed = 0;
  for (int i = 0; i < nt; i++) {
    if (t[i].ranks <= 0)
      continue;
    if (!(t[i].compute_per_sample > 0))
      return pit_err_set(e, PIT_EARG, "instance type %d: compute time per sample must be positive", i + 1);
    ranks += t[i].ranks;
    if (t[i].compute_per_sample > slowest)
      slowest = t[i].compute_per_sample;
    speed += t[i].ranks / t[i].compute_per_sample;
  }
  if (ranks == 0 || batch <= 0)
    return pit_err_set(e, PIT_EARG, "a membership needs ranks and a global batch");
  double c = isfinite(comm_s) && comm_s > 0 ? comm_s : 0;
  if (mode == PIT_SHARES_EQUAL) {
    *step_s = slowest * (double)batch / ranks + c;
    *model = "equal shares: the slowest rank sets the pace";
  } else {
    *step_s = (double)batch / speed + c;
    *model = "auto shares: the ranks' speeds add";
  }
  return 0;
}
