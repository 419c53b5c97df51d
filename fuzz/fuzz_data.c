/* fuzz_data.c — libFuzzer harness for the data readers (src/data): the input
 * becomes one file of a dataset directory, the rest of which is valid, and the
 * dataset is loaded. Byte 0 picks the file: 0 IDX images, 1 IDX labels (both
 * stored raw, as gzread reads them transparently), 2 the same gzip-compressed,
 * 3 CIFAR-10 test_batch.bin, 4 an image file (PNG or JPEG, by content). Byte 1
 * picks image_size (0..15) and channels. Any outcome but a crash, a sanitizer
 * report, or a failure without a message is fine. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "pitstop/data.h"

static char dir[256];

static void put(const char *name, const uint8_t *d, size_t n, int gz) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  if (gz) {
    gzFile g = gzopen(path, "wb1");
    if (n)
      gzwrite(g, d, (unsigned)n);
    gzclose(g);
    return;
  }
  FILE *f = fopen(path, "wb");
  if (n)
    fwrite(d, 1, n, f);
  fclose(f);
}

static void clear(void) {
  const char *names[] = {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                         "train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
                         "test_batch.bin", "a.img.png"};
  char path[512];
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    unlink(path);
  }
}

static void cleanup(void) { /* at exit: the scratch directory goes */
  clear();
  rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!dir[0]) {
    snprintf(dir, sizeof dir, "/tmp/pit-fuzz-data-XXXXXX");
    if (!mkdtemp(dir))
      abort();
    atexit(cleanup);
  }
  if (size < 2)
    return 0;
  int mode = data[0] % 5, opt = data[1];
  data += 2;
  size -= 2;
  clear();
  static const uint8_t img_hdr[16] = {0, 0, 8, 3, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 4};
  static const uint8_t lab[12] = {0, 0, 8, 1, 0, 0, 0, 4, 1, 2, 3, 9};
  uint8_t img[16 + 64];
  memcpy(img, img_hdr, 16);
  for (int i = 0; i < 64; i++)
    img[16 + i] = (uint8_t)(i * 4);
  struct pit_data_opts o = {.dir = dir, .train = 1, .image_size = opt & 15,
                            .channels = (opt >> 4) % 3 == 2 ? 3 : (opt >> 4) % 3};
  switch (mode) {
  case 0:
  case 1:
  case 2: {
    int gz = mode == 2, fuzz_labels = mode == 2 ? (opt >> 7) : mode;
    const char *iname = gz ? "train-images-idx3-ubyte.gz" : "train-images-idx3-ubyte";
    const char *lname = gz ? "train-labels-idx1-ubyte.gz" : "train-labels-idx1-ubyte";
    put(iname, fuzz_labels ? img : data, fuzz_labels ? sizeof img : size, gz);
    put(lname, fuzz_labels ? data : lab, fuzz_labels ? size : sizeof lab, gz);
    o.kind = "fashion-mnist";
    break;
  }
  case 3:
    o.kind = "cifar10";
    o.train = 0;
    put("test_batch.bin", data, size, 0);
    break;
  default:
    o.kind = "images";
    put("a.img.png", data, size, 0);
    break;
  }
  struct pit_dataset ds;
  struct pit_err e;
  int rc = pit_dataset_load(&ds, &o, &e);
  if (rc == 0) {
    if (ds.n > 0) {
      int64_t idx[1] = {ds.n - 1};
      float *x = malloc(sizeof(float) * (size_t)ds.c * ds.h * ds.w);
      int32_t y[1];
      if (pit_dataset_gather(&ds, idx, 1, x, y) != 0)
        abort();
      free(x);
    }
    pit_dataset_release(&ds);
  } else if (rc > 0 || !e.msg[0] || ds.x || ds.x8 || ds.y) {
    abort();
  }
  return 0;
}
