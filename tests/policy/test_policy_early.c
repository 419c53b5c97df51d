/* test_policy_early.c — decision points driven by what is measured (issue 16,
 * bench/ondemand-grid from all nodes): the first decision point of a
 * generation comes as soon as its pace is steady, every 10 iterations before
 * the first `every`; a clear pace is steady after 20 iterations and the
 * policy leaves 4 nodes of a retrograde curve there (not at 50), while the
 * same pace with 20% noise is not steady yet, so nothing is decided; and a
 * trial under a deadline whose high end would miss it is taken when the
 * candidate meets it at its central prediction with two switches to spare and
 * going back to the kept membership still meets it (the switch measured),
 * not when the switch is only assumed or no switch is to spare. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "policy/observe.h"
#include "pitstop/policy.h"
#include "pitstop/record.h"
#include "policy_fixture.h"

static struct pit_choice ch; /* large: not on the stack */

static void points(void) {
  static const struct {
    int64_t since, every;
    int want;
  } t[] = {{5, 50, 0},   {10, 50, 1},  {15, 50, 0},  {20, 50, 1},  {40, 50, 1},  {50, 50, 1}, {60, 50, 0},
           {100, 50, 1}, {210, 50, 0}, {200, 50, 1}, {10, 10, 1},  {15, 10, 0},  {20, 10, 1}, {0, 50, 0}};
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
    CHECK(pit_policy_decision_point(t[i].since, t[i].every) == t[i].want, "since %lld every %lld: want %d",
          (long long)t[i].since, (long long)t[i].every, t[i].want);
}

/* feeds n iterations of 4 nodes (t_p 6.5 s, each rank computing 0.25 s of it) with relative noise amp */
static void feed(struct ctl_obs *o, const struct pit_membership *cur, int n, double amp) {
  struct pit_record r;
  pit_record_init(&r);
  r.type = PIT_REC_ITER;
  r.batch = 64;
  CHECK(pit_record_set_ranks(&r, 4) == 0, "ranks");
  struct pit_err e = {0};
  check_rng = 7;
  for (int i = 0; i < n; i++) {
    r.step_s = 6.5 * (1 + amp * (2 * check_urand() - 1));
    for (int k = 0; k < 4; k++) {
      r.compute_s[k] = 0.25;
      r.wait_s[k] = r.step_s - 0.25;
    }
    CHECK(ctl_obs_iter(o, cur, &r, &e) == 0, "%s", e.msg);
  }
  pit_record_release(&r);
}

/* The policy after 20 iterations on 4 nodes (20000 steps, one type at $1/h, --nnodes 1:4). */
static void decide_after_20(double amp, int since) {
  struct pit_membership cur;
  struct pit_err e = {0};
  CHECK(pit_membership_parse(&cur, "n:4", &e) == 0, "%s", e.msg);
  struct ctl_obs o;
  ctl_obs_init(&o);
  ctl_obs_gen(&o);
  feed(&o, &cur, 20, amp);
  struct pit_node nodes[4];
  memset(nodes, 0, sizeof nodes);
  for (int k = 0; k < 4; k++)
    snprintf(nodes[k].itype, sizeof nodes[k].itype, "n");
  static struct pit_policy_state s;
  memset(&s, 0, sizeof s);
  s.cur = cur;
  s.step = since;
  s.since_change = since;
  s.total_steps = 20000;
  s.nmin = 1;
  s.nmax = 4;
  s.resizable = 1;
  s.t = 60 + 20 * 6.5;
  s.switch_s = NAN;
  snprintf(s.types[0].itype, sizeof s.types[0].itype, "n");
  s.types[0].price_h = 1;
  s.types[0].speed = 1;
  s.ntypes = 1;
  ctl_obs_state(&o, nodes, 4, 1, &s);
  struct pit_policy p;
  CHECK(pit_policy_parse(&p, "cost", &e) == 0, "%s", e.msg);
  CHECK(pit_policy_decide(&p, &s, &ch, &e) == 0, "%s", e.msg);
  ctl_obs_release(&o);
}

static void early(void) {
  /* 2% noise: steady at 20, decided there: fewer nodes */
  decide_after_20(0.02, 20);
  CHECK(ch.decided && ch.act == PIT_ACT_RESIZE && pit_membership_nodes(&ch.to) < 4,
        "a clear pace: decided at 20 iterations: %s", ch.reason);
  /* between early points: nothing weighed */
  decide_after_20(0.02, 25);
  CHECK(!ch.decided && ch.act == PIT_ACT_KEEP, "not a decision point at 25: %s", ch.reason);
  /* 35% uniform noise (CV 20%): not steady after 20 iterations, so still measuring */
  decide_after_20(0.35, 20);
  CHECK(!ch.decided && ch.act == PIT_ACT_KEEP && strstr(ch.reason, "measuring"), "a noisy pace is not judged at 20: %s",
        ch.reason);
}

/* course-a6 from 8 nodes under a deadline of 1.25 × the fastest: 8 and 7
 * measured, now on 7 (each rank computing 1/7 s of a 0.2047 s step); 6 nodes
 * (truly 0.2268 s) is predicted cheaper but meets the deadline only at its
 * central prediction. */
static void a6_state(struct pit_policy_state *s, double switch_s, double half7) {
  fixture_one_type(s, 7, 0.2047, 371, 20, 8, 200, switch_s);
  fixture_meas(s, "n:8", 0.1882, 0.002, 20);
  fixture_meas(s, "n:7", 0.2047, half7, 20);
}

static void trial_deadline(void) {
  struct pit_policy_state s;
  struct pit_policy p;
  struct pit_err e = {0};
  CHECK(pit_policy_parse(&p, "cost", &e) == 0, "%s", e.msg);
  p.deadline_s = 4880;
  char to[PIT_MEMBERSHIP_TEXT_MAX];
  /* the switch measured (70 s): the way back meets the deadline: try 6 */
  a6_state(&s, 70, 0.002);
  CHECK(pit_policy_decide(&p, &s, &ch, &e) == 0, "%s", e.msg);
  pit_membership_format(&ch.to, to, sizeof to);
  CHECK(ch.act == PIT_ACT_RESIZE && !strcmp(to, "n:6") && strstr(ch.reason, "a trial"),
        "a recoverable trial under the deadline: %s", ch.reason);
  const struct pit_policy_alt *a6 = NULL;
  for (int i = 0; i < ch.nalts; i++)
    if (pit_membership_nodes(&ch.alts[i].m) == 6)
      a6 = &ch.alts[i];
  CHECK(a6 && s.t + a6->rest_hi + 70 > p.deadline_s, "6 nodes at its high end misses the deadline (else this "
        "test shows nothing new)");
  double central6 = a6 ? s.t + a6->rest_s : NAN; /* its one switch included */
  /* the switch only assumed: no trial */
  a6_state(&s, NAN, 0.002);
  CHECK(pit_policy_decide(&p, &s, &ch, &e) == 0, "%s", e.msg);
  CHECK(ch.decided && ch.act == PIT_ACT_KEEP, "an assumed switch proves no way back: %s", ch.reason);
  /* a deadline 6 meets at its central prediction (its one switch included) but without two more switches to
   * spare: a trial there would be decided by the noise (the central prediction is as likely too fast as too
   * slow), and a failed one returns: no trial */
  a6_state(&s, 70, 0.002);
  p.deadline_s = central6 + 105;
  CHECK(pit_policy_decide(&p, &s, &ch, &e) == 0, "%s", e.msg);
  CHECK(ch.decided && ch.act == PIT_ACT_KEEP && !strstr(ch.reason, "a trial"), "no switch to spare: no trial: %s",
        ch.reason);
  p.deadline_s = central6 + 145;
  CHECK(pit_policy_decide(&p, &s, &ch, &e) == 0, "%s", e.msg);
  CHECK(ch.act == PIT_ACT_RESIZE && strstr(ch.reason, "a trial"), "a switch to spare: the trial: %s", ch.reason);
}

int main(void) {
  points();
  early();
  trial_deadline();
  return check_done();
}
