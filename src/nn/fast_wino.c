/* fast_wino.c — Winograd F(4x4, 3x3) for a 3x3, stride-1, pad-1 convolution of one
 * channel-blocked image (N = 1: the fast RRDB's stacked batch), for CPUs where oneDNN
 * has no Winograd kernel (below AVX-512: its AVX2 convolutions are direct only, issue 25).
 *
 *   y[k] = bias[k] + Σ_c x[c] ⋆ w'[k][c]        x: (C, H, W), y: (K, H, W), both in the
 *                                               blocked layout of blk lanes (nChw8c/16c)
 *   w'[k][c] = wt[k][c]                (flip 0: wt is (K, C, 3, 3), a forward pass)
 *   w'[k][c] = rot180(wt[c][k])        (flip 1: wt is (C, K, 3, 3), the backward-data
 *                                       pass of the convolution whose weights wt are)
 *   then LeakyReLU(slope) when act.
 *
 * Method (Lavin and Gray, "Fast Algorithms for Convolutional Neural Networks", 2016, with
 * the interpolation points 0, ±1, ±2): the output is cut into T = ⌈H/4⌉·⌈W/4⌉ tiles of
 * 4x4, each computed from the 6x6 input patch around it (zeros outside the image: the pad):
 *   V[e][t][c] = (Bᵀ d B)[e]        the patch's transform, e = one of the 36 (i, j)
 *                                   (stored tile-major, as M: see wino_build)
 *   U[e][c][k] = (G g Gᵀ)[e]        the filter's transform
 *   M[e]       = V[e] · U[e]        36 matrix products (T x C)·(C x K), one oneDNN matmul
 *   y tile     = Aᵀ M A             (+ bias, activation)
 * 36 products per 16 outputs instead of 144: 4x fewer multiplications than direct; the
 * input and output transforms are O(C) and O(K) per tile, the filter transform O(C·K) per
 * call (the weights change every step). Rounding: the transforms scale terms by up to ~10-100
 * before they cancel, so the result differs from a direct sum by ~10-100x float rounding
 * (tests/nn/test_fast_wino.c measures it against a double-precision direct sum).
 * The transforms are vectorised over the layout's lanes (8 at a time), compiled twice: for
 * AVX2+FMA and for the baseline, chosen once at create from pit_nn_isa(); both give the
 * same results up to FMA contraction.
 * Invariants: C and K multiples of blk; blk 8 or 16; every output element is written
 * (rows and columns beyond the last full tile are cut off, none left unset).
 * Scratch (V, U, M) belongs to the caller, sized by pit_fast_wino_floats, so that many
 * convolutions run one after the other share one.
 */
#include <stdlib.h>
#include <string.h>

#include "nn/fast_impl.h"

#define LN 8 /* lanes of one vector step */

struct pit_fast_wino {
  int C, K, H, W, blk, flip, th, tw, T;
  int avx2;
  dnnl_primitive_t mm;
  dnnl_memory_t mv, mu, mm_out;
};

#define INLINE static inline __attribute__((always_inline))

/* LN lanes as one value (GCC's vector extension: one ymm register in the AVX2 version, two
 * xmm in the baseline one); loads and stores through memcpy (no alignment assumed). */
typedef float v8 __attribute__((vector_size(LN * sizeof(float))));
typedef int i8 __attribute__((vector_size(LN * sizeof(int))));
/* v8 passed by value between always-inline functions only: no call ever uses the ABI GCC
 * warns about (an AVX vector returned without AVX in the baseline version) */
#pragma GCC diagnostic ignored "-Wpsabi"
INLINE v8 ld(const float *p) {
  v8 v;
  memcpy(&v, p, sizeof v);
  return v;
}
/* a macro, not a function taking a v8: GCC notes an ABI change for such a parameter */
#define st(p, v)                                                                                   \
  do {                                                                                             \
    const v8 v_ = (v);                                                                             \
    memcpy((p), &v_, sizeof v_);                                                                   \
  } while (0)

/* o = Bᵀ d for one column of six points. */
INLINE void bt(const v8 d[6], v8 o[6]) {
  o[0] = 4 * d[0] - 5 * d[2] + d[4];
  o[1] = -4 * d[1] - 4 * d[2] + d[3] + d[4];
  o[2] = 4 * d[1] - 4 * d[2] - d[3] + d[4];
  o[3] = -2 * d[1] - d[2] + 2 * d[3] + d[4];
  o[4] = 2 * d[1] - d[2] - 2 * d[3] + d[4];
  o[5] = 4 * d[1] - 5 * d[3] + d[5];
}

/* o = Aᵀ m for one column of six products. */
INLINE void at(const v8 m[6], v8 o[4]) {
  o[0] = m[0] + m[1] + m[2] + m[3] + m[4];
  o[1] = m[1] - m[2] + 2 * m[3] - 2 * m[4];
  o[2] = m[1] + m[2] + 4 * m[3] + 4 * m[4];
  o[3] = m[1] - m[2] + 8 * m[3] - 8 * m[4] + m[5];
}

/* o = G g for one column of three filter taps (the coefficients as products by constants). */
INLINE void gg(const v8 g[3], v8 o[6]) {
  const float q4 = 0.25f, q6 = 1.0f / 6, q12 = 1.0f / 12, q24 = 1.0f / 24;
  o[0] = q4 * g[0];
  o[1] = -q6 * (g[0] + g[1] + g[2]);
  o[2] = -q6 * (g[0] - g[1] + g[2]);
  o[3] = q24 * g[0] + q12 * g[1] + q6 * g[2];
  o[4] = q24 * g[0] - q12 * g[1] + q6 * g[2];
  o[5] = g[2];
}

/* The input transform of channel block cb, tile row ty: every tile of that row into V. */
INLINE void in_row(const struct pit_fast_wino *w, const float *x, int cb, int ty, float *V) {
  const int H = w->H, W = w->W, blk = w->blk;
  const int r0 = 4 * ty - 1, rows_in = r0 >= 0 && r0 + 6 <= H;
  for (int h = 0; h < blk; h += LN)
    for (int tx = 0; tx < w->tw; tx++) {
      const int q0 = 4 * tx - 1;
      const float *base = x + ((size_t)cb * H * W) * blk + h;
      v8 t[6][6]; /* t[i][j] = (Bᵀ d)[i][j] */
      for (int j = 0; j < 6; j++) {
        v8 d[6], o[6];
        const int q = q0 + j;
        if (rows_in && q >= 0 && q < W) {
          for (int i = 0; i < 6; i++)
            d[i] = ld(base + ((size_t)(r0 + i) * W + q) * blk);
        } else {
          for (int i = 0; i < 6; i++)
            d[i] = r0 + i >= 0 && r0 + i < H && q >= 0 && q < W ? ld(base + ((size_t)(r0 + i) * W + q) * blk)
                                                                : (v8){0};
        }
        bt(d, o);
        for (int i = 0; i < 6; i++)
          t[i][j] = o[i];
      }
      float *vt = V + ((size_t)ty * w->tw + tx) * 36 * w->C + (size_t)cb * blk + h;
      for (int i = 0; i < 6; i++) { /* v = t B: Bᵀ on each row of t */
        v8 o[6];
        bt(t[i], o);
        for (int j = 0; j < 6; j++)
          st(vt + (size_t)(i * 6 + j) * w->C, o[j]);
      }
    }
}

/* Aᵀ m A for each tile of row ty, channel block kb: 4x4 outputs, + bias, activation, stored. */
INLINE void out_row(const struct pit_fast_wino *w, const float *M, const float *bias, int act, float slope,
                    int kb, int ty, float *y) {
  const int H = w->H, W = w->W, blk = w->blk;
  for (int h = 0; h < blk; h += LN) {
    const size_t k0 = (size_t)kb * blk + h;
    const v8 b = bias ? ld(bias + k0) : (v8){0};
    for (int tx = 0; tx < w->tw; tx++) {
      const float *mt = M + ((size_t)ty * w->tw + tx) * 36 * w->K + k0;
      v8 t[4][6]; /* t = Aᵀ m, by column */
      for (int j = 0; j < 6; j++) {
        v8 m[6], o[4];
        for (int i = 0; i < 6; i++)
          m[i] = ld(mt + (size_t)(i * 6 + j) * w->K);
        at(m, o);
        for (int i = 0; i < 4; i++)
          t[i][j] = o[i];
      }
      for (int i = 0; i < 4 && 4 * ty + i < H; i++) { /* o = t A, by row */
        v8 o[4];
        at(t[i], o);
        for (int j = 0; j < 4 && 4 * tx + j < W; j++) {
          v8 v = o[j] + b;
          if (act) { /* lane-wise select: the mask is all ones where v > 0 */
            const i8 pos = v > 0;
            v = (v8)((pos & (i8)v) | (~pos & (i8)(slope * v)));
          }
          st(y + (((size_t)kb * H + 4 * ty + i) * W + 4 * tx + j) * blk + h, v);
        }
      }
    }
  }
}

/* G g Gᵀ of (c, k0 … k0+LN−1) of input channel c into U[e][c][k]. */
INLINE void filt_chan(const struct pit_fast_wino *w, const float *wt, int c, int k0, float *U) {
  const int C = w->C, K = w->K;
  float g[3][3][LN];
  for (int l = 0; l < LN; l++) {
    const float *p = w->flip ? wt + ((size_t)c * K + k0 + l) * 9 : wt + ((size_t)(k0 + l) * C + c) * 9;
    for (int a = 0; a < 3; a++)
      for (int b = 0; b < 3; b++)
        g[a][b][l] = w->flip ? p[(2 - a) * 3 + (2 - b)] : p[a * 3 + b];
  }
  v8 t[6][3]; /* t = G g, by column */
  for (int b = 0; b < 3; b++) {
    v8 col[3] = {ld(g[0][b]), ld(g[1][b]), ld(g[2][b])}, o[6];
    gg(col, o);
    for (int a = 0; a < 6; a++)
      t[a][b] = o[a];
  }
  for (int a = 0; a < 6; a++) { /* u = t Gᵀ, by row */
    v8 o[6];
    gg(t[a], o);
    for (int e = 0; e < 6; e++)
      st(U + ((size_t)(a * 6 + e) * C + c) * K + k0, o[e]);
  }
}

#define AVX2_T __attribute__((target("avx2,fma")))

/* The input and filter transforms in one parallel region (one wake-up and one barrier of the
 * threads for both), and the output transform. Macros, so that each compiled version (AVX2,
 * baseline) holds its own parallel region: GCC outlines a region where the pragma is written,
 * with that function's target, so a region inside a shared inline body would run the baseline
 * code in both (tests/nn/isa_binary.sh counts the vector instructions per function). */
#define IN_FILT(w, x, wt, V, U)                                                                    \
  _Pragma("omp parallel") {                                                                        \
    _Pragma("omp for collapse(2) schedule(static) nowait") for (int cb = 0; cb < (w)->C / (w)->blk; cb++) \
      for (int ty = 0; ty < (w)->th; ty++)                                                         \
        in_row(w, x, cb, ty, V);                                                                   \
    if ((w)->flip) { /* weights (C, K, 3, 3): c outer reads them in order */                    \
      _Pragma("omp for collapse(2) schedule(static)") for (int c = 0; c < (w)->C; c++)             \
        for (int k = 0; k < (w)->K; k += LN)                                                       \
          filt_chan(w, wt, c, k, U);                                                               \
    } else { /* weights (K, C, 3, 3): a chunk of LN filters outer, LN streams read in order */   \
      _Pragma("omp for collapse(2) schedule(static)") for (int k = 0; k < (w)->K; k += LN)         \
        for (int c = 0; c < (w)->C; c++)                                                           \
          filt_chan(w, wt, c, k, U);                                                               \
    }                                                                                              \
  }
#define OUT(w, M, bias, act, slope, y)                                                             \
  _Pragma("omp parallel for collapse(2) schedule(static)") for (int kb = 0; kb < (w)->K / (w)->blk; kb++) \
    for (int ty = 0; ty < (w)->th; ty++)                                                           \
      out_row(w, M, bias, act, slope, kb, ty, y);

static void in_filt(const struct pit_fast_wino *w, const float *x, const float *wt, float *V, float *U) {
  IN_FILT(w, x, wt, V, U)
}
static AVX2_T void in_filt_avx2(const struct pit_fast_wino *w, const float *x, const float *wt, float *V, float *U) {
  IN_FILT(w, x, wt, V, U)
}
static void out_all(const struct pit_fast_wino *w, const float *M, const float *bias, int act, float slope,
                    float *y) {
  OUT(w, M, bias, act, slope, y)
}
static AVX2_T void out_all_avx2(const struct pit_fast_wino *w, const float *M, const float *bias, int act,
                                float slope, float *y) {
  OUT(w, M, bias, act, slope, y)
}

size_t pit_fast_wino_floats(const struct pit_fast_wino *w, char which) {
  return which == 'V' ? (size_t)36 * w->T * w->C : which == 'U' ? (size_t)36 * w->C * w->K : (size_t)36 * w->T * w->K;
}

void pit_fast_wino_free(struct pit_fast_wino *w) {
  if (!w)
    return;
  if (w->mm)
    dnnl_primitive_destroy(w->mm);
  dnnl_memory_t ms[] = {w->mv, w->mu, w->mm_out};
  for (size_t k = 0; k < sizeof ms / sizeof ms[0]; k++)
    if (ms[k])
      dnnl_memory_destroy(ms[k]);
  free(w);
}

static int wino_build(struct pit_fast_wino *w, dnnl_engine_t eng, const char *where, struct pit_err *e) {
  dnnl_dims_t vd = {36, w->T, w->C}, ud = {36, w->C, w->K}, md = {36, w->T, w->K};
  dnnl_memory_desc_t vmd, umd, mmd;
  /* V and M tile-major ((T, 36, C) and (T, 36, K) in memory): a tile's 36 rows are written
   * and read together by the transforms, within a few KB */
  dnnl_dims_t vs = {w->C, 36 * (dnnl_dim_t)w->C, 1}, ms = {w->K, 36 * (dnnl_dim_t)w->K, 1};
  DN(dnnl_memory_desc_init_by_strides(&vmd, 3, vd, dnnl_f32, vs));
  DN(dnnl_memory_desc_init_by_tag(&umd, 3, ud, dnnl_f32, dnnl_abc));
  DN(dnnl_memory_desc_init_by_strides(&mmd, 3, md, dnnl_f32, ms));
  dnnl_matmul_desc_t d;
  DN(dnnl_matmul_desc_init(&d, &vmd, &umd, NULL, &mmd));
  dnnl_primitive_desc_t pd;
  DN(dnnl_primitive_desc_create(&pd, &d, NULL, eng, NULL));
  int rc = pit_fast_check_impl(pd, where, e);
  dnnl_status_t s = rc ? dnnl_success : dnnl_primitive_create(&w->mm, pd);
  dnnl_primitive_desc_destroy(pd);
  if (rc)
    return rc;
  DN(s);
  DN(dnnl_memory_create(&w->mv, &vmd, eng, DNNL_MEMORY_NONE));
  DN(dnnl_memory_create(&w->mu, &umd, eng, DNNL_MEMORY_NONE));
  DN(dnnl_memory_create(&w->mm_out, &mmd, eng, DNNL_MEMORY_NONE));
  return 0;
}

int pit_fast_wino_create(struct pit_fast_wino **out, int C, int K, int H, int W, int blk, int flip,
                         dnnl_engine_t eng, const char *where, struct pit_err *e) {
  *out = NULL;
  if ((blk != 8 && blk != 16) || C % blk || K % blk || H < 1 || W < 1)
    return pit_err_set(e, PIT_EARG, "%s: Winograd needs channels in blocks of 8 or 16 (C %d, K %d, block %d)",
                       where, C, K, blk);
  struct pit_fast_wino *w = calloc(1, sizeof *w);
  if (!w)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  *w = (struct pit_fast_wino){.C = C, .K = K, .H = H, .W = W, .blk = blk, .flip = flip, .th = (H + 3) / 4,
                              .tw = (W + 3) / 4};
  w->T = w->th * w->tw;
  w->avx2 = pit_nn_isa() >= PIT_ISA_AVX2;
  int rc = wino_build(w, eng, where, e);
  if (rc) {
    pit_fast_wino_free(w);
    return rc;
  }
  *out = w;
  return 0;
}

int pit_fast_wino_run(struct pit_fast_wino *w, const float *x, const float *wt, const float *bias, int act,
                      float slope, float *y, float *V, float *U, float *M, dnnl_stream_t strm,
                      struct pit_err *e) {
  if (w->avx2)
    in_filt_avx2(w, x, wt, V, U);
  else
    in_filt(w, x, wt, V, U);
  DN(dnnl_memory_set_data_handle(w->mv, V));
  DN(dnnl_memory_set_data_handle(w->mu, U));
  DN(dnnl_memory_set_data_handle(w->mm_out, M));
  dnnl_exec_arg_t a[3] = {{DNNL_ARG_SRC, w->mv}, {DNNL_ARG_WEIGHTS, w->mu}, {DNNL_ARG_DST, w->mm_out}};
  DN(dnnl_primitive_execute(w->mm, strm, 3, a));
  DN(dnnl_stream_wait(strm));
  if (w->avx2)
    out_all_avx2(w, M, bias, act, slope, y);
  else
    out_all(w, M, bias, act, slope, y);
  return 0;
}
