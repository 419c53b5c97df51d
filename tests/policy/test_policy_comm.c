/* test_policy_comm.c — the cost policy's collective time as a line in the
 * rank count: starting on 8 nodes of one type whose collective grows with the
 * nodes (the USL fit of course ativ-5: t_p 0.283 s at 8, 0.2982 s at 5, 0.3895
 * s at 3 for 1 s on one node), with 8 and 5 measured the 3-node membership is
 * predicted near its true t_p and taken under a deadline it meets; with only
 * 8 measured (the collective measured at 8 assumed everywhere) 3 nodes look
 * too slow and the policy stops at 4, which costs more. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "pitstop/policy.h"
#include "policy_fixture.h"

static struct pit_choice ch; /* large: not on the stack */

/* 8 nodes of "n" ($1/h), 200 of 20000 steps done, steady; each rank computes
 * 1/8 s of a 0.283 s step. with5: the 5-node membership measured too. */
static void state(struct pit_policy_state *s, int with5) {
  fixture_one_type(s, 8, 0.283, 200, 200, 8, 60, 70);
  fixture_meas(s, "n:8", 0.283, 0.002, 200);
  if (with5)
    fixture_meas(s, "n:5", 0.2982, 0.002, 200);
}

static const struct pit_policy_alt *decide(const struct pit_policy_state *s, const char *want) {
  struct pit_policy p;
  struct pit_err e = {0};
  memset(&p, 0, sizeof p);
  CHECK(pit_policy_parse(&p, "cost", &e) == 0, "%s", e.msg);
  p.deadline_s = s->t + 9500; /* 3 nodes at their true t_p: 19800 × 0.3895 = 7712 s */
  CHECK(pit_policy_decide(&p, s, &ch, &e) == 0, "%s", e.msg);
  char b[PIT_MEMBERSHIP_TEXT_MAX];
  pit_membership_format(&ch.to, b, sizeof b);
  CHECK(ch.act == PIT_ACT_RESIZE && strcmp(b, want) == 0, "to %s, want %s: %s", b, want, ch.reason);
  for (int i = 0; i < ch.nalts; i++)
    if (pit_membership_nodes(&ch.alts[i].m) == 3)
      return &ch.alts[i];
  return NULL;
}

int main(void) {
  struct pit_policy_state s;
  state(&s, 1);
  const struct pit_policy_alt *a = decide(&s, "n:3");
  CHECK(a && fabs(a->tp - 0.3895) < 0.01 * 0.3895, "3 nodes predicted at %g s (true 0.3895)", a ? a->tp : NAN);
  state(&s, 0);
  a = decide(&s, "n:4");
  CHECK(a && a->tp > 0.45, "one measurement: the collective at 8 assumed at 3 (%g s)", a ? a->tp : NAN);
  return check_done();
}
