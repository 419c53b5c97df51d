/* cost.c — what a membership costs on a catalog's prices: Σ over nodes of
 * price × billed seconds (granularity and minimum of each type), and samples
 * per dollar. The one place pitstop turns time into money (catalog.h).
 * Invariant: every figure is computed from billed seconds, never from raw
 * seconds × price. */
#include <math.h>

#include "pitstop/catalog.h"

int pit_catalog_cost_priced(const struct pit_catalog *c, const struct pit_membership *m, double secs,
                            enum pit_pricing pricing, double *usd, struct pit_err *e) {
  *usd = NAN;
  if (m->n == 0)
    return pit_err_set(e, PIT_EARG, "cost: no instance type (empty membership)");
  if (!(secs >= 0) || !isfinite(secs))
    return pit_err_set(e, PIT_EARG, "cost: duration %g s is not a time >= 0", secs);
  double sum = 0;
  for (int i = 0; i < m->n; i++) {
    const struct pit_member *x = &m->m[i];
    const struct pit_itype *t = pit_catalog_find(c, x->itype);
    if (!t)
      return pit_err_set(e, PIT_ENOTFOUND, "cost: instance type '%s' is not in the catalog", x->itype);
    double price = pricing == PIT_SPOT ? t->spot_price_h : t->price_h;
    if (isnan(price))
      return pit_err_set(e, PIT_ENOTFOUND, "cost: the catalog has no spot price for '%s'", x->itype);
    sum += x->nodes * price / 3600.0 * pit_itype_billed_s(t, secs);
  }
  *usd = sum;
  return 0;
}

double pit_node_cost(const struct pit_itype *t, double price_h, double secs) {
  if (!(secs > 0))
    return 0;
  return price_h / 3600.0 * (t ? pit_itype_billed_s(t, secs) : secs);
}

int pit_catalog_cost(const struct pit_catalog *c, const struct pit_membership *m, double secs, double *usd,
                     struct pit_err *e) {
  return pit_catalog_cost_priced(c, m, secs, PIT_ON_DEMAND, usd, e);
}

int pit_catalog_samples_per_dollar(const struct pit_catalog *c, const struct pit_membership *m, double t_p,
                                   double batch, double job_s, double *spd, struct pit_err *e) {
  *spd = NAN;
  if (!(t_p > 0) || !(job_s > 0) || !(batch >= 1) || !isfinite(t_p) || !isfinite(job_s))
    return pit_err_set(e, PIT_EARG, "samples per dollar: needs t_p > 0 (%g), job time > 0 (%g), batch >= 1 (%g)", t_p,
                       job_s, batch);
  double usd;
  int rc = pit_catalog_cost(c, m, job_s, &usd, e);
  if (rc)
    return rc;
  *spd = job_s / t_p * batch / usd;
  return 0;
}
