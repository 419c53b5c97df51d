/* test_market.c — the live spot state (src/control/market.c): spans of spot
 * availability seen by `pitstop run` (up from a spot node's start to a reclaim
 * or failed spot start, down until the next spot node), the retry spacing
 * (one tick, doubled while spot keeps failing), and the struct
 * pit_spot_state built from the run's measurements — checked field by field
 * and through pit_spot_decide on the worked example of docs/run.md "Spot"
 * (on-demand there; one tick later in the run, idle while the slack allows). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "control/control_impl.h"
#include "pitstop/sim.h"

int main(void) {
  struct ctl_spot sp;
  ctl_spot_init(&sp);
  CHECK(ctl_spot_avail(&sp, 0), "nothing seen: spot is worth a try");
  struct ctl_spot_in in = {.t = 10, .deadline_s = 100, .tp = 0.1, .restart_s = 2, .tick_s = 5, .price_h = 0.085,
                           .spot_price_h = 0.035, .step = 100, .total_steps = 500, .mode = PIT_SPOT_IDLE};
  struct pit_spot_state s;
  ctl_spot_state(&sp, &in, &s);
  CHECK_NEAR(s.avail_seen, 0.5, 1e-12, "availability before anything is seen");
  CHECK(isnan(s.avail_for_h), "nothing seen: no age");
  CHECK(s.run_seen_h == 0, "no span seen");
  CHECK_NEAR(s.job_h * 3600, 50, 1e-9, "job = total steps x t_p");
  CHECK_NEAR((s.job_h - s.done_h) * 3600, 40, 1e-9, "work left = steps left x t_p");
  CHECK_NEAR(s.deadline_h * 3600, 100, 1e-9, "deadline");
  CHECK_NEAR(s.restart_h * 3600, 2, 1e-9, "restart");
  CHECK_NEAR(s.tick_h * 3600, 5, 1e-9, "tick");

  /* up 2..12 (a spot node), reclaimed at 12, a failed try at 17 (retry 5 → 10), up again 30..40 */
  ctl_spot_up(&sp, 2);
  ctl_spot_up(&sp, 4); /* a second spot node: the same span */
  CHECK(ctl_spot_avail(&sp, 5), "up");
  ctl_spot_down(&sp, 12, 5);
  CHECK(!ctl_spot_avail(&sp, 16.9), "away for one retry spacing");
  CHECK(ctl_spot_avail(&sp, 17), "tried again after it");
  ctl_spot_down(&sp, 17, 5); /* the try failed */
  CHECK(!ctl_spot_avail(&sp, 26.9) && ctl_spot_avail(&sp, 27), "the spacing doubled while it keeps failing");
  in.t = 20;
  ctl_spot_state(&sp, &in, &s);
  CHECK_NEAR(s.avail_seen, 10.0 / 18.0, 1e-12, "10 s up of 18 s seen");
  CHECK_NEAR(s.run_seen_h * 3600, 10, 1e-9, "one span of 10 s");
  CHECK(!s.spot_avail, "away at 20");
  CHECK(isnan(s.avail_for_h), "away: how long spot has been back is not known");
  ctl_spot_up(&sp, 30);
  in.t = 40;
  ctl_spot_state(&sp, &in, &s);
  CHECK_NEAR(s.avail_seen, 20.0 / 38.0, 1e-12, "20 s up of 38 s (the current span counts)");
  CHECK_NEAR(s.run_seen_h * 3600, 10, 1e-9, "two spans of 10 s");
  CHECK(s.spot_avail, "up at 40");
  CHECK_NEAR(s.avail_for_h * 3600, 10, 1e-9, "up for 10 s (since the spot node came up at 30)");

  /* docs/run.md's worked example: t 7.1 s, 282 of 300 steps left at t_p 0.0727 s, R 1.8 s, tick
   * 3.6 s, spot up 1.5 s then away 5.6 s (a 0.26 share, 0.38 with the prior toward 1/2): with D 43 s,
   * idle → on-demand; the recorded run's D 45 s waits one more tick under the prior */
  ctl_spot_init(&sp);
  ctl_spot_up(&sp, 1.3);
  ctl_spot_down(&sp, 2.8, 3.6);
  ctl_spot_down(&sp, 6.4, 3.6); /* a failed spot try */
  struct ctl_spot_in ex = {.t = 7.1, .deadline_s = 43, .tp = 0.0727, .restart_s = 1.8, .tick_s = 3.6,
                           .price_h = 0.085, .spot_price_h = 0.035, .step = 18, .total_steps = 300,
                           .mode = PIT_SPOT_IDLE};
  ctl_spot_state(&sp, &ex, &s);
  CHECK_NEAR(s.avail_seen, 1.5 / 5.8, 1e-9, "availability of the example");
  CHECK(pit_spot_decide(PIT_SPOT_PITSTOP, &s) == PIT_SPOT_OD, "the example turns to on-demand");
  ex.deadline_s = 45; /* the recorded run's deadline: with the prior it waits one more tick */
  ctl_spot_state(&sp, &ex, &s);
  CHECK(pit_spot_decide(PIT_SPOT_PITSTOP, &s) == PIT_SPOT_IDLE, "the recorded run's state now waits");
  ex.deadline_s = 60; /* 15 s more slack: it waits for spot */
  ctl_spot_state(&sp, &ex, &s);
  CHECK(pit_spot_decide(PIT_SPOT_PITSTOP, &s) == PIT_SPOT_IDLE, "with more slack it waits (idle)");
  char why[512];
  ctl_spot_reason(&s, PIT_SPOT_IDLE, why, sizeof why);
  CHECK(strstr(why, "slack 32.4 s; restart 1.8 s") != NULL, "the reason's numbers: %s", why);
  return check_done();
}
