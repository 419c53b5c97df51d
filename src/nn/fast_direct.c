/* fast_direct.c — direct C loops for small networks (placeholder: not used yet). */
#include "nn/fast_impl.h"

int pit_fast_direct_create(struct pit_net *net, struct pit_fast_direct **out, struct pit_err *e) {
  (void)net;
  (void)e;
  *out = NULL;
  return 0;
}
void pit_fast_direct_free(struct pit_fast_direct *d) { (void)d; }
int pit_fast_direct_forward(struct pit_fast_direct *d, struct pit_net *net, const float *x,
                            int batch, int train, const float **y, struct pit_err *e) {
  (void)d; (void)net; (void)x; (void)batch; (void)train; (void)y;
  return pit_err_set(e, PIT_ESTATE, "direct path not built");
}
int pit_fast_direct_backward(struct pit_fast_direct *d, struct pit_net *net, const float *dy,
                             float *dx, int param_grads, struct pit_err *e) {
  (void)d; (void)net; (void)dy; (void)dx; (void)param_grads;
  return pit_err_set(e, PIT_ESTATE, "direct path not built");
}
