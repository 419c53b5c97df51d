/* train.c — set-up, the iteration loop and tear-down of `pitstop train`
 * (contract in include/pitstop/train.h).
 *
 * Order of a generation: resume blob (rank 0 reads, broadcasts) → threads →
 * data → model and nets → parameters (init or checkpoint; rank 0's broadcast) →
 * sampler (restored from the checkpoint) → sinks → `init` record → iterations.
 * After each iteration: `iter` record; every K: rebalance shares, checksums,
 * checkpoint, GAN sample grid; at an epoch end: `validation` and `epoch`
 * records. A stop request ends the loop at an iteration boundary every rank
 * agreed on (it rides on the loss reduction), after a checkpoint.
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "pitstop/predict.h"
#include "train/train_impl.h"

static volatile sig_atomic_t stop_requested;

static int flush_pending(struct trainer *t, struct pit_err *e);

void pit_train_request_stop(void) { stop_requested = 1; }

/* ---------- set-up ---------- */

/* Threads per rank: --threads, else what the CPUs this rank may run on (its
 * affinity mask, its cgroup's quota) give it (pit_cpus_threads). */
static int default_threads(const struct pit_dist *d) {
  struct pit_cpus c;
  pit_cpus_probe(&c);
  return pit_cpus_threads(&c, d->local_size);
}

/* The datasets read (the training set, a classifier's test set, ESRGAN's held-out photos). */
static int read_data(struct trainer *t, struct pit_data_opts *dopt, struct pit_err *e) {
  const struct pit_train_opts *o = t->o;
  int rc = pit_dataset_load(&t->train, dopt, e);
  if (rc == PIT_EARG && t->esrgan && dopt->min_side > 0)
    pit_err_hint(e, "esrgan crops --hr-size %d squares from each photo: drop smaller photos or lower --hr-size",
                 dopt->min_side);
  if (rc < 0)
    return rc;
  if (t->esrgan && o->val_dir) { /* held-out photos for PSNR and the sample grid */
    dopt->dir = o->val_dir;
    dopt->limit = 0;
    return pit_dataset_load(&t->test, dopt, e);
  }
  if (!t->gan && o->validate && t->train.classes >= 2) {
    dopt->train = 0;
    dopt->limit = 0;
    if ((rc = pit_dataset_load(&t->test, dopt, e)) < 0)
      return rc;
    if (t->test.c != t->train.c || t->test.h != t->train.h || t->test.w != t->train.w)
      return pit_err_set(e, PIT_EFORMAT, "test and training images of '%s' differ in shape", t->train.name);
  }
  return 0;
}

static int load_data(struct trainer *t, struct pit_err *e) {
  const struct pit_train_opts *o = t->o;
  struct pit_data_opts dopt;
  memset(&dopt, 0, sizeof dopt);
  dopt.kind = o->data;
  dopt.dir = o->data_dir;
  dopt.train = 1;
  dopt.norm = t->gan ? PIT_NORM_GAN : PIT_NORM_CLASSIFIER;
  dopt.seed = t->seed;
  dopt.limit = o->limit;
  dopt.image_size = o->image_size;
  if (dopt.image_size == 0)
    dopt.image_size = pit_train_model_find(o->model)->image_size;
  if (t->esrgan)
    tr_esrgan_data_opts(t, &dopt);
  if (strcmp(o->data, "synthetic") == 0) {
    dopt.channels = 3;
    if (dopt.image_size == 0)
      dopt.image_size = 32; /* CIFAR-10's shape */
  }
  int rc;
  if (t->keep && t->keep->have) { /* the same options in the same process (an in-place shrink): the same data */
    t->train = t->keep->train;
    t->test = t->keep->test;
    memset(t->keep, 0, sizeof *t->keep);
  } else if ((rc = read_data(t, &dopt, e)) < 0) {
    return rc;
  }
  if (t->train.n <= 0)
    return pit_err_set(e, PIT_EFORMAT, "dataset '%s' holds no samples", t->train.name);
  if (t->train.h != t->train.w)
    return pit_err_set(e, PIT_EARG, "dataset '%s' has %dx%d images; pitstop's models take square images",
                       t->train.name, t->train.h, t->train.w);
  if (!t->gan && t->train.classes < 2)
    return pit_err_set(e, PIT_EARG, "dataset '%s' has no class labels; model '%s' is a classifier", t->train.name,
                       o->model);
  t->classes = t->train.classes;
  t->in_c = t->train.c;
  t->size = t->train.h;
  t->sample_floats = (size_t)t->train.c * t->train.h * t->train.w;
  return 0;
}

static int build_model(struct trainer *t, struct pit_err *e) {
  const struct pit_train_opts *o = t->o;
  if (t->esrgan)
    return tr_esrgan_build(t, e);
  int rc = pit_model_build(o->model, t->in_c, t->size, t->classes, PIT_NZ, &t->spec[0], &t->spec[1], e);
  if (rc < 0) {
    char keep[sizeof e->msg];
    snprintf(keep, sizeof keep, "%s", e->msg);
    pit_err_set(e, rc, "%s (data '%s' gives %dx%dx%d)", keep, o->data, t->in_c, t->size, t->size);
    if (t->gan)
      pit_err_hint(e, "--image-size 32 or 64 resizes the images");
    return rc;
  }
  t->nnets = t->gan ? 2 : 1;
  int64_t maxb = t->B;
  for (int i = 0; i < t->nnets; i++)
    if ((rc = pit_net_create(&t->net[i], &t->spec[i], (int)maxb, o->backend, e)) < 0)
      return rc;
  if (t->gan) {
    pit_init_dcgan(&t->spec[0], pit_net_params(t->net[0]), t->seed);
    pit_init_dcgan(&t->spec[1], pit_net_params(t->net[1]), t->seed + 1);
  } else {
    pit_init_default(&t->spec[0], pit_net_params(t->net[0]), t->seed);
  }
  for (int i = 0; i < t->nnets; i++)
    pit_init_state(&t->spec[i], pit_net_state(t->net[i]));

  const struct pit_train_model *md = pit_train_model_find(o->model);
  const char *optname = o->optimizer ? o->optimizer : md->optimizer;
  enum pit_optim_kind kind = strcmp(optname, "adam") == 0 ? PIT_OPT_ADAM : PIT_OPT_SGD;
  double lr = o->lr > 0 ? o->lr : kind == PIT_OPT_ADAM ? md->lr_adam : md->lr_sgd;
  for (int i = 0; i < t->nnets; i++) {
    if ((rc = pit_optim_init(&t->opt[i], kind, t->spec[i].nparams, lr, e)) < 0)
      return rc;
    if (kind == PIT_OPT_SGD)
      t->opt[i].momentum = o->momentum >= 0 ? o->momentum : md->momentum;
    if (t->gan) /* the DCGAN example's betas */
      t->opt[i].beta1 = 0.5;
  }
  return 0;
}

static int alloc_buffers(struct trainer *t, struct pit_err *e) {
  size_t B = (size_t)t->B, n = (size_t)t->d->size;
  t->x = malloc(sizeof(float) * B * t->sample_floats);
  t->y = malloc(sizeof(int32_t) * B);
  t->gidx = malloc(sizeof(int64_t) * B);
  t->dout = malloc(sizeof(float) * B * (size_t)(t->classes > 1 ? t->classes : 1));
  t->all_c = calloc(n, sizeof(double));
  t->all_w = calloc(n, sizeof(double));
  t->sum_c = calloc(n, sizeof(double));
  t->sum_w = calloc(n, sizeof(double));
  int ok = t->x && t->y && t->gidx && t->dout && t->all_c && t->all_w && t->sum_c && t->sum_w;
  if (t->gan && !t->esrgan) {
    t->z = malloc(sizeof(float) * B * PIT_NZ);
    t->fake = malloc(sizeof(float) * B * t->sample_floats);
    t->dfake = malloc(sizeof(float) * B * t->sample_floats);
    ok = ok && t->z && t->fake && t->dfake;
  }
  return ok ? 0 : pit_err_set(e, PIT_ENOMEM, "out of memory (batch %lld)", (long long)t->B);
}

static void trainer_release(struct trainer *t) {
  free(t->steady_x);
  free(t->end_detail);
  for (int i = 0; i < 2; i++) {
    pit_net_free(t->net[i]);
    pit_optim_release(&t->opt[i]);
  }
  if (t->keep && t->train.n > 0) { /* kept for the next run of this process (pit_train_run_keep) */
    pit_train_keep_release(t->keep);
    t->keep->train = t->train;
    t->keep->test = t->test;
    t->keep->have = 1;
    memset(&t->train, 0, sizeof t->train);
    memset(&t->test, 0, sizeof t->test);
  }
  pit_dataset_release(&t->train);
  pit_dataset_release(&t->test);
  pit_sampler_release(&t->smp);
  PIT_FREE_ALL(t->weights, t->shares, t->win_c, t->win_n, t->cand, t->speed, t->dec_detail, t->x,
               t->y, t->z, t->fake, t->dfake, t->dout, t->gidx, t->all_c, t->all_w, t->sum_c,
               t->sum_w);
  pit_record_release(&t->rec);
  pit_record_release(&t->pend);
  tr_esrgan_free(t);
}

/* Rank 0 reads the checkpoint and broadcasts it (no shared file system needed). */
static int read_resume(struct trainer *t, unsigned char **blob, size_t *len, struct pit_err *e) {
  struct pit_dist *d = t->d;
  uint64_t n = 0;
  int rc = 0;
  if (d->rank == 0) {
    rc = pit_ckpt_read(t->resume, blob, len, e);
    n = rc < 0 ? 0 : *len;
  }
  if (d->size > 1) {
    int r2 = pit_dist_bcast(d, &n, sizeof n, e);
    if (r2 < 0)
      return r2;
    if (n == 0)
      return rc < 0 ? rc : pit_err_set(e, PIT_EIO, "rank 0 could not read '%s'", t->resume);
    if (d->rank != 0) {
      *blob = malloc(n);
      *len = n;
      if (!*blob)
        return pit_err_set(e, PIT_ENOMEM, "out of memory");
    }
    if ((r2 = pit_dist_bcast(d, *blob, n, e)) < 0)
      return r2;
  }
  return rc;
}

/* --resume: a path, or "auto": rank 0 finds the newest valid checkpoint in --out
 * (corrupted newer ones go to the warn callback; none at all: a fresh start) and
 * tells every rank. */
static int resolve_resume(struct trainer *t, struct pit_err *e) {
  const struct pit_train_opts *o = t->o;
  t->resume[0] = 0;
  if (!o->resume)
    return 0;
  if (strcmp(o->resume, "auto") != 0) {
    if ((size_t)snprintf(t->resume, sizeof t->resume, "%s", o->resume) >= sizeof t->resume)
      return pit_err_set(e, PIT_EARG, "--resume path too long");
    return 0;
  }
  int64_t code = 0;
  if (t->d->rank == 0) {
    int rc = pit_ckpt_find_latest(o->out, t->resume, sizeof t->resume, o->warn, o->warn_ctx, e);
    code = rc == PIT_ENOTFOUND ? 0 : rc;
    if (rc == PIT_ENOTFOUND)
      t->resume[0] = 0;
  }
  if (t->d->size > 1) {
    int rc = pit_dist_bcast(t->d, &code, sizeof code, e);
    if (rc == 0)
      rc = pit_dist_bcast(t->d, t->resume, sizeof t->resume, e);
    if (rc < 0)
      return rc;
  }
  if (code < 0 && t->d->rank != 0)
    return pit_err_set(e, (int)code, "rank 0 found no valid checkpoint in '%s'", o->out);
  return (int)code;
}

static char *config_json(struct trainer *t) {
  const struct pit_train_opts *o = t->o;
  cJSON *c = cJSON_CreateObject();
  cJSON_AddStringToObject(c, "model", o->model);
  cJSON_AddStringToObject(c, "data", o->data);
  cJSON_AddNumberToObject(c, "batch", (double)t->B);
  cJSON_AddNumberToObject(c, "threads", o->threads > 0 ? o->threads : default_threads(t->d));
  struct pit_cpus cpus; /* what the rank saw: docs/train.md */
  pit_cpus_probe(&cpus);
  cJSON_AddStringToObject(c, "cpus", cpus.list);
  cJSON_AddNumberToObject(c, "cpu_quota", cpus.quota);
  /* the instruction sets this rank runs: pitstop's own vector code, oneDNN's kernels */
  cJSON *isa = cJSON_AddObjectToObject(c, "isa");
  cJSON_AddStringToObject(isa, "pitstop", pit_nn_isa_name(pit_nn_isa()));
  cJSON_AddStringToObject(isa, "onednn", pit_nn_dnnl_isa());
  if (pit_nn_fast_warning()[0]) /* the nets are built: their reference kernels, if any */
    cJSON_AddStringToObject(c, "kernel_warning", pit_nn_fast_warning());
  cJSON_AddNumberToObject(c, "ranks", t->d->size);
  cJSON_AddNumberToObject(c, "nodes", t->d->nodes);
  if (o->itype)
    cJSON_AddStringToObject(c, "itype", o->itype);
  cJSON_AddStringToObject(c, "optimizer", t->opt[0].kind == PIT_OPT_ADAM ? "adam" : "sgd");
  cJSON_AddNumberToObject(c, "lr", t->opt[0].lr);
  cJSON_AddStringToObject(c, "lr_schedule", o->lr_schedule ? o->lr_schedule : pit_train_model_find(o->model)->lr_schedule);
  cJSON_AddNumberToObject(c, "image_size", t->size);
  cJSON_AddNumberToObject(c, "channels", t->in_c);
  cJSON_AddNumberToObject(c, "samples", (double)t->train.n);
  int64_t per_epoch = pit_sampler_batches_per_epoch(&t->smp);
  int64_t planned = t->epochs > 0 ? t->epochs * per_epoch : o->max_iters;
  if (o->max_iters > 0 && (planned <= 0 || o->max_iters < planned))
    planned = o->max_iters;
  cJSON_AddNumberToObject(c, "iters_per_epoch", (double)per_epoch);
  if (planned > 0)
    cJSON_AddNumberToObject(c, "planned_iters", (double)planned);
  cJSON_AddStringToObject(c, "shares", o->batch_shares ? o->batch_shares : "equal");
  cJSON_AddStringToObject(c, "backend", o->backend == PIT_BACKEND_REF ? "ref" : "fast");
  if (t->esrgan) {
    cJSON_AddNumberToObject(c, "residual_blocks", o->residual_blocks);
    cJSON_AddNumberToObject(c, "filters", o->filters);
    cJSON_AddNumberToObject(c, "hr_size", o->hr_size);
    cJSON_AddNumberToObject(c, "warmup_batches", (double)o->warmup_batches);
    cJSON_AddNumberToObject(c, "lambda_adv", o->lambda_adv);
    cJSON_AddNumberToObject(c, "lambda_pixel", o->lambda_pixel);
    /* random-vgg runs are timing runs: the records say so */
    cJSON_AddStringToObject(c, "content_loss", o->content_loss ? o->content_loss : "vgg");
    cJSON_AddStringToObject(c, "global_skip", o->global_skip ? o->global_skip : "none");
  }
  cJSON_AddNumberToObject(c, "seed", (double)o->seed);
  cJSON_AddStringToObject(c, "host", t->d->host);
  cJSON *hosts = cJSON_AddArrayToObject(c, "hosts"); /* by rank: which node a slow rank is on */
  for (int r = 0; r < t->d->size; r++)
    cJSON_AddItemToArray(hosts, cJSON_CreateString(pit_dist_host_of(t->d, r)));
  char *s = pit_json_print(c);
  cJSON_Delete(c);
  return s;
}

static int out_path(struct trainer *t, char *buf, size_t n, const char *name, struct pit_err *e) {
  if ((size_t)snprintf(buf, n, "%s/%s", t->outdir, name) >= n)
    return pit_err_set(e, PIT_EARG, "--out path too long");
  return 0;
}

static int checkpoint(struct trainer *t, struct pit_train_result *res, struct pit_err *e) {
  if (!t->o->out)
    return 0;
  int rc0 = flush_pending(t, e); /* all ranks: a collective */
  if (rc0 < 0 || t->d->rank != 0)
    return rc0;
  char path[1024];
  double t0 = pit_now();
  struct pit_ckpt_meta m;
  memset(&m, 0, sizeof m);
  snprintf(m.run, sizeof m.run, "%s", t->run);
  snprintf(m.model, sizeof m.model, "%s", t->o->model);
  m.gen = t->gen;
  m.step = t->step;
  m.t = tr_time(t);
  m.in_c = t->in_c;
  m.image_size = t->size;
  m.classes = t->classes;
  m.sampler.seed = t->smp.st.seed;
  m.sampler.epoch = t->smp.st.epoch;
  m.sampler.batch = t->smp.st.batch;
  m.sampler.global_batch = t->smp.st.global_batch;
  m.sampler.n = t->smp.st.n;
  m.sampler.drop_last = t->smp.st.drop_last;
  int64_t bytes = 0;
  int rc = pit_ckpt_dir_save(t->outdir, &m, t->net, t->opt, t->nnets, t->ckpt_prev, path, sizeof path,
                             &bytes, e);
  if (rc < 0)
    return rc;
  t->ckpt_prev = m.step;
  struct pit_record *r = &t->rec;
  pit_record_release(r);
  r->type = PIT_REC_CHECKPOINT;
  r->ckpt_s = pit_now() - t0;
  r->path = strdup(path);
  r->bytes = bytes;
  r->step = t->step;
  snprintf(res->checkpoint, sizeof res->checkpoint, "%s", path);
  return tr_emit(t, r, e);
}

static int sample_grid(struct trainer *t, struct pit_train_result *res, int final, struct pit_err *e) {
  if (!t->gan || !t->outdir[0] || t->d->rank != 0)
    return 0;
  char name[64], path[1024];
  if (final)
    snprintf(name, sizeof name, "samples_final.png");
  else
    snprintf(name, sizeof name, "samples_step%06lld.png", (long long)t->step);
  int rc = out_path(t, path, sizeof path, name, e);
  if (rc == 0)
    rc = t->esrgan ? tr_esrgan_grid(t, path, e) : tr_sample_grid(t, path, e);
  if (rc == 0)
    snprintf(res->samples_png, sizeof res->samples_png, "%s", path);
  return rc;
}

static int emit_init(struct trainer *t, struct pit_err *e) {
  struct pit_record *r = &t->rec;
  pit_record_release(r);
  r->type = PIT_REC_INIT;
  r->init_s = pit_now() - t->o->t_process_start;
  r->rdzv_s = t->d->init_wait_s;
  r->ranks = t->d->size;
  r->nodes = t->d->nodes;
  r->config = config_json(t);
  return tr_emit(t, r, e);
}

/* Iteration records wait for the wait time of their last reduction, which the
 * next iteration's first reduction carries (dist.h): iteration k's record is
 * written after iteration k+1's reductions, or by flush_pending. */
static int emit_pending(struct trainer *t, struct pit_err *e) {
  if (!t->have_pending)
    return 0;
  t->have_pending = 0;
  int rc = tr_emit(t, &t->pend, e);
  if (rc == 0 && t->dec_detail) { /* a rebalance taken after that iteration */
    struct pit_record d;
    pit_record_init(&d);
    d.type = PIT_REC_DECISION;
    d.t = t->dec_t;
    d.detail = t->dec_detail;
    t->dec_detail = NULL;
    rc = tr_emit(t, &d, e);
    pit_record_release(&d);
  }
  return rc;
}

/* Completes the pending record now (one extra collective): before records that
 * must follow it (validation, epoch, checkpoint, end). */
static int flush_pending(struct trainer *t, struct pit_err *e) {
  if (!t->have_pending)
    return 0;
  int rc = pit_dist_allgather_last_wait(t->d, t->all_w, e);
  if (rc < 0)
    return rc;
  for (int k = 0; k < t->d->size; k++)
    t->pend.wait_s[k] += t->d->size > 1 ? t->all_w[k] : 0;
  t->discard_carry = 1;
  return emit_pending(t, e);
}

static int emit_iter(struct trainer *t, int64_t epoch, int64_t iter, const int64_t *idx, int64_t count,
                     double step_s, double data_s, double loss, double loss_g, struct pit_err *e) {
  int rc = emit_pending(t, e);
  if (rc < 0)
    return rc;
  struct pit_record *r = &t->pend;
  pit_record_release(r);
  r->type = PIT_REC_ITER;
  r->epoch = epoch;
  r->iter = iter;
  r->step = t->step - 1;
  r->batch = count;
  pit_samples_digest(idx, count, r->samples);
  r->step_s = step_s;
  r->data_s = data_s;
  r->t = tr_time(t);
  t->iter_t_prev = t->iter_t;
  t->iter_t = r->t;
  if (pit_record_set_ranks(r, t->d->size) < 0)
    return pit_err_set(e, PIT_ENOMEM, "out of memory");
  for (int k = 0; k < t->d->size; k++) {
    r->compute_s[k] = t->sum_c[k];
    r->wait_s[k] = t->sum_w[k];
  }
  if (t->esrgan) {
    tr_esrgan_losses(t, r);
  } else if (t->gan) {
    r->nlosses = 2;
    snprintf(r->loss_name[0], sizeof r->loss_name[0], "d");
    snprintf(r->loss_name[1], sizeof r->loss_name[1], "g");
    r->loss_val[0] = loss;
    r->loss_val[1] = loss_g;
  } else {
    r->loss = loss;
  }
  t->have_pending = 1;
  return 0;
}

static void make_run_id(struct trainer *t) {
  if (t->o->run) {
    snprintf(t->run, sizeof t->run, "%s", t->o->run);
    return;
  }
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  char ts[32];
  strftime(ts, sizeof ts, "%Y%m%d-%H%M%S", &tm);
  snprintf(t->run, sizeof t->run, "%s-%s-%ld", t->o->model, ts, (long)getpid());
}

/* ---------- the run ---------- */

/* The generation set up: its run id, the checkpoint it resumes from (read,
 * checked against the options, loaded), threads, data, model, sampler, rank 0's
 * parameters broadcast, the sinks and the init record. */
static int run_setup(struct trainer *t, struct pit_err *e) {
  const struct pit_train_opts *o = t->o;
  struct pit_dist *d = t->d;
  int rc = pit_train_check(o, e);
  if (rc < 0)
    return rc;
  t->gan = pit_model_is_gan(o->model);
  t->esrgan = strcmp(o->model, "esrgan") == 0;
  t->seed = o->seed;
  t->B = o->batch > 0 ? o->batch : pit_train_model_find(o->model)->batch; /* checked: a known model */
  t->epochs = o->epochs;
  t->t_gen0 = o->t_process_start;
  t->ckpt_prev = -1;
  make_run_id(t);
  if (d->size > 1 && (rc = pit_dist_bcast(d, t->run, sizeof t->run, e)) < 0)
    return rc;

  unsigned char *blob = NULL;
  size_t blen = 0;
  struct pit_ckpt_meta meta;
  if ((rc = resolve_resume(t, e)) < 0)
    return rc;
  const char *resume = t->resume[0] ? t->resume : NULL;
  if (resume) {
    if ((rc = read_resume(t, &blob, &blen, e)) < 0 ||
        (rc = pit_ckpt_peek(blob, blen, resume, &meta, e)) < 0) {
      free(blob);
      return rc;
    }
    if (strcmp(meta.model, o->model) != 0) {
      free(blob);
      return pit_err_set(e, PIT_EARG, "'%s' is a checkpoint of model '%s', not '%s'", resume,
                         meta.model, o->model);
    }
    if (meta.sampler.global_batch != t->B) {
      free(blob);
      pit_err_set(e, PIT_EARG, "'%s' was trained with global batch %lld, not %lld", resume,
                  (long long)meta.sampler.global_batch, (long long)t->B);
      pit_err_hint(e, "a resumed run keeps its global batch; pass --batch-size %lld",
                   (long long)meta.sampler.global_batch);
      return PIT_EARG;
    }
    if (!o->run)
      snprintf(t->run, sizeof t->run, "%s", meta.run);
    t->gen = meta.gen + 1;
  }
  /* checkpoints go to --out; a GAN's sample grids to --out or else runs/<run> */
  if (o->out)
    snprintf(t->outdir, sizeof t->outdir, "%s", o->out);
  else if (t->gan)
    snprintf(t->outdir, sizeof t->outdir, "runs/%s", t->run);
  if (t->outdir[0] && d->rank == 0 &&
      ((rc = pit_mkdir_p(t->outdir, e)) < 0 || (rc = pit_atomic_sweep(t->outdir, NULL, e)) < 0)) {
    free(blob);
    return rc;
  }

  int threads = o->threads > 0 ? o->threads : default_threads(d);
  struct pit_cpus cpus;
  pit_cpus_probe(&cpus);
  if (threads > cpus.usable && o->warn) {
    struct pit_err w;
    pit_err_clear(&w);
    pit_err_set(&w, PIT_ESTATE, "rank %d: %d threads on %d CPU%s (cpus %s%s): they will take turns; fewer are faster",
                d->rank, threads, cpus.usable, cpus.usable > 1 ? "s" : "", cpus.list,
                cpus.quota > 0 ? ", a cgroup quota" : "");
    o->warn(o->warn_ctx, &w);
  }
  pit_nn_set_threads(threads);
  if ((rc = load_data(t, e)) < 0 || (rc = build_model(t, e)) < 0) {
    free(blob);
    return rc;
  }
  if ((rc = pit_sampler_init(&t->smp, t->train.n, t->B, t->seed, 0, e)) < 0) {
    free(blob);
    return rc;
  }
  if (resume) {
    rc = pit_ckpt_load(blob, blen, resume, &meta, t->net, t->opt, t->nnets, e);
    free(blob);
    if (rc < 0)
      return rc;
    if (meta.sampler.n != t->train.n)
      return pit_err_set(e, PIT_EARG, "'%s' was trained on %lld samples, this data has %lld", resume,
                         (long long)meta.sampler.n, (long long)t->train.n);
    struct pit_sampler_state st = {meta.sampler.seed, meta.sampler.epoch, meta.sampler.batch,
                                   meta.sampler.global_batch, meta.sampler.n, meta.sampler.drop_last};
    if ((rc = pit_sampler_restore(&t->smp, &st, e)) < 0)
      return rc;
    t->step = meta.step;
    t->ckpt_prev = meta.step;
    t->t_off = meta.t;
  }
  /* every rank starts from rank 0's parameters and BatchNorm state */
  for (int i = 0; i < t->nnets && d->size > 1; i++) {
    if ((rc = pit_dist_bcast(d, pit_net_params(t->net[i]), t->spec[i].nparams * sizeof(float), e)) < 0 ||
        (rc = pit_dist_bcast(d, pit_net_state(t->net[i]), t->spec[i].nstate * sizeof(float), e)) < 0)
      return rc;
    pit_net_params_changed(t->net[i]);
  }
  if ((rc = tr_shares_init(t, e)) < 0 || (rc = alloc_buffers(t, e)) < 0)
    return rc;
  if ((rc = tr_sinks_open(t, resume != NULL, e)) < 0)
    return rc;
  if ((rc = emit_init(t, e)) < 0)
    return rc;
  return 0;
}

/* An epoch's end (its epoch_s seconds): the pending records out, a classifier's
 * validation record, the epoch record, the progress line. */
static int epoch_end(struct trainer *t, struct pit_train_result *res, int64_t ep, int64_t it, double epoch_s,
                     struct pit_err *e) {
  const struct pit_train_opts *o = t->o;
  struct pit_dist *d = t->d;
  int rc;
  if ((rc = flush_pending(t, e)) < 0)
    return rc;
  struct pit_record *r = &t->rec;
  if (!t->gan && o->validate) {
    double v0 = pit_now(), acc;
    if ((rc = tr_validate(t, &acc, e)) < 0)
      return rc;
    pit_record_release(r);
    r->type = PIT_REC_VALIDATION;
    r->epoch = ep;
    r->step = t->step - 1;
    r->val_s = pit_now() - v0;
    r->accuracy = acc;
    res->accuracy = acc;
    if ((rc = tr_emit(t, r, e)) < 0)
      return rc;
  }
  pit_record_release(r);
  r->type = PIT_REC_EPOCH;
  r->epoch = ep;
  r->step = t->step - 1;
  r->epoch_s = epoch_s;
  if ((rc = tr_emit(t, r, e)) < 0)
    return rc;
  res->epochs_done++;
  if (o->progress && d->rank == 0) {
    tr_progress(t, ep, it, NAN, 1);
    if (isfinite(res->accuracy) && !t->gan)
      tr_progress_accuracy(t, ep, res->accuracy, epoch_s);
  }
  return 0;
}

/* The loop left (stop: why): the last records, checkpoint and sample grid,
 * ESRGAN's PSNR, and the end record. */
static int run_end(struct trainer *t, struct pit_train_result *res, int64_t ep, int64_t it, int stop,
                   int64_t last_ckpt_step, struct pit_err *e) {
  const struct pit_train_opts *o = t->o;
  struct pit_dist *d = t->d;
  int rc;
  if ((rc = flush_pending(t, e)) < 0)
    return rc;
  res->steps = t->step;
  res->samples = t->samples;
  res->train_s = pit_now() - t->t_first;
  if (o->out && last_ckpt_step != t->step && (rc = checkpoint(t, res, e)) < 0)
    return rc;
  if ((rc = sample_grid(t, res, 1, e)) < 0)
    return rc;
  if (t->esrgan && d->rank == 0 && (rc = tr_esrgan_validate(t, &res->psnr, &res->psnr_bicubic, e)) < 0)
    return rc;
  if (o->progress && d->rank == 0 && it != t->epoch_iters - 1)
    tr_progress(t, ep, it, NAN, 1);
  struct pit_record *r = &t->rec;
  pit_record_release(r);
  r->type = PIT_REC_END;
  r->step = t->step;
  snprintf(r->status, sizeof r->status, "%s", stop ? "stopped" : "done");
  /* this generation's time, process start to now: a run's total is the sum
   * over its generations (docs/analysis.md), as the protocol's and the C
   * API's end records count it; t goes on from the checkpoint (t_off) */
  r->total_s = tr_time(t) - t->t_off;
  r->detail = t->end_detail;
  t->end_detail = NULL; /* now owned by the record */
  return tr_emit(t, r, e);
}

static int run(struct trainer *t, struct pit_train_result *res, struct pit_err *e) {
  const struct pit_train_opts *o = t->o;
  struct pit_dist *d = t->d;
  int rc = run_setup(t, e);
  if (rc < 0)
    return rc;

  snprintf(res->run, sizeof res->run, "%s", t->run);
  res->gen = t->gen;
  res->accuracy = NAN;
  res->loss = res->loss_g = NAN;
  res->psnr = res->psnr_bicubic = NAN;
  t->step0 = t->step;
  t->epoch_iters = pit_sampler_batches_per_epoch(&t->smp);
  t->t_first = pit_now();
  double t_epoch0 = t->t_first;
  int64_t last_ckpt_step = -1;
  int stop = 0;
  int64_t ep = t->smp.st.epoch, it = 0;
  const char *sched = o->lr_schedule ? o->lr_schedule : pit_train_model_find(o->model)->lr_schedule;
  int cosine = strcmp(sched, "cosine") == 0;
  int64_t planned = t->epochs > 0 ? t->epochs * t->epoch_iters : o->max_iters;
  if (o->max_iters > 0 && o->max_iters < planned)
    planned = o->max_iters;
  double lr0[2] = {t->opt[0].lr, t->opt[1].lr};
  for (;;) {
    if (t->epochs > 0 && t->smp.st.epoch >= t->epochs)
      break;
    if (o->max_iters > 0 && t->step >= o->max_iters)
      break;
    const int64_t *idx;
    int64_t count;
    double t0 = pit_now(), data_s = 0, loss = NAN, loss_g = NAN;
    pit_sampler_next(&t->smp, &idx, &count, &ep, &it);
    if (o->stop_poll && o->stop_poll())
      stop_requested = 1;
    if (cosine && planned > 0)
      for (int i = 0; i < t->nnets; i++)
        t->opt[i].lr = lr0[i] * 0.5 * (1.0 + cos(3.14159265358979323846 * (double)t->step / (double)planned));
    if (t->esrgan) {
      rc = tr_step_esrgan(t, idx, count, &data_s, stop_requested, &stop, e);
      if (rc == 0) {
        loss = tr_esrgan_loss_d(t);
        loss_g = tr_esrgan_loss_g(t);
      }
    } else if (t->gan)
      rc = tr_step_gan(t, idx, count, &loss, &loss_g, &data_s, stop_requested, &stop, e);
    else
      rc = tr_step_classifier(t, idx, count, &loss, &data_s, stop_requested, &stop, e);
    if (rc < 0)
      return rc;
    double step_s = pit_now() - t0;
    t->step++;
    t->samples += count;
    if (!isfinite(loss) || (t->gan && !isfinite(loss_g)))
      return pit_err_set(e, PIT_ESTATE, "the loss diverged (not a finite number) at step %lld",
                         (long long)t->step - 1);
    res->loss = loss;
    res->loss_g = loss_g;
    if ((rc = emit_iter(t, ep, it, idx, count, step_s, data_s, loss, loss_g, e)) < 0)
      return rc;
    tr_shares_observe(t, t->sum_c);
    if (o->check_sync > 0 && t->step % o->check_sync == 0) {
      for (int i = 0; i < t->nnets; i++) {
        int same = 1;
        if ((rc = pit_dist_same(d, pit_net_params(t->net[i]), t->spec[i].nparams * sizeof(float), &same,
                                e)) < 0)
          return rc;
        if (!same)
          return pit_err_set(e, PIT_ESTATE, "ranks hold different parameters after step %lld",
                             (long long)t->step - 1);
      }
    }
    if (o->checkpoint_every > 0 && t->step % o->checkpoint_every == 0) {
      if ((rc = checkpoint(t, res, e)) < 0)
        return rc;
      last_ckpt_step = t->step;
    }
    int grid = o->sample_interval > 0 && t->step % o->sample_interval == 0;
    if (grid && (rc = sample_grid(t, res, 0, e)) < 0)
      return rc;
    tr_progress(t, ep, it, loss, 0);
    int event = last_ckpt_step == t->step || grid;
    if (o->until_steady > 0 && (rc = tr_steady_check(t, it, step_s, event, planned, &stop, res, e)) < 0)
      return rc;
    if (it == t->epoch_iters - 1) { /* epoch end */
      double epoch_s = pit_now() - t_epoch0;
      if ((rc = epoch_end(t, res, ep, it, epoch_s, e)) < 0)
        return rc;
      t_epoch0 = pit_now();
    }
    if (stop) {
      if (stop == 1)
        stop_requested = 0; /* taken: a request after this one is the next generation's (in place) */
      res->stopped = stop == 2 ? 2 : 1;
      break;
    }
  }
  return run_end(t, res, ep, it, stop, last_ckpt_step, e);
}

void pit_train_keep_release(struct pit_train_keep *k) {
  pit_dataset_release(&k->train);
  pit_dataset_release(&k->test);
  k->have = 0;
}

int pit_train_run(const struct pit_train_opts *o, struct pit_dist *d, struct pit_train_result *res,
                  struct pit_err *e) {
  return pit_train_run_keep(o, d, NULL, res, e);
}

int pit_train_run_keep(const struct pit_train_opts *o, struct pit_dist *d, struct pit_train_keep *keep,
                       struct pit_train_result *res, struct pit_err *e) {
  struct trainer t;
  memset(&t, 0, sizeof t);
  memset(res, 0, sizeof *res);
  t.o = o;
  t.d = d;
  t.keep = keep;
  pit_record_init(&t.rec);
  pit_record_init(&t.pend);
  int rc = run(&t, res, e);
  struct pit_err e2;
  int rc2 = tr_sinks_close(&t, rc == 0, rc == 0 ? e : &e2);
  if (rc == 0)
    rc = rc2;
  trainer_release(&t);
  return rc;
}
