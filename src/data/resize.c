/* resize.c — separable antialiased resizing of float planes (pit_resize in data.h) and
 * the per-dimension filter tables it shares with convert.c (which resizes 8-bit
 * samples on load). Definitions as PIL's ImagingResample: output pixel i has centre
 * c = (first + i + 0.5)·scale (scale = in/out), takes the source pixels
 * [int(c - r + 0.5), int(c + r + 0.5)) clipped to the image, r = support·max(scale, 1),
 * weighted by kernel((j - c + 0.5) / max(scale, 1)), normalised to sum 1.
 * Kernels: triangle (bilinear, support 1); Keys' cubic with a = -0.5 (PIL's bicubic,
 * support 2). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data/data_impl.h"

static double kernel_at(enum pit_resize_kernel k, double x) {
  x = fabs(x);
  if (k == PIT_RESIZE_BILINEAR)
    return x < 1.0 ? 1.0 - x : 0.0;
  const double a = -0.5;
  if (x < 1.0)
    return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0;
  if (x < 2.0)
    return (((x - 5.0) * x + 8.0) * x - 4.0) * a;
  return 0.0;
}

int pit__filter_table(int in, int out, int first, int count, enum pit_resize_kernel kernel,
                      int **pos, int **len, float **wt, int *maxk) {
  const double scale = (double)in / out;
  const double fscale = scale >= 1.0 ? scale : 1.0;
  const double support = (kernel == PIT_RESIZE_BICUBIC ? 2.0 : 1.0) * fscale;
  const int k = (int)ceil(support) * 2 + 1;
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
    int n = (int)(xmax - xmin);
    double total = 0;
    float *w = *wt + (size_t)i * k;
    for (int j = 0; j < k; j++) {
      w[j] = j < n ? (float)kernel_at(kernel, (j + xmin - center + 0.5) / fscale) : 0.0f;
      total += w[j];
    }
    (*pos)[i] = (int)xmin;
    (*len)[i] = n;
    for (int j = 0; j < k; j++)
      w[j] = total != 0 ? (float)(w[j] / total) : 0.0f;
  }
  return 0;
}

int pit_resize(const float *src, int c, int h, int w, float *dst, int oh, int ow,
               enum pit_resize_kernel kernel, struct pit_err *e) {
  if (c <= 0 || h <= 0 || w <= 0 || oh <= 0 || ow <= 0)
    return pit_err_set(e, PIT_EARG, "cannot resize %dx%dx%d to %dx%d", c, h, w, oh, ow);
  int *x0 = NULL, *xn = NULL, *y0 = NULL, *yn = NULL, kx = 0, ky = 0;
  float *wx = NULL, *wy = NULL;
  float *tmp = malloc(sizeof(float) * (size_t)h * ow); /* one channel, columns resized */
  int rc = 0;
  if (!tmp || pit__filter_table(w, ow, 0, ow, kernel, &x0, &xn, &wx, &kx) ||
      pit__filter_table(h, oh, 0, oh, kernel, &y0, &yn, &wy, &ky)) {
    rc = pit_err_set(e, PIT_ENOMEM, "out of memory resizing %dx%d to %dx%d", h, w, oh, ow);
    goto out;
  }
  for (int ch = 0; ch < c; ch++) {
    const float *s = src + (size_t)ch * h * w;
    for (int r = 0; r < h; r++) /* horizontal: (h, w) → (h, ow) */
      for (int x = 0; x < ow; x++) {
        const float *row = s + (size_t)r * w + x0[x], *wt = wx + (size_t)x * kx;
        float acc = 0;
        for (int j = 0; j < xn[x]; j++)
          acc += wt[j] * row[j];
        tmp[(size_t)r * ow + x] = acc;
      }
    float *d = dst + (size_t)ch * oh * ow;
    for (int y = 0; y < oh; y++) { /* vertical: (h, ow) → (oh, ow) */
      const float *wt = wy + (size_t)y * ky;
      float *o = d + (size_t)y * ow;
      for (int x = 0; x < ow; x++)
        o[x] = 0;
      for (int j = 0; j < yn[y]; j++) {
        const float *row = tmp + (size_t)(y0[y] + j) * ow;
        for (int x = 0; x < ow; x++)
          o[x] += wt[j] * row[x];
      }
    }
  }
out:
  PIT_FREE_ALL(tmp, x0, xn, y0, yn, wx, wy);
  return rc;
}
