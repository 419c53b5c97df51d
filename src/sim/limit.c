/* limit.c — the least cost any policy can reach in the fleet model (section 6 of
 * include/pitstop/sim.h): an exact optimum by dynamic programming for small
 * studies, and a lower bound by a relaxation solved exactly for any study.
 * docs/simulate.md proves the bound and explains the DP.
 *
 * Exact DP. Work counts in units: u(n) units per tick on n nodes, the job W
 * units; exact when u is an integer for every allowed n (linear throughput:
 * u(n) = n, W = nodes × work ticks; or one node count: u = 1, W = work).
 * Configurations: running (pool p, s spot, o on-demand; s + o allowed) past
 * its start, or idle with the checkpoint in pool q (or nowhere yet). From
 * (t, w, c), values V(t, w, c) = least cost to finish by D:
 *   V(t, W, c) = 0;  V(D, w < W, c) = ∞;
 *   idle(q): min( V(t+1, w, idle(q)),  start(c', t) )
 *   running c: min( [s <= count_p(t)] s·ps_p + o·po_p + V(t+1, w+u(n), c),
 *                   V(t, w, idle(p)),  start(c' != c, t) from checkpoint p )
 *   start(c', t) from q: r' = restart + (move ticks out of q if p' != q);
 *                   needs s' <= count_p'(t..t+r'−1); cost r'·(s'·ps + o'·po)
 *                   + egress if p' != q; lands at V(t+r', w, c').
 * A reclaim is a running c that cannot run at t: only stop or start remain,
 * as in the simulator (survivors and additions restart together). Stopping and
 * starting at one tick is one change (the min over both covers it). Billing
 * is per second here (billed >= held, so the simulator never costs less).
 * Memory: rows t..t+rmax in a ring, W+1 work levels × configurations.
 *
 * Bound. Relax: (a) overheads, moves and egress are free except the first
 * start's r ticks (some tick holds >= nmin nodes at the cheapest price of any
 * node there); (b) a tick's nodes may come from any pools at once (the n
 * cheapest nodes available at t: spot up to each pool's count, on-demand
 * unlimited); (c) fractional work: the n-th node adds X(n) − X(n−1) at the
 * price of the n-th cheapest node — filled by price per unit of work over all
 * ticks t in [r, D) (a fractional knapsack, solved exactly by sorting).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pitstop/sim.h"

static int cnt(const struct pit_sim_study *s, int p, int64_t t) {
  const struct pit_trace *tr = s->pools[p].trace;
  return tr->count[((int64_t)s->offset + t) % tr->n];
}

struct cfg { int pool, s, o, u; double c; }; /* running: cost per tick; idle: s = o = 0, pool = q (-1 nowhere) */

/* The spot shares worth a configuration of n nodes in pool p (marks[v] = 1: keep s = v).
 * When spot costs no more than on-demand there, only 0 and the counts the trace takes
 * (capped at n) can be optimal: a schedule holding s spot nodes over a span where the
 * count never falls below c >= s (through its start's overhead) may hold s* = min(c, n)
 * instead — the same nodes, the same work, no earlier reclaim (one at the span's end
 * stays one: the count falls below s <= s*), and no more cost per tick. So the DP over
 * these shares has the same least cost as over every share (test_fleet.c compares
 * both on random studies). */
static void shares(const struct pit_sim_study *s, int p, int n, int every, unsigned char *marks) {
  const struct pit_sim_pool *q = &s->pools[p];
  memset(marks, every || q->spot_price_h > q->price_h ? 1 : 0, (size_t)n + 1);
  marks[0] = 1;
  if (every || q->spot_price_h > q->price_h)
    return;
  const struct pit_trace *tr = q->trace;
  for (int i = 0; i < tr->n; i++)
    marks[tr->count[i] < n ? (tr->count[i] > 0 ? tr->count[i] : 0) : n] = 1;
}

int pit_fleet_exact(const struct pit_sim_study *s, double max_cells, double *cost, int *done, struct pit_err *e) {
  return pit_fleet_exact_shares(s, max_cells, 0, cost, done, e);
}

int pit_fleet_exact_shares(const struct pit_sim_study *s, double max_cells, int every_share, double *cost, int *done,
                           struct pit_err *e) {
  *done = 0;
  *cost = NAN;
  int rc = pit_fleet_check(s, e);
  if (rc)
    return rc;
  int linear = s->sigma == 0 && s->kappa == 0 && s->nmin != s->nmax; /* else one node count: u = 1 */
  if (!linear && s->nmin != s->nmax)
    return 0; /* USL with several node counts: units are not integers */
  int P = s->npools;
  double tick_h = s->pools[0].trace->gap_s / 3600;
  int64_t work = (int64_t)ceil(s->job_h / tick_h - 1e-9), D = (int64_t)floor(s->deadline_h / tick_h + 1e-9),
          R = (int64_t)ceil(s->restart_h / tick_h - 1e-9);
  int64_t W = linear ? work * s->nodes : work;
  int64_t *mv = malloc((size_t)P * sizeof *mv);
  double *eg = malloc((size_t)P * sizeof *eg);
  if (!mv || !eg) {
    free(mv);
    free(eg);
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  }
  int64_t rmax = R;
  for (int p = 0; p < P; p++) {
    const struct pit_sim_pool *q = &s->pools[p];
    double mh = q->net_gbps > 0 && s->ckpt_gb > 0 ? s->ckpt_gb * 8 / q->net_gbps / 3600 : 0;
    mv[p] = (int64_t)ceil(mh / tick_h - 1e-9);
    eg[p] = s->ckpt_gb * (q->egress_usd_gb > 0 ? q->egress_usd_gb : 0);
    if (R + mv[p] > rmax)
      rmax = R + mv[p];
  }
  /* configurations: idle(-1), idle(0..P-1), then running */
  if (s->nmax > 64) {
    PIT_FREE_ALL(mv, eg);
    return 0;
  }
  unsigned char marks[65];
  int nrun = 0;
  for (int p = 0; p < P; p++)
    for (int n = s->nmin; n <= s->nmax; n++) {
      shares(s, p, n, every_share, marks);
      for (int sp = 0; sp <= n; sp++)
        nrun += marks[sp];
    }
  int C = P + 1 + nrun;
  /* per tick and work level: a start from each checkpoint place over every configuration,
   * then each configuration's run or stop */
  double cells = (double)(rmax + 2) * (double)(W + 1) * C, work_ops = (double)D * (double)(W + 1) * C * (P + 2);
  if (cells > max_cells || work_ops > 40 * max_cells) {
    PIT_FREE_ALL(mv, eg);
    return 0;
  }
  struct cfg *cf = malloc((size_t)C * sizeof *cf);
  double *sf = malloc((size_t)(P + 1) * sizeof *sf);
  int64_t *sr = malloc((size_t)(P + 1) * (size_t)C * sizeof *sr);
  int64_t rows = rmax + 2;
  double *V = malloc((size_t)(rows * (W + 1) * C) * sizeof *V);
  if (!cf || !V || !sf || !sr) {
    PIT_FREE_ALL(mv, eg, cf, V, sf, sr);
    return pit_err_set(e, PIT_ENOMEM, "out of memory for the exact limit");
  }
  for (int q = -1; q < P; q++)
    cf[q + 1] = (struct cfg){q, 0, 0, 0, 0};
  int k = P + 1;
  for (int p = 0; p < P; p++)
    for (int n = s->nmin; n <= s->nmax; n++) {
      shares(s, p, n, every_share, marks);
      for (int sp = 0; sp <= n; sp++)
        if (marks[sp])
          cf[k++] = (struct cfg){p, sp, n - sp, linear ? n : 1,
                                 sp * s->pools[p].spot_price_h * tick_h + /* forecast: simulated clock */
                                     (n - sp) * s->pools[p].price_h * tick_h}; /* forecast: simulated clock */
    }
#define AT(t, w, c) V[((size_t)((t) % rows) * (size_t)(W + 1) + (size_t)(w)) * (size_t)C + (size_t)(c)]
  for (int64_t w = 0; w <= W; w++)
    for (int c = 0; c < C; c++)
      AT(D, w, c) = w >= W ? 0 : INFINITY;
  for (int64_t t = D - 1; t >= 0; t--) {
    /* the start of c' from q at t: its overhead r (−1: past D, or spot not there throughout) */
    for (int q = -1; q < P; q++)
      for (int c = P + 1; c < C; c++) {
        const struct cfg *x = &cf[c];
        int64_t r = R + (q >= 0 && x->pool != q ? mv[q] : 0);
        int ok = t + (r > 0 ? r : 1) <= D;
        for (int64_t i = 0; i < (r > 0 ? r : 1) && ok; i++)
          ok = cnt(s, x->pool, t + i) >= x->s;
        sr[(size_t)(q + 1) * (size_t)C + (size_t)c] = ok ? r : -1;
      }
    for (int64_t w = W; w >= 0; w--) {
      if (w >= W) {
        for (int c = 0; c < C; c++)
          AT(t, w, c) = 0;
        continue;
      }
      /* best start from checkpoint q (q = -1 nowhere): over all running c' */
      for (int q = -1; q < P; q++) {
        double best = INFINITY;
        const int64_t *rq = sr + (size_t)(q + 1) * (size_t)C;
        for (int c = P + 1; c < C; c++) {
          int64_t r = rq[c];
          if (r < 0)
            continue; /* cannot start c from q at t */
          const struct cfg *x = &cf[c];
          double eg_q = q >= 0 && x->pool != q ? eg[q] : 0, v;
          if (r == 0) { /* no overhead: the start is the tick's run */
            int64_t w2 = w + x->u < W ? w + x->u : W;
            v = x->c + AT(t + 1, w2, c) + eg_q;
          } else {
            v = (double)r * x->c + AT(t + r, w, c) + eg_q;
          }
          if (v < best)
            best = v;
        }
        sf[q + 1] = best;
      }
      for (int q = -1; q < P; q++) { /* idle */
        double v = AT(t + 1, w, q + 1);
        if (sf[q + 1] < v)
          v = sf[q + 1];
        AT(t, w, q + 1) = v;
      }
      for (int c = P + 1; c < C; c++) {
        const struct cfg *x = &cf[c];
        double v = AT(t, w, x->pool + 1); /* stop (and maybe start another at once) */
        if (cnt(s, x->pool, t) >= x->s) {
          int64_t w2 = w + x->u < W ? w + x->u : W;
          double run = x->c + AT(t + 1, w2, c);
          if (run < v)
            v = run;
        }
        AT(t, w, c) = v;
      }
    }
  }
  *cost = AT(0, 0, 0);
  *done = 1;
#undef AT
  PIT_FREE_ALL(mv, eg, cf, V, sf, sr);
  return 0;
}

struct seg { double slope, dx; };

static int cmp_seg(const void *a, const void *b) {
  double x = ((const struct seg *)a)->slope, y = ((const struct seg *)b)->slope;
  return x < y ? -1 : x > y;
}

static int cmp_price(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int pit_fleet_bound(const struct pit_sim_study *s, double *cost, struct pit_err *e) {
  *cost = NAN;
  int rc = pit_fleet_check(s, e);
  if (rc)
    return rc;
  int P = s->npools;
  double tick_h = s->pools[0].trace->gap_s / 3600;
  int64_t work = (int64_t)ceil(s->job_h / tick_h - 1e-9), D = (int64_t)floor(s->deadline_h / tick_h + 1e-9),
          R = (int64_t)ceil(s->restart_h / tick_h - 1e-9);
  /* the nodes worth adding: up to the peak of X (beyond it a node adds no work) */
  int kmax = s->nmax;
  for (int n = 1; n <= s->nmax; n++)
    if (pit_fleet_rate(s, n) <= pit_fleet_rate(s, n - 1)) {
      kmax = n - 1;
      break;
    }
  double pod = INFINITY;
  for (int p = 0; p < P; p++)
    if (s->pools[p].price_h < pod)
      pod = s->pools[p].price_h;
  if (D - R <= 0) {
    *cost = INFINITY;
    return 0;
  }
  /* distinct spot prices with their counts, per tick: at most P entries */
  double *dx = malloc((size_t)(kmax + 1) * sizeof *dx);
  struct { double price; int n; } *avail = malloc((size_t)(P + 1) * sizeof *avail);
  size_t nseg = (size_t)(D - R) * (size_t)kmax;
  struct seg *sg = malloc(nseg * sizeof *sg);
  if (!dx || !avail || !sg) {
    PIT_FREE_ALL(dx, avail, sg);
    return pit_err_set(e, PIT_ENOMEM, "out of memory for the bound (%zu segments)", nseg);
  }
  for (int n = 1; n <= kmax; n++)
    dx[n] = pit_fleet_rate(s, n) - pit_fleet_rate(s, n - 1);
  double minprice = pod; /* the cheapest node any tick offers (the first start's overhead) */
  size_t m = 0;
  for (int64_t t = R; t < D; t++) {
    int na = 0;
    for (int p = 0; p < P; p++) {
      int c = cnt(s, p, t);
      if (c > 0 && s->pools[p].spot_price_h < pod)
        avail[na].price = s->pools[p].spot_price_h, avail[na++].n = c;
    }
    qsort(avail, (size_t)na, sizeof *avail, cmp_price); /* price first in the struct */
    int a = 0, used = 0;
    for (int n = 1; n <= kmax; n++) {
      while (a < na && used >= avail[a].n)
        a++, used = 0;
      double price = a < na ? avail[a].price : pod;
      if (a < na)
        used++;
      sg[m++] = (struct seg){price * tick_h / dx[n], dx[n]}; /* forecast: simulated clock */
    }
  }
  for (int64_t t = 0; t < D; t++)
    for (int p = 0; p < P; p++)
      if (cnt(s, p, t) > 0 && s->pools[p].spot_price_h < minprice)
        minprice = s->pools[p].spot_price_h;
  qsort(sg, m, sizeof *sg, cmp_seg);
  double need = (double)work, c = 0;
  size_t i;
  for (i = 0; i < m && need > 1e-12; i++) {
    double take = sg[i].dx < need ? sg[i].dx : need;
    c += take * sg[i].slope;
    need -= take;
  }
  c *= 1 - 1e-12; /* rounding: the bound stays below */
  c += (double)R * tick_h * s->nmin * minprice * (1 - 1e-9); /* forecast: simulated clock */
  *cost = need > 1e-9 * (double)work ? INFINITY : c;
  PIT_FREE_ALL(dx, avail, sg);
  return 0;
}

int pit_fleet_limit(const struct pit_sim_study *s, double max_cells, double *cost, const char **kind,
                    struct pit_err *e) {
  int done = 0;
  int rc = pit_fleet_exact(s, max_cells, cost, &done, e);
  if (rc)
    return rc;
  if (done) {
    *kind = "exact";
    return 0;
  }
  *kind = "bound";
  return pit_fleet_bound(s, cost, e);
}
