/* usl.c — Universal Scalability Law fit of throughput over node counts of
 * one instance type: X(n) = λn / (1 + σ(n−1) + κn(n−1)).
 *
 * Linearised: y = n/X = a + b(n−1) + c·n(n−1), a = 1/λ, b = σ/λ, c = κ/λ, a
 * model linear in (a, b, c), fitted by weighted least squares with weights
 * 1/var(y_i), var(y_i) = (n_i·sd(x_i)/x_i²)², sd(x_i) = x_half/1.96 (2% of x
 * when no interval is given). The parameters' covariance is (AᵀWA)⁻¹, scaled
 * by the reduced χ² when there are more points than parameters and the
 * scatter exceeds what the intervals say (never scaled down). A prediction's
 * variance is gᵀ·cov·g with g = (1, n−1, n(n−1)); the interval of X is
 * n/(y ± q·sd_y), q = 1.96, or t_{0.975,dof} once the scale comes from the
 * residuals. Three distinct counts are the minimum ("too few points"
 * otherwise: any two points are fitted by infinitely many curves).
 * κ >= 0: κ is the coherency cost (every node talking to every other); a fit
 * with κ < 0 says throughput grows ever faster with more nodes, which no
 * system does — it is noise on nearly linear points, and extrapolated it
 * promises too much (on emulated nodes: 4 ranks predicted 23% fast from 1–3).
 * Then the fit is redone with κ = 0 (the least-squares optimum under that
 * constraint lies on it: one linear constraint, a convex objective), its
 * covariance from the two-parameter fit (cov of c is 0), dof = points − 2.
 * Invariant: never prints; the fit struct owns no memory. */
#include <math.h>
#include <string.h>

#include "pitstop/predict.h"

static void row(double n, double g[3]) {
  g[0] = 1;
  g[1] = n - 1;
  g[2] = n * (n - 1);
}

/* inverse of the symmetric 3×3 m by cofactors; 0 when singular */
static int inv3(double m[3][3], double r[3][3]) {
  double c00 = m[1][1] * m[2][2] - m[1][2] * m[2][1], c01 = m[1][2] * m[2][0] - m[1][0] * m[2][2],
         c02 = m[1][0] * m[2][1] - m[1][1] * m[2][0];
  double det = m[0][0] * c00 + m[0][1] * c01 + m[0][2] * c02;
  double scale = fabs(m[0][0]) + fabs(m[1][1]) + fabs(m[2][2]);
  if (!(fabs(det) > 1e-300) || !(fabs(det) > 1e-14 * scale * scale * scale))
    return 0;
  r[0][0] = c00 / det;
  r[1][0] = c01 / det;
  r[2][0] = c02 / det;
  r[0][1] = (m[0][2] * m[2][1] - m[0][1] * m[2][2]) / det;
  r[1][1] = (m[0][0] * m[2][2] - m[0][2] * m[2][0]) / det;
  r[2][1] = (m[0][1] * m[2][0] - m[0][0] * m[2][1]) / det;
  r[0][2] = (m[0][1] * m[1][2] - m[0][2] * m[1][1]) / det;
  r[1][2] = (m[0][2] * m[1][0] - m[0][0] * m[1][2]) / det;
  r[2][2] = (m[0][0] * m[1][1] - m[0][1] * m[1][0]) / det;
  return 1;
}

/* Point i's y = n/x and its standard deviation. */
static double point_y(const struct pit_usl_point *p, double *sy) {
  double sx = (isfinite(p->x_half) && p->x_half > 0 ? p->x_half : 0.02 * p->x) / 1.96;
  *sy = p->n * sx / (p->x * p->x);
  return p->n / p->x;
}

/* Weighted least squares of y on the first k (2 or 3) of (1, n−1, n(n−1)):
 * q (q[2] = 0 when k = 2), fit->cov (rows and columns >= k zero), chi2, dof
 * (scaled as the top comment says). 1 when the counts do not determine it. */
static int solve(const struct pit_usl_point *p, int np, int k, struct pit_usl *fit, double q[3]) {
  double M[3][3] = {{0}}, v[3] = {0};
  for (int i = 0; i < np; i++) {
    double g[3], sy, y = point_y(&p[i], &sy), w = 1 / (sy * sy);
    row(p[i].n, g);
    for (int a = 0; a < k; a++) {
      v[a] += w * g[a] * y;
      for (int b = 0; b < k; b++)
        M[a][b] += w * g[a] * g[b];
    }
  }
  if (k == 2) /* c fixed at 0: a row of its own, removed from cov below; of the others' magnitude,
                 as the weights are 1/var(y) (~10^13 for 10^4 samples/s known to 0.2%) and a 1
                 there would make the determinant look singular beside them */
    M[2][2] = M[0][0];
  if (!inv3(M, fit->cov))
    return 1;
  if (k == 2)
    fit->cov[2][2] = 0;
  for (int a = 0; a < 3; a++) {
    q[a] = 0;
    for (int b = 0; b < k; b++)
      q[a] += fit->cov[a][b] * v[b];
  }
  fit->dof = np - k;
  fit->chi2 = 0;
  for (int i = 0; i < np; i++) {
    double g[3], sy, y = point_y(&p[i], &sy);
    row(p[i].n, g);
    double r = (y - (q[0] * g[0] + q[1] * g[1] + q[2] * g[2])) / sy;
    fit->chi2 += r * r;
  }
  if (fit->dof > 0 && fit->chi2 / fit->dof > 1)
    for (int a = 0; a < 3; a++)
      for (int b = 0; b < 3; b++)
        fit->cov[a][b] *= fit->chi2 / fit->dof;
  return 0;
}

int pit_usl_fit(const struct pit_usl_point *p, int np, struct pit_usl *fit, struct pit_err *e) {
  memset(fit, 0, sizeof *fit);
  fit->lambda = fit->sigma = fit->kappa = NAN;
  fit->npoints = np;
  for (int i = 0; i < np; i++) {
    if (!(p[i].n >= 1) || !(p[i].x > 0))
      return pit_err_set(e, PIT_EARG, "scaling point %d: node count must be >= 1 and throughput positive", i + 1);
    int seen = 0;
    for (int j = 0; j < i; j++)
      seen |= p[j].n == p[i].n;
    fit->ndistinct += !seen;
  }
  if (fit->ndistinct < 3)
    return pit_err_set(e, PIT_ESTATE, "too few points: %d distinct node count%s, the scaling fit needs 3",
                       fit->ndistinct, fit->ndistinct == 1 ? "" : "s");
  double q[3];
  if (solve(p, np, 3, fit, q))
    return pit_err_set(e, PIT_ESTATE, "too few points: the node counts do not determine the scaling fit");
  if (q[2] < 0 && solve(p, np, 2, fit, q))
    return pit_err_set(e, PIT_ESTATE, "too few points: the node counts do not determine the scaling fit");
  fit->lambda = 1 / q[0];
  fit->sigma = q[1] / q[0];
  fit->kappa = q[2] / q[0];
  return 0;
}

void pit_usl_predict(const struct pit_usl *fit, double n, double *x, double *lo, double *hi) {
  double g[3];
  row(n, g);
  double a = 1 / fit->lambda, q[3] = {a, fit->sigma * a, fit->kappa * a};
  double y = q[0] * g[0] + q[1] * g[1] + q[2] * g[2], var = 0;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      var += g[i] * fit->cov[i][j] * g[j];
  double z = fit->dof > 0 && fit->chi2 / fit->dof > 1 ? pit_t_quantile(0.975, fit->dof) : 1.96;
  double h = z * sqrt(var > 0 ? var : 0);
  *x = y > 0 ? n / y : NAN;
  *lo = n / (y + h);
  *hi = y - h > 0 ? n / (y - h) : INFINITY;
}
