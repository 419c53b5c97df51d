/* ref_conv.c — reference Conv2d: direct loops over NCHW floats.
 *   y[b,o,oh,ow] = bias[o] + sum_{i,kh,kw} w[o,i,kh,kw] * x[b,i, oh*s-p+kh, ow*s-p+kw]
 * (taps outside the input are zero padding). Weight (O, I, k, k).
 * Backward runs the same loop nest and accumulates the three products instead.
 * Loop order keeps the innermost loop contiguous over output columns; the valid
 * range of output rows/columns per tap is precomputed so the inner loop has no
 * bounds test. */
#include <string.h>

#include "nn/ref_layers.h"

void pit_ref_valid_range(int na, int nb, int stride, int pad, int k, int *lo, int *hi) {
  /* want 0 <= a*stride - pad + k <= nb - 1 */
  int l = 0, h;
  if (k - pad < 0)
    l = (pad - k + stride - 1) / stride;
  int top = nb - 1 + pad - k; /* a*stride <= top */
  h = top < 0 ? 0 : top / stride + 1;
  if (h > na)
    h = na;
  if (l > h)
    l = h;
  *lo = l;
  *hi = h;
}

void pit_ref_conv_forward(const struct pit_layer_spec *L, int B, const float *x, const float *w,
                          const float *b, float *y) {
  const int I = L->in_c, H = L->in_h, W = L->in_w;
  const int O = L->o_c, OH = L->o_h, OW = L->o_w;
  const int K = L->k, S = L->stride, P = L->pad;
  for (int n = 0; n < B; n++) {
    for (int o = 0; o < O; o++) {
      float *yp = y + ((size_t)n * O + o) * OH * OW; /* (OH, OW) */
      float b0 = b ? b[o] : 0.0f;
      for (int j = 0; j < OH * OW; j++)
        yp[j] = b0;
      for (int i = 0; i < I; i++) {
        const float *xp = x + ((size_t)n * I + i) * H * W; /* (H, W) */
        for (int kh = 0; kh < K; kh++) {
          int oh0, oh1;
          pit_ref_valid_range(OH, H, S, P, kh, &oh0, &oh1);
          for (int kw = 0; kw < K; kw++) {
            int ow0, ow1;
            pit_ref_valid_range(OW, W, S, P, kw, &ow0, &ow1);
            const float wv = w[(((size_t)o * I + i) * K + kh) * K + kw];
            for (int oh = oh0; oh < oh1; oh++) {
              const float *xr = xp + (size_t)(oh * S - P + kh) * W; /* input row */
              float *yr = yp + (size_t)oh * OW;
              for (int ow = ow0; ow < ow1; ow++)
                yr[ow] += wv * xr[ow * S - P + kw];
            }
          }
        }
      }
    }
  }
}

void pit_ref_conv_backward(const struct pit_layer_spec *L, int B, const float *x, const float *w,
                           const float *dy, float *dx, float *dw, float *db) {
  const int I = L->in_c, H = L->in_h, W = L->in_w;
  const int O = L->o_c, OH = L->o_h, OW = L->o_w;
  const int K = L->k, S = L->stride, P = L->pad;
  if (dx)
    memset(dx, 0, (size_t)B * I * H * W * sizeof(float));
  for (int n = 0; n < B; n++) {
    for (int o = 0; o < O; o++) {
      const float *gp = dy + ((size_t)n * O + o) * OH * OW; /* (OH, OW) */
      if (db) {
        double s = 0;
        for (int j = 0; j < OH * OW; j++)
          s += gp[j];
        db[o] += (float)s;
      }
      for (int i = 0; i < I; i++) {
        const float *xp = x + ((size_t)n * I + i) * H * W;
        float *dxp = dx ? dx + ((size_t)n * I + i) * H * W : NULL;
        for (int kh = 0; kh < K; kh++) {
          int oh0, oh1;
          pit_ref_valid_range(OH, H, S, P, kh, &oh0, &oh1);
          for (int kw = 0; kw < K; kw++) {
            int ow0, ow1;
            pit_ref_valid_range(OW, W, S, P, kw, &ow0, &ow1);
            const size_t widx = (((size_t)o * I + i) * K + kh) * K + kw;
            const float wv = w[widx];
            float dwv = 0.0f; /* d loss / d w[o,i,kh,kw] from this sample */
            for (int oh = oh0; oh < oh1; oh++) {
              const size_t row = (size_t)(oh * S - P + kh) * W; /* input row */
              const float *gr = gp + (size_t)oh * OW;
              if (dw) {
                const float *xr = xp + row;
                for (int ow = ow0; ow < ow1; ow++)
                  dwv += gr[ow] * xr[ow * S - P + kw];
              }
              if (dxp) {
                float *dxr = dxp + row;
                for (int ow = ow0; ow < ow1; ow++)
                  dxr[ow * S - P + kw] += wv * gr[ow];
              }
            }
            if (dw)
              dw[widx] += dwv;
          }
        }
      }
    }
  }
}
