/* convert.c — the one per-sample pipeline every reader uses:
 *   raw bytes (c0, h0, w0), CHW or HWC → [0,1] floats → channel conversion →
 *   resize (shorter side to s, centre crop s×s) → (x - mean) / std.
 *
 * The resize reproduces torchvision's Resize(s) + CenterCrop(s) on a float tensor
 * with bilinear interpolation and antialias=True: separable, each output pixel
 * (half-pixel centre c = scale·(i + 0.5), scale = in/out) takes the source pixels
 * within `support` of c (support = max(scale, 1)) weighted by the triangle
 * 1 - |d|/max(scale, 1), weights normalised to sum 1. Growing (28 → 32) is
 * therefore plain bilinear with edge clamping; shrinking averages over the
 * footprint (no aliasing). Results stay float (no rounding back to bytes).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data/data_impl.h"

/* Filter table for one dimension: output positions first..first+count-1 of a
 * resize from `in` to `out`. */
static int filter_table(int in, int out, int first, int count, int **pos, int **len, float **wt,
                        int *maxk) {
  double scale = (double)in / out;
  double support = scale >= 1.0 ? scale : 1.0;
  double inv = scale >= 1.0 ? 1.0 / scale : 1.0;
  int k = (int)ceil(support) * 2 + 1;
  *pos = malloc(sizeof(int) * (size_t)count);
  *len = malloc(sizeof(int) * (size_t)count);
  *wt = malloc(sizeof(float) * (size_t)count * (size_t)k);
  if (!*pos || !*len || !*wt)
    return PIT_ENOMEM;
  *maxk = k;
  for (int i = 0; i < count; i++) {
    double center = scale * (first + i + 0.5);
    int64_t xmin = (int64_t)(center - support + 0.5);
    int64_t xmax = (int64_t)(center + support + 0.5);
    if (xmin < 0)
      xmin = 0;
    if (xmax > in)
      xmax = in;
    if (xmax - xmin > k)
      xmax = xmin + k;
    double total = 0;
    int n = (int)(xmax - xmin);
    float *w = *wt + (size_t)i * k;
    for (int j = 0; j < k; j++) {
      double d = j < n ? fabs((j + xmin - center + 0.5) * inv) : 1.0;
      w[j] = d < 1.0 ? (float)(1.0 - d) : 0.0f;
      total += w[j];
    }
    (*pos)[i] = (int)xmin;
    (*len)[i] = n;
    for (int j = 0; j < k; j++)
      w[j] = total > 0 ? (float)(w[j] / total) : 0.0f;
  }
  return 0;
}

int pit__conv_init(struct pit__conv *cv, int c0, int h0, int w0, int chw, int c, int s,
                   const float *mean, const float *std, struct pit_err *e) {
  memset(cv, 0, sizeof *cv);
  cv->c0 = c0;
  cv->h0 = h0;
  cv->w0 = w0;
  cv->cstride = chw ? h0 * w0 : 1;
  cv->pstride = chw ? 1 : c0;
  cv->c = c ? c : c0;
  cv->s = s;
  cv->h = s ? s : h0;
  cv->w = s ? s : w0;
  for (int ch = 0; ch < cv->c; ch++) {
    if (cv->c == c0) {
      cv->mean[ch] = mean[ch];
      cv->std[ch] = std[ch];
    } else if (c0 == 1) { /* grey → RGB: every channel is the grey one */
      cv->mean[ch] = mean[0];
      cv->std[ch] = std[0];
    } else { /* RGB → grey: luma-weighted constants */
      cv->mean[ch] = 0.299f * mean[0] + 0.587f * mean[1] + 0.114f * mean[2];
      cv->std[ch] = 0.299f * std[0] + 0.587f * std[1] + 0.114f * std[2];
    }
    for (int v = 0; v < 256; v++)
      cv->lut[ch][v] = ((float)v / 255.0f - cv->mean[ch]) / cv->std[ch];
  }
  int planes = cv->c < c0 ? c0 : cv->c;
  cv->plane = malloc(sizeof(float) * (size_t)planes * h0 * w0);
  if (!cv->plane)
    return pit_err_set(e, PIT_ENOMEM, "out of memory converting %dx%d images", h0, w0);
  if (s) {
    /* torchvision Resize(s): shorter side → s, longer → floor(s·long/short). */
    int rh, rw;
    if (h0 <= w0) {
      rh = s;
      rw = (int)((int64_t)s * w0 / h0);
    } else {
      rw = s;
      rh = (int)((int64_t)s * h0 / w0);
    }
    int top = (int)nearbyint((rh - s) / 2.0), left = (int)nearbyint((rw - s) / 2.0);
    cv->tmp = malloc(sizeof(float) * (size_t)cv->c * h0 * s);
    if (!cv->tmp || filter_table(w0, rw, left, s, &cv->x0, &cv->xn, &cv->wx, &cv->maxkx) ||
        filter_table(h0, rh, top, s, &cv->y0, &cv->yn, &cv->wy, &cv->maxky)) {
      pit__conv_release(cv);
      return pit_err_set(e, PIT_ENOMEM, "out of memory resizing %dx%d images", h0, w0);
    }
  }
  return 0;
}

void pit__conv_release(struct pit__conv *cv) {
  free(cv->x0);
  free(cv->xn);
  free(cv->y0);
  free(cv->yn);
  free(cv->wx);
  free(cv->wy);
  free(cv->tmp);
  free(cv->plane);
  cv->x0 = cv->xn = cv->y0 = cv->yn = NULL;
  cv->wx = cv->wy = cv->tmp = cv->plane = NULL;
}

/* Channels that are computed: a grey source gives one plane, copied at the end. */
static int computed_channels(const struct pit__conv *cv) { return cv->c0 == 1 ? 1 : cv->c; }

/* Raw bytes → cv->plane (computed channels, h0, w0) in [0,1], RGB → grey converted. */
static void to_plane(struct pit__conv *cv, const uint8_t *src) {
  size_t hw = (size_t)cv->h0 * cv->w0;
  const float k = 1.0f / 255.0f;
  if (cv->c == 1 && cv->c0 == 3) {
    for (size_t p = 0; p < hw; p++) {
      const uint8_t *q = src + p * cv->pstride;
      cv->plane[p] = (0.299f * q[0] + 0.587f * q[cv->cstride] + 0.114f * q[2 * cv->cstride]) * k;
    }
    return;
  }
  for (int ch = 0; ch < computed_channels(cv); ch++) {
    const uint8_t *q = src + (size_t)ch * cv->cstride;
    float *d = cv->plane + ch * hw;
    for (size_t p = 0; p < hw; p++)
      d[p] = q[p * cv->pstride] * k;
  }
}

void pit__conv_sample(struct pit__conv *cv, const uint8_t *src, float *dst) {
  size_t hw0 = (size_t)cv->h0 * cv->w0;
  if (!cv->s && !(cv->c == 1 && cv->c0 == 3)) { /* lookup only */
    for (int ch = 0; ch < cv->c; ch++) {
      const uint8_t *q = src + (size_t)(cv->c0 == 1 ? 0 : ch) * cv->cstride;
      const float *lut = cv->lut[ch];
      float *d = dst + ch * hw0;
      for (size_t p = 0; p < hw0; p++)
        d[p] = lut[q[p * cv->pstride]];
    }
    return;
  }
  to_plane(cv, src);
  int c = computed_channels(cv), h = cv->h, w = cv->w;
  if (!cv->s) {
    memcpy(dst, cv->plane, sizeof(float) * c * hw0);
  } else {
    /* horizontal: plane (c, h0, w0) → tmp (c, h0, w) */
    for (int r = 0; r < c * cv->h0; r++) {
      const float *in = cv->plane + (size_t)r * cv->w0;
      float *out = cv->tmp + (size_t)r * w;
      for (int i = 0; i < w; i++) {
        const float *wt = cv->wx + (size_t)i * cv->maxkx;
        const float *p = in + cv->x0[i];
        float acc = 0;
        for (int j = 0; j < cv->xn[i]; j++)
          acc += wt[j] * p[j];
        out[i] = acc;
      }
    }
    /* vertical: tmp (c, h0, w) → dst (c, h, w) */
    for (int ch = 0; ch < c; ch++) {
      const float *in = cv->tmp + (size_t)ch * cv->h0 * w;
      float *out = dst + (size_t)ch * h * w;
      for (int i = 0; i < h; i++) {
        const float *wt = cv->wy + (size_t)i * cv->maxky;
        float *o = out + (size_t)i * w;
        for (int x = 0; x < w; x++)
          o[x] = 0;
        for (int j = 0; j < cv->yn[i]; j++) {
          const float *p = in + (size_t)(cv->y0[i] + j) * w;
          for (int x = 0; x < w; x++)
            o[x] += wt[j] * p[x];
        }
      }
    }
  }
  size_t hw = (size_t)h * w;
  for (int ch = 0; ch < c; ch++) {
    float m = cv->mean[ch], is = 1.0f / cv->std[ch];
    float *d = dst + ch * hw;
    for (size_t p = 0; p < hw; p++)
      d[p] = (d[p] - m) * is;
  }
  for (int ch = c; ch < cv->c; ch++) /* grey → RGB: same plane, same constants */
    memcpy(dst + ch * hw, dst, sizeof(float) * hw);
}
