/* policy_fixture.h — a scripted cost-policy state shared by the control
 * tests: one node type "n" at $1/h (speed 1), the job's length, bounds and
 * clock, `nodes` nodes each computing 1/nodes s of a tp_cur s step (the work
 * split evenly at one node's speed: t_p(1) = 1 s), steady; and measured
 * memberships. Header-only (static inline functions): each test includes it once. */
#ifndef PIT_TEST_POLICY_FIXTURE_H
#define PIT_TEST_POLICY_FIXTURE_H
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "pitstop/catalog.h"
#include "pitstop/policy.h"

/* A catalog of text written to the test's tmpdir as cat.tsv (its path into path, n bytes) and loaded. */
static inline void fixture_catalog(struct pit_catalog *cat, char *path, size_t n, const char *text) {
  snprintf(path, n, "%s/cat.tsv", check_tmpdir());
  FILE *f = fopen(path, "w");
  CHECK(f != NULL, "open %s", path);
  fputs(text, f);
  fclose(f);
  struct pit_err e = {0};
  CHECK(pit_catalog_load(cat, path, &e) == 0, "%s", e.msg);
}

/* Replay options: the cost policy, no deadline or budget, nodes nmin..nmax of 1 rank, the types named
 * (comma-separated) from cat (loaded from catpath). */
static inline void fixture_replay_opts(struct pit_replay_opts *o, const struct pit_catalog *cat, const char *catpath,
                                       const char *types, int nmin, int nmax) {
  memset(o, 0, sizeof *o);
  struct pit_err e = {0};
  CHECK(pit_policy_parse(&o->policy, "cost", &e) == 0, "%s", e.msg);
  o->policy.deadline_s = NAN;
  o->policy.budget = NAN;
  o->nmin = nmin;
  o->nmax = nmax;
  o->ranks_per_node = 1;
  o->catalog = cat;
  CHECK(pit_policy_types(cat, catpath, types, o->types, &o->ntypes, &e) == 0, "%s", e.msg);
}

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
