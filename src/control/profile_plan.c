/* profile_plan.c — what `pitstop profile` measures, in which order, and what
 * it may skip (docs/decide.md): the candidate memberships (given, or every
 * type × 1..N nodes), ordered by the catalog's figure of merit so that what is
 * measured first can show the rest dominated, the two rules that skip a
 * candidate, and why nothing ranked fits. The ranking itself is
 * pit_profile_rank (profile.c).
 * Invariants: pure functions of their arguments (no I/O, no clock); nothing
 * is printed; a candidate is skipped only when even an optimistic figure for
 * it (linear scaling, twice the catalog's speed) loses to one measured. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pitstop/control.h"

/* Σ nodes × the catalog's speed of m, and Σ nodes × price (NaN: a type not in cat). */
static double speed_of(const struct pit_catalog *cat, const struct pit_membership *m, double *price_h) {
  double sp = 0;
  *price_h = 0;
  for (int i = 0; i < m->n; i++) {
    const struct pit_itype *it = pit_catalog_find(cat, m->m[i].itype);
    if (!it) {
      *price_h = NAN;
      return NAN;
    }
    sp += m->m[i].nodes * pit_policy_itype_speed(it);
    *price_h += m->m[i].nodes * it->price_h; /* rate: $/h, no time */
  }
  return sp;
}

/* The catalog's figure of merit of m for the objective: speed per price (cost) or speed (time). */
static double merit(const struct pit_catalog *cat, const struct pit_membership *m, int cost) {
  double price, sp = speed_of(cat, m, &price);
  return cost ? sp / price : sp;
}

int pit_profile_candidates(const struct pit_catalog *cat, const char *list, const char *types, int64_t max_nodes,
                           struct pit_membership *cand, int cap, int *n, struct pit_err *e) {
  *n = 0;
  if (list) {
    char buf[2048];
    snprintf(buf, sizeof buf, "%s", list);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t && *n < cap; t = strtok_r(NULL, ",", &save))
      if (pit_run_membership_parse(&cand[(*n)++], t, "local-1", e) < 0)
        return e->code ? e->code : PIT_EARG;
    return 0;
  }
  for (int64_t nn = 1; nn <= max_nodes; nn++)
    for (int t = 0; t < cat->n && *n < cap; t++) {
      char want[256];
      snprintf(want, sizeof want, ",%s,", types ? types : "");
      char name[PIT_NAME_MAX + 2];
      snprintf(name, sizeof name, ",%s,", cat->types[t].name);
      if (types && !strstr(want, name))
        continue;
      pit_membership_clear(&cand[*n]);
      if (pit_membership_add(&cand[*n], cat->types[t].name, (int)nn, -1, e) == 0)
        (*n)++;
    }
  return 0;
}

void pit_profile_order(const struct pit_catalog *cat, struct pit_membership *cand, int n,
                       enum pit_policy_kind objective) {
  int cost = objective == PIT_POLICY_COST;
  for (int i = 1; i < n; i++) /* insertion: stable */
    for (int j = i; j > 0 && merit(cat, &cand[j], cost) > merit(cat, &cand[j - 1], cost); j--) {
      struct pit_membership t = cand[j];
      cand[j] = cand[j - 1];
      cand[j - 1] = t;
    }
}

int pit_profile_fewer_nodes(const struct pit_membership *done, int ndone, const struct pit_membership *c) {
  if (c->n != 1 || c->m[0].nodes <= 1)
    return -1;
  for (int j = 0; j < ndone; j++)
    if (done[j].n == 1 && !strcmp(done[j].m[0].itype, c->m[0].itype) && done[j].m[0].nodes < c->m[0].nodes)
      return j;
  return -1;
}

int pit_profile_dominated(const struct pit_profile_row *rows, int n, const struct pit_catalog *cat,
                          const struct pit_membership *c, char *by, size_t nby, double *spd_hi, double *spd_best) {
  double price_c, sp_c = speed_of(cat, c, &price_c);
  if (!(sp_c > 0) || !(price_c > 0) || n == 0)
    return 0;
  int top = 0;
  for (int i = 1; i < n; i++)
    if (rows[i].spd > rows[top].spd)
      top = i;
  double hi = -INFINITY;
  for (int i = 0; i < n; i++) {
    double price_r, sp_r = speed_of(cat, &rows[i].m, &price_r);
    if (sp_r > 0 && rows[i].sps > 0 && pit_membership_nodes(&rows[i].m) <= pit_membership_nodes(c))
      hi = fmax(hi, 2 * rows[i].sps * sp_c / sp_r * 3600 / price_c);
  }
  if (!(isfinite(hi) && hi < rows[top].spd))
    return 0;
  pit_membership_format(&rows[top].m, by, nby);
  *spd_hi = hi;
  *spd_best = rows[top].spd;
  return 1;
}

void pit_profile_why_none(const struct pit_profile_row *rows, int n, const struct pit_profile_query *q, char *out,
                          size_t cap) {
  double tmin = INFINITY, cmin = INFINITY;
  for (int i = 0; i < n; i++) {
    tmin = fmin(tmin, rows[i].job_s);
    cmin = fmin(cmin, rows[i].cost);
  }
  char asked[128] = "";
  if (!isnan(q->deadline_s))
    snprintf(asked, sizeof asked, "a deadline of %.0f s", q->deadline_s);
  if (!isnan(q->budget))
    snprintf(asked + strlen(asked), sizeof asked - strlen(asked), "%sa budget of $%.4g", asked[0] ? " and " : "",
             q->budget);
  snprintf(out, cap, "nothing fits %s: the fastest measured takes %.0f s, the cheapest costs $%.4g",
           asked[0] ? asked : "(no price for any membership)", tmin, cmin);
}
