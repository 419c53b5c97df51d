/* fast_net.c — the FAST network backend: every layer on oneDNN 2.6 primitives.
 *
 * For each batch size seen, a plan is built: a list of forward steps and a list
 * of backward steps (oneDNN primitives with their arguments, plus a few plain-C
 * steps: gradient accumulation, BatchNorm running-stat update). oneDNN picks the
 * activation layouts (format_tag_any) and they stay blocked between layers; a
 * reorder is inserted only where two neighbours disagree. Parameters stay in the
 * plain PyTorch layout of nn.h (net->params): conv/deconv weights are reordered
 * into the layouts the forward / backward-data primitives want on the first pass
 * after pit_net_params_changed (so callers MUST call it after changing params);
 * linear layers use the plain weights directly; BN scale/shift and biases are read
 * in place. Parameter gradients are computed in oneDNN's layout, reordered to
 * plain and ADDED into net->grads.
 * Max pooling, with a ReLU right before it fused in, runs in fast_pool.c; a linear
 * layer fed a 4-D tensor reads a plain (B, C*H*W) copy of it.
 * Invariants: the network boundary is plain NCHW (or (B, K) for a linear output);
 * plans are cached per batch size (at most FAST_MAX_PLANS, least recently used
 * evicted); backward uses the plan and activations of the last TRAIN forward.
 * Element-wise activations run in place on their input except after another
 * element-wise layer (their backward reads their own output).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>

#include "nn/fast_impl.h"
#include "nn/net_impl.h"

#define FAST_MAX_PLANS 3
#define FAST_MAX_STEPS 320
#define FAST_MAX_OBJS 640

enum step_type {
  S_PRIM, S_ACCUM, S_BNRUN, S_POOLF, S_POOLB,
  S_SHUFF, S_SHUFB, /* pixel shuffle: args[0] → args[1] */
  S_RRDBF, S_RRDBB, /* RRDB (fast_rrdb.c): forward x → y; backward dy → dx */
  S_ADD,            /* args[2] = args[0] + args[1], n floats */
  S_COPY            /* args[1] = args[0], n floats */
};
enum step_flag {
  F_TRAIN = 1,  /* forward: only in train mode */
  F_EVAL = 2,   /* forward: only in eval mode */
  F_PG = 4,     /* backward: only when parameter gradients are wanted */
  F_DX = 8,     /* backward: only when the caller wants dx */
  F_W = 16      /* weights reorder: only when the parameters changed since the last one */
};

/* Backward slots: data gradients alternate between PING and PONG layer by layer
 * (a layer reads its input gradient from one and writes its output gradient to the
 * other); CONV holds a diff_dst reordered for the layer, WCONV a second reorder
 * for the weights-gradient primitive, SCONV a reordered forward source. */
enum { SLOT_PING, SLOT_PONG, SLOT_CONV, SLOT_WCONV, SLOT_SCONV, SLOT_N };

struct step {
  int type, flags;
  dnnl_primitive_t p;
  int nargs;
  dnnl_exec_arg_t args[8];
  /* S_ACCUM: dst[i] += src[i]; S_BNRUN: running stats (dst=mean, dst2=var) from (src, src2) */
  float *dst, *dst2;
  const float *src, *src2;
  size_t n;
  double count; /* S_BNRUN: elements per channel in the batch */
  uint64_t wver; /* F_W steps: parameter version last laid out (0: never) */
  /* S_POOLF: args[0..2] = src, dst, idx memories; S_POOLB: diff_dst, idx, diff_src */
  struct pit_fast_pool pool;
  struct pit_fast_shuffle shuf;
  struct pit_fast_rrdb *rrdb; /* S_RRDBF/B: owned by the plan */
  int first;                  /* S_RRDBB: the network's first layer (dx only when asked) */
};

struct plan {
  int batch;
  uint64_t used;
  struct step fwd[FAST_MAX_STEPS], bwd[FAST_MAX_STEPS];
  int nfwd, nbwd;
  dnnl_memory_t x, y, dy, dx; /* x, dy, dx: plain, user handles; y: plain output */
  dnnl_primitive_t prims[FAST_MAX_OBJS];
  dnnl_memory_t mems[FAST_MAX_OBJS];
  int nprims, nmems;
  /* Backward scratch shared between layers: memories bound to slots, each slot one
   * buffer as large as its largest user (see SLOT_*). */
  dnnl_memory_t slot_mem[FAST_MAX_OBJS];
  int slot_of[FAST_MAX_OBJS], nslot_mem;
  size_t slot_size[SLOT_N];
  void *slot_buf[SLOT_N];
  struct pit_fast_rrdb *rrdbs[PIT_MAX_LAYERS]; /* owned */
  int nrrdb;
  const char *model; /* while building: the net's name and the layer being built, */
  int layer;         /* for pit_fast_check_impl's messages */
};

struct fast {
  dnnl_engine_t eng;
  dnnl_stream_t strm;
  struct plan *plans[FAST_MAX_PLANS];
  struct plan *last; /* plan of the last train forward, NULL if the last forward was eval */
  uint64_t clock;
  uint64_t wver; /* parameter version: bumped by params_changed */
};

int pit_fast_dnnl_err(struct pit_err *e, const char *file, int line, dnnl_status_t s) {
  const char *src = NULL;
  for (const char *q = strstr(file, "src/"); q; q = strstr(q + 1, "src/"))
    src = q;
  return pit_err_set(e, PIT_ELIB, "%s:%d: oneDNN call failed: %s", src ? src : file, line,
                     dnnl_status2str(s));
}

/* ---- plan object bookkeeping ---- */

static int keep_mem(struct plan *p, const dnnl_memory_desc_t *md, void *handle, dnnl_memory_t *out,
                    dnnl_engine_t eng, struct pit_err *e) {
  if (p->nmems >= FAST_MAX_OBJS)
    return pit_err_set(e, PIT_ESTATE, "src/nn/fast_net.c: too many oneDNN memories in one plan");
  DN(dnnl_memory_create(out, md, eng, handle));
  p->mems[p->nmems++] = *out;
  return 0;
}

/* A memory whose buffer is backward slot `slot` (bound when the plan is complete). */
static int slot_mem(struct plan *p, const dnnl_memory_desc_t *md, int slot, dnnl_memory_t *out,
                    dnnl_engine_t eng, struct pit_err *e) {
  if (slot < 0)
    return keep_mem(p, md, DNNL_MEMORY_ALLOCATE, out, eng, e);
  int rc = keep_mem(p, md, DNNL_MEMORY_NONE, out, eng, e);
  if (rc)
    return rc;
  if (p->nslot_mem >= FAST_MAX_OBJS)
    return pit_err_set(e, PIT_ESTATE, "src/nn/fast_net.c: too many slot memories in one plan");
  p->slot_mem[p->nslot_mem] = *out;
  p->slot_of[p->nslot_mem++] = slot;
  size_t sz = dnnl_memory_desc_get_size(md);
  if (sz > p->slot_size[slot])
    p->slot_size[slot] = sz;
  return 0;
}

static int slot_bind(struct plan *p, struct pit_err *e) {
  for (int i = 0; i < SLOT_N; i++) {
    if (!p->slot_size[i])
      continue;
    p->slot_buf[i] = aligned_alloc(64, (p->slot_size[i] + 63) / 64 * 64);
    if (!p->slot_buf[i])
      return pit_err_set(e, PIT_ENOMEM, "out of memory (%zu bytes of backward scratch)", p->slot_size[i]);
  }
  for (int i = 0; i < p->nslot_mem; i++)
    DN(dnnl_memory_set_data_handle(p->slot_mem[i], p->slot_buf[p->slot_of[i]]));
  return 0;
}

static struct step *add_step(struct step *list, int *n, int flags, struct pit_err *e) {
  if (*n >= FAST_MAX_STEPS) {
    pit_err_set(e, PIT_ESTATE, "src/nn/fast_net.c: too many steps in one plan");
    return NULL;
  }
  struct step *s = &list[(*n)++];
  memset(s, 0, sizeof *s);
  s->type = S_PRIM;
  s->flags = flags;
  return s;
}

/* A primitive from pd (kept by the plan) and the step appended to list that runs it,
 * its arguments still to add; NULL on failure (e set). */
static struct step *prim_step(struct plan *p, struct step *list, int *n, int flags,
                              const_dnnl_primitive_desc_t pd, struct pit_err *e) {
  if (p->nprims >= FAST_MAX_OBJS) {
    pit_err_set(e, PIT_ESTATE, "src/nn/fast_net.c: too many oneDNN primitives in one plan");
    return NULL;
  }
  char where[96];
  snprintf(where, sizeof where, "%s layer %d", p->model, p->layer);
  if (pit_fast_check_impl(pd, where, e))
    return NULL;
  dnnl_primitive_t prim;
  dnnl_status_t st = dnnl_primitive_create(&prim, pd);
  if (st != dnnl_success) {
    pit_fast_dnnl_err(e, __FILE__, __LINE__, st);
    return NULL;
  }
  p->prims[p->nprims++] = prim;
  struct step *s = add_step(list, n, flags, e);
  if (s)
    s->p = prim;
  return s;
}

static void arg(struct step *s, int a, dnnl_memory_t m) {
  s->args[s->nargs].arg = a;
  s->args[s->nargs].memory = m;
  s->nargs++;
}

static const dnnl_memory_desc_t *mem_md(dnnl_memory_t m) {
  const dnnl_memory_desc_t *md = NULL;
  dnnl_memory_get_memory_desc(m, &md);
  return md;
}

static float *mem_ptr(dnnl_memory_t m) {
  void *h = NULL;
  dnnl_memory_get_data_handle(m, &h);
  return h;
}

/* A reorder step appended to list: copies memory `from` into `to` (layouts may differ). */
static int reorder_step(struct fast *f, struct plan *p, struct step *list, int *n, int flags,
                        dnnl_memory_t from, dnnl_memory_t to, struct pit_err *e) {
  dnnl_primitive_desc_t pd;
  DN(dnnl_reorder_primitive_desc_create(&pd, mem_md(from), f->eng, mem_md(to), f->eng, NULL));
  struct step *s = prim_step(p, list, n, flags, pd, e);
  dnnl_primitive_desc_destroy(pd);
  if (!s)
    return e->code;
  arg(s, DNNL_ARG_FROM, from);
  arg(s, DNNL_ARG_TO, to);
  return 0;
}

/* *out = `from` if it already has layout `want`, else a new memory of layout `want`
 * filled by a reorder step appended to list. */
static int convert(struct fast *f, struct plan *p, struct step *list, int *n, int flags,
                   dnnl_memory_t from, const dnnl_memory_desc_t *want, dnnl_memory_t *out,
                   int slot, struct pit_err *e) {
  if (dnnl_memory_desc_equal(mem_md(from), want)) {
    *out = from;
    return 0;
  }
  int rc = slot_mem(p, want, slot, out, f->eng, e);
  if (rc)
    return rc;
  return reorder_step(f, p, list, n, flags, from, *out, e);
}

/* Gradient `g` (a memory of oneDNN's layout) → plain `user_md` → added into grads+off. */
static int accumulate(struct fast *f, struct plan *p, dnnl_memory_t g, const dnnl_memory_desc_t *user_md,
                      float *dst, size_t n, struct pit_err *e) {
  dnnl_memory_t plain;
  int rc = convert(f, p, p->bwd, &p->nbwd, F_PG, g, user_md, &plain, -1, e);
  if (rc)
    return rc;
  struct step *s = add_step(p->bwd, &p->nbwd, F_PG, e);
  if (!s)
    return e->code;
  s->type = S_ACCUM;
  s->dst = dst;
  s->src = mem_ptr(plain);
  s->n = n;
  return 0;
}

static const dnnl_memory_desc_t *q(const_dnnl_primitive_desc_t pd, int argk) {
  return dnnl_primitive_desc_query_md(pd, dnnl_query_exec_arg_md, argk);
}

static int is_ref_impl(const_dnnl_primitive_desc_t pd) {
  const char *name = NULL;
  if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &name) != dnnl_success || !name)
    return 0;
  return strncmp(name, "ref", 3) == 0;
}

static void md_tag(dnnl_memory_desc_t *md, int nd, const dnnl_dims_t dims, dnnl_format_tag_t tag) {
  dnnl_memory_desc_init_by_tag(md, nd, dims, dnnl_f32, tag);
}

/* ---- one layer kind at a time; each appends forward steps now and returns,
 * through *bw, what its backward needs (built in a second pass, last layer first). ---- */

struct lstate {
  int fused_relu;         /* ReLU folded into the max pooling that follows it */
  int custom_pool;        /* max pooling by fast_pool.c */
  int flat;               /* linear layer fed a plain (B, C*H*W) view of its 4-D input */
  struct pit_fast_pool pool;
  dnnl_memory_t skipg;    /* SKIP: its SKIPADD's output gradient, kept for the SKIP's backward */
  /* forward */
  dnnl_primitive_desc_t fpd, fpd_inf;
  dnnl_memory_t src, dst, ws, mean, var;
  dnnl_memory_t w_user, w_fwd, b_user;
  dnnl_memory_desc_t w_user_md;
  dnnl_alg_kind_t alg; /* conv: direct, or Winograd (conv_alg) in all three passes */
};

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
  if (is_ref_impl(pd)) {
    dnnl_primitive_desc_destroy(pd);
    return NULL;
  }
  return pd;
}

static int build_weighted_fwd(struct fast *f, struct plan *p, struct pit_net *net, int i,
                              dnnl_memory_t *cur, struct lstate *ls, struct pit_err *e) {
  const struct pit_layer_spec *L = &net->spec.layer[i];
  const int B = p->batch;
  dnnl_memory_desc_t src_any, w_any, b_md, dst_any;
  dnnl_dims_t st = {L->stride, L->stride}, pad = {L->pad, L->pad};
  const dnnl_memory_desc_t *cmd = mem_md(*cur);
  dnnl_primitive_desc_t pd = NULL;
  int rc;
  if (L->kind == PIT_L_LINEAR && cmd->ndims == 4 && *cur != p->x) {
    /* Flatten: oneDNN's inner product on a blocked 4-D source is a slow gemm path
     * (cnn b4: 0.14 ms for 120x400); on a plain (B, C*H*W) matrix it is brgemm. */
    dnnl_memory_desc_t m4, m2;
    dnnl_dims_t d4 = {B, L->in_c, L->in_h, L->in_w}, d2 = {B, L->in_c * L->in_h * L->in_w};
    md_tag(&m4, 4, d4, dnnl_nchw);
    md_tag(&m2, 2, d2, dnnl_nc);
    dnnl_memory_t plain, flat;
    if ((rc = convert(f, p, p->fwd, &p->nfwd, 0, *cur, &m4, &plain, -1, e)) ||
        (rc = keep_mem(p, &m2, mem_ptr(plain), &flat, f->eng, e)))
      return rc;
    ls->flat = 1;
    *cur = flat;
    cmd = mem_md(*cur);
  }
  if (L->kind == PIT_L_LINEAR) {
    int four = cmd->ndims == 4;
    dnnl_dims_t wd = {L->out_c, L->in_c, L->in_h, L->in_w};
    if (!four)
      wd[1] = L->in_c * L->in_h * L->in_w;
    md_tag(&ls->w_user_md, four ? 4 : 2, wd, four ? dnnl_oihw : dnnl_oi);
    /* plain weights: no reorders per iteration (measured cnn b4 +45%, b64 same) */
    w_any = ls->w_user_md;
    dnnl_dims_t dd = {B, L->out_c};
    md_tag(&dst_any, 2, dd, dnnl_format_tag_any);
    dnnl_dims_t bd = {L->out_c};
    md_tag(&b_md, 1, bd, dnnl_x);
    dnnl_inner_product_desc_t d;
    /* try the current layout first, to avoid a reorder */
    DN(dnnl_inner_product_forward_desc_init(&d, dnnl_forward_training, cmd, &w_any,
                                            L->bias ? &b_md : NULL, &dst_any));
    if (dnnl_primitive_desc_create(&pd, &d, NULL, f->eng, NULL) != dnnl_success) {
      dnnl_dims_t sd = {B, L->in_c, L->in_h, L->in_w};
      if (!four)
        sd[1] = wd[1];
      md_tag(&src_any, four ? 4 : 2, sd, dnnl_format_tag_any);
      DN(dnnl_inner_product_forward_desc_init(&d, dnnl_forward_training, &src_any, &w_any,
                                              L->bias ? &b_md : NULL, &dst_any));
      DN(dnnl_primitive_desc_create(&pd, &d, NULL, f->eng, NULL));
    }
  } else {
    int deconv = L->kind == PIT_L_DECONV;
    dnnl_dims_t sd = {B, L->in_c, L->in_h, L->in_w}, dd = {B, L->o_c, L->o_h, L->o_w};
    dnnl_dims_t wd = {L->out_c, L->in_c, L->k, L->k};
    md_tag(&ls->w_user_md, 4, wd, deconv ? dnnl_iohw : dnnl_oihw);
    md_tag(&src_any, 4, sd, dnnl_format_tag_any);
    md_tag(&dst_any, 4, dd, dnnl_format_tag_any);
    md_tag(&w_any, 4, wd, dnnl_format_tag_any);
    dnnl_dims_t bd = {L->out_c};
    md_tag(&b_md, 1, bd, dnnl_x);
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
  if ((rc = convert(f, p, p->fwd, &p->nfwd, 0, *cur, q(pd, DNNL_ARG_SRC), &ls->src, -1, e)))
    return rc;
  if ((rc = keep_mem(p, &ls->w_user_md, net->params + L->w_off, &ls->w_user, f->eng, e)))
    return rc;
  if ((rc = convert(f, p, p->fwd, &p->nfwd, 0, ls->w_user, q(pd, DNNL_ARG_WEIGHTS), &ls->w_fwd, -1, e)))
    return rc;
  if (ls->w_fwd != ls->w_user)
    p->fwd[p->nfwd - 1].flags |= F_W;
  if (L->bias) {
    dnnl_dims_t bd = {L->out_c};
    md_tag(&b_md, 1, bd, dnnl_x);
    if ((rc = keep_mem(p, &b_md, net->params + L->b_off, &ls->b_user, f->eng, e)))
      return rc;
  }
  if ((rc = keep_mem(p, q(pd, DNNL_ARG_DST), DNNL_MEMORY_ALLOCATE, &ls->dst, f->eng, e)))
    return rc;
  struct step *s = prim_step(p, p->fwd, &p->nfwd, 0, pd, e);
  if (!s)
    return e->code;
  arg(s, DNNL_ARG_SRC, ls->src);
  arg(s, DNNL_ARG_WEIGHTS, ls->w_fwd);
  if (L->bias)
    arg(s, DNNL_ARG_BIAS, ls->b_user);
  arg(s, DNNL_ARG_DST, ls->dst);
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

static int build_weighted_bwd(struct fast *f, struct plan *p, struct pit_net *net, int i,
                              dnnl_memory_t *cur, int *cur_slot, struct lstate *ls,
                              struct pit_err *e) {
  const struct pit_layer_spec *L = &net->spec.layer[i];
  dnnl_dims_t st = {L->stride, L->stride}, pad = {L->pad, L->pad};
  const dnnl_memory_desc_t *smd = mem_md(ls->src), *dmd = mem_md(ls->dst);
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
  md_tag(&db_md, 1, bd, dnnl_x);
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
  const dnnl_memory_desc_t *want_ddst = q(dpd, DNNL_ARG_DIFF_DST);
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
    } else if (attempt == 0 && is_ref_impl(wpd)) {
      /* oneDNN's reference kernel is 100x slower than a reorder + jit kernel */
      dnnl_primitive_desc_destroy(wpd);
      wpd = NULL;
    }
  }
  dnnl_memory_t ddst, ddst_w, src_w, w_bwd, dsrc, dw, db = NULL, dsrc_exec = NULL;
  if ((rc = convert(f, p, p->bwd, &p->nbwd, 0, *cur, want_ddst, &ddst, SLOT_CONV, e)))
    goto out;
  /* weights gradient */
  if ((rc = convert(f, p, p->bwd, &p->nbwd, F_PG, ddst, q(wpd, DNNL_ARG_DIFF_DST), &ddst_w, SLOT_WCONV, e)))
    goto out;
  if ((rc = convert(f, p, p->bwd, &p->nbwd, F_PG, ls->src, q(wpd, DNNL_ARG_SRC), &src_w, SLOT_SCONV, e)))
    goto out;
  if ((rc = keep_mem(p, q(wpd, DNNL_ARG_DIFF_WEIGHTS), DNNL_MEMORY_ALLOCATE, &dw, f->eng, e)))
    goto out;
  if (L->bias && (rc = keep_mem(p, &db_md, DNNL_MEMORY_ALLOCATE, &db, f->eng, e)))
    goto out;
  struct step *s = prim_step(p, p->bwd, &p->nbwd, F_PG, wpd, e);
  if (!s) {
    rc = e->code;
    goto out;
  }
  arg(s, DNNL_ARG_SRC, src_w);
  arg(s, DNNL_ARG_DIFF_DST, ddst_w);
  arg(s, DNNL_ARG_DIFF_WEIGHTS, dw);
  if (db)
    arg(s, DNNL_ARG_DIFF_BIAS, db);
  if ((rc = accumulate(f, p, dw, &ls->w_user_md, net->grads + L->w_off, L->w_len, e)))
    goto out;
  if (db && (rc = accumulate(f, p, db, &db_md, net->grads + L->b_off, L->b_len, e)))
    goto out;
  /* data gradient */
  int fl = i == 0 ? F_DX : 0;
  if ((rc = convert(f, p, p->bwd, &p->nbwd, fl, ls->w_user, q(dpd, DNNL_ARG_WEIGHTS), &w_bwd, -1, e)))
    goto out;
  if (w_bwd != ls->w_user)
    p->bwd[p->nbwd - 1].flags |= F_W;
  if (ls->flat) { /* own buffer, seen by the layer below as plain (B, C, H, W) */
    dnnl_memory_t flat;
    dnnl_memory_desc_t m4;
    dnnl_dims_t d4 = {p->batch, L->in_c, L->in_h, L->in_w};
    md_tag(&m4, 4, d4, dnnl_nchw);
    if ((rc = keep_mem(p, q(dpd, DNNL_ARG_DIFF_SRC), DNNL_MEMORY_ALLOCATE, &flat, f->eng, e)) ||
        (rc = keep_mem(p, &m4, mem_ptr(flat), &dsrc, f->eng, e)))
      goto out;
    if (!dnnl_memory_desc_equal(mem_md(flat), smd)) {
      rc = pit_err_set(e, PIT_ELIB, "src/nn/fast_net.c: inner product diff_src is not plain");
      goto out;
    }
    s = NULL;
    dsrc_exec = flat;
  } else if ((rc = slot_mem(p, q(dpd, DNNL_ARG_DIFF_SRC), next_slot(cur_slot), &dsrc, f->eng, e)))
    goto out;
  if (!(s = prim_step(p, p->bwd, &p->nbwd, fl, dpd, e))) {
    rc = e->code;
    goto out;
  }
  arg(s, DNNL_ARG_DIFF_DST, ddst);
  arg(s, DNNL_ARG_WEIGHTS, w_bwd);
  arg(s, DNNL_ARG_DIFF_SRC, dsrc_exec ? dsrc_exec : dsrc);
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

static int build_simple_fwd(struct fast *f, struct plan *p, struct pit_net *net, int i,
                            dnnl_memory_t *cur, struct lstate *ls, struct pit_err *e) {
  const struct pit_layer_spec *L = &net->spec.layer[i];
  const dnnl_memory_desc_t *cmd = mem_md(*cur);
  int rc;
  struct step *s;
  ls->src = *cur;
  if (is_elt(L->kind)) {
    dnnl_eltwise_desc_t d;
    float alpha = L->kind == PIT_L_LEAKYRELU ? L->alpha : 0.0f;
    DN(dnnl_eltwise_forward_desc_init(&d, dnnl_forward_training, elt_alg(L->kind), cmd, alpha, 0.0f));
    DN(dnnl_primitive_desc_create(&ls->fpd, &d, NULL, f->eng, NULL));
    dnnl_memory_desc_t pmd;
    if (is_ref_impl(ls->fpd) && (cmd->ndims == 4 || cmd->ndims == 2)) {
      /* oneDNN's jit forward skips a blocked tensor whose channels leave its last block
       * partly padding (DCGAN D's 1-channel sigmoid in aBcd16b / aBcd8b): a plain copy */
      dnnl_primitive_desc_destroy(ls->fpd);
      ls->fpd = NULL;
      md_tag(&pmd, cmd->ndims, cmd->dims, cmd->ndims == 4 ? dnnl_nchw : dnnl_nc);
      if ((rc = convert(f, p, p->fwd, &p->nfwd, 0, *cur, &pmd, &ls->src, -1, e)))
        return rc;
      cmd = mem_md(ls->src);
      DN(dnnl_eltwise_forward_desc_init(&d, dnnl_forward_training, elt_alg(L->kind), cmd, alpha, 0.0f));
      DN(dnnl_primitive_desc_create(&ls->fpd, &d, NULL, f->eng, NULL));
    }
    /* not after another element-wise layer (its backward reads its output), nor on a
     * tensor a skip connection keeps (a plain copy is this layer's own) */
    int inplace = (i > 0 && !is_elt(net->spec.layer[i - 1].kind) &&
                   net->spec.layer[i - 1].kind != PIT_L_SKIP) || ls->src != *cur;
    if (inplace)
      ls->dst = ls->src;
    else if ((rc = keep_mem(p, cmd, DNNL_MEMORY_ALLOCATE, &ls->dst, f->eng, e)))
      return rc;
    if (!(s = prim_step(p, p->fwd, &p->nfwd, 0, ls->fpd, e)))
      return e->code;
    arg(s, DNNL_ARG_SRC, ls->src);
    arg(s, DNNL_ARG_DST, ls->dst);
  } else if (L->kind == PIT_L_MAXPOOL) {
    dnnl_pooling_v2_desc_t d;
    dnnl_dims_t dd = {p->batch, L->o_c, L->o_h, L->o_w}, st = {L->stride, L->stride},
                k = {L->k, L->k}, dil = {0, 0}, pad = {0, 0};
    dnnl_memory_desc_t dst_any;
    md_tag(&dst_any, 4, dd, dnnl_format_tag_any);
    DN(dnnl_pooling_v2_forward_desc_init(&d, dnnl_forward_training, dnnl_pooling_max, cmd, &dst_any,
                                         st, k, dil, pad, pad));
    DN(dnnl_primitive_desc_create(&ls->fpd, &d, NULL, f->eng, NULL));
    if ((rc = keep_mem(p, q(ls->fpd, DNNL_ARG_DST), DNNL_MEMORY_ALLOCATE, &ls->dst, f->eng, e)))
      return rc;
    if ((rc = keep_mem(p, q(ls->fpd, DNNL_ARG_WORKSPACE), DNNL_MEMORY_ALLOCATE, &ls->ws, f->eng, e)))
      return rc;
    if (!(s = prim_step(p, p->fwd, &p->nfwd, 0, ls->fpd, e)))
      return e->code;
    arg(s, DNNL_ARG_SRC, ls->src);
    arg(s, DNNL_ARG_DST, ls->dst);
    arg(s, DNNL_ARG_WORKSPACE, ls->ws);
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
    md_tag(&ss_md, 2, ssd, dnnl_nc);
    md_tag(&c_md, 1, cd, dnnl_x);
    dnnl_memory_t ss, rmean, rvar;
    /* gamma then beta are contiguous in params: exactly oneDNN's (2, C) scale-shift */
    if ((rc = keep_mem(p, &ss_md, net->params + L->w_off, &ss, f->eng, e)) ||
        (rc = keep_mem(p, &c_md, DNNL_MEMORY_ALLOCATE, &ls->mean, f->eng, e)) ||
        (rc = keep_mem(p, &c_md, DNNL_MEMORY_ALLOCATE, &ls->var, f->eng, e)) ||
        (rc = keep_mem(p, &c_md, net->state + L->s_off, &rmean, f->eng, e)) ||
        (rc = keep_mem(p, &c_md, net->state + L->s_off + L->in_c, &rvar, f->eng, e)) ||
        (rc = keep_mem(p, cmd, DNNL_MEMORY_ALLOCATE, &ls->dst, f->eng, e)))
      return rc;
    ls->w_user = ss;
    if (!(s = prim_step(p, p->fwd, &p->nfwd, F_TRAIN, ls->fpd, e)))
      return e->code;
    arg(s, DNNL_ARG_SRC, ls->src);
    arg(s, DNNL_ARG_SCALE_SHIFT, ss);
    arg(s, DNNL_ARG_MEAN, ls->mean);
    arg(s, DNNL_ARG_VARIANCE, ls->var);
    arg(s, DNNL_ARG_DST, ls->dst);
    if (!(s = add_step(p->fwd, &p->nfwd, F_TRAIN, e)))
      return e->code;
    s->type = S_BNRUN;
    s->dst = mem_ptr(rmean);
    s->dst2 = mem_ptr(rvar);
    s->src = mem_ptr(ls->mean);
    s->src2 = mem_ptr(ls->var);
    s->n = (size_t)L->in_c;
    s->count = (double)p->batch * L->in_h * L->in_w;
    if (!(s = prim_step(p, p->fwd, &p->nfwd, F_EVAL, ls->fpd_inf, e)))
      return e->code;
    arg(s, DNNL_ARG_SRC, ls->src);
    arg(s, DNNL_ARG_SCALE_SHIFT, ss);
    arg(s, DNNL_ARG_MEAN, rmean);
    arg(s, DNNL_ARG_VARIANCE, rvar);
    arg(s, DNNL_ARG_DST, ls->dst);
  } else {
    return pit_err_set(e, PIT_EARG, "src/nn/fast_net.c: layer kind %d not supported", (int)L->kind);
  }
  *cur = ls->dst;
  return 0;
}

static int build_simple_bwd(struct fast *f, struct plan *p, struct pit_net *net, int i,
                            dnnl_memory_t *cur, int *cur_slot, struct lstate *ls,
                            struct pit_err *e) {
  const struct pit_layer_spec *L = &net->spec.layer[i];
  const dnnl_memory_desc_t *smd = mem_md(ls->src), *dmd = mem_md(ls->dst);
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
  if ((rc = convert(f, p, p->bwd, &p->nbwd, fl, *cur, q(pd, DNNL_ARG_DIFF_DST), &ddst, SLOT_CONV, e)))
    goto out;
  if ((rc = slot_mem(p, q(pd, DNNL_ARG_DIFF_SRC), next_slot(cur_slot), &dsrc, f->eng, e)))
    goto out;
  if (!(s = prim_step(p, p->bwd, &p->nbwd, fl, pd, e))) {
    rc = e->code;
    goto out;
  }
  arg(s, DNNL_ARG_DIFF_DST, ddst);
  arg(s, DNNL_ARG_DIFF_SRC, dsrc);
  if (is_elt(L->kind)) {
    arg(s, DNNL_ARG_DST, ls->dst);
  } else if (L->kind == PIT_L_MAXPOOL) {
    arg(s, DNNL_ARG_WORKSPACE, ls->ws);
  } else {
    if ((rc = keep_mem(p, q(pd, DNNL_ARG_DIFF_SCALE_SHIFT), DNNL_MEMORY_ALLOCATE, &dss, f->eng, e)))
      goto out;
    arg(s, DNNL_ARG_SRC, ls->src);
    arg(s, DNNL_ARG_MEAN, ls->mean);
    arg(s, DNNL_ARG_VARIANCE, ls->var);
    arg(s, DNNL_ARG_SCALE_SHIFT, ls->w_user);
    arg(s, DNNL_ARG_DIFF_SCALE_SHIFT, dss);
    struct step *a = add_step(p->bwd, &p->nbwd, F_PG, e);
    if (!a) {
      rc = e->code;
      goto out;
    }
    a->type = S_ACCUM;
    a->dst = net->grads + L->w_off;
    a->src = mem_ptr(dss);
    a->n = 2 * (size_t)L->in_c;
  }
  *cur = dsrc;
out:
  dnnl_primitive_desc_destroy(pd);
  return rc;
}

/* Channel block of a layout fast_pool.c handles (16, 8, 1 = plain NCHW), else 0. */
static int pool_blk(const dnnl_memory_desc_t *md) {
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

static int build_pool_fwd(struct fast *f, struct plan *p, struct pit_net *net, int i,
                          dnnl_memory_t *cur, struct lstate *ls, int relu, struct pit_err *e) {
  const struct pit_layer_spec *L = &net->spec.layer[i];
  const dnnl_memory_desc_t *smd = mem_md(*cur);
  int blk = pool_blk(smd), rc;
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
  if ((rc = keep_mem(p, &dmd, DNNL_MEMORY_ALLOCATE, &ls->dst, f->eng, e)) ||
      (rc = keep_mem(p, &imd, DNNL_MEMORY_ALLOCATE, &ls->ws, f->eng, e)))
    return rc;
  struct step *s = add_step(p->fwd, &p->nfwd, 0, e);
  if (!s)
    return e->code;
  s->type = S_POOLF;
  s->pool = ls->pool;
  arg(s, DNNL_ARG_SRC, ls->src);
  arg(s, DNNL_ARG_DST, ls->dst);
  arg(s, DNNL_ARG_WORKSPACE, ls->ws);
  *cur = ls->dst;
  return 0;
}

static int build_pool_bwd(struct fast *f, struct plan *p, int i, dnnl_memory_t *cur,
                          int *cur_slot, struct lstate *ls, struct pit_err *e) {
  int fl = i == 0 ? F_DX : 0, rc;
  dnnl_memory_t ddst, dsrc;
  if ((rc = convert(f, p, p->bwd, &p->nbwd, fl, *cur, mem_md(ls->dst), &ddst, SLOT_CONV, e)) ||
      (rc = slot_mem(p, mem_md(ls->src), next_slot(cur_slot), &dsrc, f->eng, e)))
    return rc;
  struct step *s = add_step(p->bwd, &p->nbwd, fl, e);
  if (!s)
    return e->code;
  s->type = S_POOLB;
  s->pool = ls->pool;
  arg(s, DNNL_ARG_DIFF_DST, ddst);
  arg(s, DNNL_ARG_WORKSPACE, ls->ws);
  arg(s, DNNL_ARG_DIFF_SRC, dsrc);
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
  struct step *s = add_step(list, n, flags, e);
  if (!s)
    return NULL;
  s->type = type;
  arg(s, 0, a);
  arg(s, 0, b);
  if (c)
    arg(s, 0, c);
  s->n = md_floats(mem_md(a));
  return s;
}

/* The forward step of a custom type whose output is dst (its backward's parameters). */
static const struct step *fwd_step(const struct plan *p, int type, dnnl_memory_t dst) {
  for (int k = 0; k < p->nfwd; k++)
    if (p->fwd[k].type == type && p->fwd[k].args[1].memory == dst)
      return &p->fwd[k];
  return NULL;
}

static int build_shuffle_fwd(struct fast *f, struct plan *p, struct pit_net *net, int i,
                             dnnl_memory_t *cur, struct lstate *ls, struct pit_err *e) {
  const struct pit_layer_spec *L = &net->spec.layer[i];
  int blk = pool_blk(mem_md(*cur)), rc;
  if (blk == 0 || L->in_c % blk || L->o_c % blk)
    blk = 1;
  dnnl_format_tag_t tag = blk == 16 ? dnnl_nChw16c : blk == 8 ? dnnl_nChw8c : dnnl_nchw;
  dnnl_memory_desc_t smd, dmd;
  dnnl_dims_t sd = {p->batch, L->in_c, L->in_h, L->in_w}, dd = {p->batch, L->o_c, L->o_h, L->o_w};
  md_tag(&smd, 4, sd, tag);
  md_tag(&dmd, 4, dd, tag);
  if ((rc = convert(f, p, p->fwd, &p->nfwd, 0, *cur, &smd, &ls->src, -1, e)) ||
      (rc = keep_mem(p, &dmd, DNNL_MEMORY_ALLOCATE, &ls->dst, f->eng, e)))
    return rc;
  struct step *s = custom(p->fwd, &p->nfwd, 0, S_SHUFF, ls->src, ls->dst, NULL, e);
  if (!s)
    return e->code;
  s->shuf = (struct pit_fast_shuffle){.n = p->batch, .c = L->o_c, .h = L->in_h, .w = L->in_w, .r = L->k,
                                      .blk = blk};
  *cur = ls->dst;
  return 0;
}

static int build_shuffle_bwd(struct fast *f, struct plan *p, int i, dnnl_memory_t *cur, int *cur_slot,
                             struct lstate *ls, struct pit_err *e) {
  int fl = i == 0 ? F_DX : 0, rc;
  dnnl_memory_t ddst, dsrc;
  if ((rc = convert(f, p, p->bwd, &p->nbwd, fl, *cur, mem_md(ls->dst), &ddst, SLOT_CONV, e)) ||
      (rc = slot_mem(p, mem_md(ls->src), next_slot(cur_slot), &dsrc, f->eng, e)))
    return rc;
  const struct step *fw = fwd_step(p, S_SHUFF, ls->dst);
  struct step *s = custom(p->bwd, &p->nbwd, fl, S_SHUFB, ddst, dsrc, NULL, e);
  if (!s || !fw)
    return s ? PIT_BUG(e, "pixel shuffle %d lost its forward step", i) : e->code;
  s->shuf = fw->shuf;
  *cur = dsrc;
  return 0;
}

/* SKIPADD forward: dst = cur + (the SKIP's input, in cur's layout). */
static int build_skipadd_fwd(struct fast *f, struct plan *p, const struct lstate *skip, dnnl_memory_t *cur,
                             struct lstate *ls, struct pit_err *e) {
  dnnl_memory_t saved;
  int rc;
  ls->src = *cur;
  if ((rc = convert(f, p, p->fwd, &p->nfwd, 0, skip->src, mem_md(*cur), &saved, -1, e)) ||
      (rc = keep_mem(p, mem_md(*cur), DNNL_MEMORY_ALLOCATE, &ls->dst, f->eng, e)))
    return rc;
  if (!custom(p->fwd, &p->nfwd, 0, S_ADD, *cur, saved, ls->dst, e))
    return e->code;
  *cur = ls->dst;
  return 0;
}

/* SKIPADD backward: the gradient passes through unchanged, and a copy is kept for the SKIP. */
static int build_skipadd_bwd(struct fast *f, struct plan *p, dnnl_memory_t cur, struct lstate *skip,
                             struct pit_err *e) {
  int rc = keep_mem(p, mem_md(cur), DNNL_MEMORY_ALLOCATE, &skip->skipg, f->eng, e);
  if (rc)
    return rc;
  return custom(p->bwd, &p->nbwd, 0, S_COPY, cur, skip->skipg, NULL, e) ? 0 : e->code;
}

/* SKIP backward: the straight path's gradient plus the skip's. */
static int build_skip_bwd(struct fast *f, struct plan *p, dnnl_memory_t *cur, int *cur_slot,
                          const struct lstate *ls, struct pit_err *e) {
  dnnl_memory_t sg, out;
  int rc;
  if ((rc = convert(f, p, p->bwd, &p->nbwd, 0, ls->skipg, mem_md(*cur), &sg, -1, e)) ||
      (rc = slot_mem(p, mem_md(*cur), next_slot(cur_slot), &out, f->eng, e)))
    return rc;
  if (!custom(p->bwd, &p->nbwd, 0, S_ADD, *cur, sg, out, e))
    return e->code;
  *cur = out;
  return 0;
}

static int build_rrdb_fwd(struct fast *f, struct plan *p, struct pit_net *net, int i, dnnl_memory_t *cur,
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
  md_tag(&md, 4, dd, blk == 16 ? dnnl_nChw16c : blk == 8 ? dnnl_nChw8c : dnnl_nchw);
  if ((rc = convert(f, p, p->fwd, &p->nfwd, 0, *cur, &md, &ls->src, -1, e)) ||
      (rc = keep_mem(p, &md, DNNL_MEMORY_ALLOCATE, &ls->dst, f->eng, e)))
    return rc;
  struct step *s = custom(p->fwd, &p->nfwd, 0, S_RRDBF, ls->src, ls->dst, NULL, e);
  if (!s)
    return e->code;
  s->rrdb = r;
  *cur = ls->dst;
  return 0;
}

static int build_rrdb_bwd(struct fast *f, struct plan *p, int i, dnnl_memory_t *cur, int *cur_slot,
                          struct lstate *ls, struct pit_err *e) {
  dnnl_memory_t ddst, dsrc;
  int rc;
  if ((rc = convert(f, p, p->bwd, &p->nbwd, 0, *cur, mem_md(ls->dst), &ddst, SLOT_CONV, e)) ||
      (rc = slot_mem(p, mem_md(ls->src), next_slot(cur_slot), &dsrc, f->eng, e)))
    return rc;
  const struct step *fw = fwd_step(p, S_RRDBF, ls->dst);
  struct step *s = custom(p->bwd, &p->nbwd, 0, S_RRDBB, ddst, dsrc, NULL, e);
  if (!s || !fw)
    return s ? PIT_BUG(e, "RRDB %d lost its forward step", i) : e->code;
  s->rrdb = fw->rrdb;
  s->first = i == 0;
  *cur = dsrc;
  return 0;
}

static void plan_free(struct plan *p) {
  if (!p)
    return;
  for (int i = 0; i < p->nprims; i++)
    dnnl_primitive_destroy(p->prims[i]);
  for (int i = 0; i < p->nmems; i++)
    dnnl_memory_destroy(p->mems[i]);
  for (int i = 0; i < SLOT_N; i++)
    free(p->slot_buf[i]);
  for (int i = p->nrrdb - 1; i >= 0; i--) /* the first owns the scratch the others borrow */
    pit_fast_rrdb_free(p->rrdbs[i]);
  free(p);
}

static int plain_md(dnnl_memory_desc_t *md, int B, int c, int h, int w, int nd) {
  dnnl_dims_t d = {B, c, h, w};
  if (nd == 2)
    return dnnl_memory_desc_init_by_tag(md, 2, d, dnnl_f32, dnnl_nc);
  return dnnl_memory_desc_init_by_tag(md, 4, d, dnnl_f32, dnnl_nchw);
}

static int plan_build(struct fast *f, struct pit_net *net, int B, struct plan **out,
                      struct pit_err *e) {
  const struct pit_model_spec *m = &net->spec;
  struct plan *p = calloc(1, sizeof *p);
  struct lstate *ls = calloc((size_t)m->n, sizeof *ls);
  if (!p || !ls) {
    free(p);
    free(ls);
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  }
  p->batch = B;
  p->model = m->name;
  int rc = 0;
  dnnl_memory_desc_t md;
  plain_md(&md, B, m->in_c, m->in_h, m->in_w, 4);
  dnnl_memory_t cur;
  if ((rc = keep_mem(p, &md, DNNL_MEMORY_NONE, &p->x, f->eng, e)))
    goto fail;
  cur = p->x;
  for (int i = 0; i < m->n && !rc; i++) {
    enum pit_layer_kind k = m->layer[i].kind;
    p->layer = i;
    if (k == PIT_L_RELU && i + 1 < m->n && m->layer[i + 1].kind == PIT_L_MAXPOOL &&
        pool_blk(mem_md(cur))) {
      ls[i].fused_relu = 1; /* the pooling below applies it */
      ls[i].src = ls[i].dst = cur;
    } else if (k == PIT_L_MAXPOOL && pool_blk(mem_md(cur)))
      rc = build_pool_fwd(f, p, net, i, &cur, &ls[i], i > 0 && ls[i - 1].fused_relu, e);
    else if (k == PIT_L_CONV || k == PIT_L_DECONV || k == PIT_L_LINEAR)
      rc = build_weighted_fwd(f, p, net, i, &cur, &ls[i], e);
    else if (k == PIT_L_SHUFFLE)
      rc = build_shuffle_fwd(f, p, net, i, &cur, &ls[i], e);
    else if (k == PIT_L_SKIP)
      ls[i].src = ls[i].dst = cur;
    else if (k == PIT_L_SKIPADD)
      rc = build_skipadd_fwd(f, p, &ls[m->layer[i].pair], &cur, &ls[i], e);
    else if (k == PIT_L_RRDB)
      rc = build_rrdb_fwd(f, p, net, i, &cur, &ls[i], e);
    else
      rc = build_simple_fwd(f, p, net, i, &cur, &ls[i], e);
  }
  if (rc)
    goto fail;
  /* plain output */
  const dnnl_memory_desc_t *lmd = mem_md(cur);
  plain_md(&md, B, m->out_c, m->out_h, m->out_w, lmd->ndims);
  if ((rc = convert(f, p, p->fwd, &p->nfwd, 0, cur, &md, &p->y, -1, e)))
    goto fail;
  if ((rc = keep_mem(p, &md, DNNL_MEMORY_NONE, &p->dy, f->eng, e)))
    goto fail;
  cur = p->dy;
  int cur_slot = SLOT_PONG; /* dy is the caller's: the last layer writes PING */
  for (int i = m->n - 1; i >= 0 && !rc; i--) {
    enum pit_layer_kind k = m->layer[i].kind;
    p->layer = i;
    if (ls[i].fused_relu)
      continue; /* its gradient was applied by the pooling's backward */
    if (ls[i].custom_pool)
      rc = build_pool_bwd(f, p, i, &cur, &cur_slot, &ls[i], e);
    else if (k == PIT_L_SHUFFLE)
      rc = build_shuffle_bwd(f, p, i, &cur, &cur_slot, &ls[i], e);
    else if (k == PIT_L_SKIPADD)
      rc = build_skipadd_bwd(f, p, cur, &ls[m->layer[i].pair], e);
    else if (k == PIT_L_SKIP)
      rc = build_skip_bwd(f, p, &cur, &cur_slot, &ls[i], e);
    else if (k == PIT_L_RRDB)
      rc = build_rrdb_bwd(f, p, i, &cur, &cur_slot, &ls[i], e);
    else if (k == PIT_L_CONV || k == PIT_L_DECONV || k == PIT_L_LINEAR)
      rc = build_weighted_bwd(f, p, net, i, &cur, &cur_slot, &ls[i], e);
    else
      rc = build_simple_bwd(f, p, net, i, &cur, &cur_slot, &ls[i], e);
  }
  if (rc)
    goto fail;
  plain_md(&md, B, m->in_c, m->in_h, m->in_w, 4);
  if ((rc = keep_mem(p, &md, DNNL_MEMORY_NONE, &p->dx, f->eng, e)))
    goto fail;
  /* always a reorder (possibly a plain copy) into the caller's dx */
  if ((rc = reorder_step(f, p, p->bwd, &p->nbwd, F_DX, cur, p->dx, e)))
    goto fail;
  rc = slot_bind(p, e);
fail:
  for (int i = 0; i < m->n; i++) {
    if (ls[i].fpd)
      dnnl_primitive_desc_destroy(ls[i].fpd);
    if (ls[i].fpd_inf)
      dnnl_primitive_desc_destroy(ls[i].fpd_inf);
  }
  free(ls);
  if (rc) {
    plan_free(p);
    return rc;
  }
  *out = p;
  return 0;
}

/* ---- execution ---- */

/* below this many floats an element-wise step stays on the calling thread (its loops are
 * `simd`: -O2 alone leaves such loops scalar) */
#define PAR_MIN ((size_t)1 << 15)

static int run_steps(struct fast *f, struct step *list, int n, int skip, struct pit_err *e) {
  for (int i = 0; i < n; i++) {
    struct step *s = &list[i];
    if (s->flags & skip)
      continue;
    if (s->flags & F_W) { /* a weights reorder: only after the parameters changed */
      if (s->wver == f->wver)
        continue;
      s->wver = f->wver;
    }
    if (s->type == S_PRIM) {
      DN(dnnl_primitive_execute(s->p, f->strm, s->nargs, s->args));
    } else if (s->type == S_ACCUM) {
      float *restrict d = s->dst;
      const float *restrict a = s->src;
      size_t n2 = s->n;
#pragma omp parallel for simd if (n2 >= PAR_MIN)
      for (size_t j = 0; j < n2; j++)
        d[j] += a[j];
    } else if (s->type == S_POOLF) {
      pit_fast_pool_fwd(&s->pool, mem_ptr(s->args[0].memory), mem_ptr(s->args[1].memory),
                        (uint8_t *)mem_ptr(s->args[2].memory));
    } else if (s->type == S_SHUFF) {
      pit_fast_shuffle_fwd(&s->shuf, mem_ptr(s->args[0].memory), mem_ptr(s->args[1].memory));
    } else if (s->type == S_SHUFB) {
      pit_fast_shuffle_bwd(&s->shuf, mem_ptr(s->args[0].memory), mem_ptr(s->args[1].memory));
    } else if (s->type == S_RRDBF) {
      int rc = pit_fast_rrdb_forward(s->rrdb, mem_ptr(s->args[0].memory), mem_ptr(s->args[1].memory), e);
      if (rc)
        return rc;
    } else if (s->type == S_RRDBB) {
      float *dx = s->first && (skip & F_DX) ? NULL : mem_ptr(s->args[1].memory);
      int rc = pit_fast_rrdb_backward(s->rrdb, mem_ptr(s->args[0].memory), dx, !(skip & F_PG), e);
      if (rc)
        return rc;
    } else if (s->type == S_ADD) {
      const float *restrict a = mem_ptr(s->args[0].memory), *restrict b = mem_ptr(s->args[1].memory);
      float *restrict c = mem_ptr(s->args[2].memory);
      const size_t n2 = s->n;
#pragma omp parallel for simd if (n2 >= PAR_MIN)
      for (size_t j = 0; j < n2; j++)
        c[j] = a[j] + b[j];
    } else if (s->type == S_COPY) {
      memcpy(mem_ptr(s->args[1].memory), mem_ptr(s->args[0].memory), s->n * sizeof(float));
    } else if (s->type == S_POOLB) {
      pit_fast_pool_bwd(&s->pool, mem_ptr(s->args[0].memory),
                        (const uint8_t *)mem_ptr(s->args[1].memory), mem_ptr(s->args[2].memory));
    } else { /* S_BNRUN: PyTorch momentum 0.1, unbiased running variance */
      const double mom = 0.1;
      double unb = s->count > 1 ? s->count / (s->count - 1) : 1.0;
      for (size_t j = 0; j < s->n; j++) {
        s->dst[j] = (float)((1 - mom) * s->dst[j] + mom * s->src[j]);
        s->dst2[j] = (float)((1 - mom) * s->dst2[j] + mom * s->src2[j] * unb);
      }
    }
  }
  return 0;
}

static int fast_create(struct pit_net *net, struct pit_err *e) {
  struct fast *f = calloc(1, sizeof *f);
  if (!f)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  net->impl = f;
  f->wver = 1; /* plans start at 0: their first pass lays the weights out */
  DN(dnnl_engine_create(&f->eng, dnnl_cpu, 0));
  DN(dnnl_stream_create(&f->strm, f->eng, dnnl_stream_default_flags));
  /* build the plan for the max batch now: errors surface at creation */
  return plan_build(f, net, net->max_batch, &f->plans[0], e);
}

static void fast_destroy(struct pit_net *net) {
  struct fast *f = net->impl;
  if (!f)
    return;
  for (int i = 0; i < FAST_MAX_PLANS; i++)
    plan_free(f->plans[i]);
  if (f->strm)
    dnnl_stream_destroy(f->strm);
  if (f->eng)
    dnnl_engine_destroy(f->eng);
  free(f);
  net->impl = NULL;
}

static int get_plan(struct fast *f, struct pit_net *net, int B, struct plan **out, struct pit_err *e) {
  int victim = 0;
  for (int i = 0; i < FAST_MAX_PLANS; i++) {
    if (f->plans[i] && f->plans[i]->batch == B) {
      f->plans[i]->used = ++f->clock;
      *out = f->plans[i];
      return 0;
    }
    if (!f->plans[i])
      victim = i;
    else if (f->plans[victim] && f->plans[i]->used < f->plans[victim]->used)
      victim = i;
  }
  if (f->plans[victim] == f->last)
    f->last = NULL;
  plan_free(f->plans[victim]);
  f->plans[victim] = NULL;
  int rc = plan_build(f, net, B, &f->plans[victim], e);
  if (rc)
    return rc;
  f->plans[victim]->used = ++f->clock;
  *out = f->plans[victim];
  return 0;
}

static int fast_forward(struct pit_net *net, const float *x, int batch, int train, const float **y,
                        struct pit_err *e) {
  struct fast *f = net->impl;
  struct plan *p;
  int rc = get_plan(f, net, batch, &p, e);
  if (rc)
    return rc;
  f->last = NULL;
  DN(dnnl_memory_set_data_handle(p->x, (void *)x));
  if ((rc = run_steps(f, p->fwd, p->nfwd, train ? F_EVAL : F_TRAIN, e)))
    return rc;
  DN(dnnl_stream_wait(f->strm));
  if (train)
    f->last = p;
  *y = mem_ptr(p->y);
  return 0;
}

static int fast_backward(struct pit_net *net, const float *dy, float *dx, int param_grads,
                         struct pit_err *e) {
  struct fast *f = net->impl;
  struct plan *p = f->last;
  if (!p)
    return pit_err_set(e, PIT_ESTATE, "backward needs a train forward first (fast backend)");
  DN(dnnl_memory_set_data_handle(p->dy, (void *)dy));
  if (dx)
    DN(dnnl_memory_set_data_handle(p->dx, dx));
  int skip = (param_grads ? 0 : F_PG) | (dx ? 0 : F_DX);
  int rc = run_steps(f, p->bwd, p->nbwd, skip, e);
  if (rc)
    return rc;
  DN(dnnl_stream_wait(f->strm));
  return 0;
}

static void fast_params_changed(struct pit_net *net) {
  struct fast *f = net->impl;
  f->wver++;
}

const struct pit_net_backend pit_net_backend_fast = {fast_create, fast_destroy, fast_forward,
                                                     fast_backward, fast_params_changed};
