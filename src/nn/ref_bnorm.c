/* ref_bnorm.c — reference BatchNorm2d (eps 1e-5, momentum 0.1, affine), per channel c
 * over the N = B*H*W values x[:, c, :, :]:
 *   train: mean = sum x / N, var = sum (x-mean)^2 / N (biased, for normalising),
 *          xhat = (x - mean) / sqrt(var + eps), y = gamma*xhat + beta;
 *          running_mean = 0.9*running_mean + 0.1*mean,
 *          running_var  = 0.9*running_var  + 0.1*var*N/(N-1) (unbiased), as PyTorch.
 *   eval:  the same with running_mean / running_var, no update.
 *   backward (train): with g = dy,
 *          dbeta = sum g, dgamma = sum g*xhat,
 *          dx = gamma/sqrt(var+eps) * (g - dbeta/N - xhat*dgamma/N).
 * Channel sums are accumulated in double (as PyTorch's CPU kernel does). */
#include <math.h>

#include "nn/ref_layers.h"

#define BN_EPS 1e-5
#define BN_MOMENTUM 0.1

/* y[:, c] = x[:, c] * scale + shift: channel c of (B, C, HW). */
static void scale_shift(int B, int C, size_t HW, int c, const float *x, float scale, float shift, float *y) {
  for (int n = 0; n < B; n++) {
    const float *xp = x + ((size_t)n * C + c) * HW;
    float *yp = y + ((size_t)n * C + c) * HW;
    for (size_t j = 0; j < HW; j++)
      yp[j] = xp[j] * scale + shift;
  }
}

void pit_ref_bnorm_forward_train(const struct pit_layer_spec *L, int B, const float *x,
                                 const float *gamma, const float *beta, float *running_mean,
                                 float *running_var, float *mean, float *invstd, float *y) {
  const int C = L->in_c;
  const size_t HW = (size_t)L->in_h * L->in_w, N = (size_t)B * HW;
  for (int c = 0; c < C; c++) {
    double s = 0;
    for (int n = 0; n < B; n++) {
      const float *xp = x + ((size_t)n * C + c) * HW;
      for (size_t j = 0; j < HW; j++)
        s += xp[j];
    }
    const double mu = s / (double)N;
    double ss = 0;
    for (int n = 0; n < B; n++) {
      const float *xp = x + ((size_t)n * C + c) * HW;
      for (size_t j = 0; j < HW; j++)
        ss += ((double)xp[j] - mu) * ((double)xp[j] - mu);
    }
    const double var = ss / (double)N;
    const double is = 1.0 / sqrt(var + BN_EPS);
    mean[c] = (float)mu;
    invstd[c] = (float)is;
    running_mean[c] = (float)((1.0 - BN_MOMENTUM) * running_mean[c] + BN_MOMENTUM * mu);
    running_var[c] = (float)((1.0 - BN_MOMENTUM) * running_var[c] +
                             BN_MOMENTUM * (N > 1 ? ss / (double)(N - 1) : var));
    /* y = scale*x + shift with scale = gamma*invstd, shift = beta - mean*scale */
    const float scale = (float)(gamma[c] * is), shift = (float)(beta[c] - mu * gamma[c] * is);
    scale_shift(B, C, HW, c, x, scale, shift, y);
  }
}

void pit_ref_bnorm_forward_eval(const struct pit_layer_spec *L, int B, const float *x,
                                const float *gamma, const float *beta,
                                const float *running_mean, const float *running_var, float *y) {
  const int C = L->in_c;
  const size_t HW = (size_t)L->in_h * L->in_w;
  for (int c = 0; c < C; c++) {
    const double is = 1.0 / sqrt((double)running_var[c] + BN_EPS);
    const float scale = (float)(gamma[c] * is);
    const float shift = (float)(beta[c] - running_mean[c] * gamma[c] * is);
    scale_shift(B, C, HW, c, x, scale, shift, y);
  }
}

void pit_ref_bnorm_backward(const struct pit_layer_spec *L, int B, const float *x,
                            const float *gamma, const float *mean, const float *invstd,
                            const float *dy, float *dx, float *dgamma, float *dbeta) {
  const int C = L->in_c;
  const size_t HW = (size_t)L->in_h * L->in_w, N = (size_t)B * HW;
  for (int c = 0; c < C; c++) {
    const float mu = mean[c], is = invstd[c];
    double sg = 0, sgx = 0; /* sum g, sum g*xhat */
    for (int n = 0; n < B; n++) {
      const float *xp = x + ((size_t)n * C + c) * HW;
      const float *gp = dy + ((size_t)n * C + c) * HW;
      for (size_t j = 0; j < HW; j++) {
        sg += gp[j];
        sgx += (double)gp[j] * ((xp[j] - mu) * is);
      }
    }
    if (dbeta)
      dbeta[c] += (float)sg;
    if (dgamma)
      dgamma[c] += (float)sgx;
    if (!dx)
      continue;
    const float k = gamma[c] * is;
    const float mg = (float)(sg / (double)N), mgx = (float)(sgx / (double)N);
    for (int n = 0; n < B; n++) {
      const float *xp = x + ((size_t)n * C + c) * HW;
      const float *gp = dy + ((size_t)n * C + c) * HW;
      float *dxp = dx + ((size_t)n * C + c) * HW;
      for (size_t j = 0; j < HW; j++)
        dxp[j] = k * (gp[j] - mg - (xp[j] - mu) * is * mgx);
    }
  }
}
