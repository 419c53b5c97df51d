/* test_fleet.c — fleets (src/sim/fleet.c, policy_fleet.c, limit.c): with one
 * pool and one node the fleet simulator is pit_sim_run and the exact limit is
 * pit_sim_optimum (random traces); on hundreds of random small studies (1-3
 * pools, 1-3 nodes, node ranges, USL or linear, moves with transfer and
 * egress) the bound is never above the exact optimum and no policy that meets
 * the deadline costs less than it; a scripted two-zone trace: per-node
 * reclaims, a move that pays egress, billing minimums through the catalog's
 * rule; every policy's memberships within the count and node range; the node count
 * pitstop chooses within nmin..nmax (runs on the spot nodes alone while spot covers half
 * the job, grows back, does not follow a count that changes every tick, banks progress on
 * more spot nodes at a tight deadline; with nmin = nmax it holds the job's count); pitstop
 * meeting the deadline through a reclaim of part of its spot nodes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pitstop/sim.h"

static uint64_t rng = 88172645463325252ULL;
static unsigned rnd(unsigned n) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (unsigned)(rng % n);
}

static struct pit_trace mkc(const int *c, int n, double gap) {
  struct pit_trace t;
  pit_trace_init(&t);
  t.gap_s = gap;
  t.n = n;
  t.count = malloc((size_t)n * sizeof *t.count);
  memcpy(t.count, c, (size_t)n * sizeof *c);
  snprintf(t.path, sizeof t.path, "mem");
  return t;
}

static void rand_trace(struct pit_trace *t, int n, int maxc) {
  int c[400], run = 0, v = 0;
  for (int i = 0; i < n; i++) {
    if (run-- <= 0) {
      v = rnd(3) == 0 ? 0 : (int)rnd((unsigned)maxc + 1);
      run = (int)rnd(8);
    }
    c[i] = v;
  }
  *t = mkc(c, n, 3600);
}

static struct pit_sim_study study1(const struct pit_sim_pool *p, int np, double job, double dl, double r) {
  return (struct pit_sim_study){.pools = p, .npools = np, .job_h = job, .deadline_h = dl, .restart_h = r,
                                .nodes = 1, .nmin = 1, .nmax = 1, .seed = 7};
}

static void test_single_equivalence(void) {
  static const enum pit_fleet_policy fp[] = {PIT_FLEET_ON_DEMAND, PIT_FLEET_GREEDY, PIT_FLEET_UNIFORM};
  static const enum pit_spot_policy sp[] = {PIT_SPOT_ON_DEMAND, PIT_SPOT_GREEDY, PIT_SPOT_UNIFORM};
  int same = 0, opt_same = 0;
  for (int k = 0; k < 200; k++) {
    struct pit_trace t;
    rand_trace(&t, 60 + (int)rnd(40), 1);
    double job = 5 + rnd(20), dl = job * (1.1 + rnd(10) / 10.0), r = rnd(3);
    struct pit_sim_pool pool = {.trace = &t, .price_h = 1, .spot_price_h = 0.3};
    struct pit_sim_study s = study1(&pool, 1, job, dl, r);
    struct pit_sim_case c = {.trace = &t, .job_h = job, .deadline_h = dl, .restart_h = r, .price_h = 1,
                             .spot_price_h = 0.3, .nodes = 1};
    struct pit_err e = {0};
    for (int i = 0; i < 3; i++) {
      struct pit_sim_result a;
      struct pit_fleet_result b;
      CHECK(pit_sim_run(&c, sp[i], 0, &a, &e) == 0, "%s", e.msg);
      CHECK(pit_fleet_run(&s, fp[i], -1, 0, 0, &b, &e) == 0, "%s", e.msg);
      same += fabs(a.cost - b.cost) < 1e-9 && a.deadline_met == b.deadline_met && a.preemptions == b.reclaimed;
      pit_sim_result_release(&a);
      pit_fleet_result_release(&b);
    }
    struct pit_sim_result o;
    CHECK(pit_sim_optimum(&c, 0, &o, &e) == 0, "%s", e.msg);
    double x;
    int done;
    CHECK(pit_fleet_exact(&s, 1e7, &x, &done, &e) == 0 && done, "exact: %s", e.msg);
    opt_same += (isinf(o.cost) && isinf(x)) || fabs(o.cost - x) < 1e-9;
    pit_sim_result_release(&o);
    pit_trace_release(&t);
  }
  CHECK(same == 600, "one pool, one node: fleet = pit_sim_run in %d of 600 runs", same);
  CHECK(opt_same == 200, "one pool, one node: exact limit = pit_sim_optimum in %d of 200", opt_same);
}

static void test_bound_below_exact(void) {
  int cases = 0, exact_cases = 0, below = 0, pol_ok = 0, pol_runs = 0, tight = 0;
  for (int k = 0; k < 300; k++) {
    int np = 1 + (int)rnd(3), n = 1 + (int)rnd(3), len = 30 + (int)rnd(30);
    struct pit_trace t[3];
    struct pit_sim_pool pools[3];
    for (int p = 0; p < np; p++) {
      rand_trace(&t[p], len, 3);
      pools[p] = (struct pit_sim_pool){.trace = &t[p], .price_h = 1 + rnd(3) * 0.25,
                                       .spot_price_h = 0.1 + rnd(5) * 0.1, .egress_usd_gb = rnd(3) * 0.02,
                                       .net_gbps = rnd(2) ? 0.01 : 0};
    }
    double job = 3 + rnd(10);
    struct pit_sim_study s = {.pools = pools, .npools = np, .job_h = job, .deadline_h = job * (1.2 + rnd(8) / 10.0) + 2,
                              .restart_h = rnd(3), .nodes = n, .nmin = n, .nmax = n, .ckpt_gb = 20, .seed = k};
    int shape = (int)rnd(3);
    if (shape == 1) /* linear with a range */
      s.nmin = 1, s.nmax = n + (int)rnd(2);
    else if (shape == 2) /* USL, one node count */
      s.sigma = 0.1 * rnd(3), s.kappa = 0.01 * rnd(3);
    struct pit_err e = {0};
    double ex, bd;
    int done;
    CHECK(pit_fleet_exact(&s, 4e6, &ex, &done, &e) == 0, "exact: %s", e.msg);
    CHECK(pit_fleet_bound(&s, &bd, &e) == 0, "bound: %s", e.msg);
    cases++;
    if (done) {
      exact_cases++;
      below += bd <= ex + 1e-9 * (ex > 1 ? ex : 1) || (isinf(bd) && isinf(ex));
      tight += isfinite(ex) && bd >= 0.5 * ex;
      if (!(bd <= ex + 1e-9 * (ex > 1 ? ex : 1) || (isinf(bd) && isinf(ex))))
        fprintf(stderr, "case %d: bound %g above exact %g (pools %d nodes %d:%d:%d)\n", k, bd, ex, np, s.nmin, n,
                s.nmax);
      for (int p = 0; p < PIT_FLEET_FIXED; p++) {
        struct pit_fleet_result r;
        CHECK(pit_fleet_run(&s, p, -1, 0, 0, &r, &e) == 0, "%s: %s", pit_fleet_policy_name(p), e.msg);
        if (r.deadline_met) {
          pol_runs++;
          pol_ok += r.cost >= ex - 1e-9 * (ex > 1 ? ex : 1);
          if (r.cost < ex - 1e-9)
            fprintf(stderr, "case %d: %s costs %g below the exact %g\n", k, pit_fleet_policy_name(p), r.cost, ex);
        }
        pit_fleet_result_release(&r);
      }
    }
    for (int p = 0; p < np; p++)
      pit_trace_release(&t[p]);
  }
  CHECK(exact_cases >= 250, "the exact DP ran on %d of %d small studies", exact_cases, cases);
  CHECK(below == exact_cases, "bound <= exact optimum in %d of %d", below, exact_cases);
  CHECK(pol_ok == pol_runs && pol_runs > 500, "no policy below the exact optimum: %d of %d runs", pol_ok, pol_runs);
  CHECK(tight > exact_cases / 2, "the bound is not trivial: >= half the optimum in %d of %d", tight, exact_cases);
}

static void test_scripted(void) {
  /* zone a: 4 spot for 5 ticks, then 1; zone b: 0 for 5 ticks, then 4 */
  int ca[40], cb[40];
  for (int i = 0; i < 40; i++) {
    ca[i] = i < 5 ? 4 : 1;
    cb[i] = i < 5 ? 0 : 4;
  }
  struct pit_trace ta = mkc(ca, 40, 3600), tb = mkc(cb, 40, 3600);
  struct pit_itype hourly = {.billing_s = 3600, .min_s = 3 * 3600};
  struct pit_sim_pool pools[2] = {
      {.trace = &ta, .price_h = 1, .spot_price_h = 0.2, .egress_usd_gb = 0.5, .net_gbps = 0},
      {.trace = &tb, .price_h = 1, .spot_price_h = 0.2, .egress_usd_gb = 0.5, .net_gbps = 0}};
  struct pit_sim_study s = {.pools = pools, .npools = 2, .job_h = 20, .deadline_h = 35, .restart_h = 1,
                            .nodes = 4, .nmin = 4, .nmax = 4, .ckpt_gb = 10, .seed = 1};
  struct pit_err e = {0};
  struct pit_fleet_result g, p, f;
  CHECK(pit_fleet_run(&s, PIT_FLEET_GREEDY, -1, 0, 1, &g, &e) == 0, "%s", e.msg);
  CHECK(g.reclaimed == 3, "greedy in zone a: 3 of its 4 spot nodes reclaimed at tick 5 (%d)", g.reclaimed);
  CHECK(g.moves == 0 && g.member_at[6].spot == 1 && g.member_at[6].od == 3,
        "greedy keeps the survivor and fills with on-demand (%d spot %d od)", g.member_at[6].spot, g.member_at[6].od);
  CHECK(pit_fleet_run(&s, PIT_FLEET_PITSTOP, -1, 0, 1, &p, &e) == 0, "%s", e.msg);
  int moved_at = -1;
  for (int i = 5; i < p.nticks && moved_at < 0; i++)
    if (p.member_at[i].pool == 1 && p.member_at[i].spot == 4)
      moved_at = i;
  CHECK(p.moves == 1 && fabs(p.egress_usd - 5) < 1e-9 && moved_at >= 6 && moved_at <= 10,
        "pitstop moves the job to zone b's 4 spot nodes once the span seen there pays the move, paying 10 GB x "
        "0.5 $ (moves %d egress %g, at tick %d)", p.moves, p.egress_usd, moved_at);
  CHECK(p.cost < g.cost && p.deadline_met, "the move pays: %g < %g", p.cost, g.cost);
  /* billing minimum through the type: a 1-tick run is billed 3 h per node */
  pools[0].itype = pools[1].itype = &hourly;
  CHECK(pit_fleet_run(&s, PIT_FLEET_PITSTOP, -1, 0, 0, &f, &e) == 0, "%s", e.msg);
  CHECK(f.cost >= p.cost - 1e-9, "billing rounded up per node: %g >= %g", f.cost, p.cost);
  pit_fleet_result_release(&g);
  pit_fleet_result_release(&p);
  pit_fleet_result_release(&f);
  /* a study with two ticks: one message naming the trace */
  struct pit_trace tc = mkc(ca, 40, 600);
  snprintf(tc.path, sizeof tc.path, "zone-c.json");
  pools[1].trace = &tc;
  snprintf(pools[1].zone, sizeof pools[1].zone, "c");
  CHECK(pit_fleet_check(&s, &e) != 0 && strstr(e.msg, "zone-c.json") && strstr(e.msg, "one tick"),
        "two ticks: %s", e.msg);
  pit_trace_release(&ta);
  pit_trace_release(&tb);
  pit_trace_release(&tc);
}

static void test_region_csv(void) {
  char path[600];
  snprintf(path, sizeof path, "%s/region.csv", check_tmpdir());
  FILE *f = fopen(path, "w");
  fprintf(f, "time_s,itype,zone,available,spot_price_h\n0,x,za,1,0.3\n0,x,zb,0,\n60,x,za,2,0.3\n60,x,zb,1,\n"
             "120,x,za,0,0.3\n120,x,zb,3,\n");
  fclose(f);
  struct pit_trace *t = NULL;
  int n = 0;
  struct pit_err e = {0};
  CHECK(pit_trace_load_all(path, &t, &n, &e) == 0 && n == 2, "region: %s (%d traces)", e.msg, n);
  if (n == 2) {
    CHECK(strcmp(t[0].zone, "za") == 0 && strcmp(t[1].zone, "zb") == 0 && t[0].n == 3 && t[1].n == 3 &&
              t[0].gap_s == 60 && t[1].count[2] == 3 && t[0].count[1] == 2 && isnan(t[1].spot_price_h[0]),
          "region: two zones of 3 ticks");
    for (int i = 0; i < n; i++)
      pit_trace_release(&t[i]);
    free(t);
  }
  f = fopen(path, "w");
  fprintf(f, "time_s,itype,zone,available\n0,x,za,1\n0,x,zb,1\n60,x,za,1\n90,x,za,1\n");
  fclose(f);
  CHECK(pit_trace_load_all(path, &t, &n, &e) != 0 && strstr(e.msg, "region.csv:5") && strstr(e.msg, "za"),
        "a zone off its gap: %s", e.msg);
  CHECK(pit_trace_load_all(path, &t, &n, &e) != 0 && t == NULL && n == 0, "nothing returned on error");
}

/* The exact DP over the shares that can be optimal (0 and the counts each trace takes)
 * equals the DP over every share 0..n: random small studies whose traces take only some
 * counts (so shares are left out), a pool where spot costs more than on-demand (every
 * share kept there), node ranges and USL. */
static void test_shares_same(void) {
  int same = 0, ran = 0, fewer = 0;
  for (int k = 0; k < 200; k++) {
    int np = 1 + (int)rnd(3), n = 2 + (int)rnd(3), len = 30 + (int)rnd(30);
    struct pit_trace t[3];
    struct pit_sim_pool pools[3];
    for (int p = 0; p < np; p++) {
      int c[64], run = 0, v = 0, hi = 1 + (int)rnd((unsigned)n + 2);
      for (int i = 0; i < len; i++) {
        if (run-- <= 0) {
          v = rnd(2) ? 0 : hi; /* two counts only: 0 and hi (hi may exceed n) */
          run = (int)rnd(8);
        }
        c[i] = v;
      }
      t[p] = mkc(c, len, 3600);
      pools[p] = (struct pit_sim_pool){.trace = &t[p], .price_h = 1, .spot_price_h = rnd(6) ? 0.2 + rnd(5) * 0.1 : 1.3,
                                       .egress_usd_gb = rnd(3) * 0.02, .net_gbps = rnd(2) ? 0.01 : 0};
    }
    double job = 3 + rnd(10);
    struct pit_sim_study s = {.pools = pools, .npools = np, .job_h = job, .deadline_h = job * (1.2 + rnd(8) / 10.0) + 2,
                              .restart_h = rnd(3), .nodes = n, .nmin = n, .nmax = n, .ckpt_gb = 20, .seed = k};
    if (rnd(3) == 0)
      s.nmin = 1;
    else if (rnd(2) == 0)
      s.sigma = 0.1, s.kappa = 0.01;
    struct pit_err e = {0};
    double a, b;
    int da, db;
    CHECK(pit_fleet_exact_shares(&s, 4e6, 0, &a, &da, &e) == 0, "exact: %s", e.msg);
    CHECK(pit_fleet_exact_shares(&s, 4e6, 1, &b, &db, &e) == 0, "exact, every share: %s", e.msg);
    if (da && db) {
      ran++;
      int eq = (isinf(a) && isinf(b)) || fabs(a - b) <= 1e-9 * (b > 1 ? b : 1);
      same += eq;
      if (!eq)
        fprintf(stderr, "case %d: shares %.9g, every share %.9g\n", k, a, b);
      fewer += isfinite(a);
    }
    for (int p = 0; p < np; p++)
      pit_trace_release(&t[p]);
  }
  CHECK(ran >= 150 && fewer >= 100, "the DP ran on %d studies (%d finite)", ran, fewer);
  CHECK(same == ran, "the DP over the optimal shares = over every share in %d of %d", same, ran);
}

/* A tight deadline (10 h due in 11.55 h, 0.5 h restarts, 600 s ticks) and no spot at
 * tick 0, then spot for 34 ticks (in the second zone): one tick without spot is no
 * evidence that it stays away, so pitstop waits and runs on spot (single node:
 * pit_sim_run; two zones: the fleet policy). Before the prior on the share seen it went
 * on-demand at tick 0 and stayed there (the cost of on-demand from the start). */
static void test_tight_first_tick(void) {
  int a[80] = {0}, b[80] = {0}, b4[80] = {0};
  for (int i = 1; i < 35; i++)
    b[i] = 1, b4[i] = 4;
  struct pit_trace ta = mkc(a, 80, 600), tb = mkc(b, 80, 600), tb4 = mkc(b4, 80, 600);
  struct pit_sim_case c = {.trace = &tb, .job_h = 10, .deadline_h = 11.55, .restart_h = 0.5, .price_h = 1,
                           .spot_price_h = 0.3, .nodes = 1};
  struct pit_err e = {0};
  struct pit_sim_result r, od;
  CHECK(pit_sim_run(&c, PIT_SPOT_PITSTOP, 0, &r, &e) == 0, "%s", e.msg);
  CHECK(pit_sim_run(&c, PIT_SPOT_ON_DEMAND, 0, &od, &e) == 0, "%s", e.msg);
  CHECK(r.deadline_met && r.spot_h >= 4 && r.cost < od.cost - 2,
        "single node: pitstop waits out tick 0 (spot %.2f h, cost %.3f, on-demand %.3f)", r.spot_h, r.cost, od.cost);
  pit_sim_result_release(&r);
  pit_sim_result_release(&od);
  struct pit_sim_pool pools[2] = {{.trace = &ta, .price_h = 1, .spot_price_h = 0.3, .egress_usd_gb = 0.02, .net_gbps = 10},
                                  {.trace = &tb4, .price_h = 1, .spot_price_h = 0.3, .egress_usd_gb = 0.02, .net_gbps = 10}};
  struct pit_sim_study st = {.pools = pools, .npools = 2, .job_h = 10, .deadline_h = 11.55, .restart_h = 0.5,
                             .nodes = 4, .nmin = 4, .nmax = 4, .ckpt_gb = 10, .seed = 1};
  struct pit_fleet_result f, fo;
  CHECK(pit_fleet_run(&st, PIT_FLEET_PITSTOP, -1, 0, 0, &f, &e) == 0, "%s", e.msg);
  CHECK(pit_fleet_run(&st, PIT_FLEET_ON_DEMAND, -1, 0, 0, &fo, &e) == 0, "%s", e.msg);
  CHECK(f.deadline_met && f.spot_h >= 16 && f.cost < fo.cost - 8,
        "two zones: pitstop waits out tick 0 (spot %.2f node-h, cost %.3f, on-demand %.3f)", f.spot_h, f.cost, fo.cost);
  pit_fleet_result_release(&f);
  pit_fleet_result_release(&fo);
  pit_trace_release(&ta);
  pit_trace_release(&tb);
  pit_trace_release(&tb4);
}

/* The node count within --nnodes (policy_fleet.c, sized()). One pool, 1 h ticks, 1 h
 * restarts, spot at 0.3 of on-demand, a job of 30 h on 8 nodes due in 75 h: spot for 8
 * nodes for 5 h, for 4 nodes for 40 h, then for 8 again. Held at 8 (8:8) pitstop fills
 * the 4 reclaimed nodes with on-demand; with 4:8 it runs on the 4 spot nodes alone (the
 * slack carries half the rate over the span), grows back to 8 spot when the count
 * returns, costs less and still meets the deadline (before the node count was chosen it
 * held 8: the same cost as 8:8). */
static void test_node_range(void) {
  int c[120], osc[120], tight[60];
  for (int i = 0; i < 120; i++) {
    c[i] = i < 5 || i >= 45 ? 8 : 4;
    osc[i] = i % 2 ? 4 : 8;
  }
  for (int i = 0; i < 60; i++)
    tight[i] = i < 12 || i >= 22 ? 8 : 0;
  struct pit_trace t = mkc(c, 120, 3600), to = mkc(osc, 120, 3600), tt = mkc(tight, 60, 3600);
  struct pit_sim_pool pool = {.trace = &t, .price_h = 1, .spot_price_h = 0.3};
  struct pit_sim_study s = {.pools = &pool, .npools = 1, .job_h = 30, .deadline_h = 75, .restart_h = 1,
                            .nodes = 8, .nmin = 8, .nmax = 8, .seed = 1};
  struct pit_err e = {0};
  struct pit_fleet_result fixed, range;
  CHECK(pit_fleet_run(&s, PIT_FLEET_PITSTOP, -1, 0, 1, &fixed, &e) == 0, "%s", e.msg);
  int held8 = 1, filled = 0;
  for (int i = 0; i < fixed.nticks; i++) {
    int n = fixed.member_at[i].spot + fixed.member_at[i].od;
    held8 &= n == 0 || n == 8;
    filled |= fixed.member_at[i].od > 0;
  }
  CHECK(held8 && filled && fixed.deadline_met, "8:8 holds 8 nodes, on-demand filling the reclaimed ones (%d %d %d)",
        held8, filled, fixed.deadline_met);
  CHECK(fixed.ncounts == 1 && fixed.counts[0].nodes == 8, "8:8: one node count held (%d)", fixed.ncounts);
  s.nmin = 4;
  CHECK(pit_fleet_run(&s, PIT_FLEET_PITSTOP, -1, 0, 1, &range, &e) == 0, "%s", e.msg);
  int shrunk = 0, grown = 0, od = 0;
  for (int i = 0; i < range.nticks; i++) {
    struct pit_sim_member m = range.member_at[i];
    shrunk += i > 5 && i < 45 && m.spot == 4 && m.od == 0;
    grown |= i >= 45 && m.spot == 8;
    od += m.od;
  }
  CHECK(shrunk >= 35 && grown && od == 0, "4:8 runs on the 4 spot nodes alone (%d ticks), grows back to 8 spot (%d), "
        "no on-demand (%d node-ticks)", shrunk, grown, od);
  CHECK(range.deadline_met && range.cost < 0.7 * fixed.cost, "4:8 meets the deadline for less: %.2f vs 8:8 %.2f",
        range.cost, fixed.cost);
  double h4 = 0, h8 = 0;
  for (int i = 0; i < range.ncounts; i++)
    *(range.counts[i].nodes == 4 ? &h4 : &h8) += range.counts[i].h;
  CHECK(range.ncounts == 2 && h4 >= 35 && h8 > 5 && fabs(h4 + h8 - range.finish_h) < 1e-9,
        "hours per node count: 4 nodes %.1f h, 8 nodes %.1f h, finish %.1f h", h4, h8, range.finish_h);
  pit_fleet_result_release(&fixed);
  pit_fleet_result_release(&range);

  /* spot for 8 and 4 nodes in turn, every tick: the count is not followed (no flapping) */
  pool.trace = &to;
  struct pit_fleet_result f;
  CHECK(pit_fleet_run(&s, PIT_FLEET_PITSTOP, -1, 0, 0, &f, &e) == 0, "%s", e.msg);
  CHECK(f.deadline_met && f.nchanges <= 3, "a count changing every tick: %d changes of membership", f.nchanges);
  pit_fleet_result_release(&f);

  /* a tight deadline (20 h on 4 nodes due in 23 h) and spot for 8 nodes except for 10 h
   * from hour 12: 4:8 runs on 8 spot nodes and finishes before the outage; 4:4 meets the
   * outage with the slack spent and runs it on on-demand */
  pool.trace = &tt;
  s = (struct pit_sim_study){.pools = &pool, .npools = 1, .job_h = 20, .deadline_h = 23, .restart_h = 1,
                             .nodes = 4, .nmin = 4, .nmax = 4, .seed = 1};
  struct pit_fleet_result a, b;
  CHECK(pit_fleet_run(&s, PIT_FLEET_PITSTOP, -1, 0, 0, &a, &e) == 0, "%s", e.msg);
  s.nmax = 8;
  CHECK(pit_fleet_run(&s, PIT_FLEET_PITSTOP, -1, 0, 0, &b, &e) == 0, "%s", e.msg);
  CHECK(a.deadline_met && a.od_h > 0, "4:4 runs the outage on on-demand (%.1f node-h)", a.od_h);
  CHECK(b.deadline_met && b.od_h == 0 && b.finish_h <= 12 && b.cost < a.cost,
        "4:8 banks progress on 8 spot nodes: done at %.1f h, %.2f vs %.2f", b.finish_h, b.cost, a.cost);
  pit_fleet_result_release(&a);
  pit_fleet_result_release(&b);
  pit_trace_release(&t);
  pit_trace_release(&to);
  pit_trace_release(&tt);
}

/* two nodes in one zone, restart 2 ticks, slack 2 restarts: spot for both from tick 0, then the
 * trace takes one node at tick 5 with a restart of slack left. Keeping the survivor restarts the whole
 * job anyway, so it is a new start: pitstop goes on-demand (it kept the survivor, then left it for
 * on-demand one tick later, a second restart, and missed the deadline by a tick) */
static void test_partial_reclaim(void) {
  int c[20];
  for (int i = 0; i < 20; i++)
    c[i] = i == 5 ? 1 : 2;
  struct pit_trace t = mkc(c, 20, 3600);
  struct pit_sim_pool pool = {.trace = &t, .price_h = 1, .spot_price_h = 0.3};
  struct pit_sim_study st = {.pools = &pool, .npools = 1, .job_h = 6, .deadline_h = 10, .restart_h = 2,
                             .nodes = 2, .nmin = 2, .nmax = 2, .seed = 1};
  struct pit_err e = {0};
  struct pit_fleet_result f;
  CHECK(pit_fleet_run(&st, PIT_FLEET_PITSTOP, -1, 0, 0, &f, &e) == 0, "%s", e.msg);
  CHECK(f.deadline_met && f.reclaimed == 1, "partial reclaim: pitstop meets the deadline (finish %.1f h, %d reclaimed)",
        f.finish_h, f.reclaimed);
  CHECK(f.nchanges == 2 && f.changes[1].to.spot == 0 && f.changes[1].to.od == 2,
        "partial reclaim: spot, then on-demand for both at once (%d changes)", f.nchanges);
  pit_fleet_result_release(&f);
  pit_trace_release(&t);
}

int main(void) {
  test_node_range();
  test_partial_reclaim();
  test_region_csv();
  test_single_equivalence();
  test_bound_below_exact();
  test_shares_same();
  test_tight_first_tick();
  test_scripted();
  return check_done();
}
