/* test_policy_market.c — the cost policy prices each alternative at the market
 * its nodes would run on (issue 29, deliver 5): pit_policy_price_h per entry's
 * market (spot: the type's spot price; a type without one on spot: NaN); the
 * same measured state decides differently with the current nodes on spot and
 * on-demand (adding a node of a type held on spot is priced at spot: worth it
 * there, not at on-demand), and the decision's alternatives carry the markets
 * and their costs at those prices; candidates of a type held on both markets
 * keep its spot nodes and put the rest on-demand; a type held on spot without a
 * spot price is not priced (keep, with the reason); the elastic simulation
 * bills a spot node at the spot price.
 * Invariant: every number asserted follows from the state built here. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "pitstop/policy.h"
#include "pitstop/record.h"

static struct pit_choice ch; /* large: not on the stack */
static struct pit_policy_state st;

static struct pit_membership mem(const char *text) {
  struct pit_membership m;
  struct pit_err e = {0};
  CHECK(pit_membership_parse(&m, text, &e) == 0, "%s: %s", text, e.msg);
  return m;
}

static void add_type(struct pit_policy_state *s, const char *itype, double od, double spot) {
  struct pit_policy_type *t = &s->types[s->ntypes++];
  snprintf(t->itype, sizeof t->itype, "%s", itype);
  t->price_h = od;
  t->spot_price_h = spot;
  t->speed = 1;
}

static void add_meas(struct pit_policy_state *s, const char *m, double tp) {
  struct pit_policy_meas *q = &s->meas[s->nmeas++];
  q->m = mem(m);
  q->tp = tp;
  q->tp_half = 0.01;
  q->n = 50;
}

/* Types a (on-demand $1/h, spot $0.1/h) and b (on-demand $0.2/h, no spot);
 * cur a:1+b:1 on the markets given, measured at 1.0 s per iteration, and a:2+b:1
 * measured at 0.6 s: at a decision point (steady, 50 iterations since the change),
 * 19000 iterations to go, no deadline, no per-rank split (only measured memberships
 * are weighed). */
static void state(const char *cur, const char *meas_cur, const char *meas_add) {
  memset(&st, 0, sizeof st);
  st.cur = mem(cur);
  st.step = 1000;
  st.total_steps = 20000;
  st.since_change = 50;
  st.nmin = 1;
  st.nmax = 3;
  st.resizable = 1;
  st.t = 1000;
  st.batch = 64;
  st.steady = 1;
  st.switch_s = 5;
  add_type(&st, "a", 1.0, 0.1);
  add_type(&st, "b", 0.2, NAN);
  add_meas(&st, meas_cur, 1.0);
  add_meas(&st, meas_add, 0.6);
}

static const struct pit_policy_alt *alt_of(const char *m) {
  struct pit_membership want = mem(m);
  for (int i = 0; i < ch.nalts; i++)
    if (pit_membership_equal(&ch.alts[i].m, &want))
      return &ch.alts[i];
  return NULL;
}

static void prices(void) {
  memset(&st, 0, sizeof st);
  add_type(&st, "a", 1.0, 0.1);
  add_type(&st, "b", 0.2, NAN);
  struct pit_membership m = mem("a@spot:2+a@on-demand:1+b:3");
  CHECK_NEAR(pit_policy_price_h(&st, &m), 2 * 0.1 + 1.0 + 3 * 0.2, 1e-12, "a@spot:2+a@on-demand:1+b:3");
  m = mem("a:2");
  CHECK_NEAR(pit_policy_price_h(&st, &m), 2.0, 1e-12, "a bare: the default market, at on-demand");
  m = mem("a:1+b@spot:1");
  CHECK(isnan(pit_policy_price_h(&st, &m)), "b on spot without a spot price: NaN");
  m = mem("c:1");
  CHECK(isnan(pit_policy_price_h(&st, &m)), "a type not in the catalog: NaN");
}

static void flip(void) {
  struct pit_policy p;
  struct pit_err e = {0};
  CHECK(pit_policy_parse(&p, "cost", &e) == 0, "%s", e.msg);
  double rest = 19000;

  /* a held on spot: keep at $0.3/h × 1.0 s, add a spot a at $0.4/h × 0.6 s — 20% less: added */
  state("a@spot:1+b@on-demand:1", "a@spot:1+b@on-demand:1", "a@spot:2+b@on-demand:1");
  CHECK(pit_policy_decide(&p, &st, &ch, &e) == 0, "%s", e.msg);
  CHECK(ch.decided && ch.act == PIT_ACT_RESIZE, "spot: resize wanted (%s)", ch.reason);
  struct pit_membership want = mem("a@spot:2+b@on-demand:1");
  CHECK(pit_membership_equal(&ch.to, &want), "spot: to a@spot:2+b@on-demand:1 (%s)", ch.reason);
  CHECK(strcmp(ch.kind, "add") == 0, "spot: an add (%s)", ch.kind);
  const struct pit_policy_alt *k = alt_of("a@spot:1+b@on-demand:1"), *a = alt_of("a@spot:2+b@on-demand:1");
  CHECK(k && k == &ch.alts[0], "spot: keep is the current membership, markets included");
  CHECK(a != NULL, "spot: the add alternative carries its markets");
  if (k && a) {
    CHECK_NEAR(k->cost, 0.3 / 3600 * rest * 1.0, 1e-9, "spot: keep's cost at the spot price");
    CHECK_NEAR(a->cost, 0.4 / 3600 * (rest * 0.6 + 5), 1e-9, "spot: the add's cost at the spot price");
  }
  CHECK(strstr(ch.reason, "a@spot:2") != NULL, "spot: the reason names the market: %s", ch.reason);

  /* the same measurements, the nodes on-demand: keep at $1.2/h × 1.0 s, add at $2.2/h × 0.6 s: kept */
  state("a@on-demand:1+b@on-demand:1", "a:1+b:1", "a:2+b:1");
  CHECK(pit_policy_decide(&p, &st, &ch, &e) == 0, "%s", e.msg);
  CHECK(ch.decided && ch.act == PIT_ACT_KEEP, "on-demand: kept (%s)", ch.reason);
  a = alt_of("a@on-demand:2+b@on-demand:1");
  CHECK(a != NULL, "on-demand: the add alternative on-demand");
  if (a)
    CHECK_NEAR(a->cost, 2.2 / 3600 * (rest * 0.6 + 5), 1e-9, "on-demand: the add's cost at on-demand");

  /* bare (the provider's default): priced at on-demand, as before */
  state("a:1+b:1", "a:1+b:1", "a:2+b:1");
  CHECK(pit_policy_decide(&p, &st, &ch, &e) == 0, "%s", e.msg);
  CHECK(ch.decided && ch.act == PIT_ACT_KEEP, "bare: kept (%s)", ch.reason);

  /* a type held on both markets (the zone layer's split): an added node on-demand, the spot nodes kept */
  state("a@spot:1+a@on-demand:1", "a:2", "a:3");
  CHECK(pit_policy_decide(&p, &st, &ch, &e) == 0, "%s", e.msg);
  a = alt_of("a@spot:1+a@on-demand:2");
  CHECK(a != NULL, "mixed: a:3 is a@spot:1+a@on-demand:2 (%s)", ch.reason);
  if (a)
    CHECK_NEAR(a->cost, 2.1 / 3600 * (rest * 0.6 + 5), 1e-9, "mixed: the add's cost");
  CHECK(ch.act == PIT_ACT_KEEP, "mixed: $1.1/h × 1.0 s against $2.1/h × 0.6 s: kept (%s)", ch.reason);

  /* a type held on spot that has no spot price: not priced, kept with the reason */
  state("b@spot:1", "b:1", "b:2");
  CHECK(pit_policy_decide(&p, &st, &ch, &e) == 0, "%s", e.msg);
  CHECK(ch.act == PIT_ACT_KEEP && strstr(ch.reason, "not in the catalog") && strstr(ch.reason, "spot"),
        "b@spot: kept, no price: %s", ch.reason);
}

/* the elastic simulation: 100 iterations of 1 s on a@spot:1, fixed: 100 s at the spot price */
static int m_iter(void *ctx, const struct pit_membership *m, const char (*nodes)[PIT_NAME_MAX], int nnodes,
                  int64_t step, struct pit_elastic_iter *it, struct pit_err *e) {
  (void)ctx, (void)m, (void)nodes, (void)nnodes, (void)step, (void)e;
  memset(it, 0, sizeof *it);
  it->step_s = it->dt = 1;
  it->batch = 64;
  return 1;
}
static int64_t m_stop_step(void *ctx, int64_t decided, const struct pit_membership *to) {
  (void)ctx, (void)to;
  return decided;
}
static double m_start_s(void *ctx, int gen, int64_t step, const struct pit_membership *m) {
  (void)ctx, (void)gen, (void)step, (void)m;
  return 0;
}
static double m_stop_s(void *ctx, int gen, int64_t step, const struct pit_membership *m, int last) {
  (void)ctx, (void)gen, (void)step, (void)m, (void)last;
  return 0;
}

static void elastic(void) {
  struct pit_replay_opts o;
  struct pit_err e = {0};
  memset(&o, 0, sizeof o);
  CHECK(pit_policy_parse(&o.policy, "fixed", &e) == 0, "%s", e.msg);
  o.nmin = 1;
  o.nmax = 1;
  o.ranks_per_node = 1;
  memset(&st, 0, sizeof st);
  add_type(&st, "a", 1.0, 0.1);
  o.ntypes = st.ntypes;
  memcpy(o.types, st.types, sizeof o.types);
  struct pit_elastic_model mdl = {NULL, m_iter, m_stop_step, m_start_s, m_stop_s, NULL, NULL};
  struct pit_elastic_job job;
  memset(&job, 0, sizeof job);
  job.total = 100;
  const char *ms[] = {"a@spot:1", "a@on-demand:1"};
  double want[] = {0.1, 1.0};
  for (int i = 0; i < 2; i++) {
    job.initial = mem(ms[i]);
    struct pit_elastic_result r = {0};
    CHECK(pit_elastic_run(&mdl, &o, &job, &r, &e) == 0, "%s", e.msg);
    CHECK_NEAR(r.time_s, 100, 1e-9, "elastic time");
    CHECK_NEAR(r.cost, want[i] * 100 / 3600, 1e-12, ms[i]);
    pit_elastic_result_release(&r);
  }
}

int main(void) {
  prices();
  flip();
  elastic();
  return check_done();
}
