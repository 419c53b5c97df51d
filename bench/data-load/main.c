/* bench/data-load — times pit_dataset_load (wall, pit_now) and prints the
 * normalised mean and sd, so a reference (ref.py) can be compared side by side:
 * run.sh alternates the two and prints medians and the ratio.
 *
 * usage: bench-data-load [--data KIND] [--dir DIR] [--train 0|1] [--image-size N]
 *                        [--channels C] [--gan] [--limit N] [--gather N] [--floats]
 * --gather N: also time N single-sample gathers in batches of 64 (random order): mean
 * (gather_us) and fastest round of 16 batches (gather_best_us), per sample.
 * --floats: store normalised floats even where the dataset would keep bytes
 * (store_floats), to compare the two storages' load and gather times.
 * Prints storage=bytes|floats and the storage's size in MB (data_mb). */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pitstop/data.h"

int main(int argc, char **argv) {
  struct pit_data_opts o = {.kind = "fashion-mnist", .train = 1};
  long gather = 0;
  static const struct option opts[] = {{"data", required_argument, 0, 'k'},
                                       {"dir", required_argument, 0, 'd'},
                                       {"train", required_argument, 0, 't'},
                                       {"image-size", required_argument, 0, 's'},
                                       {"channels", required_argument, 0, 'c'},
                                       {"gan", no_argument, 0, 'g'},
                                       {"limit", required_argument, 0, 'l'},
                                       {"gather", required_argument, 0, 'G'},
                                       {"floats", no_argument, 0, 'F'},
                                       {0, 0, 0, 0}};
  int ch;
  while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    switch (ch) {
    case 'k': o.kind = optarg; break;
    case 'd': o.dir = optarg; break;
    case 't': o.train = atoi(optarg); break;
    case 's': o.image_size = atoi(optarg); break;
    case 'c': o.channels = atoi(optarg); break;
    case 'g': o.norm = PIT_NORM_GAN; break;
    case 'l': o.limit = atol(optarg); break;
    case 'G': gather = atol(optarg); break;
    case 'F': o.store_floats = 1; break;
    default:
      fprintf(stderr, "usage: see the comment at the top of bench/data-load/main.c\n");
      return 2;
    }
  }
  struct pit_dataset ds;
  struct pit_err e;
  double t0 = pit_now();
  if (pit_dataset_load(&ds, &o, &e)) {
    fprintf(stderr, "bench-data-load: %s\n", e.msg);
    return 1;
  }
  double load_s = pit_now() - t0;
  size_t per = (size_t)ds.c * ds.h * ds.w;
  double s = 0, s2 = 0, m = 0;
  if (ds.x || ds.x8) { /* every value as gather gives it, 64 samples at a time */
    float *x = malloc(sizeof(float) * per * 64);
    int64_t idx[64];
    for (int64_t i0 = 0; x && i0 < ds.n; i0 += 64) {
      int k = ds.n - i0 < 64 ? (int)(ds.n - i0) : 64;
      for (int i = 0; i < k; i++)
        idx[i] = i0 + i;
      pit_dataset_gather(&ds, idx, k, x, NULL);
      for (size_t i = 0; i < per * (size_t)k; i++) {
        s += x[i];
        s2 += (double)x[i] * x[i];
      }
      m += (double)per * k;
    }
    free(x);
  }
  double mean = m ? s / m : NAN, sd = m ? sqrt(s2 / m - mean * mean) : NAN;
  printf("pitstop %s n=%lld shape=%dx%dx%d load_s=%.4f mean=%.5f sd=%.5f storage=%s data_mb=%.1f",
         ds.name, (long long)ds.n, ds.c, ds.h, ds.w, load_s, mean, sd,
         ds.x8 ? "bytes" : ds.x ? "floats" : "none",
         (double)ds.n * per * (ds.x8 ? 1 : ds.x ? sizeof(float) : 0) / 1e6);
  if (gather > 0) { /* rounds of 16 batches: the fastest round is the least disturbed */
    float *x = malloc(sizeof(float) * per * 64);
    int32_t y[64];
    int64_t idx[64];
    uint64_t r = 12345;
    double g0 = pit_now(), best = INFINITY;
    long done = 0;
    while (done < gather) {
      double r0 = pit_now();
      for (int b = 0; b < 16; b++, done += 64) {
        for (int i = 0; i < 64; i++) {
          r = r * 6364136223846793005ULL + 1442695040888963407ULL;
          idx[i] = (int64_t)((r >> 33) % (uint64_t)ds.n);
        }
        pit_dataset_gather(&ds, idx, 64, x, y);
      }
      double dt = pit_now() - r0;
      best = dt < best ? dt : best;
    }
    printf(" gather_us=%.3f gather_best_us=%.3f", 1e6 * (pit_now() - g0) / (double)done,
           1e6 * best / (16 * 64));
    free(x);
  }
  printf("\n");
  pit_dataset_release(&ds);
  return 0;
}
