/* ref_linear.c — reference Linear: the input (B, C, H, W) is read as (B, F) with
 * F = C*H*W (PyTorch's flatten order), weight (O, F), output (B, O).
 *   y[b,o] = bias[o] + sum_f w[o,f] x[b,f]
 *   dx[b,f] = sum_o w[o,f] dy[b,o];  dw[o,f] += sum_b dy[b,o] x[b,f];  db[o] += sum_b dy[b,o] */
#include <string.h>

#include "nn/ref_layers.h"

void pit_ref_linear_forward(const struct pit_layer_spec *L, int B, const float *x, const float *w,
                            const float *b, float *y) {
  const int F = L->in_c * L->in_h * L->in_w, O = L->o_c;
  for (int n = 0; n < B; n++) {
    const float *xr = x + (size_t)n * F;
    for (int o = 0; o < O; o++) {
      const float *wr = w + (size_t)o * F;
      float s = 0.0f;
      for (int f = 0; f < F; f++)
        s += wr[f] * xr[f];
      y[(size_t)n * O + o] = s + (b ? b[o] : 0.0f);
    }
  }
}

void pit_ref_linear_backward(const struct pit_layer_spec *L, int B, const float *x,
                             const float *w, const float *dy, float *dx, float *dw, float *db) {
  const int F = L->in_c * L->in_h * L->in_w, O = L->o_c;
  if (dx)
    memset(dx, 0, (size_t)B * F * sizeof(float));
  for (int n = 0; n < B; n++) {
    const float *xr = x + (size_t)n * F;
    float *dxr = dx ? dx + (size_t)n * F : NULL;
    for (int o = 0; o < O; o++) {
      const float g = dy[(size_t)n * O + o];
      const float *wr = w + (size_t)o * F;
      if (db)
        db[o] += g;
      if (dw) {
        float *dwr = dw + (size_t)o * F;
        for (int f = 0; f < F; f++)
          dwr[f] += g * xr[f];
      }
      if (dxr)
        for (int f = 0; f < F; f++)
          dxr[f] += g * wr[f];
    }
  }
}
