/* fast_impl.h — pieces of the FAST backend shared between its files (private to src/nn).
 * fast_net.c runs networks on oneDNN; fast_direct.c runs small networks (where
 * oneDNN's per-primitive overhead dominates) with direct C loops. */
#ifndef PIT_NN_FAST_IMPL_H
#define PIT_NN_FAST_IMPL_H

#include "nn/net_impl.h"

struct pit_fast_direct;

/* Sets *out to a direct-loop implementation if this net should use one, else NULL. */
int pit_fast_direct_create(struct pit_net *net, struct pit_fast_direct **out, struct pit_err *e);
void pit_fast_direct_free(struct pit_fast_direct *d);
int pit_fast_direct_forward(struct pit_fast_direct *d, struct pit_net *net, const float *x,
                            int batch, int train, const float **y, struct pit_err *e);
int pit_fast_direct_backward(struct pit_fast_direct *d, struct pit_net *net, const float *dy,
                             float *dx, int param_grads, struct pit_err *e);

#endif
