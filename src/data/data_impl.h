/* data_impl.h — private to src/data: readers' raw-sample callbacks, the
 * per-sample conversion pipeline (bytes → [0,1] floats → channels → resize →
 * normalise), and the module's own small counter-based hash RNG (data does not
 * depend on pit_nn).
 *
 * Invariant: every reader produces samples through pit__conv_sample, so all
 * kinds share one definition of channel conversion, resizing and normalisation.
 */
#ifndef PIT_DATA_IMPL_H
#define PIT_DATA_IMPL_H

#include <stdint.h>

#include "pitstop/data.h"

/* A 64-bit mixing function (the splitmix64 finaliser): a bijection whose
 * outputs look independent for consecutive inputs. */
static inline uint64_t pit__mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
#define PIT__GOLDEN 0x9e3779b97f4a7c15ULL
/* Word k of the stream keyed by key: mix64(key + (k+1)·golden). */
static inline uint64_t pit__stream(uint64_t key, uint64_t k) {
  return pit__mix64(key + (k + 1) * PIT__GOLDEN);
}
/* Key of a named sub-stream of a seed (tag distinguishes uses). */
static inline uint64_t pit__key(uint64_t seed, uint64_t tag) {
  return pit__mix64(pit__mix64(seed ^ 0x5851f42d4c957f2dULL) + tag * PIT__GOLDEN);
}

/* How raw 8-bit samples become model inputs. */
struct pit__conv {
  int c0, h0, w0;   /* raw sample shape */
  int cstride;      /* raw: distance between channels of one pixel-plane */
  int pstride;      /* raw: distance between neighbouring pixels */
  int c, s;         /* output channels and size (s×s; s=0 keeps h0×w0) */
  int h, w;         /* output h, w */
  float mean[3], std[3]; /* per output channel, in [0,1] units */
  float lut[3][256];     /* raw byte → normalised value, per output channel (no resize path) */
  /* resize tables (only when resizing): per output column/row the first source
   * index, count and weights (row-major, maxk per entry) */
  int maxkx, maxky;
  int *x0, *xn, *y0, *yn;
  float *wx, *wy;
  float *tmp;       /* (c0, h, w0) scratch: rows resized, columns not yet */
  float *plane;     /* (c0, h, w) scratch: resized before RGB → grey */
};

/* Sets up conversion from (c0, h0, w0) bytes to (c, s, s) normalised floats
 * (s = 0: native size; c = 0: native channels). Channel conversion 1→3 copies
 * the grey plane; 3→1 uses ITU-R 601 luma (0.299 R + 0.587 G + 0.114 B).
 * Resizing: scale the shorter side to s, centre-crop s×s (torchvision
 * Resize(s) + CenterCrop(s)), bilinear with antialiasing (triangle filter widened
 * by the scale when shrinking; plain bilinear with half-pixel centres when
 * growing). mean/std: per native channel. */
int pit__conv_init(struct pit__conv *cv, int c0, int h0, int w0, int chw, int c, int s,
                   const float *mean, const float *std, struct pit_err *e);
void pit__conv_release(struct pit__conv *cv);
/* One sample: src raw bytes → dst (c, h, w). */
void pit__conv_sample(struct pit__conv *cv, const uint8_t *src, float *dst);
/* cv when the dataset may keep its raw bytes (ds->x8) and convert them in gather:
 * the conversion is the table lookup alone on channel-major bytes (no resize, same
 * channels), so the raw sample is already (c, h, w) and lut[ch][byte] is its value;
 * and the options do not ask for floats. NULL otherwise (store floats). */
const struct pit__conv *pit__conv_keep_bytes(const struct pit__conv *cv,
                                             const struct pit_data_opts *o);

/* Readers: fill ds->x or ds->x8, ds->y, ds->n, shape and classes. opts already validated;
 * `limit` is the maximum number of samples to keep (>0) or 0 for all. */
int pit__idx_load(struct pit_dataset *ds, const struct pit_data_opts *o, const char *dir,
                  const float *mean, const float *std, struct pit_err *e);
int pit__cifar_load(struct pit_dataset *ds, const struct pit_data_opts *o, const char *dir,
                    struct pit_err *e);
int pit__images_load(struct pit_dataset *ds, const struct pit_data_opts *o, const char *dir,
                     struct pit_err *e);
int pit__synth_load(struct pit_dataset *ds, const struct pit_data_opts *o, struct pit_err *e);
void pit__synth_release(struct pit_dataset *ds);
void pit__synth_gather(const struct pit_dataset *ds, const int64_t *idx, int n, float *x,
                       int32_t *y);

/* resize.c: filter table for one dimension of a resize from `in` to `out` samples,
 * output positions first..first+count-1 (pit_resize's definition): per output position
 * the first source index pos[i], the number of taps len[i], and maxk weights (row i of wt).
 * Arrays malloc'd, owned by the caller; PIT_ENOMEM on failure (caller frees what was set). */
int pit__filter_table(int in, int out, int first, int count, enum pit_resize_kernel kernel,
                      int **pos, int **len, float **wt, int *maxk);

/* Allocates the storage of n samples (c, h, w) and ds->y (n), checking for overflow:
 * ds->x (floats), or, when bytes is given (pit__conv_keep_bytes's answer), ds->x8 and
 * ds->lut (a copy of bytes->lut). */
int pit__dataset_alloc(struct pit_dataset *ds, int64_t n, int c, int h, int w,
                       const struct pit__conv *bytes, const char *what, struct pit_err *e);
/* Stores raw sample src as sample i: copies the bytes into x8, or converts into x. */
/* Makes buf (n·c·h·w filled bytes, from malloc or pit__alloc_big) the dataset's
 * x8, freeing the x8 pit__dataset_alloc made (never written, it cost no pages). */
void pit__dataset_adopt_x8(struct pit_dataset *ds, uint8_t *buf);
/* A buffer for a large array (free() frees it): 2 MB aligned with transparent
 * huge pages advised from 8 MB, fewer page faults as it is filled. */
void *pit__alloc_big(size_t bytes);
void pit__dataset_put(struct pit_dataset *ds, struct pit__conv *cv, int64_t i, const uint8_t *src);

#endif
