/* test_observe.c — what the controller observes, fed to the cost policy
 * (issue 15, bench/decide-hetero): the slow pair local-1 + local-0.4 (a 2-rank
 * cnn-wide step whose time spreads 20% (CV) from step to step, the most seen
 * live under a 10 ms CPU-limit period) is steady for the policy within 80
 * iterations (50-70 by seed), and the policy removes local-0.4 at the next
 * decision point, step 100 at the latest; at the old 3% precision it was
 * still "measuring" at 100 iterations (then at the 200-iteration cap, as the
 * live bench did), paying for both nodes meanwhile. The t_p the observer
 * reports has the series' mean in its interval. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "policy/observe.h"
#include "pitstop/policy.h"
#include "pitstop/record.h"

#define TRUE_TP 0.0190

/* deterministic noise: uniform in [-1, 1) */
static double noise(uint64_t *x) {
  *x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(*x >> 11) / (double)(1ULL << 52) - 1.0;
}

/* feeds n iterations of the pair to o; returns how many fed before it was steady (n if never) */
static int feed(struct ctl_obs *o, const struct pit_membership *cur, int n, uint64_t seed) {
  struct pit_record r;
  pit_record_init(&r);
  r.type = PIT_REC_ITER;
  r.batch = 64;
  CHECK(pit_record_set_ranks(&r, 2) == 0, "ranks");
  struct pit_err e = {0};
  int steady_at = n;
  for (int i = 0; i < n; i++) {
    double f = noise(&seed);
    r.step_s = TRUE_TP * (1 + 0.35 * f); /* CV 20%, the worst live gen 0 */
    r.compute_s[0] = 0.017 * (1 + 0.35 * f); /* local-0.4 computes most of the step */
    r.compute_s[1] = 0.0078;                /* local-1 waits for it */
    r.wait_s[0] = r.step_s - r.compute_s[0];
    r.wait_s[1] = r.step_s - r.compute_s[1];
    CHECK(ctl_obs_iter(o, cur, &r, &e) == 0, "%s", e.msg);
    if (o->steady && steady_at == n)
      steady_at = i + 1;
  }
  pit_record_release(&r);
  return steady_at;
}

int main(void) {
  struct pit_membership cur;
  struct pit_err e = {0};
  CHECK(pit_membership_parse(&cur, "local-0.4:1+local-1:1", &e) == 0, "%s", e.msg);
  struct pit_node nodes[2];
  memset(nodes, 0, sizeof nodes);
  snprintf(nodes[0].itype, sizeof nodes[0].itype, "local-0.4");
  snprintf(nodes[1].itype, sizeof nodes[1].itype, "local-1");
  for (uint64_t seed = 1; seed <= 10; seed++) {
    struct ctl_obs o;
    ctl_obs_init(&o);
    ctl_obs_gen(&o);
    int at = feed(&o, &cur, 100, seed);
    CHECK(at <= 80 && o.nmeas == 1, "seed %llu: not steady after 80 iterations (%d)", (unsigned long long)seed, at);
    CHECK(fabs(o.meas[0].tp - TRUE_TP) <= o.meas[0].tp_half * 1.5 && o.meas[0].tp_half < 0.1 * o.meas[0].tp,
          "seed %llu: t_p %g ± %g, the series' mean %g", (unsigned long long)seed, o.meas[0].tp, o.meas[0].tp_half,
          TRUE_TP);
    /* the policy at the first decision point: remove the slow node */
    static struct pit_policy_state s;
    memset(&s, 0, sizeof s);
    s.cur = cur;
    s.step = 100;
    s.since_change = 100;
    s.total_steps = 3000;
    s.nmin = 1;
    s.nmax = 2;
    s.resizable = 1;
    s.t = 1.5;
    const char *ty[] = {"local-0.4", "local-1"};
    const double speed[] = {0.4, 1};
    for (int k = 0; k < 2; k++) {
      snprintf(s.types[k].itype, sizeof s.types[k].itype, "%s", ty[k]);
      s.types[k].price_h = 0.05;
      s.types[k].speed = speed[k];
    }
    s.ntypes = 2;
    ctl_obs_state(&o, nodes, 2, 1, &s);
    struct pit_policy p;
    static struct pit_choice ch;
    CHECK(pit_policy_parse(&p, "cost", &e) == 0, "%s", e.msg);
    CHECK(pit_policy_decide(&p, &s, &ch, &e) == 0, "%s", e.msg);
    char to[PIT_MEMBERSHIP_TEXT_MAX];
    pit_membership_format(&ch.to, to, sizeof to);
    CHECK(ch.decided && ch.act == PIT_ACT_RESIZE && !strcmp(to, "local-1:1"), "seed %llu: at step 100: %s",
          (unsigned long long)seed, ch.reason);
    ctl_obs_release(&o);
    /* at the old 3% precision the same series was not steady by 100 iterations */
    ctl_obs_init(&o);
    o.precision = 0.03;
    ctl_obs_gen(&o);
    CHECK(feed(&o, &cur, 100, seed) == 100, "seed %llu: 3%% reached within 100 iterations: the noise is too small "
          "for this test to show anything", (unsigned long long)seed);
    ctl_obs_release(&o);
  }
  return check_done();
}
