/* test_policy.c — the cost and time policies fed scripted states: the
 * textbook cases (a slow node is removed; a cheaper measured type is taken
 * by `cost`, not by `time`; a deadline that no longer holds adds nodes; a
 * lost node is replaced when it pays, not beyond the node bounds; a
 * never-measured type is tried only when its gain survives its interval),
 * decision points only every K steady iterations, purity, and no flapping
 * between two memberships of equal cost under 1000 noisy steps. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "pitstop/policy.h"

static void type(struct pit_policy_state *s, const char *it, double price, double speed) {
  struct pit_policy_type *t = &s->types[s->ntypes++];
  snprintf(t->itype, sizeof t->itype, "%s", it);
  t->price_h = price;
  t->speed = speed;
}

static void meas(struct pit_policy_state *s, const char *m, double tp, double half) {
  struct pit_policy_meas *q = &s->meas[s->nmeas++];
  struct pit_err e = {0};
  pit_membership_parse(&q->m, m, &e);
  q->tp = tp;
  q->tp_half = half;
  q->n = 200;
}

static void node(struct pit_policy_state *s, const char *it, double compute, double wait) {
  struct pit_policy_node *n = &s->nodes[s->nnodes++];
  snprintf(n->itype, sizeof n->itype, "%s", it);
  n->compute_s = compute;
  n->wait_s = wait;
}

/* 10000 steps, 200 done, steady, switch measured 1 s, local types priced like catalogs/local.tsv. */
static void base(struct pit_policy_state *s, const char *cur) {
  memset(s, 0, sizeof *s);
  struct pit_err e = {0};
  pit_membership_parse(&s->cur, cur, &e);
  s->step = 200;
  s->total_steps = 10000;
  s->nmin = 1;
  s->resizable = 1;
  s->t = 20;
  s->batch = 64;
  s->steady = 1;
  s->since_change = 200;
  s->switch_s = 1.0;
  type(s, "local-2", 0.10, 2);
  type(s, "local-1", 0.05, 1);
  type(s, "local-0.4", 0.05, 0.4);
}

static struct pit_choice ch; /* large: not on the stack */

static int decide(const char *policy, const struct pit_policy_state *s, double deadline) {
  struct pit_policy p;
  memset(&p, 0, sizeof p);
  struct pit_err e = {0};
  int rc = pit_policy_parse(&p, policy, &e);
  CHECK(rc == 0, "%s", e.msg);
  p.deadline_s = deadline;
  rc = pit_policy_decide(&p, s, &ch, &e);
  CHECK(rc == 0, "%s", e.msg);
  return rc;
}

static int to_is(const char *want) {
  char b[PIT_MEMBERSHIP_TEXT_MAX];
  pit_membership_format(&ch.to, b, sizeof b);
  return strcmp(b, want) == 0;
}

static void slow_node(void) {
  struct pit_policy_state s;
  base(&s, "local-1:1+local-0.4:1");
  /* 32 samples per rank: 1 ms/sample on local-1, 2.5 ms on local-0.4; the fast rank waits */
  node(&s, "local-1", 0.032, 0.050);
  node(&s, "local-0.4", 0.080, 0.002);
  meas(&s, "local-1:1+local-0.4:1", 0.085, 0.002);
  s.ntypes = 0; /* the types of the membership only (pitstop run's default) */
  type(&s, "local-1", 0.05, 1);
  type(&s, "local-0.4", 0.05, 0.4);
  /* cost: remove it; time: replace it by a fast node (local-1:2), faster than local-1 alone */
  const char *pol[] = {"cost", "time"}, *want[] = {"local-1:1", "local-1:2"}, *kind[] = {"remove", "switch"};
  for (int i = 0; i < 2; i++) {
    decide(pol[i], &s, NAN);
    CHECK(ch.decided && ch.act == PIT_ACT_RESIZE && to_is(want[i]) && !strcmp(ch.kind, kind[i]),
          "%s: slow node: act %d kind %s reason %s", pol[i], ch.act, ch.kind, ch.reason);
    CHECK(ch.nalts >= 3 && !strcmp(ch.alts[0].kind, "keep"), "alternatives: %d", ch.nalts);
    int found = 0;
    for (int k = 0; k < ch.nalts; k++)
      if (!strcmp(ch.alts[k].kind, "remove") && ch.alts[k].m.n == 1 && !strcmp(ch.alts[k].m.m[0].itype, "local-1")) {
        found = 1;
        CHECK(fabs(ch.alts[k].tp - 0.064) < 1e-9, "local-1 alone: 64 samples × 1 ms, got %g", ch.alts[k].tp);
        CHECK(ch.alts[k].cost > 0 && ch.alts[k].rest_s > 9800 * 0.064, "rest %g cost %g", ch.alts[k].rest_s,
              ch.alts[k].cost);
      }
    CHECK(found, "the removal is among the alternatives");
  }
  decide("cost", &s, NAN);
  CHECK(strstr(ch.reason, "local-0.4's rank computes") != NULL, "reason names the slow rank: %s", ch.reason);
  /* the workload cannot checkpoint: recommended only */
  s.resizable = 0;
  decide("cost", &s, NAN);
  CHECK(ch.act == PIT_ACT_KEEP && to_is("local-1:1") && strstr(ch.reason, "only recommended"), "%s", ch.reason);
  /* not a decision point: 10 iterations after the last */
  s.resizable = 1;
  s.since_change = 210;
  decide("cost", &s, NAN);
  CHECK(!ch.decided && ch.act == PIT_ACT_KEEP, "between decision points: %s", ch.reason);
  s.since_change = 200;
  s.steady = 0;
  decide("cost", &s, NAN);
  CHECK(!ch.decided && ch.act == PIT_ACT_KEEP, "not steady: %s", ch.reason);
}

/* A removal is priced at what this job's removals in place cost (shrink_s), anything else at a
 * relaunch's (switch_s): near the job's end, only the cheap switch pays. */
static void switch_by_kind(void) {
  struct pit_policy_state s;
  base(&s, "local-1:1+local-0.4:1");
  node(&s, "local-1", 0.032, 0.050);
  node(&s, "local-0.4", 0.080, 0.002);
  meas(&s, "local-1:1+local-0.4:1", 0.085, 0.002);
  s.total_steps = s.step + 12;
  s.switch_s = 1.0;
  s.shrink_s = NAN; /* none in place yet: the removal is priced as a relaunch, and does not pay */
  decide("cost", &s, NAN);
  CHECK(ch.decided && ch.act == PIT_ACT_KEEP, "12 steps left, a 1 s switch: keep: %s", ch.reason);
  s.shrink_s = 0.05;
  decide("cost", &s, NAN);
  CHECK(ch.act == PIT_ACT_RESIZE && to_is("local-1:1") && strstr(ch.reason, "measured in place"),
        "a 0.05 s removal in place pays: %s", ch.reason);
  int removal = 0, other = 0;
  for (int k = 1; k < ch.nalts; k++) {
    int rm = !strcmp(ch.alts[k].kind, "remove");
    removal += rm;
    other += !rm;
    CHECK(ch.alts[k].switch_s == (rm ? 0.05 : 1.0), "%s: switch %g s (%s)", ch.alts[k].kind, ch.alts[k].switch_s,
          ch.alts[k].switch_src);
  }
  CHECK(removal >= 1 && other >= 1, "removals %d, others %d", removal, other);
  CHECK(ch.alts[0].switch_s == 0, "keep: no switch (%g)", ch.alts[0].switch_s);
}

static void cheaper_type(void) {
  struct pit_policy_state s;
  base(&s, "local-2:1");
  meas(&s, "local-2:1", 0.030, 0.0005);  /* 0.10 $/h: 8.3e-7 $ per iteration */
  meas(&s, "local-1:1", 0.050, 0.0005);  /* 0.05 $/h: 6.9e-7 $ per iteration */
  decide("cost", &s, NAN);
  CHECK(ch.act == PIT_ACT_RESIZE && to_is("local-1:1"), "cost takes the cheaper measured type: %s", ch.reason);
  decide("time", &s, NAN);
  CHECK(ch.decided && ch.act == PIT_ACT_KEEP, "time keeps the faster one: %s", ch.reason);
}

static void deadline(void) {
  struct pit_policy_state s;
  base(&s, "local-1:1");
  s.t = 100;
  meas(&s, "local-1:1", 0.050, 0.001);  /* 9800 × 0.05 = 490 s left */
  meas(&s, "local-1:2", 0.030, 0.001);  /* 294 s + 1 s switch, at twice the price */
  decide("cost", &s, NAN);
  CHECK(ch.decided && ch.act == PIT_ACT_KEEP, "without a deadline one node is cheaper: %s", ch.reason);
  decide("cost", &s, 500);
  CHECK(ch.act == PIT_ACT_RESIZE && to_is("local-1:2") && strstr(ch.reason, "deadline no longer holds"),
        "the deadline adds a node: %s", ch.reason);
  /* nothing meets an impossible deadline: the fastest is taken by cost */
  decide("cost", &s, 150);
  CHECK(ch.act == PIT_ACT_RESIZE && to_is("local-1:2") && strstr(ch.reason, "no membership meets"), "%s",
        ch.reason);
}

static void node_lost(void) {
  struct pit_policy_state s;
  base(&s, "local-1:1"); /* was local-1:2 until a node was lost */
  meas(&s, "local-1:2", 0.030, 0.001);
  meas(&s, "local-1:1", 0.050, 0.001);
  decide("time", &s, NAN);
  CHECK(ch.act == PIT_ACT_RESIZE && to_is("local-1:2") && !strcmp(ch.kind, "add"), "replaced: %s", ch.reason);
  s.nmax = 1;
  decide("time", &s, NAN);
  CHECK(ch.act == PIT_ACT_KEEP, "not beyond --nnodes: %s", ch.reason);
}

static void unmeasured(void) {
  struct pit_policy_state s;
  base(&s, "local-1:1");
  node(&s, "local-1", 0.050, 0);
  meas(&s, "local-1:1", 0.050, 0.0005);
  s.ntypes = 1; /* local-1 and local-1.3: 1.3× by the catalog, ±50% → at worst 0.058 > 0.05 */
  type(&s, "local-1.3", 0.05, 1.3);
  decide("time", &s, NAN);
  CHECK(ch.act == PIT_ACT_KEEP, "1.3× by the catalog does not survive ±50%%: %s", ch.reason);
  s.ntypes = 0;
  type(&s, "local-1", 0.05, 1);
  type(&s, "local-2", 0.10, 2);
  s.nmax = 1;
  decide("time", &s, NAN);
  CHECK(ch.act == PIT_ACT_RESIZE && to_is("local-2:1"), "2× pays for trying it: %s", ch.reason);
  /* purity */
  struct pit_choice first = ch;
  decide("time", &s, NAN);
  CHECK(!strcmp(first.reason, ch.reason) && first.nalts == ch.nalts, "same state, same choice");
}

/* Two memberships of equal cost per iteration, measured again and again with
 * 10% noise per step: the cost policy must not alternate between them. */
static double gauss(void) {
  double u = check_urand() + 1e-12, v = check_urand();
  return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

/* One step time of a membership whose true t_p is truth, 10% noise, into its sums. */
static void sample(double truth, double *sum, double *sum2, int *n) {
  double x = truth * (1 + 0.10 * gauss());
  *sum += x;
  *sum2 += x * x;
  (*n)++;
}

/* The memberships measured at least 20 times (mean, 95% half-width) into s,
 * then the cost policy deciding every 10 iterations: 1 when it resizes. */
static int noisy_decide(struct pit_policy_state *s, int step, int64_t since, const char *const mem[2], int cur,
                        const double sum[2], const double sum2[2], const int n[2]) {
  s->step = step + 1;
  s->since_change = since;
  s->switch_s = 0.5;
  s->steady = n[cur] >= 20;
  for (int k = 0; k < 2; k++)
    if (n[k] >= 20) {
      double m = sum[k] / n[k], sd = sqrt(fmax(0, sum2[k] / n[k] - m * m));
      meas(s, mem[k], m, 1.96 * sd / sqrt(n[k]));
    }
  struct pit_policy p;
  memset(&p, 0, sizeof p);
  struct pit_err e = {0};
  pit_policy_parse(&p, "cost", &e);
  p.every = 10;
  pit_policy_decide(&p, s, &ch, &e);
  return ch.act == PIT_ACT_RESIZE;
}

static void no_flap(uint64_t seed) {
  check_rng = seed;
  const char *const mem[2] = {"local-1:1", "local-1:2"};
  double truth[2] = {0.050, 0.025}; /* 0.05 $/h × 0.05 s = 0.10 $/h × 0.025 s */
  double sum[2] = {0}, sum2[2] = {0};
  int n[2] = {0};
  int cur = 0, switches = 0;
  int64_t since = 0;
  for (int k = 0; k < 2; k++) /* both profiled: 20 steps each */
    for (int i = 0; i < 20; i++) {
      double x = truth[k] * (1 + 0.10 * gauss());
      sum[k] += x;
      sum2[k] += x * x;
      n[k]++;
    }
  for (int step = 0; step < 1000; step++) { /* the controller's view after each step */
    sample(truth[cur], &sum[cur], &sum2[cur], &n[cur]);
    since++;
    struct pit_policy_state s;
    base(&s, mem[cur]);
    if (noisy_decide(&s, step, since, mem, cur, sum, sum2, n)) {
      switches++;
      cur = !cur;
      since = 0;
    }
  }
  CHECK(switches <= 1, "seed %llu: flapped: %d switches in 1000 noisy steps", (unsigned long long)seed, switches);
}

static void clear_move(void) {
  /* a clear difference still moves: local-1:2 twice as fast as equal cost would be */
  struct pit_policy_state s;
  base(&s, "local-1:1");
  meas(&s, "local-1:1", 0.050, 0.001);
  meas(&s, "local-1:2", 0.018, 0.001);
  decide("cost", &s, NAN);
  CHECK(ch.act == PIT_ACT_RESIZE && to_is("local-1:2"), "a real saving moves: %s", ch.reason);
}

/* bench/decide-hetero under load (attempt 3): the full node's rank computes
 * nearly as long as the 40% one's, the pair's t_p is known to 10%, the switch
 * not measured yet. local-1 alone is predicted 20% cheaper by the split, but
 * not at the ends of the intervals: the cautious rule keeps; the trial rule
 * tries it (it pays for the switch back and 50 iterations at worst). Once
 * measured, the cautious rule alone weighs it: no second trial. */
/* base() with the pair's types only, priced alike, and a job of 3000 steps. */
static void pair_base(struct pit_policy_state *s, const char *cur) {
  base(s, cur);
  s->ntypes = 0;
  type(s, "local-1", 0.05, 1);
  type(s, "local-0.4", 0.05, 0.4);
  s->total_steps = 3000;
}

static void trial(void) {
  struct pit_policy_state s;
  pair_base(&s, "local-1:1+local-0.4:1");
  s.step = 50, s.since_change = 50, s.switch_s = NAN;
  node(&s, "local-1", 0.040, 0.010);
  node(&s, "local-0.4", 0.045, 0.005);
  meas(&s, "local-1:1+local-0.4:1", 0.050, 0.005);
  decide("cost", &s, NAN);
  CHECK(ch.act == PIT_ACT_RESIZE && to_is("local-1:1") && !strcmp(ch.kind, "remove") && strstr(ch.reason, "a trial"),
        "the split's central gain pays for trying: %s", ch.reason);
  /* the same at 2% of the job left: the gain no longer pays for trying */
  s.step = 2950;
  decide("cost", &s, NAN);
  CHECK(ch.decided && ch.act == PIT_ACT_KEEP, "near the end, no trial: %s", ch.reason);
  /* a deadline the trial would miss at its high end: no trial */
  s.step = 50;
  decide("cost", &s, 20 + 2950 * 0.08 * 1.15);
  CHECK(ch.act == PIT_ACT_KEEP, "a trial that risks the deadline is not taken: %s", ch.reason);
  /* tried, and local-1 alone measured no cheaper (0.1 s: the pair's cost): back to neither; then the pair again
   * with local-1:1 measured: no second trial */
  pair_base(&s, "local-1:1");
  s.step = 200;
  node(&s, "local-1", 0.100, 0);
  meas(&s, "local-1:1+local-0.4:1", 0.050, 0.005);
  meas(&s, "local-1:1", 0.100, 0.005);
  decide("cost", &s, NAN);
  CHECK(ch.decided && ch.act == PIT_ACT_KEEP, "equal cost measured: stays: %s", ch.reason);
  pair_base(&s, "local-1:1+local-0.4:1");
  s.step = 200;
  node(&s, "local-1", 0.040, 0.010);
  node(&s, "local-0.4", 0.045, 0.005);
  meas(&s, "local-1:1+local-0.4:1", 0.050, 0.005);
  meas(&s, "local-1:1", 0.100, 0.005);
  decide("cost", &s, NAN);
  CHECK(ch.decided && ch.act == PIT_ACT_KEEP && !strstr(ch.reason, "a trial"), "measured: no second trial: %s",
        ch.reason);
}

/* The trial under noise: the pair and local-1 alone cost the same per
 * iteration (0.05 s on two nodes, 0.1 s on one), but the split (local-1's
 * compute 0.04 s a step, 10% noise) predicts local-1 alone 20% cheaper. At
 * most the one trial and one return in 1000 noisy steps. */
static void trial_no_flap(uint64_t seed) {
  check_rng = seed;
  const char *const mem[2] = {"local-1:1+local-0.4:1", "local-1:1"};
  double truth[2] = {0.050, 0.100};
  double sum[2] = {0}, sum2[2] = {0}, csum = 0;
  int n[2] = {0};
  int cur = 0, switches = 0;
  int64_t since = 0;
  for (int step = 0; step < 1000; step++) {
    sample(truth[cur], &sum[cur], &sum2[cur], &n[cur]);
    since++;
    if (cur == 0)
      csum += 0.040 * (1 + 0.10 * gauss());
    struct pit_policy_state s;
    pair_base(&s, mem[cur]);
    if (cur == 0) {
      node(&s, "local-1", csum / n[0], 0.01);
      node(&s, "local-0.4", 0.045, 0.005);
    } else {
      node(&s, "local-1", sum[1] / n[1], 0);
    }
    if (noisy_decide(&s, step, since, mem, cur, sum, sum2, n)) {
      switches++;
      cur = !cur;
      since = 0;
    }
  }
  CHECK(switches >= 1 && switches <= 2, "seed %llu: %d switches in 1000 noisy steps (one trial, at most one return)",
        (unsigned long long)seed, switches);
}

int main(void) {
  slow_node();
  switch_by_kind();
  cheaper_type();
  deadline();
  node_lost();
  unmeasured();
  for (uint64_t seed = 1; seed <= 20; seed++)
    no_flap(seed);
  clear_move();
  trial();
  for (uint64_t seed = 1; seed <= 20; seed++)
    trial_no_flap(seed);
  return check_done();
}
