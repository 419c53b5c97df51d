/* ref_conv.c — reference Conv2d and ConvTranspose2d: direct loops over NCHW floats.
 *   Conv2d:          y[b,o,oh,ow] = bias[o] + sum_{i,kh,kw} w[o,i,kh,kw] * x[b,i, oh*s-p+kh, ow*s-p+kw]
 *                    (taps outside the input are zero padding). Weight (O, I, k, k).
 *   ConvTranspose2d: y[b,o, ih*s-p+kh, iw*s-p+kw] += w[i,o,kh,kw] * x[b,i,ih,iw];  y starts at bias[o]
 *                    (the adjoint of Conv2d: every input pixel scatters a weighted k×k patch; taps
 *                    falling outside the output are dropped). Weight (I, O, k, k) as in PyTorch.
 *                    Output size (H-1)*s - 2p + k.
 * Both are one loop nest (nest below): each tap (kh, kw) pairs pixel a of a "dense" plane with
 * pixel a*s-p+k of a "strided" plane: Conv2d's dense plane is its output, ConvTranspose2d's its
 * input. Backward runs the same nest and accumulates the three products instead.
 * The innermost loop is contiguous over the dense plane's columns; the valid range of dense
 * rows/columns per tap is precomputed so the inner loop has no bounds test. */
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

/* The two planes one (sample, output channel, input channel) pairs. */
struct planes {
  int dh, dw; /* dense plane (dh, dw) */
  int sh, sw; /* strided plane (sh, sw) */
  int s, p;   /* stride, padding */
};

/* One tap (kh, kw) between dense pixels a and strided pixels a' = (a_h*s-p+kh, a_w*s-p+kw),
 * over every a whose a' lies inside the strided plane. Outputs NULL are skipped:
 *   d_out[a] += wv * s_in[a'];   s_out[a'] += wv * d_in[a];
 * returns sum d_in[a] * s_in[a'] when dot (the tap's weight gradient), else 0. */
static float tap(const struct planes *g, int kh, int kw, float wv, const float *d_in, float *d_out,
                 const float *s_in, float *s_out, int dot) {
  const int S = g->s, P = g->p;
  int a0, a1, c0, c1;
  pit_ref_valid_range(g->dh, g->sh, S, P, kh, &a0, &a1);
  pit_ref_valid_range(g->dw, g->sw, S, P, kw, &c0, &c1);
  float acc = 0.0f;
  for (int a = a0; a < a1; a++) {
    const size_t drow = (size_t)a * g->dw, srow = (size_t)(a * S - P + kh) * g->sw;
    if (dot) {
      const float *dr = d_in + drow, *sr = s_in + srow;
      for (int c = c0; c < c1; c++)
        acc += dr[c] * sr[c * S - P + kw];
    }
    if (d_out) {
      float *dr = d_out + drow;
      const float *sr = s_in + srow;
      for (int c = c0; c < c1; c++)
        dr[c] += wv * sr[c * S - P + kw];
    }
    if (s_out) {
      const float *dr = d_in + drow;
      float *sr = s_out + srow;
      for (int c = c0; c < c1; c++)
        sr[c * S - P + kw] += wv * dr[c];
    }
  }
  return acc;
}

/* Forward when y is non-NULL (b may be NULL), else backward from dy (dx, dw, db each
 * optional). transposed: ConvTranspose2d (weight (I, O, k, k), the input is the dense plane). */
static void nest(const struct pit_layer_spec *L, int B, int transposed, const float *x, const float *w,
                 const float *b, float *y, const float *dy, float *dx, float *dw, float *db) {
  const int I = L->in_c, H = L->in_h, W = L->in_w;
  const int O = L->o_c, OH = L->o_h, OW = L->o_w;
  const int K = L->k;
  const struct planes g = transposed ? (struct planes){H, W, OH, OW, L->stride, L->pad}
                                     : (struct planes){OH, OW, H, W, L->stride, L->pad};
  if (!y && dx)
    memset(dx, 0, (size_t)B * I * H * W * sizeof(float));
  for (int n = 0; n < B; n++) {
    for (int o = 0; o < O; o++) {
      const size_t yoff = ((size_t)n * O + o) * OH * OW; /* (OH, OW) */
      float *yp = y ? y + yoff : NULL;
      const float *gp = y ? NULL : dy + yoff;
      if (yp) {
        float b0 = b ? b[o] : 0.0f;
        for (int j = 0; j < OH * OW; j++)
          yp[j] = b0;
      } else if (db) {
        double s = 0;
        for (int j = 0; j < OH * OW; j++)
          s += gp[j];
        db[o] += (float)s;
      }
      for (int i = 0; i < I; i++) {
        const size_t xoff = ((size_t)n * I + i) * H * W; /* (H, W) */
        const float *xp = x + xoff;
        float *dxp = !yp && dx ? dx + xoff : NULL;
        const float *wk = w + ((transposed ? (size_t)i * O + o : (size_t)o * I + i) * K) * K;
        float *dwk = !yp && dw ? dw + (wk - w) : NULL; /* d loss / d w[..,kh,kw], this sample */
        for (int kh = 0; kh < K; kh++) {
          for (int kw = 0; kw < K; kw++) {
            const float wv = wk[kh * K + kw];
            float dwv = 0.0f;
            if (yp && transposed)
              tap(&g, kh, kw, wv, xp, NULL, NULL, yp, 0);
            else if (yp)
              tap(&g, kh, kw, wv, NULL, yp, xp, NULL, 0);
            else if (transposed)
              dwv = tap(&g, kh, kw, wv, xp, dxp, gp, NULL, dwk != NULL);
            else
              dwv = tap(&g, kh, kw, wv, gp, NULL, xp, dxp, dwk != NULL);
            if (dwk)
              dwk[kh * K + kw] += dwv;
          }
        }
      }
    }
  }
}

void pit_ref_conv_forward(const struct pit_layer_spec *L, int B, const float *x, const float *w,
                          const float *b, float *y) {
  nest(L, B, 0, x, w, b, y, NULL, NULL, NULL, NULL);
}

void pit_ref_conv_backward(const struct pit_layer_spec *L, int B, const float *x, const float *w,
                           const float *dy, float *dx, float *dw, float *db) {
  nest(L, B, 0, x, w, NULL, NULL, dy, dx, dw, db);
}

void pit_ref_deconv_forward(const struct pit_layer_spec *L, int B, const float *x, const float *w,
                            const float *b, float *y) {
  nest(L, B, 1, x, w, b, y, NULL, NULL, NULL, NULL);
}

void pit_ref_deconv_backward(const struct pit_layer_spec *L, int B, const float *x,
                             const float *w, const float *dy, float *dx, float *dw, float *db) {
  nest(L, B, 1, x, w, NULL, NULL, dy, dx, dw, db);
}
