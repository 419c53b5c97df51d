/* test_sim.c — the sim module: the DP optimum on tiny hand-solved traces,
 * each baseline's behaviour on a scripted trace, pitstop's policy never
 * missing a deadline on-demand could meet (random traces), and the trace
 * readers' errors (truncated, negative count, zero gap), many nodes, and
 * pitstop's hedge when spot has been away (it changes the result), and at a
 * tight deadline its wait for spot to have lasted before leaving on-demand; the
 * safe optimum (by hand, and never above pitstop's or greedy's cost). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pitstop/sim.h"

/* a trace of n ticks of one hour from a string of '0'/'1' */
static struct pit_trace mk(const char *s) {
  struct pit_trace t;
  pit_trace_init(&t);
  t.gap_s = 3600;
  t.n = (int)strlen(s);
  t.count = malloc((size_t)t.n * sizeof *t.count);
  for (int i = 0; i < t.n; i++)
    t.count[i] = s[i] - '0';
  return t;
}

/* a random trace of 10 to 10 + extra - 1 ticks (extra <= 50), spot there with chance 0.6;
 * s (61 chars) gets it as text, for the checks' messages */
static struct pit_trace mk_random(int extra, char *s) {
  int n = 10 + (int)(check_urand() * extra);
  for (int i = 0; i < n; i++)
    s[i] = check_urand() < 0.6 ? '1' : '0';
  s[n] = '\0';
  return mk(s);
}

static struct pit_sim_case cs(const struct pit_trace *t, double job, double dl, double r) {
  return (struct pit_sim_case){.trace = t, .job_h = job, .deadline_h = dl, .restart_h = r, .price_h = 1,
                               .spot_price_h = 0.25, .nodes = 1};
}

static double opt(const struct pit_sim_case *c) {
  struct pit_sim_result r;
  struct pit_err e = {0};
  CHECK(pit_sim_optimum(c, 1, &r, &e) == 0, "optimum: %s", e.msg);
  double v = r.cost;
  pit_sim_result_release(&r);
  return v;
}

static struct pit_sim_result run(const struct pit_sim_case *c, enum pit_spot_policy p) {
  struct pit_sim_result r;
  struct pit_err e = {0};
  CHECK(pit_sim_run(c, p, 1, &r, &e) == 0, "run: %s", e.msg);
  return r;
}

static void test_optimum_by_hand(void) {
  /* no restart: 2 h of work by hour 4, spot in hours 1 and 3: both on spot */
  struct pit_trace t = mk("0101");
  struct pit_sim_case c = cs(&t, 2, 4, 0);
  CHECK_NEAR(opt(&c), 0.5, 1e-9, "two spot hours");
  /* deadline 3: only one spot hour (hour 1) fits before it: 0.25 + 1 */
  c.deadline_h = 3;
  CHECK_NEAR(opt(&c), 1.25, 1e-9, "one spot, one on-demand");
  /* restart 1 h: every start costs a paid hour. "0111", 2 h by 4: start spot at
   * hour 1 (overhead), work hours 2-3 on spot: 3 × 0.25 */
  pit_trace_release(&t);
  t = mk("0111");
  c = cs(&t, 2, 4, 1);
  CHECK_NEAR(opt(&c), 0.75, 1e-9, "spot after its restart");
  /* "1010" with restart 1, 1 h of work by 3: spot at hour 0 is reclaimed at 1
   * before any progress; on-demand from hour 0 or 1: 2 × 1 */
  pit_trace_release(&t);
  t = mk("1010");
  c = cs(&t, 1, 3, 1);
  CHECK_NEAR(opt(&c), 2, 1e-9, "on-demand when spot never outlives its restart");
  /* impossible: 3 h of work + 1 restart by hour 3 */
  c = cs(&t, 3, 3, 1);
  CHECK(isinf(opt(&c)), "infeasible case has infinite cost");
  pit_trace_release(&t);
}

/* the optimum is never beaten by any policy, on random traces (brute force check
 * of the DP's lower bound through every policy) */
static void test_optimum_lower_bound(void) {
  check_rng = 7;
  for (int k = 0; k < 200; k++) {
    char s[61];
    struct pit_trace t = mk_random(30, s);
    double job = 2 + (int)(check_urand() * 8), r = (int)(check_urand() * 3);
    struct pit_sim_case c = cs(&t, job, job + r + (int)(check_urand() * 10), r);
    c.offset = (int)(check_urand() * t.n);
    double o = opt(&c);
    for (int p = 0; p < PIT_SPOT_NPOLICIES; p++) {
      struct pit_sim_result res = run(&c, (enum pit_spot_policy)p);
      if (res.deadline_met)
        CHECK(res.cost >= o - 1e-9, "%s %.4f below the optimum %.4f on %s", pit_spot_policy_name(p), res.cost, o, s);
      if (p == PIT_SPOT_PITSTOP || p == PIT_SPOT_GREEDY || p == PIT_SPOT_ON_DEMAND)
        CHECK(res.deadline_met, "%s missed a deadline on-demand meets (%s job %g R %g D %g)", pit_spot_policy_name(p),
              s, c.job_h, c.restart_h, c.deadline_h);
      pit_sim_result_release(&res);
    }
    /* the optimum's rebuilt schedule costs what the DP says and meets the deadline */
    struct pit_sim_result r2;
    struct pit_err e = {0};
    CHECK(pit_sim_optimum(&c, 1, &r2, &e) == 0, "%s", e.msg);
    double recost = r2.spot_h * c.spot_price_h + r2.od_h * c.price_h;
    CHECK_NEAR(recost, r2.cost, 1e-6, "the optimum's schedule costs its value");
    CHECK(r2.nticks > 0 && r2.done_at[r2.nticks - 1] >= c.job_h - 1e-6, "the schedule finishes the job");
    pit_sim_result_release(&r2);
    pit_trace_release(&t);
  }
}

static double safe_opt(const struct pit_sim_case *c, struct pit_sim_result *r) {
  struct pit_err e = {0};
  CHECK(pit_sim_optimum_safe(c, 1, r, &e) == 0, "safe optimum: %s", e.msg);
  return r->cost;
}

/* brute force over every choice of every tick (simulate()'s rules: a reclaim idles the
 * job, a change of instance starts its restart), keeping only schedules that, at each
 * tick, could finish on on-demand if spot went away for good; the least cost that
 * finishes by D */
struct bf { const char *a; int n, D, h, r; double ps, po, best; };
static void bf_go(struct bf *b, int t, int mode, int ovl, int w, double cost) {
  if (w >= b->h) {
    if (t <= b->D && cost < b->best)
      b->best = cost;
    return;
  }
  if (t >= b->D || cost >= b->best)
    return;
  int avail = b->a[t % b->n] == '1';
  if (mode == PIT_SPOT_SPOT && !avail)
    mode = PIT_SPOT_IDLE, ovl = 0;
  for (int ch = PIT_SPOT_IDLE; ch <= PIT_SPOT_OD; ch++) {
    if (ch == PIT_SPOT_SPOT && !avail)
      continue;
    int m = mode, o = ovl, w2 = w;
    if (ch != m)
      m = ch, o = ch == PIT_SPOT_IDLE ? 0 : b->r;
    int slack = (b->D - t) - (b->h - w);
    if (m == PIT_SPOT_SPOT && slack - o < b->r) /* reclaimed after its start: on-demand must fit */
      continue;
    if (m == PIT_SPOT_IDLE && slack - 1 < b->r)
      continue;
    double c = cost + (m == PIT_SPOT_SPOT ? b->ps : m == PIT_SPOT_OD ? b->po : 0);
    if (m != PIT_SPOT_IDLE) {
      if (o > 0)
        o--;
      else
        w2++;
    }
    bf_go(b, t + 1, m, o, w2, c);
  }
}

/* The safe optimum: by hand, a case where the optimum takes a risk no safe policy can
 * take; on random traces optimum <= safe optimum <= pitstop's and greedy's cost (both
 * keep the safety guards, so a cost below it would show a guard broken or the DP
 * wrong), and its schedule costs its value. */
static void test_safe_optimum(void) {
  /* spot all along, job 4 h, restart 1 h, deadline 6 h: slack 2 h = two restarts: the
   * safe optimum may start spot (1 start + a fallback fit): 5 × 0.25 like the optimum */
  struct pit_trace t = mk("11111111");
  struct pit_sim_case c = cs(&t, 4, 6, 1);
  struct pit_sim_result r;
  CHECK_NEAR(safe_opt(&c, &r), 1.25, 1e-9, "slack of two restarts: spot is safe");
  pit_sim_result_release(&r);
  /* deadline 5.5 h (5 ticks): slack 1 restart: spot would risk the deadline if reclaimed
   * after its start; the optimum knows it is not (1.25), the safe optimum runs on-demand (5) */
  c.deadline_h = 5;
  CHECK_NEAR(opt(&c), 1.25, 1e-9, "the optimum takes spot at a slack of one restart");
  CHECK_NEAR(safe_opt(&c, &r), 5, 1e-9, "the safe optimum does not");
  CHECK(r.deadline_met && r.od_h > 4.9, "the safe schedule is on-demand");
  pit_sim_result_release(&r);
  pit_trace_release(&t);
  check_rng = 11;
  int above = 0;
  for (int k = 0; k < 300; k++) {
    char s[61];
    t = mk_random(50, s);
    double job = 2 + (int)(check_urand() * 12), rr = (int)(check_urand() * 3);
    c = cs(&t, job, job + rr + (int)(check_urand() * 12), rr);
    c.offset = (int)(check_urand() * t.n);
    double o = opt(&c), so = safe_opt(&c, &r);
    CHECK(so >= o - 1e-9, "safe optimum %.4f below the optimum %.4f on %s", so, o, s);
    CHECK(isfinite(so) == isfinite(o), "safe optimum feasible exactly when the optimum is (%s)", s);
    if (isfinite(so)) {
      CHECK_NEAR(r.spot_h * c.spot_price_h + r.od_h * c.price_h, so, 1e-6, "the safe schedule costs its value");
      CHECK(r.deadline_met, "the safe schedule meets the deadline");
    }
    above += so > o + 1e-9;
    pit_sim_result_release(&r);
    if (k < 150) { /* against brute force on the short ones (offset 0, at most 11 ticks) */
      struct pit_trace t2 = mk(s);
      t2.n = t.n < 11 ? t.n : 11;
      struct pit_sim_case c2 = cs(&t2, 1 + k % 4, 2 + k % 4 + (k / 4) % 6, (k / 24) % 3);
      struct bf b = {s, t2.n, (int)c2.deadline_h, (int)c2.job_h, (int)c2.restart_h, c2.spot_price_h, c2.price_h,
                     INFINITY};
      bf_go(&b, 0, PIT_SPOT_IDLE, 0, 0, 0);
      double d = safe_opt(&c2, &r);
      CHECK(isinf(d) ? isinf(b.best) : fabs(d - b.best) < 1e-9, "safe optimum %.4f, brute force %.4f (%.*s job %g R %g D %g)",
            d, b.best, t2.n, s, c2.job_h, c2.restart_h, c2.deadline_h);
      pit_sim_result_release(&r);
      pit_trace_release(&t2);
    }
    for (int p = PIT_SPOT_PITSTOP; p <= PIT_SPOT_GREEDY; p++) {
      struct pit_sim_result res = run(&c, (enum pit_spot_policy)p);
      CHECK(res.cost >= so - 1e-9, "%s %.4f below the safe optimum %.4f (%s job %g R %g D %g)",
            pit_spot_policy_name(p), res.cost, so, s, c.job_h, c.restart_h, c.deadline_h);
      pit_sim_result_release(&res);
    }
    pit_trace_release(&t);
  }
  CHECK(above > 10, "the safe optimum is above the optimum in some cases (%d of 300)", above);
}

/* scripted trace: spot for 3 h, away 4 h, back for the rest; job 5 h, deadline 10 h, no restart */
static void test_baselines(void) {
  struct pit_trace t = mk("111000011111");
  struct pit_sim_case c = cs(&t, 5, 10, 0);
  struct pit_sim_result r = run(&c, PIT_SPOT_ON_DEMAND);
  CHECK_NEAR(r.cost, 5, 1e-9, "on-demand: 5 h at 1");
  CHECK_NEAR(r.finish_h, 5, 1e-9, "on-demand finishes at 5");
  pit_sim_result_release(&r);
  /* greedy: spot 0-2, waits 3-6 (slack 5 → 1), spot 7-8: all spot, done at 9 */
  r = run(&c, PIT_SPOT_GREEDY);
  CHECK_NEAR(r.cost, 5 * 0.25, 1e-9, "greedy all spot");
  CHECK_NEAR(r.finish_h, 9, 1e-9, "greedy finishes at 9");
  CHECK(r.preemptions == 1, "greedy reclaimed once (%d)", r.preemptions);
  pit_sim_result_release(&r);
  /* uniform progress: behind the line 0.5 h/h at hour 4 (done 3 < 2 needed? no:
   * 3 >= 2) ... at hour 6, ep = 3 = done → idle; at 7 spot is back: all spot */
  r = run(&c, PIT_SPOT_UNIFORM);
  CHECK_NEAR(r.cost, 5 * 0.25, 1e-9, "UP all spot here");
  pit_sim_result_release(&r);
  /* a longer outage: UP goes on-demand when behind the line, greedy waits */
  pit_trace_release(&t);
  t = mk("1000000001111111");
  c = cs(&t, 6, 12, 0);
  r = run(&c, PIT_SPOT_UNIFORM);
  CHECK(r.od_h > 0, "UP catches up on on-demand during the outage (od %g h)", r.od_h);
  CHECK(r.deadline_met, "UP meets it");
  pit_sim_result_release(&r);
  r = run(&c, PIT_SPOT_GREEDY);
  /* greedy: 1 h spot, waits while slack (6 → 0), then on-demand to the end */
  CHECK_NEAR(r.od_h, 5, 1e-9, "greedy: 5 h on-demand after the slack runs out");
  CHECK(r.changes[r.nchanges - 1].to == PIT_SPOT_OD, "greedy ends on on-demand");
  pit_sim_result_release(&r);
  pit_trace_release(&t);
}

static void write_file(const char *p, const char *s) {
  FILE *f = fopen(p, "w");
  fputs(s, f);
  fclose(f);
}

static void test_trace_errors(void) {
  char p[512];
  struct pit_trace t;
  struct pit_err e = {0};
  snprintf(p, sizeof p, "%s/ok.json", check_tmpdir());
  write_file(p, "{\"metadata\": {\"gap_seconds\": 600}, \"data\": [1, 0, 2]}\n");
  CHECK(pit_trace_load(&t, p, &e) == 0 && t.n == 3 && t.gap_s == 600 && t.count[2] == 2, "json: %s", e.msg);
  pit_trace_release(&t);
  static const char *bad[][2] = {
      {"trunc.json", "{\"metadata\": {\"gap_seconds\": 600}, \"data\": [1, 0, "},
      {"neg.json", "{\"metadata\": {\"gap_seconds\": 600}, \"data\": [1, -1]}"},
      {"gap.json", "{\"metadata\": {\"gap_seconds\": 0}, \"data\": [1]}"},
      {"neg.csv", "time_s,itype,zone,available\n0,p3.2xlarge,a,1\n60,p3.2xlarge,a,-2\n"},
      {"gap.csv", "time_s,itype,zone,available\n0,p3.2xlarge,a,1\n0,p3.2xlarge,a,1\n"},
      {"trunc.csv", "time_s,itype,zone,available\n0,p3.2xlarge,a,1\n60,p3.2"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    snprintf(p, sizeof p, "%s/%s", check_tmpdir(), bad[i][0]);
    write_file(p, bad[i][1]);
    memset(&e, 0, sizeof e);
    CHECK(pit_trace_load(&t, p, &e) == PIT_EFORMAT && strstr(e.msg, bad[i][0]), "%s: rc/message '%s'", bad[i][0],
          e.msg);
    CHECK(t.count == NULL && t.n == 0, "%s: left empty", bad[i][0]);
  }
  snprintf(p, sizeof p, "%s/ok.csv", check_tmpdir());
  write_file(p, "time_s,itype,zone,available,spot_price_h\n0,p3.2xlarge,a,1,0.9\n60,p3.2xlarge,a,0,\n");
  CHECK(pit_trace_load(&t, p, &e) == 0 && t.n == 2 && t.gap_s == 60 && strcmp(t.itype, "p3.2xlarge") == 0 &&
            t.spot_price_h[0] == 0.9 && isnan(t.spot_price_h[1]),
        "csv: %s", e.msg);
  pit_trace_release(&t);
  CHECK(strcmp(pit_trace_kind_itype("x/us-east-1a_v100_1.json"), "p3.2xlarge") == 0, "kind v100_1");
}

/* pit_sim_multi: one node is pit_sim_run; with 3 nodes and a count of 2 the
 * membership is 2 spot + 1 on-demand; a count falling below the spot nodes
 * held is a reclaim */
static void test_multi(void) {
  struct pit_trace t = mk("222222");
  struct pit_sim_case c = cs(&t, 4, 6, 0);
  struct pit_sim_result a, b;
  struct pit_err e = {0};
  size_t bytes = 0;
  CHECK(pit_sim_multi(&c, PIT_SPOT_GREEDY, &a, &bytes, &e) == 0 && bytes > 0, "multi 1: %s", e.msg);
  b = run(&c, PIT_SPOT_GREEDY);
  CHECK_NEAR(a.cost, b.cost, 1e-12, "one node: the single-node simulation");
  pit_sim_result_release(&a);
  pit_sim_result_release(&b);
  c.nodes = 3;
  CHECK(pit_sim_multi(&c, PIT_SPOT_GREEDY, &a, NULL, &e) == 0, "multi 3: %s", e.msg);
  CHECK_NEAR(a.spot_h, 8, 1e-9, "2 spot nodes × 4 h");
  CHECK_NEAR(a.od_h, 4, 1e-9, "1 on-demand node × 4 h");
  CHECK_NEAR(a.cost, 8 * 0.25 + 4, 1e-9, "mixed membership cost");
  pit_sim_result_release(&a);
  pit_trace_release(&t);
  t = mk("2211111");
  c = cs(&t, 4, 7, 0);
  c.nodes = 2;
  CHECK(pit_sim_multi(&c, PIT_SPOT_GREEDY, &a, NULL, &e) == 0, "multi reclaim: %s", e.msg);
  CHECK(a.preemptions == 1 && a.deadline_met, "count 2 -> 1 reclaims the 2-spot membership (%d)", a.preemptions);
  pit_sim_result_release(&a);
  c.nodes = 0;
  CHECK(pit_sim_multi(&c, PIT_SPOT_GREEDY, &a, NULL, &e) == PIT_EARG, "nodes 0 refused");
  pit_trace_release(&t);
  /* 1000 nodes, spot for 1 of them in short spans: restarting the whole job for it does not pay, so
   * pitstop costs no more than on-demand only (greedy does) */
  t = mk("10101010101010101010101010101010101010101010");
  c = cs(&t, 20, 40, 0.5);
  c.nodes = 1000;
  double cost[2];
  for (int k = 0; k < 2; k++) {
    CHECK(pit_sim_multi(&c, k ? PIT_SPOT_ON_DEMAND : PIT_SPOT_PITSTOP, &a, NULL, &e) == 0, "multi 1000: %s", e.msg);
    CHECK(a.deadline_met, "1000 nodes: deadline met");
    cost[k] = a.cost;
    pit_sim_result_release(&a);
  }
  CHECK(cost[0] <= cost[1] + 1e-9, "1000 nodes, spot for 1: pitstop %g <= on-demand %g", cost[0], cost[1]);
  CHECK(pit_sim_multi(&c, PIT_SPOT_GREEDY, &a, NULL, &e) == 0 && a.cost > cost[1], "greedy pays the restarts: %g",
        a.cost);
  pit_sim_result_release(&a);
  pit_trace_release(&t);
}

/* the hedge: spot away for the first 10 h of a 10 h job due in 20 h, then back. Greedy (and pitstop
 * before the availability-weighted reserve) idles through the slack and runs on-demand to the end;
 * pitstop, having seen spot away all along, starts on-demand early, keeps slack and returns to spot. */
static void test_hedge(void) {
  struct pit_trace t = mk("000000000011111111111111111111");
  struct pit_sim_case c = cs(&t, 10, 20, 0.5);
  struct pit_sim_result g = run(&c, PIT_SPOT_GREEDY), p = run(&c, PIT_SPOT_PITSTOP), u = run(&c, PIT_SPOT_UNIFORM);
  CHECK(g.deadline_met && p.deadline_met, "hedge: deadlines met (greedy %d, pitstop %d)", g.deadline_met,
        p.deadline_met);
  CHECK(g.spot_h == 0, "hedge: greedy never reaches spot (%g h)", g.spot_h);
  CHECK(p.spot_h > 0 && p.changes[p.nchanges - 1].to == PIT_SPOT_SPOT, "hedge: pitstop ends on spot (%g h)",
        p.spot_h);
  CHECK(p.changes[0].t_h < 5, "hedge: pitstop starts on-demand early (at %g h)", p.changes[0].t_h);
  CHECK(p.cost < g.cost - 1, "hedge: pitstop %g well below greedy %g", p.cost, g.cost);
  CHECK(p.cost <= u.cost + 1e-9, "hedge: pitstop %g <= uniform progress %g", p.cost, u.cost);
  pit_sim_result_release(&g);
  pit_sim_result_release(&p);
  pit_sim_result_release(&u);
  /* spot seen there all along and a short outage: it waits (idle) like greedy, no on-demand */
  pit_trace_release(&t);
  t = mk("111111110011111111111111111111");
  c = cs(&t, 10, 20, 0.5);
  p = run(&c, PIT_SPOT_PITSTOP);
  CHECK(p.od_h == 0 && p.deadline_met, "short outage after spot: pitstop waits (od %g h)", p.od_h);
  pit_sim_result_release(&p);
  pit_trace_release(&t);
}

/* a tight deadline (slack 6 restarts): spot away, then spans of one tick, then back for good. Waiting
 * through the first outage and returning on every short span (pitstop before 2026-11-27) spends the
 * slack and ends on on-demand with spot there; pitstop now runs on-demand through the outage at once,
 * lets the one-tick spans pass (spot must have lasted 1.5 restarts) and returns for the long span. */
static void test_tight(void) {
  struct pit_trace t = mk("0010101010111111111111111111111111111111");
  struct pit_sim_case c = cs(&t, 20, 26, 1);
  struct pit_sim_result p = run(&c, PIT_SPOT_PITSTOP), g = run(&c, PIT_SPOT_GREEDY), u = run(&c, PIT_SPOT_UNIFORM);
  double o = opt(&c);
  CHECK(p.deadline_met, "tight: pitstop meets it");
  CHECK(p.preemptions == 0, "tight: no spot start on a one-tick span (%d reclaims)", p.preemptions);
  CHECK(p.nchanges == 2 && p.changes[0].to == PIT_SPOT_OD && p.changes[0].t_h == 0 &&
            p.changes[1].to == PIT_SPOT_SPOT,
        "tight: on-demand at once, then spot for good (%d changes)", p.nchanges);
  CHECK(p.cost < g.cost - 1 && p.cost < u.cost - 1, "tight: pitstop %g below greedy %g and UP %g", p.cost, g.cost,
        u.cost);
  CHECK(p.cost >= o - 1e-9, "tight: pitstop %g not below the optimum %g", p.cost, o);
  pit_sim_result_release(&p);
  pit_sim_result_release(&g);
  pit_sim_result_release(&u);
  pit_trace_release(&t);
}

int main(void) {
  test_tight();
  test_hedge();
  test_multi();
  test_optimum_by_hand();
  test_optimum_lower_bound();
  test_safe_optimum();
  test_baselines();
  test_trace_errors();
  return check_done();
}
