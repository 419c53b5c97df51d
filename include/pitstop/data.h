/* pitstop/data.h — datasets and the sampler.
 *
 * A dataset yields float images (N, C, H, W), normalised as the model wants
 * (classifiers: (x/255 - mean)/std per dataset; GANs: [-1, 1]), and int32 labels
 * (N) (-1 for unlabelled images). Samples at their native size and channels
 * (MNIST, Fashion-MNIST, CIFAR-10 without resizing or channel conversion) are kept
 * as the file's bytes and converted per batch by pit_dataset_gather through a
 * per-channel table (4x less memory, and no 188 MB of fresh pages to fill at load);
 * the floats gather returns are bit-identical either way. Read samples through
 * pit_dataset_gather, which hides the storage.
 *
 * The sampler defines the sequence of GLOBAL batches: for epoch e, a permutation
 * of [0, N) drawn from (seed, e); global batch b of epoch e is positions
 * [b*B, min((b+1)*B, N)) of that permutation (the last batch may be short, or
 * dropped with drop_last). A rank takes the slice of the global batch given by
 * its share. Nothing depends on the number of ranks, so state saved at one world
 * size restores at another and the sequence of global batches is unchanged.
 */
#ifndef PITSTOP_DATA_H
#define PITSTOP_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "pitstop/util.h"

struct pit_dataset {
  char name[64];       /* "fashion-mnist", "cifar10", "images", "synthetic" */
  int64_t n;           /* number of samples */
  int c, h, w;         /* sample shape */
  int classes;         /* 0 if unlabelled */
  /* Storage: exactly one of x, x8 is set for a dataset read from files; both are
   * NULL for synthetic (generated on demand). All three pointers owned by the dataset. */
  float *x;            /* (n, c, h, w) normalised floats: resized or channel-converted samples */
  uint8_t *x8;         /* (n, c, h, w) the file's bytes: samples at native size and channels */
  float (*lut)[256];   /* with x8: (c) tables, byte v of channel ch → lut[ch][v] (normalised) */
  int32_t *y;          /* (n) */
  uint64_t synth_seed; /* synthetic: sample i is a deterministic function of (seed, i) */
  void *priv;          /* synthetic: private tables (class templates, noise); NULL otherwise */
};

enum pit_data_norm {
  PIT_NORM_CLASSIFIER, /* (x - the dataset's mean) / std */
  PIT_NORM_GAN,        /* [-1, 1] */
  PIT_NORM_IMAGENET    /* torchvision's ImageNet mean (0.485, 0.456, 0.406), std (0.229, 0.224,
                          0.225), per RGB channel (ESRGAN's, whose VGG19 expects it) */
};

struct pit_data_opts {
  const char *kind;      /* "fashion-mnist" | "mnist" | "cifar10" | "images" | "synthetic" */
  const char *dir;       /* data directory (default per kind; fashion-mnist: /usr/share/datasets/fashion-mnist) */
  int train;             /* 1: training split, 0: test split (images: same data;
                            synthetic: same classes, different samples) */
  int image_size;        /* resize to this size (0: native). fashion-mnist 28 → 32 pads/resizes as asked */
  int channels;          /* 0: native; 1 or 3 to convert */
  enum pit_data_norm norm;
  int64_t synth_n;       /* synthetic: number of samples (default 50000 train / 10000 test) */
  int synth_classes;     /* synthetic: classes (default 10) */
  uint64_t seed;
  int64_t limit;         /* >0: keep only the first `limit` samples */
  int min_side;          /* images: refuse an image whose native shorter side is below this (0: any) */
  int store_floats;      /* 1: keep normalised floats (x) even where the bytes (x8) would do:
                            4x the memory, gather copies instead of converting; same values */
};

int pit_dataset_load(struct pit_dataset *ds, const struct pit_data_opts *o, struct pit_err *e);
void pit_dataset_release(struct pit_dataset *ds);
/* Copies samples idx[0..n) into x (n, c, h, w) and labels into y (n) (y may be NULL).
 * Returns PIT_EARG for an index outside [0, n). Reads ds only: threads may gather at once. */
int pit_dataset_gather(const struct pit_dataset *ds, const int64_t *idx, int n, float *x,
                       int32_t *y);

/* Resizing float planes (c, h, w) → (c, oh, ow) the way PIL resizes with antialiasing
 * (torchvision's Resize on PIL images): separable; output pixel i (centre
 * (i + 0.5)·scale, scale = in/out) averages the source pixels within support·max(scale, 1)
 * of it, weighted by the kernel at distance / max(scale, 1), weights normalised to sum 1.
 *   BILINEAR: triangle, support 1;
 *   BICUBIC:  Keys' cubic with a = -0.5 (PIL's BICUBIC), support 2.
 * So a 4x bicubic downscale weighs 16 source pixels per axis. Values stay float (PIL
 * rounds to 8 bits and clips the cubic's overshoot; this does not). */
enum pit_resize_kernel { PIT_RESIZE_BILINEAR, PIT_RESIZE_BICUBIC };
int pit_resize(const float *src, int c, int h, int w, float *dst, int oh, int ow,
               enum pit_resize_kernel kernel, struct pit_err *e);

struct pit_sampler_state {
  uint64_t seed;
  int64_t epoch;       /* current epoch, 0-based */
  int64_t batch;       /* next global batch index within the epoch */
  int64_t global_batch;/* B */
  int64_t n;           /* dataset size the permutation is over */
  int drop_last;
};

struct pit_sampler {
  struct pit_sampler_state st;
  int64_t *perm;       /* (n) permutation of the current epoch */
  int64_t perm_epoch;  /* epoch perm was drawn for */
};

int pit_sampler_init(struct pit_sampler *s, int64_t n, int64_t global_batch, uint64_t seed,
                     int drop_last, struct pit_err *e);
void pit_sampler_release(struct pit_sampler *s);
int64_t pit_sampler_batches_per_epoch(const struct pit_sampler *s);
/* Next global batch: *idx points into the permutation (valid until the next call),
 * *count is its size (≤ B), *epoch and *batch say which batch it is. Advances the state;
 * moves to the next epoch after the last batch. */
void pit_sampler_next(struct pit_sampler *s, const int64_t **idx, int64_t *count, int64_t *epoch,
                      int64_t *batch);
/* A rank's slice of a global batch of `count` samples given integer shares that
 * sum to count: [*off, *off + *len). shares: (nranks). */
void pit_shares_slice(const int64_t *shares, int nranks, int rank, int64_t *off, int64_t *len);
/* Splits count samples into nranks shares proportional to weights (≥0, not all 0),
 * largest-remainder rounding, every rank ≥ 1 if count ≥ nranks. */
void pit_shares_split(int64_t count, const double *weights, int nranks, int64_t *shares);
/* Save/restore: state only (the permutation is re-derived from seed and epoch).
 * s: initialised for the current dataset (its n must equal st->n, else PIT_ESTATE) or zeroed. */
int pit_sampler_restore(struct pit_sampler *s, const struct pit_sampler_state *st, struct pit_err *e);

#endif
