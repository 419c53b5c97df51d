/* bench/store-insert — inserts N iteration records (2 ranks each, default one
 * million) into a fresh store through pit_store_add and reports the time and
 * records per second, measured with pit_now() around open → add × N → close.
 *
 * usage: bench-store-insert [--records N] [--batch N] [--repeat R] [--dir DIR]
 * Each repetition uses a new database file (removed afterwards). */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pitstop/store.h"

static void rm_db(const char *path) {
  char p[1100];
  unlink(path);
  snprintf(p, sizeof p, "%s-wal", path);
  unlink(p);
  snprintf(p, sizeof p, "%s-shm", path);
  unlink(p);
}

int main(int argc, char **argv) {
  long n = 1000000, batch = PIT_STORE_DEFAULT_BATCH;
  int repeat = 3;
  const char *dir = "/tmp";
  static const struct option opts[] = {{"records", required_argument, 0, 'n'},
                                       {"batch", required_argument, 0, 'b'},
                                       {"repeat", required_argument, 0, 'r'},
                                       {"dir", required_argument, 0, 'd'},
                                       {0, 0, 0, 0}};
  int o;
  while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    switch (o) {
    case 'n': n = atol(optarg); break;
    case 'b': batch = atol(optarg); break;
    case 'r': repeat = atoi(optarg); break;
    case 'd': dir = optarg; break;
    default:
      fprintf(stderr, "usage: %s [--records N] [--batch N] [--repeat R] [--dir DIR]\n", argv[0]);
      return 2;
    }
  }
  if (n <= 0 || repeat <= 0) {
    fprintf(stderr, "bench-store-insert: --records and --repeat must be positive\n");
    return 2;
  }
  char path[1024];
  snprintf(path, sizeof path, "%s/pit-bench-store-%d.db", dir, (int)getpid());
  struct pit_record r;
  pit_record_init(&r);
  r.type = PIT_REC_ITER;
  snprintf(r.run, sizeof r.run, "bench");
  r.gen = 0;
  r.batch = 64;
  pit_record_set_ranks(&r, 2);
  printf("inserting %ld iteration records (2 ranks each), %ld per transaction, into %s\n", n, batch, path);
  double best = INFINITY;
  for (int rep = 0; rep < repeat; rep++) {
    rm_db(path);
    struct pit_err e = {0};
    struct pit_store *s;
    double t0 = pit_now();
    if (pit_store_open(&s, path, &e)) {
      fprintf(stderr, "bench-store-insert: %s\n", e.msg);
      return 1;
    }
    pit_store_set_batch(s, batch);
    for (long i = 0; i < n; i++) {
      r.step = i;
      r.epoch = i / 1000;
      r.iter = i % 1000;
      r.t = 0.01 * (double)i;
      r.step_s = 0.01 + 1e-6 * (double)(i % 97);
      r.data_s = 0.0002;
      r.compute_s[0] = 0.008 + 1e-6 * (double)(i % 13);
      r.compute_s[1] = 0.007 + 1e-6 * (double)(i % 17);
      r.wait_s[0] = 0.0001;
      r.wait_s[1] = 0.001;
      r.loss = 2.3 / (1.0 + 1e-4 * (double)i);
      if (pit_store_add(s, &r, &e)) {
        fprintf(stderr, "bench-store-insert: %s\n", e.msg);
        pit_store_abort(s);
        return 1;
      }
    }
    if (pit_store_close(s, &e)) {
      fprintf(stderr, "bench-store-insert: %s\n", e.msg);
      return 1;
    }
    double dt = pit_now() - t0;
    if (dt < best)
      best = dt;
    printf("run %d: %.3f s, %.0f records/s\n", rep + 1, dt, (double)n / dt);
  }
  rm_db(path);
  printf("best of %d: %.3f s for %ld records, %.0f records/s (goal: 1e6 records < 2 s)\n", repeat, best, n,
         (double)n / best);
  pit_record_release(&r);
  return 0;
}
