/* pitstop/train.h — the training loop behind `pitstop train`.
 *
 * One call trains a built-in model (cnn, cnn-wide: classifiers; dcgan: a GAN)
 * data-parallel over the ranks of a struct pit_dist (one rank without MPI):
 *   - rank 0's initial parameters are broadcast; each iteration every rank takes
 *     its share of ONE global batch drawn by a shared sampler (data.h), so the
 *     sequence of global batches does not depend on the number of ranks;
 *   - the loss is scaled by 1/global batch and gradients are SUM-reduced, which
 *     weights each rank's gradient by its share;
 *   - every iteration yields an `iter` record with every rank's compute and wait
 *     time (they ride on the gradient reduction); rank 0 writes the records to a
 *     JSON Lines sink and/or the store.
 * Checkpoints hold parameters, BatchNorm state, optimizer state, sampler state,
 * step, run id, generation and a checksum; they are written atomically by rank 0
 * and restore at any world size (the elastic protocol of DESIGN.md). A stop
 * request (pit_train_request_stop, e.g. from SIGUSR1) makes all ranks agree on
 * the next iteration boundary, checkpoint and return normally.
 * Its options (struct pit_train_opts, their table, defaults and validation)
 * are the module trainopts (trainopts.h), which links nothing heavy, so sweep
 * and later the controller can build train's command line from them.
 * Invariants: all ranks hold bit-identical parameters after every update; for a
 * given seed, thread count and world size the run is deterministic.
 */
#ifndef PITSTOP_TRAIN_H
#define PITSTOP_TRAIN_H

#include <stdint.h>

#include "pitstop/data.h"
#include "pitstop/dist.h"
#include "pitstop/nn.h"
#include "pitstop/record.h"
#include "pitstop/trainopts.h"
#include "pitstop/util.h"

struct pit_train_result {
  char run[PIT_NAME_MAX];
  int gen;
  int64_t steps;              /* iterations done, in all generations */
  int64_t epochs_done;
  int64_t samples;            /* samples trained on in this generation */
  double train_s;             /* this generation: first iteration to the end */
  double accuracy;            /* last test accuracy, NaN if none */
  double loss;                /* last iteration's loss (GAN: D loss) */
  double loss_g;              /* GAN: last G loss, NaN otherwise */
  int stopped;                /* 1: stopped on request (checkpoint written); 2: by until_steady */
  char stop_why[200];         /* stopped == 2: why ("steady: t_p half-width 1.2% <= 2% ...") */
  char checkpoint[1024];      /* last checkpoint written, "" if none */
  char samples_png[1024];     /* GAN: last sample grid written, "" if none */
  double psnr, psnr_bicubic;  /* esrgan: validation PSNR (dB, RGB in [0, 1]) of the model's output
                                 and of bicubic upscaling of its input, at the end; NaN otherwise */
};

int pit_train_run(const struct pit_train_opts *o, struct pit_dist *d, struct pit_train_result *res,
                  struct pit_err *e);

/* Datasets one process keeps from one run to the next with the same options
 * (the ranks that stay after an in-place shrink do not read their data again:
 * about 0.25 s for Fashion-MNIST here). Zeroed before the first run; released
 * by pit_train_keep_release. */
struct pit_train_keep {
  struct pit_dataset train, test;
  int have;
};
/* pit_train_run taking its datasets from keep when it holds them, and leaving
 * them there at the end (keep NULL: pit_train_run). */
int pit_train_run_keep(const struct pit_train_opts *o, struct pit_dist *d, struct pit_train_keep *keep,
                       struct pit_train_result *res, struct pit_err *e);
void pit_train_keep_release(struct pit_train_keep *k);

/* After a generation stopped on request (res->stopped == 1): the controller's
 * request to go on in place with fewer ranks (the file named by path, normally
 * $PITSTOP_SHRINK; src/train/shrink.c, docs/protocol.md). Every rank calls it.
 * 1: a request for this world; *keep says whether this rank goes on (then
 * pit_dist_shrink, and pit_train_run again from resume: rank 0's checkpoint,
 * n bytes). 0: none, or no checkpoint to go on from (*keep 1). < 0: a
 * malformed request (e says which file). */
int pit_train_shrink_request(const char *path, struct pit_dist *d, const struct pit_train_result *res, int *keep,
                             char *resume, size_t n, struct pit_err *e);
/* Async-signal-safe: asks the running training to stop at the next iteration
 * boundary (after a checkpoint if out is set). */
void pit_train_request_stop(void);

/* ---- checkpoints (checkpoint.c) ---- */
struct pit_ckpt_meta {
  char run[PIT_NAME_MAX];
  char model[32];
  int gen;
  int64_t step;
  double t;                   /* record time at the checkpoint */
  int in_c, image_size, classes;
  struct {
    uint64_t seed;
    int64_t epoch, batch, global_batch, n;
    int drop_last;
  } sampler;
};
/* nets/optims: 1 (classifier) or 2 (GAN: generator then discriminator). */
int pit_ckpt_save(const char *path, const struct pit_ckpt_meta *m, struct pit_net *const *nets,
                  const struct pit_optim *optims, int n, int64_t *bytes, struct pit_err *e);
/* Reads a whole checkpoint into memory (blob, *len) after checking magic,
 * length and checksum. */
int pit_ckpt_read(const char *path, unsigned char **blob, size_t *len, struct pit_err *e);
/* Restores from a blob read by pit_ckpt_read; checks that shapes match. */
int pit_ckpt_load(const unsigned char *blob, size_t len, const char *path, struct pit_ckpt_meta *m,
                  struct pit_net *const *nets, struct pit_optim *optims, int n, struct pit_err *e);
/* Meta only (to learn the model before building it). */
int pit_ckpt_peek(const unsigned char *blob, size_t len, const char *path, struct pit_ckpt_meta *m,
                  struct pit_err *e);

/* ---- a directory of rotated checkpoints (ckpt_dir.c) ----
 * DIR/checkpoint-<step, 12 digits>.pit   the newest and the one before it (older removed)
 * DIR/checkpoint.latest                   one line naming the newest, written atomically after it
 * DIR/checkpoint.pit                      another name (hard link) of the newest, for people
 *                                         and scripts
 * Temp files are "<name>.tmp.<pid>"; those of dead processes are swept by
 * pit_atomic_sweep (util.h). One run per directory: steps order the checkpoints. */
#define PIT_CKPT_LATEST "checkpoint.latest"
/* 0 when path is a valid checkpoint (magic, lengths and checksum checked); else the reason in e. */
int pit_ckpt_check(const char *path, struct pit_err *e);
/* Saves m's step as DIR/checkpoint-<step>.pit, then the pointer and the link, then
 * removes every other step file but the previous one: prev_step (the step this run
 * last saved or resumed from, known valid) if its file is there and below this step,
 * else the highest step below this one. path (n bytes) gets the file written. A
 * failure at any point leaves the previous checkpoint loadable. */
int pit_ckpt_dir_save(const char *dir, const struct pit_ckpt_meta *m, struct pit_net *const *nets,
                      const struct pit_optim *optims, int nnets, int64_t prev_step, char *path, size_t n,
                      int64_t *bytes, struct pit_err *e);
/* The newest VALID checkpoint in dir (magic, lengths and checksum checked) into path
 * (n bytes). Each newer one that is not valid goes to warn (may be NULL) with its path
 * and reason. Returns 0; PIT_ENOTFOUND when dir holds no checkpoint; PIT_EFORMAT when
 * it holds some and none is valid. */
int pit_ckpt_find_latest(const char *dir, char *path, size_t n, pit_warn_fn warn, void *ctx,
                         struct pit_err *e);

/* ---- sample grid (grid.c): images (n, c, h, w) in [-1, 1] → PNG, atomically ---- */
int pit_png_grid_write(const char *path, const float *img, int n, int c, int h, int w, int ncols,
                       struct pit_err *e);

#endif
