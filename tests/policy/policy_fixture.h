/* policy_fixture.h — a scripted cost-policy state shared by the control
 * tests: one node type "n" at $1/h (speed 1), the job's length, bounds and
 * clock, `nodes` nodes each computing 1/nodes s of a tp_cur s step (the work
 * split evenly at one node's speed: t_p(1) = 1 s), steady; and measured
 * memberships. Header-only (static inline functions): each test includes it once. */
#ifndef PIT_TEST_POLICY_FIXTURE_H
#define PIT_TEST_POLICY_FIXTURE_H
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "pitstop/policy.h"

static inline void fixture_one_type(struct pit_policy_state *s, int nodes, double tp_cur, int64_t step, int64_t since,
                             int nmax, double t, double switch_s) {
  struct pit_err e = {0};
  char cur[32];
  memset(s, 0, sizeof *s);
  snprintf(cur, sizeof cur, "n:%d", nodes);
  CHECK(pit_membership_parse(&s->cur, cur, &e) == 0, "%s", e.msg);
  s->step = step;
  s->since_change = since;
  s->total_steps = 20000;
  s->nmin = 1;
  s->nmax = nmax;
  s->resizable = 1;
  s->t = t;
  s->batch = 64;
  s->steady = 1;
  s->switch_s = switch_s;
  snprintf(s->types[0].itype, sizeof s->types[0].itype, "n");
  s->types[0].price_h = 1;
  s->types[0].speed = 1;
  s->ntypes = 1;
  for (int i = 0; i < nodes; i++) {
    struct pit_policy_node *n = &s->nodes[s->nnodes++];
    snprintf(n->itype, sizeof n->itype, "n");
    n->compute_s = 1.0 / nodes;
    n->wait_s = tp_cur - 1.0 / nodes;
  }
}

static inline void fixture_meas(struct pit_policy_state *s, const char *m, double tp, double half, int64_t n) {
  struct pit_err e = {0};
  struct pit_policy_meas *q = &s->meas[s->nmeas++];
  CHECK(pit_membership_parse(&q->m, m, &e) == 0, "%s", e.msg);
  q->tp = tp;
  q->tp_half = half;
  q->n = n;
}
#endif
