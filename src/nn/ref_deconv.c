/* ref_deconv.c — reference ConvTranspose2d (the adjoint of Conv2d): every input
 * pixel scatters a weighted k×k patch into the output.
 *   y[b,o, ih*s-p+kh, iw*s-p+kw] += w[i,o,kh,kw] * x[b,i,ih,iw];  y starts at bias[o]
 * (patch taps falling outside the output are dropped). Weight (I, O, k, k) as in PyTorch.
 * Output size (H-1)*s - 2p + k. Backward runs the same loop nest. */
#include <string.h>

#include "nn/ref_layers.h"

void pit_ref_deconv_forward(const struct pit_layer_spec *L, int B, const float *x, const float *w,
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
          int ih0, ih1; /* input rows whose tap kh lands inside the output */
          pit_ref_valid_range(H, OH, S, P, kh, &ih0, &ih1);
          for (int kw = 0; kw < K; kw++) {
            int iw0, iw1;
            pit_ref_valid_range(W, OW, S, P, kw, &iw0, &iw1);
            const float wv = w[(((size_t)i * O + o) * K + kh) * K + kw];
            for (int ih = ih0; ih < ih1; ih++) {
              const float *xr = xp + (size_t)ih * W;
              float *yr = yp + (size_t)(ih * S - P + kh) * OW; /* output row */
              for (int iw = iw0; iw < iw1; iw++)
                yr[iw * S - P + kw] += wv * xr[iw];
            }
          }
        }
      }
    }
  }
}

void pit_ref_deconv_backward(const struct pit_layer_spec *L, int B, const float *x,
                             const float *w, const float *dy, float *dx, float *dw, float *db) {
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
          int ih0, ih1;
          pit_ref_valid_range(H, OH, S, P, kh, &ih0, &ih1);
          for (int kw = 0; kw < K; kw++) {
            int iw0, iw1;
            pit_ref_valid_range(W, OW, S, P, kw, &iw0, &iw1);
            const size_t widx = (((size_t)i * O + o) * K + kh) * K + kw;
            const float wv = w[widx];
            float dwv = 0.0f; /* d loss / d w[i,o,kh,kw] from this sample */
            for (int ih = ih0; ih < ih1; ih++) {
              const float *gr = gp + (size_t)(ih * S - P + kh) * OW; /* output row */
              if (dw) {
                const float *xr = xp + (size_t)ih * W;
                for (int iw = iw0; iw < iw1; iw++)
                  dwv += gr[iw * S - P + kw] * xr[iw];
              }
              if (dxp) {
                float *dxr = dxp + (size_t)ih * W;
                for (int iw = iw0; iw < iw1; iw++)
                  dxr[iw] += wv * gr[iw * S - P + kw];
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
