/* esrgan.c — ESRGAN in `pitstop train --model esrgan`: PyTorch-GAN's esrgan.py
 * (generator, patch discriminator, VGG19 content loss, relativistic adversarial loss,
 * a pixel-loss warm-up) on random crops of a folder of photos.
 *
 * Data: the image folder is loaded normalised with ImageNet's mean/std (what the
 * original's transforms and its VGG19 expect), each image resized (shorter side) and
 * centre-cropped to --image-size (default --hr-size; photos whose native shorter side is
 * below --hr-size are refused). Every iteration, sample j of global batch `step` takes
 * an hr x hr crop at an offset drawn from (seed, step, j), so crops do not depend on the
 * number of ranks; its input is that crop shrunk 4x with PIL's antialiased bicubic
 * (a = -0.5, pit_resize). (The original resizes whole CelebA images to hr and hr/4
 * instead; with --image-size equal to --hr-size the crop is the whole image, as there.)
 *
 * One iteration (the original's order; N = global batch, P = (hr/16)^2 patch logits):
 *   G(lr) → fake;  pixel = L1(fake, hr)
 *   warm-up (step < --warmup-batches): G learns from the pixel loss alone; D is untouched.
 *   else:  D(hr) → pr, D(fake) → pf (train mode: each batch's own BatchNorm statistics);
 *          the means of pr and pf over the GLOBAL batch (one small allreduce);
 *          adv = ½[BCE(pf − mean pr, 1) + BCE(pr − mean pf, 0)] (pr detached),
 *          d   = ½[BCE(pr − mean pf, 1) + BCE(pf − mean pr, 0)],
 *          their gradients' column sums over all ranks (a second small allreduce);
 *          content = L1(VGG(fake), VGG(hr)) (VGG19 features[:35], frozen);
 *          g = content + λ_adv·adv + λ_pixel·pixel → G backward, step;
 *          D backward on fake (its last forward: D's parameters and input are the ones
 *          the original's D step sees again), D(hr) once more, backward, step.
 *   The original runs D four times per iteration; this runs it three times (the second
 *   real pass would give the same output: same parameters, same batch), so BatchNorm
 *   running statistics, which ESRGAN never uses (D stays in train mode), see 3 updates.
 * The two small RaGAN reductions count as compute time in the records.
 * Records: loss {"d", "g", "content", "adv", "pixel"}; during warm-up {"g", "pixel"}.
 * --global-skip bicubic (not the original): the generator's output is added to the bicubic
 * upscaling of its input (the same pit_resize that gives the validation's bicubic baseline),
 * so G learns the residual over bicubic; its last convolution starts at 0.1x PyTorch's
 * default initialisation (ESRGAN's paper scales its initialisation by 0.1), so the untrained
 * model starts close to bicubic. The skip's gradient is the output's: the input is data.
 * Validation: PSNR on [0, 1] RGB of fixed centre crops (the first 8 images of --val-dir,
 * or of the training folder), for the model and for bicubic upscaling of its input.
 * Ownership: struct tr_esrgan and its buffers are owned by the trainer (t->sr).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "train/train_impl.h"

#define SR_VAL_MAX 8 /* validation crops */

struct tr_esrgan {
  int hr, lr;                    /* crop side, input side (hr / 4) */
  int P;                         /* patch logits per sample, (hr/16)^2 */
  int F;                         /* VGG feature floats per sample, 512 · P */
  int content;                   /* 0 none, 1 vgg (file), 2 random-vgg */
  int skip;                      /* --global-skip bicubic */
  struct pit_model_spec vspec;
  struct pit_net *vgg;           /* NULL without a content loss */
  size_t himg, limg;             /* floats of one HR / LR image */
  float *hrb, *lrb;              /* (B, 3, hr, hr), (B, 3, lr, lr) this rank's crops and inputs */
  float *bic;                    /* (B, 3, hr, hr) bicubic upscaling of lrb (skip only, else NULL) */
  float *fake, *dgen, *dtmp;     /* (B, 3, hr, hr) */
  float *pr, *pf;                /* (B, P) D logits */
  float *dpr_g, *dpf_g, *dpr_d, *dpf_d; /* (B, P) */
  float *feat, *dfeat;           /* (B, F) VGG features of hr, gradient w.r.t. the fake's */
  double *sums, *cols;           /* (2P) batch sums of pr, pf; (4P) RaGAN column sums */
  double loss[5];                /* last iteration: pixel, content, adv, d, g */
  int warm;                      /* last iteration was a warm-up one */
};

enum { L_PIXEL, L_CONTENT, L_ADV, L_D, L_G };

void tr_esrgan_data_opts(const struct trainer *t, struct pit_data_opts *dopt) {
  const struct pit_train_opts *o = t->o;
  if (strcmp(o->data, "images") == 0) {
    dopt->norm = PIT_NORM_IMAGENET;
    dopt->min_side = o->hr_size;
  }
  dopt->channels = 3;
  if (dopt->image_size == 0)
    dopt->image_size = o->hr_size;
}

/* Multiplies the weights and bias of the last convolution of m by a. */
static void scale_last_conv(const struct pit_model_spec *m, float *params, float a) {
  for (int i = m->n - 1; i >= 0; i--) {
    const struct pit_layer_spec *L = &m->layer[i];
    if (L->kind != PIT_L_CONV)
      continue;
    for (size_t j = 0; j < L->w_len; j++)
      params[L->w_off + j] *= a;
    for (size_t j = 0; j < L->b_len; j++)
      params[L->b_off + j] *= a;
    return;
  }
}

static float *falloc(size_t n, int *ok) {
  float *p = malloc(sizeof(float) * (n ? n : 1));
  if (!p)
    *ok = 0;
  return p;
}

int tr_esrgan_build(struct trainer *t, struct pit_err *e) {
  const struct pit_train_opts *o = t->o;
  struct tr_esrgan *s = calloc(1, sizeof *s);
  if (!s)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  t->sr = s;
  s->hr = o->hr_size;
  s->lr = o->hr_size / 4;
  const char *cl = o->content_loss ? o->content_loss : "vgg";
  s->content = strcmp(cl, "none") == 0 ? 0 : strcmp(cl, "vgg") == 0 ? 1 : 2;
  s->skip = o->global_skip && strcmp(o->global_skip, "bicubic") == 0;
  if (t->size < s->hr)
    return pit_err_set(e, PIT_EARG, "images of %dx%d cannot give %dx%d crops", t->size, t->size, s->hr,
                       s->hr);
  int rc = pit_model_build_esrgan(3, s->hr, o->residual_blocks, o->filters, &t->spec[0], &t->spec[1],
                                  s->content ? &s->vspec : NULL, e);
  if (rc < 0)
    return rc;
  s->P = t->spec[1].out_h * t->spec[1].out_w;
  s->F = s->content ? s->vspec.out_c * s->vspec.out_h * s->vspec.out_w : 0;
  s->himg = (size_t)3 * s->hr * s->hr;
  s->limg = (size_t)3 * s->lr * s->lr;
  t->nnets = 2;
  for (int i = 0; i < 2; i++) {
    if ((rc = pit_net_create(&t->net[i], &t->spec[i], (int)t->B, o->backend, e)) < 0)
      return rc;
    /* the original applies no weights_init: PyTorch's default (U(±1/sqrt(fan_in))) */
    pit_init_default(&t->spec[i], pit_net_params(t->net[i]), t->seed + (uint64_t)i);
    pit_init_state(&t->spec[i], pit_net_state(t->net[i]));
    if (i == 0 && s->skip)
      scale_last_conv(&t->spec[0], pit_net_params(t->net[0]), 0.1f);
    if ((rc = pit_optim_init(&t->opt[i], PIT_OPT_ADAM, t->spec[i].nparams, o->lr > 0 ? o->lr : 2e-4, e)) < 0)
      return rc;
    /* esrgan.py: Adam betas (0.9, 0.999), PyTorch's defaults */
  }
  if (s->content) {
    if ((rc = pit_net_create(&s->vgg, &s->vspec, (int)t->B, o->backend, e)) < 0)
      return rc;
    float *vp = pit_net_params(s->vgg);
    if (s->content == 1) {
      /* every rank reads the file (no broadcast needed: the VGG is frozen) */
      if ((rc = pit_safetensors_load(o->vgg_weights, &s->vspec, vp, e)) < 0)
        return rc;
    } else {
      pit_init_default(&s->vspec, vp, 0x766767ULL); /* the same on every rank, any seed */
    }
    pit_net_params_changed(s->vgg);
  }
  size_t B = (size_t)t->B, P = (size_t)s->P;
  int ok = 1;
  s->hrb = falloc(B * s->himg, &ok);
  s->lrb = falloc(B * s->limg, &ok);
  if (s->skip)
    s->bic = falloc(B * s->himg, &ok);
  s->fake = falloc(B * s->himg, &ok);
  s->dgen = falloc(B * s->himg, &ok);
  s->dtmp = falloc(B * s->himg, &ok);
  s->pr = falloc(B * P, &ok);
  s->pf = falloc(B * P, &ok);
  s->dpr_g = falloc(B * P, &ok);
  s->dpf_g = falloc(B * P, &ok);
  s->dpr_d = falloc(B * P, &ok);
  s->dpf_d = falloc(B * P, &ok);
  s->feat = falloc(B * (size_t)s->F, &ok);
  s->dfeat = falloc(B * (size_t)s->F, &ok);
  s->sums = calloc(2 * P, sizeof(double));
  s->cols = calloc(4 * P, sizeof(double));
  if (!ok || !s->sums || !s->cols)
    return pit_err_set(e, PIT_ENOMEM, "out of memory for esrgan buffers (batch %lld)", (long long)t->B);
  return 0;
}

void tr_esrgan_free(struct trainer *t) {
  struct tr_esrgan *s = t->sr;
  if (!s)
    return;
  pit_net_free(s->vgg);
  PIT_FREE_ALL(s->hrb, s->lrb, s->bic, s->fake, s->dgen, s->dtmp, s->pr, s->pf, s->dpr_g, s->dpf_g,
               s->dpr_d, s->dpf_d, s->feat, s->dfeat, s->sums, s->cols, s);
  t->sr = NULL;
}

/* Copies the hr x hr window at (y0, x0) of img (3, S, S) to out (3, hr, hr). */
static void crop(const float *img, int S, int hr, int y0, int x0, float *out) {
  for (int c = 0; c < 3; c++)
    for (int y = 0; y < hr; y++)
      memcpy(out + ((size_t)c * hr + y) * hr, img + ((size_t)c * S + y0 + y) * S + x0,
             sizeof(float) * (size_t)hr);
}

int tr_esrgan_inputs(struct trainer *t, int64_t off, int64_t len, struct pit_err *e) {
  struct tr_esrgan *s = t->sr;
  const int S = t->size, span = S - s->hr + 1;
  for (int64_t j = 0; j < len; j++) {
    uint64_t key[3] = {t->seed, (uint64_t)t->step, (uint64_t)(off + j)};
    uint64_t h = pit_hash64(key, sizeof key, 0x63726f70ULL); /* "crop" */
    int y0 = (int)((h & 0xffffffffu) % (uint64_t)span), x0 = (int)((h >> 32) % (uint64_t)span);
    float *hrj = s->hrb + (size_t)j * s->himg;
    crop(t->x + (size_t)j * t->sample_floats, S, s->hr, y0, x0, hrj);
    int rc = pit_resize(hrj, 3, s->hr, s->hr, s->lrb + (size_t)j * s->limg, s->lr, s->lr,
                        PIT_RESIZE_BICUBIC, e);
    if (rc == 0 && s->skip)
      rc = pit_resize(s->lrb + (size_t)j * s->limg, 3, s->lr, s->lr, s->bic + (size_t)j * s->himg, s->hr,
                      s->hr, PIT_RESIZE_BICUBIC, e);
    if (rc < 0)
      return rc;
  }
  return 0;
}

static void axpy(size_t n, float a, const float *x, float *y) {
  for (size_t i = 0; i < n; i++)
    y[i] += a * x[i];
}

int tr_step_esrgan(struct trainer *t, const int64_t *idx, int64_t count, double *data_s,
                   int stop_in, int *stop_out, struct pit_err *e) {
  struct tr_esrgan *s = t->sr;
  const struct pit_train_opts *o = t->o;
  struct pit_net *G = t->net[0], *D = t->net[1];
  int64_t off, len;
  double t1;
  int rc = tr_begin_step(t, idx, count, &off, &len, 0, &t1, data_s, e);
  if (rc < 0)
    return rc;
  const int n = (int)len, P = s->P;
  const double N = (double)count;
  const size_t nh = (size_t)n * s->himg, nP = (size_t)n * P;
  const int warm = t->step < o->warmup_batches;
  double v[6] = {0, 0, 0, 0, 0, stop_in ? 1.0 : 0.0}; /* pixel, content, adv, d, (unused), stop */
  const float *y;
  s->warm = warm;

  /* generator: fake = G(lr); pixel loss */
  pit_net_zero_grad(G);
  if (n > 0) {
    if ((rc = pit_net_forward(G, s->lrb, n, 1, &y, e)) < 0)
      return rc;
    memcpy(s->fake, y, nh * sizeof(float)); // (n, 3, hr, hr)
    if (s->skip)
      axpy(nh, 1.0f, s->bic, s->fake);
    v[L_PIXEL] = pit_loss_l1(s->fake, s->hrb, nh, N * (double)s->himg, s->dgen);
  }
  if (!warm) {
    /* D on the real and the generated batch; batch means of its logits over all ranks */
    memset(s->sums, 0, 2 * (size_t)P * sizeof(double));
    if (n > 0) {
      if ((rc = pit_net_forward(D, s->hrb, n, 1, &y, e)) < 0)
        return rc;
      memcpy(s->pr, y, nP * sizeof(float)); // (n, 1, hr/16, hr/16)
      if ((rc = pit_net_forward(D, s->fake, n, 1, &y, e)) < 0)
        return rc;
      memcpy(s->pf, y, nP * sizeof(float));
      for (size_t i = 0; i < nP; i++) {
        s->sums[i % (size_t)P] += s->pr[i];
        s->sums[P + i % (size_t)P] += s->pf[i];
      }
    }
    if (t->d->size > 1 && (rc = pit_dist_allreduce_f64(t->d, s->sums, 2 * P, 0, e)) < 0)
      return rc;
    for (int p = 0; p < 2 * P; p++)
      s->sums[p] /= N; /* now the means: real (P), fake (P) */
    memset(s->cols, 0, 4 * (size_t)P * sizeof(double));
    if (n > 0) {
      v[L_ADV] = pit_loss_ragan_part(s->pr, s->pf, n, P, N, s->sums, s->sums + P, 0, s->dpr_g, s->dpf_g,
                                     s->cols);
      v[L_D] = pit_loss_ragan_part(s->pr, s->pf, n, P, N, s->sums, s->sums + P, 1, s->dpr_d, s->dpf_d,
                                   s->cols + 2 * P);
    }
    if (t->d->size > 1 && (rc = pit_dist_allreduce_f64(t->d, s->cols, 4 * P, 0, e)) < 0)
      return rc;
    if (n > 0) {
      pit_loss_ragan_finish(n, P, N, s->cols, s->dpr_g, s->dpf_g);
      pit_loss_ragan_finish(n, P, N, s->cols + 2 * P, s->dpr_d, s->dpf_d);
      /* d g / d fake = λ_pixel · pixel' + λ_adv · (adv' through D) + content' (through VGG) */
      for (size_t i = 0; i < nh; i++)
        s->dgen[i] *= (float)o->lambda_pixel;
      for (size_t i = 0; i < nP; i++)
        s->dpf_g[i] *= (float)o->lambda_adv;
      if ((rc = pit_net_backward(D, s->dpf_g, s->dtmp, 0, e)) < 0) /* D's last forward: fake */
        return rc;
      axpy(nh, 1.0f, s->dtmp, s->dgen);
      if (s->vgg) {
        const size_t nF = (size_t)n * s->F;
        if ((rc = pit_net_forward(s->vgg, s->hrb, n, 0, &y, e)) < 0)
          return rc;
        memcpy(s->feat, y, nF * sizeof(float)); // (n, 512, hr/16, hr/16)
        if ((rc = pit_net_forward(s->vgg, s->fake, n, 1, &y, e)) < 0)
          return rc;
        v[L_CONTENT] = pit_loss_l1(y, s->feat, nF, N * (double)s->F, s->dfeat);
        if ((rc = pit_net_backward(s->vgg, s->dfeat, s->dtmp, 0, e)) < 0)
          return rc;
        axpy(nh, 1.0f, s->dtmp, s->dgen);
      }
    }
  }
  if (n > 0 && (rc = pit_net_backward(G, s->dgen, NULL, 1, e)) < 0)
    return rc;
  if ((rc = tr_reduce(t, G, pit_now() - t1, v, 6, e)) < 0)
    return rc;
  tr_update(t, 0);

  if (!warm) { /* discriminator: the same real and generated batch, relativistic targets */
    double t3 = pit_now();
    pit_net_zero_grad(D);
    if (n > 0) {
      if ((rc = pit_net_backward(D, s->dpf_d, NULL, 1, e)) < 0 ||
          (rc = pit_net_forward(D, s->hrb, n, 1, &y, e)) < 0 ||
          (rc = pit_net_backward(D, s->dpr_d, NULL, 1, e)) < 0)
        return rc;
    }
    if ((rc = tr_reduce(t, D, pit_now() - t3, NULL, 0, e)) < 0)
      return rc;
    tr_update(t, 1);
  }
  for (int k = 0; k < 4; k++)
    s->loss[k] = v[k];
  s->loss[L_G] = warm ? v[L_PIXEL]
                      : v[L_CONTENT] + o->lambda_adv * v[L_ADV] + o->lambda_pixel * v[L_PIXEL];
  *stop_out = v[5] > 0;
  return 0;
}

double tr_esrgan_loss_d(const struct trainer *t) {
  return t->sr->warm ? 0.0 : t->sr->loss[L_D];
}

double tr_esrgan_loss_g(const struct trainer *t) { return t->sr->loss[L_G]; }

void tr_esrgan_losses(const struct trainer *t, struct pit_record *r) {
  static const char *const all[] = {"d", "g", "content", "adv", "pixel"};
  const struct tr_esrgan *s = t->sr;
  const double val[] = {s->loss[L_D], s->loss[L_G], s->loss[L_CONTENT], s->loss[L_ADV], s->loss[L_PIXEL]};
  const int first = s->warm ? 1 : 0; /* warm-up: g and pixel only */
  r->nlosses = 0;
  for (int k = first; k < 5; k++) {
    if (s->warm && (k == 2 || k == 3))
      continue;
    snprintf(r->loss_name[r->nlosses], sizeof r->loss_name[0], "%s", all[k]);
    r->loss_val[r->nlosses++] = val[k];
  }
}

/* ---- validation and the sample grid ---- */

/* Up to SR_VAL_MAX fixed validation crops (centre crops) and their inputs: *hr (m, 3, hr, hr),
 * *lr (m, 3, lr, lr), malloc'd, owned by the caller. */
static int val_crops(struct trainer *t, float **hr, float **lr, int *m, struct pit_err *e) {
  struct tr_esrgan *s = t->sr;
  const struct pit_dataset *ds = t->test.n > 0 ? &t->test : &t->train;
  int k = ds->n < SR_VAL_MAX ? (int)ds->n : SR_VAL_MAX;
  const int S = ds->h;
  *hr = malloc(sizeof(float) * (size_t)k * s->himg);
  *lr = malloc(sizeof(float) * (size_t)k * s->limg);
  float *img = malloc(sizeof(float) * (size_t)3 * S * S);
  int rc = 0;
  if (!*hr || !*lr || !img)
    rc = pit_err_set(e, PIT_ENOMEM, "out of memory for validation crops");
  for (int i = 0; i < k && rc == 0; i++) {
    int64_t gi = i;
    if ((rc = pit_dataset_gather(ds, &gi, 1, img, NULL)) < 0) {
      rc = pit_err_set(e, PIT_EIO, "cannot read validation image %d of '%s'", i, ds->name);
      break;
    }
    crop(img, S, s->hr, (S - s->hr) / 2, (S - s->hr) / 2, *hr + (size_t)i * s->himg);
    rc = pit_resize(*hr + (size_t)i * s->himg, 3, s->hr, s->hr, *lr + (size_t)i * s->limg, s->lr, s->lr,
                    PIT_RESIZE_BICUBIC, e);
  }
  free(img);
  *m = k;
  return rc;
}

/* A model-space value of channel c → [0, 1] RGB: ImageNet-normalised (image folders) or
 * in [-1, 1] (synthetic data); clamped. */
static float to01(float v, int c, int imagenet) {
  static const float mean[3] = {0.485f, 0.456f, 0.406f}, std[3] = {0.229f, 0.224f, 0.225f};
  v = imagenet ? v * std[c] + mean[c] : (v + 1.0f) * 0.5f;
  return v < 0 ? 0 : v > 1 ? 1 : v;
}

/* For the validation crops: out (m, 3, hr, hr) = the model's output, bic = bicubic
 * upscaling of the input, hr the targets; all turned into [0, 1] RGB when the data is
 * ImageNet-normalised (images) or clamped from [-1, 1] otherwise. */
static int val_outputs(struct trainer *t, float **hr, float **lr, float **out, float **bic, int *m,
                       struct pit_err *e) {
  struct tr_esrgan *s = t->sr;
  *out = *bic = NULL;
  int rc = val_crops(t, hr, lr, m, e);
  if (rc < 0)
    return rc;
  *out = malloc(sizeof(float) * (size_t)*m * s->himg);
  *bic = malloc(sizeof(float) * (size_t)*m * s->himg);
  if (!*out || !*bic)
    return pit_err_set(e, PIT_ENOMEM, "out of memory for validation");
  for (int i = 0; i < *m && rc == 0; i += (int)t->B) {
    int k = *m - i < t->B ? *m - i : (int)t->B;
    const float *y;
    if ((rc = pit_net_forward(t->net[0], *lr + (size_t)i * s->limg, k, 0, &y, e)) < 0)
      return rc;
    memcpy(*out + (size_t)i * s->himg, y, sizeof(float) * (size_t)k * s->himg);
  }
  const int imagenet = strcmp(t->o->data, "images") == 0;
  const size_t hw = (size_t)s->hr * s->hr;
  for (int i = 0; i < *m && rc == 0; i++) {
    rc = pit_resize(*lr + (size_t)i * s->limg, 3, s->lr, s->lr, *bic + (size_t)i * s->himg, s->hr, s->hr,
                    PIT_RESIZE_BICUBIC, e);
    if (rc == 0 && s->skip)
      axpy(s->himg, 1.0f, *bic + (size_t)i * s->himg, *out + (size_t)i * s->himg);
    float *im[3] = {*hr + (size_t)i * s->himg, *out + (size_t)i * s->himg, *bic + (size_t)i * s->himg};
    for (int j = 0; j < 3; j++)
      for (size_t q = 0; q < 3 * hw; q++)
        im[j][q] = to01(im[j][q], (int)(q / hw), imagenet);
  }
  return rc;
}

static double psnr(const float *a, const float *b, size_t n) {
  double se = 0;
  for (size_t i = 0; i < n; i++)
    se += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
  return se > 0 ? 10.0 * log10((double)n / se) : INFINITY;
}

int tr_esrgan_validate(struct trainer *t, double *psnr_model, double *psnr_bicubic, struct pit_err *e) {
  float *hr = NULL, *lr = NULL, *out = NULL, *bic = NULL;
  int m = 0;
  int rc = val_outputs(t, &hr, &lr, &out, &bic, &m, e);
  if (rc == 0) {
    size_t n = (size_t)m * t->sr->himg;
    *psnr_model = psnr(out, hr, n);
    *psnr_bicubic = psnr(bic, hr, n);
  }
  free(hr);
  free(lr);
  free(out);
  free(bic);
  return rc;
}

int tr_esrgan_grid(struct trainer *t, const char *path, struct pit_err *e) {
  struct tr_esrgan *s = t->sr;
  float *hr = NULL, *lr = NULL, *out = NULL, *bic = NULL, *grid = NULL;
  int m = 0;
  const int imagenet = strcmp(t->o->data, "images") == 0;
  int rc = val_outputs(t, &hr, &lr, &out, &bic, &m, e);
  /* rows: LR (nearest, 4x) | bicubic | output | HR, values to [-1, 1] for the PNG writer */
  if (rc == 0 && !(grid = malloc(sizeof(float) * 4 * (size_t)m * s->himg)))
    rc = pit_err_set(e, PIT_ENOMEM, "out of memory for the sample grid");
  const size_t hw = (size_t)s->hr * s->hr;
  for (int i = 0; i < m && rc == 0; i++) {
    float *row = grid + (size_t)i * 4 * s->himg;
    for (int c = 0; c < 3; c++) { /* the input, nearest-neighbour 4x */
      const float *l = lr + (size_t)i * s->limg + (size_t)c * s->lr * s->lr;
      for (int y = 0; y < s->hr; y++)
        for (int x = 0; x < s->hr; x++)
          row[c * hw + (size_t)y * s->hr + x] = to01(l[(y / 4) * s->lr + x / 4], c, imagenet);
    }
    memcpy(row + s->himg, bic + (size_t)i * s->himg, sizeof(float) * s->himg);
    memcpy(row + 2 * s->himg, out + (size_t)i * s->himg, sizeof(float) * s->himg);
    memcpy(row + 3 * s->himg, hr + (size_t)i * s->himg, sizeof(float) * s->himg);
  }
  if (rc == 0) {
    for (size_t q = 0; q < 4 * (size_t)m * s->himg; q++)
      grid[q] = grid[q] * 2.0f - 1.0f;
    rc = pit_png_grid_write(path, grid, 4 * m, 3, s->hr, s->hr, 4, e);
  }
  PIT_FREE_ALL(hr, lr, out, bic, grid);
  return rc;
}
