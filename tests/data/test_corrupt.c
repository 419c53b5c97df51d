/* test_corrupt.c — never crash on any input: good fixtures of every format
 * (IDX gzip and raw, CIFAR-10 binary, PNG, JPEG) are corrupted many times over
 * (random bytes overwritten, or cut short), and each load must either succeed
 * or fail with a negative code and a message naming the fixture's directory,
 * leaving the dataset empty. Meant to be run under ASan/UBSan too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include <jpeglib.h> /* after stdio.h */
#include <png.h>

#include "check.h"
#include "pitstop/data.h"

static uint64_t rng = 88172645463325252ULL;
static uint64_t next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static unsigned char *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  fseek(f, 0, SEEK_END);
  *n = (size_t)ftell(f);
  rewind(f);
  unsigned char *b = malloc(*n);
  if (fread(b, 1, *n, f) != *n)
    *n = 0;
  fclose(f);
  return b;
}

static void spill(const char *path, const unsigned char *b, size_t n) {
  FILE *f = fopen(path, "wb");
  fwrite(b, 1, n, f);
  fclose(f);
}

static int failures_named = 0, loads_ok = 0, loads_failed = 0;

/* Corrupts `file` (a copy of its good bytes) `rounds` times and loads with o. */
static void hammer(const char *dir, const char *file, const struct pit_data_opts *o, int rounds) {
  char path[1200];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  size_t n;
  unsigned char *good = slurp(path, &n), *bad = malloc(n + 1);
  for (int r = 0; r < rounds; r++) {
    memcpy(bad, good, n);
    size_t len = n;
    if (next() % 4 == 0) {
      len = (size_t)(next() % n);
    } else {
      int k = 1 + (int)(next() % 8);
      for (int j = 0; j < k; j++) {
        size_t at = (size_t)(next() % (n < 64 || next() % 2 ? n : 64)); /* headers often */
        bad[at] = (unsigned char)next();
      }
    }
    spill(path, bad, len);
    struct pit_dataset ds;
    struct pit_err e;
    int rc = pit_dataset_load(&ds, o, &e);
    if (rc == 0) {
      loads_ok++;
      pit_dataset_release(&ds);
      continue;
    }
    loads_failed++;
    if (rc < 0 && strstr(e.msg, dir) && !ds.x && !ds.y)
      failures_named++;
    else
      CHECK(0, "%s round %d: rc %d message '%s'", file, r, rc, e.msg);
  }
  spill(path, good, n);
  free(good);
  free(bad);
}

static void write_idx(const char *d, const char *name, int gz, uint32_t magic, uint32_t cnt,
                      uint32_t side, const unsigned char *data, size_t len) {
  char path[1200];
  unsigned char hdr[16] = {0, 0, (unsigned char)(magic >> 8), (unsigned char)magic,
                           0, 0, 0, (unsigned char)cnt,
                           0, 0, 0, (unsigned char)side,
                           0, 0, 0, (unsigned char)side};
  size_t hl = magic == 0x801 ? 8 : 16;
  snprintf(path, sizeof path, "%s/%s%s", d, name, gz ? ".gz" : "");
  gzFile g = gzopen(path, gz ? "wb" : "wbT"); /* T: plain, no compression */
  gzwrite(g, hdr, (unsigned)hl);
  gzwrite(g, data, (unsigned)len);
  gzclose(g);
}

static int write_small_jpeg(const char *path) {
  FILE *f = fopen(path, "wb");
  if (!f)
    return -1;
  struct jpeg_compress_struct c;
  struct jpeg_error_mgr err;
  c.err = jpeg_std_error(&err);
  jpeg_create_compress(&c);
  jpeg_stdio_dest(&c, f);
  c.image_width = c.image_height = 16;
  c.input_components = 3;
  c.in_color_space = JCS_RGB;
  jpeg_set_defaults(&c);
  jpeg_start_compress(&c, TRUE);
  unsigned char row[16 * 3];
  for (int y = 0; y < 16; y++) {
    for (int x = 0; x < 48; x++)
      row[x] = (unsigned char)(x * 5 + y * 9);
    JSAMPROW r = row;
    jpeg_write_scanlines(&c, &r, 1);
  }
  jpeg_finish_compress(&c);
  jpeg_destroy_compress(&c);
  fclose(f);
  return 0;
}

int main(void) {
  const char *base = check_tmpdir();
  char d[1024];
  unsigned char img[20 * 64], lab[20];
  for (int i = 0; i < 20 * 64; i++)
    img[i] = (unsigned char)(i * 13);
  for (int i = 0; i < 20; i++)
    lab[i] = (unsigned char)(i % 10);

  for (int gz = 0; gz < 2; gz++) {
    snprintf(d, sizeof d, "%s/idx%d", base, gz);
    mkdir(d, 0755);
    write_idx(d, "train-images-idx3-ubyte", gz, 0x803, 20, 8, img, sizeof img);
    write_idx(d, "train-labels-idx1-ubyte", gz, 0x801, 20, 0, lab, sizeof lab);
    struct pit_data_opts o = {.kind = "fashion-mnist", .dir = d, .train = 1, .image_size = 12};
    hammer(d, gz ? "train-images-idx3-ubyte.gz" : "train-images-idx3-ubyte", &o, 150);
    hammer(d, gz ? "train-labels-idx1-ubyte.gz" : "train-labels-idx1-ubyte", &o, 150);
  }

  snprintf(d, sizeof d, "%s/cifar", base);
  mkdir(d, 0755);
  unsigned char rec[3 * 3073];
  for (size_t i = 0; i < sizeof rec; i++)
    rec[i] = (unsigned char)(i % 3073 == 0 ? i / 3073 : i * 7);
  char path[1200];
  snprintf(path, sizeof path, "%s/test_batch.bin", d);
  spill(path, rec, sizeof rec);
  struct pit_data_opts oc = {.kind = "cifar10", .dir = d, .train = 0};
  hammer(d, "test_batch.bin", &oc, 150);

  snprintf(d, sizeof d, "%s/png", base);
  mkdir(d, 0755);
  png_image im;
  memset(&im, 0, sizeof im);
  im.version = PNG_IMAGE_VERSION;
  im.width = im.height = 16;
  im.format = PNG_FORMAT_RGB;
  unsigned char px[16 * 16 * 3];
  for (size_t i = 0; i < sizeof px; i++)
    px[i] = (unsigned char)(i * 31 % 256);
  snprintf(path, sizeof path, "%s/a.png", d);
  CHECK(png_image_write_to_file(&im, path, 0, px, 0, NULL), "write png");
  struct pit_data_opts oi = {.kind = "images", .dir = d, .image_size = 8};
  hammer(d, "a.png", &oi, 300);

  snprintf(d, sizeof d, "%s/jpg", base);
  mkdir(d, 0755);
  snprintf(path, sizeof path, "%s/a.jpg", d);
  CHECK(write_small_jpeg(path) == 0, "write jpeg");
  oi.dir = d;
  hammer(d, "a.jpg", &oi, 300);

  printf("%d corrupted loads succeeded, %d failed, %d of those with a message naming the "
         "file's directory\n", loads_ok, loads_failed, failures_named);
  CHECK(loads_failed > 500, "most corruptions are detected (%d)", loads_failed);
  return check_done();
}

