/* ref_placeholder.c — TEMPORARY stand-in for the reference backend; deleted when ref_net.c lands. */
#include "nn/net_impl.h"

static int nope(struct pit_net *net, struct pit_err *e) {
  (void)net;
  return pit_err_set(e, PIT_ESTATE, "reference backend not built yet");
}
const struct pit_net_backend pit_net_backend_ref = {nope, 0, 0, 0, 0};
