/* rrdb.h — the inside of an ESRGAN residual-in-residual dense block (PIT_L_RRDB),
 * shared by the model bookkeeping, the initialiser and both backends (private to src/nn).
 *
 * An RRDB layer L with F = L->in_c = L->o_c filters on an H x W plane holds 3 dense
 * blocks d = 0..2 of 5 convolutions j = 1..5; conv j is Conv2d(j*F → F, 3x3, stride 1,
 * pad 1, bias) reading the concatenation [x, o1, ..., o_{j-1}] (j*F channels) of the
 * block input x and the earlier outputs. Its parameters, weight (F, j*F, 3, 3) then bias
 * (F), follow one another in (d, j) order from L->w_off: PyTorch-GAN's state_dict order.
 */
#ifndef PIT_NN_RRDB_H
#define PIT_NN_RRDB_H

#include "pitstop/nn.h"

#define PIT_RRDB_DENSE 3 /* dense blocks per RRDB */
#define PIT_RRDB_CONVS 5 /* convolutions per dense block */

/* Floats of one dense block's parameters for F filters. */
static inline size_t pit_rrdb_dense_params(int F) {
  size_t n = 0;
  for (int j = 1; j <= PIT_RRDB_CONVS; j++)
    n += (size_t)F * j * F * 9 + (size_t)F;
  return n;
}

/* The conv layer spec of dense block d, conv j (1-based) of RRDB L, with w_off/b_off
 * absolute offsets into the network's parameter array. */
static inline struct pit_layer_spec pit_rrdb_conv(const struct pit_layer_spec *L, int d, int j) {
  const int F = L->in_c;
  size_t off = L->w_off + (size_t)d * pit_rrdb_dense_params(F);
  for (int i = 1; i < j; i++)
    off += (size_t)F * i * F * 9 + (size_t)F;
  struct pit_layer_spec c = {.kind = PIT_L_CONV, .out_c = F, .k = 3, .stride = 1, .pad = 1,
                             .bias = 1, .in_c = j * F, .in_h = L->in_h, .in_w = L->in_w,
                             .o_c = F, .o_h = L->in_h, .o_w = L->in_w};
  c.w_off = off;
  c.w_len = (size_t)F * j * F * 9;
  c.b_off = off + c.w_len;
  c.b_len = (size_t)F;
  c.flops_fwd = 2.0 * (double)c.w_len * L->in_h * L->in_w;
  return c;
}

#endif
