/* fast_rrdb.c — the FAST backend's ESRGAN residual-in-residual dense block
 * (PIT_L_RRDB, definition in ref_rrdb.c and nn/rrdb.h) on oneDNN convolutions.
 *
 * Layout: the batch is stacked into ONE image of height Hs = B·(H+1) − 1, samples one
 * above the other with a zero row between them, in a channel-blocked layout of blk
 * lanes: nChw16c, nChw8c or plain nchw (blk 1). blk is oneDNN's choice for this CPU,
 * found by trying 16, then 8, then 1 (F a multiple of it) and taking the first for which
 * every convolution of a dense block gets a kernel other than oneDNN's reference one
 * in all three passes and keeps that layout: 16 at AVX-512, 8 at AVX2 (its kernels
 * block by 8; at 16 it has only the reference kernel, ~1000x slower: issue 25), 1
 * where blocked layouts have no backward kernel (SSE4.1: gemm convolutions).
 * A 3x3 convolution (pad 1) of the stacked image computes every
 * sample's rows exactly as on its own — the zero rows stand for the padding — and its
 * output rows at the separators are zeroed afterwards. With N = 1 the first j·F
 * channels of a (5F, Hs, W) buffer of any of those layouts are one contiguous prefix, so each dense
 * block keeps ONE such buffer: conv j reads its first j·F channels in place and writes
 * its F output channels straight after them (the concatenation costs nothing), with the
 * LeakyReLU fused as a post-op (direct convolutions) or applied in place right after
 * (Winograd, chosen from WINO_MIN_PLANE stacked pixels: it takes no leaky post-op). conv_5 writes a separate buffer, from which the block
 * output s·o5 + x goes into the first F channels of the next block's buffer.
 * Backward keeps one (5F, Hs, W) gradient buffer per dense block in turn: conv j's
 * backward-data result (its separator rows zeroed) is added into the buffer's first j·F
 * channels; the LeakyReLU backward runs in place on o_j's gradient using the saved
 * output's sign; backward-weights reads the saved buffer's prefix and the gradient slice.
 * Weights: reordered from the plain parameters into the forward (and backward-data)
 * layout right before each convolution, into scratch shared by every conv: the
 * optimizer changes them every iteration anyway, and 345 kept copies of ESRGAN's 38.5M
 * weights (forward, backward-data, gradient, plain gradient) would cost 616 MB. Weight
 * gradients are reordered to plain and added into the gradient array in one reorder
 * (a sum post-op).
 * Scratch (everything but the saved concatenations) is shared by all the RRDBs of one
 * plan: they run one after the other.
 * The element-wise glue (stacking, separators, residual sums, LeakyReLU backward) is
 * plain C over contiguous float arrays, parallelised and vectorised with OpenMP
 * (`parallel for simd`: -O2 alone left the LeakyReLU loops scalar with a branch on the
 * sign, 5% of a two-thread hr-64 b4 iteration's samples in perf).
 * Ownership: the object owns its primitives, memories and buffers; params/grads
 * belong to the network.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <oneapi/dnnl/dnnl.h>

#include "nn/fast_impl.h"
#include "nn/rrdb.h"

#define D5 PIT_RRDB_CONVS
#define ND PIT_RRDB_DENSE
/* stacked planes (Hs·W) from which the convolutions use Winograd F(4x4, 3x3): measured on
 * one thread (avx512_core, 64 filters) slower than direct at 16x16 (0.70 against 0.47 ms
 * forward, ic 320), 1.3-2x faster from 32x32 and 67x16 (batch 4 of 16x16) up */
#define WINO_MIN_PLANE 512

struct rconv {
  dnnl_primitive_t fwd, bwd_d, bwd_w, re_wf, re_wb, re_dw;
  dnnl_memory_t w_user, w_f, w_b, b_user, dw, dw_plain, db;
  dnnl_memory_t src, dst, ddst, dsrc; /* bound to the buffers at execution */
  size_t w_off, b_off, w_len;
  int act_after; /* LeakyReLU not fused (Winograd): applied after the forward */
  /* pitstop's own Winograd (fast_wino.c) for the forward and backward-data passes where
   * oneDNN has none for this CPU (NULL: oneDNN's fwd and bwd_d run) */
  struct pit_fast_wino *wf, *wb;
};

/* Scratch of one RRDB, or shared by several of the same shape (the first owns it). */
struct rscratch {
  float *o5;      /* (F, Hs, W) conv_5 output, then the RRDB output before unstacking */
  float *xs;      /* (F, Hs, W) stacked input */
  float *gcat, *tmp, *go, *gd, *gys; /* backward: (5F), (5F), (F), (F), (F) stacked */
  float *wf, *wb, *dw;               /* one conv's weights: forward, backward-data layout,
                                        gradient in oneDNN's layout */
  float *wv, *wu, *wm;               /* own Winograd's transforms and products (fast_wino.c) */
};

struct pit_fast_rrdb {
  int B, F, H, W, Hs;
  int blk; /* channel block of the stacked buffers: 16, 8 or 1 */
  char where[96]; /* the layer, for pit_fast_check_impl's messages */
  float slope, scale;
  dnnl_engine_t eng;
  dnnl_stream_t strm;
  float *params, *grads;
  struct rconv c[ND][D5];
  float *cat[ND]; /* (5F, Hs, W) each: the dense blocks' concatenations, kept for backward */
  struct rscratch own, *sc; /* sc: own, or another RRDB's */
  size_t wmax;              /* floats of the largest weight layout among the convs */
  size_t wino[3];           /* floats of the largest own-Winograd V, U, M among the convs */
  dnnl_primitive_desc_t keep_pd[ND * D5 * 3];
  int npd;
};

static size_t plane(const struct pit_fast_rrdb *r) { return (size_t)r->Hs * r->W; }

static dnnl_format_tag_t blk_tag(int blk) {
  return blk == 16 ? dnnl_nChw16c : blk == 8 ? dnnl_nChw8c : dnnl_nchw;
}

static float *buf(size_t floats) {
  float *p = aligned_alloc(64, (floats * sizeof(float) + 63) / 64 * 64);
  if (p)
    memset(p, 0, floats * sizeof(float));
  return p;
}

static const dnnl_memory_desc_t *qmd(const_dnnl_primitive_desc_t pd, int a) {
  return dnnl_primitive_desc_query_md(pd, dnnl_query_exec_arg_md, a);
}

/* A reorder from → to; accumulate = 1 ADDS into the destination (a sum post-op). */
static int reorder(struct pit_fast_rrdb *r, const dnnl_memory_desc_t *from, const dnnl_memory_desc_t *to,
                   int accumulate, dnnl_primitive_t *out, struct pit_err *e) {
  dnnl_primitive_desc_t pd;
  dnnl_primitive_attr_t attr = NULL;
  dnnl_post_ops_t po = NULL;
  if (accumulate) {
    DN(dnnl_post_ops_create(&po));
    DN(dnnl_post_ops_append_sum(po, 1.0f));
    DN(dnnl_primitive_attr_create(&attr));
    DN(dnnl_primitive_attr_set_post_ops(attr, po));
  }
  dnnl_status_t s = dnnl_reorder_primitive_desc_create(&pd, from, r->eng, to, r->eng, attr);
  if (po)
    dnnl_post_ops_destroy(po);
  if (attr)
    dnnl_primitive_attr_destroy(attr);
  DN(s);
  int rc = pit_fast_check_impl(pd, r->where, e);
  if (rc) {
    dnnl_primitive_desc_destroy(pd);
    return rc;
  }
  s = dnnl_primitive_create(out, pd);
  dnnl_primitive_desc_destroy(pd);
  DN(s);
  return 0;
}

/* The forward, backward-data and backward-weights descriptors of a dense block's conv j
 * (1-based) on a (1, jF, Hs, W) image of channel block blk: Winograd where it pays and
 * the CPU has it, else (or if any of the three is missing) direct. *act_after: the
 * LeakyReLU is not fused (Winograd). */
static dnnl_status_t conv_pds(const struct pit_fast_rrdb *r, int j, int blk, dnnl_primitive_desc_t pds[3],
                              int *act_after) {
  const int F = r->F, C = j * F;
  dnnl_dims_t sd = {1, C, r->Hs, r->W}, dd = {1, F, r->Hs, r->W}, wd = {F, C, 3, 3}, bd = {F};
  dnnl_dims_t st = {1, 1}, pad = {1, 1};
  dnnl_memory_desc_t smd, dmd, wany, bmd;
  dnnl_status_t s;
  pds[0] = pds[1] = pds[2] = NULL;
  if ((s = dnnl_memory_desc_init_by_tag(&smd, 4, sd, dnnl_f32, blk_tag(blk))) != dnnl_success ||
      (s = dnnl_memory_desc_init_by_tag(&dmd, 4, dd, dnnl_f32, blk_tag(blk))) != dnnl_success ||
      (s = dnnl_memory_desc_init_by_tag(&wany, 4, wd, dnnl_f32, dnnl_format_tag_any)) != dnnl_success ||
      (s = dnnl_memory_desc_init_by_tag(&bmd, 1, bd, dnnl_f32, dnnl_x)) != dnnl_success)
    return s;
  /* forward, LeakyReLU fused for j < 5 (direct; Winograd takes no leaky slope: after it) */
  dnnl_primitive_attr_t attr = NULL;
  dnnl_post_ops_t po = NULL;
  if (j < D5 && ((s = dnnl_post_ops_create(&po)) != dnnl_success ||
                 (s = dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_relu, r->slope, 0.0f)) != dnnl_success ||
                 (s = dnnl_primitive_attr_create(&attr)) != dnnl_success ||
                 (s = dnnl_primitive_attr_set_post_ops(attr, po)) != dnnl_success)) {
    if (po)
      dnnl_post_ops_destroy(po);
    if (attr)
      dnnl_primitive_attr_destroy(attr);
    return s;
  }
  dnnl_alg_kind_t algs[2] = {dnnl_convolution_winograd, dnnl_convolution_direct};
  for (int k = plane(r) >= WINO_MIN_PLANE ? 0 : 1; k < 2; k++) {
    dnnl_convolution_desc_t cd;
    *act_after = k == 0 && j < D5;
    s = dnnl_convolution_forward_desc_init(&cd, dnnl_forward_training, algs[k], &smd, &wany, &bmd, &dmd, st,
                                           pad, pad);
    if (s == dnnl_success)
      s = dnnl_primitive_desc_create(&pds[0], &cd, *act_after ? NULL : attr, r->eng, NULL);
    if (s == dnnl_success)
      s = dnnl_convolution_backward_data_desc_init(&cd, algs[k], &smd, &wany, &dmd, st, pad, pad);
    if (s == dnnl_success)
      s = dnnl_primitive_desc_create(&pds[1], &cd, NULL, r->eng, pds[0]);
    if (s == dnnl_success)
      s = dnnl_convolution_backward_weights_desc_init(&cd, algs[k], &smd, &wany, &bmd, &dmd, st, pad, pad);
    if (s == dnnl_success)
      s = dnnl_primitive_desc_create(&pds[2], &cd, NULL, r->eng, pds[0]);
    if (s == dnnl_success)
      break;
    for (int q = 0; q < 3; q++)
      if (pds[q])
        dnnl_primitive_desc_destroy(pds[q]);
    pds[0] = pds[1] = pds[2] = NULL;
  }
  if (po)
    dnnl_post_ops_destroy(po);
  if (attr)
    dnnl_primitive_attr_destroy(attr);
  if (s == dnnl_success && (!dnnl_memory_desc_equal(qmd(pds[0], DNNL_ARG_SRC), &smd) ||
                            !dnnl_memory_desc_equal(qmd(pds[2], DNNL_ARG_SRC), &smd) ||
                            !dnnl_memory_desc_equal(qmd(pds[2], DNNL_ARG_DIFF_DST), &dmd) ||
                            !dnnl_memory_desc_equal(qmd(pds[1], DNNL_ARG_DIFF_SRC), &smd))) {
    for (int q = 0; q < 3; q++)
      dnnl_primitive_desc_destroy(pds[q]);
    pds[0] = pds[1] = pds[2] = NULL;
    s = dnnl_unimplemented; /* oneDNN wants another layout for this block */
  }
  return s;
}

static int is_ref(const_dnnl_primitive_desc_t pd) {
  const char *name = NULL;
  return dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &name) == dnnl_success && name &&
         strncmp(name, "ref", 3) == 0;
}

/* The channel block for r (see the top of the file): the first of 16, 8, 1 that F is a
 * multiple of and for which every conv of a dense block has non-reference kernels in
 * the layout; 1 if none does (the reference kernels are then reported by conv_build). */
static int choose_blk(const struct pit_fast_rrdb *r) {
  static const int cand[] = {16, 8};
  for (size_t k = 0; k < sizeof cand / sizeof cand[0]; k++) {
    if (r->F % cand[k] != 0)
      continue;
    int ok = 1;
    for (int j = 1; j <= D5 && ok; j++) {
      dnnl_primitive_desc_t pds[3];
      int act;
      ok = conv_pds(r, j, cand[k], pds, &act) == dnnl_success;
      for (int q = 0; q < 3 && ok; q++)
        ok = !is_ref(pds[q]);
      for (int q = 0; q < 3; q++)
        if (pds[q])
          dnnl_primitive_desc_destroy(pds[q]);
    }
    if (ok)
      return cand[k];
  }
  return 1;
}

/* Whether a conv runs its forward and backward-data passes on pitstop's own Winograd:
 * oneDNN chose direct (it has no Winograd kernel below AVX-512) on a plane where Winograd
 * pays, in a blocked layout. Measured: bench/esrgan-ab, docs/train.md. */
static int own_wino(const struct pit_fast_rrdb *r, const_dnnl_primitive_desc_t fpd) {
  const char *name = NULL;
  if (r->blk < 8 || plane(r) < WINO_MIN_PLANE)
    return 0;
  if (dnnl_primitive_desc_query(fpd, dnnl_query_impl_info_str, 0, &name) != dnnl_success)
    name = NULL;
  return !(name && strstr(name, "wino"));
}

/* Primitives and memories of dense block d, conv j (1-based), on a (1, C, Hs, W) image. */
static int conv_build(struct pit_fast_rrdb *r, const struct pit_layer_spec *L, int d, int j,
                      struct pit_err *e) {
  struct rconv *c = &r->c[d][j - 1];
  struct pit_layer_spec cs = pit_rrdb_conv(L, d, j);
  c->w_off = cs.w_off;
  c->b_off = cs.b_off;
  c->w_len = cs.w_len;
  const int F = r->F, C = j * F;
  dnnl_dims_t sd = {1, C, r->Hs, r->W}, dd = {1, F, r->Hs, r->W}, wd = {F, C, 3, 3}, bd = {F};
  dnnl_memory_desc_t smd, dmd, wplain, bmd;
  DN(dnnl_memory_desc_init_by_tag(&smd, 4, sd, dnnl_f32, blk_tag(r->blk)));
  DN(dnnl_memory_desc_init_by_tag(&dmd, 4, dd, dnnl_f32, blk_tag(r->blk)));
  DN(dnnl_memory_desc_init_by_tag(&wplain, 4, wd, dnnl_f32, dnnl_oihw));
  DN(dnnl_memory_desc_init_by_tag(&bmd, 1, bd, dnnl_f32, dnnl_x));
  dnnl_primitive_desc_t pds[3];
  DN(conv_pds(r, j, r->blk, pds, &c->act_after));
  dnnl_primitive_desc_t fpd = pds[0], dpd = pds[1], wpd = pds[2];
  r->keep_pd[r->npd++] = fpd;
  r->keep_pd[r->npd++] = dpd;
  r->keep_pd[r->npd++] = wpd;
  char where[160];
  snprintf(where, sizeof where, "%s, dense block %d conv %d", r->where, d + 1, j);
  for (int q = 0; q < 3; q++) {
    int rc = pit_fast_check_impl(pds[q], where, e);
    if (rc)
      return rc;
  }
  DN(dnnl_primitive_create(&c->bwd_w, wpd));
  if (!own_wino(r, fpd)) { /* oneDNN's forward and backward-data: only where they run */
    DN(dnnl_primitive_create(&c->fwd, fpd));
    DN(dnnl_primitive_create(&c->bwd_d, dpd));
  } else {
    int rc = pit_fast_wino_create(&c->wf, C, F, r->Hs, r->W, r->blk, 0, r->eng, where, e);
    if (!rc)
      rc = pit_fast_wino_create(&c->wb, F, C, r->Hs, r->W, r->blk, 1, r->eng, where, e);
    if (rc)
      return rc;
    for (int k = 0; k < 3; k++) {
      size_t a = pit_fast_wino_floats(c->wf, "VUM"[k]), b = pit_fast_wino_floats(c->wb, "VUM"[k]);
      if ((a > b ? a : b) > r->wino[k])
        r->wino[k] = a > b ? a : b;
    }
  }
  DN(dnnl_memory_create(&c->w_user, &wplain, r->eng, r->params + c->w_off));
  DN(dnnl_memory_create(&c->b_user, &bmd, r->eng, r->params + c->b_off));
  const dnnl_memory_desc_t *wmds[] = {qmd(fpd, DNNL_ARG_WEIGHTS), qmd(dpd, DNNL_ARG_WEIGHTS),
                                      qmd(wpd, DNNL_ARG_DIFF_WEIGHTS), &wplain};
  for (int k = 0; k < 4; k++) {
    size_t n = dnnl_memory_desc_get_size(wmds[k]) / sizeof(float);
    if (n > r->wmax)
      r->wmax = n;
  }
  DN(dnnl_memory_create(&c->w_f, wmds[0], r->eng, DNNL_MEMORY_NONE)); /* bound to scratch */
  DN(dnnl_memory_create(&c->w_b, wmds[1], r->eng, DNNL_MEMORY_NONE));
  DN(dnnl_memory_create(&c->dw, wmds[2], r->eng, DNNL_MEMORY_NONE));
  DN(dnnl_memory_create(&c->dw_plain, &wplain, r->eng, DNNL_MEMORY_NONE));
  DN(dnnl_memory_create(&c->db, &bmd, r->eng, DNNL_MEMORY_ALLOCATE));
  DN(dnnl_memory_create(&c->src, &smd, r->eng, DNNL_MEMORY_NONE));
  DN(dnnl_memory_create(&c->dst, &dmd, r->eng, DNNL_MEMORY_NONE));
  DN(dnnl_memory_create(&c->ddst, &dmd, r->eng, DNNL_MEMORY_NONE));
  DN(dnnl_memory_create(&c->dsrc, &smd, r->eng, DNNL_MEMORY_NONE));
  int rc;
  if ((!c->wf && (rc = reorder(r, &wplain, qmd(fpd, DNNL_ARG_WEIGHTS), 0, &c->re_wf, e))) ||
      (!c->wb && (rc = reorder(r, &wplain, qmd(dpd, DNNL_ARG_WEIGHTS), 0, &c->re_wb, e))) ||
      (rc = reorder(r, qmd(wpd, DNNL_ARG_DIFF_WEIGHTS), &wplain, 1, &c->re_dw, e))) /* into grads */
    return rc;
  return 0;
}

void pit_fast_rrdb_free(struct pit_fast_rrdb *r) {
  if (!r)
    return;
  for (int d = 0; d < ND; d++) {
    for (int j = 0; j < D5; j++) {
      struct rconv *c = &r->c[d][j];
      pit_fast_wino_free(c->wf);
      pit_fast_wino_free(c->wb);
      dnnl_primitive_t ps[] = {c->fwd, c->bwd_d, c->bwd_w, c->re_wf, c->re_wb, c->re_dw};
      dnnl_memory_t ms[] = {c->w_user, c->w_f, c->w_b, c->b_user, c->dw, c->dw_plain, c->db,
                            c->src,    c->dst, c->ddst, c->dsrc};
      for (size_t k = 0; k < sizeof ps / sizeof ps[0]; k++)
        if (ps[k])
          dnnl_primitive_destroy(ps[k]);
      for (size_t k = 0; k < sizeof ms / sizeof ms[0]; k++)
        if (ms[k])
          dnnl_memory_destroy(ms[k]);
    }
    free(r->cat[d]);
  }
  for (int k = 0; k < r->npd; k++)
    dnnl_primitive_desc_destroy(r->keep_pd[k]);
  float *own[] = {r->own.o5, r->own.xs, r->own.gcat, r->own.tmp, r->own.go, r->own.gd,
                  r->own.gys, r->own.wf, r->own.wb, r->own.dw, r->own.wv, r->own.wu, r->own.wm};
  for (size_t k = 0; k < sizeof own / sizeof own[0]; k++)
    free(own[k]);
  free(r);
}

int pit_fast_rrdb_create(struct pit_fast_rrdb **out, const struct pit_layer_spec *L, int B,
                         float *params, float *grads, struct pit_fast_rrdb *share, dnnl_engine_t eng,
                         dnnl_stream_t strm, const char *where, struct pit_err *e) {
  *out = NULL;
  struct pit_fast_rrdb *r = calloc(1, sizeof *r);
  if (!r)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  r->B = B;
  r->F = L->in_c;
  r->H = L->in_h;
  r->W = L->in_w;
  r->Hs = B * (L->in_h + 1) - 1;
  r->slope = L->alpha;
  r->scale = L->scale;
  r->eng = eng;
  r->strm = strm;
  r->params = params;
  r->grads = grads;
  snprintf(r->where, sizeof r->where, "%s", where);
  /* the same shape as the RRDB whose scratch it may share: the same block, no probing */
  r->blk = share && share->F == r->F && share->Hs == r->Hs && share->W == r->W ? share->blk : choose_blk(r);
  const size_t pl = plane(r), F = (size_t)r->F;
  int ok = 1;
  for (int d = 0; d < ND; d++)
    ok = ok && (r->cat[d] = buf(D5 * F * pl));
  int rc = ok ? 0 : pit_err_set(e, PIT_ENOMEM, "out of memory for an RRDB (batch %d)", B);
  for (int d = 0; d < ND && !rc; d++)
    for (int j = 1; j <= D5 && !rc; j++)
      rc = conv_build(r, L, d, j, e);
  int same = share && share->B == B && share->F == r->F && share->H == r->H && share->W == r->W &&
             share->wmax >= r->wmax && share->wino[0] >= r->wino[0] && share->wino[1] >= r->wino[1] &&
             share->wino[2] >= r->wino[2];
  if (!rc && same) {
    r->sc = share->sc;
  } else if (!rc) {
    struct rscratch *o = &r->own;
    r->sc = o;
    ok = (o->o5 = buf(F * pl)) && (o->xs = buf(F * pl)) && (o->gcat = buf(D5 * F * pl)) &&
         (o->tmp = buf(D5 * F * pl)) && (o->go = buf(F * pl)) && (o->gd = buf(F * pl)) &&
         (o->gys = buf(F * pl)) && (o->wf = buf(r->wmax)) && (o->wb = buf(r->wmax)) &&
         (o->dw = buf(r->wmax)) && (o->wv = buf(r->wino[0] + 1)) && (o->wu = buf(r->wino[1] + 1)) &&
         (o->wm = buf(r->wino[2] + 1));
    if (!ok)
      rc = pit_err_set(e, PIT_ENOMEM, "out of memory for an RRDB (batch %d)", B);
  }
  if (rc) {
    pit_fast_rrdb_free(r);
    return rc;
  }
  *out = r;
  return 0;
}

/* ---- element-wise glue on stacked (C, Hs, W) buffers of channel block blk ---- */

/* below this many floats a glue loop stays on the calling thread: waking the other
 * threads costs more (the bias gradients, F floats; the separator rows) */
#define PAR_MIN ((size_t)1 << 15)

/* Zeroes the separator rows of a stacked buffer of C channels. */
static void zero_seps(const struct pit_fast_rrdb *r, float *x, int C) {
  const size_t row = (size_t)r->W * r->blk;
#pragma omp parallel for if ((size_t)C * (r->B - 1) * r->W >= PAR_MIN)
  for (int cb = 0; cb < C / r->blk; cb++)
    for (int n = 0; n + 1 < r->B; n++)
      memset(x + ((size_t)cb * r->Hs + (size_t)n * (r->H + 1) + r->H) * row, 0, row * sizeof(float));
}

/* Copies between a batch (B, F, H, W) of the same channel block and its stacked form (F, Hs, W): one
 * H·W·16 block per (sample, channel block); to_batch picks the direction. The stacked
 * separator rows are never written. */
static void restack(const struct pit_fast_rrdb *r, float *batch, float *stacked, int to_batch) {
  const size_t blk = (size_t)r->H * r->W * r->blk, CB = (size_t)r->F / r->blk;
#pragma omp parallel for collapse(2)
  for (int n = 0; n < r->B; n++)
    for (size_t cb = 0; cb < CB; cb++) {
      float *s = stacked + (cb * r->Hs + (size_t)n * (r->H + 1)) * r->W * r->blk;
      float *u = batch + ((size_t)n * CB + cb) * blk;
      if (to_batch)
        memcpy(u, s, blk * sizeof(float));
      else
        memcpy(s, u, blk * sizeof(float));
    }
}

/* y = a·x + b·y over n floats. */
static void axpby(size_t n, float a, const float *x, float b, float *y) {
#pragma omp parallel for simd if (n >= PAR_MIN)
  for (size_t i = 0; i < n; i++)
    y[i] = a * x[i] + b * y[i];
}

/* x = LeakyReLU(x) in place over n floats. */
static void leaky(float *x, size_t n, float slope) {
#pragma omp parallel for simd
  for (size_t i = 0; i < n; i++)
    x[i] = x[i] > 0.0f ? x[i] : slope * x[i];
}

static int exec(struct pit_fast_rrdb *r, dnnl_primitive_t p, int n, const dnnl_exec_arg_t *a,
                struct pit_err *e) {
  DN(dnnl_primitive_execute(p, r->strm, n, a));
  return 0;
}

static int bind(dnnl_memory_t m, void *ptr, struct pit_err *e) {
  DN(dnnl_memory_set_data_handle(m, ptr));
  return 0;
}

/* Reorders conv c's plain weights into `to` (bound to buffer p), for `prim`'s use. */
static int lay(struct pit_fast_rrdb *r, struct rconv *c, dnnl_primitive_t re, dnnl_memory_t to, float *p,
               struct pit_err *e) {
  int rc = bind(to, p, e);
  dnnl_exec_arg_t a[2] = {{DNNL_ARG_FROM, c->w_user}, {DNNL_ARG_TO, to}};
  return rc ? rc : exec(r, re, 2, a, e);
}

/* Conv c of a dense block: src (its first C channels) → dst (F channels), + bias, then
 * LeakyReLU when act; own Winograd or oneDNN's primitive. */
static int conv_fwd(struct pit_fast_rrdb *r, struct rconv *c, float *src, float *dst, int act,
                    struct pit_err *e) {
  const size_t Fp = (size_t)r->F * plane(r);
  struct rscratch *sc = r->sc;
  if (c->wf)
    return pit_fast_wino_run(c->wf, src, r->params + c->w_off, r->params + c->b_off, act, r->slope, dst, sc->wv,
                             sc->wu, sc->wm, r->strm, e);
  int rc;
  if ((rc = lay(r, c, c->re_wf, c->w_f, sc->wf, e)) || (rc = bind(c->src, src, e)) || (rc = bind(c->dst, dst, e)))
    return rc;
  dnnl_exec_arg_t a[4] = {{DNNL_ARG_SRC, c->src}, {DNNL_ARG_WEIGHTS, c->w_f},
                          {DNNL_ARG_BIAS, c->b_user}, {DNNL_ARG_DST, c->dst}};
  if ((rc = exec(r, c->fwd, 4, a, e)))
    return rc;
  DN(dnnl_stream_wait(r->strm));
  if (c->act_after && act)
    leaky(dst, Fp, r->slope);
  return 0;
}

int pit_fast_rrdb_forward(struct pit_fast_rrdb *r, const float *x, float *y, struct pit_err *e) {
  const size_t pl = plane(r), Fp = (size_t)r->F * pl;
  struct rscratch *sc = r->sc;
  int rc;
  restack(r, (float *)x, sc->xs, 0); /* x is only read */
  memcpy(r->cat[0], sc->xs, Fp * sizeof(float));
  for (int d = 0; d < ND; d++) {
    float *cat = r->cat[d];
    for (int j = 1; j <= D5; j++) {
      struct rconv *c = &r->c[d][j - 1];
      float *dst = j < D5 ? cat + j * Fp : sc->o5;
      if ((rc = conv_fwd(r, c, cat, dst, j < D5, e)))
        return rc;
      zero_seps(r, dst, r->F); /* what the convolution wrote between the samples */
    }
    if (d + 1 < ND) { /* block output x + s·o5 into the next block's first channels */
      memcpy(r->cat[d + 1], cat, Fp * sizeof(float));
      axpby(Fp, r->scale, sc->o5, 1.0f, r->cat[d + 1]);
    } else { /* o5 = s·(x + s·o5) + (the RRDB's input) */
      axpby(Fp, 1.0f, cat, r->scale, sc->o5);
      axpby(Fp, 1.0f, sc->xs, r->scale, sc->o5);
    }
  }
  restack(r, y, sc->o5, 1);
  return 0;
}

static float *handle(dnnl_memory_t m) {
  void *h = NULL;
  dnnl_memory_get_data_handle(m, &h);
  return h;
}

int pit_fast_rrdb_backward(struct pit_fast_rrdb *r, const float *dy, float *dx, int param_grads,
                           struct pit_err *e) {
  const size_t pl = plane(r), Fp = (size_t)r->F * pl;
  struct rscratch *sc = r->sc;
  int rc;
  restack(r, (float *)dy, sc->gys, 0); /* dy is only read; separator rows stay zero */
  axpby(Fp, r->scale, sc->gys, 0.0f, sc->gd);
  for (int d = ND - 1; d >= 0; d--) {
    const float *cat = r->cat[d];
    memcpy(sc->gcat, sc->gd, Fp * sizeof(float)); /* the block's own skip */
    memset(sc->gcat + Fp, 0, (D5 - 1) * Fp * sizeof(float));
    axpby(Fp, r->scale, sc->gd, 0.0f, sc->go);
    for (int j = D5; j >= 1; j--) {
      struct rconv *c = &r->c[d][j - 1];
      float *g = sc->go;
      if (j < D5) { /* LeakyReLU backward in place: the saved output's sign is the input's */
        g = sc->gcat + j * Fp;
        const float *o = cat + j * Fp;
        const float a = r->slope;
#pragma omp parallel for simd
        for (size_t i = 0; i < Fp; i++)
          g[i] = o[i] > 0.0f ? g[i] : a * g[i];
      }
      if ((rc = bind(c->src, (void *)cat, e)) || (rc = bind(c->ddst, g, e)) || (rc = bind(c->dsrc, sc->tmp, e)))
        return rc;
      if (param_grads) {
        dnnl_exec_arg_t a[4] = {{DNNL_ARG_SRC, c->src}, {DNNL_ARG_DIFF_DST, c->ddst},
                                {DNNL_ARG_DIFF_WEIGHTS, c->dw}, {DNNL_ARG_DIFF_BIAS, c->db}};
        dnnl_exec_arg_t ra[2] = {{DNNL_ARG_FROM, c->dw}, {DNNL_ARG_TO, c->dw_plain}};
        /* the weight gradient, reordered to plain and added into the gradient array at once */
        if ((rc = bind(c->dw, sc->dw, e)) || (rc = bind(c->dw_plain, r->grads + c->w_off, e)) ||
            (rc = exec(r, c->bwd_w, 4, a, e)) || (rc = exec(r, c->re_dw, 2, ra, e)))
          return rc;
        DN(dnnl_stream_wait(r->strm));
        axpby((size_t)r->F, 1.0f, handle(c->db), 1.0f, r->grads + c->b_off);
      }
      if (c->wb) { /* the gradient of the conv's input, into tmp */
        rc = pit_fast_wino_run(c->wb, g, r->params + c->w_off, NULL, 0, 0.0f, sc->tmp, sc->wv, sc->wu, sc->wm,
                               r->strm, e);
      } else {
        dnnl_exec_arg_t a[3] = {{DNNL_ARG_DIFF_DST, c->ddst}, {DNNL_ARG_WEIGHTS, c->w_b},
                                {DNNL_ARG_DIFF_SRC, c->dsrc}};
        if (!(rc = lay(r, c, c->re_wb, c->w_b, sc->wb, e)) && !(rc = exec(r, c->bwd_d, 3, a, e)))
          DN(dnnl_stream_wait(r->strm));
      }
      if (rc)
        return rc;
      zero_seps(r, sc->tmp, j * r->F);
      axpby((size_t)j * Fp, 1.0f, sc->tmp, 1.0f, sc->gcat); /* the concatenation's backward */
    }
    memcpy(sc->gd, sc->gcat, Fp * sizeof(float));
  }
  if (dx) {
    axpby(Fp, 1.0f, sc->gys, 1.0f, sc->gd);
    restack(r, dx, sc->gd, 1);
  }
  return 0;
}

int pit_fast_rrdb_blk(const struct pit_fast_rrdb *r) { return r->blk; }
