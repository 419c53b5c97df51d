/* test_collectives.c — pit_dist behaviour, alone (size 1: no MPI at all) and
 * under `mpirun -np N` (tests/dist/mpi_collectives.sh): start-up, bcast, the
 * bucketed gradient sum at bucket boundaries with and without grads_ready
 * (rank-dependent ready orders), timing exchange, checksums, small collectives,
 * and waiting (with PIT_DIST_WAIT=sleep a waiting rank leaves its CPU).
 *
 * Extra modes used by shell tests and figures (not by ctest directly):
 *   --loop            allreduce a 1M-float gradient forever (sigkill.sh)
 *   --stall           the same, but ranks >= 1 stop after one step and sleep, so
 *                     rank 0 is blocked in the reduction (sigkill.sh)
 *   --exit            the same, but ranks >= 1 exit(3) after one step without
 *                     MPI_Finalize, as `pitstop train` does on an error (sigkill.sh)
 *   --bench MIB REPS  time the blocking gradient allreduce of MIB MiB (rank 0 prints)
 *   --overlap MIB MS REPS  a stand-in backward pass of MS ms of arithmetic in 8
 *                     layers, last first, then the reduction: without grads_ready
 *                     calls and with one per layer (rank 0 prints both)
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

#include "check.h"
#include "pitstop/dist.h"

static struct pit_dist D;

/* value of gradient i on rank r: small integers, so float sums are exact */
static float gval(size_t i, int r) { return (float)((int)(i % 97) - 40) * (float)(r + 1); }

static int check_sum(const float *g, size_t n, const char *what) {
  double k = D.size * (D.size + 1) / 2.0;
  for (size_t i = 0; i < n; i++)
    if (g[i] != (float)((double)((int)(i % 97) - 40) * k)) {
      CHECK(0, "%s: n=%zu element %zu is %g, want %g", what, n, i, g[i],
            (double)((int)(i % 97) - 40) * k);
      return 0;
    }
  CHECK(1, "%s", what);
  return 1;
}

/* pattern 0: blocking; 1: ready last-to-first in uneven layers; 2: ready first-to-last;
 * 3: only some ranges ready; 4: rank-dependent (even ranks 1, odd ranks 2) */
static void run_grads(size_t n, int pattern, const char *what) {
  float *g = malloc((n ? n : 1) * sizeof *g);
  double *ac = calloc((size_t)D.size, sizeof *ac), *aw = calloc((size_t)D.size, sizeof *aw);
  struct pit_err e = {0};
  for (size_t i = 0; i < n; i++)
    g[i] = gval(i, D.rank);
  if (pattern == 4)
    pattern = D.rank % 2 ? 2 : 1;
  int rc;
  double compute = 1.0 + 0.25 * D.rank;
  if (pattern == 0) {
    rc = pit_dist_allreduce_grads(&D, g, n, compute, ac, aw, &e);
  } else {
    rc = pit_dist_grads_begin(&D, g, n, &e);
    CHECK(rc == 0, "%s: begin: %s", what, e.msg);
    static const size_t layer[] = {7, 300, 1, 64, 999, 2, 1500};
    size_t k = 0;
    if (pattern == 1 || pattern == 3) {
      size_t hi = n;
      while (hi > 0 && rc == 0) {
        size_t len = layer[k++ % 7];
        if (len > hi)
          len = hi;
        if (pattern == 1 || k % 2)
          rc = pit_dist_grads_ready(&D, hi - len, len, &e);
        hi -= len;
      }
    } else {
      size_t lo = 0;
      while (lo < n && rc == 0) {
        size_t len = layer[k++ % 7];
        if (len > n - lo)
          len = n - lo;
        rc = pit_dist_grads_ready(&D, lo, len, &e);
        lo += len;
      }
    }
    CHECK(rc == 0, "%s: ready: %s", what, e.msg);
    rc = pit_dist_grads_end(&D, compute, ac, aw, &e);
  }
  CHECK(rc == 0, "%s: reduction: %s", what, e.msg);
  check_sum(g, n, what);
  for (int r = 0; r < D.size; r++)
    CHECK(ac[r] == 1.0 + 0.25 * r, "%s: all_compute[%d] = %g", what, r, ac[r]);
  free(g);
  free(ac);
  free(aw);
}

static void test_grads(void) {
  struct pit_err e = {0};
  const size_t B = 1000;  /* floats per bucket */
  CHECK(pit_dist_set_bucket_bytes(&D, B * sizeof(float), &e) == 0, "set bucket: %s", e.msg);
  static const size_t sizes[] = {0, 1, 999, 1000, 1001, 2000, 2500, 7003};
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
    for (int p = 0; p <= 4; p++) {
      char what[64];
      snprintf(what, sizeof what, "grads n=%zu pattern %d", sizes[s], p);
      run_grads(sizes[s], p, what);
    }
  /* one bucket bigger than everything; default-sized buckets */
  CHECK(pit_dist_set_bucket_bytes(&D, 4u << 20, &e) == 0, "set bucket: %s", e.msg);
  run_grads(3000000, 1, "grads 3M floats, 4 MiB buckets, ready");
  run_grads(3000000, 0, "grads 3M floats, 4 MiB buckets, blocking");
  CHECK(pit_dist_set_bucket_bytes(&D, 2, &e) == PIT_EARG, "bucket below one float accepted");
}

static void test_timings(void) {
  struct pit_err e = {0};
  size_t n = 5000;
  float *g = calloc(n, sizeof *g);
  double *ac = calloc((size_t)D.size, sizeof *ac), *aw = calloc((size_t)D.size, sizeof *aw);
  double *prev = calloc((size_t)D.size, sizeof *prev);
  /* the first all_wait carries the previous reduction's waits (test_grads') */
  CHECK(pit_dist_allgather_last_wait(&D, prev, &e) == 0, "gather waits: %s", e.msg);
  /* make the last rank slow so the others wait */
  double most = 0;
  for (int step = 0; step < 3; step++) {
    CHECK(pit_dist_grads_begin(&D, g, n, &e) == 0, "begin: %s", e.msg);
    if (D.rank == D.size - 1 && D.size > 1)
      usleep(20000);
    CHECK(pit_dist_grads_ready(&D, 0, n, &e) == 0, "ready: %s", e.msg);
    double compute = 0.5 * (step + 1) + D.rank;
    CHECK(pit_dist_grads_end(&D, compute, ac, aw, &e) == 0, "end: %s", e.msg);
    for (int r = 0; r < D.size; r++) {
      CHECK(ac[r] == 0.5 * (step + 1) + r, "step %d all_compute[%d] = %g", step, r, ac[r]);
      CHECK(aw[r] == prev[r], "step %d all_wait[%d] = %.9g, previous step's wait %.9g", step,
              r, aw[r], prev[r]);
    }
    double own = pit_dist_last_wait(&D);
    CHECK(own >= 0, "own wait %g", own);
    CHECK(pit_dist_allgather_last_wait(&D, prev, &e) == 0, "gather waits: %s", e.msg);
    CHECK(prev[D.rank] == own, "gathered own wait %g vs %g", prev[D.rank], own);
    most = prev[0] > most ? prev[0] : most;
  }
  /* the largest of the 3 steps: on a loaded host rank 0 itself may be descheduled past the slow
   * rank's sleep in one step (seen under a parallel CI run: 0.0002 s), hardly in all three */
  if (D.size > 1)
    CHECK(most > 0.005, "rank 0 waited at most %g s for the slow rank in 3 steps (slept 20 ms each)", most);
  free(g);
  free(ac);
  free(aw);
  free(prev);
}

static void test_small(void) {
  struct pit_err e = {0};
  /* bcast */
  size_t nb = 100001;
  unsigned char *b = malloc(nb);
  for (size_t i = 0; i < nb; i++)
    b[i] = D.rank == 0 ? (unsigned char)(i * 7 + 3) : 0xEE;
  CHECK(pit_dist_bcast(&D, b, nb, &e) == 0, "bcast: %s", e.msg);
  size_t bad = 0;
  for (size_t i = 0; i < nb; i++)
    bad += b[i] != (unsigned char)(i * 7 + 3);
  CHECK(bad == 0, "bcast: %zu bytes differ from rank 0's", bad);
  CHECK(pit_dist_bcast(&D, b, 0, &e) == 0, "bcast of 0 bytes: %s", e.msg);
  /* same */
  int same = -1;
  CHECK(pit_dist_same(&D, b, nb, &same, &e) == 0 && same == 1, "same on equal buffers: %d %s",
        same, e.msg);
  if (D.rank == D.size - 1)
    b[nb / 2] ^= 1;
  CHECK(pit_dist_same(&D, b, nb, &same, &e) == 0, "same: %s", e.msg);
  CHECK(same == (D.size == 1), "same on a buffer differing on rank %d: %d", D.size - 1, same);
  free(b);
  /* small collectives */
  double v[3] = {1.0, (double)D.rank, -(double)D.rank};
  CHECK(pit_dist_allreduce_f64(&D, v, 3, 0, &e) == 0, "allreduce sum: %s", e.msg);
  CHECK(v[0] == D.size && v[1] == D.size * (D.size - 1) / 2.0, "sum %g %g", v[0], v[1]);
  double m[2] = {(double)D.rank, -(double)D.rank};
  CHECK(pit_dist_allreduce_f64(&D, m, 2, 1, &e) == 0, "allreduce max: %s", e.msg);
  CHECK(m[0] == D.size - 1 && m[1] == 0, "max %g %g", m[0], m[1]);
  double *all = calloc((size_t)D.size, sizeof *all);
  CHECK(pit_dist_allgather_f64(&D, 10.0 + D.rank, all, &e) == 0, "allgather: %s", e.msg);
  for (int r = 0; r < D.size; r++)
    CHECK(all[r] == 10.0 + r, "allgather[%d] = %g", r, all[r]);
  free(all);
  CHECK(pit_dist_barrier(&D, &e) == 0, "barrier: %s", e.msg);
  /* misuse is reported, not crashed on */
  if (D.size > 1) {
    float g[4] = {0};
    CHECK(pit_dist_grads_ready(&D, 0, 1, &e) == PIT_ESTATE, "ready without begin accepted");
    CHECK(pit_dist_grads_begin(&D, g, 4, &e) == 0, "begin: %s", e.msg);
    CHECK(pit_dist_grads_ready(&D, 3, 2, &e) == PIT_EARG, "ready past the end accepted");
    CHECK(strstr(e.msg, "outside") != NULL, "message: %s", e.msg);
    double ac[64], aw[64];
    CHECK(D.size <= 64 && pit_dist_grads_end(&D, 0, ac, aw, &e) == 0, "end: %s", e.msg);
  }
}

/* Waiting: rank 0 sleeps 300 ms before a control allreduce and before a
 * gradient reduction; every other rank waits in them. With PIT_DIST_WAIT=sleep
 * (dist_impl.h) a waiting rank must leave its CPU: its CPU time over the wait
 * is under a quarter of the wall time. (Without it nothing is asserted: an
 * oversubscribed Open MPI rank polls with sched_yield, which hands the CPU to
 * other tasks of its run queue when there are any — here, on a busy machine,
 * ~1 ms of CPU over 0.6 s — but alone in a quota cgroup it spends the quota:
 * docs/mpi.md.) */
static double clock_s(clockid_t c) {
  struct timespec ts;
  clock_gettime(c, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void test_wait(void) {
  struct pit_err e = {0};
  if (D.size < 2)
    return;
  const char *w = getenv("PIT_DIST_WAIT");
  int sleeping = w && strcmp(w, "sleep") == 0;
  size_t n = 1000;
  float *g = malloc(n * sizeof *g);
  double all_c[8], all_w[8], v = 1;
  struct timespec nap = {0, 300000000};
  double t0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
  if (D.rank == 0)
    nanosleep(&nap, NULL);
  CHECK(pit_dist_allreduce_f64(&D, &v, 1, 0, &e) == 0 && v == D.size, "allreduce after a wait: %s", e.msg);
  for (size_t i = 0; i < n; i++)
    g[i] = 1;
  CHECK(pit_dist_grads_begin(&D, g, n, &e) == 0, "grads_begin: %s", e.msg);
  if (D.rank == 0)
    nanosleep(&nap, NULL);
  CHECK(D.size <= 8 && pit_dist_grads_end(&D, 0, all_c, all_w, &e) == 0, "grads_end after a wait: %s", e.msg);
  CHECK(g[0] == (float)D.size && g[n - 1] == (float)D.size, "sum after a wait: %g", (double)g[0]);
  double wall = clock_s(CLOCK_MONOTONIC) - t0, cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
  if (D.rank > 0) {
    printf("rank %d waited %.3f s wall, %.3f s cpu (%s)\n", D.rank, wall, cpu, sleeping ? "sleep" : "poll");
    /* polling keeps a rank on a CPU for the whole wait (≥ 2/3 of it with 3 ranks on 2 cores);
     * sleeping measured 0.1–0.3 × the wall, up to 0.28 under ASan with other tests running */
    if (sleeping)
      CHECK(wall > 0.5 && cpu < 0.5 * wall, "sleeping wait: %.3f s cpu over %.3f s", cpu, wall);
  }
  free(g);
}

static void test_init(void) {
  CHECK(D.size >= 1 && D.rank >= 0 && D.rank < D.size, "rank %d size %d", D.rank, D.size);
  CHECK(D.host[0] != '\0', "empty host name");
  CHECK(D.nodes >= 1 && D.node >= 0 && D.node < D.nodes, "node %d of %d", D.node, D.nodes);
  CHECK(D.local_rank >= 0 && D.local_rank < D.local_size && D.local_size <= D.size,
        "local rank %d of %d", D.local_rank, D.local_size);
  CHECK(D.init_wait_s >= 0, "init wait %g", D.init_wait_s);
  const char *want = getenv("PIT_TEST_EXPECT_NODES");
  if (want)
    CHECK(D.nodes == atoi(want), "nodes %d, expected %s", D.nodes, want);
  if (!getenv("OMPI_COMM_WORLD_SIZE") && !getenv("PMIX_RANK") && !getenv("PIT_DIST_MPI"))
    CHECK(D.size == 1 && D.impl == NULL && !D.initialized_mpi, "MPI used without a launcher");
  /* one line per rank, for the shell tests */
  printf("rank %d/%d host %s node %d/%d local %d/%d init_wait %.6f\n", D.rank, D.size, D.host,
         D.node, D.nodes, D.local_rank, D.local_size, D.init_wait_s);
  fflush(stdout);
}

static int loop(int stall, int quit) {
  struct pit_err e = {0};
  size_t n = 1 << 20;
  float *g = calloc(n, sizeof *g);
  double ac[256], aw[256];
  if (D.size > 256)
    return 2;
  for (long it = 0;; it++) {
    if (pit_dist_allreduce_grads(&D, g, n, 0, ac, aw, &e) < 0) {
      fprintf(stderr, "test_collectives: %s\n", e.msg);
      return 1;
    }
    if (it == 0) {
      printf("looping rank %d pid %ld\n", D.rank, (long)getpid());
      fflush(stdout);
      if (quit && D.rank > 0)
        exit(3);
      if (stall && D.rank > 0)
        for (;;)
          pause();
    }
  }
}

/* mean and min seconds of reps timed calls of kind k (0: pit_dist_allreduce_grads,
 * 1: grads_begin + one grads_ready + grads_end (bucketed Iallreduce), 2: one
 * MPI_Allreduce of the whole array), after 2 untimed ones */
static int bench_one(int k, float *g, size_t n, int reps, double *mean, double *min) {
  struct pit_err e = {0};
  double ac[256], aw[256];
  *mean = 0;
  *min = 1e30;
  for (int i = -2; i < reps; i++) {
    pit_dist_barrier(&D, &e);
    double t = pit_now();
    int rc = 0;
    if (k == 0)
      rc = pit_dist_allreduce_grads(&D, g, n, 0, ac, aw, &e);
    else if (k == 1) {
      rc = pit_dist_grads_begin(&D, g, n, &e);
      if (rc == 0)
        rc = pit_dist_grads_ready(&D, 0, n, &e);
      if (rc == 0)
        rc = pit_dist_grads_end(&D, 0, ac, aw, &e);
    } else if (D.impl) {
      MPI_Allreduce(MPI_IN_PLACE, g, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
    if (rc < 0) {
      fprintf(stderr, "test_collectives: %s\n", e.msg);
      return 1;
    }
    t = pit_now() - t;
    if (i >= 0) {
      *mean += t / reps;
      *min = t < *min ? t : *min;
    }
  }
  return 0;
}

static int bench(double mib, int reps) {
  size_t n = (size_t)(mib * (1 << 20)) / sizeof(float);
  float *g = calloc(n, sizeof *g);
  if (D.size > 256 || !g)
    return 2;
  double mean[3], min[3];
  for (int k = 0; k < 3; k++)
    if (bench_one(k, g, n, reps, &mean[k], &min[k]))
      return 1;
  if (D.rank == 0)
    printf("allreduce %.2f MiB (%zu floats) ranks %d, mean/min ms over %d: "
           "pit_dist_allreduce_grads %.3f/%.3f; begin+ready+end (Iallreduce buckets) "
           "%.3f/%.3f; one MPI_Allreduce %.3f/%.3f\n",
           mib, n, D.size, reps, 1e3 * mean[0], 1e3 * min[0], 1e3 * mean[1], 1e3 * min[1],
           1e3 * mean[2], 1e3 * min[2]);
  free(g);
  return 0;
}

/* ms milliseconds of arithmetic (not sleep: Open MPI progresses only in calls) */
static double spin(double ms) {
  double t = pit_now(), x = 1.0;
  while (pit_now() - t < ms * 1e-3)
    for (int i = 0; i < 1000; i++)
      x = x * 1.0000001 + 1e-9;
  return x;
}

static int overlap(double mib, double ms, int reps) {
  struct pit_err e = {0};
  size_t n = (size_t)(mib * (1 << 20)) / sizeof(float);
  float *g = calloc(n, sizeof *g);
  double ac[256], aw[256], tot[2] = {0, 0}, sink = 0;
  if (D.size > 256 || !g)
    return 2;
  const int L = 8;
  for (int i = -2; i < reps; i++)
    for (int k = 0; k < 2; k++) {
      pit_dist_barrier(&D, &e);
      double t = pit_now();
      int rc = pit_dist_grads_begin(&D, g, n, &e);
      for (int l = L - 1; l >= 0 && rc == 0; l--) {
        sink += spin(ms / L);
        if (k == 1)
          rc = pit_dist_grads_ready(&D, n * (size_t)l / L, n * (size_t)(l + 1) / L - n * (size_t)l / L, &e);
      }
      if (rc == 0)
        rc = pit_dist_grads_end(&D, 0, ac, aw, &e);
      if (rc < 0) {
        fprintf(stderr, "test_collectives: %s\n", e.msg);
        return 1;
      }
      if (i >= 0)
        tot[k] += (pit_now() - t) / reps;
    }
  if (D.rank == 0)
    printf("backward %.0f ms + reduction of %.2f MiB, ranks %d, mean over %d: no overlap %.2f ms, "
           "grads_ready per layer %.2f ms (%s)\n", ms, mib, D.size, reps, 1e3 * tot[0],
           1e3 * tot[1], sink > 0 ? "ok" : "?");
  free(g);
  return 0;
}

int main(int argc, char **argv) {
  struct pit_err e = {0};
  if (pit_dist_init(&D, &argc, &argv, &e) < 0) {
    fprintf(stderr, "test_collectives: %s\n", e.msg);
    return 1;
  }
  int rc = -1;
  if (argc >= 2 && strcmp(argv[1], "--loop") == 0)
    rc = loop(0, 0);
  else if (argc >= 2 && strcmp(argv[1], "--stall") == 0)
    rc = loop(1, 0);
  else if (argc >= 2 && strcmp(argv[1], "--exit") == 0)
    rc = loop(0, 1);
  else if (argc >= 4 && strcmp(argv[1], "--bench") == 0)
    rc = bench(atof(argv[2]), atoi(argv[3]));
  else if (argc >= 5 && strcmp(argv[1], "--overlap") == 0)
    rc = overlap(atof(argv[2]), atof(argv[3]), atoi(argv[4]));
  if (rc >= 0) {
    pit_dist_release(&D);
    return rc;
  }
  test_init();
  test_small();
  test_grads();
  test_timings();
  test_wait();
  pit_dist_release(&D);
  CHECK(D.impl == NULL && !D.initialized_mpi, "release left state");
  return check_done();
}
