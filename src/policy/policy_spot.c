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
#include <stdlib.h>

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
 * covers fewer than 3-20 returns (9.4-10.0%), GAMMA 0 or 2 (9.8%, 10.4%).
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

/* ---- the expected-cost model (pit_spot_mdp_*) ----
 * Spot availability as a two-state Markov chain over steps of u = k ticks: up → down
 * with probability u/U (U the mean span of availability expected), down → up with u/Dn
 * (Dn = U(1 − a)/a, a the share of time spot was seen). The value V(w, s, m, x): the
 * expected cost to finish w steps of work with s steps of slack, holding m (idle, spot
 * running, on-demand running), spot available (x = 1) or not, when every later choice is
 * the cheapest in expectation. Each step: run what is held (price, w − 1; a held spot
 * instance is lost when the chain goes down), wait (s − 1) or start an instance (R
 * steps of its price without work, s − R; a spot start lost during its overhead leaves
 * the job idle). A state with s < 0 cannot finish: infinite cost. Every transition
 * lowers w + s, so one pass over w then s solves it exactly (no iteration). */
#define MDP_INF 1e300
static double mdp_at(const struct pit_spot_mdp *d, int w, int s, int m, int x) {
  if (w <= 0)
    return 0;
  if (s < 0)
    return MDP_INF;
  if (w > d->W)
    w = d->W;
  if (s > d->S)
    s = d->S;
  return d->v[(((size_t)w * (size_t)(d->S + 1) + (size_t)s) * 3 + (size_t)m) * 2 + (size_t)x];
}
static double mdp_exp(double p1, double v0, double v1) { /* p1: probability of x' = 1 */
  if ((p1 < 1 && v0 >= MDP_INF) || (p1 > 0 && v1 >= MDP_INF))
    return MDP_INF; /* a branch that cannot finish, however unlikely */
  double r = 0;
  if (p1 < 1)
    r += (1 - p1) * v0;
  if (p1 > 0)
    r += p1 * v1;
  return r;
}

static double mdp_add(double c, double r) { return r >= MDP_INF ? MDP_INF : c + r; }

/* Q of action act (PIT_SPOT_IDLE wait, PIT_SPOT_SPOT, PIT_SPOT_OD) in state (w, s, m, x). */
double pit_spot_mdp_q(const struct pit_spot_mdp *d, int w, int s, int m, int x, int act) {
  if (w <= 0)
    return 0;
  if (s < 0)
    return MDP_INF;
  double up1 = x ? 1 - d->pud : d->pdu; /* P(x' = 1) one step on */
  int R = d->R;
  if (act == PIT_SPOT_IDLE) {
    if (s < 1)
      return MDP_INF;
    return mdp_exp(up1, mdp_at(d, w, s - 1, 0, 0), mdp_at(d, w, s - 1, 0, 1));
  }
  if (act == PIT_SPOT_SPOT) {
    if (!x)
      return MDP_INF;
    if (m == PIT_SPOT_SPOT) /* reclaimed at the next step: idle, spot away */
      return mdp_add(d->ps, mdp_exp(1 - d->pud, mdp_at(d, w - 1, s, 0, 0), mdp_at(d, w - 1, s, 1, 1)));
    if (s < R)
      return MDP_INF;
    double q = pow(1 - d->pud, R); /* spot lasts through the overhead */
    return mdp_add(R * d->ps, mdp_exp(q, mdp_at(d, w, s - R, 0, 0), mdp_at(d, w, s - R, 1, 1)));
  }
  if (m == PIT_SPOT_OD)
    return mdp_add(d->po, mdp_exp(up1, mdp_at(d, w - 1, s, 2, 0), mdp_at(d, w - 1, s, 2, 1)));
  if (s < R)
    return MDP_INF;
  /* x after R steps: the chain's R-step law */
  double lam = 1 - d->pud - d->pdu, pi1 = d->pud + d->pdu > 0 ? d->pdu / (d->pud + d->pdu) : x;
  double pR = pi1 + ((double)x - pi1) * pow(lam, R);
  return mdp_add(R * d->po, mdp_exp(pR, mdp_at(d, w, s - R, 2, 0), mdp_at(d, w, s - R, 2, 1)));
}

void pit_spot_mdp_release(struct pit_spot_mdp *d) {
  free(d->v);
  d->v = NULL;
}

int pit_spot_mdp_solve(struct pit_spot_mdp *d) {
  size_t n = ((size_t)d->W + 1) * ((size_t)d->S + 1) * 6;
  double *v = realloc(d->v, n * sizeof *v);
  if (!v)
    return -1;
  d->v = v;
  for (int w = 0; w <= d->W; w++)
    for (int s = 0; s <= d->S; s++)
      for (int m = 0; m < 3; m++)
        for (int x = 0; x < 2; x++) {
          double best = MDP_INF;
          if (w > 0) {
            for (int a = 0; a < 3; a++) {
              double q = pit_spot_mdp_q(d, w, s, m, x, a);
              best = q < best ? q : best;
            }
          } else {
            best = 0;
          }
          if (m == PIT_SPOT_SPOT && !x) /* a reclaimed instance is idle */
            best = w > 0 ? d->v[(((size_t)w * (size_t)(d->S + 1) + (size_t)s) * 3) * 2] : 0;
          v[(((size_t)w * (size_t)(d->S + 1) + (size_t)s) * 3 + (size_t)m) * 2 + (size_t)x] = best;
        }
  return 0;
}
#ifndef PIT_SPOT_MODEL
#define PIT_SPOT_MODEL 0
#endif
#ifndef PIT_MDP_W
#define PIT_MDP_W 120 /* the model's grid: at most this many steps of work */
#endif
#ifndef PIT_MDP_S
#define PIT_MDP_S 60 /* and of slack */
#endif
#ifndef PIT_MDP_U0
#define PIT_MDP_U0 1.0
#endif
#ifndef PIT_MDP_AGEK
#define PIT_MDP_AGEK 1.0
#endif

static _Thread_local struct pit_spot_mdp mdp_cache;

/* The model's choice among idle, spot and on-demand for state s, or -1 (no model). */
static int mdp_choice(const struct pit_spot_state *s) {
  double m = s->tick_h, job = s->job_h, s0 = s->deadline_h - s->job_h;
  if (!(m > 0) || !(job > 0) || !(s0 >= 0) || s->overhead_left_h > EPS)
    return -1;
  double kw = ceil(job / m / PIT_MDP_W - EPS), ks = ceil(s0 / m / PIT_MDP_S - EPS);
  double k = kw > ks ? kw : ks;
  k = k > 1 ? k : 1;
  double u = k * m;
  struct pit_spot_mdp d = {0};
  d.W = (int)ceil(job / u - EPS);
  d.S = (int)floor(s0 / u + EPS);
  d.R = (int)ceil(s->restart_h / u - EPS);
  d.R = d.R > 1 ? d.R : 1;
  double a = prior_seen(s->avail_seen, s->t_h, s0, m);
  a = a < 0.01 ? 0.01 : a > 0.99 ? 0.99 : a;
  double n = s->t_h / m + 1, seen_h = s->avail_seen * n * m;
  double nr = s->run_seen_h > 0 ? seen_h / s->run_seen_h : 0;
  double U0 = PIT_MDP_U0 * (s->restart_h > m ? s->restart_h : m);
  double U = (nr * s->run_seen_h + U0) / (nr + 1);
  if (s->spot_avail && !isnan(s->avail_for_h) && PIT_MDP_AGEK * s->avail_for_h > U)
    U = PIT_MDP_AGEK * s->avail_for_h;
  double Dn = U * (1 - a) / a;
  /* quantised (5% steps) so that a solve serves many ticks */
  double qU = round(log(U / u) / log(1.05)), qD = round(log(Dn / u) / log(1.05));
  d.pud = fmin(1, 1 / pow(1.05, qU));
  d.pdu = fmin(1, 1 / pow(1.05, qD));
  double share = s->spot_share > 0 && s->spot_share < 1 ? s->spot_share : 1;
  d.po = s->price_h;
  d.ps = share * s->spot_price_h + (1 - share) * s->price_h;
  struct pit_spot_mdp *c = &mdp_cache;
  if (!c->v || c->W != d.W || c->S != d.S || c->R != d.R || c->pud != d.pud || c->pdu != d.pdu || c->ps != d.ps ||
      c->po != d.po) {
    c->W = d.W, c->S = d.S, c->R = d.R, c->pud = d.pud, c->pdu = d.pdu, c->ps = d.ps, c->po = d.po;
    if (pit_spot_mdp_solve(c) != 0) {
      pit_spot_mdp_release(c);
      return -1;
    }
  }
  int w = (int)ceil((s->job_h - s->done_h) / u - EPS);
  int sl = (int)floor(slack(s) / u + EPS);
  int x = s->spot_avail != 0;
  int cur = s->mode;
  double best = pit_spot_mdp_q(c, w, sl, cur, x, cur == PIT_SPOT_SPOT && !x ? PIT_SPOT_IDLE : cur);
  int pick = cur == PIT_SPOT_SPOT && !x ? PIT_SPOT_IDLE : cur;
  for (int act = 0; act < 3; act++) {
    double q = pit_spot_mdp_q(c, w, sl, cur, x, act);
    if (q < best * (1 - 1e-9)) {
      best = q;
      pick = act;
    }
  }
  if (best >= MDP_INF)
    return -1;
  return pick;
}

static enum pit_spot_mode pitstop(const struct pit_spot_state *in) {
  struct pit_spot_state st = *in;
  if (st.mode != PIT_SPOT_SPOT && st.spot_avail && !spot_worth(&st))
    st.spot_avail = 0; /* as if away: wait or on-demand by the same rules */
  const struct pit_spot_state *s = &st;
  double S = slack(s), R = s->restart_h, m = s->tick_h;
  double Se = S - s->overhead_left_h, keep = reserve(s);
  /* PIT_SPOT_MODEL, bits: 1 the model decides idle states, 2 on-demand states, 4 spot states,
   * 8 a return from on-demand also waits for the age (the rule's AGE and GAMMA) */
  int use = PIT_SPOT_MODEL & (s->mode == PIT_SPOT_IDLE ? 1 : s->mode == PIT_SPOT_OD ? 2 : 4);
  if (use) {
    int c = mdp_choice(s);
    if (c == PIT_SPOT_SPOT && s->spot_avail) { /* the hard guard: a reclaim next tick leaves an on-demand restart */
      if (s->mode == PIT_SPOT_SPOT)
        return Se >= R - EPS ? PIT_SPOT_SPOT : PIT_SPOT_OD;
      int lasted = !(PIT_SPOT_MODEL & 8) || s->mode != PIT_SPOT_OD ||
                   ((isnan(s->avail_for_h) || s->avail_for_h >= PIT_SPOT_AGE * R - EPS) &&
                    s->run_seen_h >= PIT_SPOT_GAMMA * R - EPS);
      return Se >= 2 * R - EPS && lasted ? PIT_SPOT_SPOT : PIT_SPOT_OD;
    }
    if (c == PIT_SPOT_IDLE)
      return S - m >= R - EPS && s->mode != PIT_SPOT_SPOT ? PIT_SPOT_IDLE : PIT_SPOT_OD;
    if (c == PIT_SPOT_OD)
      return PIT_SPOT_OD;
  }
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
