/* bench/dst/main.c — the deterministic simulation of the controller (src/control/dst.c,
 * docs/dst.md) over many seeds, or one seed replayed with its trace.
 *
 *   dst --seeds N [--from S]        seeds S … S+N−1: the violations, the time taken
 *   dst --seed S [--trace FILE]     one seed: its result, its trace (FILE "-": stdout)
 *   options: --broken-held (test only: the held-record rule dropped), --no-faults,
 *            --dir DIR (scratch; default /dev/shm or $TMPDIR)
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
#include <unistd.h>

#include "control/dst.h"

static double wall(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  uint64_t from = 1, one = 0;
  long nseeds = 0;
  int have_one = 0, broken = 0, faults = 1;
  const char *trace = NULL, *dir = NULL;
  static const struct option lo[] = {{"seeds", required_argument, 0, 'n'},  {"from", required_argument, 0, 'f'},
                                     {"seed", required_argument, 0, 's'},   {"trace", required_argument, 0, 't'},
                                     {"broken-held", no_argument, 0, 'b'},  {"no-faults", no_argument, 0, 'z'},
                                     {"dir", required_argument, 0, 'd'},    {0, 0, 0, 0}};
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
    default:
      fprintf(stderr, "usage: dst --seeds N [--from S] | --seed S [--trace FILE] [--broken-held] [--no-faults]\n");
      return 2;
    }
  }
  if (!have_one && nseeds <= 0) {
    fprintf(stderr, "dst: give --seeds N or --seed S\n");
    return 2;
  }
  char scratch[1024];
  const char *tmp = getenv("TMPDIR");
  snprintf(scratch, sizeof scratch, "%s/pit-dst-%d", dir ? dir : access("/dev/shm", W_OK) == 0 ? "/dev/shm" : tmp ? tmp : "/tmp",
           (int)getpid());
  setenv("XDG_STATE_HOME", scratch, 1); /* the run's registry note stays in the scratch directory */
  FILE *tf = NULL;
  if (trace)
    tf = strcmp(trace, "-") == 0 ? stdout : fopen(trace, "w");
  if (trace && !tf) {
    fprintf(stderr, "dst: cannot write '%s'\n", trace);
    return 1;
  }
  if (have_one) {
    from = one;
    nseeds = 1;
  }
  double t0 = wall();
  long bad = 0, kills = 0, faultsn = 0, errors = 0;
  int64_t steps = 0;
  for (long i = 0; i < nseeds; i++) {
    uint64_t seed = from + (uint64_t)i;
    struct pit_dst_opts o = {seed, scratch, faults, broken, tf};
    struct pit_dst_result r;
    struct pit_err e = {0};
    if (pit_dst_run(&o, &r, &e) < 0) {
      fprintf(stderr, "dst: seed %" PRIu64 ": %s\n", seed, e.msg);
      return 1;
    }
    kills += r.kills;
    faultsn += r.faults;
    errors += r.ended_error;
    steps += r.steps;
    if (have_one)
      printf("seed %" PRIu64 ": %s%s; %d controller%s (%d killed), %d faults, %d generations, %.0f simulated s, "
             "trace digest %016" PRIx64 "%s%s\n",
             seed, r.ok ? "ok" : "VIOLATION: ", r.violation, r.controllers, r.controllers == 1 ? "" : "s", r.kills,
             r.faults, r.gens, r.sim_s, r.digest, r.ended_error ? "; ended with an error: " : "", r.error);
    if (!r.ok) {
      bad++;
      if (!have_one)
        printf("seed %" PRIu64 ": VIOLATION: %s\n  replay: dst --seed %" PRIu64 "%s --trace -\n", seed, r.violation,
               seed, broken ? " --broken-held" : "");
      if (broken)
        break;
    }
  }
  double secs = wall() - t0;
  if (tf && tf != stdout)
    fclose(tf);
  if (!have_one)
    printf("dst: %ld seeds from %" PRIu64 " in %.1f s (%.2f ms/seed): %ld violation%s; %ld controller kills, %ld "
           "faults, %ld runs ended with an error\n",
           nseeds, from, secs, 1000 * secs / (double)nseeds, bad, bad == 1 ? "" : "s", kills, faultsn, errors);
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "%s", scratch);
  if (!have_one) { /* the scratch directory goes (a single seed's is kept for a look) */
    char rm[1300];
    snprintf(rm, sizeof rm, "%s", cmd);
    (void)rm;
  }
  if (broken)
    return bad > 0 ? 0 : 1;
  return bad > 0 ? 1 : 0;
}
