/* pitstop/trainopts.h — the options of a training run (`pitstop train`),
 * written once: struct pit_train_opts, the model defaults, and one table of
 * options over the struct that yields the command's getopt table, its --help
 * text, the validation of each value, and the argv that another command
 * (sweep; later profile and run) passes to `pitstop train`.
 *
 * A module of its own (links util only): sweep and the controller build train
 * command lines without linking the training code (nn, data, MPI).
 * To add an option: a field in struct pit_train_opts, its default in
 * pit_train_opts_init, one row in the table (src/trainopts/opts.c); checks
 * that involve several options go to pit_train_check.
 * Invariants: pit_train_opts_argv(o) parsed back by pit_train_opt_set gives o
 * again (for every field in the table); the library never prints (help goes
 * to the FILE the caller gives).
 */
#ifndef PITSTOP_TRAINOPTS_H
#define PITSTOP_TRAINOPTS_H

#include <stdint.h>
#include <stdio.h>

#include "pitstop/nn.h"
#include "pitstop/util.h"

/* What a running training reports to whoever draws it (the CLI): rank 0 only,
 * from the training thread. The library never prints. */
enum pit_train_event {
  PIT_TRAIN_PROGRESS,         /* an iteration (at most 4 a second), or final: an epoch's or the run's end */
  PIT_TRAIN_EPOCH_ACCURACY    /* after an epoch's final progress: a classifier's test accuracy */
};
struct pit_train_progress {
  enum pit_train_event event;
  int64_t epoch;              /* 0-based */
  int64_t epochs;             /* planned epochs; 0: until max_iters */
  int64_t iter, epoch_iters;  /* 0-based iteration within the epoch, iterations per epoch */
  int64_t step;               /* global step (never resets) */
  double samples_per_s;       /* this generation, since its first iteration */
  double loss_ema;            /* exponential moving average of the loss (GAN: D loss) */
  double eta_s;               /* NaN when unknown; 0 at a final event */
  int final;                  /* 1: epoch or run end (a line is complete) */
  double accuracy, epoch_s;   /* PIT_TRAIN_EPOCH_ACCURACY: test accuracy and the epoch's duration */
};
typedef void (*pit_train_progress_fn)(void *ctx, const struct pit_train_progress *p);

struct pit_train_opts {
  const char *model;          /* "cnn" | "cnn-wide" | "dcgan" | "esrgan" */
  const char *data;           /* "fashion-mnist" | "cifar10" | "images" | "synthetic" */
  const char *data_dir;       /* NULL: the kind's default */
  int64_t batch;              /* GLOBAL batch; 0: the model's default (pit_train_model_defaults) */
  int64_t epochs;             /* > 0; with max_iters set and epochs 0: until max_iters */
  int64_t max_iters;          /* > 0: stop after this many iterations in all (0: none) */
  double until_steady;        /* > 0: stop once pit_steady_check(P) says steady (its floor 50
                                 iterations; the cap is max_iters, else the planned job); the end
                                 record's detail says why ({"reason":"steady"|"cap","why":...}) */
  double lr;                  /* <= 0: the model's default for the optimizer */
  const char *optimizer;      /* NULL: the model's default; "sgd" | "adam" */
  double momentum;            /* SGD momentum, < 0: the model's default */
  const char *lr_schedule;    /* NULL: the model's default;
                                 "constant" | "cosine" (lr·½(1+cos(π·step/total)) over the
                                 planned iterations, so a resumed run follows the same curve) */
  uint64_t seed;
  int threads;                /* per rank; 0: the CPUs this rank may use (affinity mask, cgroup
                                 quota; shared with the node's other ranks when unbound) */
  int image_size;             /* 0: the model's default, else the data's own */
  int64_t limit;              /* > 0: first `limit` training samples only */
  int validate;               /* classifiers: test accuracy after each epoch */
  const char *events;         /* JSON Lines path, "-" stdout, NULL none */
  const char *db;             /* SQLite store path, NULL none */
  const char *run;            /* run id, NULL: generated */
  const char *itype;          /* instance-type label for the init record's config, NULL none */
  const char *out;            /* directory for checkpoints and sample grids, NULL: none */
  int64_t checkpoint_every;   /* iterations between checkpoints (needs out), 0: only at the end */
  const char *resume;         /* checkpoint to resume from, NULL none; "auto": the newest valid
                                 one in out (none there: start afresh) */
  pit_warn_fn warn;           /* warnings (a corrupted checkpoint skipped, more threads than
                                 CPUs); NULL: dropped. The library never prints. */
  void *warn_ctx;             /* passed to warn, not owned */
  int64_t sample_interval;    /* GAN: sample grid every N iterations (needs out), 0: end only */
  const char *batch_shares;   /* "equal" | "auto" | "w1,w2,..." */
  int rebalance_every;        /* auto shares: rebalance every K iterations */
  int64_t check_sync;         /* > 0: compare parameter checksums across ranks every N iterations */
  enum pit_backend backend;
  /* esrgan (PyTorch-GAN's esrgan.py defaults) */
  int residual_blocks;        /* RRDBs in the generator (23) */
  int filters;                /* generator filters (64) */
  int hr_size;                /* high-resolution crop side (128); the input is hr/4 */
  int64_t warmup_batches;     /* iterations with the pixel loss only (500) */
  double lambda_adv;          /* weight of the adversarial loss (5e-3) */
  double lambda_pixel;        /* weight of the pixel loss after warm-up (1e-2) */
  const char *content_loss;   /* "vgg" (needs vgg_weights) | "none" | "random-vgg" (timing only) */
  const char *global_skip;    /* "none" (the original) | "bicubic": output = G(lr) + bicubic(lr) */
  const char *vgg_weights;    /* safetensors file of VGG19 features[:35], NULL none */
  const char *val_dir;        /* validation photos (PSNR, sample grid); NULL: the first training images */
  pit_train_progress_fn progress; /* NULL: no progress reports; called on rank 0 only */
  void *progress_ctx;         /* passed to progress; borrowed */
  int (*stop_poll)(void);     /* NULL: none; else asked at each iteration's start on every rank: 1 = a stop was
                               * asked (the CLI: a SIGUSR1 taken synchronously, cmd_train.c) */
  double t_process_start;     /* pit_now() at process start (for init_s) */
};


void pit_train_opts_init(struct pit_train_opts *o);
/* Validates options (before anything is loaded): every table option's range
 * or choices, then combinations (model and data, paths needed). */
int pit_train_check(const struct pit_train_opts *o, struct pit_err *e);

/* ---- model defaults: the one place they live ---- */
struct pit_train_model {
  const char *name;           /* "cnn", ... */
  int gan;                    /* 1: a GAN (needs no labels) */
  int64_t batch;              /* default global batch */
  const char *optimizer;      /* "sgd" | "adam" */
  double lr_sgd, lr_adam;     /* default lr for each optimizer */
  double momentum;            /* SGD */
  const char *lr_schedule;    /* "constant" | "cosine" */
  int image_size;             /* 0: the data's own */
  const char *what;           /* one line for --help */
};
/* The row of model name, or NULL when unknown. */
const struct pit_train_model *pit_train_model_find(const char *name);
extern const struct pit_train_model pit_train_models[]; /* ends with a NULL name */

/* ---- the option table ---- */
enum pit_topt_kind {
  PIT_TOPT_STR,               /* const char * (borrowed from the argument) */
  PIT_TOPT_I64,               /* int64_t */
  PIT_TOPT_INT,               /* int */
  PIT_TOPT_U64,               /* uint64_t */
  PIT_TOPT_F64,               /* double */
  PIT_TOPT_OFF,               /* flag without value: sets an int to 0 */
  PIT_TOPT_BACKEND            /* enum pit_backend from "fast" | "ref" */
};
enum {
  PIT_TOPT_ALWAYS = 1,        /* argv: always passed (sweep's commands name model and data) */
  PIT_TOPT_POSITIVE = 2       /* argv: passed when > 0 (epochs: 0 means "until max_iters") */
};
struct pit_train_optdef {
  const char *name;           /* long option, without "--" */
  const char *arg;            /* value's name in --help; NULL for a flag */
  enum pit_topt_kind kind;
  size_t off;                 /* offsetof(struct pit_train_opts, field) */
  double min, max;            /* numbers: accepted range (inclusive) */
  const char *choices;        /* strings: "a|b|c", the accepted values; NULL: any */
  int flags;                  /* PIT_TOPT_* */
  const char *help;           /* one line */
};
extern const struct pit_train_optdef pit_train_optdefs[]; /* ends with a NULL name */
const struct pit_train_optdef *pit_train_opt_find(const char *name);
/* Parses value (NULL for a flag) into the field of d: numbers strictly, in
 * range, choices checked. PIT_EARG with a message naming --name otherwise. */
int pit_train_opt_set(struct pit_train_opts *o, const struct pit_train_optdef *d, const char *value,
                      struct pit_err *e);
/* The options of o as train's command-line arguments ("--name", value, ...),
 * in table order: those differing from pit_train_opts_init's, and the ones
 * flagged ALWAYS/POSITIVE. *argv is NULL-terminated; its strings and the array
 * are malloc'd and owned by the caller (free with pit_train_argv_free). */
int pit_train_opts_argv(const struct pit_train_opts *o, char ***argv, int *argc, struct pit_err *e);
void pit_train_argv_free(char **argv);
/* Writes one line per option ("  --name ARG   help (default ...)") to f. */
void pit_train_opts_help(FILE *f);
/* Writes one line per model (name, what it is) to f. */
void pit_train_models_help(FILE *f);

#endif
