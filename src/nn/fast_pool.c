/* fast_pool.c — max pooling (optionally fused with the ReLU before it) directly
 * on oneDNN's channel-blocked layouts, for the FAST backend.
 * Layout: x[((n*cb + c)*h + i)*w + j)*blk + l], blk 16 (nChw16c), 8 (nChw8c) or 1
 * (plain NCHW, cb = C). Padded lanes of a block are zero in and stay zero out.
 * Semantics (PyTorch): each output takes the FIRST maximum of its window (NaN
 * wins); the gradient goes to that element only. With relu=1 the result is
 * max(0, window max) and an all-non-positive window passes no gradient, which is
 * exactly ReLU then MaxPool2d (ReLU's gradient at 0 is 0).
 * idx holds, per output element and lane, the window position (kh*k + kw) of the
 * maximum, or PIT_POOL_NONE. Windows have no padding; k*k <= 255.
 * Versions: plain C (any blk), AVX2 (blk 8 and 16, 8 lanes a register) and AVX-512
 * (blk 16, one zmm), each compiled for its instruction set with a target attribute
 * while the file targets the x86-64 baseline; p->isa (pit_nn_isa(), isa.c) picks one
 * at run time. All do the same comparisons and selections lane by lane in the same
 * order, so they agree bit for bit, NaN payloads included (test_nn_fast_pool). */
#include <immintrin.h>
#include <math.h>
#include <string.h>

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

#define AVX2_T __attribute__((target("avx2,fma")))
#define AVX512_T __attribute__((target("avx512f")))

/* AVX2: blk (8 or 16) lanes as blk/8 registers of 8. */
static AVX2_T void fwd_plane_avx2(const struct pit_fast_pool *p, const float *x, float *y, uint8_t *idx) {
  const int blk = p->blk, w = p->w, oh = p->oh, ow = p->ow, k = p->k, s = p->s;
  const __m256 init = p->relu ? _mm256_setzero_ps() : _mm256_set1_ps(-INFINITY);
  const __m256i iinit = _mm256_set1_epi32(p->relu ? PIT_POOL_NONE : 0);
  for (int oi = 0; oi < oh; oi++)
    for (int oj = 0; oj < ow; oj++)
      for (int h = 0; h < blk; h += 8) {
        __m256 best = init;
        __m256i bi = iinit;
        for (int a = 0; a < k; a++)
          for (int b = 0; b < k; b++) {
            __m256 v = _mm256_loadu_ps(x + ((size_t)(oi * s + a) * w + (oj * s + b)) * blk + h);
            __m256 m = _mm256_or_ps(_mm256_cmp_ps(v, best, _CMP_GT_OQ), _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
            best = _mm256_blendv_ps(best, v, m);
            bi = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(bi),
                                                      _mm256_castsi256_ps(_mm256_set1_epi32(a * k + b)), m));
          }
        const size_t o = ((size_t)oi * ow + oj) * blk + h;
        _mm256_storeu_ps(y + o, best);
        /* 8 indices (0..255) as 8 bytes */
        __m128i w16 = _mm_packus_epi32(_mm256_castsi256_si128(bi), _mm256_extracti128_si256(bi, 1));
        _mm_storel_epi64((__m128i *)(idx + o), _mm_packus_epi16(w16, w16));
      }
}

static AVX2_T void bwd_plane_avx2(const struct pit_fast_pool *p, const float *dy, const uint8_t *idx,
                                  float *dx) {
  const int blk = p->blk, h = p->h, w = p->w, oh = p->oh, ow = p->ow, k = p->k, s = p->s;
  const int tiled = s == k;
  if (!tiled)
    memset(dx, 0, (size_t)h * w * blk * sizeof(float));
  for (int oi = 0; oi < oh; oi++)
    for (int oj = 0; oj < ow; oj++)
      for (int l = 0; l < blk; l += 8) {
        const size_t o = ((size_t)oi * ow + oj) * blk + l;
        const __m256 g = _mm256_loadu_ps(dy + o);
        const __m256i iv = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(idx + o)));
        for (int a = 0; a < k; a++)
          for (int b = 0; b < k; b++) {
            float *d = dx + ((size_t)(oi * s + a) * w + (oj * s + b)) * blk + l;
            __m256 m = _mm256_castsi256_ps(_mm256_cmpeq_epi32(iv, _mm256_set1_epi32(a * k + b)));
            __m256 gm = _mm256_and_ps(g, m); /* +0.0 where not taken, as the plain version */
            if (tiled)
              _mm256_storeu_ps(d, gm);
            else
              _mm256_storeu_ps(d, _mm256_add_ps(_mm256_loadu_ps(d), gm));
          }
      }
  if (tiled)
    for (int i = 0; i < h; i++)
      for (int j = i < oh * s ? ow * s : 0; j < w; j++)
        memset(dx + ((size_t)i * w + j) * blk, 0, blk * sizeof(float));
}

/* AVX-512: 16-lane blocks, one zmm register per block. */
static AVX512_T void fwd_plane16(const struct pit_fast_pool *p, const float *x, float *y, uint8_t *idx) {
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

static AVX512_T void bwd_plane16(const struct pit_fast_pool *p, const float *dy, const uint8_t *idx,
                                 float *dx) {
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

/* The kernels of one version, each over one plane (one channel block of one sample). */
struct pool_kernels {
  void (*fwd)(const struct pit_fast_pool *p, const float *x, float *y, uint8_t *idx);
  void (*bwd)(const struct pit_fast_pool *p, const float *dy, const uint8_t *idx, float *dx);
};

/* The plain versions with a constant blk, so that the compiler unrolls the lanes. */
static void fwd_c16(const struct pit_fast_pool *p, const float *x, float *y, uint8_t *idx) {
  fwd_plane(p, x, y, idx, 16);
}
static void fwd_c8(const struct pit_fast_pool *p, const float *x, float *y, uint8_t *idx) {
  fwd_plane(p, x, y, idx, 8);
}
static void fwd_c1(const struct pit_fast_pool *p, const float *x, float *y, uint8_t *idx) {
  fwd_plane(p, x, y, idx, 1);
}
static void bwd_c16(const struct pit_fast_pool *p, const float *dy, const uint8_t *idx, float *dx) {
  bwd_plane(p, dy, idx, dx, 16);
}
static void bwd_c8(const struct pit_fast_pool *p, const float *dy, const uint8_t *idx, float *dx) {
  bwd_plane(p, dy, idx, dx, 8);
}
static void bwd_c1(const struct pit_fast_pool *p, const float *dy, const uint8_t *idx, float *dx) {
  bwd_plane(p, dy, idx, dx, 1);
}

static const struct pool_kernels plain16 = {fwd_c16, bwd_c16}, plain8 = {fwd_c8, bwd_c8},
                                 plain1 = {fwd_c1, bwd_c1}, avx2 = {fwd_plane_avx2, bwd_plane_avx2},
                                 avx512 = {fwd_plane16, bwd_plane16};

/* The version p->isa picks for p's block: AVX-512 (blk 16), AVX2 (blk 8 or 16) or plain C. */
static const struct pool_kernels *kernels(const struct pit_fast_pool *p) {
  if (p->blk == 16 && p->isa == PIT_ISA_AVX512)
    return &avx512;
  if ((p->blk == 16 || p->blk == 8) && p->isa >= PIT_ISA_AVX2)
    return &avx2;
  return p->blk == 16 ? &plain16 : p->blk == 8 ? &plain8 : &plain1;
}

void pit_fast_pool_fwd(const struct pit_fast_pool *p, const float *x, float *y, uint8_t *idx) {
  const size_t in_plane = (size_t)p->h * p->w * p->blk, out_plane = (size_t)p->oh * p->ow * p->blk;
  const int planes = p->n * p->cb;
  const struct pool_kernels *k = kernels(p); /* chosen once, for every plane */
#pragma omp parallel for schedule(static)
  for (int pl = 0; pl < planes; pl++)
    k->fwd(p, x + pl * in_plane, y + pl * out_plane, idx + pl * out_plane);
}

void pit_fast_pool_bwd(const struct pit_fast_pool *p, const float *dy, const uint8_t *idx, float *dx) {
  const size_t in_plane = (size_t)p->h * p->w * p->blk, out_plane = (size_t)p->oh * p->ow * p->blk;
  const int planes = p->n * p->cb;
  const struct pool_kernels *k = kernels(p);
#pragma omp parallel for schedule(static)
  for (int pl = 0; pl < planes; pl++)
    k->bwd(p, dy + pl * out_plane, idx + pl * out_plane, dx + pl * in_plane);
}
