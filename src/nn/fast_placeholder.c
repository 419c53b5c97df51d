/* fast_placeholder.c — TEMPORARY stand-in for the fast backend; deleted when fast_net.c lands. */
#include "nn/net_impl.h"

static int nope(struct pit_net *net, struct pit_err *e) {
  (void)net;
  return pit_err_set(e, PIT_ESTATE, "fast backend not built yet");
}
const struct pit_net_backend pit_net_backend_fast = {nope, 0, 0, 0, 0};
