/* ctl_measure.c — a run that only measures its membership (pit_run_opts
 * until_steady / until_iters: `pitstop profile --db DB -- CMD`, a user's own
 * command, which cannot be told `--until-steady` as pitstop train can): the
 * controller stops it itself once enough is measured, through the user's stop
 * (stop.c: an agreed checkpoint from a protocol workload, else SIGTERM, its
 * measured steps kept), with the reason as a warning and result.measured.
 *
 * Enough: the generation's step times (the observer's series, c->obs.steps:
 * each iteration record's step_s, as the store keeps them) are steady to the
 * relative 95% half-width until_steady by pit_steady_check with a floor of 50
 * iterations (pitstop train --until-steady's floor, steady.c), checked every
 * CTL_MEASURE_EVERY iterations; or until_iters iterations were read,
 * whichever comes first.
 * Invariants: it never stops a run that was not asked to measure; it asks the
 * stop once (c->measured.sig set), and only after an iteration. */
#include <math.h>

#include "control/ctl_impl.h"
#include "pitstop/predict.h"

#define CTL_MEASURE_FLOOR 50
#define CTL_MEASURE_EVERY 10

int ctl_measure_iter(struct ctl *c, struct pit_err *e) {
  const struct pit_run_opts *o = c->o;
  size_t n = c->obs.n; /* the generation's step times so far (ctl_obs_iter took this record's) */
  if ((!(o->until_steady > 0) && o->until_iters <= 0) || c->measured.sig)
    return 0;
  char why[256] = "";
  if (o->until_iters > 0 && c->gen_iters >= o->until_iters) {
    snprintf(why, sizeof why, "the cap of %lld iterations reached", (long long)o->until_iters);
  } else if (o->until_steady > 0 && n >= CTL_MEASURE_FLOOR && n % CTL_MEASURE_EVERY == 0) {
    struct pit_steady_opts so = {o->until_steady, CTL_MEASURE_FLOOR, 0};
    struct pit_steady st;
    int rc = pit_steady_check(c->obs.steps, n, &so, &st, e);
    if (rc < 0)
      return rc;
    if (st.state == PIT_STEADY_OK)
      snprintf(why, sizeof why, "steady: t_p %.4g s ± %.2g%% after %zu iterations", st.tp.mean,
               100 * st.tp.half / st.tp.mean, n);
  }
  if (!why[0])
    return 0;
  c->measured.sig = CTL_STOP_MEASURED;
  c->measured.count = 1;
  warn(c, "measured (%s): the run stops there", why);
  return 0;
}
