/* simulate.c — one job replayed tick by tick over a trace under a spot
 * policy (the model at the top of include/pitstop/sim.h).
 * Each tick: a held spot instance is reclaimed if the trace says 0; the
 * policy sees the state and chooses; a change of instance starts one (its
 * restart overhead passes before progress); the tick is paid at the held
 * instance's price. The run goes past the deadline if it must (then the
 * deadline is missed), up to a bound after which finish_h is INFINITY.
 * With n nodes (pit_sim_multi) the same loop runs with n nodes in lock-step;
 * its cost is O(ticks), independent of n (nodes are counted, not listed).
 * Invariant: cost and hours count only ticks an instance was held
 * (spot_h/od_h are node-hours).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pitstop/sim.h"

void pit_sim_result_init(struct pit_sim_result *r) {
  memset(r, 0, sizeof *r);
  r->finish_h = INFINITY;
}

void pit_sim_result_release(struct pit_sim_result *r) {
  free(r->changes);
  free(r->done_at);
  free(r->mode_at);
  pit_sim_result_init(r);
}

int pit_sim_grid(const struct pit_sim_case *c, struct pit_sim_grid *g, struct pit_err *e) {
  if (!c->trace || c->trace->n < 1 || !(c->trace->gap_s > 0))
    return pit_err_set(e, PIT_EARG, "no trace");
  if (!(c->job_h > 0) || !(c->deadline_h > 0) || !(c->restart_h >= 0) || !isfinite(c->job_h) ||
      !isfinite(c->deadline_h) || !isfinite(c->restart_h))
    return pit_err_set(e, PIT_EARG, "job, deadline must be > 0 and restart >= 0 hours");
  if (!(c->price_h > 0) || !(c->spot_price_h >= 0))
    return pit_err_set(e, PIT_EARG, "prices must be > 0 (on-demand) and >= 0 (spot)");
  g->tick_h = c->trace->gap_s / 3600.0;
  g->work = (int64_t)ceil(c->job_h / g->tick_h - 1e-9);
  g->deadline = (int64_t)floor(c->deadline_h / g->tick_h + 1e-9);
  g->restart = (int64_t)ceil(c->restart_h / g->tick_h - 1e-9);
  if (g->work + g->deadline > ((int64_t)1 << 31))
    return pit_err_set(e, PIT_EARG, "%.0f ticks of %g s: too many (the limit is 2^31)",
                       (double)(g->work + g->deadline), c->trace->gap_s);
  return 0;
}

static int count_at(const struct pit_sim_case *c, int64_t t);

int pit_sim_avail(const struct pit_sim_case *c, int64_t t) {
  return count_at(c, t) > 0;
}

/* spot instances available at tick t of the case (the trace wrapped) */
static int count_at(const struct pit_sim_case *c, int64_t t) {
  const struct pit_trace *tr = c->trace;
  int64_t i = ((int64_t)c->offset + t) % tr->n;
  return tr->count[i < 0 ? i + tr->n : i];
}

/* The one simulation loop, for n >= 1 nodes in lock-step. The policy sees
 * spot as available when the trace counts at least one instance; choosing
 * spot gives min(count, n) spot nodes and n − that on-demand (a mixed
 * membership), on-demand gives n on-demand, idle none. Any change of the
 * membership (a new choice, or a reclaim of held spot nodes: the trace's
 * count below them) restarts the job: the restart overhead passes, all nodes
 * paid, before progress. A reclaim shows the policy an idle job. */
static int simulate(const struct pit_sim_case *c, enum pit_spot_policy p, int n, int keep_path,
                    struct pit_sim_result *r, size_t *peak_bytes, struct pit_err *e) {
  struct pit_sim_grid g;
  pit_sim_result_init(r);
  int rc = pit_sim_grid(c, &g, e);
  if (rc)
    return rc;
  /* past the deadline on-demand finishes in at most work + restart ticks */
  int64_t limit = g.deadline + g.work + g.restart + 1;
  size_t ccap = 0;
  if (keep_path) {
    r->done_at = malloc((size_t)limit * sizeof *r->done_at);
    r->mode_at = malloc((size_t)limit);
    if (!r->done_at || !r->mode_at) {
      pit_sim_result_release(r);
      return pit_err_set(e, PIT_ENOMEM, "out of memory for %lld ticks", (long long)limit);
    }
  }
  enum pit_spot_mode mode = PIT_SPOT_IDLE;
  int64_t done = 0, ovl = 0, seen = 0, runs = 0, spot_ticks = 0, od_ticks = 0, ns = 0, up_for = 0;
  int prev_avail = 0;
  double cost = 0, ps = c->spot_price_h * g.tick_h, po = c->price_h * g.tick_h; /* forecast: simulated clock */
  int64_t t;
  for (t = 0; t < limit && done < g.work; t++) {
    int cnt = count_at(c, t), avail = cnt > 0;
    seen += avail;
    runs += avail && !prev_avail;
    up_for = avail ? up_for + 1 : 0;
    prev_avail = avail;
    if (mode == PIT_SPOT_SPOT && cnt < ns) {
      mode = PIT_SPOT_IDLE;
      ovl = 0;
      r->preemptions++;
    }
    struct pit_spot_state s = {
        .t_h = t * g.tick_h, .done_h = done * g.tick_h, .job_h = g.work * g.tick_h,
        .deadline_h = g.deadline * g.tick_h, .restart_h = g.restart * g.tick_h, .tick_h = g.tick_h,
        .spot_avail = avail, .mode = mode, .overhead_left_h = ovl * g.tick_h,
        .price_h = c->price_h, .spot_price_h = c->spot_price_h, .avail_seen = (double)seen / (double)(t + 1),
        .run_seen_h = runs ? (double)seen / (double)runs * g.tick_h : 0,
        .spot_share = cnt >= n ? 1.0 : (double)cnt / n, .avail_for_h = up_for * g.tick_h};
    /* past the deadline every policy finishes on what it holds, or on-demand */
    enum pit_spot_mode ch = pit_spot_decide(p, &s);
    if (ch != mode) {
      if (PIT_GROW(r->changes, r->nchanges + 1, ccap)) {
        pit_sim_result_release(r);
        return pit_err_set(e, PIT_ENOMEM, "out of memory for the decisions");
      }
      r->changes[r->nchanges++] = (struct pit_sim_change){s.t_h, ch};
      mode = ch;
      ovl = mode == PIT_SPOT_IDLE ? 0 : g.restart;
      ns = mode == PIT_SPOT_SPOT ? (cnt < n ? cnt : n) : 0;
    }
    if (mode != PIT_SPOT_IDLE) {
      int64_t no = n - ns;
      cost += (double)ns * ps + (double)no * po;
      spot_ticks += ns;
      od_ticks += no;
      if (ovl > 0)
        ovl--;
      else
        done++;
    }
    if (keep_path) {
      r->done_at[t] = (float)(done * g.tick_h);
      r->mode_at[t] = (unsigned char)mode;
    }
  }
  r->nticks = (int)t;
  r->cost = cost;
  r->spot_h = spot_ticks * g.tick_h;
  r->od_h = od_ticks * g.tick_h;
  r->finish_h = done >= g.work ? t * g.tick_h : INFINITY;
  r->deadline_met = done >= g.work && t <= g.deadline;
  if (peak_bytes)
    *peak_bytes = sizeof *r + sizeof g + ccap * sizeof *r->changes +
                  (keep_path ? (size_t)limit * (sizeof *r->done_at + 1) : 0) +
                  (size_t)c->trace->n * sizeof *c->trace->count;
  return 0;
}

int pit_sim_run(const struct pit_sim_case *c, enum pit_spot_policy p, int keep_path, struct pit_sim_result *r,
                struct pit_err *e) {
  return simulate(c, p, 1, keep_path, r, NULL, e);
}

int pit_sim_multi(const struct pit_sim_case *c, enum pit_spot_policy p, struct pit_sim_result *r,
                  size_t *peak_bytes, struct pit_err *e) {
  if (c->nodes < 1) {
    pit_sim_result_init(r);
    return pit_err_set(e, PIT_EARG, "nodes must be >= 1 (%d)", c->nodes);
  }
  return simulate(c, p, c->nodes, 0, r, peak_bytes, e);
}
