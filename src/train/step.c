/* step.c — one training iteration on one global batch, and validation.
 *
 * Every rank takes its slice [off, off+len) of the global batch (its share);
 * the loss is the SUM over its samples divided by the GLOBAL batch size, so the
 * SUM-allreduce of gradients is the gradient of the global mean loss whatever
 * the shares. The iteration's losses and the stop request are summed in one
 * small allreduce inside the (last) gradient reduction, so its time counts as
 * wait (a rank that wants to stop makes every rank stop at the same iteration
 * boundary).
 * GAN noise for the sample at position j of global batch `step` is drawn from an
 * RNG seeded by (seed, step, j): it does not depend on the number of ranks.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/train_impl.h"

/* Gradient reduction of one network, with an optional small vector v[0..nv)
 * SUM-reduced between begin and end (losses and the stop request: the blocking
 * call's time counts as this rank's wait). Adds every rank's compute to sum_c.
 * The waits a reduction returns belong to the PREVIOUS reduction (dist.h): the
 * first reduction of a step completes the pending record of the step before
 * (unless that record was already flushed), later ones belong to this step. */
int tr_reduce(struct trainer *t, struct pit_net *net, double compute, double *v, int nv,
              struct pit_err *e) {
  struct pit_dist *d = t->d;
  float *g = pit_net_grads(net);
  size_t n = pit_net_spec(net)->nparams;
  t->all_c[0] = compute;
  t->all_w[0] = 0;
  int rc = pit_dist_grads_begin(d, g, n, e);
  if (rc == 0 && nv > 0 && d->size > 1)
    rc = pit_dist_allreduce_f64(d, v, nv, 0, e);
  if (rc == 0)
    rc = pit_dist_grads_end(d, compute, t->all_c, t->all_w, e);
  if (rc < 0)
    return rc;
  for (int r = 0; r < d->size; r++) {
    t->sum_c[r] += t->all_c[r];
    if (t->nred > 0)
      t->sum_w[r] += t->all_w[r];
    else if (t->have_pending && !t->discard_carry && t->pend.wait_s)
      t->pend.wait_s[r] += t->all_w[r];
  }
  if (t->nred == 0)
    t->discard_carry = 0;
  t->nred++;
  return 0;
}

void tr_update(struct trainer *t, int i) {
  pit_optim_step(&t->opt[i], pit_net_params(t->net[i]), pit_net_grads(t->net[i]));
  pit_net_params_changed(t->net[i]);
}

static void clear_sums(struct trainer *t) {
  for (int r = 0; r < t->d->size; r++)
    t->sum_c[r] = t->sum_w[r] = 0;
  t->nred = 0;
}

/* This rank's slice of the global batch, gathered into t->x / t->y. */
static int take_slice(struct trainer *t, const int64_t *idx, int64_t count, int64_t *off,
                      int64_t *len, struct pit_err *e) {
  tr_shares_for(t, count);
  pit_shares_slice(t->shares, t->d->size, t->d->rank, off, len);
  if (*len > 0 && pit_dataset_gather(&t->train, idx + *off, (int)*len, t->x, t->y) < 0)
    return pit_err_set(e, PIT_EIO, "cannot read samples of dataset '%s'", t->train.name);
  return 0;
}

static void noise_for(struct trainer *t, int64_t first, int64_t n, float *z) {
  for (int64_t j = 0; j < n; j++) {
    uint64_t key[3] = {t->seed, (uint64_t)t->step, (uint64_t)(first + j)};
    struct pit_rng r;
    pit_rng_seed(&r, pit_hash64(key, sizeof key, 0x6e6f697365ULL));
    for (int k = 0; k < PIT_NZ; k++)
      z[j * PIT_NZ + k] = (float)pit_rng_normal(&r);
  }
}

/* Starts an iteration: clears the sums, gathers this rank's slice (and, for a
 * GAN, its noise; for esrgan, its crops and their LR inputs); *t1 = when compute
 * starts, *data_s = the time it took. */
int tr_begin_step(struct trainer *t, const int64_t *idx, int64_t count, int64_t *off, int64_t *len,
                  int noise, double *t1, double *data_s, struct pit_err *e) {
  clear_sums(t);
  double t0 = pit_now();
  int rc = take_slice(t, idx, count, off, len, e);
  if (rc < 0)
    return rc;
  if (noise)
    noise_for(t, *off, *len, t->z); // (len, nz, 1, 1)
  if (t->esrgan && *len > 0 && (rc = tr_esrgan_inputs(t, *off, *len, e)) < 0)
    return rc;
  *t1 = pit_now();
  *data_s = *t1 - t0;
  return 0;
}

int tr_step_classifier(struct trainer *t, const int64_t *idx, int64_t count, double *loss,
                       double *data_s, int stop_in, int *stop_out, struct pit_err *e) {
  int64_t off, len;
  double t1;
  int rc = tr_begin_step(t, idx, count, &off, &len, 0, &t1, data_s, e);
  if (rc < 0)
    return rc;
  struct pit_net *net = t->net[0];
  pit_net_zero_grad(net);
  double l = 0;
  if (len > 0) {
    const float *out; // (len, K)
    rc = pit_net_forward(net, t->x, (int)len, 1, &out, e);
    if (rc < 0)
      return rc;
    l = pit_loss_xent(out, t->y, (int)len, t->classes, (double)count, t->dout);
    rc = pit_net_backward(net, t->dout, NULL, 1, e);
    if (rc < 0)
      return rc;
  }
  double v[2] = {l, stop_in ? 1.0 : 0.0};
  rc = tr_reduce(t, net, pit_now() - t1, v, 2, e);
  if (rc < 0)
    return rc;
  tr_update(t, 0);
  *loss = v[0];
  *stop_out = v[1] > 0;
  return 0;
}

int tr_step_gan(struct trainer *t, const int64_t *idx, int64_t count, double *loss_d,
                double *loss_g, double *data_s, int stop_in, int *stop_out, struct pit_err *e) {
  int64_t off, len;
  double t1;
  int rc = tr_begin_step(t, idx, count, &off, &len, 1, &t1, data_s, e);
  if (rc < 0)
    return rc;
  struct pit_net *G = t->net[0], *D = t->net[1];
  const size_t img = t->sample_floats;
  const float *p, *fake;
  double ld = 0, lg = 0;

  /* 1. discriminator: real batch labelled 1, generated batch labelled 0 */
  pit_net_zero_grad(D);
  if (len > 0) {
    if ((rc = pit_net_forward(D, t->x, (int)len, 1, &p, e)) < 0)
      return rc;
    ld += pit_loss_bce(p, 1.0f, (int)len, (double)count, t->dout);
    if ((rc = pit_net_backward(D, t->dout, NULL, 1, e)) < 0)
      return rc;
    if ((rc = pit_net_forward(G, t->z, (int)len, 1, &fake, e)) < 0)
      return rc;
    memcpy(t->fake, fake, (size_t)len * img * sizeof(float)); // (len, C, H, W)
    if ((rc = pit_net_forward(D, t->fake, (int)len, 1, &p, e)) < 0)
      return rc;
    ld += pit_loss_bce(p, 0.0f, (int)len, (double)count, t->dout);
    if ((rc = pit_net_backward(D, t->dout, NULL, 1, e)) < 0)
      return rc;
  }
  double t2 = pit_now();
  if ((rc = tr_reduce(t, D, t2 - t1, NULL, 0, e)) < 0)
    return rc;
  tr_update(t, 1);

  /* 2. generator: D (updated) should call the generated batch real */
  double t3 = pit_now();
  pit_net_zero_grad(G);
  if (len > 0) {
    if ((rc = pit_net_forward(D, t->fake, (int)len, 1, &p, e)) < 0)
      return rc;
    lg = pit_loss_bce(p, 1.0f, (int)len, (double)count, t->dout);
    if ((rc = pit_net_backward(D, t->dout, t->dfake, 0, e)) < 0)
      return rc;
    if ((rc = pit_net_backward(G, t->dfake, NULL, 1, e)) < 0)
      return rc;
  }
  double v[3] = {ld, lg, stop_in ? 1.0 : 0.0};
  if ((rc = tr_reduce(t, G, pit_now() - t3, v, 3, e)) < 0)
    return rc;
  tr_update(t, 0);
  *loss_d = v[0];
  *loss_g = v[1];
  *stop_out = v[2] > 0;
  return 0;
}

int tr_validate(struct trainer *t, double *acc, struct pit_err *e) {
  struct pit_dist *d = t->d;
  int64_t n = t->test.n;
  int64_t sh_off = n * d->rank / d->size, sh_end = n * (d->rank + 1) / d->size;
  double correct = 0;
  for (int64_t i = sh_off; i < sh_end; i += t->B) {
    int64_t m = sh_end - i < t->B ? sh_end - i : t->B;
    for (int64_t j = 0; j < m; j++)
      t->gidx[j] = i + j;
    if (pit_dataset_gather(&t->test, t->gidx, (int)m, t->x, t->y) < 0)
      return pit_err_set(e, PIT_EIO, "cannot read test samples of '%s'", t->test.name);
    const float *out; // (m, K)
    int rc = pit_net_forward(t->net[0], t->x, (int)m, 0, &out, e);
    if (rc < 0)
      return rc;
    correct += pit_count_correct(out, t->y, (int)m, t->classes);
  }
  if (d->size > 1) {
    int rc = pit_dist_allreduce_f64(d, &correct, 1, 0, e);
    if (rc < 0)
      return rc;
  }
  *acc = n > 0 ? correct / (double)n : NAN;
  return 0;
}

int tr_sample_grid(struct trainer *t, const char *path, struct pit_err *e) {
  /* fixed noise: the same 64 vectors for the whole run (like the DCGAN example's fixed_noise) */
  int n = PIT_GRID_N;
  float *z = malloc(sizeof(float) * (size_t)n * PIT_NZ);     // (64, nz, 1, 1)
  float *img = malloc(sizeof(float) * (size_t)n * t->sample_floats); // (64, C, H, W)
  if (!z || !img) {
    free(z);
    free(img);
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  }
  struct pit_rng r;
  pit_rng_seed(&r, t->seed ^ 0x66697865644e5aULL);
  for (int i = 0; i < n * PIT_NZ; i++)
    z[i] = (float)pit_rng_normal(&r);
  int rc = 0;
  for (int i = 0; i < n && rc == 0; i += (int)t->B) {
    int m = n - i < t->B ? n - i : (int)t->B;
    const float *out;
    rc = pit_net_forward(t->net[0], z + (size_t)i * PIT_NZ, m, 1, &out, e);
    if (rc == 0)
      memcpy(img + (size_t)i * t->sample_floats, out, sizeof(float) * (size_t)m * t->sample_floats);
  }
  if (rc == 0)
    rc = pit_png_grid_write(path, img, n, t->in_c, t->size, t->size, 8, e);
  free(z);
  free(img);
  return rc;
}
