/* fast_impl.h — pieces of the FAST backend shared between its files (private to src/nn).
 * fast_net.c runs networks on oneDNN; fast_direct.c runs small networks (where
 * oneDNN's per-primitive overhead dominates) with direct C loops. */
#ifndef PIT_NN_FAST_IMPL_H
#define PIT_NN_FAST_IMPL_H

#include <stdint.h>

#include "nn/net_impl.h"

/* Max pooling on a channel-blocked layout (fast_pool.c): n samples, cb channel
 * blocks of blk lanes (16, 8, or 1 = plain NCHW), h x w → oh x ow, window k,
 * stride s, no padding; relu=1 fuses the ReLU that precedes the pooling. */
struct pit_fast_pool {
  int n, cb, blk, h, w, oh, ow, k, s, relu;
};
void pit_fast_pool_fwd(const struct pit_fast_pool *p, const float *x, float *y, uint8_t *idx);
void pit_fast_pool_bwd(const struct pit_fast_pool *p, const float *dy, const uint8_t *idx, float *dx);

struct pit_fast_direct;

/* Sets *out to a direct-loop implementation if this net should use one, else NULL. */
int pit_fast_direct_create(struct pit_net *net, struct pit_fast_direct **out, struct pit_err *e);
void pit_fast_direct_free(struct pit_fast_direct *d);
int pit_fast_direct_forward(struct pit_fast_direct *d, struct pit_net *net, const float *x,
                            int batch, int train, const float **y, struct pit_err *e);
int pit_fast_direct_backward(struct pit_fast_direct *d, struct pit_net *net, const float *dy,
                             float *dx, int param_grads, struct pit_err *e);

#endif
