/* opts.c — train's options written once (see trainopts.h): defaults, the
 * model table, the option table, and what is derived from them: parsing of
 * one value, validation, --help lines, and the argv that gives the same
 * options back to `pitstop train`.
 * Invariants: every field a table row names is set only through
 * pit_train_opt_set; a row's range/choices are checked both when a value is
 * parsed and by pit_train_check (options set by code, e.g. sweep, are checked
 * too); pit_train_opts_argv emits exactly what pit_train_opt_set reads back. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "pitstop/trainopts.h"

/* Defaults measured on Fashion-MNIST (docs/train.md): classifiers batch 8, SGD
 * lr 0.005 momentum 0.9, cosine schedule; dcgan the PyTorch example's Adam 2e-4,
 * batch 64, 64x64 images. Adam's lr for classifiers: 1e-3. */
const struct pit_train_model pit_train_models[] = {
    {"cnn", 0, 8, "sgd", 0.005, 1e-3, 0.9, "cosine", 0, "PyTorch's CIFAR-10 tutorial net"},
    {"cnn-wide", 0, 8, "sgd", 0.005, 1e-3, 0.9, "cosine", 0, "the same, 64 channels in the first conv"},
    {"dcgan", 1, 64, "adam", 0.005, 2e-4, 0.9, "constant", 64, "PyTorch's DCGAN example (a GAN)"},
    /* PyTorch-GAN's esrgan.py: batch 4, Adam 2e-4 (betas 0.9/0.999); image size: --hr-size */
    {"esrgan", 1, 4, "adam", 0.005, 2e-4, 0.9, "constant", 0,
     "ESRGAN 4x super-resolution (PyTorch-GAN's; a GAN with a VGG19 content loss)"},
    {NULL, 0, 0, NULL, 0, 0, 0, NULL, 0, NULL}};

const struct pit_train_model *pit_train_model_find(const char *name) {
  for (const struct pit_train_model *m = pit_train_models; name && m->name; m++)
    if (strcmp(m->name, name) == 0)
      return m;
  return NULL;
}

void pit_train_opts_init(struct pit_train_opts *o) {
  *o = (struct pit_train_opts){
      .model = "cnn", .data = "fashion-mnist", .batch = 0 /* the model's default */, .epochs = 1, .lr = -1,
      .momentum = -1, .seed = 1, .validate = 1, .batch_shares = "equal", .rebalance_every = 10,
      .backend = PIT_BACKEND_FAST,
      /* esrgan */
      .residual_blocks = 23, .filters = 64, .hr_size = 128, .warmup_batches = 500, .lambda_adv = 5e-3,
      .lambda_pixel = 1e-2, .content_loss = "vgg", .global_skip = "none", .t_process_start = pit_now()};
}

#define F(field) offsetof(struct pit_train_opts, field)
#define BIG 1e15
/* Order: the order of --help and of the argv given to train. */
const struct pit_train_optdef pit_train_optdefs[] = {
    {"model", "M", PIT_TOPT_STR, F(model), 0, 0, "cnn|cnn-wide|dcgan|esrgan", PIT_TOPT_ALWAYS, "model"},
    {"data", "D", PIT_TOPT_STR, F(data), 0, 0, "fashion-mnist|cifar10|images|synthetic", PIT_TOPT_ALWAYS, "dataset"},
    {"data-dir", "DIR", PIT_TOPT_STR, F(data_dir), 0, 0, NULL, 0, "dataset directory (default: the kind's own)"},
    {"batch-size", "B", PIT_TOPT_I64, F(batch), 1, BIG, NULL, 0, "GLOBAL batch, over all ranks"},
    {"epochs", "E", PIT_TOPT_I64, F(epochs), 0, BIG, NULL, PIT_TOPT_POSITIVE, "epochs"},
    {"max-iters", "N", PIT_TOPT_I64, F(max_iters), 0, BIG, NULL, 0,
     "stop after N iterations in all (alone: whatever epochs it takes)"},
    {"until-steady", "P", PIT_TOPT_F64, F(until_steady), 1e-6, 0.999999, NULL, 0,
     "stop once t_p's 95% half-width is <= P*t_p after the warm-up (e.g. 0.02)"},
    {"lr", "X", PIT_TOPT_F64, F(lr), 1e-300, 100, NULL, 0, "learning rate"},
    {"optimizer", "O", PIT_TOPT_STR, F(optimizer), 0, 0, "sgd|adam", 0, "optimizer"},
    {"momentum", "M", PIT_TOPT_F64, F(momentum), 0, 0.999999999, NULL, 0, "SGD momentum, in [0, 1)"},
    {"lr-schedule", "S", PIT_TOPT_STR, F(lr_schedule), 0, 0, "constant|cosine", 0,
     "cosine: lr·½(1+cos(π·step/total)) over the planned iterations"},
    {"seed", "S", PIT_TOPT_U64, F(seed), 0, 9.2e18, NULL, 0, "seed of initialisation, shuffling and noise"},
    {"threads", "T", PIT_TOPT_INT, F(threads), 0, 1024, NULL, 0, "threads per rank (default: the CPUs the rank may use: affinity, cgroup quota)"},
    {"image-size", "N", PIT_TOPT_INT, F(image_size), 0, 4096, NULL, 0, "resize images to NxN (dcgan: 64 or 32)"},
    {"limit", "N", PIT_TOPT_I64, F(limit), 0, BIG, NULL, 0, "use only the first N training samples"},
    {"no-validation", NULL, PIT_TOPT_OFF, F(validate), 0, 1, NULL, 0, "skip the test-set accuracy after each epoch"},
    {"events", "FILE|-", PIT_TOPT_STR, F(events), 0, 0, NULL, 0,
     "JSON Lines records (- = stdout, then nothing else goes there)"},
    {"itype", "NAME", PIT_TOPT_STR, F(itype), 0, 0, NULL, 0, "instance-type label for the configuration"},
    {"out", "DIR", PIT_TOPT_STR, F(out), 0, 0, NULL, 0, "checkpoints and sample grids go here"},
    {"checkpoint-every", "N", PIT_TOPT_I64, F(checkpoint_every), 0, BIG, NULL, 0,
     "checkpoint every N iterations (needs --out)"},
    {"resume", "CKPT|auto", PIT_TOPT_STR, F(resume), 0, 0, NULL, 0, "continue from a checkpoint (any number of ranks); auto: the newest valid one in --out"},
    {"sample-interval", "N", PIT_TOPT_I64, F(sample_interval), 0, BIG, NULL, 0, "dcgan: sample grid every N iterations"},
    {"batch-shares", "equal|auto|w1,w2,...", PIT_TOPT_STR, F(batch_shares), 0, 0, NULL, 0,
     "split of the global batch among ranks"},
    {"rebalance-every", "K", PIT_TOPT_INT, F(rebalance_every), 1, 999999, NULL, 0,
     "auto shares: rebalance every K iterations"},
    {"check-sync", "N", PIT_TOPT_I64, F(check_sync), 0, BIG, NULL, 0,
     "compare parameter checksums across ranks every N iterations"},
    {"backend", "fast|ref", PIT_TOPT_BACKEND, F(backend), 0, 0, "fast|ref", 0,
     "kernels: oneDNN (fast) or the plain C reference"},
    {"residual-blocks", "N", PIT_TOPT_INT, F(residual_blocks), 0, 52, NULL, 0,
     "esrgan: residual-in-residual dense blocks in the generator"},
    {"filters", "N", PIT_TOPT_INT, F(filters), 1, 1024, NULL, 0, "esrgan: generator filters"},
    {"hr-size", "N", PIT_TOPT_INT, F(hr_size), 16, 4096, NULL, 0,
     "esrgan: high-resolution crop side, a multiple of 16 (the input is N/4)"},
    {"warmup-batches", "N", PIT_TOPT_I64, F(warmup_batches), 0, BIG, NULL, 0,
     "esrgan: first N iterations train the generator on the pixel loss only"},
    {"lambda-adv", "X", PIT_TOPT_F64, F(lambda_adv), 0, 1e6, NULL, 0, "esrgan: adversarial loss weight"},
    {"lambda-pixel", "X", PIT_TOPT_F64, F(lambda_pixel), 0, 1e6, NULL, 0, "esrgan: pixel (L1) loss weight"},
    {"content-loss", "K", PIT_TOPT_STR, F(content_loss), 0, 0, "vgg|none|random-vgg", 0,
     "esrgan: VGG19 content loss (vgg needs --vgg-weights; random-vgg: random weights, timing only)"},
    {"global-skip", "K", PIT_TOPT_STR, F(global_skip), 0, 0, "none|bicubic", 0,
     "esrgan: none (the original) or bicubic: the generator learns the residual over bicubic upscaling"},
    {"vgg-weights", "FILE", PIT_TOPT_STR, F(vgg_weights), 0, 0, NULL, 0,
     "esrgan: VGG19 features[:35] weights, safetensors (docs/train.md shows the export)"},
    {"val-dir", "DIR", PIT_TOPT_STR, F(val_dir), 0, 0, NULL, 0,
     "esrgan: held-out photos for validation PSNR and the sample grid (default: the first 8 training images)"},
    {"db", "PATH", PIT_TOPT_STR, F(db), 0, 0, NULL, 0, "store the records in this SQLite store"},
    {"run", "ID", PIT_TOPT_STR, F(run), 0, 0, NULL, 0, "run id (default: model-date-pid)"},
    {NULL, NULL, 0, 0, 0, 0, NULL, 0, NULL}};
#undef F

const struct pit_train_optdef *pit_train_opt_find(const char *name) {
  for (const struct pit_train_optdef *d = pit_train_optdefs; name && d->name; d++)
    if (strcmp(d->name, name) == 0)
      return d;
  return NULL;
}

/* 1 when s is one of the '|'-separated choices. */
static int is_choice(const char *s, const char *choices) {
  size_t n = strlen(s);
  for (const char *c = choices; c && *c;) {
    const char *bar = strchr(c, '|');
    size_t len = bar ? (size_t)(bar - c) : strlen(c);
    if (len == n && strncmp(c, s, n) == 0)
      return 1;
    c = bar ? bar + 1 : c + len;
  }
  return 0;
}

/* value is not a number of d's kind. */
static int number_err(const struct pit_train_optdef *d, const char *value, struct pit_err *e) {
  return pit_err_set(e, PIT_EARG, "--%s expects a %s, not '%s'", d->name, d->kind == PIT_TOPT_F64 ? "number" : "whole number",
                     value);
}

/* value is a number outside d's range. */
static int range_err(const struct pit_train_optdef *d, const char *value, struct pit_err *e) {
  if (d->min > 0 && d->max >= BIG)
    return pit_err_set(e, PIT_EARG, "--%s must be a positive number, not '%s'", d->name, value);
  return pit_err_set(e, PIT_EARG, "--%s must be between %g and %g, not '%s'", d->name, d->min, d->max, value);
}

/* value is not one of d's choices. */
static int choice_err(const struct pit_train_optdef *d, const char *value, struct pit_err *e) {
  return pit_err_set(e, PIT_EARG, "unknown %s '%s' (%s)", d->name, value, d->choices);
}

int pit_train_opt_set(struct pit_train_opts *o, const struct pit_train_optdef *d, const char *value,
                      struct pit_err *e) {
  char *field = (char *)o + d->off;
  int64_t i;
  double x;
  switch (d->kind) {
  case PIT_TOPT_OFF:
    *(int *)field = 0;
    return 0;
  case PIT_TOPT_STR:
    if (d->choices && !is_choice(value, d->choices))
      return choice_err(d, value, e);
    *(const char **)field = value;
    return 0;
  case PIT_TOPT_BACKEND:
    if (strcmp(value, "fast") == 0)
      *(enum pit_backend *)field = PIT_BACKEND_FAST;
    else if (strcmp(value, "ref") == 0)
      *(enum pit_backend *)field = PIT_BACKEND_REF;
    else
      return choice_err(d, value, e);
    return 0;
  case PIT_TOPT_F64:
    if (pit_parse_f64(value, &x) < 0)
      return number_err(d, value, e);
    if (!(x >= d->min && x <= d->max))
      return range_err(d, value, e);
    *(double *)field = x;
    return 0;
  case PIT_TOPT_I64:
  case PIT_TOPT_INT:
  case PIT_TOPT_U64:
    if (pit_parse_i64(value, &i) < 0)
      return number_err(d, value, e);
    if ((double)i < d->min || (double)i > d->max)
      return range_err(d, value, e);
    if (d->kind == PIT_TOPT_I64)
      *(int64_t *)field = i;
    else if (d->kind == PIT_TOPT_INT)
      *(int *)field = (int)i;
    else
      *(uint64_t *)field = (uint64_t)i;
    return 0;
  }
  return PIT_BUG(e, "option --%s has an unknown kind %d", d->name, (int)d->kind);
}

/* The field of d in o as a number (numeric kinds), for range checks and comparisons. */
static double num_of(const struct pit_train_opts *o, const struct pit_train_optdef *d) {
  const char *field = (const char *)o + d->off;
  switch (d->kind) {
  case PIT_TOPT_I64: return (double)*(const int64_t *)field;
  case PIT_TOPT_INT:
  case PIT_TOPT_OFF: return (double)*(const int *)field;
  case PIT_TOPT_U64: return (double)*(const uint64_t *)field;
  case PIT_TOPT_F64: return *(const double *)field;
  case PIT_TOPT_BACKEND: return (double)*(const enum pit_backend *)field;
  case PIT_TOPT_STR: return 0;
  }
  return 0;
}

/* The value of d in o as train's argument text (buf has room for any number). */
static const char *text_of(const struct pit_train_opts *o, const struct pit_train_optdef *d, char *buf, size_t n) {
  const char *field = (const char *)o + d->off;
  switch (d->kind) {
  case PIT_TOPT_STR: return *(const char *const *)field;
  case PIT_TOPT_BACKEND: return *(const enum pit_backend *)field == PIT_BACKEND_REF ? "ref" : "fast";
  case PIT_TOPT_OFF: return NULL;
  case PIT_TOPT_I64: snprintf(buf, n, "%lld", (long long)*(const int64_t *)field); return buf;
  case PIT_TOPT_INT: snprintf(buf, n, "%d", *(const int *)field); return buf;
  case PIT_TOPT_U64: snprintf(buf, n, "%llu", (unsigned long long)*(const uint64_t *)field); return buf;
  case PIT_TOPT_F64: {
    double x = *(const double *)field, back;
    snprintf(buf, n, "%.15g", x); /* shortest that reads back the same */
    if (pit_parse_f64(buf, &back) < 0 || back != x)
      snprintf(buf, n, "%.17g", x);
    return buf;
  }
  }
  return NULL;
}

/* 1 when the field of d differs between a and b. */
static int differs(const struct pit_train_opts *a, const struct pit_train_opts *b, const struct pit_train_optdef *d) {
  if (d->kind == PIT_TOPT_STR) {
    const char *x = *(const char *const *)((const char *)a + d->off), *y = *(const char *const *)((const char *)b + d->off);
    return (x == NULL) != (y == NULL) || (x && strcmp(x, y) != 0);
  }
  return num_of(a, d) != num_of(b, d);
}

/* A value a row's checks would refuse (set by code rather than parsed, or out of range). */
static int check_row(const struct pit_train_opts *o, const struct pit_train_opts *def, const struct pit_train_optdef *d,
                     struct pit_err *e) {
  if (!differs(o, def, d) || d->kind == PIT_TOPT_OFF)
    return 0;
  char buf[64];
  const char *v = text_of(o, d, buf, sizeof buf);
  if (d->kind == PIT_TOPT_STR)
    return v && d->choices && !is_choice(v, d->choices) ? choice_err(d, v, e) : 0;
  if (d->kind == PIT_TOPT_BACKEND)
    return 0;
  double x = num_of(o, d);
  return x >= d->min && x <= d->max ? 0 : range_err(d, v, e);
}

int pit_train_check(const struct pit_train_opts *o, struct pit_err *e) {
  struct pit_train_opts def;
  pit_train_opts_init(&def);
  if (!o->model || !pit_train_model_find(o->model)) {
    pit_err_set(e, PIT_EARG, "unknown model '%s'", o->model ? o->model : "");
    pit_err_hint(e, "models: cnn, cnn-wide, dcgan, esrgan");
    return PIT_EARG;
  }
  if (!o->data || !is_choice(o->data, pit_train_opt_find("data")->choices)) {
    pit_err_set(e, PIT_EARG, "unknown data '%s'", o->data ? o->data : "");
    pit_err_hint(e, "data: fashion-mnist, cifar10, images (with --data-dir), synthetic");
    return PIT_EARG;
  }
  /* batch 0 and lr/momentum < 0 mean "the model's default": not range errors */
  if (o->batch < 0)
    return pit_err_set(e, PIT_EARG, "--batch-size must be a positive number, not %lld", (long long)o->batch);
  if (o->batch > 1 << 20)
    return pit_err_set(e, PIT_EARG, "--batch-size %lld is too large", (long long)o->batch);
  if (!isfinite(o->lr))
    return pit_err_set(e, PIT_EARG, "--lr %g is not a usable learning rate", o->lr);
  for (const struct pit_train_optdef *d = pit_train_optdefs; d->name; d++) {
    if ((d->off == offsetof(struct pit_train_opts, batch) && o->batch == 0) ||
        (d->off == offsetof(struct pit_train_opts, lr) && o->lr <= 0) ||
        (d->off == offsetof(struct pit_train_opts, momentum) && o->momentum < 0))
      continue;
    int rc = check_row(o, &def, d, e);
    if (rc)
      return rc;
  }
  if (o->epochs == 0 && o->max_iters == 0)
    return pit_err_set(e, PIT_EARG, "nothing to do: --epochs 0 and no --max-iters");
  if (o->checkpoint_every > 0 && !o->out)
    return pit_err_set(e, PIT_EARG, "--checkpoint-every needs --out DIR (where checkpoints go)");
  if (o->resume && strcmp(o->resume, "auto") == 0 && !o->out)
    return pit_err_set(e, PIT_EARG, "--resume auto needs --out DIR (where it looks for checkpoints)");
  if (strcmp(o->data, "images") == 0 && !o->data_dir)
    return pit_err_set(e, PIT_EARG, "--data images needs --data-dir DIR (a folder of PNG/JPEG files)");
  if (!pit_train_model_find(o->model)->gan && strcmp(o->data, "images") == 0)
    return pit_err_set(e, PIT_EARG, "model '%s' is a classifier and needs labels; an image folder has none",
                       o->model);
  if (strcmp(o->model, "esrgan") == 0) {
    if (strcmp(o->data, "images") != 0 && strcmp(o->data, "synthetic") != 0)
      return pit_err_set(e, PIT_EARG, "esrgan trains on photos: --data images --data-dir DIR (or synthetic), not '%s'",
                         o->data);
    if (o->hr_size % 16 != 0)
      return pit_err_set(e, PIT_EARG, "--hr-size must be a multiple of 16 (4x upscaling, a discriminator "
                                      "and VGG that halve it 4 times), not %d", o->hr_size);
    const char *cl = o->content_loss ? o->content_loss : "vgg";
    if (strcmp(cl, "vgg") == 0 && !o->vgg_weights) {
      pit_err_set(e, PIT_EARG, "esrgan's content loss needs VGG19 weights, which cannot be downloaded here");
      pit_err_hint(e, "--vgg-weights FILE (docs/train.md: a three-line export where torchvision's weights "
                      "are at hand), or --content-loss none, or --content-loss random-vgg for timing runs");
      return PIT_EARG;
    }
    if (strcmp(cl, "vgg") != 0 && o->vgg_weights)
      return pit_err_set(e, PIT_EARG, "--vgg-weights is given but --content-loss %s does not use it", cl);
    if (o->image_size > 0 && o->image_size < o->hr_size)
      return pit_err_set(e, PIT_EARG, "--image-size %d is smaller than the --hr-size %d crops", o->image_size,
                         o->hr_size);
  }
  return 0;
}

void pit_train_argv_free(char **argv) {
  for (int i = 0; argv && argv[i]; i++)
    free(argv[i]);
  free(argv);
}

int pit_train_opts_argv(const struct pit_train_opts *o, char ***argv, int *argc, struct pit_err *e) {
  struct pit_train_opts def;
  pit_train_opts_init(&def);
  size_t n = 0, cap = 0;
  char **a = NULL;
  int rc = 0;
  for (const struct pit_train_optdef *d = pit_train_optdefs; d->name && !rc; d++) {
    int pass = d->flags & PIT_TOPT_POSITIVE ? num_of(o, d) > 0 : (d->flags & PIT_TOPT_ALWAYS) || differs(o, &def, d);
    char buf[64];
    const char *v = text_of(o, d, buf, sizeof buf);
    if (!pass || (d->kind == PIT_TOPT_STR && !v))
      continue;
    if (PIT_GROW(a, n + 3, cap)) {
      rc = PIT_ENOMEM;
      break;
    }
    size_t len = strlen(d->name) + 3;
    if ((a[n] = malloc(len)) == NULL) {
      rc = PIT_ENOMEM;
      break;
    }
    snprintf(a[n++], len, "--%s", d->name);
    a[n] = NULL;
    if (d->kind != PIT_TOPT_OFF) {
      if ((a[n] = strdup(v)) == NULL) {
        rc = PIT_ENOMEM;
        break;
      }
      a[++n] = NULL;
    }
  }
  if (!rc && !a && !(a = calloc(1, sizeof *a)))
    rc = PIT_ENOMEM;
  if (rc) {
    pit_train_argv_free(a);
    return pit_err_set(e, rc, "out of memory");
  }
  *argv = a;
  *argc = (int)n;
  return 0;
}

/* The per-model default of option d, as help text ("cnn 8, dcgan 64"), or "". */
static void model_defaults(const struct pit_train_optdef *d, char *buf, size_t n) {
  buf[0] = '\0';
  size_t off = 0;
  for (const struct pit_train_model *m = pit_train_models; m->name && off < n; m++) {
    char v[64] = "";
    if (d->off == offsetof(struct pit_train_opts, batch))
      snprintf(v, sizeof v, "%lld", (long long)m->batch);
    else if (d->off == offsetof(struct pit_train_opts, optimizer))
      snprintf(v, sizeof v, "%s", m->optimizer);
    else if (d->off == offsetof(struct pit_train_opts, lr))
      snprintf(v, sizeof v, "sgd %g, adam %g", m->lr_sgd, m->lr_adam);
    else if (d->off == offsetof(struct pit_train_opts, momentum))
      snprintf(v, sizeof v, "%g", m->momentum);
    else if (d->off == offsetof(struct pit_train_opts, lr_schedule))
      snprintf(v, sizeof v, "%s", m->lr_schedule);
    else if (d->off == offsetof(struct pit_train_opts, image_size) && m->image_size)
      snprintf(v, sizeof v, "%d", m->image_size);
    if (v[0])
      off += (size_t)snprintf(buf + off, n - off, "%s%s %s", off ? "; " : " (default: ", m->name, v);
  }
  if (off && off < n)
    snprintf(buf + off, n - off, ")");
}

void pit_train_opts_help(FILE *f) {
  struct pit_train_opts def;
  pit_train_opts_init(&def);
  for (const struct pit_train_optdef *d = pit_train_optdefs; d->name; d++) {
    char head[96], defs[256];
    snprintf(head, sizeof head, "--%s%s%s", d->name, d->arg ? " " : "", d->arg ? (d->choices ? d->choices : d->arg) : "");
    model_defaults(d, defs, sizeof defs);
    /* the default of pit_train_opts_init, when it is a value (not "none" or "the model's") */
    char dbuf[64], plain[96] = "";
    const char *dv = text_of(&def, d, dbuf, sizeof dbuf);
    if (dv && (d->kind == PIT_TOPT_STR || d->kind == PIT_TOPT_BACKEND || num_of(&def, d) > 0))
      snprintf(plain, sizeof plain, " (default %s)", dv);
    fprintf(f, "  %-28s %s%s%s\n", head, d->help, plain, defs);
  }
}

void pit_train_models_help(FILE *f) {
  for (const struct pit_train_model *m = pit_train_models; m->name; m++)
    fprintf(f, "  %-28s %s\n", m->name, m->what);
}
