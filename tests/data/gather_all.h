/* gather_all.h — for the data tests: every sample of a dataset as floats, read
 * through pit_dataset_gather (which hides whether the dataset keeps floats or
 * bytes), and the check that byte storage changes nothing a reader sees. */
#ifndef PIT_TEST_GATHER_ALL_H
#define PIT_TEST_GATHER_ALL_H
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pitstop/data.h"

/* All n samples (n, c, h, w) as gather returns them, malloc'd (caller frees); labels
 * into y (n) when y is not NULL. NULL when gather fails or memory is short. */
static inline float *gather_all(const struct pit_dataset *ds, int32_t *y) {
  size_t per = (size_t)ds->c * ds->h * ds->w;
  int64_t *idx = malloc(sizeof *idx * (size_t)ds->n);
  float *x = malloc(sizeof *x * per * (size_t)ds->n);
  if (idx && x) {
    for (int64_t i = 0; i < ds->n; i++)
      idx[i] = i;
    if (pit_dataset_gather(ds, idx, (int)ds->n, x, y) != 0) {
      free(x);
      x = NULL;
    }
  }
  free(idx);
  return x;
}

/* Loads o with byte storage allowed and with store_floats, and checks: bytes kept
 * (x8 and lut set, x NULL) exactly when want_bytes, floats stored with store_floats,
 * and gather of every sample bit-identical between the two (values and labels). */
static inline void check_bytes_match_floats(struct pit_data_opts o, int want_bytes, const char *what) {
  struct pit_dataset b, f;
  struct pit_err e;
  o.store_floats = 0;
  int rb = pit_dataset_load(&b, &o, &e);
  CHECK(rb == 0, "%s: load: %s", what, e.msg);
  o.store_floats = 1;
  int rf = pit_dataset_load(&f, &o, &e);
  CHECK(rf == 0, "%s: load floats: %s", what, e.msg);
  if (rb || rf)
    return;
  if (want_bytes)
    CHECK(b.x8 && b.lut && !b.x, "%s: bytes not kept (x8 %p, x %p)", what, (void *)b.x8,
          (void *)b.x);
  else
    CHECK(b.x && !b.x8 && !b.lut, "%s: floats not stored (x8 %p, x %p)", what, (void *)b.x8,
          (void *)b.x);
  CHECK(f.x && !f.x8 && !f.lut, "%s: store_floats did not store floats", what);
  CHECK(b.n == f.n && b.c == f.c && b.h == f.h && b.w == f.w, "%s: shapes differ", what);
  int32_t *yb = malloc(sizeof *yb * (size_t)b.n), *yf = malloc(sizeof *yf * (size_t)f.n);
  float *xb = gather_all(&b, yb), *xf = gather_all(&f, yf);
  size_t m = (size_t)b.n * b.c * b.h * b.w;
  CHECK(xb && xf && !memcmp(xb, xf, sizeof *xb * m), "%s: gathered floats differ", what);
  CHECK(xb && xf && !memcmp(yb, yf, sizeof *yb * (size_t)b.n), "%s: labels differ", what);
  /* the float path stores what the loader converted: gather copies it unchanged */
  CHECK(xf && !memcmp(xf, f.x, sizeof *xf * m), "%s: float gather is not a copy", what);
  printf("%-52s %s, %zu values identical\n", what, b.x8 ? "bytes" : "floats", m);
  free(xb);
  free(xf);
  free(yb);
  free(yf);
  pit_dataset_release(&b);
  pit_dataset_release(&f);
}

/* check_bytes_match_floats over the cases that matter, on the dataset o names (kind, dir,
 * train) whose samples have native_c channels: both normalisations at native size and
 * channels, a limit, channels given as the native count (all bytes); channels converted
 * and resized to size (floats). */
static inline void check_storage_cases(struct pit_data_opts o, int native_c, int size) {
  struct {
    enum pit_data_norm norm;
    int64_t limit;
    int channels, size, bytes;
    const char *what;
  } cases[] = {
      {PIT_NORM_CLASSIFIER, 0, 0, 0, 1, "classifier"},
      {PIT_NORM_GAN, 0, 0, 0, 1, "GAN"},
      {PIT_NORM_GAN, 7, native_c, 0, 1, "GAN, limit 7, native channels"},
      {PIT_NORM_CLASSIFIER, 7, 4 - native_c, 0, 0, "classifier, channels converted"},
      {PIT_NORM_GAN, 0, 0, size, 0, "GAN, resized"},
      {PIT_NORM_CLASSIFIER, 0, 0, size, 0, "classifier, resized"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char what[128];
    snprintf(what, sizeof what, "%s %s: %s", o.kind, o.train ? "train" : "test", cases[i].what);
    o.norm = cases[i].norm;
    o.limit = cases[i].limit;
    o.channels = cases[i].channels;
    o.image_size = cases[i].size;
    check_bytes_match_floats(o, cases[i].bytes, what);
  }
}

#endif
