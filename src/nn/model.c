/* model.c — the built-in model specs (cnn, cnn-wide, dcgan 64/32) and the shape,
 * parameter-offset and FLOP bookkeeping shared by both network backends.
 * Invariant: offsets follow PyTorch's state_dict order for the same model. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nn/rrdb.h"
#include "pitstop/nn.h"

static const char *kind_name(enum pit_layer_kind k) {
  static const char *n[] = {"conv",    "deconv", "linear", "maxpool", "batchnorm",
                            "relu",    "leakyrelu", "tanh", "sigmoid", "pixelshuffle",
                            "skip",    "skipadd", "rrdb"};
  return n[k];
}

int pit_model_spec_finish(struct pit_model_spec *m, int in_c, int in_h, int in_w, struct pit_err *e) {
  int c = in_c, h = in_h, w = in_w;
  size_t p = 0, s = 0;
  int i = 0;
  int open[PIT_MAX_LAYERS], nopen = 0; /* indexes of the SKIP layers not yet closed */
  m->in_c = in_c;
  m->in_h = in_h;
  m->in_w = in_w;
  m->flops_fwd = 0;
  for (i = 0; i < m->n; i++) {
    struct pit_layer_spec *L = &m->layer[i];
    L->in_c = c;
    L->in_h = h;
    L->in_w = w;
    L->w_off = L->b_off = p;
    L->w_len = L->b_len = 0;
    L->s_off = s;
    L->flops_fwd = 0;
    switch (L->kind) {
    case PIT_L_CONV:
      h = (h + 2 * L->pad - L->k) / L->stride + 1;
      w = (w + 2 * L->pad - L->k) / L->stride + 1;
      if (L->in_h + 2 * L->pad < L->k || L->in_w + 2 * L->pad < L->k)
        goto bad;
      L->w_len = (size_t)L->out_c * c * L->k * L->k;
      L->flops_fwd = 2.0 * L->w_len * h * w;
      c = L->out_c;
      break;
    case PIT_L_DECONV:
      h = (h - 1) * L->stride - 2 * L->pad + L->k;
      w = (w - 1) * L->stride - 2 * L->pad + L->k;
      if (h <= 0 || w <= 0)
        goto bad;
      L->w_len = (size_t)c * L->out_c * L->k * L->k;
      L->flops_fwd = 2.0 * L->w_len * L->in_h * L->in_w;
      c = L->out_c;
      break;
    case PIT_L_LINEAR:
      L->w_len = (size_t)L->out_c * c * h * w;
      L->flops_fwd = 2.0 * L->w_len;
      c = L->out_c;
      h = w = 1;
      break;
    case PIT_L_MAXPOOL:
      if (h < L->k || w < L->k)
        goto bad;
      h = (h - L->k) / L->stride + 1;
      w = (w - L->k) / L->stride + 1;
      break;
    case PIT_L_BATCHNORM:
      L->w_len = (size_t)c;
      L->b_len = (size_t)c;
      s += 2 * (size_t)c;
      break;
    case PIT_L_SHUFFLE:
      if (L->k < 1 || c % (L->k * L->k) != 0)
        return pit_err_set(e, PIT_EARG,
                           "model '%s' layer %d (pixelshuffle %d): %d channels are not a multiple "
                           "of %d",
                           m->name, i + 1, L->k, c, L->k * L->k);
      c /= L->k * L->k;
      h *= L->k;
      w *= L->k;
      break;
    case PIT_L_SKIP:
      if (nopen >= PIT_MAX_LAYERS)
        goto bad;
      open[nopen++] = i;
      break;
    case PIT_L_SKIPADD: {
      if (nopen == 0)
        return pit_err_set(e, PIT_EARG, "model '%s' layer %d: skipadd without an open skip",
                           m->name, i + 1);
      const struct pit_layer_spec *S = &m->layer[open[--nopen]];
      if (S->in_c != c || S->in_h != h || S->in_w != w)
        return pit_err_set(e, PIT_EARG,
                           "model '%s' layer %d: skipadd of %dx%dx%d onto the %dx%dx%d of layer %d",
                           m->name, i + 1, c, h, w, S->in_c, S->in_h, S->in_w, open[nopen] + 1);
      L->pair = open[nopen];
      break;
    }
    case PIT_L_RRDB:
      if (L->out_c != c)
        return pit_err_set(e, PIT_EARG, "model '%s' layer %d (rrdb of %d filters) gets %d channels",
                           m->name, i + 1, L->out_c, c);
      L->w_len = PIT_RRDB_DENSE * pit_rrdb_dense_params(c);
      for (int d = 0; d < PIT_RRDB_DENSE; d++)
        for (int j = 1; j <= PIT_RRDB_CONVS; j++)
          L->flops_fwd += pit_rrdb_conv(L, d, j).flops_fwd;
      break;
    default:
      break;
    }
    if (L->kind == PIT_L_CONV || L->kind == PIT_L_DECONV || L->kind == PIT_L_LINEAR)
      L->b_len = L->bias ? (size_t)L->out_c : 0;
    L->b_off = L->w_off + L->w_len;
    p += L->w_len + L->b_len;
    L->o_c = c;
    L->o_h = h;
    L->o_w = w;
    m->flops_fwd += L->flops_fwd;
  }
  if (nopen > 0)
    return pit_err_set(e, PIT_EARG, "model '%s': the skip of layer %d is never closed", m->name,
                       open[nopen - 1] + 1);
  m->out_c = c;
  m->out_h = h;
  m->out_w = w;
  m->nparams = p;
  m->nstate = s;
  return 0;
bad:
  return pit_err_set(e, PIT_EARG,
                     "model '%s' cannot take %dx%dx%d input: layer %d (%s) would have no output",
                     m->name, in_c, in_h, in_w, i + 1, kind_name(m->layer[i].kind));
}

static struct pit_layer_spec conv(int oc, int k, int s, int p, int bias) {
  return (struct pit_layer_spec){.kind = PIT_L_CONV, .out_c = oc, .k = k, .stride = s, .pad = p, .bias = bias};
}
static struct pit_layer_spec deconv(int oc, int k, int s, int p) {
  return (struct pit_layer_spec){.kind = PIT_L_DECONV, .out_c = oc, .k = k, .stride = s, .pad = p};
}
static struct pit_layer_spec lin(int oc) {
  return (struct pit_layer_spec){.kind = PIT_L_LINEAR, .out_c = oc, .bias = 1};
}
static struct pit_layer_spec simple(enum pit_layer_kind k) {
  return (struct pit_layer_spec){.kind = k, .alpha = 0.2f};
}
static struct pit_layer_spec pool2(void) {
  return (struct pit_layer_spec){.kind = PIT_L_MAXPOOL, .k = 2, .stride = 2};
}

int pit_model_is_gan(const char *name) {
  return strcmp(name, "dcgan") == 0 || strcmp(name, "esrgan") == 0;
}

/* Empties m and names it; returns its layer array to fill. */
static struct pit_layer_spec *spec_start(struct pit_model_spec *m, const char *name) {
  memset(m, 0, sizeof *m);
  snprintf(m->name, sizeof m->name, "%s", name);
  return m->layer;
}

static struct pit_layer_spec lrelu(float slope) {
  return (struct pit_layer_spec){.kind = PIT_L_LEAKYRELU, .alpha = slope};
}

int pit_model_build_esrgan(int channels, int hr, int blocks, int filters,
                           struct pit_model_spec *gen, struct pit_model_spec *disc,
                           struct pit_model_spec *vgg, struct pit_err *e) {
  const float g_slope = 0.01f; /* nn.LeakyReLU() in the generator */
  if (hr < 16 || hr % 16 != 0)
    return pit_err_set(e, PIT_EARG, "esrgan needs a high-resolution size that is a multiple of 16 "
                       "(4x upscaling, a discriminator and VGG that halve it 4 times), not %d", hr);
  if (filters < 1 || filters > 4096)
    return pit_err_set(e, PIT_EARG, "esrgan filters must be between 1 and 4096, not %d", filters);
  if (blocks < 0 || blocks > PIT_MAX_LAYERS - 12)
    return pit_err_set(e, PIT_EARG, "esrgan residual blocks must be between 0 and %d, not %d",
                       PIT_MAX_LAYERS - 12, blocks);
  /* generator: (channels, hr/4, hr/4) → (channels, hr, hr) */
  struct pit_layer_spec *L = spec_start(gen, "esrgan-g");
  int n = 0;
  L[n++] = conv(filters, 3, 1, 1, 1);                            /* conv1: out1 */
  L[n++] = simple(PIT_L_SKIP);
  for (int b = 0; b < blocks; b++)                               /* res_blocks */
    L[n++] = (struct pit_layer_spec){.kind = PIT_L_RRDB, .out_c = filters, .alpha = g_slope,
                                     .scale = 0.2f};
  L[n++] = conv(filters, 3, 1, 1, 1);                            /* conv2 */
  L[n++] = simple(PIT_L_SKIPADD);                                /* out1 + out2 */
  for (int u = 0; u < 2; u++) {                                  /* upsampling */
    L[n++] = conv(4 * filters, 3, 1, 1, 1);
    L[n++] = lrelu(g_slope);
    L[n++] = (struct pit_layer_spec){.kind = PIT_L_SHUFFLE, .k = 2};
  }
  L[n++] = conv(filters, 3, 1, 1, 1);                            /* conv3 */
  L[n++] = lrelu(g_slope);
  L[n++] = conv(channels, 3, 1, 1, 1);
  gen->n = n;
  int rc = pit_model_spec_finish(gen, channels, hr / 4, hr / 4, e);
  if (rc)
    return rc;
  /* discriminator: 4 blocks (conv s1, [BN], LeakyReLU 0.2, conv s2, BN, LeakyReLU 0.2) of
   * 64, 128, 256, 512 filters, then conv to 1: (channels, hr, hr) → (1, hr/16, hr/16) */
  struct pit_layer_spec *D = spec_start(disc, "esrgan-d");
  int d = 0;
  for (int i = 0, f = 64; i < 4; i++, f *= 2) {
    D[d++] = conv(f, 3, 1, 1, 1);
    if (i > 0)
      D[d++] = simple(PIT_L_BATCHNORM);
    D[d++] = lrelu(0.2f);
    D[d++] = conv(f, 3, 2, 1, 1);
    D[d++] = simple(PIT_L_BATCHNORM);
    D[d++] = lrelu(0.2f);
  }
  D[d++] = conv(1, 3, 1, 1, 1);
  disc->n = d;
  disc->batch_kernels = 1; /* D and VGG run after the warm-up only, whose trajectory depends on
                              the rank count anyway (BatchNorm per rank) */
  if ((rc = pit_model_spec_finish(disc, channels, hr, hr, e)))
    return rc;
  if (!vgg)
    return 0;
  /* VGG19 features[:35]: 64 x2, pool, 128 x2, pool, 256 x4, pool, 512 x4, pool, 512 x4,
   * each conv 3x3 pad 1 followed by ReLU, except the last (conv5_4 before its ReLU) */
  struct pit_layer_spec *V = spec_start(vgg, "vgg19-54");
  static const int stage_convs[5] = {2, 2, 4, 4, 4};
  int v = 0;
  for (int s = 0, f = 64; s < 5; s++, f = f < 512 ? f * 2 : 512) {
    for (int k = 0; k < stage_convs[s]; k++) {
      V[v++] = conv(f, 3, 1, 1, 1);
      if (s < 4 || k + 1 < stage_convs[s])
        V[v++] = simple(PIT_L_RELU);
    }
    if (s < 4)
      V[v++] = pool2();
  }
  vgg->n = v; /* 35 */
  vgg->batch_kernels = 1;
  return pit_model_spec_finish(vgg, 3, hr, hr, e);
}

int pit_model_build(const char *name, int channels, int image_size, int classes, int nz,
                    struct pit_model_spec *gen, struct pit_model_spec *disc, struct pit_err *e) {
  memset(gen, 0, sizeof *gen);
  snprintf(gen->name, sizeof gen->name, "%s", name);
  struct pit_layer_spec *L = gen->layer;
  int n = 0;
  if (strcmp(name, "cnn") == 0 || strcmp(name, "cnn-wide") == 0) {
    int wide = name[3] == '-';
    L[n++] = conv(wide ? 64 : 6, 5, 1, 0, 1);
    L[n++] = simple(PIT_L_RELU);
    L[n++] = pool2();
    L[n++] = conv(16, 5, 1, 0, 1);
    L[n++] = simple(PIT_L_RELU);
    L[n++] = pool2();
    L[n++] = lin(120);
    L[n++] = simple(PIT_L_RELU);
    L[n++] = lin(84);
    L[n++] = simple(PIT_L_RELU);
    L[n++] = lin(classes);
    gen->n = n;
    int rc = pit_model_spec_finish(gen, channels, image_size, image_size, e);
    if (rc) {
      pit_err_set(e, PIT_EARG, "model '%s' cannot take %dx%d images (needs at least 16x16)", name,
                  image_size, image_size);
      return rc;
    }
    return 0;
  }
  if (strcmp(name, "dcgan") == 0) {
    if (image_size != 64 && image_size != 32)
      return pit_err_set(e, PIT_EARG, "model 'dcgan' takes 64x64 or 32x32 images, not %dx%d",
                         image_size, image_size);
    if (!disc)
      return pit_err_set(e, PIT_EARG, "dcgan needs a discriminator spec");
    const int ngf = 64, ndf = 64;
    int mult = image_size == 64 ? 8 : 4;
    /* generator: (nz,1,1) → (channels, size, size) */
    L[n++] = deconv(ngf * mult, 4, 1, 0);
    L[n++] = simple(PIT_L_BATCHNORM);
    L[n++] = simple(PIT_L_RELU);
    for (int m = mult / 2; m >= 1; m /= 2) {
      L[n++] = deconv(ngf * m, 4, 2, 1);
      L[n++] = simple(PIT_L_BATCHNORM);
      L[n++] = simple(PIT_L_RELU);
    }
    L[n++] = deconv(channels, 4, 2, 1);
    L[n++] = simple(PIT_L_TANH);
    gen->n = n;
    snprintf(gen->name, sizeof gen->name, "dcgan-g");
    int rc = pit_model_spec_finish(gen, nz, 1, 1, e);
    if (rc)
      return rc;
    /* discriminator: (channels, size, size) → (1,1,1) */
    struct pit_layer_spec *D = spec_start(disc, "dcgan-d");
    int d = 0;
    D[d++] = conv(ndf, 4, 2, 1, 0);
    D[d++] = simple(PIT_L_LEAKYRELU);
    for (int m = 2; m <= mult; m *= 2) {
      D[d++] = conv(ndf * m, 4, 2, 1, 0);
      D[d++] = simple(PIT_L_BATCHNORM);
      D[d++] = simple(PIT_L_LEAKYRELU);
    }
    D[d++] = conv(1, 4, 1, 0, 0);
    D[d++] = simple(PIT_L_SIGMOID);
    disc->n = d;
    rc = pit_model_spec_finish(disc, channels, image_size, image_size, e);
    if (rc)
      return rc;
    if (gen->out_h != image_size || disc->out_h != 1)
      return pit_err_set(e, PIT_EARG, "dcgan shapes do not match %d", image_size);
    return 0;
  }
  if (strcmp(name, "esrgan") == 0)
    return pit_err_set(e, PIT_EARG, "model 'esrgan' is built by pit_model_build_esrgan");
  pit_err_set(e, PIT_ENOTFOUND, "unknown model '%s'", name);
  pit_err_hint(e, "models: cnn, cnn-wide, dcgan (esrgan: pit_model_build_esrgan)");
  return PIT_ENOTFOUND;
}
