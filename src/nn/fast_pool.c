/* fast_pool.c — max pooling (optionally fused with the ReLU before it) directly
 * on oneDNN's channel-blocked layouts, for the FAST backend.
 * Layout: x[((n*cb + c)*h + i)*w + j)*blk + l], blk 16 (nChw16c), 8 (nChw8c) or 1
 * (plain NCHW, cb = C). Padded lanes of a block are zero in and stay zero out.
 * Semantics (PyTorch): each output takes the FIRST maximum of its window (NaN
 * wins); the gradient goes to that element only. With relu=1 the result is
 * max(0, window max) and an all-non-positive window passes no gradient, which is
 * exactly ReLU then MaxPool2d (ReLU's gradient at 0 is 0).
 * idx holds, per output element and lane, the window position (kh*k + kw) of the
 * maximum, or PIT_POOL_NONE. Windows have no padding; k*k <= 255. */
#include <math.h>
#include <string.h>
#ifdef __AVX512F__
#include <immintrin.h>
#endif

#include "nn/fast_impl.h"

#define PIT_POOL_NONE 255

static inline __attribute__((always_inline)) void fwd_plane(const struct pit_fast_pool *p,
                                                            const float *x, float *y,
                                                            uint8_t *idx, const int blk) {
  const int w = p->w, oh = p->oh, ow = p->ow, k = p->k, s = p->s;
  for (int oi = 0; oi < oh; oi++)
    for (int oj = 0; oj < ow; oj++) {
      float best[16];
      uint8_t bi[16];
      for (int l = 0; l < blk; l++) {
        best[l] = p->relu ? 0.0f : -INFINITY;
        bi[l] = p->relu ? PIT_POOL_NONE : 0;
      }
      for (int a = 0; a < k; a++)
        for (int b = 0; b < k; b++) {
          const float *v = x + ((size_t)(oi * s + a) * w + (oj * s + b)) * blk;
          const uint8_t q = (uint8_t)(a * k + b);
          for (int l = 0; l < blk; l++) {
            int take = v[l] > best[l] || v[l] != v[l];
            best[l] = take ? v[l] : best[l];
            bi[l] = take ? q : bi[l];
          }
        }
      float *yo = y + ((size_t)oi * ow + oj) * blk;
      uint8_t *io = idx + ((size_t)oi * ow + oj) * blk;
      for (int l = 0; l < blk; l++) {
        yo[l] = best[l];
        io[l] = bi[l];
      }
    }
}

#ifdef __AVX512F__
/* The same for 16-lane blocks, one zmm register per block. */
static void fwd_plane16(const struct pit_fast_pool *p, const float *x, float *y, uint8_t *idx) {
  const int w = p->w, oh = p->oh, ow = p->ow, k = p->k, s = p->s;
  const __m512 init = p->relu ? _mm512_setzero_ps() : _mm512_set1_ps(-INFINITY);
  const __m512i iinit = _mm512_set1_epi32(p->relu ? PIT_POOL_NONE : 0);
  for (int oi = 0; oi < oh; oi++)
    for (int oj = 0; oj < ow; oj++) {
      __m512 best = init;
      __m512i bi = iinit;
      for (int a = 0; a < k; a++)
        for (int b = 0; b < k; b++) {
          __m512 v = _mm512_loadu_ps(x + ((size_t)(oi * s + a) * w + (oj * s + b)) * 16);
          __mmask16 m = _mm512_cmp_ps_mask(v, best, _CMP_GT_OQ) | _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
          best = _mm512_mask_mov_ps(best, m, v);
          bi = _mm512_mask_mov_epi32(bi, m, _mm512_set1_epi32(a * k + b));
        }
      _mm512_storeu_ps(y + ((size_t)oi * ow + oj) * 16, best);
      _mm_storeu_si128((__m128i *)(idx + ((size_t)oi * ow + oj) * 16), _mm512_cvtepi32_epi8(bi));
    }
}

static void bwd_plane16(const struct pit_fast_pool *p, const float *dy, const uint8_t *idx, float *dx) {
  const int h = p->h, w = p->w, oh = p->oh, ow = p->ow, k = p->k, s = p->s;
  const int tiled = s == k;
  if (!tiled)
    memset(dx, 0, (size_t)h * w * 16 * sizeof(float));
  for (int oi = 0; oi < oh; oi++)
    for (int oj = 0; oj < ow; oj++) {
      const __m512 g = _mm512_loadu_ps(dy + ((size_t)oi * ow + oj) * 16);
      const __m512i iv =
          _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(idx + ((size_t)oi * ow + oj) * 16)));
      for (int a = 0; a < k; a++)
        for (int b = 0; b < k; b++) {
          float *d = dx + ((size_t)(oi * s + a) * w + (oj * s + b)) * 16;
          __mmask16 m = _mm512_cmpeq_epi32_mask(iv, _mm512_set1_epi32(a * k + b));
          if (tiled)
            _mm512_storeu_ps(d, _mm512_maskz_mov_ps(m, g));
          else
            _mm512_storeu_ps(d, _mm512_add_ps(_mm512_loadu_ps(d), _mm512_maskz_mov_ps(m, g)));
        }
    }
  if (tiled)
    for (int i = 0; i < h; i++)
      for (int j = i < oh * s ? ow * s : 0; j < w; j++)
        memset(dx + ((size_t)i * w + j) * 16, 0, 16 * sizeof(float));
}
#define FWD16(p, x, y, i) fwd_plane16(p, x, y, i)
#define BWD16(p, g, i, d) bwd_plane16(p, g, i, d)
#else
#define FWD16(p, x, y, i) fwd_plane(p, x, y, i, 16)
#define BWD16(p, g, i, d) bwd_plane(p, g, i, d, 16)
#endif

static inline __attribute__((always_inline)) void bwd_plane(const struct pit_fast_pool *p,
                                                            const float *dy, const uint8_t *idx,
                                                            float *dx, const int blk) {
  const int h = p->h, w = p->w, oh = p->oh, ow = p->ow, k = p->k, s = p->s;
  const int tiled = s == k;
  if (!tiled)
    memset(dx, 0, (size_t)h * w * blk * sizeof(float));
  for (int oi = 0; oi < oh; oi++)
    for (int oj = 0; oj < ow; oj++) {
      const float *g = dy + ((size_t)oi * ow + oj) * blk;
      const uint8_t *io = idx + ((size_t)oi * ow + oj) * blk;
      for (int a = 0; a < k; a++)
        for (int b = 0; b < k; b++) {
          float *d = dx + ((size_t)(oi * s + a) * w + (oj * s + b)) * blk;
          const uint8_t q = (uint8_t)(a * k + b);
          if (tiled)
            for (int l = 0; l < blk; l++)
              d[l] = io[l] == q ? g[l] : 0.0f;
          else
            for (int l = 0; l < blk; l++)
              d[l] += io[l] == q ? g[l] : 0.0f;
        }
    }
  if (tiled) { /* rows and columns no window covers */
    for (int i = 0; i < h; i++)
      for (int j = i < oh * s ? ow * s : 0; j < w; j++)
        memset(dx + ((size_t)i * w + j) * blk, 0, blk * sizeof(float));
  }
}

void pit_fast_pool_fwd(const struct pit_fast_pool *p, const float *x, float *y, uint8_t *idx) {
  const size_t in_plane = (size_t)p->h * p->w * p->blk, out_plane = (size_t)p->oh * p->ow * p->blk;
  const int planes = p->n * p->cb;
#pragma omp parallel for schedule(static)
  for (int pl = 0; pl < planes; pl++) {
    const float *xp = x + pl * in_plane;
    float *yp = y + pl * out_plane;
    uint8_t *ip = idx + pl * out_plane;
    if (p->blk == 16)
      FWD16(p, xp, yp, ip);
    else if (p->blk == 8)
      fwd_plane(p, xp, yp, ip, 8);
    else
      fwd_plane(p, xp, yp, ip, 1);
  }
}

void pit_fast_pool_bwd(const struct pit_fast_pool *p, const float *dy, const uint8_t *idx, float *dx) {
  const size_t in_plane = (size_t)p->h * p->w * p->blk, out_plane = (size_t)p->oh * p->ow * p->blk;
  const int planes = p->n * p->cb;
#pragma omp parallel for schedule(static)
  for (int pl = 0; pl < planes; pl++) {
    const float *gp = dy + pl * out_plane;
    const uint8_t *ip = idx + pl * out_plane;
    float *dp = dx + pl * in_plane;
    if (p->blk == 16)
      BWD16(p, gp, ip, dp);
    else if (p->blk == 8)
      bwd_plane(p, gp, ip, dp, 8);
    else
      bwd_plane(p, gp, ip, dp, 1);
  }
}
