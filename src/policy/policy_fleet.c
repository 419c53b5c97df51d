/* policy_fleet.c — fleet policies as pure functions: view (time, work done,
 * deadline, every pool's spot count and prices, what the job holds, where its
 * checkpoint is) → membership (pool, spot nodes, on-demand nodes). docs/simulate.md
 * ("Many nodes, zones and types") explains each rule and what the papers left open.
 *
 * The single-zone baselines (greedy, uniform progress) are the single-node
 * policies of policy_spot.c asked once for the whole job in the home pool
 * (the cheapest spot price): spot gives min(count, nodes) spot nodes and the
 * rest on-demand; a partial reclaim keeps the survivors and fills the rest
 * with on-demand. With one pool and one node they are exactly pit_sim_run's.
 * Invariant: a returned membership never holds more spot nodes than its
 * pool's count, and holds nmin..nmax nodes or none.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "pitstop/policy.h"

#define EPS 1e-9

const char *pit_fleet_policy_name(enum pit_fleet_policy p) {
  static const char *names[] = {"pitstop", "on_demand", "greedy", "uniform_progress", "skynomad", "ross", "fixed"};
  return p >= 0 && p < PIT_FLEET_NPOLICIES ? names[p] : "?";
}

static enum pit_spot_mode mode_of(struct pit_sim_member m) {
  return m.spot > 0 ? PIT_SPOT_SPOT : m.od > 0 ? PIT_SPOT_OD : PIT_SPOT_IDLE;
}

static int imin(int a, int b) { return a < b ? a : b; }

/* The first of pools 0..n-1 with the lowest price_h. */
static int cheapest(const double *price_h, int n) {
  int h = 0;
  for (int p = 1; p < n; p++)
    if (price_h[p] < price_h[h])
      h = p;
  return h;
}

/* the home pool: the cheapest spot price */
static int home_pool(const struct pit_fleet_view *v) { return cheapest(v->spot_price_h, v->npools); }

static int cheapest_od(const struct pit_fleet_view *v) { return cheapest(v->price_h, v->npools); }

/* on-demand for the whole job where the checkpoint is (no move), else the cheapest pool */
static struct pit_sim_member od_all(const struct pit_fleet_view *v) {
  if (v->cur.spot == 0 && v->cur.od == v->nodes)
    return v->cur;
  int p = v->ckpt_pool >= 0 ? v->ckpt_pool : cheapest_od(v);
  return (struct pit_sim_member){p, 0, v->nodes};
}

/* spot in pool p for as many nodes as it gives, the rest on-demand; survivors kept */
static struct pit_sim_member spot_in(const struct pit_fleet_view *v, int p) {
  if (v->cur.spot > 0 && v->cur.pool == p)
    return (struct pit_sim_member){p, v->cur.spot, v->nodes - v->cur.spot};
  int s = imin(v->count[p], v->nodes);
  return (struct pit_sim_member){p, s, v->nodes - s};
}

/* the single-node policy asked once for the whole job in pool h */
static struct pit_sim_member single(enum pit_spot_policy sp, const struct pit_fleet_view *v, int h) {
  int cnt = v->count[h], n = v->nodes;
  struct pit_spot_state s = {
      .t_h = v->t_h, .done_h = v->done_h, .job_h = v->job_h, .deadline_h = v->deadline_h,
      .restart_h = v->restart_h, .tick_h = v->tick_h, .spot_avail = cnt > 0, .mode = mode_of(v->cur),
      .overhead_left_h = v->overhead_left_h, .price_h = v->price_h[h], .spot_price_h = v->spot_price_h[h],
      .avail_seen = v->avail_seen[h], .run_seen_h = v->span_seen_h[h],
      .spot_share = cnt >= n ? 1.0 : (double)cnt / n, .avail_for_h = v->avail_for_h[h]};
  /* pitstop: a reclaim of part of the spot nodes restarts the whole job whatever it keeps, so
   * keeping the survivors is a new start (spot only with two restarts of slack, as from idle):
   * kept as a held instance it needed one, and a second restart right after missed the deadline.
   * A fixed count only: within a node range the count's own rule (below) asks the same 2R of the
   * survivors and may keep them alone */
  if (sp == PIT_SPOT_PITSTOP && v->reclaimed > 0 && v->cur.spot > 0 && v->nmin == v->nmax)
    s.mode = PIT_SPOT_IDLE;
  enum pit_spot_mode m = pit_spot_decide(sp, &s);
  if (m == PIT_SPOT_SPOT)
    return spot_in(v, h);
  if (m == PIT_SPOT_OD)
    return v->cur.od == n && v->cur.spot == 0 ? v->cur : (struct pit_sim_member){h, 0, n};
  return (struct pit_sim_member){h, 0, 0};
}

static double slack(const struct pit_fleet_view *v) { return (v->deadline_h - v->t_h) - (v->job_h - v->done_h); }

/* the time a move from where the checkpoint is to p adds */
static double move_h(const struct pit_fleet_view *v, int p) {
  return v->ckpt_pool >= 0 && p != v->ckpt_pool ? v->move_h[v->ckpt_pool] : 0;
}
static double move_usd(const struct pit_fleet_view *v, int p) {
  return v->ckpt_pool >= 0 && p != v->ckpt_pool ? v->move_usd[v->ckpt_pool] : 0;
}

/* The switching-cost rule (the cost policy's, docs/decide.md, in money): starting spot in
 * pool p is worth it when what it saves over the span of availability expected there (the
 * mean span seen, at least a tick, at most the work left) pays what the change costs: a
 * restart of every node (and the move's transfer time) at on-demand prices, and the egress.
 * Returns the net saving (< 0: not worth it). */
static double net_saving_from(const struct pit_fleet_view *v, int p, int held, double min_span_h) {
  if (v->count[p] <= 0)
    return -INFINITY;
  double po = v->price_h[v->ckpt_pool >= 0 ? v->ckpt_pool : p];
  int s = imin(v->count[p], v->nodes) - held;
  double span = v->span_seen_h[p] > v->tick_h ? v->span_seen_h[p] : v->tick_h, left = v->job_h - v->done_h;
  if (span < min_span_h)
    span = min_span_h;
  if (span > left)
    span = left;
  double save = s * (po - v->spot_price_h[p]) * span; /* forecast: simulated clock */
  /* the restart: from idle every start pays one, so only a mixed membership's extra one (its
   * reclaim restarts the whole job) counts; leaving on-demand or growing pays it now */
  double restart = v->cur.spot + v->cur.od == 0 && s + held >= v->nodes ? 0 : v->restart_h;
  double change = v->nodes * po * (restart + move_h(v, p)) + move_usd(v, p);
  return save - change;
}

/* the pool with spot worth starting now (the current pool first: no move), -1 none; spans
 * expected at least min_span_h (skynomad: 0, the mean seen; pitstop: two restarts) */
static int best_spot_pool(const struct pit_fleet_view *v, int allow_move, double min_span_h) {
  int b = -1;
  double bv = -INFINITY;
  for (int p = 0; p < v->npools; p++) {
    if (!allow_move && v->ckpt_pool >= 0 && p != v->ckpt_pool)
      continue;
    double x = net_saving_from(v, p, 0, min_span_h);
    if (x >= 0 && (x > bv + EPS || (b >= 0 && fabs(x - bv) <= EPS && p == v->ckpt_pool))) {
      b = p;
      bv = x;
    }
  }
  return b;
}

/* In the manner of SkyNomad (arXiv 2601.06520, written from its abstract): it probes every
 * region (sees all counts), predicts spot lifetime (the mean span seen in that region),
 * accounts for the migration cost, and turns deadline pressure into a choice: spot in the
 * region of best net value while the slack allows, uniform progress's rules (expected
 * progress, hysteresis, safety net) for on-demand. */
static struct pit_sim_member skynomad(const struct pit_fleet_view *v) {
  double S = slack(v), R = v->restart_h, d2 = 2 * R;
  double ep = v->job_h * v->t_h / v->deadline_h, ep2 = v->job_h * (v->t_h + 2 * R) / v->deadline_h;
  enum pit_spot_mode m = mode_of(v->cur);
  if (m == PIT_SPOT_SPOT && v->count[v->cur.pool] > 0)
    return S - v->overhead_left_h >= R - EPS ? spot_in(v, v->cur.pool) : od_all(v);
  int b = best_spot_pool(v, 1, 0);
  double need = b >= 0 ? d2 + move_h(v, b) : d2;
  if (m != PIT_SPOT_SPOT && S < d2 - EPS) /* safety net */
    return od_all(v);
  if (b >= 0 && S >= need - EPS && (m != PIT_SPOT_OD || v->done_h >= ep2 - EPS))
    return spot_in(v, b);
  if (m == PIT_SPOT_OD)
    return od_all(v);
  if (v->done_h < ep - EPS || S - v->tick_h < d2 - EPS)
    return od_all(v);
  return (struct pit_sim_member){v->cur.pool, 0, 0};
}

static uint64_t mix(uint64_t x) { /* splitmix64 */
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/* In the manner of ROSS (arXiv 2601.14612, written from its abstract: a randomized policy
 * with a sqrt(K) competitive ratio, K = on-demand / spot price): spot whenever available
 * (home pool), and while it is away wait until a RANDOM share f of the slack is spent, then
 * commit to on-demand. f is drawn once per job (the seed), log-uniform on [1/sqrt(K), 1]
 * (a randomized ski-rental threshold: an adversary cannot time the outage to the commit
 * point). The safety net (2 restarts) holds whatever f. */
static struct pit_sim_member ross(const struct pit_fleet_view *v) {
  int h = home_pool(v);
  double S = slack(v), R = v->restart_h;
  double K = v->spot_price_h[h] > 0 ? v->price_h[h] / v->spot_price_h[h] : 1e6;
  if (K < 1)
    K = 1;
  double u = (double)(mix(v->seed) >> 11) / 9007199254740992.0; /* [0, 1) */
  double f = pow(K, -0.5 * (1 - u));
  double S0 = v->deadline_h - v->job_h - 2 * R;
  if (S0 < 0)
    S0 = 0;
  enum pit_spot_mode m = mode_of(v->cur);
  if (m == PIT_SPOT_OD)
    return od_all(v);
  if (v->count[h] > 0) {
    if (m == PIT_SPOT_SPOT)
      return S - v->overhead_left_h >= R - EPS ? spot_in(v, h) : od_all(v);
    return S >= 2 * R - EPS ? spot_in(v, h) : od_all(v);
  }
  /* spot away: wait while the slack spent stays below f × S0 and the safety net holds */
  double spent = (v->deadline_h - v->job_h) - S;
  if (spent + v->tick_h <= f * S0 + EPS && S - v->tick_h >= 2 * R - EPS)
    return (struct pit_sim_member){h, 0, 0};
  return od_all(v);
}

/* the reserve policy_spot.c used before 2026-11-27 (BETA 0.75 of the initial slack rationed
 * by the availability seen), over the availability seen in any pool: kept across pools, where
 * it was tuned (the single-node rule now sizes its reserve on the outage time left) */
static double reserve(const struct pit_fleet_view *v, double away) {
  double R = v->restart_h, m = v->tick_h, s0 = v->deadline_h - v->job_h - 2 * R - m;
  double left = v->deadline_h > 0 ? (v->deadline_h - v->t_h) / v->deadline_h : 0;
  return 2 * R + m + 0.75 * (away > 0 ? away : 0) * (s0 > 0 ? s0 : 0) * (left > 0 ? left : 0);
}

/* Chosen on bench/spot-scale's tuning half (multi-zone, 576 cases, exact limits where the
 * DP fits; mean gap / worst 10%): before 17.4% / 81.1%; + on-demand when behind schedule at
 * a tight deadline (TIGHT 0.2) 16.5% / 75.3% (TIGHT 0.6: 17.5%); + the prior on the share
 * seen 16.1% / 75.9%; + spans expected at least 2 restarts (TIGHT_SPAN) 15.9% / 75.8%.
 * Tried and dropped: returning from on-demand at 2R + tick at tight deadlines (16.2%),
 * BETA 0.5 or 1 here (17.3%, 22.8%). */
#define TIGHT 0.2
#define TIGHT_SPAN 2.0

/* pitstop across pools: the single-node rules (keep spot while a reclaim leaves an
 * on-demand restart; wait above a reserve that grows with the share of time spot has been
 * away from every pool; return from on-demand only above the reserve) with the pool chosen by the
 * switching-cost rule (net_saving >= 0, the current pool first); a move only when the
 * current pool has no spot worth keeping, so it never flaps between pools that both have
 * spot; a partial reclaim refills with on-demand unless another pool gives the whole job
 * spot and pays the move. */
static struct pit_sim_member pitstop(const struct pit_fleet_view *v) {
  if (v->npools == 1) /* one pool: the single-node rules (tuned on bench/spot-deadline), spot_share included */
    return single(PIT_SPOT_PITSTOP, v, 0);
  double S = slack(v), R = v->restart_h, m = v->tick_h, Se = S - v->overhead_left_h;
  /* spot away from every pool (the share seen drawn toward 1/2 early, as policy_spot.c) */
  double keep = reserve(v, 1 - pit_spot_prior_seen(v->any_seen, v->t_h, v->deadline_h - v->job_h, m));
  double span0 = TIGHT_SPAN * R; /* the span expected where none longer has been seen */
  enum pit_spot_mode md = mode_of(v->cur);
  if (md == PIT_SPOT_SPOT && v->count[v->cur.pool] > 0) {
    if (Se < R - EPS)
      return od_all(v);
    if (v->cur.spot < v->nodes && Se >= keep - EPS) {
      /* part on on-demand: more spot here, or the whole job where spot covers more of it,
       * when what the extra spot nodes save over the span expected pays the change */
      int best = -1, bs = v->cur.spot;
      double bv = 0;
      for (int p = 0; p < v->npools; p++) {
        int sp = imin(v->count[p], v->nodes);
        if (sp <= v->cur.spot || S < 2 * R + move_h(v, p) - EPS)
          continue;
        double x = net_saving_from(v, p, v->cur.spot, span0);
        if (x > bv + EPS) {
          best = p, bv = x, bs = sp;
        }
      }
      if (best >= 0)
        return (struct pit_sim_member){best, bs, v->nodes - bs};
    }
    return spot_in(v, v->cur.pool);
  }
  int b = best_spot_pool(v, 1, span0);
  if (md == PIT_SPOT_OD) {
    /* back to spot above the reserve, or (uniform progress's hysteresis) when ahead of the straight
     * line to the deadline by two restarts and the slack still covers a restart after the move */
    double ep2 = v->job_h * (v->t_h + 2 * R) / v->deadline_h;
    int ahead = v->done_h >= ep2 - EPS && Se >= 2 * R + m + move_h(v, b) - EPS;
    if (b >= 0 && (Se >= keep + move_h(v, b) - EPS || ahead) && v->span_seen_h[b] >= R - EPS)
      return spot_in(v, b);
    return od_all(v);
  }
  if (b >= 0 && S >= 2 * R + move_h(v, b) - EPS)
    return spot_in(v, b);
  /* a tight deadline (slack at submission < TIGHT of the job): idle only while on
   * schedule (uniform progress's rule 1), the reserve cannot be rationed over so little */
  if (v->deadline_h - v->job_h < TIGHT * v->job_h && v->done_h < v->job_h * v->t_h / v->deadline_h - EPS)
    return od_all(v);
  if (S - m >= keep - EPS)
    return (struct pit_sim_member){v->cur.pool, 0, 0};
  return od_all(v);
}

/* ---- the node count within nmin..nmax (issue 29 item 5) ----
 * pitstop() above decides for the job's `nodes` nodes (the market, the pool, when to wait
 * and move); sized() then chooses how many nodes. With nmin == nmax it returns pitstop()'s
 * choice untouched. Otherwise the count changes only where a restart is paid anyway (the
 * base changes the membership, or a reclaim restarts the job), with three exceptions that
 * each pay one restart: the slack reaching the reserve, or the slower count's saving no
 * longer paying for its slack, while running slower than `nodes` (back to the base's
 * membership), spot returning to a pool where the job runs on fewer
 * spot nodes (grown when the switching-cost rule says the added spot pays the restart over
 * the span a count lasts there), and spot appearing for fewer nodes than the job's while it
 * waits idle. So a count that comes and goes every tick is never followed. */

/* growing waits for the higher count to have lasted GROW_AGE restarts (as the single-node
 * rule waits AGE restarts before it returns to spot: spans are heavy-tailed) */
#define GROW_AGE 1.5

static int nheld(struct pit_sim_member m) { return m.spot + m.od; }

/* X(n) / X(nodes): the share of the job's rate n nodes give (USL, linear with sigma = kappa = 0) */
double pit_usl_share(double sigma, double kappa, int n, int N) {
  if (n <= 0 || N <= 0)
    return 0;
  double a = n, b = N;
  return a / (1 + sigma * (a - 1) + kappa * a * (a - 1)) / (b / (1 + sigma * (b - 1) + kappa * b * (b - 1)));
}

static double rate(const struct pit_fleet_view *v, int n) { return pit_usl_share(v->sigma, v->kappa, n, v->nodes); }

/* money per hour of the job's work (hours on `nodes` nodes) */
static double per_work(const struct pit_fleet_view *v, int p, int sp, int od) {
  return (sp * v->spot_price_h[p] + od * v->price_h[p]) / rate(v, sp + od); /* forecast */
}

/* the span spot is expected to last in p: the mean span seen, at least TIGHT_SPAN restarts */
static double span_in(const struct pit_fleet_view *v, int p) {
  double sp = v->span_seen_h[p], R = TIGHT_SPAN * v->restart_h;
  return sp > R ? sp : R > v->tick_h ? R : v->tick_h;
}

/* Is running slower than the job's nodes (rate r, c money per unit of work, against ref
 * per unit of work on the job's own membership) worth the slack it spends? Each hour saves
 * (ref - c) r; it spends (1 - r) h of slack, which costs the on-demand premium on that much
 * of the job's work if the slack comes to bind, taken as likely as the share of the slack
 * (S) the reserve holds: at a tight deadline almost surely, at a loose one seldom. */
static int slow_pays(const struct pit_fleet_view *v, int p, double r, double c, double ref, double S, double keep) {
  double bind = S > EPS && v->deadline_h - v->job_h >= TIGHT * v->job_h ? keep / S : 1; /* tight: binds */
  bind = bind < 0 ? 0 : bind > 1 ? 1 : bind;
  return (ref - c) * r >= bind * (v->price_h[p] - v->spot_price_h[p]) * v->nodes * (1 - r) - EPS; /* forecast */
}

/* The count for membership b's pool and market, where a change is paid anyway: of n in
 * nmin..nmax (spot: as many spot nodes as the pool gives, at most n, the rest on-demand;
 * on-demand: n on-demand; spot_only: no on-demand node), the least money per unit of work
 * among those the slack allows. One slower than the job's `nodes` spends slack: it must
 * leave the reserve `keep` after the change and its run over the span expected there (spot;
 * on-demand: to the end). A tie keeps the count nearest
 * `nodes`, or the fastest when the slack is below the reserve (banking progress while spot
 * is there). With a slack below the reserve, spot nodes beyond `nodes` are also taken
 * while they cost no more per unit of work than the job's nodes on on-demand. When b
 * misses the deadline at its rate to the end, the cheapest count that meets it comes first.
 * Returns b when none is better (b idle: none allowed). */
static struct pit_sim_member size_for(const struct pit_fleet_view *v, struct pit_sim_member b, int spot_only,
                                      double keep) {
  int p = b.pool, N = v->nodes, spot = b.spot > 0 || spot_only;
  double S = slack(v), R = v->restart_h, left = v->job_h - v->done_h;
  double chg = R + move_h(v, p);
  int tight = S - chg < keep - EPS;
  struct pit_sim_member best = b;
  double bc = nheld(b) > 0 ? per_work(v, p, b.spot, b.od) : INFINITY, br = rate(v, nheld(b)), ref = bc;
  /* b misses the deadline even run to the end at its rate after the change: the count
   * that meets it for the least money per unit of work, when one does (under a USL fit
   * more nodes cost more per unit of work, so the rule below would keep a count that misses) */
  double avail = v->deadline_h - v->t_h;
  if (nheld(b) > 0 && left / br + chg > avail + EPS) {
    struct pit_sim_member meet = b;
    double mc = INFINITY;
    for (int n = v->nmin; n <= v->nmax; n++) {
      int sp = spot ? imin(v->count[p], n) : 0, od = n - sp;
      if ((spot_only && od > 0) || left / rate(v, n) + chg > avail + EPS)
        continue;
      double c = per_work(v, p, sp, od); /* a tie: the faster (banking progress, as below when tight) */
      if (c < mc * (1 - 1e-9) || (c <= mc * (1 + 1e-9) && rate(v, n) > rate(v, nheld(meet)) + EPS))
        meet = (struct pit_sim_member){p, sp, od}, mc = c;
    }
    if (isfinite(mc))
      return meet;
  }
  for (int n = v->nmin; n <= v->nmax; n++) {
    int sp = spot ? imin(v->count[p], n) : 0, od = n - sp;
    if (spot_only && od > 0)
      break;
    double r = rate(v, n);
    if (r < 1 - EPS) { /* slower than the job's nodes: the slack pays for it */
      double H = spot ? span_in(v, p) : INFINITY;
      if (H > left / r)
        H = left / r;
      if (S - chg - (1 - r) * H < keep - EPS)
        continue;
    }
    double c = per_work(v, p, sp, od);
    if (r < 1 - EPS && isfinite(ref) && !slow_pays(v, p, r, c, ref, S - chg, keep))
      continue; /* (from idle any progress beats waiting: no test) */
    int better = c < bc * (1 - 1e-9);
    if (!better && c <= bc * (1 + 1e-9)) /* a tie */
      better = tight ? r > br + EPS : abs(n - N) < abs(nheld(best) - N);
    if (!better && tight && od == 0 && n > N && r > br + EPS && c <= per_work(v, p, 0, N) + EPS)
      better = 1;
    if (better) {
      best = (struct pit_sim_member){p, sp, od};
      bc = c;
      br = r;
    }
  }
  return best;
}

/* pitstop with the node count chosen (above) */
static struct pit_sim_member sized(const struct pit_fleet_view *v) {
  struct pit_sim_member b = pitstop(v), c = v->cur;
  if (v->nmin == v->nmax)
    return b; /* one count: the base's choice, untouched */
  int nb = nheld(b), nc = nheld(c), N = v->nodes;
  double R = v->restart_h, m = v->tick_h;
  double keep = reserve(v, 1 - pit_spot_prior_seen(v->any_seen, v->t_h, v->deadline_h - v->job_h, m));
  /* a reclaim that leaves survivors restarts the job: spot again only when the slack pays
   * this restart and an on-demand one after the next reclaim (the start rule, S >= 2R) */
  if (v->reclaimed && b.spot > 0 && nc > 0 && slack(v) < 2 * R + move_h(v, b.pool) - EPS)
    b = od_all(v);
  if (nb == 0) {
    /* waiting idle: spot for fewer nodes than the job's, run on them alone while the
     * slack allows (where the checkpoint is, or the pool giving the most spot) */
    if (nc > 0 || v->reclaimed)
      return b;
    int p = v->ckpt_pool;
    if (p < 0)
      for (int q = 0; q < v->npools; q++)
        if (p < 0 || v->count[q] > v->count[p])
          p = q;
    if (v->count[p] < v->nmin || v->count[p] <= 0)
      return b;
    struct pit_sim_member x = size_for(v, (struct pit_sim_member){p, 0, 0}, 1, keep); /* none allowed: idle */
    /* worth a start: what its spot nodes save over the span expected pays their restart */
    if (x.spot > 0 && x.spot < N && x.spot * (v->price_h[p] - v->spot_price_h[p]) * span_in(v, p) >= /* forecast */
                                        x.spot * v->price_h[p] * R - EPS) /* forecast */
      return x;
    return b;
  }
  int resized = nc > 0 && nc != N;
  int cont = nc > 0 && !v->reclaimed && (b.spot > 0) == (c.spot > 0) &&
             (b.pool == c.pool || (resized && c.od == 0));
  if (cont && !resized && b.pool == c.pool && b.spot == c.spot && b.od == c.od)
    return b; /* the base keeps its membership */
  if (cont && resized) {
    /* the job runs on another count than its own: keep it, unless the slack has reached
     * the reserve (back to the base's membership), or spot came back for more nodes and
     * its saving over the span a count lasts there pays a restart of the job */
    double r = rate(v, nc), S = slack(v) - v->overhead_left_h;
    int k = imin(c.spot, N); /* the fill: its spot nodes and on-demand for the rest of the job's (more spot: grown below) */
    if (r < 1 - EPS && (S - (1 - r) * m < keep - EPS ||
                        !slow_pays(v, c.pool, r, per_work(v, c.pool, c.spot, c.od), per_work(v, c.pool, k, N - k), S,
                                   keep)))
      return size_for(v, b, 0, keep);
    if (c.spot > 0 && v->count[c.pool] > c.spot && c.spot < imin(v->count[c.pool], v->nmax) &&
        v->overhead_left_h <= EPS && (!v->count_for_h || v->count_for_h[c.pool] >= GROW_AGE * R - EPS)) {
      double span = span_in(v, c.pool), fall = v->fall_gap_h ? v->fall_gap_h[c.pool] : 0;
      if (fall > 0 && fall < span)
        span = fall;
      struct pit_sim_member g = size_for(v, (struct pit_sim_member){c.pool, k, N - k}, 0, keep);
      double save = (g.spot - c.spot) * (v->price_h[c.pool] - v->spot_price_h[c.pool]) * span; /* forecast */
      if (g.spot > c.spot && per_work(v, c.pool, g.spot, g.od) <= per_work(v, c.pool, c.spot, c.od) * (1 + 1e-9) &&
          save >= N * v->price_h[c.pool] * R - EPS) /* forecast */
        return g; /* faster for no more money per unit of work, and the spot it adds pays the restart */
    }
    return c;
  }
  return size_for(v, b, 0, keep); /* a change is paid anyway: its count */
}

struct pit_sim_member pit_fleet_decide(enum pit_fleet_policy p, const struct pit_fleet_view *v) {
  struct pit_sim_member r = {v->cur.pool, 0, 0};
  switch (p) {
  case PIT_FLEET_PITSTOP: r = sized(v); break;
  case PIT_FLEET_ON_DEMAND:
    r = v->cur.od == v->nodes && v->cur.spot == 0 ? v->cur : (struct pit_sim_member){cheapest_od(v), 0, v->nodes};
    break;
  case PIT_FLEET_GREEDY: r = single(PIT_SPOT_GREEDY, v, home_pool(v)); break;
  case PIT_FLEET_UNIFORM: r = single(PIT_SPOT_UNIFORM, v, home_pool(v)); break;
  case PIT_FLEET_SKYNOMAD: r = skynomad(v); break;
  case PIT_FLEET_ROSS: r = ross(v); break;
  case PIT_FLEET_FIXED:
    if (v->fixed_pool >= 0 && v->fixed_pool < v->npools && v->count[v->fixed_pool] >= v->fixed_spot)
      r = (struct pit_sim_member){v->fixed_pool, v->fixed_spot, v->nodes - v->fixed_spot};
    else
      r = (struct pit_sim_member){v->cur.pool, 0, 0};
    break;
  default: break;
  }
  if (r.spot + r.od == 0)
    r.spot = r.od = 0;
  if (r.pool < 0)
    r.pool = 0;
  return r;
}

/* pitstop run across zones (policy.h, "zones live"): the zones of one type as the
 * pools of a fleet view, the job on `nodes` nodes, its count chosen within
 * nmin..nmax by sized() (a zone never refused gives spot to nmax nodes). The
 * PIT time measured on tp_nodes nodes is taken to `nodes` by the scaling fit.
 * Nothing measured yet: spot where the job is (else in the home pool) for as
 * many of `nodes` as the zone gives, the rest on-demand; then pitstop's fleet
 * rules. A running job is never made idle: on-demand where it is. */
struct pit_sim_member pit_zone_decide(const struct pit_zone_in *in) {
  int N = in->nodes, lo = in->nmin > 0 ? in->nmin : N, hi = in->nmax > 0 ? in->nmax : N;
  if (lo > N)
    lo = N;
  if (hi < N)
    hi = N;
  int n = in->nzones > 0 ? in->nzones : 1, count[PIT_ZONES_MAX];
  double price[PIT_ZONES_MAX], spot[PIT_ZONES_MAX], seen[PIT_ZONES_MAX], span[PIT_ZONES_MAX];
  double zero[PIT_ZONES_MAX] = {0};
  for (int p = 0; p < n; p++) {
    const struct pit_zone_obs *z = &in->z[p];
    count[p] = z->known ? imin(z->cap, hi) : hi;
    price[p] = z->price_h;
    spot[p] = z->spot_price_h;
    seen[p] = 0.5;
    span[p] = z->nup > 0 ? z->up_s / z->nup / 3600 : z->known ? 0 : in->t_s / 3600;
  }
  /* t_p on `nodes` nodes: t_p(m) X(m) / X(nodes) (a global batch per step, whatever the count) */
  double tp_h = in->tp_s / 3600;
  if (in->tp_nodes > 0 && in->tp_nodes != N)
    tp_h *= pit_usl_share(in->sigma, in->kappa, in->tp_nodes, N);
  struct pit_fleet_view v = {
      .t_h = in->t_s / 3600, .done_h = (double)in->step * tp_h, .job_h = (double)in->total_steps * tp_h,
      .deadline_h = in->deadline_s / 3600, .restart_h = in->restart_s / 3600, .tick_h = in->tick_s / 3600,
      .npools = n, .nodes = N, .nmin = lo, .nmax = hi, .sigma = in->sigma, .kappa = in->kappa, .count = count,
      .price_h = price,
      .spot_price_h = spot, .avail_seen = seen, .span_seen_h = span, .avail_for_h = span,
      .any_seen = in->any_seen, .move_h = zero, .move_usd = zero, .cur = in->cur, .ckpt_pool = in->ckpt_zone,
      .fixed_pool = -1, .reclaimed = in->reclaimed};
  if (v.cur.spot + v.cur.od == 0)
    v.cur.pool = in->ckpt_zone >= 0 ? in->ckpt_zone : home_pool(&v);
  struct pit_sim_member r = in->measured ? pit_fleet_decide(PIT_FLEET_PITSTOP, &v) : spot_in(&v, v.cur.pool);
  if (in->running && r.spot + r.od == 0)
    r = (struct pit_sim_member){v.cur.pool, 0, in->nodes};
  return r;
}
