/* market.c — the live side of the spot policy: what `pitstop run` has seen of
 * spot capacity (spans of availability between spot starts, reclaims and
 * failed spot starts) and the struct pit_spot_state it builds from the run's
 * own measurements, so pit_spot_decide (src/policy/policy_spot.c, the code
 * `pitstop simulate` judges) chooses spot, on-demand or idle live as it does
 * on a trace.
 *
 * Invariants: times are run seconds (the controller's monotonic clock);
 * nothing here starts or stops a node (the controller acts on the choice);
 * the spans only grow: an up span begins when a spot node comes up, a down
 * span at a reclaim notice or a failed spot start, and each ends when the
 * other begins. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "control/control_impl.h"

void ctl_spot_init(struct ctl_spot *sp) {
  memset(sp, 0, sizeof *sp);
  sp->since = NAN;
}

/* Closes the current span at t. */
static void close_span(struct ctl_spot *sp, double t) {
  if (!sp->observed || !(t > sp->since))
    return;
  if (sp->up) {
    sp->up_s += t - sp->since;
    sp->nup++;
  } else {
    sp->down_s += t - sp->since;
  }
}

void ctl_spot_up(struct ctl_spot *sp, double t) {
  if (sp->observed && sp->up)
    return; /* another spot node of the same span */
  close_span(sp, t);
  sp->observed = 1;
  sp->up = 1;
  sp->since = t;
  sp->retry_s = 0;
}

void ctl_spot_down(struct ctl_spot *sp, double t, double retry_s) {
  if (sp->observed && !sp->up) { /* still away: wait longer before the next try */
    sp->retry_s = sp->retry_s > 0 ? 2 * sp->retry_s : retry_s;
    sp->tried = t;
    return;
  }
  close_span(sp, t);
  sp->observed = 1;
  sp->up = 0;
  sp->since = t;
  sp->tried = t;
  sp->retry_s = retry_s;
}

int ctl_spot_avail(const struct ctl_spot *sp, double t) {
  return !sp->observed || sp->up || t - sp->tried >= sp->retry_s;
}

void ctl_spot_state(const struct ctl_spot *sp, const struct ctl_spot_in *in, struct pit_spot_state *s) {
  memset(s, 0, sizeof *s);
  double up = sp->up_s, down = sp->down_s;
  int nup = sp->nup;
  if (sp->observed && in->t > sp->since) { /* the current span counts */
    if (sp->up) {
      up += in->t - sp->since;
      nup++;
    } else {
      down += in->t - sp->since;
    }
  }
  s->t_h = in->t / 3600;
  s->job_h = (double)in->total_steps * in->tp / 3600;
  s->done_h = (double)in->step * in->tp / 3600;
  s->deadline_h = in->deadline_s / 3600;
  s->restart_h = in->restart_s / 3600;
  s->tick_h = in->tick_s / 3600;
  s->spot_avail = ctl_spot_avail(sp, in->t);
  s->mode = in->mode;
  s->overhead_left_h = 0; /* live decisions come with the nodes up (or none held) */
  s->price_h = in->price_h;
  s->spot_price_h = in->spot_price_h;
  s->avail_seen = up + down > 0 ? up / (up + down) : 0.5;
  s->run_seen_h = nup ? up / nup / 3600 : 0;
  s->spot_share = 1; /* every node of the membership on one market */
  /* spot seen up since `since` (a spot node held); away or never seen: capacity is not watched
   * while no spot node is held, so how long it has been back is not known */
  s->avail_for_h = sp->observed && sp->up && in->t >= sp->since ? (in->t - sp->since) / 3600 : NAN;
}

void ctl_spot_reason(const struct pit_spot_state *s, enum pit_spot_mode to, char *buf, size_t n) {
  double slack = (s->deadline_h - s->t_h) - (s->job_h - s->done_h);
  snprintf(buf, n,
           "market %s → %s: work left %.1f s, time to the deadline %.1f s, slack %.1f s; restart %.1f s (measured), "
           "spot %s, available %.0f%% of the time seen (spans %.1f s); $%.4f/h on-demand, $%.4f/h spot",
           pit_spot_mode_name(s->mode), pit_spot_mode_name(to), (s->job_h - s->done_h) * 3600,
           (s->deadline_h - s->t_h) * 3600, slack * 3600, s->restart_h * 3600,
           s->spot_avail ? "available" : "away", 100 * s->avail_seen, s->run_seen_h * 3600, s->price_h,
           s->spot_price_h);
}
