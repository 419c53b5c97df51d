/* test_idx.c — IDX (MNIST/Fashion-MNIST) reader on fixtures written here with
 * zlib: values after normalisation, resizing (bilinear with antialiasing,
 * checked against hand-computed weights), channel conversion, limit, the
 * uncompressed fallback, and one clear message naming the file for every kind of
 * bad input. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "gather_all.h"
#include "pitstop/data.h"

static char dir[512];

static void be32(unsigned char *p, uint32_t v) {
  p[0] = (unsigned char)(v >> 24);
  p[1] = (unsigned char)(v >> 16);
  p[2] = (unsigned char)(v >> 8);
  p[3] = (unsigned char)v;
}

/* Writes dir/name (gzip if gz) with an IDX header (ndims 1 or 3) and data. */
static void write_idx(const char *d, const char *name, int gz, uint32_t magic, uint32_t n,
                      uint32_t h, uint32_t w, const unsigned char *data, size_t len) {
  char path[1024];
  unsigned char hdr[16];
  snprintf(path, sizeof path, "%s/%s", d, name);
  be32(hdr, magic);
  be32(hdr + 4, n);
  be32(hdr + 8, h);
  be32(hdr + 12, w);
  size_t hl = (magic & 0xff) == 1 ? 8 : 16;
  if (gz) {
    gzFile g = gzopen(path, "wb");
    gzwrite(g, hdr, (unsigned)hl);
    if (len)
      gzwrite(g, data, (unsigned)len);
    gzclose(g);
  } else {
    FILE *f = fopen(path, "wb");
    fwrite(hdr, 1, hl, f);
    fwrite(data, 1, len, f);
    fclose(f);
  }
}

/* A good fixture in d: n images of h×w, pixel (i, p) = (i*50 + p*10) % 256, labels i % 10. */
static void write_good(const char *d, const char *split, uint32_t n, uint32_t h, uint32_t w) {
  unsigned char *img = malloc(n * h * w), lab[64];
  for (uint32_t i = 0; i < n; i++) {
    lab[i] = (unsigned char)(i % 10);
    for (uint32_t p = 0; p < h * w; p++)
      img[i * h * w + p] = (unsigned char)((i * 50 + p * 10) % 256);
  }
  char name[128];
  snprintf(name, sizeof name, "%s-images-idx3-ubyte.gz", split);
  write_idx(d, name, 1, 0x803, n, h, w, img, n * h * w);
  snprintf(name, sizeof name, "%s-labels-idx1-ubyte.gz", split);
  write_idx(d, name, 1, 0x801, n, 0, 0, lab, n);
  free(img);
}

static const char *subdir(const char *name) {
  static char p[1024];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  mkdir(p, 0755);
  return p;
}

/* Loads fashion-mnist from d and expects failure mentioning `needle`. */
static void expect_fail(const char *d, const char *needle, int code, const char *what) {
  struct pit_data_opts o = {.kind = "fashion-mnist", .dir = d, .train = 1};
  struct pit_dataset ds;
  struct pit_err e;
  int rc = pit_dataset_load(&ds, &o, &e);
  CHECK(rc < 0 && (code == 0 || rc == code), "%s: rc %d (want %d)", what, rc, code);
  CHECK(strstr(e.msg, needle) != NULL, "%s: message '%s' lacks '%s'", what, e.msg, needle);
  CHECK(ds.x == NULL && ds.y == NULL && ds.n == 0, "%s: dataset not empty after failure", what);
  CHECK(ds.x8 == NULL && ds.lut == NULL, "%s: byte storage left after failure", what);
  printf("%-28s -> %s\n", what, e.msg);
}

static void test_values(void) {
  const char *d = subdir("good");
  write_good(d, "train", 5, 4, 4);
  write_good(d, "t10k", 3, 4, 4);
  struct pit_err e;
  struct pit_dataset ds;
  struct pit_data_opts o = {.kind = "fashion-mnist", .dir = d, .train = 1};
  CHECK(pit_dataset_load(&ds, &o, &e) == 0, "load: %s", e.msg);
  CHECK(ds.n == 5 && ds.c == 1 && ds.h == 4 && ds.w == 4 && ds.classes == 10, "shape");
  CHECK(!strcmp(ds.name, "fashion-mnist"), "name %s", ds.name);
  float *X = gather_all(&ds, NULL); /* the samples as gather gives them (ds keeps bytes) */
  CHECK(X != NULL, "gather all");
  for (int i = 0; X && i < 5; i++) {
    CHECK(ds.y[i] == i % 10, "label %d", i);
    for (int p = 0; p < 16; p++) {
      double want = (((i * 50 + p * 10) % 256) / 255.0 - 0.2860) / 0.3530;
      CHECK_NEAR(X[i * 16 + p], want, 1e-5, "classifier normalisation");
    }
  }
  /* gather */
  int64_t idx[2] = {4, 1};
  float x[32];
  int32_t y[2];
  CHECK(pit_dataset_gather(&ds, idx, 2, x, y) == 0, "gather");
  CHECK(X && y[0] == 4 && y[1] == 1 && x[0] == X[4 * 16] && x[31] == X[1 * 16 + 15], "gather");
  int64_t badidx[1] = {5};
  CHECK(pit_dataset_gather(&ds, badidx, 1, x, y) == PIT_EARG, "gather out of range");
  free(X);
  pit_dataset_release(&ds);

  /* test split, GAN normalisation, 3 channels, limit */
  o.train = 0;
  o.norm = PIT_NORM_GAN;
  o.channels = 3;
  o.limit = 2;
  CHECK(pit_dataset_load(&ds, &o, &e) == 0, "load test: %s", e.msg);
  CHECK(ds.n == 2 && ds.c == 3 && ds.h == 4, "shape %lld %d", (long long)ds.n, ds.c);
  for (int ch = 0; ch < 3; ch++)
    for (int p = 0; p < 16; p++) {
      double want = (((1 * 50 + p * 10) % 256) / 255.0 - 0.5) / 0.5;
      CHECK_NEAR(ds.x[48 + ch * 16 + p], want, 1e-5, "GAN normalisation, grey copied to RGB");
    }
  pit_dataset_release(&ds);
}

/* Resize: 2×2 → 4×4 is bilinear with half-pixel centres, edges clamped:
 * 1-D weights per output (1,0) (.75,.25) (.25,.75) (0,1). 4×4 → 2×2 shrinks with
 * the triangle widened ×2: weights (3,3,1)/7 over sources 0..2 and (1,3,3)/7 over 1..3. */
static void test_resize(void) {
  const char *d = subdir("resize");
  unsigned char up[4] = {0, 255, 102, 51}, lab[1] = {3};
  write_idx(d, "train-images-idx3-ubyte.gz", 1, 0x803, 1, 2, 2, up, 4);
  write_idx(d, "train-labels-idx1-ubyte.gz", 1, 0x801, 1, 0, 0, lab, 1);
  struct pit_data_opts o = {.kind = "mnist", .dir = d, .train = 1, .image_size = 4,
                            .norm = PIT_NORM_GAN};
  struct pit_dataset ds;
  struct pit_err e;
  CHECK(pit_dataset_load(&ds, &o, &e) == 0, "load: %s", e.msg);
  CHECK(ds.h == 4 && ds.w == 4, "resized shape");
  double w4[4][2] = {{1, 0}, {.75, .25}, {.25, .75}, {0, 1}};
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++) {
      double v = 0;
      for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++)
          v += w4[i][a] * w4[j][b] * up[a * 2 + b] / 255.0;
      CHECK_NEAR(ds.x[i * 4 + j], 2 * v - 1, 1e-5, "upsampled pixel");
    }
  pit_dataset_release(&ds);

  unsigned char dn[16];
  for (int p = 0; p < 16; p++)
    dn[p] = (unsigned char)(p * 17);
  write_idx(d, "train-images-idx3-ubyte.gz", 1, 0x803, 1, 4, 4, dn, 16);
  o.image_size = 2;
  CHECK(pit_dataset_load(&ds, &o, &e) == 0, "load: %s", e.msg);
  double w2[2][4] = {{3 / 7., 3 / 7., 1 / 7., 0}, {0, 1 / 7., 3 / 7., 3 / 7.}};
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++) {
      double v = 0;
      for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++)
          v += w2[i][a] * w2[j][b] * dn[a * 4 + b] / 255.0;
      CHECK_NEAR(ds.x[i * 2 + j], 2 * v - 1, 1e-5, "downsampled pixel");
    }
  float grey[4];
  memcpy(grey, ds.x, sizeof grey);
  pit_dataset_release(&ds);
  o.channels = 3; /* resized grey copied to every channel */
  CHECK(pit_dataset_load(&ds, &o, &e) == 0 && ds.c == 3, "load 3 channels: %s", e.msg);
  for (int ch = 0; ch < 3; ch++)
    CHECK(!memcmp(ds.x + ch * 4, grey, sizeof grey), "channel %d = resized grey", ch);
  pit_dataset_release(&ds);
}

/* Byte storage: native-size, native-channel samples keep the file's bytes and gather
 * converts them bit-identically to the float path, for both normalisations; resized or
 * channel-converted samples keep floats. */
static void test_bytes(void) {
  const char *d = subdir("bytes");
  unsigned char *img = malloc(300 * 28 * 28), lab[300];
  for (int i = 0; i < 300 * 28 * 28; i++) /* every byte value, in an irregular order */
    img[i] = (unsigned char)(i * 7919 % 256);
  for (int i = 0; i < 300; i++)
    lab[i] = (unsigned char)(i * 7 % 10);
  write_idx(d, "train-images-idx3-ubyte.gz", 1, 0x803, 300, 28, 28, img, 300 * 28 * 28);
  write_idx(d, "train-labels-idx1-ubyte.gz", 1, 0x801, 300, 0, 0, lab, 300);
  free(img);
  struct pit_data_opts o = {.kind = "fashion-mnist", .dir = d, .train = 1};
  check_storage_cases(o, 1, 32);
  o.kind = "mnist";
  check_storage_cases(o, 1, 20);

  /* the values: exactly the float expression of the normalisation */
  struct pit_dataset ds;
  struct pit_err e;
  struct pit_data_opts g = {.kind = "fashion-mnist", .dir = d, .train = 1, .limit = 1};
  CHECK(pit_dataset_load(&ds, &g, &e) == 0 && ds.x8, "load: %s", e.msg);
  float *X = gather_all(&ds, NULL);
  int bad = 0;
  for (int p = 0; X && p < 784; p++)
    bad += X[p] != ((float)(p * 7919 % 256) / 255.0f - 0.2860f) / 0.3530f;
  CHECK(X && bad == 0, "%d values differ from (v/255 - mean)/std", bad);
  free(X);
  pit_dataset_release(&ds);
}

/* The image file inflated whole (libdeflate: at least half of it wanted) and
 * through the zlib stream (less wanted; or a file of two gzip members, which
 * the whole path does not take) give the same bytes; so does the float path
 * (a resize) over the whole buffer against the stream. */
static void test_inflate_paths(void) {
  const uint32_t n = 300;
  const size_t per = 28 * 28;
  unsigned char *img = malloc(n * per), lab[300];
  for (size_t i = 0; i < n * per; i++)
    img[i] = (unsigned char)(i * 7919 % 251);
  for (uint32_t i = 0; i < n; i++)
    lab[i] = (unsigned char)(i % 10);
  const char *one = subdir("inflate1"), *two = subdir("inflate2");
  write_idx(one, "train-images-idx3-ubyte.gz", 1, 0x803, n, 28, 28, img, n * per);
  write_idx(one, "train-labels-idx1-ubyte.gz", 1, 0x801, n, 0, 0, lab, n);
  write_idx(two, "train-images-idx3-ubyte.gz", 1, 0x803, n, 28, 28, img, 100 * per);
  write_idx(two, "train-labels-idx1-ubyte.gz", 1, 0x801, n, 0, 0, lab, n);
  char path[1024];
  snprintf(path, sizeof path, "%s/train-images-idx3-ubyte.gz", two);
  gzFile g = gzopen(path, "ab"); /* a second gzip member: the other 200 images */
  gzwrite(g, img + 100 * per, (unsigned)(200 * per));
  gzclose(g);
  const struct {
    const char *d;
    int64_t limit;
    const char *what;
  } cases[] = {{one, 0, "one member, all (whole)"},     {one, 150, "one member, half (whole)"},
               {one, 149, "one member, 149 (stream)"}, {two, 0, "two members, all (stream)"},
               {two, 200, "two members, 200 (stream)"}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    struct pit_data_opts o = {.kind = "fashion-mnist", .dir = cases[k].d, .train = 1, .limit = cases[k].limit};
    struct pit_dataset ds;
    struct pit_err e;
    int64_t want = cases[k].limit ? cases[k].limit : n;
    CHECK(pit_dataset_load(&ds, &o, &e) == 0 && ds.x8 && ds.n == want, "%s: %s", cases[k].what, e.msg);
    CHECK(ds.x8 && memcmp(ds.x8, img, (size_t)want * per) == 0 && ds.y[want - 1] == lab[want - 1],
          "%s: bytes differ from the file's", cases[k].what);
    pit_dataset_release(&ds);
  }
  /* the float path (resized to 14): whole and stream agree */
  float *X[2] = {NULL, NULL};
  for (int k = 0; k < 2; k++) {
    struct pit_data_opts o = {.kind = "fashion-mnist", .dir = one, .train = 1, .image_size = 14,
                              .limit = k ? 149 : 0};
    struct pit_dataset ds;
    struct pit_err e;
    CHECK(pit_dataset_load(&ds, &o, &e) == 0 && ds.x && !ds.x8, "resized load: %s", e.msg);
    X[k] = gather_all(&ds, NULL);
    pit_dataset_release(&ds);
  }
  CHECK(X[0] && X[1] && memcmp(X[0], X[1], sizeof(float) * 149 * 14 * 14) == 0,
        "resized: whole and stream differ");
  free(X[0]);
  free(X[1]);
  free(img);
}

static void test_raw_fallback(void) {
  const char *d = subdir("raw");
  unsigned char img[8] = {0, 255, 0, 255, 255, 0, 255, 0}, lab[2] = {7, 9};
  write_idx(d, "train-images-idx3-ubyte", 0, 0x803, 2, 2, 2, img, 8);
  write_idx(d, "train-labels-idx1-ubyte", 0, 0x801, 2, 0, 0, lab, 2);
  struct pit_data_opts o = {.kind = "fashion-mnist", .dir = d, .train = 1, .norm = PIT_NORM_GAN};
  struct pit_dataset ds;
  struct pit_err e;
  CHECK(pit_dataset_load(&ds, &o, &e) == 0, "uncompressed files: %s", e.msg);
  float *X = gather_all(&ds, NULL);
  CHECK(X && ds.n == 2 && ds.y[1] == 9 && X[1] == 1.0f && X[4] == 1.0f && X[5] == -1.0f,
        "uncompressed values");
  free(X);
  pit_dataset_release(&ds);
}

static void test_bad(void) {
  unsigned char img[5 * 16] = {0}, lab[5] = {1, 2, 3, 4, 5};
  const char *d = subdir("missing");
  expect_fail(d, "missing/train-labels-idx1-ubyte.gz", PIT_ENOTFOUND, "missing directory files");
  write_idx(d, "train-labels-idx1-ubyte.gz", 1, 0x801, 5, 0, 0, lab, 5);
  expect_fail(d, "missing/train-images-idx3-ubyte.gz", PIT_ENOTFOUND, "missing image file");

  d = subdir("short");
  write_idx(d, "train-labels-idx1-ubyte.gz", 1, 0x801, 5, 0, 0, lab, 5);
  write_idx(d, "train-images-idx3-ubyte.gz", 1, 0x803, 5, 4, 4, img, 3 * 16);
  expect_fail(d, "short/train-images-idx3-ubyte.gz", PIT_EFORMAT, "fewer bytes than header");

  d = subdir("trunc");
  unsigned char *big = malloc(200 * 28 * 28);
  for (int i = 0; i < 200 * 28 * 28; i++)
    big[i] = (unsigned char)(i * 7919 % 251);
  unsigned char lab200[200] = {0};
  write_idx(d, "train-labels-idx1-ubyte.gz", 1, 0x801, 200, 0, 0, lab200, 200);
  write_idx(d, "train-images-idx3-ubyte.gz", 1, 0x803, 200, 28, 28, big, 200 * 28 * 28);
  free(big);
  char path[1024];
  struct stat st;
  snprintf(path, sizeof path, "%s/train-images-idx3-ubyte.gz", d);
  stat(path, &st);
  CHECK(truncate(path, st.st_size / 2) == 0, "truncate");
  expect_fail(d, "trunc/train-images-idx3-ubyte.gz", PIT_EFORMAT, "truncated gzip");

  d = subdir("magic");
  write_idx(d, "train-labels-idx1-ubyte.gz", 1, 0x801, 5, 0, 0, lab, 5);
  write_idx(d, "train-images-idx3-ubyte.gz", 1, 0x802, 5, 4, 4, img, 5 * 16);
  expect_fail(d, "magic/train-images-idx3-ubyte.gz", PIT_EFORMAT, "wrong image magic");
  write_idx(d, "train-labels-idx1-ubyte.gz", 1, 0x803, 5, 4, 4, img, 5 * 16);
  expect_fail(d, "magic/train-labels-idx1-ubyte.gz", PIT_EFORMAT, "wrong label magic");

  d = subdir("count");
  write_idx(d, "train-labels-idx1-ubyte.gz", 1, 0x801, 4, 0, 0, lab, 4);
  write_idx(d, "train-images-idx3-ubyte.gz", 1, 0x803, 5, 4, 4, img, 5 * 16);
  expect_fail(d, "count/train-images-idx3-ubyte.gz", PIT_EFORMAT, "count mismatch (images)");
  expect_fail(d, "count/train-labels-idx1-ubyte.gz", PIT_EFORMAT, "count mismatch (labels)");

  d = subdir("label");
  unsigned char badlab[5] = {1, 2, 10, 4, 5};
  write_idx(d, "train-labels-idx1-ubyte.gz", 1, 0x801, 5, 0, 0, badlab, 5);
  write_idx(d, "train-images-idx3-ubyte.gz", 1, 0x803, 5, 4, 4, img, 5 * 16);
  expect_fail(d, "label/train-labels-idx1-ubyte.gz", PIT_EFORMAT, "label out of range");

  d = subdir("dims");
  write_idx(d, "train-labels-idx1-ubyte.gz", 1, 0x801, 5, 0, 0, lab, 5);
  write_idx(d, "train-images-idx3-ubyte.gz", 1, 0x803, 5, 0, 4, img, 0);
  expect_fail(d, "dims/train-images-idx3-ubyte.gz", PIT_EFORMAT, "zero image height");

  d = subdir("garbage"); /* not gzip, not IDX: read transparently, too short */
  write_idx(d, "train-images-idx3-ubyte.gz", 1, 0x803, 5, 4, 4, img, 5 * 16);
  snprintf(path, sizeof path, "%s/train-labels-idx1-ubyte.gz", d);
  FILE *f = fopen(path, "wb");
  fputs("hello", f);
  fclose(f);
  expect_fail(d, "garbage/train-labels-idx1-ubyte.gz", PIT_EFORMAT, "5-byte garbage file");
}

static void test_bad_options(void) {
  struct {
    struct pit_data_opts o;
    const char *needle;
  } cases[] = {
      {{.kind = "fashion-mnist", .image_size = -1}, "image size -1"},
      {{.kind = "fashion-mnist", .channels = 2}, "channels"},
      {{.kind = "fashion-mnist", .limit = -5}, "limit"},
      {{.kind = "synthetic", .synth_n = -1}, "synthetic sample count"},
      {{.kind = "synthetic", .synth_classes = -2}, "classes"},
      {{.kind = "imagenet"}, "unknown dataset 'imagenet'"},
      {{.kind = NULL}, "no dataset"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    struct pit_dataset ds;
    struct pit_err e;
    int rc = pit_dataset_load(&ds, &cases[i].o, &e);
    CHECK(rc == PIT_EARG, "case %zu: rc %d", i, rc);
    CHECK(strstr(e.msg, cases[i].needle) != NULL, "case %zu: '%s' lacks '%s'", i, e.msg,
          cases[i].needle);
  }
}

int main(void) {
  snprintf(dir, sizeof dir, "%s", check_tmpdir());
  test_values();
  test_resize();
  test_bytes();
  test_inflate_paths();
  test_raw_fallback();
  test_bad();
  test_bad_options();
  return check_done();
}
