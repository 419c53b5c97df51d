/* optimum.c — the omniscient optimum: the least cost of any schedule that
 * finishes by the deadline with the whole trace known, solved exactly by
 * dynamic programming over ticks × work done, in the model every policy runs
 * in (include/pitstop/sim.h), so no online policy can cost less.
 *
 * Values from tick t with w ticks of work done (D deadline, h work, r restart
 * ticks, ps/po the price of a tick on spot/on-demand, a(t) spot available):
 *   I(t,w)  holding nothing;  S(t,w) holding spot past its start overhead;
 *   O(t,w)  holding on-demand past its start overhead.
 *   I(t,h) = S(t,h) = O(t,h) = 0;  any other state at t = D is infeasible (∞).
 *   I(t,w) = min( I(t+1,w),                                   wait
 *                 r·ps + S(t+r,w)  if a(t..t+r−1) all,       start spot
 *                 r·po + O(t+r,w) )                            start on-demand
 *            (with r = 0 a start is the run below)
 *   S(t,w) = a(t) ? min(ps + S(t+1,w+1), I(t,w)) : I(t,w)     (a reclaim drops it)
 *   O(t,w) = min(po + O(t+1,w+1), I(t,w))
 * Changing instance in the middle of a start overhead is never better than
 * having waited instead (it pays for ticks that give nothing), so the jump
 * over the overhead loses no schedule of least cost.
 * The safe optimum (pit_sim_optimum_safe) is the same DP with the states a
 * policy that meets the deadline on every trace cannot be in left out: at a
 * tick held on spot, and after a tick idle, on-demand started at once must
 * still finish if spot never comes back:
 *   S(t,w) runs only if (D − t) − (h − w) >= r   (a reclaim at t leaves an on-demand start);
 *   I(t,w) waits only if (D − t − 1) − (h − w) >= r;
 * a start of spot at t then needs (D − t − r) − (h − w) >= r (its first running
 * tick), i.e. the slack covers two starts. (Running keeps the slack and a wait
 * below one restart leaves no on-demand start that finishes, so the first rule
 * alone gives the same values; the others are kept explicit.) An online policy cannot tell the
 * trace from one where spot goes away for good at the next tick, so one that
 * never misses a deadline keeps these on every trace, and its cost is at
 * least the safe optimum's (docs/simulate.md); uniform progress, which can
 * miss, is not bound by it.
 * Rows t+1..t+r are kept in a ring (memory O(r·h)); ties in cost go to the
 * earlier finish. With keep_path the choice of every state (one byte) is kept
 * and the schedule rebuilt forward.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pitstop/sim.h"

struct cell { double c; int32_t f; }; /* cost, finish tick */

static int better(struct cell a, struct cell b) {
  double tol = 1e-9 * (fabs(b.c) > 1 ? fabs(b.c) : 1);
  if (a.c < b.c - tol)
    return 1;
  return a.c <= b.c + tol && a.f < b.f;
}

enum { CH_START_S = 1, CH_START_O = 2, CH_S_DROP = 4, CH_O_DROP = 8 };

static int rebuild(const struct pit_sim_case *c, const struct pit_sim_grid *g, const unsigned char *ch,
                   struct pit_sim_result *r, struct pit_err *e) {
  int64_t h = g->work, rr = g->restart, D = g->deadline;
  r->done_at = malloc((size_t)(D + 1) * sizeof *r->done_at);
  r->mode_at = malloc((size_t)(D + 1));
  if (!r->done_at || !r->mode_at)
    return pit_err_set(e, PIT_ENOMEM, "out of memory for the optimum's schedule");
  size_t ccap = 0;
  enum pit_spot_mode held = PIT_SPOT_IDLE;
  int64_t w = 0, ovl = 0, t;
  for (t = 0; t < D && w < h; t++) {
    enum pit_spot_mode before = held;
    unsigned char k = ch[(size_t)t * (size_t)(h + 1) + (size_t)w];
    if (held == PIT_SPOT_SPOT && ovl == 0 && !pit_sim_avail(c, t))
      held = PIT_SPOT_IDLE, r->preemptions++, before = held;
    if (ovl == 0) {
      if ((held == PIT_SPOT_SPOT && (k & CH_S_DROP)) || (held == PIT_SPOT_OD && (k & CH_O_DROP)))
        held = PIT_SPOT_IDLE;
      if (held == PIT_SPOT_IDLE && (k & 3)) {
        held = (k & 3) == CH_START_S ? PIT_SPOT_SPOT : PIT_SPOT_OD;
        ovl = rr;
      }
    }
    if (held != before) {
      if (PIT_GROW(r->changes, r->nchanges + 1, ccap))
        return pit_err_set(e, PIT_ENOMEM, "out of memory for the optimum's schedule");
      r->changes[r->nchanges++] = (struct pit_sim_change){t * g->tick_h, held};
    }
    if (held != PIT_SPOT_IDLE) {
      if (ovl > 0)
        ovl--;
      else
        w++;
    }
    r->done_at[t] = (float)(w * g->tick_h);
    r->mode_at[t] = (unsigned char)held;
  }
  r->nticks = (int)t;
  return 0;
}

static int optimum(const struct pit_sim_case *c, int keep_path, int safe, struct pit_sim_result *r,
                   struct pit_err *e) {
  struct pit_sim_grid g;
  pit_sim_result_init(r);
  int rc = pit_sim_grid(c, &g, e);
  if (rc)
    return rc;
  int64_t h = g.work, rr = g.restart, D = g.deadline, W = h + 1;
  if (h + rr > D) { /* not even on-demand from the start finishes */
    r->cost = INFINITY;
    return 0;
  }
  int64_t rows = rr + 2;
  struct cell *I = malloc((size_t)(rows * W) * sizeof *I), *S = malloc((size_t)(rows * W) * sizeof *S),
              *O = malloc((size_t)(rows * W) * sizeof *O);
  int32_t *run = malloc((size_t)(D + 1) * sizeof *run); /* spot-available ticks from t on */
  unsigned char *ch = NULL; /* choices: for the path, and for the hours held (so always when small) */
  if (D * W <= ((int64_t)1 << 26))
    ch = calloc((size_t)(D * W), 1);
  if (!I || !S || !O || !run || (D * W <= ((int64_t)1 << 26) && !ch)) {
    rc = pit_err_set(e, PIT_ENOMEM, "out of memory for the optimum (%lld × %lld states)", (long long)D,
                     (long long)W);
    goto out;
  }
  run[D] = 0;
  for (int64_t t = D - 1; t >= 0; t--)
    run[t] = pit_sim_avail(c, t) ? run[t + 1] + 1 : 0;
  const struct cell INF = {INFINITY, INT32_MAX};
  double ps = c->spot_price_h * g.tick_h, po = c->price_h * g.tick_h; /* forecast: simulated clock */
#define ROW(a, t) ((a) + ((t) % rows) * W)
  for (int64_t w = 0; w < W; w++) /* t = D */
    ROW(I, D)[w] = ROW(S, D)[w] = ROW(O, D)[w] = w == h ? (struct cell){0, (int32_t)D} : INF;
  for (int64_t t = D - 1; t >= 0; t--) {
    struct cell *i0 = ROW(I, t), *s0 = ROW(S, t), *o0 = ROW(O, t);
    const struct cell *i1 = ROW(I, t + 1), *s1 = ROW(S, t + 1), *o1 = ROW(O, t + 1);
    const struct cell *sr = t + rr <= D ? ROW(S, t + rr) : NULL, *or_ = t + rr <= D ? ROW(O, t + rr) : NULL;
    int a = run[t] > 0, startable = rr == 0 ? a : run[t] >= rr;
    int64_t lo = h - (D - t), hi = t < h ? t : h;
    if (lo < 0)
      lo = 0;
    if (lo > 0) /* below the band: infeasible (read by start jumps from t - r) */
      for (int64_t w = lo - rr - 1 > 0 ? lo - rr - 1 : 0; w < lo; w++)
        i0[w] = s0[w] = o0[w] = INF;
    for (int64_t w = lo; w <= hi; w++) {
      if (w == h) {
        i0[w] = s0[w] = o0[w] = (struct cell){0, (int32_t)t};
        continue;
      }
      int64_t slack = (D - t) - (h - w); /* ticks the job can still lose */
      struct cell runS = INF, runO = {po + o1[w + 1].c, o1[w + 1].f};
      if (a && (!safe || slack >= rr))
        runS = (struct cell){ps + s1[w + 1].c, s1[w + 1].f};
      struct cell best = !safe || slack - 1 >= rr ? i1[w] : INF, stS = INF, stO = INF;
      unsigned char k = 0;
      if (rr == 0) {
        stS = runS, stO = runO;
      } else if (sr) {
        if (startable && (!safe || slack - rr >= rr))
          stS = (struct cell){rr * ps + sr[w].c, sr[w].f};
        stO = (struct cell){rr * po + or_[w].c, or_[w].f};
      }
      if (better(stS, best))
        best = stS, k = CH_START_S;
      if (better(stO, best))
        best = stO, k = CH_START_O;
      i0[w] = best;
      if (a && !better(best, runS))
        s0[w] = runS;
      else
        s0[w] = best, k |= CH_S_DROP;
      if (!better(best, runO))
        o0[w] = runO;
      else
        o0[w] = best, k |= CH_O_DROP;
      if (ch)
        ch[(size_t)t * (size_t)W + (size_t)w] = k;
    }
    if (hi < h) /* above the band: cannot be reached; keep the reads defined */
      for (int64_t w = hi + 1; w < W && w <= hi + 1; w++)
        i0[w] = s0[w] = o0[w] = INF;
  }
  struct cell v = ROW(I, 0)[0];
#undef ROW
  r->cost = v.c;
  r->spot_h = r->od_h = NAN; /* known from the schedule only */
  r->deadline_met = isfinite(v.c);
  r->finish_h = isfinite(v.c) ? v.f * g.tick_h : INFINITY;
  if (ch && isfinite(v.c)) {
    rc = rebuild(c, &g, ch, r, e);
    if (!rc) { /* hours held, from the schedule */
      r->spot_h = r->od_h = 0;
      for (int i = 0; i < r->nticks; i++)
        if (r->mode_at[i] == PIT_SPOT_SPOT)
          r->spot_h += g.tick_h;
        else if (r->mode_at[i] == PIT_SPOT_OD)
          r->od_h += g.tick_h;
      if (!keep_path) { /* the hours were what it was rebuilt for */
        free(r->done_at);
        free(r->mode_at);
        r->done_at = NULL;
        r->mode_at = NULL;
      }
    }
  }
out:
  PIT_FREE_ALL(I, S, O, run, ch);
  if (rc)
    pit_sim_result_release(r);
  return rc;
}

int pit_sim_optimum(const struct pit_sim_case *c, int keep_path, struct pit_sim_result *r, struct pit_err *e) {
  return optimum(c, keep_path, 0, r, e);
}

int pit_sim_optimum_safe(const struct pit_sim_case *c, int keep_path, struct pit_sim_result *r, struct pit_err *e) {
  return optimum(c, keep_path, 1, r, e);
}
