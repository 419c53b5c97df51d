/* test_images.c — image-folder reader on PNG and JPEG files written here with
 * libpng/libjpeg: recursive listing sorted by path (non-images and dot-files
 * ignored), decoded values, grey PNGs, channel conversion, shorter-side resize +
 * centre crop, and bad input (mixed sizes, empty folder, undecodable or
 * truncated files, missing folder) naming the file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jpeglib.h>
#include <png.h>

#include "check.h"
#include "pitstop/data.h"

static char base[512];

static const char *path_of(const char *rel) {
  static char p[1024];
  snprintf(p, sizeof p, "%s/%s", base, rel);
  return p;
}

static void write_png(const char *rel, int w, int h, int fmt, const unsigned char *px) {
  png_image im;
  memset(&im, 0, sizeof im);
  im.version = PNG_IMAGE_VERSION;
  im.width = (png_uint_32)w;
  im.height = (png_uint_32)h;
  im.format = (png_uint_32)fmt;
  CHECK(png_image_write_to_file(&im, path_of(rel), 0, px, 0, NULL), "write %s", rel);
}

static void write_jpeg(const char *rel, int w, int h, const unsigned char *rgb) {
  FILE *f = fopen(path_of(rel), "wb");
  struct jpeg_compress_struct c;
  struct jpeg_error_mgr err;
  c.err = jpeg_std_error(&err);
  jpeg_create_compress(&c);
  jpeg_stdio_dest(&c, f);
  c.image_width = (JDIMENSION)w;
  c.image_height = (JDIMENSION)h;
  c.input_components = 3;
  c.in_color_space = JCS_RGB;
  jpeg_set_defaults(&c);
  jpeg_set_quality(&c, 100, TRUE);
  jpeg_start_compress(&c, TRUE);
  for (int y = 0; y < h; y++) {
    JSAMPROW row = (JSAMPROW)(rgb + (size_t)y * w * 3);
    jpeg_write_scanlines(&c, &row, 1);
  }
  jpeg_finish_compress(&c);
  jpeg_destroy_compress(&c);
  fclose(f);
}

static void write_text(const char *rel, const char *s) {
  FILE *f = fopen(path_of(rel), "wb");
  fputs(s, f);
  fclose(f);
}

static int load(struct pit_dataset *ds, const char *rel, int size, int channels,
                struct pit_err *e) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s", path_of(rel));
  struct pit_data_opts o = {.kind = "images", .dir = dir, .image_size = size,
                            .channels = channels, .norm = PIT_NORM_GAN};
  return pit_dataset_load(ds, &o, e);
}

static void expect_fail(const char *rel, int size, const char *needle, const char *what) {
  struct pit_dataset ds;
  struct pit_err e;
  int rc = load(&ds, rel, size, 0, &e);
  CHECK(rc < 0 && strstr(e.msg, needle), "%s: rc %d '%s' lacks '%s'", what, rc, e.msg, needle);
  CHECK(ds.x == NULL && ds.n == 0, "%s: dataset not empty", what);
  printf("%-26s -> %s\n", what, e.msg);
}

static double g(unsigned v) { return v / 127.5 - 1.0; }

int main(void) {
  snprintf(base, sizeof base, "%s", check_tmpdir());
  struct pit_dataset ds;
  struct pit_err e;

  /* good/a/x.png (RGB gradient), good/b.jpg (uniform), good/c.png (grey),
   * good/notes.txt and good/.hidden.png ignored. */
  mkdir(path_of("good"), 0755);
  mkdir(path_of("good/a"), 0755);
  unsigned char rgb[4 * 4 * 3], grey[16], uni[8 * 8 * 3];
  for (int p = 0; p < 16; p++) {
    rgb[p * 3] = (unsigned char)(p * 16);
    rgb[p * 3 + 1] = (unsigned char)(255 - p * 16);
    rgb[p * 3 + 2] = 7;
    grey[p] = (unsigned char)(p * 10);
  }
  for (int p = 0; p < 64; p++) {
    uni[p * 3] = 200;
    uni[p * 3 + 1] = 100;
    uni[p * 3 + 2] = 50;
  }
  write_png("good/a/x.png", 4, 4, PNG_FORMAT_RGB, rgb);
  write_jpeg("good/b.jpg", 4, 4, uni);
  write_png("good/c.PNG", 4, 4, PNG_FORMAT_GRAY, grey);
  write_text("good/notes.txt", "not an image");
  write_text("good/.hidden.png", "not an image either");
  CHECK(load(&ds, "good", 0, 0, &e) == 0, "load: %s", e.msg);
  CHECK(ds.n == 3 && ds.c == 3 && ds.h == 4 && ds.w == 4 && ds.classes == 0, "shape %lld %dx%dx%d",
        (long long)ds.n, ds.c, ds.h, ds.w);
  CHECK(!strcmp(ds.name, "images"), "name");
  int bad = 0;
  for (int p = 0; p < 16; p++) {
    for (int ch = 0; ch < 3; ch++) {
      if (fabs(ds.x[ch * 16 + p] - g(rgb[p * 3 + ch])) > 1e-5) /* sample 0: a/x.png */
        bad++;
      if (fabs(ds.x[48 * 1 + ch * 16 + p] - g(uni[ch])) > 3 / 127.5) /* sample 1: b.jpg */
        bad++;
      if (fabs(ds.x[48 * 2 + ch * 16 + p] - g(grey[p])) > 1e-5) /* sample 2: c.PNG */
        bad++;
    }
  }
  CHECK(bad == 0, "%d pixels differ (order a/x.png, b.jpg, c.PNG)", bad);
  CHECK(ds.y[0] == -1 && ds.y[2] == -1, "unlabelled");
  pit_dataset_release(&ds);

  CHECK(load(&ds, "good", 0, 1, &e) == 0 && ds.c == 1, "grey: %s", e.msg);
  double luma = (0.299 * rgb[15] + 0.587 * rgb[16] + 0.114 * rgb[17]) / 255.0;
  CHECK_NEAR(ds.x[5], 2 * luma - 1, 1e-5, "luma of pixel 5");
  pit_dataset_release(&ds);

  /* Resize 6×4 (w×h) to 2: shorter side 4 → 2, width 6 → 3, crop columns 0..1
   * (left = round-half-even(0.5) = 0). Scale 2 triangle weights: output column 0
   * takes sources 0..2 with weights 3,3,1 (/7); column 1 sources 1..4 with
   * .25,.75,.75,.25 (/2). Rows are constant. */
  mkdir(path_of("wide"), 0755);
  unsigned char wide[4 * 6];
  for (int y = 0; y < 4; y++)
    for (int x = 0; x < 6; x++)
      wide[y * 6 + x] = (unsigned char)(x * 40);
  write_png("wide/w.png", 6, 4, PNG_FORMAT_GRAY, wide);
  CHECK(load(&ds, "wide", 2, 1, &e) == 0, "load wide: %s", e.msg);
  CHECK(ds.h == 2 && ds.w == 2 && ds.c == 1, "resized shape");
  double c0 = (3 * 0 + 3 * 40 + 80) / 7.0;                       /* sources 0..2, weights 3,3,1 */
  double c1 = (0.25 * 40 + 0.75 * 80 + 0.75 * 120 + 0.25 * 160) / 2.0; /* sources 1..4 */
  for (int y = 0; y < 2; y++) {
    CHECK_NEAR(ds.x[y * 2 + 0], c0 / 127.5 - 1, 1e-5, "column 0");
    CHECK_NEAR(ds.x[y * 2 + 1], c1 / 127.5 - 1, 1e-5, "column 1");
  }
  pit_dataset_release(&ds);

  /* mixed sizes: fine with a size, an error without */
  mkdir(path_of("mixed"), 0755);
  write_png("mixed/1.png", 4, 4, PNG_FORMAT_RGB, rgb);
  write_png("mixed/2.png", 6, 4, PNG_FORMAT_GRAY, wide);
  CHECK(load(&ds, "mixed", 3, 0, &e) == 0 && ds.n == 2 && ds.h == 3, "mixed with size: %s", e.msg);
  pit_dataset_release(&ds);
  expect_fail("mixed", 0, "mixed/2.png", "mixed sizes, no size");

  /* bad input */
  mkdir(path_of("empty"), 0755);
  write_text("empty/readme.txt", "x");
  expect_fail("empty", 0, "empty", "no images");
  expect_fail("nonexistent", 0, "nonexistent", "missing folder");
  mkdir(path_of("garbage"), 0755);
  write_png("garbage/0.png", 4, 4, PNG_FORMAT_RGB, rgb);
  write_text("garbage/1.png", "this is not a PNG file at all");
  expect_fail("garbage", 0, "garbage/1.png", "garbage .png");
  mkdir(path_of("zero"), 0755);
  write_text("zero/z.jpg", "");
  expect_fail("zero", 0, "zero/z.jpg", "empty .jpg");

  mkdir(path_of("tjpg"), 0755);
  unsigned char big[64 * 64 * 3];
  for (int i = 0; i < 64 * 64 * 3; i++)
    big[i] = (unsigned char)(i * 7919 % 253);
  write_jpeg("tjpg/t.jpg", 64, 64, big);
  struct stat st;
  stat(path_of("tjpg/t.jpg"), &st);
  CHECK(truncate(path_of("tjpg/t.jpg"), st.st_size / 2) == 0, "truncate");
  expect_fail("tjpg", 0, "tjpg/t.jpg", "truncated JPEG");

  mkdir(path_of("tpng"), 0755);
  write_png("tpng/t.png", 64, 64, PNG_FORMAT_RGB, big);
  stat(path_of("tpng/t.png"), &st);
  CHECK(truncate(path_of("tpng/t.png"), st.st_size / 2) == 0, "truncate");
  expect_fail("tpng", 0, "tpng/t.png", "truncated PNG");
  return check_done();
}
