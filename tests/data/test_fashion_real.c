/* test_fashion_real.c — the real Fashion-MNIST in /usr/share/datasets (skipped
 * with a message when absent): counts, label range, normalised mean ≈ 0 and
 * sd ≈ 1, and the 28 → 32 resize keeps the mean. */
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "gather_all.h"
#include "pitstop/data.h"

/* Mean and sd of every value as gather gives it (NAN when it cannot). */
static void moments(const struct pit_dataset *ds, double *mean, double *sd) {
  size_t m = (size_t)ds->n * ds->c * ds->h * ds->w;
  float *x = gather_all(ds, NULL);
  double s = 0, s2 = 0;
  for (size_t i = 0; x && i < m; i++) {
    s += x[i];
    s2 += (double)x[i] * x[i];
  }
  *mean = x ? s / m : NAN;
  *sd = x ? sqrt(s2 / m - *mean * *mean) : NAN;
  free(x);
}

int main(void) {
  const char *dir = "/usr/share/datasets/fashion-mnist";
  if (access("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz", R_OK) != 0) {
    printf("skipped: %s not present\n", dir);
    CHECK(1, "skip");
    return check_done();
  }
  struct pit_err e;
  for (int train = 1; train >= 0; train--) {
    struct pit_data_opts o = {.kind = "fashion-mnist", .train = train};
    struct pit_dataset ds;
    double t0 = pit_now();
    int rc = pit_dataset_load(&ds, &o, &e);
    double t1 = pit_now();
    CHECK(rc == 0, "load: %s", e.msg);
    if (rc)
      continue;
    printf("fashion-mnist %s: %lld samples loaded in %.3f s\n", train ? "train" : "test",
           (long long)ds.n, t1 - t0);
    CHECK(ds.n == (train ? 60000 : 10000), "n = %lld", (long long)ds.n);
    CHECK(ds.c == 1 && ds.h == 28 && ds.w == 28, "shape %dx%dx%d", ds.c, ds.h, ds.w);
    CHECK(ds.classes == 10, "classes %d", ds.classes);
    CHECK(ds.x8 && !ds.x, "native samples kept as bytes");
    int counts[10] = {0}, bad = 0;
    for (int64_t i = 0; i < ds.n; i++) {
      if (ds.y[i] < 0 || ds.y[i] > 9)
        bad++;
      else
        counts[ds.y[i]]++;
    }
    CHECK(bad == 0, "%d labels out of range", bad);
    for (int k = 0; k < 10; k++) /* Fashion-MNIST is balanced */
      CHECK(counts[k] == ds.n / 10, "class %d has %d samples", k, counts[k]);
    double mean, sd;
    moments(&ds, &mean, &sd);
    printf("normalised mean %.4f sd %.4f\n", mean, sd);
    CHECK(fabs(mean) < 0.01, "mean after normalisation %.4f", mean);
    CHECK(fabs(sd - 1) < 0.02, "sd after normalisation %.4f", sd);
    pit_dataset_release(&ds);
  }
  /* DCGAN input: 32×32, [-1, 1], 3 channels */
  struct pit_data_opts o = {.kind = "fashion-mnist", .train = 0, .image_size = 32, .channels = 3,
                            .norm = PIT_NORM_GAN, .limit = 2000};
  struct pit_dataset ds;
  int rc = pit_dataset_load(&ds, &o, &e);
  CHECK(rc == 0, "load 32x32: %s", e.msg);
  if (!rc) {
    CHECK(ds.n == 2000 && ds.c == 3 && ds.h == 32 && ds.w == 32, "shape %lld %dx%dx%d",
          (long long)ds.n, ds.c, ds.h, ds.w);
    CHECK(ds.x && !ds.x8, "resized samples stored as floats");
    float lo = 1, hi = -1;
    for (size_t i = 0; i < (size_t)ds.n * 3 * 32 * 32; i++) {
      lo = ds.x[i] < lo ? ds.x[i] : lo;
      hi = ds.x[i] > hi ? ds.x[i] : hi;
    }
    CHECK(lo >= -1.0001f && hi <= 1.0001f && lo < -0.99f && hi > 0.99f, "range [%g, %g]", lo, hi);
    double mean, sd;
    moments(&ds, &mean, &sd);
    /* pixel mean 0.286 → GAN scale 2·0.286 - 1 */
    CHECK(fabs(mean - (2 * 0.286 - 1)) < 0.02, "GAN mean %.4f", mean);
    pit_dataset_release(&ds);
  }
  return check_done();
}
