/* dataset.c — pit_dataset_load dispatch (option checks, default directories,
 * per-dataset normalisation constants), allocation, gather, release.
 *
 * Invariants: after a successful load exactly one of x (n·c·h·w normalised floats)
 * and x8 (n·c·h·w bytes, with lut: c tables of 256 normalised values) is set, or
 * neither for synthetic (generated on demand by gather); gather returns the same
 * floats from x8 as the float path would have stored (the same lut lookup). y holds
 * n labels in [0, classes) (-1 when classes == 0). After a failed load ds is empty.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "data/data_impl.h"

/* Large buffers are 2 MB aligned and advised to use transparent huge pages:
 * filling 2.5 GB in 4 kB pages spent 4.7 s in the kernel (page faults); from
 * 8 MB on (Fashion-MNIST's 47 MB of images inflated whole: idx.c). */
void *pit__alloc_big(size_t bytes) {
  if (bytes < ((size_t)8 << 20))
    return malloc(bytes);
  void *p = NULL;
  if (posix_memalign(&p, (size_t)2 << 20, bytes) != 0)
    return NULL;
#ifdef MADV_HUGEPAGE
  madvise(p, bytes, MADV_HUGEPAGE); /* advice only: failure changes nothing */
#endif
  return p;
}

int pit__dataset_alloc(struct pit_dataset *ds, int64_t n, int c, int h, int w,
                       const struct pit__conv *bytes, const char *what, struct pit_err *e) {
  size_t per = (size_t)c * h * w, elem = bytes ? 1 : sizeof(float);
  if (n <= 0 || per == 0 || (uint64_t)n > SIZE_MAX / sizeof(float) / per)
    return pit_err_set(e, PIT_EFORMAT, "%s: impossible dataset size (%lld samples of %dx%dx%d)",
                       what, (long long)n, c, h, w);
  /* Refuse what cannot fit in memory instead of being killed while filling it. */
  long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
  double need = (double)n * per * elem;
  if (pages > 0 && psize > 0 && need > 0.9 * (double)pages * psize) {
    pit_err_set(e, PIT_ENOMEM, "%s: %lld samples of %dx%dx%d need %.1f GB, more than this "
                "machine's memory (%.1f GB)", what, (long long)n, c, h, w, need / 1e9,
                (double)pages * psize / 1e9);
    pit_err_hint(e, "keep fewer samples (a sample limit) or use a smaller image size");
    return PIT_ENOMEM;
  }
  int ok;
  if (bytes) {
    ds->x8 = pit__alloc_big(per * (size_t)n);
    ds->lut = malloc(sizeof *ds->lut * (size_t)c);
    if (ds->lut)
      memcpy(ds->lut, bytes->lut, sizeof *ds->lut * (size_t)c);
    ok = ds->x8 && ds->lut;
  } else {
    ds->x = pit__alloc_big(sizeof(float) * per * (size_t)n);
    ok = ds->x != NULL;
  }
  ds->y = malloc(sizeof(int32_t) * (size_t)n);
  if (!ok || !ds->y) {
    PIT_FREE_ALL(ds->x, ds->x8, ds->lut, ds->y);
    ds->x = NULL;
    ds->x8 = NULL;
    ds->lut = NULL;
    ds->y = NULL;
    return pit_err_set(e, PIT_ENOMEM, "%s: out of memory for %lld samples of %dx%dx%d (%.1f MB)",
                       what, (long long)n, c, h, w, need / 1e6);
  }
  ds->n = n;
  ds->c = c;
  ds->h = h;
  ds->w = w;
  return 0;
}

void pit__dataset_adopt_x8(struct pit_dataset *ds, uint8_t *buf) {
  free(ds->x8);
  ds->x8 = buf;
}

void pit__dataset_put(struct pit_dataset *ds, struct pit__conv *cv, int64_t i, const uint8_t *src) {
  size_t per = (size_t)ds->c * ds->h * ds->w;
  if (ds->x8)
    memcpy(ds->x8 + (size_t)i * per, src, per);
  else
    pit__conv_sample(cv, src, ds->x + (size_t)i * per);
}

static int check_opts(const struct pit_data_opts *o, struct pit_err *e) {
  if (!o->kind || !*o->kind)
    return pit_err_set(e, PIT_EARG, "no dataset given (expected fashion-mnist, mnist, cifar10, "
                                    "images or synthetic)");
  if (o->image_size < 0 || o->image_size > 4096)
    return pit_err_set(e, PIT_EARG, "image size %d out of range (0 = native, up to 4096)",
                       o->image_size);
  if (o->channels != 0 && o->channels != 1 && o->channels != 3)
    return pit_err_set(e, PIT_EARG, "channels must be 1 or 3 (0 = native), not %d", o->channels);
  if (o->limit < 0)
    return pit_err_set(e, PIT_EARG, "sample limit must be >= 0 (0 = all), not %lld",
                       (long long)o->limit);
  if (o->synth_n < 0)
    return pit_err_set(e, PIT_EARG, "synthetic sample count must be >= 0 (0 = default), not %lld",
                       (long long)o->synth_n);
  if (o->synth_classes < 0 || o->synth_classes > 1000)
    return pit_err_set(e, PIT_EARG, "synthetic classes must be 1..1000 (0 = 10), not %d",
                       o->synth_classes);
  if (o->norm != PIT_NORM_CLASSIFIER && o->norm != PIT_NORM_GAN && o->norm != PIT_NORM_IMAGENET)
    return pit_err_set(e, PIT_EARG, "unknown normalisation %d", (int)o->norm);
  if (o->norm == PIT_NORM_IMAGENET && strcmp(o->kind, "images") != 0)
    return pit_err_set(e, PIT_EARG, "ImageNet normalisation is for image folders, not '%s'", o->kind);
  if (o->min_side < 0)
    return pit_err_set(e, PIT_EARG, "minimum image side must be >= 0, not %d", o->min_side);
  return 0;
}

int pit_dataset_load(struct pit_dataset *ds, const struct pit_data_opts *o, struct pit_err *e) {
  memset(ds, 0, sizeof *ds);
  pit_err_clear(e);
  int rc = check_opts(o, e);
  if (rc)
    return rc;
  static const float half[3] = {0.5f, 0.5f, 0.5f};
  const char *k = o->kind;
  if (!strcmp(k, "fashion-mnist") || !strcmp(k, "mnist")) {
    int fashion = k[0] == 'f';
    static const float fm[3] = {0.2860f}, fs[3] = {0.3530f};
    static const float mm[3] = {0.1307f}, ms[3] = {0.3081f};
    const float *mean = o->norm == PIT_NORM_GAN ? half : fashion ? fm : mm;
    const float *std = o->norm == PIT_NORM_GAN ? half : fashion ? fs : ms;
    const char *dir = o->dir && *o->dir ? o->dir
                      : fashion         ? "/usr/share/datasets/fashion-mnist"
                                        : "/usr/share/datasets/mnist";
    rc = pit__idx_load(ds, o, dir, mean, std, e);
  } else if (!strcmp(k, "cifar10")) {
    rc = pit__cifar_load(ds, o, o->dir && *o->dir ? o->dir : "/usr/share/datasets/cifar10", e);
  } else if (!strcmp(k, "images")) {
    rc = pit__images_load(ds, o, o->dir && *o->dir ? o->dir : "/usr/share/datasets/celeba", e);
  } else if (!strcmp(k, "synthetic")) {
    rc = pit__synth_load(ds, o, e);
  } else {
    return pit_err_set(e, PIT_EARG, "unknown dataset '%s' (expected fashion-mnist, mnist, "
                                    "cifar10, images or synthetic)", k);
  }
  if (rc) {
    pit_dataset_release(ds);
    return rc;
  }
  snprintf(ds->name, sizeof ds->name, "%s", k);
  return 0;
}

void pit_dataset_release(struct pit_dataset *ds) {
  if (!ds)
    return;
  pit__synth_release(ds);
  PIT_FREE_ALL(ds->x, ds->x8, ds->lut, ds->y);
  memset(ds, 0, sizeof *ds);
}

/* dst[p] = lut[src[p]]: restrict lets the loads of lut move past the stores; unrolled, the
 * loop's own instructions no longer dominate (a 784-byte sample in cache: 259 ns rolled,
 * 165 ns unrolled by 8; an AVX2 gather did 130 ns, not worth the intrinsics). */
static void lookup(const float *restrict lut, const uint8_t *restrict src, float *restrict dst,
                   size_t len) {
#pragma GCC unroll 8
  for (size_t p = 0; p < len; p++)
    dst[p] = lut[src[p]];
}

int pit_dataset_gather(const struct pit_dataset *ds, const int64_t *idx, int n, float *x,
                       int32_t *y) {
  if (n < 0 || (n > 0 && (!idx || !x)))
    return PIT_EARG;
  for (int i = 0; i < n; i++)
    if (idx[i] < 0 || idx[i] >= ds->n)
      return PIT_EARG;
  if (!ds->x && !ds->x8) {
    if (!ds->priv)
      return PIT_ESTATE;
    pit__synth_gather(ds, idx, n, x, y);
    return 0;
  }
  size_t hw = (size_t)ds->h * ds->w, per = (size_t)ds->c * hw;
  for (int i = 0; i < n; i++) {
    float *d = x + (size_t)i * per;
    if (ds->x8) { /* the same table lookup pit__conv_sample does: bit-identical */
      const uint8_t *s = ds->x8 + (size_t)idx[i] * per;
      /* Fetch the next (random) sample's lines while this one converts: the lookup loop
       * reads one byte at a time and waited on each line (Fashion-MNIST, bench-data-load
       * --gather, rolled loop: 0.61 us a sample without, 0.28 with; fetching 2, 4 or 8
       * samples ahead did no better in training). */
      if (i + 1 < n)
        for (size_t o = 0; o < per; o += 64)
          __builtin_prefetch(ds->x8 + (size_t)idx[i + 1] * per + o);
      for (int ch = 0; ch < ds->c; ch++)
        lookup(ds->lut[ch], s + ch * hw, d + ch * hw, hw);
    } else {
      memcpy(d, ds->x + (size_t)idx[i] * per, sizeof(float) * per);
    }
    if (y)
      y[i] = ds->y[idx[i]];
  }
  return 0;
}
