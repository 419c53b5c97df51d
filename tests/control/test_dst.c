/* test_dst.c — the deterministic simulation of the controller (src/control/dst.c,
 * docs/dst.md) in CI: the real pit_run over 2,000 seeds of faults (300 under
 * ASan+UBSan, where each seed costs several times more; PIT_DST_SEEDS overrides)
 * with every invariant holding; the seeds that found controller bugs, kept as
 * regressions; an uninterrupted run; and the replay: a seed run twice gives the
 * same trace, line for line, and the same digest.
 * Invariant: no wall-clock time is asserted; a failing seed prints its replay command. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "control/dst.h"

#if defined(__SANITIZE_ADDRESS__)
#define SEEDS 300
#else
#define SEEDS 2000
#endif

static char dir[1024];

static int run(uint64_t seed, int faults, FILE *trace, struct pit_dst_result *r) {
  struct pit_dst_opts o = {seed, dir, faults, 0, trace};
  struct pit_err e = {0};
  int rc = pit_dst_run(&o, r, &e);
  CHECK(rc == 0, "seed %" PRIu64 ": %s", seed, e.msg);
  if (rc == 0 && !r->ok)
    fprintf(stderr, "seed %" PRIu64 ": VIOLATION: %s\n  replay: build/dst --seed %" PRIu64 " --trace -\n", seed,
            r->violation, seed);
  return rc == 0 && r->ok;
}

/* One seed's whole trace as text (free it). */
static char *trace_of(uint64_t seed, uint64_t *digest) {
  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  struct pit_dst_result r;
  run(seed, 1, f, &r);
  fclose(f);
  *digest = r.digest;
  return buf;
}

int main(void) {
  pit_dst_scratch(dir, sizeof dir);
  char state[1100];
  snprintf(state, sizeof state, "%s/state-home", dir);
  setenv("XDG_STATE_HOME", state, 1); /* the run's registry note, kept in the scratch directory */
  struct pit_dst_result r;

  /* an uninterrupted run: one controller, every step, nothing killed */
  CHECK(run(7, 0, NULL, &r), "uninterrupted");
  CHECK(r.controllers == 1 && r.kills == 0 && r.faults == 0 && !r.ended_error, "uninterrupted: %d controllers",
        r.controllers);
  CHECK(r.steps >= 30, "uninterrupted: %lld steps", (long long)r.steps);

  /* the replay: a seed alone decides the run (a seed with kills and faults) */
  uint64_t d1, d2, d3;
  char *t1 = trace_of(801, &d1), *t2 = trace_of(801, &d2), *t3 = trace_of(802, &d3);
  CHECK(t1 && t2 && strcmp(t1, t2) == 0, "seed 801 twice: the traces differ");
  CHECK(d1 == d2, "seed 801 twice: digests %016" PRIx64 " and %016" PRIx64, d1, d2);
  CHECK(d1 != d3 && t3 && strcmp(t1, t3) != 0, "seeds 801 and 802 give the same trace");
  CHECK(t1 && strstr(t1, "killed before effect"), "seed 801 kills its controller");
  free(t1);
  free(t2);
  free(t3);

  /* the seeds that found the controller's bugs (docs/dst.md, "what it found"): each
   * failed on the code before its fix */
  static const uint64_t found[] = {6, 13, 65, 67, 133, 147, 801, 1940, 16934};
  /* and the simulation's own: a clock jump after a hung provider call set the clock back (the
   * bench's 100,000 seeds, seed 79658) */
  CHECK(run(79658, 1, NULL, &r), "seed 79658: %s", r.violation);
  for (size_t i = 0; i < sizeof found / sizeof found[0]; i++)
    CHECK(run(found[i], 1, NULL, &r), "regression seed %" PRIu64 ": %s", found[i], r.violation);

  /* CI: many seeds, every invariant */
  long seeds = SEEDS, bad = 0, kills = 0, faults = 0;
  const char *env = getenv("PIT_DST_SEEDS");
  if (env && atol(env) > 0)
    seeds = atol(env);
  for (long s = 1; s <= seeds; s++) {
    if (!run((uint64_t)s, 1, NULL, &r))
      bad++;
    kills += r.kills;
    faults += r.faults;
  }
  printf("dst: %ld seeds, %ld violations, %ld controller kills, %ld faults\n", seeds, bad, kills, faults);
  CHECK(bad == 0, "%ld of %ld seeds broke an invariant", bad, seeds);
  CHECK(kills > seeds / 10 && faults > seeds, "the seeds inject few faults: %ld kills, %ld faults", kills, faults);
  pit_dst_remove(dir);
  return check_done();
}
