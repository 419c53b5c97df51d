/* test_policy_start.c — the first membership chosen before any node starts
 * (state.at_start: what earlier runs measured, the store's prior via --db).
 * Two types priced alike, "fast" (speed 1) and "slow" (speed 0.4); the user
 * asks for slow:1+fast:1 under --nnodes 1:2, 300 steps. With both memberships
 * measured before and the pair dearer per step than fast alone, the policy
 * starts on fast:1, the change priced at nothing (nothing has started); with
 * the pair not measured before it starts on what was asked (nothing weighed);
 * with the job's length unknown it weighs PIT_POLICY_START_STEPS steps (the
 * cheaper per step is the cheaper job), but not under a deadline;
 * with the pair the cheaper per step it keeps it; and the same state once
 * running (at_start 0, not steady) only measures: at_start is what allows a
 * decision before the first step. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "pitstop/policy.h"
#include "policy_fixture.h"

static struct pit_choice ch; /* large: not on the stack */

static void two_types(struct pit_policy_state *s) {
  struct pit_err e = {0};
  memset(s, 0, sizeof *s);
  CHECK(pit_membership_parse(&s->cur, "slow:1+fast:1", &e) == 0, "%s", e.msg);
  s->at_start = 1;
  s->step = 0;
  s->total_steps = 300;
  s->nmin = 1;
  s->nmax = 2;
  s->resizable = 1;
  s->batch = 64;
  s->switch_s = NAN;
  s->restart_s = NAN;
  s->pace_s = s->pace_lo_s = s->pace_hi_s = NAN;
  const char *names[] = {"fast", "slow"};
  const double speed[] = {1, 0.4};
  for (int k = 0; k < 2; k++) {
    snprintf(s->types[k].itype, sizeof s->types[k].itype, "%s", names[k]);
    s->types[k].price_h = 0.05;
    s->types[k].spot_price_h = NAN;
    s->types[k].speed = speed[k];
  }
  s->ntypes = 2;
}

static void decide(const struct pit_policy *p, const struct pit_policy_state *s) {
  struct pit_err e = {0};
  memset(&ch, 0, sizeof ch);
  CHECK(pit_policy_decide(p, s, &ch, &e) == 0, "%s", e.msg);
}

int main(void) {
  struct pit_policy p;
  struct pit_err e = {0};
  CHECK(pit_policy_parse(&p, "cost", &e) == 0, "%s", e.msg);
  static struct pit_policy_state s;
  struct pit_membership fast;
  CHECK(pit_membership_parse(&fast, "fast:1", &e) == 0, "%s", e.msg);

  /* both measured before: the pair's step 21 ms on 2 nodes against 18.7 ms on one */
  two_types(&s);
  fixture_meas(&s, "slow:1+fast:1", 0.0210, 0.0004, 298);
  fixture_meas(&s, "fast:1", 0.0187, 0.0005, 298);
  decide(&p, &s);
  CHECK(ch.decided && ch.act == PIT_ACT_RESIZE, "started on the dearer pair: %s", ch.reason);
  CHECK(pit_membership_equal(&ch.to, &fast), "not fast:1: %s", ch.reason);
  CHECK(strstr(ch.reason, "nothing started yet") != NULL, "the switch not priced as nothing: %s", ch.reason);

  /* the pair never measured: nothing to weigh it by, start on it */
  two_types(&s);
  fixture_meas(&s, "fast:1", 0.0187, 0.0005, 298);
  decide(&p, &s);
  CHECK(!ch.decided && ch.act == PIT_ACT_KEEP, "decided without the pair's measurement: %s", ch.reason);
  CHECK(strstr(ch.reason, "no earlier run measured it") != NULL, "%s", ch.reason);

  /* the pair cheaper per step (8 ms on 2 nodes against 18.7 ms on one): keep it */
  two_types(&s);
  fixture_meas(&s, "slow:1+fast:1", 0.0080, 0.0002, 298);
  fixture_meas(&s, "fast:1", 0.0187, 0.0005, 298);
  decide(&p, &s);
  CHECK(ch.decided && ch.act == PIT_ACT_KEEP, "left the cheaper pair: %s", ch.reason);

  /* the job's length unknown (a command before it runs): with nothing started the cheaper per step is the
   * cheaper job, weighed over PIT_POLICY_START_STEPS; under a deadline it cannot be weighed */
  two_types(&s);
  s.total_steps = -1;
  fixture_meas(&s, "slow:1+fast:1", 0.0210, 0.0004, 298);
  fixture_meas(&s, "fast:1", 0.0187, 0.0005, 298);
  decide(&p, &s);
  CHECK(ch.decided && ch.act == PIT_ACT_RESIZE && pit_membership_equal(&ch.to, &fast), "length unknown: %s",
        ch.reason);
  CHECK(fabs(ch.alts[0].rest_s - PIT_POLICY_START_STEPS * 0.0210) < 1e-9, "keep weighed over %g s, not %d steps",
        ch.alts[0].rest_s, PIT_POLICY_START_STEPS);
  p.deadline_s = 3600;
  decide(&p, &s);
  CHECK(!ch.decided && ch.act == PIT_ACT_KEEP && strstr(ch.reason, "length is unknown"), "a deadline with no length: %s",
        ch.reason);
  p.deadline_s = NAN;

  /* the first case once running, not steady yet: measuring, no decision */
  two_types(&s);
  s.at_start = 0;
  fixture_meas(&s, "slow:1+fast:1", 0.0210, 0.0004, 298);
  fixture_meas(&s, "fast:1", 0.0187, 0.0005, 298);
  decide(&p, &s);
  CHECK(!ch.decided && ch.act == PIT_ACT_KEEP, "decided while measuring: %s", ch.reason);
  return check_done();
}
