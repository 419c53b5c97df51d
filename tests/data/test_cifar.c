/* test_cifar.c — CIFAR-10 binary reader on tiny fixtures: record layout,
 * per-channel normalisation, RGB → grey, resize shape, the cifar-10-batches-bin
 * subdirectory, limit across files, and bad input naming the file. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"
#include "gather_all.h"
#include "pitstop/data.h"

static const double M[3] = {0.4914, 0.4822, 0.4465}, S[3] = {0.2470, 0.2435, 0.2616};

/* Byte of record r (global), channel ch, pixel p. */
static unsigned char px(int r, int ch, int p) { return (unsigned char)((r * 31 + ch * 80 + p) % 256); }

static void write_batch(const char *path, int first, int nrec, int badlabel) {
  FILE *f = fopen(path, "wb");
  unsigned char rec[3073];
  for (int r = first; r < first + nrec; r++) {
    rec[0] = (unsigned char)(badlabel ? 12 : r % 10);
    for (int ch = 0; ch < 3; ch++)
      for (int p = 0; p < 1024; p++)
        rec[1 + ch * 1024 + p] = px(r, ch, p);
    fwrite(rec, 1, sizeof rec, f);
  }
  fclose(f);
}

static const char *mk(const char *base, const char *name) {
  static char p[1024];
  snprintf(p, sizeof p, "%s/%s", base, name);
  mkdir(p, 0755);
  return p;
}

static void write_all(const char *d, int per) {
  char path[1200];
  for (int f = 0; f < 5; f++) {
    snprintf(path, sizeof path, "%s/data_batch_%d.bin", d, f + 1);
    write_batch(path, f * per, per, 0);
  }
  snprintf(path, sizeof path, "%s/test_batch.bin", d);
  write_batch(path, 100, 2, 0);
}

static int load(struct pit_dataset *ds, const char *d, int train, int channels, int size,
                int64_t limit, struct pit_err *e) {
  struct pit_data_opts o = {.kind = "cifar10", .dir = d, .train = train, .channels = channels,
                            .image_size = size, .limit = limit};
  return pit_dataset_load(ds, &o, e);
}

static void expect_fail(const char *d, const char *needle, const char *what) {
  struct pit_dataset ds;
  struct pit_err e;
  int rc = load(&ds, d, 1, 0, 0, 0, &e);
  CHECK(rc < 0 && strstr(e.msg, needle), "%s: rc %d '%s' lacks '%s'", what, rc, e.msg, needle);
  printf("%-24s -> %s\n", what, e.msg);
}

int main(void) {
  char base[512];
  snprintf(base, sizeof base, "%s", check_tmpdir());
  struct pit_dataset ds;
  struct pit_err e;

  const char *d = mk(base, "c1");
  char dir1[1024];
  snprintf(dir1, sizeof dir1, "%s", d);
  write_all(dir1, 3);
  CHECK(load(&ds, dir1, 1, 0, 0, 0, &e) == 0, "load: %s", e.msg);
  CHECK(ds.n == 15 && ds.c == 3 && ds.h == 32 && ds.w == 32 && ds.classes == 10, "shape");
  int bad = 0;
  float *X = gather_all(&ds, NULL); /* the samples as gather gives them (ds keeps bytes) */
  CHECK(X != NULL, "gather all");
  for (int r = 0; X && r < 15; r++) {
    if (ds.y[r] != r % 10)
      bad++;
    for (int ch = 0; ch < 3; ch++)
      for (int p = 0; p < 1024; p += 97) {
        double want = (px(r, ch, p) / 255.0 - M[ch]) / S[ch];
        if (fabs(X[(size_t)r * 3072 + ch * 1024 + p] - want) > 1e-5)
          bad++;
      }
  }
  CHECK(bad == 0, "%d wrong values or labels", bad);
  free(X);
  pit_dataset_release(&ds);

  /* byte storage: native RGB keeps bytes, gather bit-identical to the float path for
   * both normalisations; grey or resized samples keep floats */
  struct pit_data_opts o = {.kind = "cifar10", .dir = dir1, .train = 1};
  check_storage_cases(o, 3, 16);
  o.train = 0;
  check_storage_cases(o, 3, 40);

  CHECK(load(&ds, dir1, 0, 1, 0, 0, &e) == 0, "test split grey: %s", e.msg);
  CHECK(ds.n == 2 && ds.c == 1, "grey shape");
  double gm = 0.299 * M[0] + 0.587 * M[1] + 0.114 * M[2];
  double gs = 0.299 * S[0] + 0.587 * S[1] + 0.114 * S[2];
  double luma = (0.299 * px(101, 0, 5) + 0.587 * px(101, 1, 5) + 0.114 * px(101, 2, 5)) / 255.0;
  CHECK_NEAR(ds.x[1024 + 5], (luma - gm) / gs, 1e-4, "luma of record 1, pixel 5");
  CHECK(ds.y[1] == 101 % 10, "test label");
  pit_dataset_release(&ds);

  CHECK(load(&ds, dir1, 1, 0, 64, 7, &e) == 0, "resize + limit: %s", e.msg);
  CHECK(ds.n == 7 && ds.c == 3 && ds.h == 64 && ds.w == 64 && ds.y[6] == 6, "limit across files");
  pit_dataset_release(&ds);

  /* parent of cifar-10-batches-bin */
  d = mk(base, "c2");
  char dir2[1024];
  snprintf(dir2, sizeof dir2, "%s", d);
  write_all(mk(dir2, "cifar-10-batches-bin"), 1);
  CHECK(load(&ds, dir2, 1, 0, 0, 0, &e) == 0 && ds.n == 5, "subdirectory layout: %s", e.msg);
  pit_dataset_release(&ds);

  /* bad input */
  char path[1200];
  d = mk(base, "missing3");
  write_all(d, 1);
  snprintf(path, sizeof path, "%s/data_batch_3.bin", d);
  remove(path);
  expect_fail(d, "missing3/data_batch_3.bin", "missing batch file");
  d = mk(base, "trunc");
  write_all(d, 2);
  snprintf(path, sizeof path, "%s/data_batch_2.bin", d);
  FILE *f = fopen(path, "ab");
  fputc(7, f);
  fclose(f);
  expect_fail(d, "trunc/data_batch_2.bin", "partial record");
  d = mk(base, "label");
  write_all(d, 2);
  snprintf(path, sizeof path, "%s/data_batch_4.bin", d);
  write_batch(path, 0, 2, 1);
  expect_fail(d, "label/data_batch_4.bin", "label out of range");
  d = mk(base, "empty");
  write_all(d, 2);
  snprintf(path, sizeof path, "%s/data_batch_1.bin", d);
  fclose(fopen(path, "wb"));
  expect_fail(d, "empty/data_batch_1.bin", "empty file");
  expect_fail("/nonexistent/cifar", "/nonexistent/cifar/data_batch_1.bin", "no directory");
  return check_done();
}
