/* net.c — struct pit_net: owns the flat parameter, gradient and state arrays
 * (layout in pitstop/nn.h) and dispatches to a backend (ref or fast). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nn/net_impl.h"

int pit_net_create(struct pit_net **out, const struct pit_model_spec *spec, int max_batch,
                   enum pit_backend be, struct pit_err *e) {
  *out = NULL;
  if (max_batch <= 0)
    return pit_err_set(e, PIT_EARG, "batch size must be positive, not %d", max_batch);
  struct pit_net *net = calloc(1, sizeof *net);
  if (!net)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  net->spec = *spec;
  net->backend = be;
  net->max_batch = max_batch;
  net->ops = be == PIT_BACKEND_FAST ? &pit_net_backend_fast : &pit_net_backend_ref;
  size_t np = spec->nparams ? spec->nparams : 1, ns = spec->nstate ? spec->nstate : 1;
  net->params = aligned_alloc(64, (np * sizeof(float) + 63) / 64 * 64);
  /* gradients from calloc: a large block comes as fresh zero pages, resident only once
   * written (a frozen network's, e.g. esrgan's VGG19: 80 MB, never are) */
  net->grads_raw = calloc(np * sizeof(float) + 64, 1);
  if (net->grads_raw)
    net->grads = (float *)(((uintptr_t)net->grads_raw + 63) & ~(uintptr_t)63);
  net->state = aligned_alloc(64, (ns * sizeof(float) + 63) / 64 * 64);
  if (!net->params || !net->grads || !net->state) {
    pit_net_free(net);
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  }
  memset(net->params, 0, np * sizeof(float));
  pit_init_state(spec, net->state);
  int rc = net->ops->create(net, e);
  if (rc) {
    net->ops = NULL;
    pit_net_free(net);
    return rc;
  }
  *out = net;
  return 0;
}

void pit_net_free(struct pit_net *net) {
  if (!net)
    return;
  if (net->ops && net->ops->destroy)
    net->ops->destroy(net);
  free(net->params);
  free(net->grads_raw);
  free(net->state);
  free(net);
}

const struct pit_model_spec *pit_net_spec(const struct pit_net *net) { return &net->spec; }
float *pit_net_params(struct pit_net *net) { return net->params; }
float *pit_net_grads(struct pit_net *net) { return net->grads; }
float *pit_net_state(struct pit_net *net) { return net->state; }

/* In chunks over the OpenMP threads: ESRGAN's 38.5M gradients are 154 MB, and one thread's
 * memset does not use the memory bandwidth two can. */
void pit_net_zero_grad(struct pit_net *net) {
  const size_t n = net->spec.nparams, chunk = (size_t)1 << 18;
  const long nchunks = (long)((n + chunk - 1) / chunk);
#pragma omp parallel for if (nchunks > 1)
  for (long k = 0; k < nchunks; k++) {
    size_t lo = (size_t)k * chunk, len = n - lo < chunk ? n - lo : chunk;
    memset(net->grads + lo, 0, len * sizeof(float));
  }
}

int pit_net_forward(struct pit_net *net, const float *x, int batch, int train, const float **y,
                    struct pit_err *e) {
  if (batch <= 0 || batch > net->max_batch)
    return pit_err_set(e, PIT_EARG, "batch %d outside 1..%d", batch, net->max_batch);
  return net->ops->forward(net, x, batch, train, y, e);
}

int pit_net_backward(struct pit_net *net, const float *dy, float *dx, int param_grads,
                     struct pit_err *e) {
  return net->ops->backward(net, dy, dx, param_grads, e);
}

void pit_net_params_changed(struct pit_net *net) {
  if (net->ops->params_changed)
    net->ops->params_changed(net);
}
