/* fast_shuffle.c — PixelShuffle(r) on oneDNN's channel-blocked layouts for the FAST
 * backend: y[n, c, h*r+i, w*r+j] = x[n, c*r*r + i*r + j, h, w] (ref_shuffle.c), with
 * element (n, c, h, w) of a C-channel tensor at ((n*(C/blk) + c/blk)*H + h)*W + w)*blk
 * + c%blk, blk 16 (nChw16c), 8 (nChw8c) or 1 (plain NCHW). Both channel counts are
 * multiples of blk (no padded lanes). Backward is the same permutation read the other
 * way. */
#include "nn/fast_impl.h"

static size_t at(int C, int H, int W, int blk, int n, int c, int h, int w) {
  return ((((size_t)n * (C / blk) + c / blk) * H + h) * W + w) * blk + c % blk;
}

static void shuffle(const struct pit_fast_shuffle *p, float *x, float *y, int back) {
  const int r = p->r, C = p->c, H = p->h, W = p->w, blk = p->blk;
  const int Cin = C * r * r;
#pragma omp parallel for collapse(2)
  for (int n = 0; n < p->n; n++)
    for (int c = 0; c < C; c++)
      for (int i = 0; i < r; i++)
        for (int j = 0; j < r; j++)
          for (int h = 0; h < H; h++)
            for (int w = 0; w < W; w++) {
              size_t in = at(Cin, H, W, blk, n, c * r * r + i * r + j, h, w);
              size_t out = at(C, H * r, W * r, blk, n, c, h * r + i, w * r + j);
              if (back)
                x[in] = y[out];
              else
                y[out] = x[in];
            }
}

void pit_fast_shuffle_fwd(const struct pit_fast_shuffle *p, const float *x, float *y) {
  shuffle(p, (float *)x, y, 0); /* x only read */
}

void pit_fast_shuffle_bwd(const struct pit_fast_shuffle *p, const float *dy, float *dx) {
  shuffle(p, dx, (float *)dy, 1); /* dy only read */
}
