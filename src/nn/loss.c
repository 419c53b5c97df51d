/* loss.c — cross-entropy over logits, binary cross-entropy over probabilities,
 * and top-1 counting, with PyTorch's semantics. Values are computed in double:
 * the returned value is the SUM over the batch divided by denom, and the gradient
 * is d(value)/d(input), so that ranks using denom = global batch add up exactly.
 *   xent: loss_b = logsumexp(z_b) - z_b[label_b]  (max-shifted, stable);
 *         dz_b = (softmax(z_b) - onehot(label_b)) / denom.
 *         A label outside [0, K) makes the value NaN (its row's gradient is 0).
 *   bce:  loss_b = -(t*max(log p_b, -100) + (1-t)*max(log(1-p_b), -100));
 *         dp_b = (p_b - t) / max(p_b (1 - p_b), 1e-12) / denom  (PyTorch's backward).
 *   bce_logits: loss_i = max(z_i, 0) - z_i*t + log(1 + e^-|z_i|) (= -t log s - (1-t) log(1-s),
 *         s = sigmoid z, without overflow); dz_i = (s_i - t) / denom.
 *   l1:   loss_i = |a_i - b_i|; da_i = sign(a_i - b_i) / denom (0 where equal, as PyTorch).
 *   ragan: two BCE-with-logits terms on logits shifted by the other side's batch mean
 *         (nn.h); the mean makes every fake logit's gradient depend on all real ones and
 *         the reverse, which the finish phase adds once the column sums are global. */
#include <math.h>

#include "pitstop/nn.h"

double pit_loss_xent(const float *logits, const int32_t *labels, int B, int K, double denom,
                     float *dlogits) {
  double total = 0;
  for (int b = 0; b < B; b++) {
    const float *z = logits + (size_t)b * K;
    float *dz = dlogits ? dlogits + (size_t)b * K : NULL;
    const int lab = labels[b];
    if (lab < 0 || lab >= K) {
      total = NAN;
      if (dz)
        for (int k = 0; k < K; k++)
          dz[k] = 0.0f;
      continue;
    }
    double mx = z[0];
    for (int k = 1; k < K; k++)
      if (z[k] > mx)
        mx = z[k];
    double s = 0;
    for (int k = 0; k < K; k++)
      s += exp((double)z[k] - mx);
    const double lse = mx + log(s);
    total += lse - z[lab];
    if (dz) {
      for (int k = 0; k < K; k++)
        dz[k] = (float)(exp((double)z[k] - lse) / denom);
      dz[lab] = (float)((exp((double)z[lab] - lse) - 1.0) / denom);
    }
  }
  return total / denom;
}

double pit_loss_bce(const float *p, float target, int B, double denom, float *dp) {
  const double t = target;
  double total = 0;
  for (int b = 0; b < B; b++) {
    const double x = p[b];
    double lp = log(x), l1p = log(1.0 - x);
    if (lp < -100.0)
      lp = -100.0;
    if (l1p < -100.0)
      l1p = -100.0;
    total += -(t * lp + (1.0 - t) * l1p);
    if (dp) {
      double d = x * (1.0 - x);
      if (d < 1e-12)
        d = 1e-12;
      dp[b] = (float)((x - t) / d / denom);
    }
  }
  return total / denom;
}

double pit_loss_bce_logits(const float *z, float target, size_t n, double denom, float *dz) {
  const double t = target;
  double total = 0;
  for (size_t i = 0; i < n; i++) {
    const double x = z[i];
    total += (x > 0 ? x : 0) - x * t + log1p(exp(-fabs(x)));
    if (dz) {
      double s = x >= 0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x));
      dz[i] = (float)((s - t) / denom);
    }
  }
  return total / denom;
}

double pit_loss_l1(const float *a, const float *b, size_t n, double denom, float *da) {
  double total = 0;
  for (size_t i = 0; i < n; i++) {
    const float d = a[i] - b[i];
    total += fabs((double)d);
    if (da)
      da[i] = (float)((d > 0 ? 1.0 : d < 0 ? -1.0 : 0.0) / denom);
  }
  return total / denom;
}

int pit_count_correct(const float *logits, const int32_t *labels, int B, int K) {
  int correct = 0;
  for (int b = 0; b < B; b++) {
    const float *z = logits + (size_t)b * K;
    int best = 0;
    for (int k = 1; k < K; k++)
      if (z[k] > z[best])
        best = k;
    correct += best == labels[b];
  }
  return correct;
}

double pit_loss_ragan_part(const float *real, const float *fake, int n, int P, double N,
                           const double *mean_real, const double *mean_fake, int disc,
                           float *dreal, float *dfake, double *col) {
  const double denom = 2.0 * N * P; /* ½ · mean over N·P */
  const float t_real = disc ? 1.0f : 0.0f, t_fake = disc ? 0.0f : 1.0f;
  double total = 0;
  for (int p = 0; p < 2 * P; p++)
    col[p] = 0;
  for (int b = 0; b < n; b++)
    for (int p = 0; p < P; p++) {
      const size_t i = (size_t)b * P + p;
      float zr = (float)(real[i] - mean_fake[p]), zf = (float)(fake[i] - mean_real[p]);
      total += pit_loss_bce_logits(&zr, t_real, 1, denom, &dreal[i]);
      total += pit_loss_bce_logits(&zf, t_fake, 1, denom, &dfake[i]);
      col[p] += dreal[i];
      col[P + p] += dfake[i];
    }
  return total;
}

void pit_loss_ragan_finish(int n, int P, double N, const double *col, float *dreal, float *dfake) {
  for (int b = 0; b < n; b++)
    for (int p = 0; p < P; p++) {
      const size_t i = (size_t)b * P + p;
      dfake[i] -= (float)(col[p] / N);
      dreal[i] -= (float)(col[P + p] / N);
    }
}
