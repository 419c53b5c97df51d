/* init.c — deterministic parameter initialisation with PyTorch's distributions
 * (not its random stream): default Conv/Linear init and DCGAN's weights_init. */
#include <math.h>

#include "nn/rrdb.h"
#include "pitstop/nn.h"

static size_t fan_in(const struct pit_layer_spec *L) {
  switch (L->kind) {
  case PIT_L_CONV:
    return (size_t)L->in_c * L->k * L->k;
  case PIT_L_DECONV: /* PyTorch computes fan_in from weight dim 1 (out_c) × k × k */
    return (size_t)L->out_c * L->k * L->k;
  case PIT_L_LINEAR:
    return (size_t)L->in_c * L->in_h * L->in_w;
  default:
    return 1;
  }
}

/* U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for a weighted layer's weight then bias. */
static void init_uniform(const struct pit_layer_spec *L, float *params, struct pit_rng *r) {
  double bound = 1.0 / sqrt((double)fan_in(L));
  for (size_t j = 0; j < L->w_len; j++)
    params[L->w_off + j] = (float)((2.0 * pit_rng_uniform(r) - 1.0) * bound);
  for (size_t j = 0; j < L->b_len; j++)
    params[L->b_off + j] = (float)((2.0 * pit_rng_uniform(r) - 1.0) * bound);
}

void pit_init_default(const struct pit_model_spec *m, float *params, uint64_t seed) {
  struct pit_rng r;
  pit_rng_seed(&r, seed);
  for (int i = 0; i < m->n; i++) {
    const struct pit_layer_spec *L = &m->layer[i];
    if (L->kind == PIT_L_RRDB) { /* each inner conv by its own fan-in */
      for (int d = 0; d < PIT_RRDB_DENSE; d++)
        for (int j = 1; j <= PIT_RRDB_CONVS; j++) {
          struct pit_layer_spec c = pit_rrdb_conv(L, d, j);
          init_uniform(&c, params, &r);
        }
      continue;
    }
    if (L->kind == PIT_L_BATCHNORM) {
      for (size_t j = 0; j < L->w_len; j++)
        params[L->w_off + j] = 1.0f;
      for (size_t j = 0; j < L->b_len; j++)
        params[L->b_off + j] = 0.0f;
      continue;
    }
    init_uniform(L, params, &r);
  }
}

void pit_init_dcgan(const struct pit_model_spec *m, float *params, uint64_t seed) {
  struct pit_rng r;
  pit_rng_seed(&r, seed);
  for (int i = 0; i < m->n; i++) {
    const struct pit_layer_spec *L = &m->layer[i];
    if (L->kind == PIT_L_CONV || L->kind == PIT_L_DECONV) {
      for (size_t j = 0; j < L->w_len; j++)
        params[L->w_off + j] = (float)(0.02 * pit_rng_normal(&r));
      for (size_t j = 0; j < L->b_len; j++)
        params[L->b_off + j] = 0.0f;
    } else if (L->kind == PIT_L_BATCHNORM) {
      for (size_t j = 0; j < L->w_len; j++)
        params[L->w_off + j] = (float)(1.0 + 0.02 * pit_rng_normal(&r));
      for (size_t j = 0; j < L->b_len; j++)
        params[L->b_off + j] = 0.0f;
    } else if (L->kind == PIT_L_LINEAR) {
      init_uniform(L, params, &r);
    }
  }
}

void pit_init_state(const struct pit_model_spec *m, float *state) {
  for (int i = 0; i < m->n; i++) {
    const struct pit_layer_spec *L = &m->layer[i];
    if (L->kind != PIT_L_BATCHNORM)
      continue;
    for (int c = 0; c < L->in_c; c++) {
      state[L->s_off + (size_t)c] = 0.0f;
      state[L->s_off + (size_t)L->in_c + (size_t)c] = 1.0f;
    }
  }
}
