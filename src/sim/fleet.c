/* fleet.c — a data-parallel job on a fleet of nodes over several pools (zone ×
 * instance type, one spot trace each), replayed tick by tick under a fleet
 * policy (the model at section 6 of include/pitstop/sim.h).
 * Per-node state: the membership's nodes are listed (two stacks, spot and
 * on-demand, of struct pit_sim_node); a change touches only the nodes it
 * starts, stops or reclaims, and a node is billed once, when it stops
 * (pit_itype_billed_s), so a tick costs O(pools) plus the nodes changed.
 * Invariants: the stacks hold exactly cur.spot and cur.od nodes of cur.pool;
 * cost counts each stopped node once; progress only outside overheads.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pitstop/sim.h"

void pit_fleet_result_init(struct pit_fleet_result *r) {
  memset(r, 0, sizeof *r);
  r->finish_h = INFINITY;
}

void pit_fleet_result_release(struct pit_fleet_result *r) {
  PIT_FREE_ALL(r->changes, r->done_at, r->member_at);
  pit_fleet_result_init(r);
}

double pit_fleet_rate(const struct pit_sim_study *s, int n) {
  if (n <= 0)
    return 0;
  double sg = s->sigma, kp = s->kappa, N = s->nodes;
  double x = n / (1 + sg * (n - 1) + kp * n * (double)(n - 1));
  double xN = N / (1 + sg * (N - 1) + kp * N * (N - 1));
  return x / xN;
}

int pit_fleet_check(const struct pit_sim_study *s, struct pit_err *e) {
  if (s->npools < 1 || !s->pools)
    return pit_err_set(e, PIT_EARG, "a study needs at least one trace");
  const struct pit_trace *t0 = s->pools[0].trace;
  for (int i = 0; i < s->npools; i++) {
    const struct pit_sim_pool *p = &s->pools[i];
    if (!p->trace || p->trace->n < 1 || !(p->trace->gap_s > 0))
      return pit_err_set(e, PIT_EARG, "pool %d: no trace", i);
    if (fabs(p->trace->gap_s - t0->gap_s) > 1e-9 * t0->gap_s)
      return pit_err_set(e, PIT_EFORMAT,
                         "trace '%s' (zone %s): ticks of %g s, but trace '%s' (zone %s) has %g s: a study has one tick",
                         p->trace->path, *p->zone ? p->zone : "?", p->trace->gap_s, t0->path,
                         *s->pools[0].zone ? s->pools[0].zone : "?", t0->gap_s);
    if (!(p->price_h > 0) || !isfinite(p->price_h) || !(p->spot_price_h >= 0) || !isfinite(p->spot_price_h))
      return pit_err_set(e, PIT_EARG, "trace '%s' (zone %s): no on-demand or spot price", p->trace->path,
                         *p->zone ? p->zone : "?");
  }
  if (!(s->job_h > 0) || !(s->deadline_h > 0) || !(s->restart_h >= 0) || !isfinite(s->job_h) ||
      !isfinite(s->deadline_h) || !isfinite(s->restart_h))
    return pit_err_set(e, PIT_EARG, "job, deadline must be > 0 and restart >= 0 hours");
  if (s->nodes < 1 || s->nmin < 1 || s->nmin > s->nodes || s->nmax < s->nodes || s->nmax > 1000000)
    return pit_err_set(e, PIT_EARG, "nodes %d within %d:%d: need 1 <= min <= nodes <= max <= 10^6", s->nodes, s->nmin,
                       s->nmax);
  if (!(s->sigma >= 0) || !(s->kappa >= 0) || !(s->ckpt_gb >= 0))
    return pit_err_set(e, PIT_EARG, "USL sigma, kappa and the checkpoint size must be >= 0");
  double tick_h = t0->gap_s / 3600;
  if (s->job_h / tick_h + s->deadline_h / tick_h > 2e9)
    return pit_err_set(e, PIT_EARG, "too many ticks of %g s (the limit is 2^31)", t0->gap_s);
  return 0;
}

static int cnt_at(const struct pit_sim_study *s, int p, int64_t t) {
  const struct pit_trace *tr = s->pools[p].trace;
  return tr->count[((int64_t)s->offset + t) % tr->n];
}

/* the fleet being simulated */
struct fleet {
  const struct pit_sim_study *s;
  double tick_s, cost, spot_ticks, od_ticks;
  struct pit_sim_node *sp, *od; /* stacks of nmax each */
  int nsp, nod;
  int64_t boot_from_sp, boot_from_od; /* nodes from these indexes are booting */
};

static void stop_node(struct fleet *f, struct pit_sim_node *n, int64_t t, unsigned char state) {
  const struct pit_sim_pool *p = &f->s->pools[n->pool];
  double secs = (double)(t - n->start) * f->tick_s;
  double billed = p->itype ? pit_itype_billed_s(p->itype, secs) : secs;
  f->cost += billed / 3600.0 * (n->spot ? p->spot_price_h : p->price_h); /* forecast: simulated clock, billed */
  n->state = state;
}

/* stop the k newest nodes of a stack */
static void stop_k(struct fleet *f, int spot, int k, int64_t t, unsigned char state) {
  struct pit_sim_node *a = spot ? f->sp : f->od;
  int *n = spot ? &f->nsp : &f->nod;
  for (int i = 0; i < k && *n > 0; i++)
    stop_node(f, &a[--*n], t, state);
  int64_t *b = spot ? &f->boot_from_sp : &f->boot_from_od;
  if (*b > *n)
    *b = *n;
}

static void start_k(struct fleet *f, int pool, int spot, int k, int64_t t) {
  struct pit_sim_node *a = spot ? f->sp : f->od;
  int *n = spot ? &f->nsp : &f->nod;
  for (int i = 0; i < k; i++)
    a[(*n)++] = (struct pit_sim_node){.pool = pool, .spot = (unsigned char)spot, .state = PIT_SNODE_BOOTING,
                                      .start = t};
}

/* every node started since the last change is running now (O(nodes started)) */
static void booted(struct fleet *f) {
  for (int64_t i = f->boot_from_sp; i < f->nsp; i++)
    f->sp[i].state = PIT_SNODE_RUNNING;
  for (int64_t i = f->boot_from_od; i < f->nod; i++)
    f->od[i].state = PIT_SNODE_RUNNING;
  f->boot_from_sp = f->nsp;
  f->boot_from_od = f->nod;
}

static int same(struct pit_sim_member a, struct pit_sim_member b) {
  if (a.spot + a.od == 0 && b.spot + b.od == 0)
    return 1;
  return a.pool == b.pool && a.spot == b.spot && a.od == b.od;
}

/* The fleet changed from *cur to to (n nodes): n 0 stops every node (the
 * checkpoint stays where it is); else a move to another pool pays the
 * checkpoint's transfer, the nodes not kept stop and the new ones boot for R
 * ticks (plus the move's) before the checkpoint is in their pool. */
static void change_to(struct fleet *f, struct pit_sim_member *cur, struct pit_sim_member to, int n, int64_t t,
                      int64_t R, const int64_t *move_t, const double *move_usd, int *ckpt, int *ckpt_to,
                      int64_t *ovl, struct pit_fleet_result *r) {
  if (n == 0) { /* stop: the checkpoint stays where it is */
    stop_k(f, 1, f->nsp, t, PIT_SNODE_STOPPED);
    stop_k(f, 0, f->nod, t, PIT_SNODE_STOPPED);
    *ovl = 0;
    *cur = (struct pit_sim_member){cur->pool, 0, 0};
  } else {
    int64_t extra = 0;
    if (*ckpt >= 0 && to.pool != *ckpt) { /* a move: all nodes anew, the checkpoint crosses */
      extra = move_t[*ckpt];
      r->egress_usd += move_usd[*ckpt];
      f->cost += move_usd[*ckpt];
      r->moves++;
    }
    if (cur->spot + cur->od > 0 && to.pool != cur->pool) {
      stop_k(f, 1, f->nsp, t, PIT_SNODE_STOPPED);
      stop_k(f, 0, f->nod, t, PIT_SNODE_STOPPED);
    } else {
      if (to.spot < f->nsp)
        stop_k(f, 1, f->nsp - to.spot, t, PIT_SNODE_STOPPED);
      if (to.od < f->nod)
        stop_k(f, 0, f->nod - to.od, t, PIT_SNODE_STOPPED);
    }
    f->boot_from_sp = f->nsp;
    f->boot_from_od = f->nod;
    start_k(f, to.pool, 1, to.spot - f->nsp, t);
    start_k(f, to.pool, 0, to.od - f->nod, t);
    *ovl = R + extra;
    *ckpt_to = to.pool;
    if (*ovl == 0) {
      booted(f);
      *ckpt = *ckpt_to;
    }
    *cur = to;
  }
}

int pit_fleet_run(const struct pit_sim_study *s, enum pit_fleet_policy pol, int fixed_pool, int fixed_spot,
                  int keep_path, struct pit_fleet_result *r, struct pit_err *e) {
  pit_fleet_result_init(r);
  int rc = pit_fleet_check(s, e);
  if (rc)
    return rc;
  int P = s->npools;
  double tick_s = s->pools[0].trace->gap_s, tick_h = tick_s / 3600;
  int64_t work = (int64_t)ceil(s->job_h / tick_h - 1e-9), D = (int64_t)floor(s->deadline_h / tick_h + 1e-9),
          R = (int64_t)ceil(s->restart_h / tick_h - 1e-9);
  double rmin = pit_fleet_rate(s, s->nmin) < pit_fleet_rate(s, s->nmax) ? pit_fleet_rate(s, s->nmin)
                                                                          : pit_fleet_rate(s, s->nmax);
  /* past the deadline a policy finishes on what it holds; give up when even the slowest allowed
   * membership could not finish from nothing in this many ticks more */
  int64_t limit = D + (int64_t)ceil(work / (rmin > 0 ? rmin : 1)) + 4 * R + 16;
  struct fleet f = {.s = s, .tick_s = tick_s};
  f.sp = malloc((size_t)s->nmax * sizeof *f.sp);
  f.od = malloc((size_t)s->nmax * sizeof *f.od);
  int *count = malloc((size_t)P * sizeof *count), *seen = calloc((size_t)P, sizeof *seen),
      *runs = calloc((size_t)P, sizeof *runs), *prev = calloc((size_t)P, sizeof *prev);
  double *price = malloc((size_t)P * sizeof *price), *sprice = malloc((size_t)P * sizeof *sprice),
         *avail = malloc((size_t)P * sizeof *avail), *span = malloc((size_t)P * sizeof *span),
         *up_for = calloc((size_t)P, sizeof *up_for),
         *move_h = malloc((size_t)P * sizeof *move_h), *move_usd = malloc((size_t)P * sizeof *move_usd);
  int64_t *move_t = malloc((size_t)P * sizeof *move_t);
  size_t ccap = 0;
  if (!f.sp || !f.od || !count || !seen || !runs || !prev || !price || !sprice || !avail || !span || !up_for || !move_h ||
      !move_usd || !move_t) {
    rc = pit_err_set(e, PIT_ENOMEM, "out of memory for %d nodes", s->nmax);
    goto out;
  }
  if (keep_path) {
    r->done_at = malloc((size_t)limit * sizeof *r->done_at);
    r->member_at = malloc((size_t)limit * sizeof *r->member_at);
    if (!r->done_at || !r->member_at) {
      rc = pit_err_set(e, PIT_ENOMEM, "out of memory for %lld ticks", (long long)limit);
      goto out;
    }
  }
  for (int p = 0; p < P; p++) {
    const struct pit_sim_pool *q = &s->pools[p];
    price[p] = q->price_h;
    sprice[p] = q->spot_price_h;
    double mh = q->net_gbps > 0 && s->ckpt_gb > 0 ? s->ckpt_gb * 8 / q->net_gbps / 3600 : 0;
    move_t[p] = (int64_t)ceil(mh / tick_h - 1e-9);
    move_h[p] = (double)move_t[p] * tick_h;
    move_usd[p] = s->ckpt_gb * (q->egress_usd_gb > 0 ? q->egress_usd_gb : 0);
  }
  struct pit_sim_member cur = {0, 0, 0};
  int ckpt = -1, ckpt_to = -1; /* the checkpoint is in ckpt_to once a start's overhead has passed */
  double done = 0, W = (double)work;
  int64_t ovl = 0, t, any = 0;
  for (t = 0; t < limit && done < W - 1e-9; t++) {
    int some = 0;
    for (int p = 0; p < P; p++) {
      int c = cnt_at(s, p, t), a = c > 0;
      some |= a;
      count[p] = c;
      seen[p] += a;
      runs[p] += a && !prev[p];
      up_for[p] = a ? up_for[p] + tick_h : 0;
      prev[p] = a;
      avail[p] = (double)seen[p] / (double)(t + 1);
      span[p] = runs[p] ? (double)seen[p] / runs[p] * tick_h : 0;
    }
    any += some;
    int recl = 0;
    if (cur.spot > count[cur.pool]) { /* the trace takes spot nodes away */
      recl = cur.spot - count[cur.pool];
      stop_k(&f, 1, recl, t, PIT_SNODE_RECLAIMED);
      cur.spot -= recl;
      r->reclaimed += recl;
    }
    struct pit_fleet_view v = {
        .t_h = t * tick_h, .done_h = done * tick_h, .job_h = W * tick_h, .deadline_h = D * tick_h,
        .restart_h = R * tick_h, .tick_h = tick_h, .npools = P, .nodes = s->nodes, .nmin = s->nmin,
        .nmax = s->nmax, .sigma = s->sigma, .kappa = s->kappa, .count = count, .price_h = price,
        .spot_price_h = sprice, .avail_seen = avail, .span_seen_h = span, .avail_for_h = up_for,
        .any_seen = (double)any / (double)(t + 1), .move_h = move_h,
        .move_usd = move_usd, .cur = cur, .reclaimed = recl, .ckpt_pool = ckpt,
        .overhead_left_h = ovl * tick_h, .seed = s->seed, .fixed_pool = fixed_pool, .fixed_spot = fixed_spot};
    if (recl)
      v.overhead_left_h = 0;
    struct pit_sim_member to = pit_fleet_decide(pol, &v);
    int n = to.spot + to.od;
    if (n > 0 && (to.pool < 0 || to.pool >= P || to.spot < 0 || to.od < 0 || to.spot > count[to.pool] ||
                  n < s->nmin || n > s->nmax)) {
      rc = pit_err_set(e, PIT_EBUG, "policy %s chose %d spot + %d on-demand in pool %d (count %d, nodes %d:%d)",
                       pit_fleet_policy_name(pol), to.spot, to.od, to.pool, count[to.pool < 0 ? 0 : to.pool % P],
                       s->nmin, s->nmax);
      goto out;
    }
    if (!same(to, cur) || (recl && n > 0)) {
      change_to(&f, &cur, to, n, t, R, move_t, move_usd, &ckpt, &ckpt_to, &ovl, r);
      if (PIT_GROW(r->changes, r->nchanges + 1, ccap)) {
        rc = pit_err_set(e, PIT_ENOMEM, "out of memory for the decisions");
        goto out;
      }
      r->changes[r->nchanges++] = (struct pit_fleet_change){t * tick_h, cur, recl};
    }
    int held = cur.spot + cur.od;
    if (held > r->peak_nodes)
      r->peak_nodes = held;
    if (held > 0) {
      f.spot_ticks += cur.spot;
      f.od_ticks += cur.od;
      if (ovl > 0) {
        if (--ovl == 0) {
          booted(&f);
          ckpt = ckpt_to; /* an interrupted move leaves the checkpoint where it was */
        }
      } else {
        done += pit_fleet_rate(s, held);
      }
    }
    if (keep_path) {
      r->done_at[t] = (float)(done * tick_h);
      r->member_at[t] = cur;
    }
  }
  stop_k(&f, 1, f.nsp, t, PIT_SNODE_STOPPED);
  stop_k(&f, 0, f.nod, t, PIT_SNODE_STOPPED);
  r->nticks = (int)t;
  r->cost = f.cost;
  r->spot_h = f.spot_ticks * tick_h;
  r->od_h = f.od_ticks * tick_h;
  r->finish_h = done >= W - 1e-9 ? t * tick_h : INFINITY;
  r->deadline_met = done >= W - 1e-9 && t <= D;
  r->peak_bytes = sizeof f + 2 * (size_t)s->nmax * sizeof *f.sp + (size_t)P * (4 * sizeof(int) + 8 * sizeof(double)) +
                  ccap * sizeof *r->changes + (keep_path ? (size_t)limit * (sizeof *r->done_at + sizeof *r->member_at) : 0);
out:
  PIT_FREE_ALL(f.sp, f.od, count, seen, runs, prev, price, sprice, avail, span, up_for, move_h, move_usd, move_t);
  if (rc) {
    pit_fleet_result_release(r);
    return rc;
  }
  return 0;
}

int pit_fleet_best_fixed(const struct pit_sim_study *s, struct pit_fleet_result *r, int *pool, int *spot,
                         struct pit_err *e) {
  pit_fleet_result_init(r);
  int rc = pit_fleet_check(s, e);
  if (rc)
    return rc;
  int best = 0;
  *pool = -1;
  *spot = 0;
  for (int p = 0; p < s->npools; p++)
    for (int q = 0; q <= 4; q++) {
      int k = (int)((long long)s->nodes * q / 4);
      if (q > 0 && k == (int)((long long)s->nodes * (q - 1) / 4))
        continue; /* the same membership again (few nodes) */
      struct pit_fleet_result x;
      if ((rc = pit_fleet_run(s, PIT_FLEET_FIXED, p, k, 0, &x, e))) {
        pit_fleet_result_release(r);
        return rc;
      }
      if (x.deadline_met && (!best || x.cost < r->cost)) {
        pit_fleet_result_release(r);
        *r = x;
        *pool = p;
        *spot = k;
        best = 1;
      } else {
        pit_fleet_result_release(&x);
      }
    }
  if (!best) { /* none meets it: the on-demand one, missed */
    int cheapest = 0;
    for (int p = 1; p < s->npools; p++)
      if (s->pools[p].price_h < s->pools[cheapest].price_h)
        cheapest = p;
    *pool = cheapest;
    return pit_fleet_run(s, PIT_FLEET_FIXED, cheapest, 0, 0, r, e);
  }
  return 0;
}
