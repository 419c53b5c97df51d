/* fast_impl.h — pieces of the FAST backend shared between its files (private to src/nn).
 * fast_net.c runs networks on oneDNN primitives; fast_pool.c is max pooling (+ the
 * ReLU before it) in C on oneDNN's blocked layout, faster than oneDNN's own. */
#ifndef PIT_NN_FAST_IMPL_H
#define PIT_NN_FAST_IMPL_H

#include <stdint.h>

#include <oneapi/dnnl/dnnl.h>

#include "nn/net_impl.h"

/* PIT_ELIB in e naming file (from its "src/" on) and line and oneDNN's reason for
 * status s; returns PIT_ELIB (fast_net.c). */
int pit_fast_dnnl_err(struct pit_err *e, const char *file, int line, dnnl_status_t s);
/* DN(call): a oneDNN call that returns pit_fast_dnnl_err from the calling
 * function (a `struct pit_err *e` in scope) when it fails. */
#define DN(call)                                                                                   \
  do {                                                                                             \
    dnnl_status_t s_ = (call);                                                                     \
    if (s_ != dnnl_success)                                                                        \
      return pit_fast_dnnl_err(e, __FILE__, __LINE__, s_);                                         \
  } while (0)

/* 1 if the CPU can run code of instruction set isa (isa.c). */
int pit_fast_isa_supported(enum pit_isa isa);
/* Checks a primitive descriptor the fast backend keeps: a oneDNN reference kernel is
 * PIT_ELIB naming `where` under PIT_FAST_STRICT=1, else noted for pit_nn_fast_warning
 * (isa.c). 0 when it may be used. */
int pit_fast_check_impl(const_dnnl_primitive_desc_t pd, const char *where, struct pit_err *e);

/* Max pooling on a channel-blocked layout (fast_pool.c): n samples, cb channel
 * blocks of blk lanes (16, 8, or 1 = plain NCHW), h x w → oh x ow, window k,
 * stride s, no padding; relu=1 fuses the ReLU that precedes the pooling. isa: which
 * version runs (pit_nn_isa(); every version gives bitwise the same results). */
struct pit_fast_pool {
  int n, cb, blk, h, w, oh, ow, k, s, relu;
  enum pit_isa isa;
};
void pit_fast_pool_fwd(const struct pit_fast_pool *p, const float *x, float *y, uint8_t *idx);
void pit_fast_pool_bwd(const struct pit_fast_pool *p, const float *dy, const uint8_t *idx, float *dx);

/* PixelShuffle on a channel-blocked layout (fast_shuffle.c): n samples of c*r*r
 * channels of h x w in → c channels of h*r x w*r out, lanes blk (16, 8, 1). */
struct pit_fast_shuffle {
  int n, c, h, w, r, blk;
};
void pit_fast_shuffle_fwd(const struct pit_fast_shuffle *p, const float *x, float *y);
void pit_fast_shuffle_bwd(const struct pit_fast_shuffle *p, const float *dy, float *dx);

/* ESRGAN's residual-in-residual dense block on oneDNN (fast_rrdb.c), for one batch size
 * B; input and output (B, F, H, W) in the channel block pit_fast_rrdb_blk gives (16, 8 or
 * 1 = nchw: oneDNN's choice for this CPU). where: the layer, for messages. params/grads: the
 * network's arrays (offsets of nn/rrdb.h). share: an RRDB of the same plan whose scratch
 * this one borrows (NULL: its own; share must outlive it). engine and stream are borrowed. Backward
 * uses the activations of the last forward; dx may be NULL; param_grads=1 ADDS the
 * parameter gradients into grads. */
struct pit_fast_rrdb;
int pit_fast_rrdb_create(struct pit_fast_rrdb **out, const struct pit_layer_spec *L, int B,
                         float *params, float *grads, struct pit_fast_rrdb *share, dnnl_engine_t eng,
                         dnnl_stream_t strm, const char *where, struct pit_err *e);
int pit_fast_rrdb_blk(const struct pit_fast_rrdb *r);
void pit_fast_rrdb_free(struct pit_fast_rrdb *r);
int pit_fast_rrdb_forward(struct pit_fast_rrdb *r, const float *x, float *y, struct pit_err *e);
int pit_fast_rrdb_backward(struct pit_fast_rrdb *r, const float *dy, float *dx, int param_grads,
                           struct pit_err *e);

/* Winograd F(4x4, 3x3) for a 3x3 stride-1 pad-1 convolution of one (C, H, W) image in the
 * blocked layout of blk (8 or 16) lanes into (K, H, W) (fast_wino.c, where oneDNN has no
 * Winograd kernel): flip 0 takes weights (K, C, 3, 3); flip 1 computes the backward-data
 * pass of a convolution with weights (C, K, 3, 3). Scratch V, U, M of
 * pit_fast_wino_floats('V' | 'U' | 'M') floats is the caller's; act applies LeakyReLU
 * with slope; bias may be NULL. where: the layer, for messages. */
struct pit_fast_wino;
int pit_fast_wino_create(struct pit_fast_wino **out, int C, int K, int H, int W, int blk, int flip,
                         dnnl_engine_t eng, const char *where, struct pit_err *e);
size_t pit_fast_wino_floats(const struct pit_fast_wino *w, char which);
int pit_fast_wino_run(struct pit_fast_wino *w, const float *x, const float *wt, const float *bias, int act,
                      float slope, float *y, float *V, float *U, float *M, dnnl_stream_t strm,
                      struct pit_err *e);
void pit_fast_wino_free(struct pit_fast_wino *w);

#endif
