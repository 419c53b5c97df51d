/* fast_layers.c — the FAST backend's layers, one kind at a time: convolution,
 * deconvolution and linear (oneDNN, Winograd where it pays), BatchNorm, the
 * element-wise activations, pooling (fast_pool.c's max pooling with a fused ReLU),
 * and ESRGAN's pixel shuffle, skip connections and RRDB (fast_rrdb.c). Each forward
 * builder appends its steps to the plan (fast_net.c's plan_build) and leaves in its
 * struct lstate what its backward builder needs.
 * Invariants: as fast_net.c's (plain NCHW at the network's boundary, layouts
 * chosen by oneDNN between layers, parameter gradients added into net->grads);
 * a builder only appends steps and objects the plan owns. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <oneapi/dnnl/dnnl.h>

#include "nn/fast_plan.h"

/* ---- one layer kind at a time; each appends forward steps now and returns,
 * through *bw, what its backward needs (built in a second pass, last layer first). ---- */

/* Winograd F(4x4, 3x3) for a 3x3 stride-1 convolution with output planes of at least
 * WINO_MIN_PLANE pixels and channels in multiples of 16. Measured on one thread
 * (avx512_core, forward + backward data + backward weights, batch 1): 64→64 64x64 7.2
 * against 11.6 ms direct, 128→128 32x32 8.3 against 18.0, 64→256 32x32 6.9 against
 * 8.0; slower at 16x16 (256→256: 18.7 against 12.3). By default the rule ignores the
 * batch so that every rank count runs the same kernels and 1 and 2 ranks give the same
 * trajectory; a spec with batch_kernels counts the whole batch's pixels instead (batch
 * 4 of 16x16 gains: 128→128 3.3 against 8.4 ms; 256→256 8.5-24 against 14-51 ms,
 * 512→512 58-100 against 103-182 ms, one thread under load). The RRDB has its own rule
 * (fast_rrdb.c). */
#define WINO_MIN_PLANE 1024
static int conv_wino(const struct pit_layer_spec *L, int batch, int batch_kernels) {
  const long pixels = (long)L->o_h * L->o_w * (batch_kernels ? batch : 1);
  return L->kind == PIT_L_CONV && L->k == 3 && L->stride == 1 && L->pad == 1 && L->in_c % 16 == 0 &&
         L->out_c % 16 == 0 && pixels >= WINO_MIN_PLANE;
}

/* The forward Winograd primitive of conv layer L where conv_wino picks it and oneDNN has
 * a kernel for it (not its reference one); NULL: use direct. */
static dnnl_primitive_desc_t wino_fwd(struct fast *f, const struct pit_layer_spec *L, int batch,
                                      int batch_kernels, const dnnl_memory_desc_t *src, const dnnl_memory_desc_t *w,
                                      const dnnl_memory_desc_t *b, const dnnl_memory_desc_t *dst) {
  dnnl_dims_t st = {1, 1}, pad = {1, 1};
  dnnl_convolution_desc_t d;
  dnnl_primitive_desc_t pd = NULL;
  if (!conv_wino(L, batch, batch_kernels) ||
      dnnl_convolution_forward_desc_init(&d, dnnl_forward_training, dnnl_convolution_winograd, src, w, b,
                                         dst, st, pad, pad) != dnnl_success ||
      dnnl_primitive_desc_create(&pd, &d, NULL, f->eng, NULL) != dnnl_success)
    return NULL;
  if (pit_fast_is_ref_impl(pd)) {
    dnnl_primitive_desc_destroy(pd);
    return NULL;
  }
  return pd;
}

int pit_fast_build_weighted_fwd(struct fast *f, struct plan *p, struct pit_net *net, int i,
                                dnnl_memory_t *cur, struct lstate *ls, struct pit_err *e) {
  const struct pit_layer_spec *L = &net->spec.layer[i];
  const int B = p->batch;
  dnnl_memory_desc_t src_any, w_any, b_md, dst_any;
  dnnl_dims_t st = {L->stride, L->stride}, pad = {L->pad, L->pad};
  const dnnl_memory_desc_t *cmd = pit_fast_mem_md(*cur);
  dnnl_primitive_desc_t pd = NULL;
  int rc;
  if (L->kind == PIT_L_LINEAR && cmd->ndims == 4 && *cur != p->x) {
    /* Flatten: oneDNN's inner product on a blocked 4-D source is a slow gemm path
     * (cnn b4: 0.14 ms for 120x400); on a plain (B, C*H*W) matrix it is brgemm. */
    dnnl_memory_desc_t m4, m2;
    dnnl_dims_t d4 = {B, L->in_c, L->in_h, L->in_w}, d2 = {B, L->in_c * L->in_h * L->in_w};
    pit_fast_md_tag(&m4, 4, d4, dnnl_nchw);
    pit_fast_md_tag(&m2, 2, d2, dnnl_nc);
    dnnl_memory_t plain, flat;
    if ((rc = pit_fast_convert(f, p, p->fwd, &p->nfwd, 0, *cur, &m4, &plain, -1, e)) ||
        (rc = pit_fast_keep_mem(p, &m2, pit_fast_mem_ptr(plain), &flat, f->eng, e)))
      return rc;
    ls->flat = 1;
    *cur = flat;
    cmd = pit_fast_mem_md(*cur);
  }
  if (L->kind == PIT_L_LINEAR) {
    int four = cmd->ndims == 4;
    dnnl_dims_t wd = {L->out_c, L->in_c, L->in_h, L->in_w};
    if (!four)
      wd[1] = L->in_c * L->in_h * L->in_w;
    pit_fast_md_tag(&ls->w_user_md, four ? 4 : 2, wd, four ? dnnl_oihw : dnnl_oi);
    /* plain weights: no reorders per iteration (measured cnn b4 +45%, b64 same) */
    w_any = ls->w_user_md;
    dnnl_dims_t dd = {B, L->out_c};
    pit_fast_md_tag(&dst_any, 2, dd, dnnl_format_tag_any);
    dnnl_dims_t bd = {L->out_c};
    pit_fast_md_tag(&b_md, 1, bd, dnnl_x);
    dnnl_inner_product_desc_t d;
    /* try the current layout first, to avoid a reorder */
    DN(dnnl_inner_product_forward_desc_init(&d, dnnl_forward_training, cmd, &w_any,
                                            L->bias ? &b_md : NULL, &dst_any));
    if (dnnl_primitive_desc_create(&pd, &d, NULL, f->eng, NULL) != dnnl_success) {
      dnnl_dims_t sd = {B, L->in_c, L->in_h, L->in_w};
      if (!four)
        sd[1] = wd[1];
      pit_fast_md_tag(&src_any, four ? 4 : 2, sd, dnnl_format_tag_any);
      DN(dnnl_inner_product_forward_desc_init(&d, dnnl_forward_training, &src_any, &w_any,
                                              L->bias ? &b_md : NULL, &dst_any));
      DN(dnnl_primitive_desc_create(&pd, &d, NULL, f->eng, NULL));
    }
  } else {
    int deconv = L->kind == PIT_L_DECONV;
    dnnl_dims_t sd = {B, L->in_c, L->in_h, L->in_w}, dd = {B, L->o_c, L->o_h, L->o_w};
    dnnl_dims_t wd = {L->out_c, L->in_c, L->k, L->k};
    pit_fast_md_tag(&ls->w_user_md, 4, wd, deconv ? dnnl_iohw : dnnl_oihw);
    pit_fast_md_tag(&src_any, 4, sd, dnnl_format_tag_any);
    pit_fast_md_tag(&dst_any, 4, dd, dnnl_format_tag_any);
    pit_fast_md_tag(&w_any, 4, wd, dnnl_format_tag_any);
    dnnl_dims_t bd = {L->out_c};
    pit_fast_md_tag(&b_md, 1, bd, dnnl_x);
    dnnl_convolution_desc_t d;
    if (deconv)
      DN(dnnl_deconvolution_forward_desc_init(&d, dnnl_forward_training, dnnl_deconvolution_direct,
                                              &src_any, &w_any, L->bias ? &b_md : NULL, &dst_any,
                                              st, pad, pad));
    else if (!(pd = wino_fwd(f, L, B, net->spec.batch_kernels, &src_any, &w_any, L->bias ? &b_md : NULL, &dst_any))) {
      ls->alg = dnnl_convolution_direct;
      DN(dnnl_convolution_forward_desc_init(&d, dnnl_forward_training, ls->alg, &src_any, &w_any,
                                            L->bias ? &b_md : NULL, &dst_any, st, pad, pad));
    } else
      ls->alg = dnnl_convolution_winograd;
    if (!pd)
      DN(dnnl_primitive_desc_create(&pd, &d, NULL, f->eng, NULL));
  }
  ls->fpd = pd;
  if ((rc = pit_fast_convert(f, p, p->fwd, &p->nfwd, 0, *cur, pit_fast_q(pd, DNNL_ARG_SRC), &ls->src, -1, e)))
    return rc;
  if ((rc = pit_fast_keep_mem(p, &ls->w_user_md, net->params + L->w_off, &ls->w_user, f->eng, e)))
    return rc;
  if ((rc = pit_fast_convert(f, p, p->fwd, &p->nfwd, 0, ls->w_user, pit_fast_q(pd, DNNL_ARG_WEIGHTS), &ls->w_fwd, -1, e)))
    return rc;
  if (ls->w_fwd != ls->w_user)
    p->fwd[p->nfwd - 1].flags |= F_W;
  if (L->bias) {
    dnnl_dims_t bd = {L->out_c};
    pit_fast_md_tag(&b_md, 1, bd, dnnl_x);
    if ((rc = pit_fast_keep_mem(p, &b_md, net->params + L->b_off, &ls->b_user, f->eng, e)))
      return rc;
  }
  if ((rc = pit_fast_keep_mem(p, pit_fast_q(pd, DNNL_ARG_DST), DNNL_MEMORY_ALLOCATE, &ls->dst, f->eng, e)))
    return rc;
  struct step *s;
  if ((rc = pit_fast_prim_step(p, p->fwd, &p->nfwd, 0, pd, &s, e)))
    return rc;
  pit_fast_arg(s, DNNL_ARG_SRC, ls->src);
  pit_fast_arg(s, DNNL_ARG_WEIGHTS, ls->w_fwd);
  if (L->bias)
    pit_fast_arg(s, DNNL_ARG_BIAS, ls->b_user);
  pit_fast_arg(s, DNNL_ARG_DST, ls->dst);
  *cur = ls->dst;
  return 0;
}

/* Backward of conv / deconv / linear. *cur: the diff of this layer's output. */
/* The ping-pong slot for a layer's data gradient, given where its input gradient
 * lives (updated: the output becomes the next layer's input). */
static int next_slot(int *cur_slot) {
  *cur_slot = *cur_slot == SLOT_PING ? SLOT_PONG : SLOT_PING;
  return *cur_slot;
}

int pit_fast_build_weighted_bwd(struct fast *f, struct plan *p, struct pit_net *net, int i,
                                dnnl_memory_t *cur, int *cur_slot, struct lstate *ls,
                                struct pit_err *e) {
  const struct pit_layer_spec *L = &net->spec.layer[i];
  dnnl_dims_t st = {L->stride, L->stride}, pad = {L->pad, L->pad};
  const dnnl_memory_desc_t *smd = pit_fast_mem_md(ls->src), *dmd = pit_fast_mem_md(ls->dst);
  dnnl_memory_desc_t dsrc_any, dw_any, ddst_any, db_md;
  dsrc_any = *smd;
  ddst_any = *dmd;
  dnnl_memory_desc_init_by_tag(&dsrc_any, smd->ndims, smd->dims, dnnl_f32, dnnl_format_tag_any);
  dnnl_memory_desc_init_by_tag(&ddst_any, dmd->ndims, dmd->dims, dnnl_f32, dnnl_format_tag_any);
  dnnl_memory_desc_init_by_tag(&dw_any, ls->w_user_md.ndims, ls->w_user_md.dims, dnnl_f32,
                               dnnl_format_tag_any);
  if (L->kind == PIT_L_LINEAR)
    dw_any = ls->w_user_md;
  dnnl_dims_t bd = {L->out_c};
  pit_fast_md_tag(&db_md, 1, bd, dnnl_x);
  dnnl_primitive_desc_t dpd = NULL, wpd = NULL;
  int rc;
  /* backward data */
  if (L->kind == PIT_L_LINEAR) {
    dnnl_inner_product_desc_t d;
    DN(dnnl_inner_product_backward_data_desc_init(&d, &dsrc_any, &dw_any, &ddst_any));
    DN(dnnl_primitive_desc_create(&dpd, &d, NULL, f->eng, ls->fpd));
  } else {
    dnnl_convolution_desc_t d;
    if (L->kind == PIT_L_DECONV)
      DN(dnnl_deconvolution_backward_data_desc_init(&d, dnnl_deconvolution_direct, &dsrc_any,
                                                    &dw_any, &ddst_any, st, pad, pad));
    else if (dnnl_convolution_backward_data_desc_init(&d, ls->alg, &dsrc_any, &dw_any, &ddst_any, st, pad,
                                                      pad) != dnnl_success ||
             dnnl_primitive_desc_create(&dpd, &d, NULL, f->eng, ls->fpd) != dnnl_success) {
      dpd = NULL; /* no Winograd kernel for this pass: direct */
      DN(dnnl_convolution_backward_data_desc_init(&d, dnnl_convolution_direct, &dsrc_any, &dw_any,
                                                  &ddst_any, st, pad, pad));
    }
    if (!dpd)
      DN(dnnl_primitive_desc_create(&dpd, &d, NULL, f->eng, ls->fpd));
  }
  /* backward weights: same src and diff_dst layouts if oneDNN agrees */
  const dnnl_memory_desc_t *want_ddst = pit_fast_q(dpd, DNNL_ARG_DIFF_DST);
  /* attempt 2: direct when the Winograd kernel is missing for this pass */
  for (int attempt = 0; attempt < 3 && !wpd; attempt++) {
    const dnnl_memory_desc_t *s_md = attempt ? &dsrc_any : smd;
    const dnnl_memory_desc_t *g_md = attempt ? &ddst_any : want_ddst;
    const dnnl_alg_kind_t alg = attempt == 2 ? dnnl_convolution_direct : ls->alg;
    dnnl_status_t st2;
    if (L->kind == PIT_L_LINEAR) {
      dnnl_inner_product_desc_t d;
      DN(dnnl_inner_product_backward_weights_desc_init(&d, s_md, &dw_any, L->bias ? &db_md : NULL,
                                                       g_md));
      st2 = dnnl_primitive_desc_create(&wpd, &d, NULL, f->eng, ls->fpd);
    } else {
      dnnl_convolution_desc_t d;
      if (L->kind == PIT_L_DECONV)
        DN(dnnl_deconvolution_backward_weights_desc_init(&d, dnnl_deconvolution_direct, s_md,
                                                         &dw_any, L->bias ? &db_md : NULL, g_md,
                                                         st, pad, pad));
      else
        DN(dnnl_convolution_backward_weights_desc_init(&d, alg, s_md, &dw_any,
                                                       L->bias ? &db_md : NULL, g_md, st, pad, pad));
      st2 = dnnl_primitive_desc_create(&wpd, &d, NULL, f->eng, ls->fpd);
    }
    if (st2 != dnnl_success) {
      wpd = NULL;
      if (attempt == 2)
        DN(st2);
    } else if (attempt == 0 && pit_fast_is_ref_impl(wpd)) {
      /* oneDNN's reference kernel is 100x slower than a reorder + jit kernel */
      dnnl_primitive_desc_destroy(wpd);
      wpd = NULL;
    }
  }
  dnnl_memory_t ddst, ddst_w, src_w, w_bwd, dsrc, dw, db = NULL, dsrc_exec = NULL;
  if ((rc = pit_fast_convert(f, p, p->bwd, &p->nbwd, 0, *cur, want_ddst, &ddst, SLOT_CONV, e)))
    goto out;
  /* weights gradient */
  if ((rc = pit_fast_convert(f, p, p->bwd, &p->nbwd, F_PG, ddst, pit_fast_q(wpd, DNNL_ARG_DIFF_DST), &ddst_w, SLOT_WCONV, e)))
    goto out;
  if ((rc = pit_fast_convert(f, p, p->bwd, &p->nbwd, F_PG, ls->src, pit_fast_q(wpd, DNNL_ARG_SRC), &src_w, SLOT_SCONV, e)))
    goto out;
  if ((rc = pit_fast_keep_mem(p, pit_fast_q(wpd, DNNL_ARG_DIFF_WEIGHTS), DNNL_MEMORY_ALLOCATE, &dw, f->eng, e)))
    goto out;
  if (L->bias && (rc = pit_fast_keep_mem(p, &db_md, DNNL_MEMORY_ALLOCATE, &db, f->eng, e)))
    goto out;
  struct step *s;
  if ((rc = pit_fast_prim_step(p, p->bwd, &p->nbwd, F_PG, wpd, &s, e)))
    goto out;
  pit_fast_arg(s, DNNL_ARG_SRC, src_w);
  pit_fast_arg(s, DNNL_ARG_DIFF_DST, ddst_w);
  pit_fast_arg(s, DNNL_ARG_DIFF_WEIGHTS, dw);
  if (db)
    pit_fast_arg(s, DNNL_ARG_DIFF_BIAS, db);
  if ((rc = pit_fast_accumulate(f, p, dw, &ls->w_user_md, net->grads + L->w_off, L->w_len, e)))
    goto out;
  if (db && (rc = pit_fast_accumulate(f, p, db, &db_md, net->grads + L->b_off, L->b_len, e)))
    goto out;
  /* data gradient */
  int fl = i == 0 ? F_DX : 0;
  if ((rc = pit_fast_convert(f, p, p->bwd, &p->nbwd, fl, ls->w_user, pit_fast_q(dpd, DNNL_ARG_WEIGHTS), &w_bwd, -1, e)))
    goto out;
  if (w_bwd != ls->w_user)
    p->bwd[p->nbwd - 1].flags |= F_W;
  if (ls->flat) { /* own buffer, seen by the layer below as plain (B, C, H, W) */
    dnnl_memory_t flat;
    dnnl_memory_desc_t m4;
    dnnl_dims_t d4 = {p->batch, L->in_c, L->in_h, L->in_w};
    pit_fast_md_tag(&m4, 4, d4, dnnl_nchw);
    if ((rc = pit_fast_keep_mem(p, pit_fast_q(dpd, DNNL_ARG_DIFF_SRC), DNNL_MEMORY_ALLOCATE, &flat, f->eng, e)) ||
        (rc = pit_fast_keep_mem(p, &m4, pit_fast_mem_ptr(flat), &dsrc, f->eng, e)))
      goto out;
    if (!dnnl_memory_desc_equal(pit_fast_mem_md(flat), smd)) {
      rc = pit_err_set(e, PIT_ELIB, "src/nn/fast_net.c: inner product diff_src is not plain");
      goto out;
    }
    s = NULL;
    dsrc_exec = flat;
  } else if ((rc = pit_fast_slot_mem(p, pit_fast_q(dpd, DNNL_ARG_DIFF_SRC), next_slot(cur_slot), &dsrc, f->eng, e)))
    goto out;
  if ((rc = pit_fast_prim_step(p, p->bwd, &p->nbwd, fl, dpd, &s, e)))
    goto out;
  pit_fast_arg(s, DNNL_ARG_DIFF_DST, ddst);
  pit_fast_arg(s, DNNL_ARG_WEIGHTS, w_bwd);
  pit_fast_arg(s, DNNL_ARG_DIFF_SRC, dsrc_exec ? dsrc_exec : dsrc);
  *cur = dsrc;
out:
  dnnl_primitive_desc_destroy(dpd);
  if (wpd)
    dnnl_primitive_desc_destroy(wpd);
  return rc;
}

static dnnl_alg_kind_t elt_alg(enum pit_layer_kind k) {
  switch (k) {
  case PIT_L_TANH:
    return dnnl_eltwise_tanh_use_dst_for_bwd;
  case PIT_L_SIGMOID:
    return dnnl_eltwise_logistic_use_dst_for_bwd;
  default:
    return dnnl_eltwise_relu_use_dst_for_bwd; /* relu, leaky relu (alpha) */
  }
}

static int is_elt(enum pit_layer_kind k) {
  return k == PIT_L_RELU || k == PIT_L_LEAKYRELU || k == PIT_L_TANH || k == PIT_L_SIGMOID;
}

int pit_fast_build_simple_fwd(struct fast *f, struct plan *p, struct pit_net *net, int i,
                              dnnl_memory_t *cur, struct lstate *ls, struct pit_err *e) {
  const struct pit_layer_spec *L = &net->spec.layer[i];
  const dnnl_memory_desc_t *cmd = pit_fast_mem_md(*cur);
  int rc;
  struct step *s;
  ls->src = *cur;
  if (is_elt(L->kind)) {
    dnnl_eltwise_desc_t d;
    float alpha = L->kind == PIT_L_LEAKYRELU ? L->alpha : 0.0f;
    DN(dnnl_eltwise_forward_desc_init(&d, dnnl_forward_training, elt_alg(L->kind), cmd, alpha, 0.0f));
    DN(dnnl_primitive_desc_create(&ls->fpd, &d, NULL, f->eng, NULL));
    dnnl_memory_desc_t pmd;
    if (pit_fast_is_ref_impl(ls->fpd) && (cmd->ndims == 4 || cmd->ndims == 2)) {
      /* oneDNN's jit forward skips a blocked tensor whose channels leave its last block
       * partly padding (DCGAN D's 1-channel sigmoid in aBcd16b / aBcd8b): a plain copy */
      dnnl_primitive_desc_destroy(ls->fpd);
      ls->fpd = NULL;
      pit_fast_md_tag(&pmd, cmd->ndims, cmd->dims, cmd->ndims == 4 ? dnnl_nchw : dnnl_nc);
      if ((rc = pit_fast_convert(f, p, p->fwd, &p->nfwd, 0, *cur, &pmd, &ls->src, -1, e)))
        return rc;
      cmd = pit_fast_mem_md(ls->src);
      DN(dnnl_eltwise_forward_desc_init(&d, dnnl_forward_training, elt_alg(L->kind), cmd, alpha, 0.0f));
      DN(dnnl_primitive_desc_create(&ls->fpd, &d, NULL, f->eng, NULL));
    }
    /* not after another element-wise layer (its backward reads its output), nor on a
     * tensor a skip connection keeps (a plain copy is this layer's own) */
    int inplace = (i > 0 && !is_elt(net->spec.layer[i - 1].kind) &&
                   net->spec.layer[i - 1].kind != PIT_L_SKIP) || ls->src != *cur;
    if (inplace)
      ls->dst = ls->src;
    else if ((rc = pit_fast_keep_mem(p, cmd, DNNL_MEMORY_ALLOCATE, &ls->dst, f->eng, e)))
      return rc;
    if ((rc = pit_fast_prim_step(p, p->fwd, &p->nfwd, 0, ls->fpd, &s, e)))
      return rc;
    pit_fast_arg(s, DNNL_ARG_SRC, ls->src);
    pit_fast_arg(s, DNNL_ARG_DST, ls->dst);
  } else if (L->kind == PIT_L_MAXPOOL) {
    dnnl_pooling_v2_desc_t d;
    dnnl_dims_t dd = {p->batch, L->o_c, L->o_h, L->o_w}, st = {L->stride, L->stride},
                k = {L->k, L->k}, dil = {0, 0}, pad = {0, 0};
    dnnl_memory_desc_t dst_any;
    pit_fast_md_tag(&dst_any, 4, dd, dnnl_format_tag_any);
    DN(dnnl_pooling_v2_forward_desc_init(&d, dnnl_forward_training, dnnl_pooling_max, cmd, &dst_any,
                                         st, k, dil, pad, pad));
    DN(dnnl_primitive_desc_create(&ls->fpd, &d, NULL, f->eng, NULL));
    if ((rc = pit_fast_keep_mem(p, pit_fast_q(ls->fpd, DNNL_ARG_DST), DNNL_MEMORY_ALLOCATE, &ls->dst, f->eng, e)))
      return rc;
    if ((rc = pit_fast_keep_mem(p, pit_fast_q(ls->fpd, DNNL_ARG_WORKSPACE), DNNL_MEMORY_ALLOCATE, &ls->ws, f->eng, e)))
      return rc;
    if ((rc = pit_fast_prim_step(p, p->fwd, &p->nfwd, 0, ls->fpd, &s, e)))
      return rc;
    pit_fast_arg(s, DNNL_ARG_SRC, ls->src);
    pit_fast_arg(s, DNNL_ARG_DST, ls->dst);
    pit_fast_arg(s, DNNL_ARG_WORKSPACE, ls->ws);
  } else if (L->kind == PIT_L_BATCHNORM) {
    dnnl_batch_normalization_desc_t d;
    const float eps = 1e-5f;
    DN(dnnl_batch_normalization_forward_desc_init(&d, dnnl_forward_training, cmd, eps,
                                                  dnnl_use_scaleshift));
    DN(dnnl_primitive_desc_create(&ls->fpd, &d, NULL, f->eng, NULL));
    DN(dnnl_batch_normalization_forward_desc_init(&d, dnnl_forward_inference, cmd, eps,
                                                  dnnl_use_scaleshift | dnnl_use_global_stats));
    DN(dnnl_primitive_desc_create(&ls->fpd_inf, &d, NULL, f->eng, NULL));
    dnnl_memory_desc_t ss_md, c_md;
    dnnl_dims_t ssd = {2, L->in_c}, cd = {L->in_c};
    pit_fast_md_tag(&ss_md, 2, ssd, dnnl_nc);
    pit_fast_md_tag(&c_md, 1, cd, dnnl_x);
    dnnl_memory_t ss, rmean, rvar;
    /* gamma then beta are contiguous in params: exactly oneDNN's (2, C) scale-shift */
    if ((rc = pit_fast_keep_mem(p, &ss_md, net->params + L->w_off, &ss, f->eng, e)) ||
        (rc = pit_fast_keep_mem(p, &c_md, DNNL_MEMORY_ALLOCATE, &ls->mean, f->eng, e)) ||
        (rc = pit_fast_keep_mem(p, &c_md, DNNL_MEMORY_ALLOCATE, &ls->var, f->eng, e)) ||
        (rc = pit_fast_keep_mem(p, &c_md, net->state + L->s_off, &rmean, f->eng, e)) ||
        (rc = pit_fast_keep_mem(p, &c_md, net->state + L->s_off + L->in_c, &rvar, f->eng, e)) ||
        (rc = pit_fast_keep_mem(p, cmd, DNNL_MEMORY_ALLOCATE, &ls->dst, f->eng, e)))
      return rc;
    ls->w_user = ss;
    if ((rc = pit_fast_prim_step(p, p->fwd, &p->nfwd, F_TRAIN, ls->fpd, &s, e)))
      return rc;
    pit_fast_arg(s, DNNL_ARG_SRC, ls->src);
    pit_fast_arg(s, DNNL_ARG_SCALE_SHIFT, ss);
    pit_fast_arg(s, DNNL_ARG_MEAN, ls->mean);
    pit_fast_arg(s, DNNL_ARG_VARIANCE, ls->var);
    pit_fast_arg(s, DNNL_ARG_DST, ls->dst);
    if (!(s = pit_fast_add_step(p->fwd, &p->nfwd, F_TRAIN, e)))
      return e->code;
    s->type = S_BNRUN;
    s->dst = pit_fast_mem_ptr(rmean);
    s->dst2 = pit_fast_mem_ptr(rvar);
    s->src = pit_fast_mem_ptr(ls->mean);
    s->src2 = pit_fast_mem_ptr(ls->var);
    s->n = (size_t)L->in_c;
    s->count = (double)p->batch * L->in_h * L->in_w;
    if ((rc = pit_fast_prim_step(p, p->fwd, &p->nfwd, F_EVAL, ls->fpd_inf, &s, e)))
      return rc;
    pit_fast_arg(s, DNNL_ARG_SRC, ls->src);
    pit_fast_arg(s, DNNL_ARG_SCALE_SHIFT, ss);
    pit_fast_arg(s, DNNL_ARG_MEAN, rmean);
    pit_fast_arg(s, DNNL_ARG_VARIANCE, rvar);
    pit_fast_arg(s, DNNL_ARG_DST, ls->dst);
  } else {
    return pit_err_set(e, PIT_EARG, "src/nn/fast_net.c: layer kind %d not supported", (int)L->kind);
  }
  *cur = ls->dst;
  return 0;
}

int pit_fast_build_simple_bwd(struct fast *f, struct plan *p, struct pit_net *net, int i,
                              dnnl_memory_t *cur, int *cur_slot, struct lstate *ls,
                              struct pit_err *e) {
  const struct pit_layer_spec *L = &net->spec.layer[i];
  const dnnl_memory_desc_t *smd = pit_fast_mem_md(ls->src), *dmd = pit_fast_mem_md(ls->dst);
  dnnl_primitive_desc_t pd = NULL;
  int fl = i == 0 ? F_DX : 0;
  int rc;
  if (is_elt(L->kind)) {
    dnnl_eltwise_desc_t d;
    float alpha = L->kind == PIT_L_LEAKYRELU ? L->alpha : 0.0f;
    DN(dnnl_eltwise_backward_desc_init(&d, elt_alg(L->kind), dmd, dmd, alpha, 0.0f));
  DN(dnnl_primitive_desc_create(&pd, &d, NULL, f->eng, ls->fpd));
  } else if (L->kind == PIT_L_MAXPOOL) {
    dnnl_pooling_v2_desc_t d;
    dnnl_dims_t st = {L->stride, L->stride}, k = {L->k, L->k}, dil = {0, 0}, pad = {0, 0};
    DN(dnnl_pooling_v2_backward_desc_init(&d, dnnl_pooling_max, smd, dmd, st, k, dil, pad, pad));
    DN(dnnl_primitive_desc_create(&pd, &d, NULL, f->eng, ls->fpd));
  } else {
    dnnl_batch_normalization_desc_t d;
    DN(dnnl_batch_normalization_backward_desc_init(&d, dnnl_backward, smd, smd, 1e-5f,
                                                   dnnl_use_scaleshift));
    DN(dnnl_primitive_desc_create(&pd, &d, NULL, f->eng, ls->fpd));
    fl = 0;
  }
  dnnl_memory_t ddst, dsrc, dss = NULL;
  struct step *s;
  if ((rc = pit_fast_convert(f, p, p->bwd, &p->nbwd, fl, *cur, pit_fast_q(pd, DNNL_ARG_DIFF_DST), &ddst, SLOT_CONV, e)))
    goto out;
  if ((rc = pit_fast_slot_mem(p, pit_fast_q(pd, DNNL_ARG_DIFF_SRC), next_slot(cur_slot), &dsrc, f->eng, e)))
    goto out;
  if ((rc = pit_fast_prim_step(p, p->bwd, &p->nbwd, fl, pd, &s, e)))
    goto out;
  pit_fast_arg(s, DNNL_ARG_DIFF_DST, ddst);
  pit_fast_arg(s, DNNL_ARG_DIFF_SRC, dsrc);
  if (is_elt(L->kind)) {
    pit_fast_arg(s, DNNL_ARG_DST, ls->dst);
  } else if (L->kind == PIT_L_MAXPOOL) {
    pit_fast_arg(s, DNNL_ARG_WORKSPACE, ls->ws);
  } else {
    if ((rc = pit_fast_keep_mem(p, pit_fast_q(pd, DNNL_ARG_DIFF_SCALE_SHIFT), DNNL_MEMORY_ALLOCATE, &dss, f->eng, e)))
      goto out;
    pit_fast_arg(s, DNNL_ARG_SRC, ls->src);
    pit_fast_arg(s, DNNL_ARG_MEAN, ls->mean);
    pit_fast_arg(s, DNNL_ARG_VARIANCE, ls->var);
    pit_fast_arg(s, DNNL_ARG_SCALE_SHIFT, ls->w_user);
    pit_fast_arg(s, DNNL_ARG_DIFF_SCALE_SHIFT, dss);
    struct step *a = pit_fast_add_step(p->bwd, &p->nbwd, F_PG, e);
    if (!a) {
      rc = e->code;
      goto out;
    }
    a->type = S_ACCUM;
    a->dst = net->grads + L->w_off;
    a->src = pit_fast_mem_ptr(dss);
    a->n = 2 * (size_t)L->in_c;
  }
  *cur = dsrc;
out:
  dnnl_primitive_desc_destroy(pd);
  return rc;
}

/* Channel block of a layout fast_pool.c handles (16, 8, 1 = plain NCHW), else 0. */
int pit_fast_pool_blk(const dnnl_memory_desc_t *md) {
  static const struct {
    dnnl_format_tag_t tag;
    int blk;
  } t[] = {{dnnl_nChw16c, 16}, {dnnl_nChw8c, 8}, {dnnl_nchw, 1}};
  if (md->ndims != 4 || md->data_type != dnnl_f32)
    return 0;
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    dnnl_memory_desc_t m;
    if (dnnl_memory_desc_init_by_tag(&m, 4, md->dims, dnnl_f32, t[i].tag) == dnnl_success &&
        dnnl_memory_desc_equal(&m, md))
      return t[i].blk;
  }
  return 0;
}

int pit_fast_build_pool_fwd(struct fast *f, struct plan *p, struct pit_net *net, int i,
                            dnnl_memory_t *cur, struct lstate *ls, int relu, struct pit_err *e) {
  const struct pit_layer_spec *L = &net->spec.layer[i];
  const dnnl_memory_desc_t *smd = pit_fast_mem_md(*cur);
  int blk = pit_fast_pool_blk(smd), rc;
  dnnl_memory_desc_t dmd, imd;
  dnnl_dims_t dd = {p->batch, L->o_c, L->o_h, L->o_w};
  dnnl_memory_desc_init_by_tag(&dmd, 4, dd, dnnl_f32,
                               blk == 16 ? dnnl_nChw16c : blk == 8 ? dnnl_nChw8c : dnnl_nchw);
  ls->custom_pool = 1;
  ls->pool = (struct pit_fast_pool){.n = p->batch, .cb = (int)(smd->padded_dims[1] / blk), .blk = blk,
                                    .h = L->in_h, .w = L->in_w, .oh = L->o_h, .ow = L->o_w,
                                    .k = L->k, .s = L->stride, .relu = relu, .isa = pit_nn_isa()};
  dnnl_dims_t id = {(dnnl_dim_t)dnnl_memory_desc_get_size(&dmd) / (dnnl_dim_t)sizeof(float)};
  dnnl_memory_desc_init_by_tag(&imd, 1, id, dnnl_u8, dnnl_x);
  ls->src = *cur;
  if ((rc = pit_fast_keep_mem(p, &dmd, DNNL_MEMORY_ALLOCATE, &ls->dst, f->eng, e)) ||
      (rc = pit_fast_keep_mem(p, &imd, DNNL_MEMORY_ALLOCATE, &ls->ws, f->eng, e)))
    return rc;
  struct step *s = pit_fast_add_step(p->fwd, &p->nfwd, 0, e);
  if (!s)
    return e->code;
  s->type = S_POOLF;
  s->pool = ls->pool;
  pit_fast_arg(s, DNNL_ARG_SRC, ls->src);
  pit_fast_arg(s, DNNL_ARG_DST, ls->dst);
  pit_fast_arg(s, DNNL_ARG_WORKSPACE, ls->ws);
  *cur = ls->dst;
  return 0;
}

int pit_fast_build_pool_bwd(struct fast *f, struct plan *p, int i, dnnl_memory_t *cur,
                            int *cur_slot, struct lstate *ls, struct pit_err *e) {
  int fl = i == 0 ? F_DX : 0, rc;
  dnnl_memory_t ddst, dsrc;
  if ((rc = pit_fast_convert(f, p, p->bwd, &p->nbwd, fl, *cur, pit_fast_mem_md(ls->dst), &ddst, SLOT_CONV, e)) ||
      (rc = pit_fast_slot_mem(p, pit_fast_mem_md(ls->src), next_slot(cur_slot), &dsrc, f->eng, e)))
    return rc;
  struct step *s = pit_fast_add_step(p->bwd, &p->nbwd, fl, e);
  if (!s)
    return e->code;
  s->type = S_POOLB;
  s->pool = ls->pool;
  pit_fast_arg(s, DNNL_ARG_DIFF_DST, ddst);
  pit_fast_arg(s, DNNL_ARG_WORKSPACE, ls->ws);
  pit_fast_arg(s, DNNL_ARG_DIFF_SRC, dsrc);
  *cur = dsrc;
  return 0;
}

/* ---- ESRGAN's layers: pixel shuffle, skip connections, RRDB ---- */

static size_t md_floats(const dnnl_memory_desc_t *md) {
  return dnnl_memory_desc_get_size(md) / sizeof(float);
}

/* A step of a custom type over memories a (and b, c). */
static struct step *custom(struct step *list, int *n, int flags, int type, dnnl_memory_t a,
                           dnnl_memory_t b, dnnl_memory_t c, struct pit_err *e) {
  struct step *s = pit_fast_add_step(list, n, flags, e);
  if (!s)
    return NULL;
  s->type = type;
  pit_fast_arg(s, 0, a);
  pit_fast_arg(s, 0, b);
  if (c)
    pit_fast_arg(s, 0, c);
  s->n = md_floats(pit_fast_mem_md(a));
  return s;
}

/* The forward step of a custom type whose output is dst (its backward's parameters). */
static const struct step *fwd_step(const struct plan *p, int type, dnnl_memory_t dst) {
  for (int k = 0; k < p->nfwd; k++)
    if (p->fwd[k].type == type && p->fwd[k].args[1].memory == dst)
      return &p->fwd[k];
  return NULL;
}

/* The forward step of a custom layer (type) whose parameters the caller sets: *cur
 * converted to smd into ls->src, ls->dst a new memory of dmd; *cur becomes ls->dst. */
static int custom_fwd(struct fast *f, struct plan *p, int type, const dnnl_memory_desc_t *smd,
                      const dnnl_memory_desc_t *dmd, dnnl_memory_t *cur, struct lstate *ls, struct step **out,
                      struct pit_err *e) {
  int rc;
  if ((rc = pit_fast_convert(f, p, p->fwd, &p->nfwd, 0, *cur, smd, &ls->src, -1, e)) ||
      (rc = pit_fast_keep_mem(p, dmd, DNNL_MEMORY_ALLOCATE, &ls->dst, f->eng, e)))
    return rc;
  if (!(*out = custom(p->fwd, &p->nfwd, 0, type, ls->src, ls->dst, NULL, e)))
    return e->code;
  *cur = ls->dst;
  return 0;
}

/* Its backward step (type, flags fl), parameters to set: the gradient *cur converted to
 * ls->dst's layout, into a new slot of ls->src's layout, which becomes *cur. */
static int custom_bwd(struct fast *f, struct plan *p, int fl, int type, dnnl_memory_t *cur, int *cur_slot,
                      const struct lstate *ls, struct step **out, struct pit_err *e) {
  dnnl_memory_t ddst, dsrc;
  int rc;
  if ((rc = pit_fast_convert(f, p, p->bwd, &p->nbwd, fl, *cur, pit_fast_mem_md(ls->dst), &ddst, SLOT_CONV, e)) ||
      (rc = pit_fast_slot_mem(p, pit_fast_mem_md(ls->src), next_slot(cur_slot), &dsrc, f->eng, e)))
    return rc;
  if (!(*out = custom(p->bwd, &p->nbwd, fl, type, ddst, dsrc, NULL, e)))
    return e->code;
  *cur = dsrc;
  return 0;
}

int pit_fast_build_shuffle_fwd(struct fast *f, struct plan *p, struct pit_net *net, int i,
                               dnnl_memory_t *cur, struct lstate *ls, struct pit_err *e) {
  const struct pit_layer_spec *L = &net->spec.layer[i];
  int blk = pit_fast_pool_blk(pit_fast_mem_md(*cur)), rc;
  if (blk == 0 || L->in_c % blk || L->o_c % blk)
    blk = 1;
  dnnl_format_tag_t tag = blk == 16 ? dnnl_nChw16c : blk == 8 ? dnnl_nChw8c : dnnl_nchw;
  dnnl_memory_desc_t smd, dmd;
  dnnl_dims_t sd = {p->batch, L->in_c, L->in_h, L->in_w}, dd = {p->batch, L->o_c, L->o_h, L->o_w};
  pit_fast_md_tag(&smd, 4, sd, tag);
  pit_fast_md_tag(&dmd, 4, dd, tag);
  struct step *s;
  if ((rc = custom_fwd(f, p, S_SHUFF, &smd, &dmd, cur, ls, &s, e)))
    return rc;
  s->shuf = (struct pit_fast_shuffle){.n = p->batch, .c = L->o_c, .h = L->in_h, .w = L->in_w, .r = L->k,
                                      .blk = blk};
  return 0;
}

int pit_fast_build_shuffle_bwd(struct fast *f, struct plan *p, int i, dnnl_memory_t *cur, int *cur_slot,
                               struct lstate *ls, struct pit_err *e) {
  const struct step *fw = fwd_step(p, S_SHUFF, ls->dst);
  struct step *s;
  int rc = custom_bwd(f, p, i == 0 ? F_DX : 0, S_SHUFB, cur, cur_slot, ls, &s, e);
  if (rc)
    return rc;
  if (!fw)
    return PIT_BUG(e, "pixel shuffle %d lost its forward step", i);
  s->shuf = fw->shuf;
  return 0;
}

/* SKIPADD forward: dst = cur + (the SKIP's input, in cur's layout). */
int pit_fast_build_skipadd_fwd(struct fast *f, struct plan *p, const struct lstate *skip, dnnl_memory_t *cur,
                               struct lstate *ls, struct pit_err *e) {
  dnnl_memory_t saved;
  int rc;
  ls->src = *cur;
  if ((rc = pit_fast_convert(f, p, p->fwd, &p->nfwd, 0, skip->src, pit_fast_mem_md(*cur), &saved, -1, e)) ||
      (rc = pit_fast_keep_mem(p, pit_fast_mem_md(*cur), DNNL_MEMORY_ALLOCATE, &ls->dst, f->eng, e)))
    return rc;
  if (!custom(p->fwd, &p->nfwd, 0, S_ADD, *cur, saved, ls->dst, e))
    return e->code;
  *cur = ls->dst;
  return 0;
}

/* SKIPADD backward: the gradient passes through unchanged, and a copy is kept for the SKIP. */
int pit_fast_build_skipadd_bwd(struct fast *f, struct plan *p, dnnl_memory_t cur, struct lstate *skip,
                               struct pit_err *e) {
  int rc = pit_fast_keep_mem(p, pit_fast_mem_md(cur), DNNL_MEMORY_ALLOCATE, &skip->skipg, f->eng, e);
  if (rc)
    return rc;
  return custom(p->bwd, &p->nbwd, 0, S_COPY, cur, skip->skipg, NULL, e) ? 0 : e->code;
}

/* SKIP backward: the straight path's gradient plus the skip's. */
int pit_fast_build_skip_bwd(struct fast *f, struct plan *p, dnnl_memory_t *cur, int *cur_slot,
                            const struct lstate *ls, struct pit_err *e) {
  dnnl_memory_t sg, out;
  int rc;
  if ((rc = pit_fast_convert(f, p, p->bwd, &p->nbwd, 0, ls->skipg, pit_fast_mem_md(*cur), &sg, -1, e)) ||
      (rc = pit_fast_slot_mem(p, pit_fast_mem_md(*cur), next_slot(cur_slot), &out, f->eng, e)))
    return rc;
  if (!custom(p->bwd, &p->nbwd, 0, S_ADD, *cur, sg, out, e))
    return e->code;
  *cur = out;
  return 0;
}

int pit_fast_build_rrdb_fwd(struct fast *f, struct plan *p, struct pit_net *net, int i, dnnl_memory_t *cur,
                            struct lstate *ls, struct pit_err *e) {
  const struct pit_layer_spec *L = &net->spec.layer[i];
  dnnl_memory_desc_t md;
  dnnl_dims_t dd = {p->batch, L->in_c, L->in_h, L->in_w};
  struct pit_fast_rrdb *r;
  char where[96];
  snprintf(where, sizeof where, "%s layer %d (RRDB)", p->model, i);
  int rc = pit_fast_rrdb_create(&r, L, p->batch, net->params, net->grads, p->nrrdb ? p->rrdbs[0] : NULL,
                                f->eng, f->strm, where, e);
  if (rc)
    return rc;
  p->rrdbs[p->nrrdb++] = r;
  const int blk = pit_fast_rrdb_blk(r);
  pit_fast_md_tag(&md, 4, dd, blk == 16 ? dnnl_nChw16c : blk == 8 ? dnnl_nChw8c : dnnl_nchw);
  struct step *s;
  if ((rc = custom_fwd(f, p, S_RRDBF, &md, &md, cur, ls, &s, e)))
    return rc;
  s->rrdb = r;
  return 0;
}

int pit_fast_build_rrdb_bwd(struct fast *f, struct plan *p, int i, dnnl_memory_t *cur, int *cur_slot,
                            struct lstate *ls, struct pit_err *e) {
  const struct step *fw = fwd_step(p, S_RRDBF, ls->dst);
  struct step *s;
  int rc = custom_bwd(f, p, 0, S_RRDBB, cur, cur_slot, ls, &s, e);
  if (rc)
    return rc;
  if (!fw)
    return PIT_BUG(e, "RRDB %d lost its forward step", i);
  s->rrdb = fw->rrdb;
  s->first = i == 0;
  return 0;
}
