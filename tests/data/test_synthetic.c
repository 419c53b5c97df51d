/* test_synthetic.c — the synthetic dataset: shape from the options, labels in
 * range and consistent between y and gather, samples a deterministic function of
 * (seed, split, i), train and test different samples of the same classes, values
 * in [-1, 1], and learnable: a nearest-class-mean classifier fitted on train
 * samples classifies test samples far above chance. Prints the gather speed. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pitstop/data.h"

static int load(struct pit_dataset *ds, int train, uint64_t seed, int size, int c, int64_t n,
                struct pit_err *e) {
  struct pit_data_opts o = {.kind = "synthetic", .train = train, .seed = seed,
                            .image_size = size, .channels = c, .synth_n = n};
  return pit_dataset_load(ds, &o, e);
}

int main(void) {
  struct pit_dataset tr, te, tr2;
  struct pit_err e;
  CHECK(load(&tr, 1, 5, 0, 0, 0, &e) == 0, "defaults: %s", e.msg);
  CHECK(tr.n == 50000 && tr.c == 3 && tr.h == 32 && tr.w == 32 && tr.classes == 10 && !tr.x,
        "default shape %lld %dx%dx%d", (long long)tr.n, tr.c, tr.h, tr.w);
  CHECK(load(&te, 0, 5, 0, 0, 0, &e) == 0 && te.n == 10000, "test default n");
  CHECK(load(&tr2, 1, 5, 0, 0, 0, &e) == 0, "again");
  enum { B = 256, D = 3 * 32 * 32 };
  float *x = malloc(sizeof(float) * B * D), *x2 = malloc(sizeof(float) * B * D);
  int32_t y[B], y2[B];
  int64_t idx[B];
  for (int i = 0; i < B; i++)
    idx[i] = (int64_t)(i * 193) % tr.n;
  CHECK(pit_dataset_gather(&tr, idx, B, x, y) == 0, "gather");
  CHECK(pit_dataset_gather(&tr2, idx, B, x2, y2) == 0, "gather 2");
  CHECK(!memcmp(x, x2, sizeof(float) * B * D) && !memcmp(y, y2, sizeof y), "deterministic");
  int lab_ok = 1, range_ok = 1, count[10] = {0};
  for (int i = 0; i < B; i++) {
    lab_ok &= y[i] == tr.y[idx[i]] && y[i] >= 0 && y[i] < 10;
    if (y[i] >= 0 && y[i] < 10)
      count[y[i]]++;
  }
  for (int i = 0; i < B * D; i++)
    range_ok &= x[i] >= -1.0f && x[i] <= 1.0f;
  CHECK(lab_ok, "labels in range and equal to ds->y");
  CHECK(range_ok, "values in [-1, 1]");
  for (int k = 0; k < 10; k++)
    CHECK(count[k] > 5, "class %d appears %d times in 256", k, count[k]);
  /* same index twice in one gather, and two different indices differ */
  int64_t pair[3] = {17, 17, 18};
  CHECK(pit_dataset_gather(&tr, pair, 3, x2, y2) == 0, "gather pair");
  CHECK(!memcmp(x2, x2 + D, sizeof(float) * D) && memcmp(x2, x2 + 2 * D, sizeof(float) * D),
        "sample i is a function of i");
  /* test split: other samples */
  CHECK(pit_dataset_gather(&te, idx, 1, x2, y2) == 0, "gather test");
  CHECK(memcmp(x, x2, sizeof(float) * D) != 0, "test sample 0 differs from train sample 0");
  pit_dataset_release(&tr2);
  CHECK(load(&tr2, 1, 6, 0, 0, 0, &e) == 0, "seed 6");
  CHECK(pit_dataset_gather(&tr2, idx, 1, x2, y2) == 0 && memcmp(x, x2, sizeof(float) * D),
        "another seed, another sample");
  pit_dataset_release(&tr2);

  /* learnable: class means of 2000 train samples classify 1000 test samples */
  double *mean = calloc(10 * (size_t)D, sizeof(double));
  int ncls[10] = {0};
  for (int64_t i0 = 0; i0 < 2000; i0 += B) {
    for (int i = 0; i < B; i++)
      idx[i] = i0 + i;
    pit_dataset_gather(&tr, idx, B, x, y);
    for (int i = 0; i < B; i++) {
      ncls[y[i]]++;
      for (int k = 0; k < D; k++)
        mean[(size_t)y[i] * D + k] += x[(size_t)i * D + k];
    }
  }
  for (int c = 0; c < 10; c++)
    for (int k = 0; k < D; k++)
      mean[(size_t)c * D + k] /= ncls[c] ? ncls[c] : 1;
  int right = 0, total = 0;
  for (int64_t i0 = 0; i0 < 1000; i0 += B) {
    int m = 1000 - i0 < B ? (int)(1000 - i0) : B;
    for (int i = 0; i < m; i++)
      idx[i] = i0 + i;
    pit_dataset_gather(&te, idx, m, x, y);
    for (int i = 0; i < m; i++) {
      int best = 0;
      double bd = INFINITY;
      for (int c = 0; c < 10; c++) {
        double d = 0;
        for (int k = 0; k < D; k++) {
          double t = x[(size_t)i * D + k] - mean[(size_t)c * D + k];
          d += t * t;
        }
        if (d < bd)
          bd = d, best = c;
      }
      right += best == y[i];
      total++;
    }
  }
  printf("nearest class mean: %d/%d test samples right\n", right, total);
  CHECK(right > 0.8 * total, "learnable: %d of %d", right, total);
  free(mean);

  /* gather speed (printed, not asserted) */
  double t0 = pit_now();
  int64_t done = 0;
  for (int r = 0; r < 200; r++) {
    for (int i = 0; i < B; i++)
      idx[i] = (int64_t)((r * B + i) * 7919) % tr.n;
    pit_dataset_gather(&tr, idx, B, x, y);
    done += B;
  }
  double dt = pit_now() - t0;
  printf("synthetic 3x32x32 gather: %.2f us/sample\n", 1e6 * dt / done);

  /* other shapes, limit */
  struct pit_dataset s;
  struct pit_data_opts o = {.kind = "synthetic", .train = 1, .image_size = 28, .channels = 1,
                            .synth_classes = 3, .limit = 100};
  CHECK(pit_dataset_load(&s, &o, &e) == 0 && s.n == 100 && s.c == 1 && s.h == 28 &&
            s.classes == 3, "1x28x28, 3 classes, limit");
  int64_t one[1] = {99}, out[1] = {100};
  int32_t yy[1];
  CHECK(pit_dataset_gather(&s, one, 1, x, yy) == 0 && yy[0] >= 0 && yy[0] < 3, "small gather");
  CHECK(pit_dataset_gather(&s, out, 1, x, yy) == PIT_EARG, "index beyond limit");
  pit_dataset_release(&s);
  pit_dataset_release(&tr);
  pit_dataset_release(&te);
  free(x);
  free(x2);
  return check_done();
}
