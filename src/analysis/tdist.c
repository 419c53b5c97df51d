/* tdist.c — Student t quantiles for confidence intervals.
 * CDF through the regularised incomplete beta function I_x(a, b), evaluated by
 * its continued fraction (modified Lentz); the quantile by bisection on the
 * CDF (monotone, so always converges). Accuracy ~1e-10, far below what an
 * interval over noisy times needs. */
#include <math.h>

#include "pitstop/analysis.h"

#define TINY 1e-300

/* One modified-Lentz step with coefficient aa: updates the running c and d,
 * returns the factor the fraction's value is multiplied by. */
static double lentz_step(double aa, double *c, double *d) {
  *d = 1 + aa * *d;
  if (fabs(*d) < TINY)
    *d = TINY;
  *c = 1 + aa / *c;
  if (fabs(*c) < TINY)
    *c = TINY;
  *d = 1 / *d;
  return *d * *c;
}

/* Continued fraction of I_x(a, b) (valid for x < (a+1)/(a+b+2)). */
static double beta_cf(double a, double b, double x) {
  const double tiny = TINY;
  double qab = a + b, qap = a + 1, qam = a - 1;
  double c = 1, d = 1 - qab * x / qap;
  if (fabs(d) < tiny)
    d = tiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 300; m++) {
    int m2 = 2 * m;
    h *= lentz_step(m * (b - m) * x / ((qam + m2) * (a + m2)), &c, &d);
    double del = lentz_step(-(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)), &c, &d);
    h *= del;
    if (fabs(del - 1) < 1e-15)
      break;
  }
  return h;
}

static double inc_beta(double a, double b, double x) {
  if (x <= 0)
    return 0;
  if (x >= 1)
    return 1;
  double lbt = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
  double bt = exp(lbt);
  if (x < (a + 1) / (a + b + 2))
    return bt * beta_cf(a, b, x) / a;
  return 1 - bt * beta_cf(b, a, 1 - x) / b;
}

/* P(T <= t) for t >= 0 with df degrees of freedom. */
static double t_cdf(double t, double df) {
  double x = df / (df + t * t);
  return 1 - 0.5 * inc_beta(df / 2, 0.5, x);
}

double pit_t_quantile(double p, int df) {
  if (!(p > 0 && p < 1) || df < 1)
    return NAN;
  if (p == 0.5)
    return 0;
  double q = p > 0.5 ? p : 1 - p;
  double lo = 0, hi = 1;
  while (t_cdf(hi, df) < q && hi < 1e12)
    hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
    double mid = 0.5 * (lo + hi);
    if (t_cdf(mid, df) < q)
      lo = mid;
    else
      hi = mid;
  }
  double t = 0.5 * (lo + hi);
  return p > 0.5 ? t : -t;
}
