/* test_fast_wino.c — the fast backend's own Winograd F(4x4, 3x3) (src/nn/fast_wino.c)
 * against a direct 3x3 convolution summed in double precision: forward (flip 0) with bias
 * and LeakyReLU, and the backward-data pass (flip 1: the rotated, transposed filters), on
 * channel blocks of 8 and 16, planes whose sides are and are not multiples of 4 (the cut
 * last tiles), one pixel wide, and the stacked shape of the RRDB (67 x 16, 320 channels).
 * Which transform version runs follows pit_nn_isa() (the AVX2 one on an AVX2 or AVX-512
 * host; the _sse41 copy of this test runs the plain one).
 * Tolerance: each output is a sum of 9·C products; its float rounding against the exact
 * sum is about sqrt(9C)·u·Σ|products| for a direct sum (u = 6e-8; C ≤ 320: 3.2e-6 of
 * Σ|products|). Winograd adds the transforms' own rounding, scaled by their coefficients:
 * Bᵀ rows sum to |coefficients| ≤ 10 and Aᵀ to ≤ 18 (8+8+1+1), each applied twice, against
 * G's ≤ 1: the error can grow up to ~100x that of a direct sum, so the bound is
 * 100 · sqrt(9C) · u of the largest Σ|products| of the output (about 1e-4 at C = 320). It is
 * checked element by element against Σ|products| of the tensor (the scale the error is
 * made at), and the worst ratio is printed. A wrong transform coefficient gives errors of
 * order 1 of that scale. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "nn/fast_impl.h"
#include "pitstop/nn.h"

static double worst;

/* element (c, h, w) of a (C, H, W) image in the blocked layout of blk lanes */
static size_t at(int blk, int H, int W, int c, int h, int w) {
  return (((size_t)(c / blk) * H + h) * W + w) * blk + c % blk;
}

static void one(int C, int K, int H, int W, int blk, int flip, int act, dnnl_engine_t eng, dnnl_stream_t strm) {
  struct pit_err e = {0};
  struct pit_fast_wino *w = NULL;
  char where[96];
  snprintf(where, sizeof where, "C %d K %d %dx%d blk %d flip %d act %d", C, K, H, W, blk, flip, act);
  int rc = pit_fast_wino_create(&w, C, K, H, W, blk, flip, eng, where, &e);
  CHECK(rc == 0, "%s: %s", where, e.msg);
  if (rc)
    return;
  struct pit_rng r;
  pit_rng_seed(&r, (uint64_t)C * 131 + K * 7 + H + W + flip);
  size_t nx = (size_t)C * H * W, ny = (size_t)K * H * W, nw = (size_t)K * C * 9;
  float *x = malloc(nx * sizeof *x), *y = malloc(ny * sizeof *y), *wt = malloc(nw * sizeof *wt);
  float *b = malloc(K * sizeof *b);
  float *V = malloc(pit_fast_wino_floats(w, 'V') * sizeof(float));
  float *U = malloc(pit_fast_wino_floats(w, 'U') * sizeof(float));
  float *M = malloc(pit_fast_wino_floats(w, 'M') * sizeof(float));
  for (size_t i = 0; i < nx; i++)
    x[i] = (float)pit_rng_normal(&r);
  for (size_t i = 0; i < nw; i++)
    wt[i] = (float)(pit_rng_normal(&r) / sqrt(9.0 * C));
  for (int k = 0; k < K; k++)
    b[k] = (float)pit_rng_normal(&r);
  for (size_t i = 0; i < ny; i++)
    y[i] = NAN; /* every element must be written */
  const float slope = 0.2f;
  rc = pit_fast_wino_run(w, x, wt, flip ? NULL : b, act, slope, y, V, U, M, strm, &e);
  CHECK(rc == 0, "%s: %s", where, e.msg);
  double scale = 0, err = 0;
  for (int k = 0; k < K && rc == 0; k++)
    for (int h = 0; h < H; h++)
      for (int q = 0; q < W; q++) {
        double s = flip ? 0 : b[k], sa = fabs(s);
        for (int c = 0; c < C; c++)
          for (int u = 0; u < 3; u++)
            for (int v = 0; v < 3; v++) {
              int hh = h + u - 1, ww = q + v - 1;
              if (hh < 0 || hh >= H || ww < 0 || ww >= W)
                continue;
              /* flip: w'[k][c][u][v] = wt[c][k][2-u][2-v] (wt is (C, K, 3, 3)) */
              double g = flip ? wt[((size_t)c * K + k) * 9 + (2 - u) * 3 + (2 - v)]
                              : wt[((size_t)k * C + c) * 9 + u * 3 + v];
              double p = g * x[at(blk, H, W, c, hh, ww)];
              s += p;
              sa += fabs(p);
            }
        if (act && s < 0)
          s *= slope, sa *= slope;
        double d = fabs(s - y[at(blk, H, W, k, h, q)]);
        if (!(d <= err)) /* NaN too */
          err = isnan(d) ? INFINITY : d;
        if (sa > scale)
          scale = sa;
      }
  double rel = err / scale, bound = 100 * sqrt(9.0 * C) * 6e-8;
  CHECK(rel <= bound, "%s: error %.3g of the largest |products| sum, bound %.3g", where, rel, bound);
  if (rel > worst)
    worst = rel;
  free(x), free(y), free(wt), free(b), free(V), free(U), free(M);
  pit_fast_wino_free(w);
}

int main(void) {
  dnnl_engine_t eng;
  dnnl_stream_t strm;
  if (dnnl_engine_create(&eng, dnnl_cpu, 0) != dnnl_success ||
      dnnl_stream_create(&strm, eng, dnnl_stream_default_flags) != dnnl_success) {
    CHECK(0, "no oneDNN engine or stream");
    return check_done();
  }
  for (int flip = 0; flip < 2; flip++) {
    one(8, 8, 4, 4, 8, flip, !flip, eng, strm);
    one(16, 8, 13, 10, 8, flip, !flip, eng, strm);
    one(8, 24, 7, 1, 8, flip, 0, eng, strm);
    one(32, 16, 9, 17, 16, flip, !flip, eng, strm);
    one(48, 16, 16, 16, 16, flip, 0, eng, strm);
  }
  one(320, 64, 67, 16, 8, 0, 1, eng, strm); /* the RRDB's conv 5 at batch 4, hr 64 */
  one(64, 320, 67, 16, 8, 1, 0, eng, strm); /* and its backward-data pass */
  /* a wrong coefficient is caught: the bound is far below an error of order 1 */
  printf("worst error %.3g of the largest sum of |products| (transforms: %s)\n", worst,
         pit_nn_isa_name(pit_nn_isa() >= PIT_ISA_AVX2 ? PIT_ISA_AVX2 : PIT_ISA_PLAIN));
  dnnl_stream_destroy(strm);
  dnnl_engine_destroy(eng);
  return check_done();
}
