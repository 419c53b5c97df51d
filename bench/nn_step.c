/* nn_step.c — training-step throughput straight through the nn API (no CLI, no
 * data loading): synthetic data made once, then per iteration forward, loss,
 * backward, optimizer step, exactly as bench/torch_train.py does in PyTorch:
 *   cnn / cnn-wide: cross-entropy, SGD lr 0.001 momentum 0.9; one image batch,
 *          64 random label sets used in turn (the loss stays near log 10);
 *   dcgan: D on real (target 1) + on G(z) (target 0), Adam step of D; then D on
 *          G(z) again (target 1), gradient through D into G, Adam step of G
 *          (lr 2e-4, betas 0.5/0.999).
 * Usage: nn_step --model M [--batch-size B] [--threads T] [--iters N] [--warmup W]
 *                [--backend fast|ref] [--image-size S] [--channels C]
 * Prints one line: model=.. batch=.. threads=.. backend=.. iters=.. sps=.. step_ms_median=..
 *   flops_per_sample=.. (training work per sample: 3x forward for every net
 *   that runs forward+backward, 2x for D in the generator step).
 * The first W iterations are warm-up, excluded from the figures. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pitstop/nn.h"

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

#define TRY(call)                                                    \
  do {                                                               \
    if ((call) < 0) {                                                \
      fprintf(stderr, "nn_step: %s (line %d)\n", e.msg, __LINE__);   \
      return 1;                                                      \
    }                                                                \
  } while (0)

int main(int argc, char **argv) {
  const char *model = "cnn", *backend = "fast";
  int batch = 64, threads = 1, iters = 20, warmup = 3, size = 0, channels = 3, nz = 100;
  static struct option opts[] = {{"model", 1, 0, 'm'},      {"batch-size", 1, 0, 'b'},
                                 {"threads", 1, 0, 't'},    {"iters", 1, 0, 'i'},
                                 {"warmup", 1, 0, 'w'},     {"backend", 1, 0, 'k'},
                                 {"image-size", 1, 0, 's'}, {"channels", 1, 0, 'c'},
                                 {0, 0, 0, 0}};
  int c;
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    switch (c) {
    case 'm': model = optarg; break;
    case 'b': batch = atoi(optarg); break;
    case 't': threads = atoi(optarg); break;
    case 'i': iters = atoi(optarg); break;
    case 'w': warmup = atoi(optarg); break;
    case 'k': backend = optarg; break;
    case 's': size = atoi(optarg); break;
    case 'c': channels = atoi(optarg); break;
    default: fprintf(stderr, "nn_step: bad option\n"); return 2;
    }
  }
  if (batch < 1 || iters < 1 || warmup < 0 || threads < 1) {
    fprintf(stderr, "nn_step: bad numbers\n");
    return 2;
  }
  struct pit_err e = {0};
  int gan = pit_model_is_gan(model);
  if (!size)
    size = gan ? 64 : 32;
  enum pit_backend be = strcmp(backend, "ref") == 0 ? PIT_BACKEND_REF : PIT_BACKEND_FAST;
  pit_nn_set_threads(threads);
  struct pit_model_spec g, d;
  TRY(pit_model_build(model, channels, size, 10, nz, &g, &d, &e));
  struct pit_net *G = NULL, *D = NULL;
  TRY(pit_net_create(&G, &g, batch, be, &e));
  if (gan)
    TRY(pit_net_create(&D, &d, batch, be, &e));
  struct pit_rng r;
  pit_rng_seed(&r, 1);
  struct pit_optim og, od;
  double flops;
  size_t in_n = (size_t)g.in_c * g.in_h * g.in_w;
  float *x = malloc(batch * in_n * sizeof(float)); /* cnn images or G noise */
  float *real = NULL, *dout = NULL, *dfake = NULL;
  /* NLAB label sets for the one image batch, used in turn: contradictory labels
   * keep the loss near log(10) instead of letting the net memorise one batch, whose
   * vanishing gradients turn into denormals (which made the optimizer step 50x
   * slower after ~1000 iterations) */
  enum { NLAB = 64 };
  int32_t *labels = malloc(NLAB * (size_t)batch * sizeof(int32_t));
  for (size_t i = 0; i < batch * in_n; i++)
    x[i] = (float)pit_rng_normal(&r);
  for (int i = 0; i < NLAB * batch; i++)
    labels[i] = (int32_t)(pit_rng_next(&r) % 10);
  if (gan) {
    pit_init_dcgan(&g, pit_net_params(G), 1);
    pit_init_dcgan(&d, pit_net_params(D), 2);
    pit_net_params_changed(G);
    pit_net_params_changed(D);
    TRY(pit_optim_init(&og, PIT_OPT_ADAM, g.nparams, 2e-4, &e));
    TRY(pit_optim_init(&od, PIT_OPT_ADAM, d.nparams, 2e-4, &e));
    og.beta1 = od.beta1 = 0.5;
    size_t img = (size_t)d.in_c * d.in_h * d.in_w;
    real = malloc(batch * img * sizeof(float));
    dfake = malloc(batch * img * sizeof(float));
    for (size_t i = 0; i < batch * img; i++)
      real[i] = (float)(2 * pit_rng_uniform(&r) - 1);
    dout = malloc(batch * sizeof(float));
    flops = 3 * g.flops_fwd + 3 * 2 * d.flops_fwd + 2 * d.flops_fwd;
  } else {
    pit_init_default(&g, pit_net_params(G), 1);
    pit_net_params_changed(G);
    TRY(pit_optim_init(&og, PIT_OPT_SGD, g.nparams, 0.001, &e));
    og.momentum = 0.9;
    dout = malloc(batch * (size_t)g.out_c * sizeof(float));
    flops = 3 * g.flops_fwd;
  }
  double *dt = malloc((warmup + iters) * sizeof(double));
  double loss = 0;
  for (int it = 0; it < warmup + iters; it++) {
    double t0 = pit_now();
    const float *y, *p;
    if (!gan) {
      pit_net_zero_grad(G);
      TRY(pit_net_forward(G, x, batch, 1, &y, &e));
      loss = pit_loss_xent(y, labels + (size_t)(it % NLAB) * batch, batch, g.out_c, batch, dout);
      TRY(pit_net_backward(G, dout, NULL, 1, &e));
      pit_optim_step(&og, pit_net_params(G), pit_net_grads(G));
      pit_net_params_changed(G);
    } else {
      /* noise for this iteration: a shifted window of the fixed noise buffer is
       * enough for timing; regenerate cheaply */
      for (size_t i = 0; i < batch * in_n; i++)
        x[i] = -x[i];
      const float *fake;
      TRY(pit_net_forward(G, x, batch, 1, &fake, &e));
      /* D step */
      pit_net_zero_grad(D);
      TRY(pit_net_forward(D, real, batch, 1, &p, &e));
      loss = pit_loss_bce(p, 1.0f, batch, batch, dout);
      TRY(pit_net_backward(D, dout, NULL, 1, &e));
      size_t img = (size_t)d.in_c * d.in_h * d.in_w;
      memcpy(dfake, fake, batch * img * sizeof(float)); /* fake is valid until G's next call */
      TRY(pit_net_forward(D, dfake, batch, 1, &p, &e));
      loss += pit_loss_bce(p, 0.0f, batch, batch, dout);
      TRY(pit_net_backward(D, dout, NULL, 1, &e));
      pit_optim_step(&od, pit_net_params(D), pit_net_grads(D));
      pit_net_params_changed(D);
      /* G step */
      pit_net_zero_grad(G);
      TRY(pit_net_forward(D, dfake, batch, 1, &p, &e));
      loss += pit_loss_bce(p, 1.0f, batch, batch, dout);
      TRY(pit_net_backward(D, dout, dfake, 0, &e));
      TRY(pit_net_backward(G, dfake, NULL, 1, &e));
      pit_optim_step(&og, pit_net_params(G), pit_net_grads(G));
      pit_net_params_changed(G);
    }
    dt[it] = pit_now() - t0;
  }
  double tot = 0;
  for (int i = warmup; i < warmup + iters; i++)
    tot += dt[i];
  qsort(dt + warmup, iters, sizeof(double), cmp_d);
  printf("model=%s batch=%d threads=%d backend=%s iters=%d sps=%.2f step_ms_median=%.4f "
         "flops_per_sample=%.0f loss=%.4f\n",
         model, batch, threads, backend, iters, batch * iters / tot, 1e3 * dt[warmup + iters / 2],
         flops, loss);
  pit_optim_release(&og);
  if (gan)
    pit_optim_release(&od);
  pit_net_free(G);
  pit_net_free(D);
  free(x);
  free(real);
  free(dout);
  free(dfake);
  free(labels);
  free(dt);
  return 0;
}
