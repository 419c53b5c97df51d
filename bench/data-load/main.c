/* bench/data-load — times pit_dataset_load (wall, pit_now) and prints the
 * normalised mean and sd, so a reference (ref.py) can be compared side by side:
 * run.sh alternates the two and prints medians and the ratio.
 *
 * usage: bench-data-load [--data KIND] [--dir DIR] [--train 0|1] [--image-size N]
 *                        [--channels C] [--gan] [--limit N] [--gather N]
 * --gather N: also time N single-sample gathers in batches of 64 (random order). */
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
  if (ds.x) {
    m = (double)per * ds.n;
    for (size_t i = 0; i < (size_t)m; i++) {
      s += ds.x[i];
      s2 += (double)ds.x[i] * ds.x[i];
    }
  }
  double mean = m ? s / m : NAN, sd = m ? sqrt(s2 / m - mean * mean) : NAN;
  printf("pitstop %s n=%lld shape=%dx%dx%d load_s=%.4f mean=%.5f sd=%.5f", ds.name,
         (long long)ds.n, ds.c, ds.h, ds.w, load_s, mean, sd);
  if (gather > 0) {
    float *x = malloc(sizeof(float) * per * 64);
    int32_t y[64];
    int64_t idx[64];
    uint64_t r = 12345;
    double g0 = pit_now();
    for (long done = 0; done < gather; done += 64) {
      for (int i = 0; i < 64; i++) {
        r = r * 6364136223846793005ULL + 1442695040888963407ULL;
        idx[i] = (int64_t)((r >> 33) % (uint64_t)ds.n);
      }
      pit_dataset_gather(&ds, idx, 64, x, y);
    }
    printf(" gather_us=%.3f", 1e6 * (pit_now() - g0) / (double)((gather + 63) / 64 * 64));
    free(x);
  }
  printf("\n");
  pit_dataset_release(&ds);
  return 0;
}
