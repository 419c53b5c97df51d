/* policy_spot.c — spot policies as pure functions: state (time, work done,
 * deadline, restart overhead, spot availability, what the job holds, prices)
 * → choice (idle, spot, on-demand). The same code serves `pitstop simulate`, `pitstop run`'s market layer,
 * the benchmark and tests; docs/simulate.md explains each rule.
 *
 * Slack: S = (deadline − t) − (job − done), the time the job can still lose;
 * it never grows (working keeps it, idling and restart overheads spend it).
 * S_eff = S − the held instance's overhead still to pass.
 * Invariant of pitstop's policy and greedy: a choice is made only if, after
 * it, on-demand can still finish by the deadline even if spot is reclaimed at
 * the next tick — so neither misses a deadline that on-demand from the start
 * could meet (tests/sim/test_sim.c checks it on random traces).
 */
#include <math.h>

#include "pitstop/policy.h"

#define EPS 1e-9

const char *pit_spot_mode_name(enum pit_spot_mode m) {
  return m == PIT_SPOT_SPOT ? "spot" : m == PIT_SPOT_OD ? "on_demand" : "idle";
}

const char *pit_spot_policy_name(enum pit_spot_policy p) {
  static const char *names[] = {"pitstop", "on_demand", "greedy", "uniform_progress"};
  return p >= 0 && p < PIT_SPOT_NPOLICIES ? names[p] : "?";
}

static double slack(const struct pit_spot_state *s) {
  return (s->deadline_h - s->t_h) - (s->job_h - s->done_h);
}

/* Greedy: spot whenever it is safe, idle while spot is away and the slack
 * lasts, then on-demand to the end (never back). */
static enum pit_spot_mode greedy(const struct pit_spot_state *s) {
  double S = slack(s), R = s->restart_h;
  if (s->mode == PIT_SPOT_OD)
    return PIT_SPOT_OD;
  if (s->spot_avail) {
    if (s->mode == PIT_SPOT_SPOT)
      return S - s->overhead_left_h >= R - EPS ? PIT_SPOT_SPOT : PIT_SPOT_OD;
    return S >= 2 * R - EPS ? PIT_SPOT_SPOT : PIT_SPOT_OD;
  }
  return S - s->tick_h >= R - EPS ? PIT_SPOT_IDLE : PIT_SPOT_OD;
}

/* Uniform progress (Can't Be Late, NSDI '24), its four rules with restart
 * overhead d; expected progress ep(t) = job × t / deadline:
 *  1. idle and done < ep(t): on-demand (catch up);
 *  2. spot whenever available, even when behind; keep it until reclaimed;
 *  3. hysteresis: on on-demand, stay until done >= ep(t + 2d);
 *  4. safety net: remaining time < remaining work + 2d: on-demand to the end. */
static enum pit_spot_mode uniform(const struct pit_spot_state *s) {
  double d = s->restart_h, S = slack(s);
  double ep = s->job_h * s->t_h / s->deadline_h;
  double ep2 = s->job_h * (s->t_h + 2 * d) / s->deadline_h;
  if (s->mode == PIT_SPOT_SPOT && s->spot_avail)
    return PIT_SPOT_SPOT;                             /* rule 2: exploit */
  if (s->mode != PIT_SPOT_SPOT && S < 2 * d - EPS)    /* rule 4 (idle, or already on on-demand) */
    return PIT_SPOT_OD;
  if (s->mode == PIT_SPOT_OD && s->done_h < ep2 - EPS) /* rule 3 */
    return PIT_SPOT_OD;
  if (s->spot_avail)
    return PIT_SPOT_SPOT;                             /* rule 2 */
  return s->done_h < ep - EPS ? PIT_SPOT_OD : PIT_SPOT_IDLE; /* rule 1 */
}

/* pitstop: the slack rationed by the outage time expected before the deadline, the
 * restart overhead counted exactly, and a way back from on-demand to spot that waits
 * for spot to have lasted.
 *  - reserve(t) = 2R + m + max(FLUID · (1 − a) · (deadline − t), BETA · (1 − a) ·
 *    (S0 − 2R − m)⁺ · (deadline − t) / deadline), S0 = deadline − job, a = the share of the
 *    ticks so far with spot available (online, no look-ahead; drawn toward 1/2 early,
 *    prior_seen): (1 − a)(deadline − t) is the outage time expected before the
 *    deadline. Waiting (idle) through all of it spends that much slack; when the
 *    slack cannot, the work of some outages has to run on on-demand anyway, and the
 *    cheapest place for it is the outage itself (waiting first only spends the slack
 *    that later pays the returns to spot). So the job waits while the slack after
 *    this tick stays above the reserve and otherwise runs on-demand: at a loose
 *    deadline it waits out outages like greedy, at a tight one it goes to on-demand
 *    at once, as uniform progress does when behind. The second term is the previous
 *    rule's hedge (BETA 0.75): it keeps more slack at loose deadlines, where a live run
 *    needs the margin (sh_control_command_spot, a 3x deadline on a loaded machine,
 *    missed it by 9-22 s with the FLUID term alone: failed spot tries while idle take
 *    time the model does not count);
 *  - once on on-demand, stay there while spot is away (leaving it for idle would pay
 *    a restart to come back);
 *  - leave on-demand for spot when a reclaim right after the start still leaves an
 *    on-demand restart (S_eff >= 2R: the invariant, no more: at a tight deadline the
 *    slack is there to pay such returns), the spans seen last GAMMA restarts on
 *    average, and spot has been back for AGE restarts (avail_for_h): the spans of
 *    the traces are heavy-tailed (most are short, a span that has lasted is likely
 *    to last), so a return at once spends 2R of slack on the many short spans and
 *    leaves none for the long one; waiting AGE·R on on-demand loses only AGE·R of
 *    spot time. An age not known (live: capacity is not watched while no spot node
 *    is held) does not hold the return back;
 *  - keep a spot instance while a reclaim still leaves time for an on-demand
 *    restart (S_eff >= R); start spot from idle when S >= 2R (its start and a
 *    later fallback: from idle the slack is spent either way);
 *  - many nodes: spot for a share of them is started only when its saving
 *    over the spans seen pays the whole job's restart (spot_worth).
 * FLUID and AGE were chosen on bench/spot-scale's tuning half only (single node, exact
 * optima; mean gap to the optimum at 1.1x / 1.5x / 2x deadlines, 56 cases each):
 * the previous rule (reserve 2R + m + 0.75 (1 − a)(S0 − 2R − m)(D − t)/D, return above
 * the reserve) 15.2% / 11.5% / 11.0% (uniform progress 18.0% / 25.7% / 37.7%);
 * FLUID 1 (never wait at a tight deadline), return at 2R + m, no age 13.2% at 1.1x;
 * + AGE 1.5: 8.9%; FLUID 0.25, AGE 1.5, return at 2R: 9.6% / 10.7% / 8.4%; FLUID
 * 0.2-0.3 × AGE 1-2: 9.0-12.3% / 10.4-12.5% / 8.2-9.3%; with the hedge term (the rule
 * now) 9.6% / 10.7% / 11.0% (only the 2x figure moves). Tried and dropped: an age
 * also before a start from idle (11.5% at 1.1x), waiting up to R or 2R after spot
 * goes away before on-demand (10.9-12.9%), asking for the age only while the slack
 * covers fewer than 3-20 returns (9.4-10.0%), GAMMA 0 or 2 (9.8%, 10.4%); a semi-Markov
 * model of the spans seen (2026-11-28, commits 81f2a5b and f816d44, docs/simulate.md): an
 * early return before the age gained 0.1-0.4 points on the tuning half and lost 1.4 at 1.1x
 * on the held-out half; asked to hold returns back or to wait on a gap, it lost on tuning.
 * docs/simulate.md reports the held-out half. */
#ifndef PIT_SPOT_BETA /* overridable at build time only to tune */
#define PIT_SPOT_BETA 0.75
#endif
#ifndef PIT_SPOT_FLUID
#define PIT_SPOT_FLUID 0.25
#endif
#ifndef PIT_SPOT_AGE
#define PIT_SPOT_AGE 1.5
#endif
#ifndef PIT_SPOT_PRIOR
#define PIT_SPOT_PRIOR 0.5
#endif
#ifndef PIT_SPOT_GAMMA
#define PIT_SPOT_GAMMA 1.0
#endif

/* The share of ticks with spot seen so far, drawn toward 1/2 by a prior worth half the
 * slack at submission (in ticks): one tick without spot at the start is not evidence that
 * spot stays away (with a tight deadline it sent the job to on-demand at tick 0 and left
 * no slack to come back). Chosen on bench/spot-scale's tuning half (the prior was added
 * there: single node 14.2% -> 13.5%, many nodes in one zone 14.5% -> 13.9%; weights 0.5,
 * 1, 2 within 0.1 points of each other). Shared with policy_fleet.c. */
double pit_spot_prior_seen(double seen, double t_h, double slack0_h, double tick_h) {
  if (!(tick_h > 0) || !(slack0_h > 0))
    return seen;
  double n = t_h / tick_h + 1, n0 = PIT_SPOT_PRIOR * slack0_h / tick_h;
  return (seen * n + 0.5 * n0) / (n + n0);
}
#define prior_seen pit_spot_prior_seen

static double reserve(const struct pit_spot_state *s) {
  double R = s->restart_h, m = s->tick_h, left = s->deadline_h - s->t_h, s0 = s->deadline_h - s->job_h - 2 * R - m;
  double away = 1 - prior_seen(s->avail_seen, s->t_h, s->deadline_h - s->job_h, m);
  away = away > 0 ? away : 0;
  left = left > 0 ? left : 0;
  double fluid = PIT_SPOT_FLUID * away * left;
  double hedge = s->deadline_h > 0 ? PIT_SPOT_BETA * away * (s0 > 0 ? s0 : 0) * left / s->deadline_h : 0;
  return 2 * R + m + (fluid > hedge ? fluid : hedge);
}

/* Many nodes with spot for only a share of them: starting spot restarts the
 * whole job (R on every node) to save share × (price − spot price) per hour
 * over the spans of availability seen (at least a tick): not worth it when
 * that saving is below the restart's cost. One node (share 1): always. */
static int spot_worth(const struct pit_spot_state *s) {
  double share = s->spot_share;
  if (!(share > 0) || share >= 1)
    return 1;
  double span = s->run_seen_h > s->tick_h ? s->run_seen_h : s->tick_h;
  return share * (s->price_h - s->spot_price_h) * span >= s->restart_h * s->price_h; /* forecast: simulated clock */
}

static enum pit_spot_mode pitstop(const struct pit_spot_state *in) {
  struct pit_spot_state st = *in;
  if (st.mode != PIT_SPOT_SPOT && st.spot_avail && !spot_worth(&st))
    st.spot_avail = 0; /* as if away: wait or on-demand by the same rules */
  const struct pit_spot_state *s = &st;
  double S = slack(s), R = s->restart_h, m = s->tick_h;
  double Se = S - s->overhead_left_h, keep = reserve(s);
  switch (s->mode) {
  case PIT_SPOT_SPOT:
    if (s->spot_avail)
      return Se >= R - EPS ? PIT_SPOT_SPOT : PIT_SPOT_OD;
    break; /* cannot happen: a reclaimed instance is idle */
  case PIT_SPOT_OD:
    if (s->spot_avail) {
      int lasted = isnan(s->avail_for_h) || s->avail_for_h >= PIT_SPOT_AGE * R - EPS;
      return Se >= 2 * R - EPS && lasted && s->run_seen_h >= PIT_SPOT_GAMMA * R - EPS ? PIT_SPOT_SPOT : PIT_SPOT_OD;
    }
    return PIT_SPOT_OD;
  case PIT_SPOT_IDLE: break;
  }
  if (s->spot_avail)
    return S >= 2 * R - EPS ? PIT_SPOT_SPOT : PIT_SPOT_OD;
  return S - m >= keep - EPS ? PIT_SPOT_IDLE : PIT_SPOT_OD;
}

enum pit_spot_mode pit_spot_decide(enum pit_spot_policy p, const struct pit_spot_state *s) {
  enum pit_spot_mode c;
  switch (p) {
  case PIT_SPOT_PITSTOP: c = pitstop(s); break;
  case PIT_SPOT_GREEDY: c = greedy(s); break;
  case PIT_SPOT_UNIFORM: c = uniform(s); break;
  default: c = PIT_SPOT_OD; break;
  }
  if (c == PIT_SPOT_SPOT && !s->spot_avail)
    c = PIT_SPOT_OD;
  return c;
}
