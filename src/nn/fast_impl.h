/* fast_impl.h — pieces of the FAST backend shared between its files (private to src/nn).
 * fast_net.c runs networks on oneDNN primitives; fast_pool.c is max pooling (+ the
 * ReLU before it) in C on oneDNN's blocked layout, faster than oneDNN's own. */
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

#endif
