/* ref_net.c — the reference network backend (PIT_BACKEND_REF): runs the layer
 * list of the spec one layer at a time with the plain-C kernels of ref_*.c.
 * It is the readable ground truth the fast backend is checked against.
 *
 * Buffers (all sized for max_batch, allocated once at create):
 *   act[0]      copy of the input x            (B, in_c, in_h, in_w)
 *   act[i+1]    output of layer i              (B, o_c, o_h, o_w)
 *   argmax[i]   MaxPool layer i: winning input index per output
 *   mean[i], invstd[i]  BatchNorm layer i: batch statistics of the last train forward (C)
 *   grad[0..1]  ping-pong gradient buffers, each the largest activation
 *   saved[i]    RRDB layer i: its dense blocks' concatenations (ref_rrdb.c)
 *   skipg[i]    SKIP layer i: the gradient its SKIPADD passed back along the skip
 *   ws          RRDB backward scratch (the largest RRDB's)
 * Invariant: backward is only valid after a train forward (trained == 1), and uses
 * that forward's batch; every activation it reads is still the one that forward wrote. */
#include <stdlib.h>
#include <string.h>

#include "nn/net_impl.h"
#include "nn/ref_layers.h"

struct ref_impl {
  float *act[PIT_MAX_LAYERS + 1];
  int32_t *argmax[PIT_MAX_LAYERS];
  float *mean[PIT_MAX_LAYERS];
  float *invstd[PIT_MAX_LAYERS];
  float *grad[2];
  float *saved[PIT_MAX_LAYERS];
  float *skipg[PIT_MAX_LAYERS];
  float *ws;
  int batch;   /* batch of the last forward */
  int trained; /* 1 if the last forward was a train forward */
};

static size_t in_size(const struct pit_layer_spec *L) {
  return (size_t)L->in_c * L->in_h * L->in_w;
}
static size_t out_size(const struct pit_layer_spec *L) {
  return (size_t)L->o_c * L->o_h * L->o_w;
}

static void ref_destroy(struct pit_net *net) {
  struct ref_impl *r = net->impl;
  if (!r)
    return;
  for (int i = 0; i <= PIT_MAX_LAYERS; i++)
    free(r->act[i]);
  for (int i = 0; i < PIT_MAX_LAYERS; i++) {
    PIT_FREE_ALL(r->argmax[i], r->mean[i], r->invstd[i], r->saved[i], r->skipg[i]);
  }
  free(r->ws);
  free(r->grad[0]);
  free(r->grad[1]);
  free(r);
  net->impl = NULL;
}

static int ref_create(struct pit_net *net, struct pit_err *e) {
  const struct pit_model_spec *m = &net->spec;
  const size_t B = (size_t)net->max_batch;
  if (m->n < 0 || m->n > PIT_MAX_LAYERS)
    return pit_err_set(e, PIT_EARG, "model '%s' has %d layers (at most %d)", m->name, m->n,
                       PIT_MAX_LAYERS);
  struct ref_impl *r = calloc(1, sizeof *r);
  if (!r)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  net->impl = r;
  size_t biggest = (size_t)m->in_c * m->in_h * m->in_w, ws = 1;
  int ok = (r->act[0] = malloc(B * biggest * sizeof(float) + 1)) != NULL;
  for (int i = 0; i < m->n && ok; i++) {
    const struct pit_layer_spec *L = &m->layer[i];
    size_t os = out_size(L);
    if (os > biggest)
      biggest = os;
    ok = (r->act[i + 1] = malloc(B * os * sizeof(float) + 1)) != NULL;
    if (ok && L->kind == PIT_L_MAXPOOL)
      ok = (r->argmax[i] = malloc(B * os * sizeof(int32_t))) != NULL;
    if (ok && L->kind == PIT_L_BATCHNORM)
      ok = (r->mean[i] = calloc((size_t)L->in_c, sizeof(float))) &&
           (r->invstd[i] = calloc((size_t)L->in_c, sizeof(float)));
    if (ok && L->kind == PIT_L_SKIP)
      ok = (r->skipg[i] = malloc(B * in_size(L) * sizeof(float) + 1)) != NULL;
    if (ok && L->kind == PIT_L_RRDB) {
      ok = (r->saved[i] = malloc(pit_ref_rrdb_saved_floats(L, (int)B) * sizeof(float))) != NULL;
      if (pit_ref_rrdb_ws_floats(L) > ws)
        ws = pit_ref_rrdb_ws_floats(L);
    }
  }
  ok = ok && (r->ws = malloc(ws * sizeof(float)));
  ok = ok && (r->grad[0] = malloc(B * biggest * sizeof(float) + 1)) &&
       (r->grad[1] = malloc(B * biggest * sizeof(float) + 1));
  if (!ok) {
    ref_destroy(net);
    return pit_err_set(e, PIT_ENOMEM, "out of memory for the reference network '%s' (batch %d)",
                       m->name, net->max_batch);
  }
  return 0;
}

static int ref_forward(struct pit_net *net, const float *x, int B, int train, const float **y,
                       struct pit_err *e) {
  struct ref_impl *r = net->impl;
  const struct pit_model_spec *m = &net->spec;
  r->trained = 0;
  r->batch = B;
  memcpy(r->act[0], x, (size_t)B * m->in_c * m->in_h * m->in_w * sizeof(float));
  for (int i = 0; i < m->n; i++) {
    const struct pit_layer_spec *L = &m->layer[i];
    const float *in = r->act[i];
    float *out = r->act[i + 1];
    const float *w = net->params + L->w_off;
    const float *b = L->b_len ? net->params + L->b_off : NULL;
    switch (L->kind) {
    case PIT_L_CONV:
      pit_ref_conv_forward(L, B, in, w, b, out);
      break;
    case PIT_L_DECONV:
      pit_ref_deconv_forward(L, B, in, w, b, out);
      break;
    case PIT_L_LINEAR:
      pit_ref_linear_forward(L, B, in, w, b, out);
      break;
    case PIT_L_MAXPOOL:
      pit_ref_maxpool_forward(L, B, in, out, r->argmax[i]);
      break;
    case PIT_L_BATCHNORM: {
      float *rmean = net->state + L->s_off, *rvar = net->state + L->s_off + L->in_c;
      if (!train) {
        pit_ref_bnorm_forward_eval(L, B, in, w, b, rmean, rvar, out);
        break;
      }
      if ((size_t)B * L->in_h * L->in_w < 2)
        return pit_err_set(e, PIT_EARG,
                           "model '%s' layer %d (batchnorm): training needs more than one value "
                           "per channel, got batch %d of %dx%d",
                           m->name, i + 1, B, L->in_h, L->in_w);
      pit_ref_bnorm_forward_train(L, B, in, w, b, rmean, rvar, r->mean[i], r->invstd[i], out);
      break;
    }
    case PIT_L_RELU:
    case PIT_L_LEAKYRELU:
    case PIT_L_TANH:
    case PIT_L_SIGMOID:
      pit_ref_act_forward(L, (size_t)B * in_size(L), in, out);
      break;
    case PIT_L_SHUFFLE:
      pit_ref_shuffle_forward(L, B, in, out);
      break;
    case PIT_L_SKIP:
      memcpy(out, in, (size_t)B * in_size(L) * sizeof(float));
      break;
    case PIT_L_SKIPADD: {
      const float *skip = r->act[L->pair]; /* the input of the matching SKIP */
      for (size_t j = 0; j < (size_t)B * in_size(L); j++)
        out[j] = in[j] + skip[j];
      break;
    }
    case PIT_L_RRDB:
      pit_ref_rrdb_forward(L, B, in, net->params, r->saved[i], out);
      break;
    default:
      return pit_err_set(e, PIT_EARG, "model '%s' layer %d: unknown layer kind %d", m->name,
                         i + 1, (int)L->kind);
    }
  }
  r->trained = train ? 1 : 0;
  *y = r->act[m->n];
  return 0;
}

static int ref_backward(struct pit_net *net, const float *dy, float *dx, int param_grads,
                        struct pit_err *e) {
  struct ref_impl *r = net->impl;
  const struct pit_model_spec *m = &net->spec;
  const int B = r->batch;
  if (!r->trained)
    return pit_err_set(e, PIT_ESTATE, "model '%s': backward needs a train forward just before",
                       m->name);
  if (m->n == 0) {
    if (dx)
      memcpy(dx, dy, (size_t)B * m->in_c * m->in_h * m->in_w * sizeof(float));
    return 0;
  }
  const float *g = dy; /* gradient w.r.t. the output of layer i */
  for (int i = m->n - 1; i >= 0; i--) {
    const struct pit_layer_spec *L = &m->layer[i];
    const float *in = r->act[i], *out = r->act[i + 1];
    /* where d(input of layer i) goes: the caller's dx for layer 0, else a ping-pong buffer */
    float *gin = i == 0 ? dx : r->grad[i & 1];
    const float *w = net->params + L->w_off;
    float *dw = param_grads && L->w_len ? net->grads + L->w_off : NULL;
    float *db = param_grads && L->b_len ? net->grads + L->b_off : NULL;
    switch (L->kind) {
    case PIT_L_CONV:
      pit_ref_conv_backward(L, B, in, w, g, gin, dw, db);
      break;
    case PIT_L_DECONV:
      pit_ref_deconv_backward(L, B, in, w, g, gin, dw, db);
      break;
    case PIT_L_LINEAR:
      pit_ref_linear_backward(L, B, in, w, g, gin, dw, db);
      break;
    case PIT_L_MAXPOOL:
      if (gin)
        pit_ref_maxpool_backward(L, B, r->argmax[i], g, gin);
      break;
    case PIT_L_BATCHNORM:
      pit_ref_bnorm_backward(L, B, in, w, r->mean[i], r->invstd[i], g, gin, dw, db);
      break;
    case PIT_L_SHUFFLE:
      if (gin)
        pit_ref_shuffle_backward(L, B, g, gin);
      break;
    case PIT_L_SKIPADD: /* the gradient goes both ways unchanged */
      memcpy(r->skipg[L->pair], g, (size_t)B * in_size(L) * sizeof(float));
      if (gin)
        memcpy(gin, g, (size_t)B * in_size(L) * sizeof(float));
      break;
    case PIT_L_SKIP: /* the straight path's gradient plus the skip's */
      if (gin)
        for (size_t j = 0; j < (size_t)B * in_size(L); j++)
          gin[j] = g[j] + r->skipg[i][j];
      break;
    case PIT_L_RRDB:
      pit_ref_rrdb_backward(L, B, net->params, r->saved[i], g, gin,
                            param_grads ? net->grads : NULL, r->ws);
      break;
    default: /* activations */
      if (gin)
        pit_ref_act_backward(L, (size_t)B * in_size(L), in, out, g, gin);
      break;
    }
    g = gin;
  }
  return 0;
}

const struct pit_net_backend pit_net_backend_ref = {
    .create = ref_create,
    .destroy = ref_destroy,
    .forward = ref_forward,
    .backward = ref_backward,
    .params_changed = NULL, /* reads net->params directly */
};
