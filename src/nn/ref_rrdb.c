/* ref_rrdb.c — reference ESRGAN residual-in-residual dense block (PIT_L_RRDB; the
 * parameter layout is in nn/rrdb.h). Per sample, with s = L->scale, a = L->alpha:
 *   dense(x):  c = [x];  for j = 1..4: o_j = lrelu_a(conv_j(c)); c = [c, o_j]
 *              return s * conv_5(c) + x
 *   rrdb(x) = s * dense_3(dense_2(dense_1(x))) + x
 * The concatenation is never copied: dense block d keeps one (5F, H, W) buffer per
 * sample, conv j reads its first j*F channels and writes its output into channels
 * [j*F, (j+1)*F), and the LeakyReLU runs in place there (its backward reads the
 * output: for a > 0, out > 0 exactly where in > 0). The output of dense block d is
 * written straight into the first F channels of block d+1's buffer.
 * Backward runs the same blocks in reverse with one (5F, H, W) gradient buffer: the
 * gradients of conv j's input channels add up into its first j*F channels, which is
 * the concatenation's backward. Reference code: one sample at a time, plain loops. */
#include <string.h>

#include "nn/ref_layers.h"
#include "nn/rrdb.h"

size_t pit_ref_rrdb_saved_floats(const struct pit_layer_spec *L, int B) {
  return (size_t)PIT_RRDB_DENSE * B * PIT_RRDB_CONVS * L->in_c * L->in_h * L->in_w;
}

size_t pit_ref_rrdb_ws_floats(const struct pit_layer_spec *L) {
  return (size_t)12 * L->in_c * L->in_h * L->in_w; /* gcat 5F, tmp 5F, go F, gd F */
}

void pit_ref_rrdb_forward(const struct pit_layer_spec *L, int B, const float *x,
                          const float *params, float *saved, float *y) {
  const int F = L->in_c;
  const size_t HW = (size_t)L->in_h * L->in_w, plane = (size_t)F * HW;
  const float s = L->scale, a = L->alpha;
  for (int b = 0; b < B; b++) {
    const float *xb = x + b * plane; /* (F, H, W) */
    float *yb = y + b * plane;
    for (int d = 0; d < PIT_RRDB_DENSE; d++) {
      float *cat = saved + ((size_t)d * B + b) * PIT_RRDB_CONVS * plane; /* (5F, H, W) */
      if (d == 0)
        memcpy(cat, xb, plane * sizeof(float));
      for (int j = 1; j < PIT_RRDB_CONVS; j++) {
        struct pit_layer_spec c = pit_rrdb_conv(L, d, j);
        float *o = cat + j * plane; /* (F, H, W) */
        pit_ref_conv_forward(&c, 1, cat, params + c.w_off, params + c.b_off, o);
        for (size_t k = 0; k < plane; k++)
          o[k] = o[k] > 0.0f ? o[k] : a * o[k];
      }
      struct pit_layer_spec c5 = pit_rrdb_conv(L, d, PIT_RRDB_CONVS);
      float *out = d + 1 < PIT_RRDB_DENSE
                       ? saved + ((size_t)(d + 1) * B + b) * PIT_RRDB_CONVS * plane
                       : yb; /* (F, H, W) */
      pit_ref_conv_forward(&c5, 1, cat, params + c5.w_off, params + c5.b_off, out);
      for (size_t k = 0; k < plane; k++)
        out[k] = s * out[k] + cat[k];
    }
    for (size_t k = 0; k < plane; k++)
      yb[k] = s * yb[k] + xb[k];
  }
}

void pit_ref_rrdb_backward(const struct pit_layer_spec *L, int B, const float *params,
                           const float *saved, const float *dy, float *dx, float *dparams,
                           float *ws) {
  if (!dx && !dparams)
    return;
  const int F = L->in_c;
  const size_t HW = (size_t)L->in_h * L->in_w, plane = (size_t)F * HW;
  const float s = L->scale, a = L->alpha;
  float *gcat = ws;                                /* (5F, H, W) gradient of the concatenation */
  float *tmp = gcat + PIT_RRDB_CONVS * plane;      /* (5F, H, W) one conv's input gradient */
  float *go = tmp + PIT_RRDB_CONVS * plane;        /* (F, H, W) gradient of conv_5's output */
  float *gd = go + plane;                          /* (F, H, W) gradient of a dense block's output */
  for (int b = 0; b < B; b++) {
    const float *gy = dy + b * plane;
    for (size_t k = 0; k < plane; k++)
      gd[k] = s * gy[k];
    for (int d = PIT_RRDB_DENSE - 1; d >= 0; d--) {
      const float *cat = saved + ((size_t)d * B + b) * PIT_RRDB_CONVS * plane;
      memset(gcat, 0, PIT_RRDB_CONVS * plane * sizeof(float));
      for (size_t k = 0; k < plane; k++) {
        gcat[k] = gd[k]; /* the block's own skip */
        go[k] = s * gd[k];
      }
      for (int j = PIT_RRDB_CONVS; j >= 1; j--) {
        struct pit_layer_spec c = pit_rrdb_conv(L, d, j);
        const float *g = go;
        if (j < PIT_RRDB_CONVS) { /* LeakyReLU backward in place on o_j's gradient */
          float *gj = gcat + j * plane;
          const float *o = cat + j * plane;
          for (size_t k = 0; k < plane; k++)
            gj[k] = o[k] > 0.0f ? gj[k] : a * gj[k];
          g = gj;
        }
        pit_ref_conv_backward(&c, 1, cat, params + c.w_off, g, tmp,
                              dparams ? dparams + c.w_off : NULL,
                              dparams ? dparams + c.b_off : NULL);
        for (size_t k = 0; k < (size_t)j * plane; k++)
          gcat[k] += tmp[k];
      }
      memcpy(gd, gcat, plane * sizeof(float));
    }
    if (dx)
      for (size_t k = 0; k < plane; k++)
        dx[b * plane + k] = gd[k] + gy[k];
  }
}
