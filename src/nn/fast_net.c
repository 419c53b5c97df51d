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
 * This file holds the plan's bookkeeping, plan_build and the execution; each layer
 * kind's steps are fast_layers.c's (fast_plan.h between them).
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

#include "nn/fast_plan.h"

int pit_fast_dnnl_err(struct pit_err *e, const char *file, int line, dnnl_status_t s) {
  const char *src = NULL;
  for (const char *q = strstr(file, "src/"); q; q = strstr(q + 1, "src/"))
    src = q;
  return pit_err_set(e, PIT_ELIB, "%s:%d: oneDNN call failed: %s", src ? src : file, line,
                     dnnl_status2str(s));
}

/* ---- plan object bookkeeping ---- */

int pit_fast_keep_mem(struct plan *p, const dnnl_memory_desc_t *md, void *handle, dnnl_memory_t *out,
                      dnnl_engine_t eng, struct pit_err *e) {
  if (p->nmems >= FAST_MAX_OBJS)
    return pit_err_set(e, PIT_ESTATE, "src/nn/fast_net.c: too many oneDNN memories in one plan");
  DN(dnnl_memory_create(out, md, eng, handle));
  p->mems[p->nmems++] = *out;
  return 0;
}

/* A memory whose buffer is backward slot `slot` (bound when the plan is complete). */
int pit_fast_slot_mem(struct plan *p, const dnnl_memory_desc_t *md, int slot, dnnl_memory_t *out,
                      dnnl_engine_t eng, struct pit_err *e) {
  if (slot < 0)
    return pit_fast_keep_mem(p, md, DNNL_MEMORY_ALLOCATE, out, eng, e);
  int rc = pit_fast_keep_mem(p, md, DNNL_MEMORY_NONE, out, eng, e);
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

struct step *pit_fast_add_step(struct step *list, int *n, int flags, struct pit_err *e) {
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

/* A primitive from pd (kept by the plan) and the step appended to list that runs it
 * (*out), its arguments still to add. 0, or an error (e set), as the other plan builders. */
int pit_fast_prim_step(struct plan *p, struct step *list, int *n, int flags, const_dnnl_primitive_desc_t pd,
                       struct step **out, struct pit_err *e) {
  if (p->nprims >= FAST_MAX_OBJS)
    return pit_err_set(e, PIT_ESTATE, "src/nn/fast_net.c: too many oneDNN primitives in one plan");
  char where[96];
  snprintf(where, sizeof where, "%s layer %d", p->model, p->layer);
  int rc = pit_fast_check_impl(pd, where, e);
  if (rc)
    return rc;
  dnnl_primitive_t prim;
  dnnl_status_t st = dnnl_primitive_create(&prim, pd);
  if (st != dnnl_success)
    return pit_fast_dnnl_err(e, __FILE__, __LINE__, st);
  p->prims[p->nprims++] = prim;
  if (!(*out = pit_fast_add_step(list, n, flags, e)))
    return e->code;
  (*out)->p = prim;
  return 0;
}

void pit_fast_arg(struct step *s, int a, dnnl_memory_t m) {
  s->args[s->nargs].arg = a;
  s->args[s->nargs].memory = m;
  s->nargs++;
}

const dnnl_memory_desc_t *pit_fast_mem_md(dnnl_memory_t m) {
  const dnnl_memory_desc_t *md = NULL;
  dnnl_memory_get_memory_desc(m, &md);
  return md;
}

float *pit_fast_mem_ptr(dnnl_memory_t m) {
  void *h = NULL;
  dnnl_memory_get_data_handle(m, &h);
  return h;
}

/* A reorder step appended to list: copies memory `from` into `to` (layouts may differ). */
static int reorder_step(struct fast *f, struct plan *p, struct step *list, int *n, int flags,
                        dnnl_memory_t from, dnnl_memory_t to, struct pit_err *e) {
  dnnl_primitive_desc_t pd;
  DN(dnnl_reorder_primitive_desc_create(&pd, pit_fast_mem_md(from), f->eng, pit_fast_mem_md(to), f->eng, NULL));
  struct step *s;
  int rc = pit_fast_prim_step(p, list, n, flags, pd, &s, e);
  dnnl_primitive_desc_destroy(pd);
  if (rc)
    return rc;
  pit_fast_arg(s, DNNL_ARG_FROM, from);
  pit_fast_arg(s, DNNL_ARG_TO, to);
  return 0;
}

/* *out = `from` if it already has layout `want`, else a new memory of layout `want`
 * filled by a reorder step appended to list. */
int pit_fast_convert(struct fast *f, struct plan *p, struct step *list, int *n, int flags,
                     dnnl_memory_t from, const dnnl_memory_desc_t *want, dnnl_memory_t *out,
                     int slot, struct pit_err *e) {
  if (dnnl_memory_desc_equal(pit_fast_mem_md(from), want)) {
    *out = from;
    return 0;
  }
  int rc = pit_fast_slot_mem(p, want, slot, out, f->eng, e);
  if (rc)
    return rc;
  return reorder_step(f, p, list, n, flags, from, *out, e);
}

/* Gradient `g` (a memory of oneDNN's layout) → plain `user_md` → added into grads+off. */
int pit_fast_accumulate(struct fast *f, struct plan *p, dnnl_memory_t g, const dnnl_memory_desc_t *user_md,
                        float *dst, size_t n, struct pit_err *e) {
  dnnl_memory_t plain;
  int rc = pit_fast_convert(f, p, p->bwd, &p->nbwd, F_PG, g, user_md, &plain, -1, e);
  if (rc)
    return rc;
  struct step *s = pit_fast_add_step(p->bwd, &p->nbwd, F_PG, e);
  if (!s)
    return e->code;
  s->type = S_ACCUM;
  s->dst = dst;
  s->src = pit_fast_mem_ptr(plain);
  s->n = n;
  return 0;
}

const dnnl_memory_desc_t *pit_fast_q(const_dnnl_primitive_desc_t pd, int argk) {
  return dnnl_primitive_desc_query_md(pd, dnnl_query_exec_arg_md, argk);
}

int pit_fast_is_ref_impl(const_dnnl_primitive_desc_t pd) {
  const char *name = NULL;
  if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &name) != dnnl_success || !name)
    return 0;
  return strncmp(name, "ref", 3) == 0;
}

void pit_fast_md_tag(dnnl_memory_desc_t *md, int nd, const dnnl_dims_t dims, dnnl_format_tag_t tag) {
  dnnl_memory_desc_init_by_tag(md, nd, dims, dnnl_f32, tag);
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
  if ((rc = pit_fast_keep_mem(p, &md, DNNL_MEMORY_NONE, &p->x, f->eng, e)))
    goto fail;
  cur = p->x;
  for (int i = 0; i < m->n && !rc; i++) {
    enum pit_layer_kind k = m->layer[i].kind;
    p->layer = i;
    if (k == PIT_L_RELU && i + 1 < m->n && m->layer[i + 1].kind == PIT_L_MAXPOOL &&
        pit_fast_pool_blk(pit_fast_mem_md(cur))) {
      ls[i].fused_relu = 1; /* the pooling below applies it */
      ls[i].src = ls[i].dst = cur;
    } else if (k == PIT_L_MAXPOOL && pit_fast_pool_blk(pit_fast_mem_md(cur)))
      rc = pit_fast_build_pool_fwd(f, p, net, i, &cur, &ls[i], i > 0 && ls[i - 1].fused_relu, e);
    else if (k == PIT_L_CONV || k == PIT_L_DECONV || k == PIT_L_LINEAR)
      rc = pit_fast_build_weighted_fwd(f, p, net, i, &cur, &ls[i], e);
    else if (k == PIT_L_SHUFFLE)
      rc = pit_fast_build_shuffle_fwd(f, p, net, i, &cur, &ls[i], e);
    else if (k == PIT_L_SKIP)
      ls[i].src = ls[i].dst = cur;
    else if (k == PIT_L_SKIPADD)
      rc = pit_fast_build_skipadd_fwd(f, p, &ls[m->layer[i].pair], &cur, &ls[i], e);
    else if (k == PIT_L_RRDB)
      rc = pit_fast_build_rrdb_fwd(f, p, net, i, &cur, &ls[i], e);
    else
      rc = pit_fast_build_simple_fwd(f, p, net, i, &cur, &ls[i], e);
  }
  if (rc)
    goto fail;
  /* plain output */
  const dnnl_memory_desc_t *lmd = pit_fast_mem_md(cur);
  plain_md(&md, B, m->out_c, m->out_h, m->out_w, lmd->ndims);
  if ((rc = pit_fast_convert(f, p, p->fwd, &p->nfwd, 0, cur, &md, &p->y, -1, e)))
    goto fail;
  if ((rc = pit_fast_keep_mem(p, &md, DNNL_MEMORY_NONE, &p->dy, f->eng, e)))
    goto fail;
  cur = p->dy;
  int cur_slot = SLOT_PONG; /* dy is the caller's: the last layer writes PING */
  for (int i = m->n - 1; i >= 0 && !rc; i--) {
    enum pit_layer_kind k = m->layer[i].kind;
    p->layer = i;
    if (ls[i].fused_relu)
      continue; /* its gradient was applied by the pooling's backward */
    if (ls[i].custom_pool)
      rc = pit_fast_build_pool_bwd(f, p, i, &cur, &cur_slot, &ls[i], e);
    else if (k == PIT_L_SHUFFLE)
      rc = pit_fast_build_shuffle_bwd(f, p, i, &cur, &cur_slot, &ls[i], e);
    else if (k == PIT_L_SKIPADD)
      rc = pit_fast_build_skipadd_bwd(f, p, cur, &ls[m->layer[i].pair], e);
    else if (k == PIT_L_SKIP)
      rc = pit_fast_build_skip_bwd(f, p, &cur, &cur_slot, &ls[i], e);
    else if (k == PIT_L_RRDB)
      rc = pit_fast_build_rrdb_bwd(f, p, i, &cur, &cur_slot, &ls[i], e);
    else if (k == PIT_L_CONV || k == PIT_L_DECONV || k == PIT_L_LINEAR)
      rc = pit_fast_build_weighted_bwd(f, p, net, i, &cur, &cur_slot, &ls[i], e);
    else
      rc = pit_fast_build_simple_bwd(f, p, net, i, &cur, &cur_slot, &ls[i], e);
  }
  if (rc)
    goto fail;
  plain_md(&md, B, m->in_c, m->in_h, m->in_w, 4);
  if ((rc = pit_fast_keep_mem(p, &md, DNNL_MEMORY_NONE, &p->dx, f->eng, e)))
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
      pit_fast_pool_fwd(&s->pool, pit_fast_mem_ptr(s->args[0].memory), pit_fast_mem_ptr(s->args[1].memory),
                        (uint8_t *)pit_fast_mem_ptr(s->args[2].memory));
    } else if (s->type == S_SHUFF) {
      pit_fast_shuffle_fwd(&s->shuf, pit_fast_mem_ptr(s->args[0].memory), pit_fast_mem_ptr(s->args[1].memory));
    } else if (s->type == S_SHUFB) {
      pit_fast_shuffle_bwd(&s->shuf, pit_fast_mem_ptr(s->args[0].memory), pit_fast_mem_ptr(s->args[1].memory));
    } else if (s->type == S_RRDBF) {
      int rc = pit_fast_rrdb_forward(s->rrdb, pit_fast_mem_ptr(s->args[0].memory), pit_fast_mem_ptr(s->args[1].memory), e);
      if (rc)
        return rc;
    } else if (s->type == S_RRDBB) {
      float *dx = s->first && (skip & F_DX) ? NULL : pit_fast_mem_ptr(s->args[1].memory);
      int rc = pit_fast_rrdb_backward(s->rrdb, pit_fast_mem_ptr(s->args[0].memory), dx, !(skip & F_PG), e);
      if (rc)
        return rc;
    } else if (s->type == S_ADD) {
      const float *restrict a = pit_fast_mem_ptr(s->args[0].memory), *restrict b = pit_fast_mem_ptr(s->args[1].memory);
      float *restrict c = pit_fast_mem_ptr(s->args[2].memory);
      const size_t n2 = s->n;
#pragma omp parallel for simd if (n2 >= PAR_MIN)
      for (size_t j = 0; j < n2; j++)
        c[j] = a[j] + b[j];
    } else if (s->type == S_COPY) {
      memcpy(pit_fast_mem_ptr(s->args[1].memory), pit_fast_mem_ptr(s->args[0].memory), s->n * sizeof(float));
    } else if (s->type == S_POOLB) {
      pit_fast_pool_bwd(&s->pool, pit_fast_mem_ptr(s->args[0].memory),
                        (const uint8_t *)pit_fast_mem_ptr(s->args[1].memory), pit_fast_mem_ptr(s->args[2].memory));
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
  *y = pit_fast_mem_ptr(p->y);
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
