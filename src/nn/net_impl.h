/* net_impl.h — what a network backend provides to net.c (private to src/nn).
 * net.c owns the params/grads/state arrays and the spec; a backend owns its
 * activations, workspaces and any re-laid-out copies of the parameters. */
#ifndef PIT_NN_NET_IMPL_H
#define PIT_NN_NET_IMPL_H

#include "pitstop/nn.h"

struct pit_net {
  struct pit_model_spec spec;
  enum pit_backend backend;
  int max_batch;
  float *params;  /* (nparams) */
  float *grads;   /* (nparams), 64-byte aligned inside grads_raw */
  void *grads_raw; /* what calloc returned (freed) */
  float *state;   /* (nstate) */
  void *impl;     /* backend-private */
  const struct pit_net_backend *ops;
};

struct pit_net_backend {
  int (*create)(struct pit_net *net, struct pit_err *e);
  void (*destroy)(struct pit_net *net);
  int (*forward)(struct pit_net *net, const float *x, int batch, int train, const float **y,
                 struct pit_err *e);
  int (*backward)(struct pit_net *net, const float *dy, float *dx, int param_grads,
                  struct pit_err *e);
  void (*params_changed)(struct pit_net *net); /* may be NULL */
};

extern const struct pit_net_backend pit_net_backend_ref;
extern const struct pit_net_backend pit_net_backend_fast;

#endif
