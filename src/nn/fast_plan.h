/* fast_plan.h — private to the FAST backend's plan (fast_net.c: the plan's
 * bookkeeping, plan_build and execution; fast_layers.c: each layer kind's forward
 * and backward steps): the plan, its steps, the per-layer build state and the
 * functions the two files share. */
#ifndef PIT_FAST_PLAN_H
#define PIT_FAST_PLAN_H

#include <oneapi/dnnl/dnnl.h>

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

/* ---- one layer kind at a time: what a layer's forward build leaves its backward ---- */

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

/* Plan bookkeeping (fast_net.c). */
int pit_fast_keep_mem(struct plan *p, const dnnl_memory_desc_t *md, void *handle, dnnl_memory_t *out,
                      dnnl_engine_t eng, struct pit_err *e);
int pit_fast_slot_mem(struct plan *p, const dnnl_memory_desc_t *md, int slot, dnnl_memory_t *out,
                      dnnl_engine_t eng, struct pit_err *e);
struct step *pit_fast_add_step(struct step *list, int *n, int flags, struct pit_err *e);
int pit_fast_prim_step(struct plan *p, struct step *list, int *n, int flags, const_dnnl_primitive_desc_t pd,
                       struct step **out, struct pit_err *e);
void pit_fast_arg(struct step *s, int a, dnnl_memory_t m);
const dnnl_memory_desc_t *pit_fast_mem_md(dnnl_memory_t m);
float *pit_fast_mem_ptr(dnnl_memory_t m);
int pit_fast_convert(struct fast *f, struct plan *p, struct step *list, int *n, int flags,
                     dnnl_memory_t from, const dnnl_memory_desc_t *want, dnnl_memory_t *out,
                     int slot, struct pit_err *e);
int pit_fast_accumulate(struct fast *f, struct plan *p, dnnl_memory_t g, const dnnl_memory_desc_t *user_md,
                        float *dst, size_t n, struct pit_err *e);
const dnnl_memory_desc_t *pit_fast_q(const_dnnl_primitive_desc_t pd, int argk);
int pit_fast_is_ref_impl(const_dnnl_primitive_desc_t pd);
void pit_fast_md_tag(dnnl_memory_desc_t *md, int nd, const dnnl_dims_t dims, dnnl_format_tag_t tag);

/* One layer kind at a time (fast_layers.c): a forward builder appends the layer's
 * forward steps and records in its struct lstate what its backward needs; a
 * backward builder appends the backward steps (second pass, last layer first). */
int pit_fast_build_weighted_fwd(struct fast *f, struct plan *p, struct pit_net *net, int i,
                                dnnl_memory_t *cur, struct lstate *ls, struct pit_err *e);
int pit_fast_build_weighted_bwd(struct fast *f, struct plan *p, struct pit_net *net, int i,
                                dnnl_memory_t *cur, int *cur_slot, struct lstate *ls,
                                struct pit_err *e);
int pit_fast_build_simple_fwd(struct fast *f, struct plan *p, struct pit_net *net, int i,
                              dnnl_memory_t *cur, struct lstate *ls, struct pit_err *e);
int pit_fast_build_simple_bwd(struct fast *f, struct plan *p, struct pit_net *net, int i,
                              dnnl_memory_t *cur, int *cur_slot, struct lstate *ls,
                              struct pit_err *e);
int pit_fast_pool_blk(const dnnl_memory_desc_t *md);
int pit_fast_build_pool_fwd(struct fast *f, struct plan *p, struct pit_net *net, int i,
                            dnnl_memory_t *cur, struct lstate *ls, int relu, struct pit_err *e);
int pit_fast_build_pool_bwd(struct fast *f, struct plan *p, int i, dnnl_memory_t *cur,
                            int *cur_slot, struct lstate *ls, struct pit_err *e);
int pit_fast_build_shuffle_fwd(struct fast *f, struct plan *p, struct pit_net *net, int i,
                               dnnl_memory_t *cur, struct lstate *ls, struct pit_err *e);
int pit_fast_build_shuffle_bwd(struct fast *f, struct plan *p, int i, dnnl_memory_t *cur, int *cur_slot,
                               struct lstate *ls, struct pit_err *e);
int pit_fast_build_skipadd_fwd(struct fast *f, struct plan *p, const struct lstate *skip, dnnl_memory_t *cur,
                               struct lstate *ls, struct pit_err *e);
int pit_fast_build_skipadd_bwd(struct fast *f, struct plan *p, dnnl_memory_t cur, struct lstate *skip,
                               struct pit_err *e);
int pit_fast_build_skip_bwd(struct fast *f, struct plan *p, dnnl_memory_t *cur, int *cur_slot,
                            const struct lstate *ls, struct pit_err *e);
int pit_fast_build_rrdb_fwd(struct fast *f, struct plan *p, struct pit_net *net, int i, dnnl_memory_t *cur,
                            struct lstate *ls, struct pit_err *e);
int pit_fast_build_rrdb_bwd(struct fast *f, struct plan *p, int i, dnnl_memory_t *cur, int *cur_slot,
                            struct lstate *ls, struct pit_err *e);

#endif
