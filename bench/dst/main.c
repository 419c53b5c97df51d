/* bench/dst/main.c — the deterministic simulation of the controller (src/control/dst.c,
 * docs/dst.md) over many seeds, or one seed replayed with its trace.
 *
 *   dst --seeds N [--from S]        seeds S … S+N−1: the violations, the time taken
 *   dst --seed S [--trace FILE]     one seed: its result, its trace (FILE "-": stdout)
 *   options: --broken-held (test only: the held-record rule dropped), --no-faults,
 *            --dir DIR (scratch; default /dev/shm or $TMPDIR), --jobs J (J processes,
 *            seed S+i in process i mod J: the machine's cores; the figures added up)
 *
 * Invariant: exit 0 only when every seed run holds every invariant (with
 * --broken-held: 0 only when a violation is found, as the test of the checks). */
#define _GNU_SOURCE
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "control/dst.h"

static double wall(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct tally {
  long bad, kills, faults, errors, unbilled;
  uint64_t first_bad;
};

/* Seeds from, from+stride, … (n of them) in this process. */
static void run_seeds(uint64_t from, long n, long stride, int faults, int broken, FILE *tf, int verbose,
                      const char *dir, struct tally *t) {
  char scratch[1024];
  pit_dst_scratch(scratch, sizeof scratch);
  if (dir)
    snprintf(scratch, sizeof scratch, "%s/pit-dst-%d", dir, (int)getpid());
  char state[1100];
  snprintf(state, sizeof state, "%s/state-home", scratch);
  setenv("XDG_STATE_HOME", state, 1); /* the run's registry note stays in the scratch directory */
  for (long i = 0; i < n; i++) {
    uint64_t seed = from + (uint64_t)(i * stride);
    struct pit_dst_opts o = {seed, scratch, faults, broken, tf};
    struct pit_dst_result r;
    struct pit_err e = {0};
    if (pit_dst_run(&o, &r, &e) < 0) {
      fprintf(stderr, "dst: seed %" PRIu64 ": %s\n", seed, e.msg);
      t->bad++;
      break;
    }
    t->kills += r.kills;
    t->faults += r.faults;
    t->errors += r.ended_error;
    t->unbilled += r.unbilled;
    if (verbose)
      printf("seed %" PRIu64 ": %s%s; %d controller%s (%d killed), %d faults, %d generations, %.0f simulated s, "
             "trace digest %016" PRIx64 "%s%s\n",
             seed, r.ok ? "ok" : "VIOLATION: ", r.violation, r.controllers, r.controllers == 1 ? "" : "s", r.kills,
             r.faults, r.gens, r.sim_s, r.digest, r.ended_error ? "; ended with an error: " : "", r.error);
    if (!verbose && (i + 1) % 5000 == 0) { /* progress, for a long run */
      printf("dst: process %d: %ld seeds done, %ld violations\n", (int)getpid(), i + 1, t->bad);
      fflush(stdout);
    }
    if (!r.ok) {
      if (!t->bad++)
        t->first_bad = seed;
      if (!verbose)
        printf("seed %" PRIu64 ": VIOLATION: %s\n  replay: dst --seed %" PRIu64 "%s --trace -\n", seed, r.violation,
               seed, broken ? " --broken-held" : "");
      fflush(stdout);
      if (broken)
        break;
    }
  }
  if (verbose)
    fprintf(stderr, "dst: the seed's run directory: %s/run\n", scratch);
  else
    pit_dst_remove(scratch);
}

int main(int argc, char **argv) {
  uint64_t from = 1, one = 0;
  long nseeds = 0;
  int have_one = 0, broken = 0, faults = 1, jobs = 1;
  const char *trace = NULL, *dir = NULL;
  static const struct option lo[] = {{"seeds", required_argument, 0, 'n'},  {"from", required_argument, 0, 'f'},
                                     {"seed", required_argument, 0, 's'},   {"trace", required_argument, 0, 't'},
                                     {"broken-held", no_argument, 0, 'b'},  {"no-faults", no_argument, 0, 'z'},
                                     {"dir", required_argument, 0, 'd'},    {"jobs", required_argument, 0, 'j'},
                                     {0, 0, 0, 0}};
  int ch;
  while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
    switch (ch) {
    case 'n': nseeds = strtol(optarg, NULL, 10); break;
    case 'f': from = strtoull(optarg, NULL, 10); break;
    case 's': one = strtoull(optarg, NULL, 10); have_one = 1; break;
    case 't': trace = optarg; break;
    case 'b': broken = 1; break;
    case 'z': faults = 0; break;
    case 'd': dir = optarg; break;
    case 'j': jobs = atoi(optarg) > 0 ? atoi(optarg) : 1; break;
    default:
      fprintf(stderr, "usage: dst --seeds N [--from S] | --seed S [--trace FILE] [--broken-held] [--no-faults]\n");
      return 2;
    }
  }
  if (!have_one && nseeds <= 0) {
    fprintf(stderr, "dst: give --seeds N or --seed S\n");
    return 2;
  }
  FILE *tf = NULL;
  if (trace)
    tf = strcmp(trace, "-") == 0 ? stdout : fopen(trace, "w");
  if (trace && !tf) {
    fprintf(stderr, "dst: cannot write '%s'\n", trace);
    return 1;
  }
  if (have_one) {
    struct tally t = {0};
    run_seeds(one, 1, 1, faults, broken, tf, 1, dir, &t);
    if (tf && tf != stdout)
      fclose(tf);
    return t.bad > 0 ? 1 : 0;
  }
  double t0 = wall();
  struct tally sum = {0};
  if (jobs > nseeds)
    jobs = (int)nseeds;
  int fds[64];
  pid_t pids[64];
  if (jobs > 64)
    jobs = 64;
  fflush(stdout);
  for (int k = 0; k < jobs; k++) { /* process k: seeds from+k, from+k+jobs, … */
    int p[2];
    if (pipe(p) < 0)
      return 1;
    pids[k] = fork();
    if (pids[k] == 0) {
      close(p[0]);
      struct tally t = {0};
      long n = (nseeds - k + jobs - 1) / jobs;
      run_seeds(from + (uint64_t)k, n, jobs, faults, broken, NULL, 0, dir, &t);
      ssize_t w = write(p[1], &t, sizeof t);
      _exit(w == (ssize_t)sizeof t ? 0 : 1);
    }
    close(p[1]);
    fds[k] = p[0];
  }
  for (int k = 0; k < jobs; k++) {
    struct tally t = {0};
    ssize_t got = read(fds[k], &t, sizeof t);
    close(fds[k]);
    int st = 0;
    waitpid(pids[k], &st, 0);
    if (got != (ssize_t)sizeof t || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
      t.bad++, t.first_bad = 0;
    if (t.bad && (!sum.bad || t.first_bad < sum.first_bad))
      sum.first_bad = t.first_bad;
    sum.bad += t.bad;
    sum.kills += t.kills;
    sum.faults += t.faults;
    sum.errors += t.errors;
    sum.unbilled += t.unbilled;
  }
  double secs = wall() - t0;
  printf("dst: %ld seeds from %" PRIu64 " in %.1f s with %d process%s (%.2f ms/seed): %ld violation%s; %ld controller "
         "kills, %ld faults, %ld runs ended with an error, %ld nodes not recordable (exempt from the exact bill)\n",
         nseeds, from, secs, jobs, jobs == 1 ? "" : "es", 1000 * secs / (double)nseeds, sum.bad,
         sum.bad == 1 ? "" : "s", sum.kills, sum.faults, sum.errors, sum.unbilled);
  if (broken)
    return sum.bad > 0 ? 0 : 1;
  return sum.bad > 0 ? 1 : 0;
}
