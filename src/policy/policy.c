/* policy.c — decision policies as pure functions: state → choice.
 * `fixed` keeps the membership; `schedule` follows STEP:MEMBERSHIP entries;
 * `cost` and `time` weigh alternatives (policy_cost.c).
 * Invariants: no clock, no I/O, no globals — the same state gives the same
 * choice live, in a replay, in the simulator and in tests; a choice never
 * leaves the node bounds [nmin, nmax]; a workload that cannot checkpoint is
 * never resized (the choice says what would have been done). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pitstop/policy.h"

static const struct {
  const char *name;
  enum pit_policy_kind kind;
} table[] = {{"fixed", PIT_POLICY_FIXED},
             {"schedule", PIT_POLICY_SCHEDULE},
             {"cost", PIT_POLICY_COST},
             {"time", PIT_POLICY_TIME}};

const char *pit_policy_name(const struct pit_policy *p) {
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (p->kind == table[i].kind)
      return table[i].name;
  return "?";
}

int pit_policy_parse(struct pit_policy *p, const char *name, struct pit_err *e) {
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (strcmp(name, table[i].name) == 0) {
      p->kind = table[i].kind;
      p->deadline_s = NAN;
      p->budget = NAN;
      p->margin = 0.2;
      p->every = 50;
      return 0;
    }
  return pit_err_set(e, PIT_EARG, "unknown policy '%s' (fixed, schedule, cost, time)", name);
}

double pit_policy_itype_speed(const struct pit_itype *it) {
  double cpus = it->cpus > 0 ? it->cpus : it->vcpus;
  return cpus * (isnan(it->cpu_quota) ? 1.0 : it->cpu_quota);
}

int pit_policy_types(const struct pit_catalog *cat, const char *catalog_name, const char *list,
                     struct pit_policy_type *types, int *n, struct pit_err *e) {
  char buf[1024];
  if (strlen(list) >= sizeof buf)
    return pit_err_set(e, PIT_EARG, "the list of types is too long");
  snprintf(buf, sizeof buf, "%s", list);
  *n = 0;
  char *save = NULL;
  for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    const struct pit_itype *it = pit_catalog_find(cat, t);
    if (!it)
      return pit_err_set(e, PIT_ENOTFOUND, "--types names '%s', which the catalog '%s' lacks", t, catalog_name);
    if (*n == PIT_POLICY_TYPES_MAX)
      return pit_err_set(e, PIT_EARG, "more than %d types for the policy", PIT_POLICY_TYPES_MAX);
    struct pit_policy_type *pt = &types[(*n)++];
    snprintf(pt->itype, sizeof pt->itype, "%s", it->name);
    pt->price_h = it->price_h;
    pt->spot_price_h = it->spot_price_h;
    pt->speed = pit_policy_itype_speed(it);
  }
  return 0;
}

int pit_schedule_parse(struct pit_policy *p, const char *text, const char *deftype, struct pit_err *e) {
  char buf[2048];
  if (strlen(text) >= sizeof buf)
    return pit_err_set(e, PIT_EARG, "the schedule is too long");
  snprintf(buf, sizeof buf, "%s", text);
  p->nsched = 0;
  char *save = NULL;
  /* entries are split on ',' — but a membership may also use ',' between types,
   * so an entry starts only where "DIGITS:" follows the comma */
  char *s = buf;
  while (s && *s) {
    char *next = NULL;
    for (char *c = strchr(s, ','); c; c = strchr(c + 1, ',')) {
      char *d = c + 1;
      while (*d >= '0' && *d <= '9')
        d++;
      if (d > c + 1 && *d == ':') {
        *c = 0;
        next = c + 1;
        break;
      }
    }
    char *colon = strchr(s, ':');
    int64_t step;
    if (!colon)
      return pit_err_set(e, PIT_EARG, "schedule entry '%s' is not STEP:MEMBERSHIP", s);
    *colon = 0;
    if (pit_parse_i64(s, &step) < 0 || step < 0)
      return pit_err_set(e, PIT_EARG, "schedule: '%s' is not a step", s);
    if (p->nsched == PIT_SCHEDULE_MAX)
      return pit_err_set(e, PIT_EARG, "the schedule has more than %d entries", PIT_SCHEDULE_MAX);
    if (p->nsched && step <= p->sched[p->nsched - 1].step)
      return pit_err_set(e, PIT_EARG, "schedule: step %lld does not follow step %lld", (long long)step,
                         (long long)p->sched[p->nsched - 1].step);
    int rc = pit_run_membership_parse(&p->sched[p->nsched].to, colon + 1, deftype, e);
    if (rc < 0)
      return rc;
    p->sched[p->nsched++].step = step;
    s = next;
  }
  (void)save;
  if (p->nsched == 0)
    return pit_err_set(e, PIT_EARG, "an empty schedule");
  return 0;
}

static int in_bounds(const struct pit_policy_state *s, const struct pit_membership *m) {
  int n = pit_membership_nodes(m);
  return n >= s->nmin && (s->nmax <= 0 || n <= s->nmax);
}

int pit_policy_decide(const struct pit_policy *p, const struct pit_policy_state *s, struct pit_choice *c,
                      struct pit_err *e) {
  memset(c, 0, sizeof *c);
  c->act = PIT_ACT_KEEP;
  c->to = s->cur;
  snprintf(c->kind, sizeof c->kind, "keep");
  switch (p->kind) {
  case PIT_POLICY_COST:
  case PIT_POLICY_TIME:
    return pit_policy_decide_cost(p, s, c, e);
  case PIT_POLICY_FIXED:
    snprintf(c->reason, sizeof c->reason, "fixed membership");
    return 0;
  case PIT_POLICY_SCHEDULE: {
    const struct pit_membership *want = NULL;
    int64_t from = -1;
    for (int i = 0; i < p->nsched && p->sched[i].step <= s->step; i++) {
      want = &p->sched[i].to;
      from = p->sched[i].step;
    }
    if (!want || pit_membership_equal(want, &s->cur)) {
      snprintf(c->reason, sizeof c->reason, "schedule: keep");
      return 0;
    }
    char a[128], b[128];
    pit_membership_format(&s->cur, a, sizeof a);
    pit_membership_format(want, b, sizeof b);
    if (!in_bounds(s, want)) {
      snprintf(c->reason, sizeof c->reason, "schedule wants %s from step %lld, outside the node bounds: keep %s",
               b, (long long)from, a);
      return 0;
    }
    c->to = *want;
    if (!s->resizable) {
      snprintf(c->reason, sizeof c->reason,
               "schedule wants %s from step %lld; the workload cannot checkpoint, so it is only recommended", b,
               (long long)from);
      return 0;
    }
    c->act = PIT_ACT_RESIZE;
    snprintf(c->kind, sizeof c->kind, "resize");
    snprintf(c->reason, sizeof c->reason, "schedule: %s from step %lld (was %s)", b, (long long)from, a);
    return 0;
  }
  }
  return pit_err_set(e, PIT_ESTATE, "%s:%d: unknown policy kind %d", __FILE__, __LINE__, (int)p->kind);
}
