/* backend_placeholder.c — TEMPORARY: stands in for the ref and fast backends
 * until ref_net.c / fast_net.c land; delete this file when they do. */
#include "nn/net_impl.h"

static int nope(struct pit_net *net, struct pit_err *e) {
  (void)net;
  return pit_err_set(e, PIT_ESTATE, "network backend not built yet");
}
const struct pit_net_backend pit_net_backend_ref = {nope, 0, 0, 0, 0};
const struct pit_net_backend pit_net_backend_fast = {nope, 0, 0, 0, 0};
