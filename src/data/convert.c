/* convert.c — the one per-sample pipeline every reader uses:
 *   raw bytes (c0, h0, w0), CHW or HWC → /255 → resize (shorter side to s,
 *   centre crop s×s) → channel conversion → (x - mean) / std.
 * (Resizing and the RGB → grey luma are both linear, so their order only moves
 * float rounding; resizing first does it on one layout for every source.)
 *
 * The resize reproduces torchvision's Resize(s) + CenterCrop(s) on a float tensor
 * with bilinear interpolation and antialias=True (resize.c's filter tables: each
 * output pixel weighs the source pixels within max(scale, 1) of its centre by the
 * triangle). Growing (28 → 32) is therefore plain bilinear with edge clamping;
 * shrinking averages over the footprint (no aliasing). Results stay float (no
 * rounding back to bytes).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data/data_impl.h"

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
    cv->tmp = malloc(sizeof(float) * (size_t)c0 * s * w0);
    cv->plane = malloc(sizeof(float) * (size_t)c0 * s * s);
    if (!cv->tmp || !cv->plane || pit__filter_table(w0, rw, left, s, PIT_RESIZE_BILINEAR, &cv->x0, &cv->xn, &cv->wx, &cv->maxkx) ||
        pit__filter_table(h0, rh, top, s, PIT_RESIZE_BILINEAR, &cv->y0, &cv->yn, &cv->wy, &cv->maxky)) {
      pit__conv_release(cv);
      return pit_err_set(e, PIT_ENOMEM, "out of memory resizing %dx%d images", h0, w0);
    }
  }
  return 0;
}

void pit__conv_release(struct pit__conv *cv) {
  PIT_FREE_ALL(cv->x0, cv->xn, cv->y0, cv->yn, cv->wx, cv->wy, cv->tmp, cv->plane);
  cv->x0 = cv->xn = cv->y0 = cv->yn = NULL;
  cv->wx = cv->wy = cv->tmp = cv->plane = NULL;
}

const struct pit__conv *pit__conv_keep_bytes(const struct pit__conv *cv,
                                             const struct pit_data_opts *o) {
  return !o->store_floats && !cv->s && cv->c == cv->c0 && cv->pstride == 1 ? cv : NULL;
}

/* Channels that are computed: a grey source gives one plane, copied at the end. */
static int computed_channels(const struct pit__conv *cv) { return cv->c0 == 1 ? 1 : cv->c; }

/* Resize all c0 source channels: raw bytes → out (c0, h, w) in [0,1].
 * Vertical first, on whole source rows (a CHW row of one channel, or an HWC row
 * of all channels interleaved): contiguous, so it vectorises, and the
 * horizontal pass then runs on the h output rows only. */
static void resize(struct pit__conv *cv, const uint8_t *src, float *out) {
  int chw = cv->pstride == 1, c0 = cv->c0, h = cv->h, w = cv->w;
  int groups = chw ? c0 : 1;
  size_t len = chw ? (size_t)cv->w0 : (size_t)cv->w0 * c0; /* floats per row */
  const float k = 1.0f / 255.0f;
  for (int g = 0; g < groups; g++) {
    const uint8_t *base = src + (size_t)g * cv->cstride * chw;
    for (int i = 0; i < h; i++) {
      const float *wt = cv->wy + (size_t)i * cv->maxky;
      float *restrict o = cv->tmp + ((size_t)g * h + i) * len;
      for (size_t x = 0; x < len; x++)
        o[x] = 0;
      for (int j = 0; j < cv->yn[i]; j++) {
        const uint8_t *restrict row = base + (size_t)(cv->y0[i] + j) * len;
        float wj = wt[j] * k;
        for (size_t x = 0; x < len; x++)
          o[x] += wj * (float)row[x];
      }
    }
  }
  for (int ch = 0; ch < c0; ch++)
    for (int i = 0; i < h; i++) {
      const float *line = chw ? cv->tmp + ((size_t)ch * h + i) * len : cv->tmp + (size_t)i * len + ch;
      int ps = chw ? 1 : c0;
      float *o = out + ((size_t)ch * h + i) * w;
      for (int x = 0; x < w; x++) {
        const float *wt = cv->wx + (size_t)x * cv->maxkx;
        const float *p = line + (size_t)cv->x0[x] * ps;
        float acc = 0;
        for (int j = 0; j < cv->xn[x]; j++)
          acc += wt[j] * p[(size_t)j * ps];
        o[x] = acc;
      }
    }
}

void pit__conv_sample(struct pit__conv *cv, const uint8_t *src, float *dst) {
  size_t hw0 = (size_t)cv->h0 * cv->w0, hw = (size_t)cv->h * cv->w;
  int luma = cv->c == 1 && cv->c0 == 3;
  if (!cv->s && !luma) { /* lookup only */
    for (int ch = 0; ch < cv->c; ch++) {
      const uint8_t *q = src + (size_t)(cv->c0 == 1 ? 0 : ch) * cv->cstride;
      const float *lut = cv->lut[ch];
      float *d = dst + ch * hw0;
      for (size_t p = 0; p < hw0; p++)
        d[p] = lut[q[p * cv->pstride]];
    }
    return;
  }
  if (!cv->s) { /* RGB → grey at native size */
    for (size_t p = 0; p < hw0; p++) {
      const uint8_t *q = src + p * cv->pstride;
      dst[p] = (0.299f * q[0] + 0.587f * q[cv->cstride] + 0.114f * q[2 * cv->cstride]) / 255.0f;
    }
  } else if (luma) { /* resize the three channels, then grey (both linear: they commute) */
    resize(cv, src, cv->plane);
    const float *r = cv->plane, *g = r + hw, *b = g + hw;
    for (size_t p = 0; p < hw; p++)
      dst[p] = 0.299f * r[p] + 0.587f * g[p] + 0.114f * b[p];
  } else {
    resize(cv, src, dst);
  }
  int c = computed_channels(cv);
  for (int ch = 0; ch < c; ch++) {
    float m = cv->mean[ch], is = 1.0f / cv->std[ch];
    float *d = dst + ch * hw;
    for (size_t p = 0; p < hw; p++)
      d[p] = (d[p] - m) * is;
  }
  for (int ch = c; ch < cv->c; ch++) /* grey → RGB: same plane, same constants */
    memcpy(dst + ch * hw, dst, sizeof(float) * hw);
}
