/* ref_pool.c — reference MaxPool2d(k, stride), no padding:
 *   y[b,c,oh,ow] = max over the k×k window at (oh*s, ow*s).
 * The first maximum in row-major window order wins (a NaN wins, as in PyTorch);
 * its plane index is kept in argmax so backward sends the whole gradient there. */
#include <math.h>
#include <string.h>

#include "nn/ref_layers.h"

void pit_ref_maxpool_forward(const struct pit_layer_spec *L, int B, const float *x, float *y,
                             int32_t *argmax) {
  const int C = L->in_c, H = L->in_h, W = L->in_w, OH = L->o_h, OW = L->o_w;
  const int K = L->k, S = L->stride;
  for (size_t p = 0; p < (size_t)B * C; p++) { /* one (H, W) plane per (b, c) */
    const float *xp = x + p * H * W;
    for (int oh = 0; oh < OH; oh++) {
      for (int ow = 0; ow < OW; ow++) {
        int best = (oh * S) * W + ow * S;
        float bv = xp[best];
        for (int kh = 0; kh < K; kh++) {
          for (int kw = 0; kw < K; kw++) {
            int idx = (oh * S + kh) * W + ow * S + kw;
            float v = xp[idx];
            if (v > bv || (isnan(v) && !isnan(bv))) {
              bv = v;
              best = idx;
            }
          }
        }
        size_t out = (p * OH + oh) * OW + ow;
        y[out] = bv;
        argmax[out] = best;
      }
    }
  }
}

void pit_ref_maxpool_backward(const struct pit_layer_spec *L, int B, const int32_t *argmax,
                              const float *dy, float *dx) {
  const int C = L->in_c, H = L->in_h, W = L->in_w, OH = L->o_h, OW = L->o_w;
  memset(dx, 0, (size_t)B * C * H * W * sizeof(float));
  for (size_t p = 0; p < (size_t)B * C; p++) {
    float *dxp = dx + p * H * W;
    for (int j = 0; j < OH * OW; j++)
      dxp[argmax[p * OH * OW + j]] += dy[p * OH * OW + j]; /* += : windows may overlap */
  }
}
